//! One conformance suite, run against every backend: both must behave identically.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kauri_kv::{
    Backend, Direction, KvError, KvPair, KvResult, LmdbBackend, LmdbOptions, MemBackend, ReadTxn,
    WriteTxn, MAX_KEY_LEN,
};
use proptest::prelude::*;

const TABLES: &[&str] = &["main", "other"];
const T: usize = 0;
const U: usize = 1;

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn pairs<'t, I>(iter: I) -> Pairs
where
    I: Iterator<Item = KvResult<KvPair<'t>>>,
{
    iter.map(|r| {
        let (k, v) = r.unwrap();
        (k.to_vec(), v.to_vec())
    })
    .collect()
}

fn keys<'t, I>(iter: I) -> Vec<Vec<u8>>
where
    I: Iterator<Item = KvResult<KvPair<'t>>>,
{
    pairs(iter).into_iter().map(|(k, _)| k).collect()
}

fn all<R: ReadTxn>(r: &R, table: usize) -> Pairs {
    pairs(
        r.range(
            table,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )
        .unwrap(),
    )
}

fn get<R: ReadTxn>(r: &R, table: usize, key: &[u8]) -> Option<Vec<u8>> {
    r.get(table, key).unwrap().map(<[u8]>::to_vec)
}

fn put_all<B: Backend>(b: &B, table: usize, kvs: &[(&[u8], &[u8])]) {
    let mut w = b.write().unwrap();
    for (k, v) in kvs {
        w.put(table, k, v).unwrap();
    }
    w.commit().unwrap();
}

fn suite_get_put_delete<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    assert_eq!(get(&b.read().unwrap(), T, b"a"), None);
    put_all(&b, T, &[(b"a", b"1"), (b"b", b"2")]);
    let r = b.read().unwrap();
    assert_eq!(get(&r, T, b"a").as_deref(), Some(&b"1"[..]));
    assert_eq!(get(&r, T, b"b").as_deref(), Some(&b"2"[..]));
    assert_eq!(get(&r, U, b"a"), None, "tables are separate");
    drop(r);

    let mut w = b.write().unwrap();
    w.put(T, b"a", b"one").unwrap();
    assert!(w.delete(T, b"b").unwrap());
    assert!(!w.delete(T, b"b").unwrap());
    assert!(!w.delete(T, b"zz").unwrap());
    w.put(T, b"empty", b"").unwrap();
    w.commit().unwrap();

    let r = b.read().unwrap();
    assert_eq!(get(&r, T, b"a").as_deref(), Some(&b"one"[..]));
    assert_eq!(get(&r, T, b"b"), None);
    assert_eq!(get(&r, T, b"empty").as_deref(), Some(&b""[..]));
    assert!(matches!(r.get(7, b"a"), Err(KvError::NoSuchTable(7))));
    drop(r);
    let mut w = b.write().unwrap();
    assert!(matches!(w.put(9, b"a", b"x"), Err(KvError::NoSuchTable(9))));
    assert!(matches!(w.clear(9), Err(KvError::NoSuchTable(9))));
}

fn suite_key_limits<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    assert_eq!(b.max_key_len(), MAX_KEY_LEN);
    let long = vec![b'k'; 512];
    let max = vec![b'k'; 511];
    let mut w = b.write().unwrap();
    assert!(matches!(w.put(T, b"", b"v"), Err(KvError::EmptyKey)));
    assert!(matches!(
        w.put(T, &long, b"v"),
        Err(KvError::KeyTooLong { len: 512, max: 511 })
    ));
    assert!(matches!(w.append(T, b"", b"v"), Err(KvError::EmptyKey)));
    assert!(matches!(
        w.append(T, &long, b"v"),
        Err(KvError::KeyTooLong { .. })
    ));
    assert!(matches!(w.delete(T, b""), Err(KvError::EmptyKey)));
    assert!(matches!(
        w.delete(T, &long),
        Err(KvError::KeyTooLong { .. })
    ));
    assert!(matches!(w.get(T, &long), Err(KvError::KeyTooLong { .. })));
    assert!(all(&w, T).is_empty(), "nothing written");
    w.put(T, &max, b"v").unwrap();
    assert_eq!(get(&w, T, &max).as_deref(), Some(&b"v"[..]));
    w.commit().unwrap();
    let r = b.read().unwrap();
    assert_eq!(all(&r, T), vec![(max.clone(), b"v".to_vec())]);
    assert!(matches!(r.get(T, b""), Err(KvError::EmptyKey)));
    // Over-long and empty bounds are fine for iteration.
    let long_lo = vec![b'k'; 600];
    assert_eq!(
        keys(
            r.range(
                T,
                Bound::Included(&long_lo),
                Bound::Unbounded,
                Direction::Forward
            )
            .unwrap()
        ),
        Vec::<Vec<u8>>::new()
    );
    let long_lo = vec![b'j'; 600];
    assert_eq!(
        keys(
            r.range(
                T,
                Bound::Included(&long_lo),
                Bound::Unbounded,
                Direction::Backward
            )
            .unwrap()
        ),
        vec![max.clone()]
    );
    let long_hi = vec![b'k'; 600];
    assert_eq!(
        keys(
            r.range(
                T,
                Bound::Unbounded,
                Bound::Excluded(&long_hi),
                Direction::Backward
            )
            .unwrap()
        ),
        vec![max.clone()]
    );
    assert_eq!(
        keys(
            r.range(
                T,
                Bound::Included(b""),
                Bound::Unbounded,
                Direction::Forward
            )
            .unwrap()
        ),
        vec![max.clone()]
    );
    assert!(keys(
        r.range(
            T,
            Bound::Unbounded,
            Bound::Included(b""),
            Direction::Backward
        )
        .unwrap()
    )
    .is_empty());
}

