//! Set tables (`TableShape::Set`): LMDB stores them as heads with sorted fixed-size
//! duplicates, and must still read and write exactly like a plain ordered map of keys. Each
//! check runs a random history against a `BTreeSet` model and compares every read, with
//! bounds that fall between heads, on a head, and inside a head's run of ids.

use std::collections::BTreeSet;
use std::ops::Bound;

use kauri_kv::{
    Backend, Direction, KvError, LmdbBackend, LmdbOptions, MemBackend, ReadTxn, TableSpec, WriteTxn,
};
use proptest::prelude::*;

const SPECS: &[TableSpec<'static>] = &[TableSpec::plain("meta"), TableSpec::set("ids", 8)];
/// The same table split by its first three bytes into at most three partitions: heads of
/// three bytes stay in the main tree, and the alphabet below has more prefixes than that.
const PARTITIONED: &[TableSpec<'static>] = &[
    TableSpec::plain("meta"),
    TableSpec::partitioned_set("ids", 8, 3, 3),
];
const IDS: usize = 1;

/// A head shaped like an index key's: kind, value bytes with `00` escaped, terminator. Such
/// heads are prefix-free.
fn head(value: &[u8], kind: u8) -> Vec<u8> {
    let mut h = vec![kind];
    for &b in value {
        h.push(b);
        if b == 0 {
            h.push(0xff);
        }
    }
    h.extend_from_slice(&[0, 1]);
    h
}

fn key(value: &[u8], id: u64) -> Vec<u8> {
    let mut k = head(value, 1);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn small_options() -> LmdbOptions {
    LmdbOptions {
        map_size: 256 * 1024,
        durable: false,
        ..Default::default()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, u64),
    Delete(Vec<u8>, u64),
    /// A nested transaction of puts and deletes, rolled back.
    Aborted(Vec<(Vec<u8>, u64, bool)>),
    /// Ascending keys written as one batch.
    Batch(Vec<(Vec<u8>, u64)>),
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(0xff)],
        0..3,
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (value(), 0u64..40).prop_map(|(v, id)| Op::Put(v, id)),
        2 => (value(), 0u64..40).prop_map(|(v, id)| Op::Delete(v, id)),
        1 => prop::collection::vec((value(), 0u64..40, any::<bool>()), 1..6).prop_map(Op::Aborted),
        1 => prop::collection::vec((value(), 0u64..400), 1..300).prop_map(Op::Batch),
    ]
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    let point = prop_oneof![
        (value(), 0u64..40).prop_map(|(v, id)| key(&v, id)),
        value().prop_map(|v| head(&v, 1)),
        (value(), 0u64..40, 1usize..8).prop_map(|(v, id, cut)| {
            let k = key(&v, id);
            k[..k.len() - cut].to_vec()
        }),
        value().prop_map(|v| head(&v, 1)[..1 + v.len()].to_vec()),
    ];
    prop_oneof![
        1 => Just(Bound::Unbounded),
        3 => point.clone().prop_map(Bound::Included),
        3 => point.prop_map(Bound::Excluded),
    ]
}

fn apply<W: WriteTxn>(w: &mut W, model: &mut BTreeSet<Vec<u8>>, op: &Op) {
    match op {
        Op::Put(v, id) => {
            w.put(IDS, &key(v, *id), &[]).unwrap();
            model.insert(key(v, *id));
        }
        Op::Delete(v, id) => {
            let was = w.delete(IDS, &key(v, *id)).unwrap();
            assert_eq!(was, model.remove(&key(v, *id)));
        }
        Op::Aborted(steps) => {
            w.begin_nested().unwrap();
            for (v, id, put) in steps {
                if *put {
                    w.put(IDS, &key(v, *id), &[]).unwrap();
                } else {
                    w.delete(IDS, &key(v, *id)).unwrap();
                }
            }
            w.abort_nested().unwrap();
        }
        Op::Batch(keys) => {
            let mut sorted: Vec<Vec<u8>> = keys.iter().map(|(v, id)| key(v, *id)).collect();
            sorted.sort();
            sorted.dedup();
            let empty: &[u8] = &[];
            w.append_batch(IDS, sorted.len(), &|i| (sorted[i].as_slice(), empty))
                .unwrap();
            model.extend(sorted);
        }
    }
}

