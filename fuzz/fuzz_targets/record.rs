//! A stored record (`kauri_db::record`) as a damaged database file may hold it: the
//! header, the attribute directory, the values and the replication stamps, read through
//! every accessor. Damage must be an error or a shorter answer, never a panic; a record
//! that decodes in full encodes and decodes to itself.

#![no_main]

use kauri_db::record::RecordView;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(view) = RecordView::parse(data) else {
        return;
    };
    let _ = (view.parent(), view.rdn(), view.is_empty());
    let mut ids = Vec::new();
    for a in view.attrs() {
        ids.push(a.id);
        let mut n = 0u32;
        for v in a.values() {
            n += 1;
            let _ = (v.raw.len(), v.norm().len());
        }
        assert!(n <= a.count);
        let _ = a.values_checked();
    }
    assert!(ids.len() <= view.len());
    for id in ids.iter().copied().chain([0, 1, u32::MAX]) {
        if let Some(a) = view.attr(id) {
            assert_eq!(a.id, id);
            let _ = a.values().count();
        }
    }
    let _ = view.stamps();
    let Ok(record) = view.to_owned_record() else {
        return;
    };
    let bytes = record.encode();
    let back = RecordView::parse(&bytes)
        .and_then(|v| v.to_owned_record())
        .expect("a re-encoded record decodes");
    assert_eq!(back, record);
});