fn fill_digits<B: Backend>(b: &B) {
    let mut w = b.write().unwrap();
    for k in [b"b", b"d", b"f", b"h"] {
        w.put(T, k, k).unwrap();
    }
    w.commit().unwrap();
}

fn check_ranges<R: ReadTxn>(r: &R) {
    use Bound::*;
    type Case<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>, &'a [&'a [u8]]);
    let cases: Vec<Case> = vec![
        (Unbounded, Unbounded, &[b"b", b"d", b"f", b"h"]),
        (Included(b"d"), Unbounded, &[b"d", b"f", b"h"]),
        (Excluded(b"d"), Unbounded, &[b"f", b"h"]),
        (Included(b"c"), Unbounded, &[b"d", b"f", b"h"]),
        (Excluded(b"c"), Unbounded, &[b"d", b"f", b"h"]),
        (Unbounded, Included(b"f"), &[b"b", b"d", b"f"]),
        (Unbounded, Excluded(b"f"), &[b"b", b"d"]),
        (Unbounded, Excluded(b"g"), &[b"b", b"d", b"f"]),
        (Unbounded, Included(b"g"), &[b"b", b"d", b"f"]),
        (Included(b"d"), Included(b"f"), &[b"d", b"f"]),
        (Included(b"d"), Excluded(b"f"), &[b"d"]),
        (Excluded(b"d"), Included(b"f"), &[b"f"]),
        (Excluded(b"d"), Excluded(b"f"), &[]),
        (Excluded(b"d"), Excluded(b"h"), &[b"f"]),
        (Included(b"a"), Included(b"z"), &[b"b", b"d", b"f", b"h"]),
        (Included(b"i"), Unbounded, &[]),
        (Unbounded, Excluded(b"b"), &[]),
        (Unbounded, Excluded(b"a"), &[]),
        (Unbounded, Excluded(b"z"), &[b"b", b"d", b"f", b"h"]),
        (Unbounded, Included(b"z"), &[b"b", b"d", b"f", b"h"]),
        (Included(b"d"), Included(b"d"), &[b"d"]),
        (Included(b"d"), Excluded(b"d"), &[]),
        (Excluded(b"d"), Excluded(b"d"), &[]),
        (Excluded(b"d"), Included(b"d"), &[]),
        (Included(b"f"), Included(b"d"), &[]),
        (Excluded(b"f"), Excluded(b"b"), &[]),
    ];
    for (lo, hi, want) in cases {
        let want: Vec<Vec<u8>> = want.iter().map(|k| k.to_vec()).collect();
        let fwd = keys(r.range(T, lo, hi, Direction::Forward).unwrap());
        assert_eq!(fwd, want, "forward {lo:?}..{hi:?}");
        let mut rev_want = want.clone();
        rev_want.reverse();
        let bwd = keys(r.range(T, lo, hi, Direction::Backward).unwrap());
        assert_eq!(bwd, rev_want, "backward {lo:?}..{hi:?}");
    }
}