fn read_range<R: ReadTxn>(
    r: &R,
    lo: &Bound<Vec<u8>>,
    hi: &Bound<Vec<u8>>,
    d: Direction,
) -> Vec<Vec<u8>> {
    let lo = lo.as_ref().map(Vec::as_slice);
    let hi = hi.as_ref().map(Vec::as_slice);
    r.range(IDS, lo, hi, d)
        .unwrap()
        .map(|p| {
            let (k, v) = p.unwrap();
            assert!(v.is_empty());
            k.into_owned()
        })
        .collect()
}

fn model_range(
    m: &BTreeSet<Vec<u8>>,
    lo: &Bound<Vec<u8>>,
    hi: &Bound<Vec<u8>>,
    d: Direction,
) -> Vec<Vec<u8>> {
    let inside = |k: &Vec<u8>| {
        (match lo {
            Bound::Included(l) => k >= l,
            Bound::Excluded(l) => k > l,
            Bound::Unbounded => true,
        }) && (match hi {
            Bound::Included(h) => k <= h,
            Bound::Excluded(h) => k < h,
            Bound::Unbounded => true,
        })
    };
    let mut out: Vec<Vec<u8>> = m.iter().filter(|k| inside(k)).cloned().collect();
    if d == Direction::Backward {
        out.reverse();
    }
    out
}

type Ranges = [(Bound<Vec<u8>>, Bound<Vec<u8>>, bool)];

