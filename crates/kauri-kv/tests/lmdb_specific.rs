//! Behaviour only the LMDB backend has: map growth, crash safety, large stores.

use std::io::{BufRead, BufReader};
use std::ops::Bound;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kauri_kv::{Backend, Direction, KvError, LmdbBackend, LmdbOptions, ReadTxn, WriteTxn};

const TABLES: &[&str] = &["data", "meta"];
const DATA: usize = 0;
const META: usize = 1;

fn value_for(key: &[u8], len: usize) -> Vec<u8> {
    let seed = key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    (0..len)
        .map(|i| (seed.wrapping_add(i as u64).wrapping_mul(31) >> 7) as u8)
        .collect()
}

#[test]
fn growth_is_transparent() {
    let dir = tempfile::tempdir().unwrap();
    let options = LmdbOptions {
        map_size: 64 * 1024,
        ..Default::default()
    };
    let b = LmdbBackend::open(dir.path(), TABLES, options).unwrap();
    let small_txns = 500u32;
    let per_txn = 40u32;
    let value_len = 1000;
    // One big transaction first, from the tiny map, so it fills the map many times over;
    // with nested transactions and appends in the middle of it.
    let big = 20_000u32;
    let mut w = b.write().unwrap();
    for i in 0..big {
        let key = format!("b{i:06}");
        let value = value_for(key.as_bytes(), value_len);
        if i % 1000 == 0 {
            w.begin_nested().unwrap();
            w.put(DATA, b"nested-temp", &value).unwrap();
            w.append(DATA, key.as_bytes(), &value).unwrap();
            w.abort_nested().unwrap();
            w.append(DATA, key.as_bytes(), &value).unwrap();
        } else {
            w.put(DATA, key.as_bytes(), &value).unwrap();
        }
    }
    w.commit().unwrap();
    let after_big = b.info().unwrap();
    assert!(after_big.resizes > 0, "{after_big:?}");
    assert!(after_big.map_size >= after_big.used_bytes);
    println!("after the big transaction: {after_big:?}");

    let reader_done = AtomicBool::new(false);

    std::thread::scope(|s| {
        // A reader that holds snapshots for a while, then stops: growth has to wait for it.
        s.spawn(|| {
            for _ in 0..150 {
                let r = b.read().unwrap();
                let done = r
                    .get(META, b"small_txns")
                    .unwrap()
                    .map_or(0, |v| u32::from_be_bytes(v.try_into().unwrap()));
                // Everything the snapshot claims is committed is there.
                if done > 0 {
                    let key = format!("s{:05}/{:03}", done - 1, per_txn - 1);
                    let v = r.get(DATA, key.as_bytes()).unwrap().unwrap();
                    assert_eq!(v, value_for(key.as_bytes(), value_len));
                }
                std::thread::sleep(Duration::from_millis(2));
                drop(r);
                std::thread::sleep(Duration::from_millis(1));
            }
            reader_done.store(true, Ordering::Release);
        });

        for t in 0..small_txns {
            let mut w = b.write().unwrap();
            for i in 0..per_txn {
                let key = format!("s{t:05}/{i:03}");
                w.put(DATA, key.as_bytes(), &value_for(key.as_bytes(), value_len))
                    .unwrap();
            }
            w.put(META, b"small_txns", &(t + 1).to_be_bytes()).unwrap();
            w.commit().unwrap();
        }
    });
    assert!(reader_done.load(Ordering::Acquire));
    let info = b.info().unwrap();
    assert!(info.resizes > after_big.resizes, "{info:?}");
    assert!(info.map_size >= info.used_bytes);
    println!("after the small transactions: {info:?}");

    let r = b.read().unwrap();
    let mut count = 0;
    for t in 0..small_txns {
        for i in 0..per_txn {
            let key = format!("s{t:05}/{i:03}");
            let v = r.get(DATA, key.as_bytes()).unwrap().unwrap();
            assert_eq!(v, value_for(key.as_bytes(), value_len), "{key}");
            count += 1;
        }
    }
    for i in 0..big {
        let key = format!("b{i:06}");
        let v = r.get(DATA, key.as_bytes()).unwrap().unwrap();
        assert_eq!(v, value_for(key.as_bytes(), value_len), "{key}");
        count += 1;
    }
    assert_eq!(r.get(DATA, b"nested-temp").unwrap(), None);
    let total = r
        .range(DATA, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .unwrap()
        .count();
    assert_eq!(total, count);
    drop(r);

    // The data survives closing and reopening with a map smaller than the file.
    drop(b);
    let b = LmdbBackend::open(dir.path(), TABLES, options_small()).unwrap();
    let r = b.read().unwrap();
    let key = format!("b{:06}", big - 1);
    assert_eq!(
        r.get(DATA, key.as_bytes()).unwrap().unwrap(),
        value_for(key.as_bytes(), value_len)
    );
}

fn options_small() -> LmdbOptions {
    LmdbOptions {
        map_size: 64 * 1024,
        ..Default::default()
    }
}

#[test]
fn oversized_transaction_fails_cleanly_and_can_be_retried() {
    let dir = tempfile::tempdir().unwrap();
    let options = LmdbOptions {
        map_size: 64 * 1024,
        replay_limit: 64 * 1024,
        ..Default::default()
    };
    let b = LmdbBackend::open(dir.path(), TABLES, options).unwrap();
    let write_all = |w: &mut <LmdbBackend as Backend>::Write<'_>| -> Result<(), KvError> {
        for i in 0..2000u32 {
            w.put(DATA, &i.to_be_bytes(), &[7u8; 500])?;
        }
        Ok(())
    };
    let mut w = b.write().unwrap();
    let first = write_all(&mut w);
    match first {
        Err(KvError::MapFull(reason)) => {
            assert!(reason.contains("replay"), "{reason}");
            assert!(matches!(w.get(DATA, b"x"), Err(KvError::MapFull(_))));
            assert!(w.commit().is_err());
        }
        other => panic!("expected MapFull, got {other:?}"),
    }
    assert!(!b.write_active());
    assert!(b.info().unwrap().resizes > 0);
    // Growth continues on each attempt until the transaction fits.
    let mut attempts = 1;
    loop {
        let mut w = b.write().unwrap();
        match write_all(&mut w) {
            Ok(()) => {
                w.commit().unwrap();
                break;
            }
            Err(KvError::MapFull(_)) if attempts < 10 => attempts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let r = b.read().unwrap();
    assert_eq!(
        r.get(DATA, &1999u32.to_be_bytes()).unwrap(),
        Some(&[7u8; 500][..])
    );
}

#[test]
fn copy_to_makes_a_usable_copy() {
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open(&dir.path().join("src"), TABLES, options_small()).unwrap();
    assert_eq!(b.path(), dir.path().join("src"));
    let mut w = b.write().unwrap();
    for i in 0..1000u32 {
        w.put(DATA, &i.to_be_bytes(), &[1u8; 100]).unwrap();
    }
    w.commit().unwrap();
    let snapshot = b.read().unwrap();
    for compact in [false, true] {
        let dest = dir.path().join(format!("copy-{compact}"));
        b.copy_to(&dest, compact).unwrap();
        let copy = LmdbBackend::open(&dest, TABLES, options_small()).unwrap();
        let r = copy.read().unwrap();
        assert_eq!(
            r.range(DATA, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                .unwrap()
                .count(),
            1000
        );
    }
    drop(snapshot);
}

#[test]
fn compaction_gives_free_pages_back_and_waits_for_a_closed_store() {
    let dir = tempfile::tempdir().unwrap();
    let specs: Vec<kauri_kv::TableSpec> = TABLES
        .iter()
        .map(|t| kauri_kv::TableSpec::plain(t))
        .collect();
    let b = LmdbBackend::open(dir.path(), TABLES, options_small()).unwrap();
    let mut w = b.write().unwrap();
    for i in 0..20_000u32 {
        w.put(DATA, &i.to_be_bytes(), &[7u8; 100]).unwrap();
    }
    w.commit().unwrap();
    let mut w = b.write().unwrap();
    for i in 0..19_000u32 {
        w.delete(DATA, &i.to_be_bytes()).unwrap();
    }
    w.commit().unwrap();
    // Open here, so not for the taking.
    let e = LmdbBackend::compact(dir.path(), &specs, options_small()).unwrap_err();
    assert!(e.to_string().contains("open in another process"), "{e}");
    drop(b);
    let (before, after) = LmdbBackend::compact(dir.path(), &specs, options_small()).unwrap();
    assert!(after * 4 < before, "{before} -> {after}");
    let b = LmdbBackend::open(dir.path(), TABLES, options_small()).unwrap();
    let r = b.read().unwrap();
    let keys: Vec<Vec<u8>> = r
        .range(DATA, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .unwrap()
        .map(|p| p.unwrap().0.into_owned())
        .collect();
    assert_eq!(keys.len(), 1000);
    assert_eq!(keys[0], 19_000u32.to_be_bytes());
    assert!(!dir.path().join("compact.tmp").exists());
}

const GROW_CHILD_ENV: &str = "KAURI_KV_GROW_CHILD_DIR";

#[test]
fn map_grown_by_another_process_is_adopted() {
    if let Some(dir) = std::env::var_os(GROW_CHILD_ENV) {
        // The other process: grows the map well past the parent's by writing 8 MB.
        let b = LmdbBackend::open(Path::new(&dir), TABLES, options_small()).unwrap();
        let mut w = b.write().unwrap();
        for i in 0..8000u32 {
            w.put(DATA, &i.to_be_bytes(), &[3u8; 1000]).unwrap();
        }
        w.commit().unwrap();
        assert!(b.info().unwrap().resizes > 0);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let b = LmdbBackend::open(dir.path(), TABLES, options_small()).unwrap();
    let mut w = b.write().unwrap();
    w.put(META, b"parent", b"1").unwrap();
    w.commit().unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "map_grown_by_another_process_is_adopted",
            "--test-threads=1",
        ])
        .env(GROW_CHILD_ENV, dir.path())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let r = b.read().unwrap();
    assert_eq!(
        r.get(DATA, &7999u32.to_be_bytes()).unwrap(),
        Some(&[3u8; 1000][..])
    );
    drop(r);
    let mut w = b.write().unwrap();
    w.put(META, b"parent", b"2").unwrap();
    w.put(DATA, &9000u32.to_be_bytes(), &[4u8; 1000]).unwrap();
    w.commit().unwrap();
    let r = b.read().unwrap();
    assert_eq!(r.get(META, b"parent").unwrap(), Some(&b"2"[..]));
    assert!(b.info().unwrap().map_size > 64 * 1024);
}

const CHILD_ENV: &str = "KAURI_KV_CRASH_CHILD_DIR";
const KEYS_PER_TXN: u32 = 100;

fn crash_child(dir: &Path) -> ! {
    let b = LmdbBackend::open(dir, TABLES, options_small()).unwrap();
    let start = b
        .read()
        .unwrap()
        .get(META, b"last")
        .unwrap()
        .map_or(0, |v| u32::from_be_bytes(v.try_into().unwrap()) + 1);
    for i in start.. {
        let mut w = b.write().unwrap();
        for j in 0..KEYS_PER_TXN {
            let key = format!("{i:08}/{j:02}");
            w.put(DATA, key.as_bytes(), &value_for(key.as_bytes(), 2000))
                .unwrap();
        }
        w.put(META, b"last", &i.to_be_bytes()).unwrap();
        w.commit().unwrap();
        println!("committed {i}");
    }
    unreachable!()
}

#[test]
fn crash_safety() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        crash_child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut last_seen = None;
    for round in 0..4u32 {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_safety", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = BufReader::new(stdout).lines();
        let target = 10 + round * 7;
        let mut committed_now = 0;
        for line in lines {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("committed ") {
                committed_now += 1;
                last_seen = Some(n.parse::<u32>().unwrap());
                if committed_now >= target {
                    break;
                }
            }
        }
        assert!(committed_now >= target, "the child stopped early");
        // SIGKILL, most likely in the middle of the next transaction.
        child.kill().unwrap();
        child.wait().unwrap();

        let b = LmdbBackend::open(dir.path(), TABLES, options_small()).unwrap();
        let r = b.read().unwrap();
        let last = u32::from_be_bytes(r.get(META, b"last").unwrap().unwrap().try_into().unwrap());
        let seen = last_seen.unwrap();
        assert!(
            last >= seen,
            "committed txn {seen} was lost (store says {last})"
        );
        for i in 0..=last {
            for j in 0..KEYS_PER_TXN {
                let key = format!("{i:08}/{j:02}");
                let v = r.get(DATA, key.as_bytes()).unwrap();
                assert_eq!(
                    v.map(<[u8]>::to_vec),
                    Some(value_for(key.as_bytes(), 2000)),
                    "{key} of committed txn {i}"
                );
            }
        }
        let next = format!("{:08}/", last + 1);
        assert_eq!(
            r.prefix(DATA, next.as_bytes(), Direction::Forward)
                .unwrap()
                .count(),
            0,
            "part of the interrupted txn {} is visible",
            last + 1
        );
        assert_eq!(
            r.range(DATA, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                .unwrap()
                .count(),
            ((last + 1) * KEYS_PER_TXN) as usize
        );
        println!("round {round}: killed after txn {last}");
    }
}

fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .ok()?;
    String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

#[test]
#[ignore = "writes about 4.3 GiB; run explicitly"]
fn past_4_gib() {
    let base = std::env::temp_dir();
    match free_bytes(&base) {
        Some(free) if free >= 12 << 30 => {}
        other => {
            println!(
                "skipping past_4_gib: {} has {other:?} bytes free, 12 GiB needed",
                base.display()
            );
            return;
        }
    }
    let dir = tempfile::tempdir_in(&base).unwrap();
    let start = Instant::now();
    let options = LmdbOptions {
        map_size: 1 << 30,
        durable: false,
        ..Default::default()
    };
    let b = LmdbBackend::open(dir.path(), TABLES, options).unwrap();
    const MIB: usize = 1 << 20;
    let total: u32 = 4400; // 4.3 GiB of values
    let per_txn = 256u32;
    let mut value = vec![0u8; MIB];
    let mut i = 0u32;
    while i < total {
        let mut w = b.write().unwrap();
        for _ in 0..per_txn.min(total - i) {
            value[..4].copy_from_slice(&i.to_be_bytes());
            value[MIB - 4..].copy_from_slice(&i.to_le_bytes());
            w.append(DATA, &i.to_be_bytes(), &value).unwrap();
            i += 1;
        }
        w.commit().unwrap();
    }
    b.sync().unwrap();
    let written = start.elapsed();
    let info = b.info().unwrap();
    println!("past_4_gib: wrote {total} MiB in {written:?}; {info:?}");
    assert!(info.size_on_disk > 4 << 30, "{info:?}");
    assert!(info.resizes > 0);

    let r = b.read().unwrap();
    for i in (0..total).step_by(97).chain([total - 1]) {
        let v = r.get(DATA, &i.to_be_bytes()).unwrap().unwrap();
        assert_eq!(v.len(), MIB);
        assert_eq!(&v[..4], &i.to_be_bytes());
        assert_eq!(&v[MIB - 4..], &i.to_le_bytes());
    }
    drop(r);
    drop(b);
    println!("past_4_gib: total {:?}", start.elapsed());
}

/// A commit that changed nothing must not make later snapshots look stale (they would be
/// taken again and again).
#[test]
fn snapshots_after_an_empty_commit_are_immediate() {
    let dir = tempfile::tempdir().unwrap();
    let b = kauri_kv::lmdb::LmdbBackend::open(
        dir.path(),
        &["t"],
        kauri_kv::lmdb::LmdbOptions::default(),
    )
    .unwrap();
    {
        use kauri_kv::WriteTxn;
        let mut w = kauri_kv::Backend::write(&b).unwrap();
        w.put(0, b"k", b"v").unwrap();
        w.commit().unwrap();
        let w = kauri_kv::Backend::write(&b).unwrap();
        w.commit().unwrap();
    }
    for _ in 0..200 {
        let _r = kauri_kv::Backend::read(&b).unwrap();
    }
    assert_eq!(kauri_kv::Backend::info(&b).unwrap().snapshot_retakes, 0);
}

/// A damaged `data.mdb` — truncated to half, to its two meta pages, emptied, or not LMDB at
/// all — is refused with an error naming the file, before LMDB maps it (reading past the end
/// of a truncated map would kill the process with SIGBUS). The whole file still opens.
#[test]
fn damaged_files_are_refused_before_they_are_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let b = LmdbBackend::open(&path, TABLES, options_small()).unwrap();
        let mut w = b.write().unwrap();
        for i in 0..5000u32 {
            w.put(DATA, &i.to_be_bytes(), &[7u8; 200]).unwrap();
        }
        w.commit().unwrap();
    }
    let file = path.join("data.mdb");
    let whole = std::fs::read(&file).unwrap();
    assert!(LmdbBackend::open(&path, TABLES, options_small()).is_ok());
    for (what, bytes) in [
        ("half", whole[..whole.len() / 2].to_vec()),
        ("meta pages only", whole[..8192].to_vec()),
        ("empty", Vec::new()),
        ("not LMDB", vec![0x55; 64 * 1024]),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        match LmdbBackend::open(&path, TABLES, options_small()) {
            Ok(_) => panic!("{what}: opened"),
            Err(e) => assert!(e.to_string().contains("data.mdb"), "{what}: {e}"),
        }
    }
    std::fs::write(&file, &whole).unwrap();
    let b = LmdbBackend::open(&path, TABLES, options_small()).unwrap();
    assert_eq!(
        b.read()
            .unwrap()
            .range(DATA, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .unwrap()
            .count(),
        5000
    );
}