fn suite_range<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    fill_digits(&b);
    check_ranges(&b.read().unwrap());
    check_ranges(&b.write().unwrap());
    // An exhausted iterator stays exhausted.
    let r = b.read().unwrap();
    let mut it = r
        .range(
            T,
            Bound::Unbounded,
            Bound::Excluded(b"c"),
            Direction::Forward,
        )
        .unwrap();
    assert!(it.next().is_some());
    assert!(it.next().is_none());
    assert!(it.next().is_none());
    // Values come along with their keys.
    assert_eq!(
        pairs(
            r.range(
                T,
                Bound::Included(b"h"),
                Bound::Unbounded,
                Direction::Forward
            )
            .unwrap()
        ),
        vec![(b"h".to_vec(), b"h".to_vec())]
    );
    let empty = make();
    let r = empty.read().unwrap();
    for d in [Direction::Forward, Direction::Backward] {
        assert!(keys(r.range(T, Bound::Unbounded, Bound::Unbounded, d).unwrap()).is_empty());
        assert!(keys(
            r.range(T, Bound::Included(b"a"), Bound::Excluded(b"b"), d)
                .unwrap()
        )
        .is_empty());
    }
}

fn suite_prefix<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    let ks: Vec<&[u8]> = vec![
        b"a",
        b"ab",
        b"ab\x00",
        b"ab\xff",
        b"abc",
        b"ac",
        b"b",
        b"\xff",
        b"\xff\x00",
        b"\xff\xff",
        b"\xff\xff\x01",
        b"\xff\xff\xff",
    ];
    let mut w = b.write().unwrap();
    for k in &ks {
        w.put(T, k, b"v").unwrap();
    }
    w.commit().unwrap();
    let cases: Vec<(&[u8], Vec<&[u8]>)> = vec![
        (b"ab", vec![b"ab", b"ab\x00", b"ab\xff", b"abc"]),
        (b"a", vec![b"a", b"ab", b"ab\x00", b"ab\xff", b"abc", b"ac"]),
        (b"ab\xff", vec![b"ab\xff"]),
        (b"abd", vec![]),
        (b"c", vec![]),
        (
            b"\xff",
            vec![
                b"\xff",
                b"\xff\x00",
                b"\xff\xff",
                b"\xff\xff\x01",
                b"\xff\xff\xff",
            ],
        ),
        (
            b"\xff\xff",
            vec![b"\xff\xff", b"\xff\xff\x01", b"\xff\xff\xff"],
        ),
        (b"\xff\xff\xff", vec![b"\xff\xff\xff"]),
        (b"\xff\xff\xff\xff", vec![]),
        (b"", ks.clone()),
    ];
    let r = b.read().unwrap();
    let w = b.write().unwrap();
    for (p, want) in cases {
        let mut want: Vec<Vec<u8>> = want.iter().map(|k| k.to_vec()).collect();
        want.sort();
        let mut rev_want = want.clone();
        rev_want.reverse();
        assert_eq!(
            keys(r.prefix(T, p, Direction::Forward).unwrap()),
            want,
            "{p:?}"
        );
        assert_eq!(
            keys(r.prefix(T, p, Direction::Backward).unwrap()),
            rev_want,
            "{p:?}"
        );
        assert_eq!(
            keys(w.prefix(T, p, Direction::Forward).unwrap()),
            want,
            "{p:?}"
        );
        assert_eq!(
            keys(w.prefix(T, p, Direction::Backward).unwrap()),
            rev_want,
            "{p:?}"
        );
    }
}

fn suite_read_own_writes<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"a", b"1"), (b"c", b"3")]);
    let mut w = b.write().unwrap();
    w.put(T, b"b", b"2").unwrap();
    w.put(T, b"a", b"one").unwrap();
    assert!(w.delete(T, b"c").unwrap());
    assert_eq!(get(&w, T, b"a").as_deref(), Some(&b"one"[..]));
    assert_eq!(get(&w, T, b"b").as_deref(), Some(&b"2"[..]));
    assert_eq!(get(&w, T, b"c"), None);
    assert_eq!(
        all(&w, T),
        vec![
            (b"a".to_vec(), b"one".to_vec()),
            (b"b".to_vec(), b"2".to_vec())
        ]
    );
    assert_eq!(
        keys(w.prefix(T, b"", Direction::Backward).unwrap()),
        vec![b"b".to_vec(), b"a".to_vec()]
    );
    // Others do not see uncommitted writes.
    assert_eq!(get(&b.read().unwrap(), T, b"b"), None);
    w.commit().unwrap();
    assert_eq!(get(&b.read().unwrap(), T, b"b").as_deref(), Some(&b"2"[..]));
}

fn suite_abort_and_drop<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"keep", b"1")]);
    let mut w = b.write().unwrap();
    w.put(T, b"x", b"1").unwrap();
    w.delete(T, b"keep").unwrap();
    w.abort();
    let mut w = b.write().unwrap();
    w.put(T, b"y", b"1").unwrap();
    w.clear(T).unwrap();
    drop(w);
    let r = b.read().unwrap();
    assert_eq!(all(&r, T), vec![(b"keep".to_vec(), b"1".to_vec())]);
}

