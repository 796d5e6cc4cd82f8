//! The key-value dump a backup carries (`kauri_kv::dump`), loaded into an empty store with
//! the directory's tables: the header, every length field, key order, the trailer. A dump
//! that loads is written out again and loads again to the same pairs.

#![no_main]

use std::ops::Bound;

use kauri_db::db::TABLES;
use kauri_kv::dump::{load_dump, write_dump};
use kauri_kv::mem::MemBackend;
use kauri_kv::{Backend, Direction, ReadTxn};
use libfuzzer_sys::fuzz_target;

fn pairs(store: &MemBackend) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    let r = store.read().expect("a snapshot");
    (0..TABLES.len())
        .map(|t| {
            r.range(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                .expect("a range")
                .map(|p| {
                    let (k, v) = p.expect("a pair");
                    (k.to_vec(), v.to_vec())
                })
                .collect()
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let store = MemBackend::new(TABLES);
    let Ok(stats) = load_dump(&store, TABLES, data, None) else {
        return;
    };
    assert!(stats.bytes <= data.len() as u64);
    let snapshot = store.read().expect("a snapshot");
    let mut out = Vec::new();
    let written = write_dump(&snapshot, TABLES, &mut out).expect("the store dumps");
    assert_eq!(written.pairs, stats.pairs);
    assert_eq!(written.per_table, stats.per_table);
    let again = MemBackend::new(TABLES);
    load_dump(&again, TABLES, out.as_slice(), None).expect("a written dump loads");
    assert_eq!(pairs(&again), pairs(&store));
});