/// Runs `ops` on both backends opened with `specs`, then compares every read with the model.
fn check_history(
    specs: &[TableSpec<'_>],
    ops: &[Op],
    ranges: &Ranges,
    probes: &[(Vec<u8>, u64)],
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let lmdb = LmdbBackend::open_shaped(dir.path(), specs, small_options()).unwrap();
    let mem = MemBackend::new_shaped(specs);
    let mut model = BTreeSet::new();
    {
        let mut w = lmdb.write().unwrap();
        let mut mm = BTreeSet::new();
        let mut wm = mem.write().unwrap();
        for op in ops {
            apply(&mut w, &mut model, op);
            apply(&mut wm, &mut mm, op);
        }
        w.commit().unwrap();
        wm.commit().unwrap();
    }
    let r = lmdb.read().unwrap();
    let rm = mem.read().unwrap();
    for (lo, hi, back) in ranges {
        let d = if *back {
            Direction::Backward
        } else {
            Direction::Forward
        };
        let want = model_range(&model, lo, hi, d);
        prop_assert_eq!(
            &read_range(&r, lo, hi, d),
            &want,
            "lmdb {:?}..{:?} {:?}",
            lo,
            hi,
            d
        );
        prop_assert_eq!(&read_range(&rm, lo, hi, d), &want, "memory");
    }
    for (v, id) in probes {
        let k = key(v, *id);
        prop_assert_eq!(r.get(IDS, &k).unwrap().is_some(), model.contains(&k));
    }
    prop_assert_eq!(
        read_range(&r, &Bound::Unbounded, &Bound::Unbounded, Direction::Forward),
        model.iter().cloned().collect::<Vec<_>>()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_set_table_reads_like_an_ordered_set(
        ops in prop::collection::vec(op(), 1..40),
        ranges in prop::collection::vec((bound(), bound(), any::<bool>()), 1..24),
        probes in prop::collection::vec((value(), 0u64..40), 1..16),
    ) {
        check_history(SPECS, &ops, &ranges, &probes)?;
    }

    #[test]
    fn a_partitioned_set_table_reads_like_an_ordered_set(
        ops in prop::collection::vec(op(), 1..40),
        ranges in prop::collection::vec((bound(), bound(), any::<bool>()), 1..24),
        probes in prop::collection::vec((value(), 0u64..40), 1..16),
    ) {
        check_history(PARTITIONED, &ops, &ranges, &probes)?;
    }
}

#[test]
fn set_tables_refuse_values_and_short_keys() {
    let dir = tempfile::tempdir().unwrap();
    let lmdb = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap();
    let mem = MemBackend::new_shaped(SPECS);
    fn check<B: Backend>(b: &B) {
        let mut w = b.write().unwrap();
        let e = w.put(IDS, &key(b"a", 1), b"x").unwrap_err();
        assert!(matches!(e, KvError::Shape { table: IDS, .. }), "{e}");
        let e = w.put(IDS, &[1, 2, 3], &[]).unwrap_err();
        assert!(matches!(e, KvError::Shape { .. }), "{e}");
        w.put(0, b"short", b"any value").unwrap();
        w.commit().unwrap();
    }
    check(&lmdb);
    check(&mem);
}

#[test]
fn a_plain_table_becomes_a_set_on_open_and_stays_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    {
        let plain = LmdbBackend::open(dir.path(), &["meta", "ids"], small_options()).unwrap();
        let mut w = plain.write().unwrap();
        for v in [&b"a"[..], b"b\0", b""] {
            for id in (0..70_000u64).step_by(7) {
                w.put(IDS, &key(v, id), &[]).unwrap();
                want.push(key(v, id));
            }
        }
        w.put(0, b"format", b"1").unwrap();
        w.commit().unwrap();
    }
    want.sort();
    for _ in 0..2 {
        let b = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap();
        let r = b.read().unwrap();
        let got = read_range(&r, &Bound::Unbounded, &Bound::Unbounded, Direction::Forward);
        assert_eq!(got, want);
        assert_eq!(r.get(0, b"format").unwrap(), Some(&b"1"[..]));
        assert!(r.get(IDS, &key(b"a", 7)).unwrap().is_some());
        assert!(r.get(IDS, &key(b"a", 8)).unwrap().is_none());
    }
    // A build that opens the table as a plain one is refused, and nothing changes.
    let e = LmdbBackend::open(dir.path(), &["meta", "ids"], small_options()).unwrap_err();
    assert!(e.to_string().contains("stored as a set"), "{e}");
    let b = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap();
    assert_eq!(
        read_range(
            &b.read().unwrap(),
            &Bound::Unbounded,
            &Bound::Unbounded,
            Direction::Forward
        )
        .len(),
        want.len()
    );
}

#[test]
fn ids_appended_in_order_pack_densely() {
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap();
    for chunk in 0..100u64 {
        let mut w = b.write().unwrap();
        for id in chunk * 1000..(chunk + 1) * 1000 {
            w.put(IDS, &key(b"top", id), &[]).unwrap();
        }
        w.commit().unwrap();
    }
    // 100,000 ids of one value: 800,000 bytes of ids, about 196 full pages of 4 KiB.
    let used = b.info().unwrap().used_bytes;
    assert!(used < 1_200_000, "{used} bytes used");
}

/// The number of keys of each LMDB database of the store in `dir` whose name starts with
/// `ids@`, read with heed directly.
fn physical(dir: &std::path::Path) -> std::collections::BTreeMap<String, usize> {
    use heed::types::Bytes;
    // SAFETY: the store is closed in this process; the environment is only read.
    let env = unsafe { heed::EnvOpenOptions::new().max_dbs(16).open(dir) }.unwrap();
    let rtxn = env.read_txn().unwrap();
    let read = env.open_databases_and_commit(rtxn, |opener, rtxn| -> heed::Result<_> {
        let main = opener.open_database::<Bytes, Bytes>(rtxn, None)?.unwrap();
        let mut names = Vec::new();
        for item in main.iter(rtxn)? {
            let name = String::from_utf8_lossy(item?.0).into_owned();
            if name.starts_with("ids@") {
                names.push(name);
            }
        }
        let mut out = std::collections::BTreeMap::new();
        for name in names {
            let db = opener
                .open_database::<Bytes, Bytes>(rtxn, Some(&name))?
                .unwrap();
            out.insert(name, db.len(rtxn)? as usize);
        }
        Ok(heed::CommitOrAbort::<(), _>::Abort(out))
    });
    match read.unwrap() {
        heed::CommitOrAbort::Abort(out) => out,
        heed::CommitOrAbort::Commit(()) => unreachable!(),
    }
}

#[test]
fn a_set_table_is_split_into_partitions_on_open_and_stays_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    // Five prefixes of three bytes for three partitions, and heads of three bytes.
    let values: [&[u8]; 6] = [b"a", b"ab", b"b", b"\0", b"\xff", b""];
    {
        let set = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap();
        let mut w = set.write().unwrap();
        for v in values {
            for id in (0..30_000u64).step_by(7) {
                w.put(IDS, &key(v, id), &[]).unwrap();
                want.push(key(v, id));
            }
        }
        w.commit().unwrap();
    }
    want.sort();
    for round in 0..2 {
        let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
        let r = b.read().unwrap();
        let got = read_range(&r, &Bound::Unbounded, &Bound::Unbounded, Direction::Forward);
        assert_eq!(got, want, "round {round}");
        let mut back = read_range(
            &r,
            &Bound::Unbounded,
            &Bound::Unbounded,
            Direction::Backward,
        );
        back.reverse();
        assert_eq!(back, want);
        for v in values {
            assert!(r.get(IDS, &key(v, 7)).unwrap().is_some());
            assert!(r.get(IDS, &key(v, 8)).unwrap().is_none());
            let lo = Bound::Included(head(v, 1));
            let mut hi = head(v, 1);
            hi.push(0xff);
            let hi = Bound::Excluded(hi);
            assert_eq!(
                read_range(&r, &lo, &hi, Direction::Forward).len(),
                30_000 / 7 + 1
            );
        }
        assert_eq!(b.table_stats().unwrap().0[IDS].entries as usize, want.len());
    }
    // Three prefixes got a partition each (the first three in key order), the rest and the
    // three-byte heads stayed in the main tree.
    let counts = physical(dir.path());
    let per_value = 30_000 / 7 + 1;
    assert_eq!(counts["ids@set8"], 3 * per_value, "{counts:?}");
    for n in 0..3 {
        assert_eq!(
            counts[&format!("ids@set8@p{n:02}")],
            per_value,
            "{counts:?}"
        );
    }
    assert_eq!(
        counts["ids@set8@map"], 4,
        "three prefixes and the mark: {counts:?}"
    );
    // A build that opens the table as one set is refused.
    let e = LmdbBackend::open_shaped(dir.path(), SPECS, small_options()).unwrap_err();
    assert!(e.to_string().contains("partitions"), "{e}");
    // Writes after the split go where the split put their prefix; deletes find them.
    let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
    let mut w = b.write().unwrap();
    for v in values {
        w.put(IDS, &key(v, 1), &[]).unwrap();
        assert!(w.delete(IDS, &key(v, 7)).unwrap());
    }
    w.commit().unwrap();
    let r = b.read().unwrap();
    for v in values {
        assert!(r.get(IDS, &key(v, 1)).unwrap().is_some());
        assert!(r.get(IDS, &key(v, 7)).unwrap().is_none());
    }
}