fn suite_snapshot_isolation<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"k", b"v1")]);
    let old = b.read().unwrap();
    let mut w = b.write().unwrap();
    w.put(T, b"k", b"v2").unwrap();
    w.put(T, b"new", b"x").unwrap();
    assert_eq!(get(&old, T, b"k").as_deref(), Some(&b"v1"[..]));
    w.commit().unwrap();
    assert_eq!(get(&old, T, b"k").as_deref(), Some(&b"v1"[..]));
    assert_eq!(get(&old, T, b"new"), None);
    let mid = b.read().unwrap();
    let mut w = b.write().unwrap();
    w.clear(T).unwrap();
    w.commit().unwrap();
    assert_eq!(all(&old, T), vec![(b"k".to_vec(), b"v1".to_vec())]);
    assert_eq!(
        all(&mid, T),
        vec![
            (b"k".to_vec(), b"v2".to_vec()),
            (b"new".to_vec(), b"x".to_vec())
        ]
    );
    assert!(all(&b.read().unwrap(), T).is_empty());
    // Snapshots can move to another thread.
    let moved = std::thread::spawn(move || all(&old, T)).join().unwrap();
    assert_eq!(moved, vec![(b"k".to_vec(), b"v1".to_vec())]);
}

fn suite_nested_inner_abort<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"a", b"0"), (b"z", b"0")]);
    let mut w = b.write().unwrap();
    w.put(T, b"a", b"outer").unwrap();
    w.put(T, b"b", b"outer").unwrap();
    assert_eq!(w.nested_depth(), 0);
    w.begin_nested().unwrap();
    assert_eq!(w.nested_depth(), 1);
    w.put(T, b"a", b"inner").unwrap();
    w.put(T, b"c", b"inner").unwrap();
    w.put(T, b"c", b"inner2").unwrap();
    w.delete(T, b"z").unwrap();
    w.put(U, b"u", b"inner").unwrap();
    assert_eq!(get(&w, T, b"a").as_deref(), Some(&b"inner"[..]));
    w.abort_nested().unwrap();
    assert_eq!(w.nested_depth(), 0);
    assert_eq!(
        all(&w, T),
        vec![
            (b"a".to_vec(), b"outer".to_vec()),
            (b"b".to_vec(), b"outer".to_vec()),
            (b"z".to_vec(), b"0".to_vec()),
        ]
    );
    assert!(all(&w, U).is_empty());
    w.commit().unwrap();
    assert_eq!(
        get(&b.read().unwrap(), T, b"a").as_deref(),
        Some(&b"outer"[..])
    );
    let mut w = b.write().unwrap();
    assert!(matches!(w.commit_nested(), Err(KvError::NoNestedTxn)));
    assert!(matches!(w.abort_nested(), Err(KvError::NoNestedTxn)));
}

fn suite_nested_commit_then_outer_abort<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"a", b"0")]);
    let mut w = b.write().unwrap();
    w.begin_nested().unwrap();
    w.put(T, b"a", b"1").unwrap();
    w.put(T, b"b", b"1").unwrap();
    w.commit_nested().unwrap();
    assert_eq!(get(&w, T, b"a").as_deref(), Some(&b"1"[..]));
    w.abort();
    assert_eq!(
        all(&b.read().unwrap(), T),
        vec![(b"a".to_vec(), b"0".to_vec())]
    );

    // Inner commit inside an outer nested transaction that aborts: all of it goes.
    let mut w = b.write().unwrap();
    w.put(T, b"base", b"x").unwrap();
    w.begin_nested().unwrap();
    w.put(T, b"a", b"outer-nested").unwrap();
    w.begin_nested().unwrap();
    w.put(T, b"a", b"inner").unwrap();
    w.put(T, b"c", b"inner").unwrap();
    w.commit_nested().unwrap();
    w.abort_nested().unwrap();
    w.commit().unwrap();
    assert_eq!(
        all(&b.read().unwrap(), T),
        vec![
            (b"a".to_vec(), b"0".to_vec()),
            (b"base".to_vec(), b"x".to_vec())
        ]
    );
}

fn suite_nested_three_levels<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    let mut w = b.write().unwrap();
    w.put(T, b"k", b"0").unwrap();
    w.begin_nested().unwrap();
    w.put(T, b"k", b"1").unwrap();
    w.put(T, b"l1", b"").unwrap();
    w.begin_nested().unwrap();
    w.put(T, b"k", b"2").unwrap();
    w.put(T, b"l2", b"").unwrap();
    w.begin_nested().unwrap();
    assert_eq!(w.nested_depth(), 3);
    w.put(T, b"k", b"3").unwrap();
    w.put(T, b"l3", b"").unwrap();
    w.abort_nested().unwrap();
    assert_eq!(get(&w, T, b"k").as_deref(), Some(&b"2"[..]));
    assert_eq!(get(&w, T, b"l3"), None);
    w.commit_nested().unwrap();
    assert_eq!(w.nested_depth(), 1);
    assert_eq!(get(&w, T, b"l2").as_deref(), Some(&b""[..]));
    w.begin_nested().unwrap();
    w.delete(T, b"l1").unwrap();
    w.commit_nested().unwrap();
    assert_eq!(get(&w, T, b"l1"), None);
    w.abort_nested().unwrap();
    assert_eq!(w.nested_depth(), 0);
    assert_eq!(all(&w, T), vec![(b"k".to_vec(), b"0".to_vec())]);
    w.commit().unwrap();
    assert_eq!(
        all(&b.read().unwrap(), T),
        vec![(b"k".to_vec(), b"0".to_vec())]
    );
}

fn suite_nested_delete_clear<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]);
    put_all(&b, U, &[(b"u", b"1")]);
    let before_t = all(&b.read().unwrap(), T);
    let mut w = b.write().unwrap();
    w.begin_nested().unwrap();
    assert!(w.delete(T, b"b").unwrap());
    w.clear(U).unwrap();
    w.put(T, b"d", b"4").unwrap();
    w.clear(T).unwrap();
    w.put(T, b"a", b"after-clear").unwrap();
    assert_eq!(all(&w, T), vec![(b"a".to_vec(), b"after-clear".to_vec())]);
    w.abort_nested().unwrap();
    assert_eq!(all(&w, T), before_t);
    assert_eq!(all(&w, U), vec![(b"u".to_vec(), b"1".to_vec())]);
    w.commit().unwrap();
    assert_eq!(all(&b.read().unwrap(), T), before_t);
}

#[derive(Debug)]
enum TestErr {
    Kv(#[allow(dead_code)] KvError),
    Refused,
}

impl From<KvError> for TestErr {
    fn from(e: KvError) -> Self {
        TestErr::Kv(e)
    }
}

fn suite_nested_helper<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    let mut w = b.write().unwrap();
    let kept: Result<u32, TestErr> = w.nested(|w| {
        w.put(T, b"ok", b"1")?;
        Ok(7)
    });
    assert_eq!(kept.unwrap(), 7);
    let failed: Result<(), TestErr> = w.nested(|w| {
        w.put(T, b"bad", b"1")?;
        w.put(T, b"ok", b"changed")?;
        let inner: Result<(), TestErr> = w.nested(|w| {
            w.put(T, b"inner", b"1")?;
            Ok(())
        });
        inner?;
        Err(TestErr::Refused)
    });
    assert!(matches!(failed, Err(TestErr::Refused)));
    // A KvError from inside propagates and rolls back too.
    let failed: Result<(), TestErr> = w.nested(|w| {
        w.put(T, b"bad2", b"1")?;
        w.put(T, b"", b"1")?;
        Ok(())
    });
    assert!(matches!(failed, Err(TestErr::Kv(KvError::EmptyKey))));
    assert_eq!(w.nested_depth(), 0);
    w.commit().unwrap();
    assert_eq!(
        all(&b.read().unwrap(), T),
        vec![(b"ok".to_vec(), b"1".to_vec())]
    );
}

fn suite_append<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    let mut w = b.write().unwrap();
    for i in 0..500u32 {
        w.append(T, &i.to_be_bytes(), &i.to_le_bytes()).unwrap();
    }
    // Out of order, equal and lower keys are still stored correctly.
    w.append(T, &5u32.to_be_bytes(), b"five").unwrap();
    w.append(T, &499u32.to_be_bytes(), b"last").unwrap();
    w.append(T, &1000u32.to_be_bytes(), b"k").unwrap();
    w.append(T, &600u32.to_be_bytes(), b"six hundred").unwrap();
    w.put(T, &700u32.to_be_bytes(), b"put").unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    let got = all(&r, T);
    assert_eq!(got.len(), 503);
    assert!(got.windows(2).all(|p| p[0].0 < p[1].0));
    assert_eq!(
        get(&r, T, &5u32.to_be_bytes()).as_deref(),
        Some(&b"five"[..])
    );
    assert_eq!(
        get(&r, T, &499u32.to_be_bytes()).as_deref(),
        Some(&b"last"[..])
    );
    assert_eq!(
        get(&r, T, &6u32.to_be_bytes()),
        Some(6u32.to_le_bytes().to_vec())
    );
    assert_eq!(
        get(&r, T, &600u32.to_be_bytes()).as_deref(),
        Some(&b"six hundred"[..])
    );
    // Append inside a nested transaction rolls back like a put.
    let mut w = b.write().unwrap();
    w.begin_nested().unwrap();
    w.append(T, &2000u32.to_be_bytes(), b"n").unwrap();
    w.append(T, &5u32.to_be_bytes(), b"n").unwrap();
    w.abort_nested().unwrap();
    assert_eq!(get(&w, T, &2000u32.to_be_bytes()), None);
    assert_eq!(
        get(&w, T, &5u32.to_be_bytes()).as_deref(),
        Some(&b"five"[..])
    );
}