#[test]
fn a_new_prefix_gets_a_partition_and_a_cleared_table_keeps_its_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
    let mut w = b.write().unwrap();
    w.put(IDS, &key(b"b", 1), &[]).unwrap();
    w.put(IDS, &key(b"a", 1), &[]).unwrap();
    w.commit().unwrap();
    let mut w = b.write().unwrap();
    w.clear(IDS).unwrap();
    w.put(IDS, &key(b"a", 2), &[]).unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    assert_eq!(
        read_range(&r, &Bound::Unbounded, &Bound::Unbounded, Direction::Forward),
        vec![key(b"a", 2)]
    );
    drop(r);
    drop(b);
    let counts = physical(dir.path());
    // "b" came first and kept partition 0 through the clear; "a" has partition 1.
    assert_eq!(counts["ids@set8@p00"], 0, "{counts:?}");
    assert_eq!(counts["ids@set8@p01"], 1, "{counts:?}");
    assert_eq!(counts["ids@set8"], 0, "{counts:?}");
}

#[test]
fn partitions_assigned_in_a_transaction_survive_its_replay_after_the_map_grows() {
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
    let mut want = Vec::new();
    let mut w = b.write().unwrap();
    for id in 0..20_000u64 {
        // Each new prefix is first met at a different point of the transaction.
        for v in [&b"a"[..], b"b", b"\0", b"ba", b""] {
            if id >= v.len() as u64 * 3_000 {
                w.put(IDS, &key(v, id), &[]).unwrap();
                want.push(key(v, id));
            }
        }
    }
    w.commit().unwrap();
    assert!(b.info().unwrap().resizes > 0, "the map never grew");
    want.sort();
    let r = b.read().unwrap();
    assert_eq!(
        read_range(&r, &Bound::Unbounded, &Bound::Unbounded, Direction::Forward),
        want
    );
}