fn suite_clear<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"a", b"1"), (b"b", b"2")]);
    put_all(&b, U, &[(b"a", b"1")]);
    let mut w = b.write().unwrap();
    w.clear(T).unwrap();
    assert!(all(&w, T).is_empty());
    w.put(T, b"c", b"3").unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    assert_eq!(all(&r, T), vec![(b"c".to_vec(), b"3".to_vec())]);
    assert_eq!(all(&r, U), vec![(b"a".to_vec(), b"1".to_vec())]);
}

fn suite_info<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    let info = b.info().unwrap();
    assert!(info.name == "lmdb" || info.name == "memory");
    assert!(!info.write_active);
    assert!(!b.write_active());
    put_all(&b, T, &[(b"a", &[7u8; 1000])]);
    let w = b.write().unwrap();
    assert!(b.write_active());
    assert!(b.info().unwrap().write_active);
    drop(w);
    assert!(!b.write_active());
    let info = b.info().unwrap();
    assert!(info.used_bytes >= 1000);
    if info.name == "lmdb" {
        assert!(info.size_on_disk > 0);
        assert!(info.map_size >= info.used_bytes);
    } else {
        assert_eq!(info.size_on_disk, 0);
    }
}

fn suite_writers_serialized<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(&b, T, &[(b"counter", &0u64.to_be_bytes())]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..200 {
                    let mut w = b.write().unwrap();
                    let n = u64::from_be_bytes(
                        w.get(T, b"counter").unwrap().unwrap().try_into().unwrap(),
                    );
                    std::thread::yield_now();
                    w.put(T, b"counter", &(n + 1).to_be_bytes()).unwrap();
                    w.commit().unwrap();
                }
            });
        }
    });
    let r = b.read().unwrap();
    assert_eq!(get(&r, T, b"counter"), Some(400u64.to_be_bytes().to_vec()));
}