#[test]
fn a_head_equal_to_a_prefix_whose_partition_emptied_is_found_in_the_main_tree() {
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
    let k = |head: &[u8], id: u64| [head, &id.to_be_bytes()[..]].concat();
    let mut w = b.write().unwrap();
    w.put(IDS, &k(b"abcd", 1), &[]).unwrap();
    w.commit().unwrap();
    // Prefix "abc" has a partition; it empties, and the head "abc" itself arrives.
    let r = b.read().unwrap();
    assert!(r.get(IDS, &k(b"abcd", 1)).unwrap().is_some());
    drop(r);
    let mut w = b.write().unwrap();
    assert!(w.delete(IDS, &k(b"abcd", 1)).unwrap());
    w.put(IDS, &k(b"abc", 2), &[]).unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    for d in [Direction::Forward, Direction::Backward] {
        let got = read_range(
            &r,
            &Bound::Included(b"abc".to_vec()),
            &Bound::Excluded(b"abd".to_vec()),
            d,
        );
        assert_eq!(got, vec![k(b"abc", 2)], "{d:?}");
        let got = read_range(
            &r,
            &Bound::Included(k(b"abc", 0)),
            &Bound::Included(k(b"abc", 9)),
            d,
        );
        assert_eq!(got, vec![k(b"abc", 2)], "{d:?}");
    }
    assert!(r.get(IDS, &k(b"abc", 2)).unwrap().is_some());
}

#[test]
fn a_split_table_is_opened_only_with_the_settings_it_was_split_with() {
    let dir = tempfile::tempdir().unwrap();
    {
        let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
        let mut w = b.write().unwrap();
        for v in [&b"a"[..], b"b", b"ab"] {
            w.put(IDS, &key(v, 1), &[]).unwrap();
        }
        w.commit().unwrap();
    }
    for (prefix, count, why) in [
        (3, 2, "partition count"),
        (4, 3, "prefix of another length"),
    ] {
        let specs = [
            TableSpec::plain("meta"),
            TableSpec::partitioned_set("ids", 8, prefix, count),
        ];
        let e = LmdbBackend::open_shaped(dir.path(), &specs, small_options()).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    let too_many = [
        TableSpec::plain("meta"),
        TableSpec::partitioned_set("ids", 8, 3, 300),
    ];
    let e = LmdbBackend::open_shaped(dir.path(), &too_many, small_options()).unwrap_err();
    assert!(e.to_string().contains("at most 256"), "{e}");
    // Refusals changed nothing.
    let b = LmdbBackend::open_shaped(dir.path(), PARTITIONED, small_options()).unwrap();
    let r = b.read().unwrap();
    for v in [&b"a"[..], b"b", b"ab"] {
        assert!(r.get(IDS, &key(v, 1)).unwrap().is_some());
    }
}