fn suite_readers_see_consistent_states<B: Backend>(make: impl Fn() -> B) {
    let b = make();
    put_all(
        &b,
        T,
        &[(b"a", &0u64.to_be_bytes()), (b"b", &0u64.to_be_bytes())],
    );
    let done = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 1..=300u64 {
                let mut w = b.write().unwrap();
                w.put(T, b"a", &i.to_be_bytes()).unwrap();
                // Padding so the values live on fresh pages now and then.
                w.put(T, &i.to_be_bytes(), &[1u8; 300]).unwrap();
                w.put(T, b"b", &i.to_be_bytes()).unwrap();
                if i % 7 == 0 {
                    w.abort();
                } else {
                    w.commit().unwrap();
                }
            }
            // Readers that start late still get to read while writes are going on.
            while reads.load(Ordering::Relaxed) == 0 {
                std::thread::yield_now();
            }
            done.store(true, Ordering::Release);
        });
        for _ in 0..2 {
            s.spawn(|| {
                let mut last = 0;
                while !done.load(Ordering::Acquire) {
                    let r = b.read().unwrap();
                    let a = get(&r, T, b"a").unwrap();
                    std::thread::yield_now();
                    let bb = get(&r, T, b"b").unwrap();
                    assert_eq!(a, bb, "a reader saw a half-committed state");
                    let n = u64::from_be_bytes(a.try_into().unwrap());
                    assert!(n >= last, "snapshots went back in time: {n} after {last}");
                    assert!(n % 7 != 0 || n == 0, "an aborted write became visible");
                    last = n;
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert!(reads.load(Ordering::Relaxed) > 0);
    let r = b.read().unwrap();
    assert_eq!(get(&r, T, b"a"), Some(300u64.to_be_bytes().to_vec()));
}

#[derive(Debug, Clone)]
enum ModelOp {
    Put(u8, u8),
    Delete(u8),
    Clear,
    Begin,
    CommitNested,
    AbortNested,
}

fn model_op() -> impl Strategy<Value = ModelOp> {
    prop_oneof![
        6 => (0u8..24, any::<u8>()).prop_map(|(k, v)| ModelOp::Put(k, v)),
        3 => (0u8..24).prop_map(ModelOp::Delete),
        1 => Just(ModelOp::Clear),
        2 => Just(ModelOp::Begin),
        2 => Just(ModelOp::CommitNested),
        2 => Just(ModelOp::AbortNested),
    ]
}

fn model_key(k: u8) -> Vec<u8> {
    vec![b'k', k]
}

/// Runs `ops` against a backend and a model (a map per nesting level); returns whether they
/// agreed after every step, and commits or aborts the outer transaction at the end.
fn run_model<B: Backend>(b: &B, ops: &[ModelOp], commit: bool) -> Result<(), TestCaseError> {
    let committed: BTreeMap<Vec<u8>, Vec<u8>> = all(&b.read().unwrap(), T).into_iter().collect();
    let mut stack = vec![committed.clone()];
    let mut w = b.write().unwrap();
    for op in ops {
        match op {
            ModelOp::Put(k, v) => {
                w.put(T, &model_key(*k), &[*v]).unwrap();
                stack.last_mut().unwrap().insert(model_key(*k), vec![*v]);
            }
            ModelOp::Delete(k) => {
                let was = w.delete(T, &model_key(*k)).unwrap();
                let model_was = stack.last_mut().unwrap().remove(&model_key(*k)).is_some();
                prop_assert_eq!(was, model_was);
            }
            ModelOp::Clear => {
                w.clear(T).unwrap();
                stack.last_mut().unwrap().clear();
            }
            ModelOp::Begin => {
                w.begin_nested().unwrap();
                let top = stack.last().unwrap().clone();
                stack.push(top);
            }
            ModelOp::CommitNested => {
                if stack.len() > 1 {
                    w.commit_nested().unwrap();
                    let top = stack.pop().unwrap();
                    *stack.last_mut().unwrap() = top;
                } else {
                    prop_assert!(matches!(w.commit_nested(), Err(KvError::NoNestedTxn)));
                }
            }
            ModelOp::AbortNested => {
                if stack.len() > 1 {
                    w.abort_nested().unwrap();
                    stack.pop();
                } else {
                    prop_assert!(matches!(w.abort_nested(), Err(KvError::NoNestedTxn)));
                }
            }
        }
        prop_assert_eq!(w.nested_depth(), stack.len() - 1);
        let seen: Vec<_> = all(&w, T);
        let want: Vec<_> = stack
            .last()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        prop_assert_eq!(seen, want);
    }
    let want = if commit {
        // Nested transactions still open at commit are kept, like committed ones.
        let current = stack.pop().unwrap();
        w.commit().unwrap();
        current
    } else {
        w.abort();
        committed
    };
    let seen: BTreeMap<_, _> = all(&b.read().unwrap(), T).into_iter().collect();
    prop_assert_eq!(seen, want);
    Ok(())
}

fn suite_model<B: Backend>(make: impl Fn() -> B) {
    let config = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(
        first in proptest::collection::vec(model_op(), 0..60),
        first_commit in any::<bool>(),
        second in proptest::collection::vec(model_op(), 0..60),
    )| {
        let b = make();
        run_model(&b, &first, first_commit)?;
        run_model(&b, &second, true)?;
    });
}

fn suite_dump_and_load<B: Backend>(make: impl Fn() -> B) {
    use kauri_kv::dump::{load_dump, write_dump};
    let b = make();
    // Enough data for several load batches, values of every size class, both tables.
    let mut w = b.write().unwrap();
    for i in 0..20_000u32 {
        let value = vec![(i % 251) as u8; (i as usize * 7) % 1500];
        w.put(T, &i.to_be_bytes(), &value).unwrap();
    }
    w.put(T, &[0xff; MAX_KEY_LEN], b"longest key").unwrap();
    w.put(U, b"a", b"").unwrap();
    w.put(U, b"b", &vec![7u8; 3 << 20]).unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    let mut dump = Vec::new();
    let written = write_dump(&r, TABLES, &mut dump).unwrap();
    assert_eq!(written.per_table, [20_001, 2]);
    assert_eq!(written.bytes, dump.len() as u64);
    // A write after the snapshot is not in the dump.
    let mut w = b.write().unwrap();
    w.put(U, b"c", b"late").unwrap();
    w.commit().unwrap();

    let copy = make();
    let seen = AtomicUsize::new(0);
    let progress = |bytes: u64| seen.store(bytes as usize, Ordering::Relaxed);
    let loaded = load_dump(&copy, TABLES, dump.as_slice(), Some(&progress)).unwrap();
    assert_eq!(loaded, written);
    assert_eq!(seen.load(Ordering::Relaxed), dump.len());
    let c = copy.read().unwrap();
    for t in [T, U] {
        assert_eq!(all(&c, t), all(&r, t));
    }
    assert_eq!(get(&c, U, b"c"), None);

    // A store that is not empty, another layout, a damaged or truncated dump: refused.
    let err = load_dump(&copy, TABLES, dump.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    let err = load_dump(&make(), &["main", "third"], dump.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("tables"), "{err}");
    let err = load_dump(&make(), TABLES, &dump[..dump.len() - 3], None).unwrap_err();
    assert!(matches!(err, KvError::Dump(_)), "{err}");
    let err = load_dump(&make(), TABLES, &dump[..dump.len() / 2], None).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    let mut bad = dump.clone();
    bad[0] = b'X';
    let err = load_dump(&make(), TABLES, bad.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("magic"), "{err}");
    let mut newer = dump.clone();
    newer[11] = 9;
    let err = load_dump(&make(), TABLES, newer.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("format 9"), "{err}");
    // Keys out of order (the first key of table 0 rewritten from 0 to 5) are refused.
    let header = 8 + 4 + 2 + TABLES.iter().map(|t| 1 + t.len()).sum::<usize>();
    let mut swapped = dump.clone();
    swapped[header + 1..header + 5].copy_from_slice(&5u32.to_be_bytes());
    let err = load_dump(&make(), TABLES, swapped.as_slice(), None).unwrap_err();
    assert!(err.to_string().contains("out of order"), "{err}");
}

macro_rules! conformance {
    ($($suite:ident),* $(,)?) => {
        mod mem {
            $(
                #[test]
                fn $suite() {
                    super::$suite(|| kauri_kv::MemBackend::new(super::TABLES));
                }
            )*
        }
        mod lmdb {
            $(
                #[test]
                fn $suite() {
                    let base = tempfile::tempdir().unwrap();
                    let n = std::sync::atomic::AtomicUsize::new(0);
                    super::$suite(|| {
                        let dir = base
                            .path()
                            .join(n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string());
                        // A small map, so that growth happens during the suite too.
                        let options = kauri_kv::LmdbOptions {
                            map_size: 256 * 1024,
                            ..Default::default()
                        };
                        kauri_kv::LmdbBackend::open(&dir, super::TABLES, options).unwrap()
                    });
                }
            )*
        }
    };
}

conformance!(
    suite_get_put_delete,
    suite_key_limits,
    suite_range,
    suite_prefix,
    suite_read_own_writes,
    suite_abort_and_drop,
    suite_snapshot_isolation,
    suite_nested_inner_abort,
    suite_nested_commit_then_outer_abort,
    suite_nested_three_levels,
    suite_nested_delete_clear,
    suite_nested_helper,
    suite_append,
    suite_dump_and_load,
    suite_clear,
    suite_info,
    suite_writers_serialized,
    suite_readers_see_consistent_states,
    suite_model,
);

#[test]
fn both_backends_implement_the_trait() {
    fn assert_backend<B: Backend>() {}
    assert_backend::<MemBackend>();
    assert_backend::<LmdbBackend>();
    let _ = LmdbOptions::default();
}

/// A dump made before a table was added loads into the newer layout: its tables fill the
/// first ones, the new one stays empty and is counted as such; a dump whose tables are not
/// the first of the store's is refused.
#[test]
fn a_dump_of_an_older_layout_loads_into_a_newer_one() {
    use kauri_kv::dump::{load_dump, write_dump};
    let old = kauri_kv::MemBackend::new(TABLES);
    let mut w = old.write().unwrap();
    w.put(T, b"k", b"v").unwrap();
    w.put(U, b"a", b"b").unwrap();
    w.commit().unwrap();
    let mut dump = Vec::new();
    write_dump(&old.read().unwrap(), TABLES, &mut dump).unwrap();
    let newer: Vec<&str> = TABLES.iter().copied().chain(["third"]).collect();
    let store = kauri_kv::MemBackend::new(&newer);
    let stats = load_dump(&store, &newer, dump.as_slice(), None).unwrap();
    assert_eq!(stats.per_table, [1, 1, 0]);
    let r = store.read().unwrap();
    assert_eq!(get(&r, T, b"k").as_deref(), Some(&b"v"[..]));
    assert_eq!(all(&r, 2), Vec::new());
    let other: Vec<&str> = ["third"]
        .into_iter()
        .chain(TABLES.iter().copied())
        .collect();
    let err = load_dump(
        &kauri_kv::MemBackend::new(&other),
        &other,
        dump.as_slice(),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("tables"), "{err}");
}
