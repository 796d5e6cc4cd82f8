//! A full disk, with the database on a small file system of its own.
//!
//! The server: clients writing until no space is left must hear an error that names the
//! reason, never a success whose change is not on disk; reads go on and the server lives;
//! once space is freed, writes succeed again; afterwards `kauri dbcheck` finds the folder
//! consistent and the restarted server holds every acknowledged write and none of the
//! refused ones.
//!
//! The key-value store below it, with a map that must grow while the disk fills: LMDB maps
//! the data file read-only and writes pages with `pwritev` at commit, so the full disk is
//! an error of the commit (`ENOSPC`, or `EIO` for a write cut short, which the store
//! reports as the full disk it is); map growth only maps more address space and needs no
//! disk. The store stays readable, also with a thousand snapshots open at once (LMDB keeps
//! its reader table in a shared writable map of `lock.mdb`, whose pages must have their
//! blocks before the disk fills), takes commits again once space is freed, and reopens
//! with exactly the committed transactions.
//!
//! The file system is a tmpfs mounted for the test where it may mount one (as root, or as
//! a user inside a user and mount namespace made with `unshare`, in which the test runs
//! again), else an ext4 image through `fuse2fs`; when none can be made the test fails,
//! saying why (`KAURI_DISKFULL_OPTIONAL=1` leaves it out instead). `KAURI_DISKFULL_FS=tmpfs|ext4|fuse2fs` picks one (`ext4`:
//! an image on a loop device, as root), to check the behaviour of a real disk file system.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{connect, json, kauri, serve, DOMAIN};
use kauri_kv::{Backend, Direction, LmdbBackend, LmdbOptions, ReadTxn, WriteTxn};
use kauri_ldap_client::proto::{ResultCode, SearchScope};
use kauri_ldap_client::{search_request, Filter, LdapClient};

/// Size of the small file system.
const FS_MIB: u64 = 64;
/// Space left free beside the filler file when the writing starts.
const HEADROOM: u64 = 1 << 20;
/// Set, to the kind of file system, in the test run again inside a namespace.
const IN_NAMESPACE: &str = "KAURI_DISKFULL_IN_NAMESPACE";
/// What the test prints when it cannot run.
const NOT_RUN: &str = "disk-full test NOT RUN";
/// Set to 1 where no small file system can be made, to leave the test out instead of
/// failing.
const OPTIONAL: &str = "KAURI_DISKFULL_OPTIONAL";

/// The kinds of small file system the test can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tmpfs,
    Ext4,
    Fuse2fs,
}

impl Kind {
    fn parse(name: &str) -> Kind {
        match name {
            "tmpfs" => Kind::Tmpfs,
            "ext4" => Kind::Ext4,
            "fuse2fs" => Kind::Fuse2fs,
            other => panic!("KAURI_DISKFULL_FS={other}: tmpfs, ext4 or fuse2fs"),
        }
    }
}

/// Runs a command; what it said when it fails or cannot start.
fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    match Command::new(cmd).args(args).stdin(Stdio::null()).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{cmd} {}` failed ({}): {}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("`{cmd}` cannot run: {e}")),
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A small file system mounted on a fresh directory; unmounted and removed when dropped,
/// also when the test fails.
struct SmallFs {
    kind: Kind,
    mnt: PathBuf,
    /// Its size in bytes.
    size: u64,
    _dir: tempfile::TempDir,
}

/// The device of the file system holding `path`.
fn device(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.dev())
}

impl SmallFs {
    /// Mounts a `size_mib` file system of `kind`.
    fn mount(kind: Kind, size_mib: u64) -> Result<SmallFs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        match kind {
            Kind::Tmpfs => {
                let size = format!("size={size_mib}m,mode=0700");
                run(
                    "mount",
                    &["-t", "tmpfs", "-o", &size, "kauri-test", &s(&mnt)],
                )?;
            }
            Kind::Ext4 | Kind::Fuse2fs => {
                let image = dir.path().join("fs.img");
                let f = std::fs::File::create(&image).map_err(|e| e.to_string())?;
                f.set_len(size_mib << 20).map_err(|e| e.to_string())?;
                run("mkfs.ext4", &["-q", "-F", "-m", "0", &s(&image)])?;
                if kind == Kind::Ext4 {
                    run("mount", &["-o", "loop", &s(&image), &s(&mnt)])?;
                } else {
                    run("fuse2fs", &[&s(&image), &s(&mnt)])?;
                }
            }
        }
        // A command may report success and mount nothing (fuse2fs goes to the background
        // first): the directory must be on a file system of its own before anything is
        // written to it, or the filler would fill the disk below.
        let parent = device(dir.path());
        let deadline = Instant::now() + Duration::from_secs(5);
        while device(&mnt) == parent {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the {kind:?} file system did not appear on {}",
                    s(&mnt)
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let fs = SmallFs {
            kind,
            mnt,
            size: size_mib << 20,
            _dir: dir,
        };
        let probe = fs.mnt.join(".probe");
        std::fs::write(&probe, b"x")
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|e| format!("the {kind:?} file system takes no file: {e}"))?;
        Ok(fs)
    }

    fn path(&self) -> &Path {
        &self.mnt
    }

    /// Fills the file system with a file of its own, `name`, leaving `free` bytes free;
    /// returns the file, whose removal frees the space again.
    fn fill(&self, name: &str, free: u64) -> PathBuf {
        let path = self.mnt.join(name);
        let mut f = std::fs::File::create(&path).expect("create a filler file");
        let chunk = vec![0x5au8; 64 << 10];
        let mut written = 0u64;
        loop {
            assert!(
                written <= self.size,
                "{} takes more than the {} bytes of the small file system",
                s(&path),
                self.size
            );
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(n) => written += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => panic!("writing a filler file: {e}"),
            }
        }
        f.set_len(written.saturating_sub(free))
            .expect("cut the filler file");
        f.sync_all().expect("sync the filler file");
        path
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let mnt = s(&self.mnt);
        let done = match self.kind {
            Kind::Fuse2fs => run("fusermount3", &["-u", &mnt])
                .or_else(|_| run("fusermount", &["-u", &mnt]))
                .or_else(|_| run("umount", &[&mnt])),
            Kind::Tmpfs | Kind::Ext4 => run("umount", &[&mnt]),
        };
        if let Err(e) = done {
            eprintln!("{e}; unmounting lazily");
            let _ = run("umount", &["-l", &mnt]);
        }
    }
}

/// Where a test runs.
enum Place {
    /// On this file system.
    Here(SmallFs),
    /// It ran again inside a user and mount namespace; what it printed, and whether it
    /// passed.
    Namespace(Result<String, String>),
    /// Nowhere: no small file system can be made on this machine; why.
    Nowhere(String),
}

/// A small file system for the test named `test`, or where it ran instead.
fn place(test: &str) -> Place {
    if let Ok(kind) = std::env::var(IN_NAMESPACE) {
        return match SmallFs::mount(Kind::parse(&kind), FS_MIB) {
            Ok(fs) => Place::Here(fs),
            Err(e) => Place::Nowhere(format!("inside a user and mount namespace: {e}")),
        };
    }
    let wanted = std::env::var("KAURI_DISKFULL_FS")
        .ok()
        .map(|k| Kind::parse(&k));
    let mut why = Vec::new();
    match SmallFs::mount(wanted.unwrap_or(Kind::Tmpfs), FS_MIB) {
        Ok(fs) => return Place::Here(fs),
        Err(e) => why.push(e),
    }
    if matches!(wanted, None | Some(Kind::Tmpfs)) {
        // Without the privilege to mount: the test again, in a namespace where it has it.
        let exe = std::env::current_exe().expect("the test binary");
        let out = Command::new("unshare")
            .args(["--user", "--map-root-user", "--mount", "--"])
            .arg(&exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(IN_NAMESPACE, "tmpfs")
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) => {
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
                if o.status.success() && text.contains(NOT_RUN) {
                    why.push(
                        text.lines()
                            .filter(|l| !l.is_empty())
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                } else if o.status.success() {
                    return Place::Namespace(Ok(text));
                } else if text.contains("running 1 test") {
                    return Place::Namespace(Err(text));
                } else {
                    why.push(format!(
                        "`unshare --user --map-root-user --mount`: {}",
                        text.trim()
                    ));
                }
            }
            Err(e) => why.push(format!("`unshare` cannot run: {e}")),
        }
    }
    if wanted.is_none() {
        match SmallFs::mount(Kind::Fuse2fs, FS_MIB) {
            Ok(fs) => return Place::Here(fs),
            Err(e) => why.push(e),
        }
    }
    Place::Nowhere(why.join("\n  "))
}

/// Held by each test while it runs: LMDB opens its data file without close-on-exec, so a
/// `kauri` process one test starts while the other has its store open would keep that
/// store's file system busy.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The small file system `test` runs on, or `None` when it ran in a namespace or cannot
/// run (said on the output).
fn small_fs(test: &str) -> Option<SmallFs> {
    match place(test) {
        Place::Here(fs) => {
            println!("on a {FS_MIB} MiB {:?} file system", fs.kind);
            Some(fs)
        }
        Place::Namespace(Ok(out)) => {
            println!("ran inside a user and mount namespace:\n{out}");
            None
        }
        Place::Namespace(Err(out)) => panic!("inside a user and mount namespace:\n{out}"),
        // Inside the namespace the outer run decides what to try next; outside, a test
        // that cannot run fails unless told it may be left out.
        Place::Nowhere(why)
            if std::env::var_os(IN_NAMESPACE).is_some()
                || std::env::var_os(OPTIONAL).is_some_and(|v| v == "1") =>
        {
            println!("{NOT_RUN}: no small file system can be made here:\n  {why}");
            None
        }
        Place::Nowhere(why) => panic!(
            "no small file system can be made here ({OPTIONAL}=1 leaves this test out):\n  {why}"
        ),
    }
}

fn ou() -> String {
    format!("OU=Full,{DOMAIN}")
}

/// The photo of contact `n`: 1 to 60 KiB, its bytes its own.
fn photo(n: u64) -> Vec<u8> {
    let len = 1024 + (n.wrapping_mul(7919) % 60) * 1024;
    (0..len)
        .map(|i| (i.wrapping_mul(31).wrapping_add(n.wrapping_mul(17)) % 251) as u8)
        .collect()
}

/// Adds contact `n` with its photo; the result code and message.
async fn add_contact(c: &mut LdapClient, n: u64) -> (ResultCode, String) {
    let attrs = vec![
        ("objectClass".to_string(), vec![b"contact".to_vec()]),
        (
            "description".to_string(),
            vec![format!("contact {n}").into_bytes()],
        ),
        ("thumbnailPhoto".to_string(), vec![photo(n)]),
    ];
    let r = c
        .add(&format!("CN=c{n},{}", ou()), attrs, Vec::new())
        .await
        .unwrap_or_else(|e| panic!("adding contact {n}: {e}"));
    (r.code, r.message)
}

/// The contacts below the OU, by number, with their photos.
async fn contacts(c: &mut LdapClient) -> BTreeMap<u64, Vec<u8>> {
    let req = search_request(
        &ou(),
        SearchScope::OneLevel,
        Filter::parse("(objectClass=contact)").unwrap(),
        &["thumbnailPhoto"],
    );
    let out = c
        .search(req, Vec::new())
        .await
        .expect("search the contacts");
    assert_eq!(out.result.code, ResultCode::SUCCESS, "{:?}", out.result);
    out.entries
        .into_iter()
        .filter_map(|e| {
            let n = e.dn.strip_prefix("CN=c")?.split(',').next()?.parse().ok()?;
            let photo = e
                .attributes
                .into_iter()
                .find(|a| a.name.eq_ignore_ascii_case("thumbnailPhoto"))
                .and_then(|a| a.values.into_iter().next())
                .unwrap_or_default();
            Some((n, photo))
        })
        .collect()
}

/// `kauri dbcheck --json` must find the folder consistent; returns its records.
fn dbcheck(data: &Path) -> u64 {
    let out = kauri(&[
        "dbcheck".as_ref(),
        "--json".as_ref(),
        "-H".as_ref(),
        data.as_os_str(),
    ]);
    let report = json(&String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success() && report["clean"] == true,
        "dbcheck ({}): {report}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    report["records"].as_u64().unwrap_or_default()
}

/// What one writing connection heard.
#[derive(Debug, Default)]
struct Heard {
    acked: Vec<u64>,
    refused: Vec<(u64, ResultCode, String)>,
}

/// Writing connections.
const WRITERS: u64 = 3;

/// Adds contacts `w`, `w + WRITERS`, … until `refusals` of them were refused (or a
/// generous bound passed, which the caller notices).
async fn write_until_full(url: String, w: u64, refusals: usize) -> Heard {
    let mut c = connect(&url).await;
    let mut heard = Heard::default();
    let mut n = w;
    while heard.refused.len() < refusals && heard.acked.len() < 2000 {
        n += WRITERS;
        match add_contact(&mut c, n).await {
            (ResultCode::SUCCESS, _) => heard.acked.push(n),
            (code, message) => heard.refused.push((n, code, message)),
        }
    }
    heard
}

const SERVER_TEST: &str = "a_full_disk_refuses_writes_with_the_reason_and_loses_nothing";

#[test]
fn a_full_disk_refuses_writes_with_the_reason_and_loses_nothing() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(fs) = small_fs(SERVER_TEST) else {
        return;
    };
    let started = Instant::now();
    let data = common::provision(fs.path(), "domain");
    let mut served = serve(&data);
    let url = served.ldap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut c = rt.block_on(connect(&url));
    let r = rt
        .block_on(c.add(
            &ou(),
            vec![("objectClass".into(), vec![b"organizationalUnit".to_vec()])],
            Vec::new(),
        ))
        .unwrap();
    assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
    let filler = fs.fill("filler", HEADROOM);

    // Several connections write until the disk is full, and on.
    let heard: Vec<Heard> = rt.block_on(async {
        let tasks: Vec<_> = (0..WRITERS)
            .map(|w| tokio::spawn(write_until_full(url.clone(), w, 4)))
            .collect();
        let mut heard = Vec::new();
        for t in tasks {
            heard.push(t.await.expect("a writer"));
        }
        heard
    });
    let mut acked: Vec<u64> = heard.iter().flat_map(|h| h.acked.clone()).collect();
    let refused: Vec<&(u64, ResultCode, String)> =
        heard.iter().flat_map(|h| h.refused.iter()).collect();
    assert!(
        served.running(),
        "the server died on the full disk; it logged:\n{}",
        served.log_tail()
    );
    assert!(
        heard.iter().all(|h| h.refused.len() >= 4),
        "the disk never filled: {heard:?}"
    );
    for (n, code, message) in &refused {
        assert!(
            [ResultCode::BUSY, ResultCode::UNAVAILABLE, ResultCode::OTHER].contains(code),
            "contact {n} was refused with {code:?} {message}"
        );
        assert!(
            message.contains("No space left on device"),
            "contact {n} was refused without the reason: {code:?} {message}"
        );
    }
    let (_, code, message) = refused[0];
    println!(
        "{} writes acknowledged, {} refused, first with {code:?}: {message}",
        acked.len(),
        refused.len()
    );

    // Reads go on: the contacts as acknowledged, several searches at once, dbcheck.
    let seen = rt.block_on(contacts(&mut c));
    for n in &acked {
        assert!(seen.contains_key(n), "acknowledged contact {n} is not seen");
    }
    for (n, _, _) in &refused {
        assert!(!seen.contains_key(n), "refused contact {n} is seen");
    }
    let searches = rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move {
                    let mut c = connect(&url).await;
                    let req = search_request(
                        DOMAIN,
                        SearchScope::Subtree,
                        Filter::parse("(objectClass=*)").unwrap(),
                        &["cn"],
                    );
                    c.search(req, Vec::new()).await.expect("search").result
                })
            })
            .collect();
        let mut results = Vec::new();
        for t in tasks {
            results.push(t.await.expect("a reader"));
        }
        results
    });
    assert!(
        searches.iter().all(|r| r.code == ResultCode::SUCCESS),
        "{searches:?}"
    );
    dbcheck(&data);
    assert!(served.running(), "{}", served.log_tail());

    // Space again: the next write of every connection succeeds.
    std::fs::remove_file(&filler).unwrap();
    let again = rt.block_on(async {
        let mut again = Vec::new();
        for w in 0..WRITERS {
            let n = 1_000_000 + w;
            let mut c = connect(&url).await;
            again.push((n, add_contact(&mut c, n).await));
        }
        again
    });
    for (n, (code, message)) in again {
        assert_eq!(
            code,
            ResultCode::SUCCESS,
            "contact {n}, once space was freed: {message}"
        );
        acked.push(n);
    }
    drop(c);

    // Stopped, checked, restarted: every acknowledged write there, no refused one.
    let status = served.stop();
    assert!(status.success(), "kauri serve ended with {status}");
    let records = dbcheck(&data);
    let served = serve(&data);
    let mut c = rt.block_on(connect(&served.ldap()));
    let seen = rt.block_on(contacts(&mut c));
    for n in &acked {
        assert!(
            seen.get(n) == Some(&photo(*n)),
            "acknowledged contact {n} is lost or changed after the restart"
        );
    }
    for (n, _, _) in &refused {
        assert!(
            !seen.contains_key(n),
            "refused contact {n} is there after the restart"
        );
    }
    println!(
        "all {} acknowledged there after the restart, dbcheck clean ({records} records); {:.1} s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
}

fn value_for(key: &[u8], len: usize) -> Vec<u8> {
    let seed = key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    (0..len)
        .map(|i| (seed.wrapping_add(i as u64).wrapping_mul(31) >> 7) as u8)
        .collect()
}

/// Every key and value of the store's one table.
fn contents(b: &LmdbBackend) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let r = b.read().unwrap();
    r.range(
        0,
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        Direction::Forward,
    )
    .unwrap()
    .map(|kv| {
        let (k, v) = kv.unwrap();
        (k.to_vec(), v.to_vec())
    })
    .collect()
}

const STORE_TEST: &str = "the_store_fails_commits_on_a_full_disk_and_lives_on";

#[test]
fn the_store_fails_commits_on_a_full_disk_and_lives_on() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(fs) = small_fs(STORE_TEST) else {
        return;
    };
    let dir = fs.path().join("kv");
    // A tiny map, so it grows again and again while the disk fills.
    let options = LmdbOptions {
        map_size: 64 << 10,
        ..Default::default()
    };
    let b = Arc::new(LmdbBackend::open(&dir, &["t"], options.clone()).unwrap());
    let filler = fs.fill("filler", HEADROOM);
    let mut committed = BTreeMap::new();
    let mut transactions = 0;
    let mut refused = Vec::new();
    let mut errors = Vec::new();
    for t in 0..200u32 {
        // Transactions of 8 KiB values, one more each time.
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..=t)
            .map(|i| {
                let k = format!("t{t:03}-{i:03}").into_bytes();
                let v = value_for(&k, 8 << 10);
                (k, v)
            })
            .collect();
        let mut w = b.write().expect("a write transaction on the full disk");
        let written = pairs.iter().try_for_each(|(k, v)| w.put(0, k, v));
        match written.and_then(|()| w.commit()) {
            Ok(()) => {
                committed.extend(pairs);
                transactions += 1;
            }
            Err(e) => {
                errors.push(e.to_string());
                refused.extend(pairs.into_iter().map(|(k, _)| k));
            }
        }
        if errors.len() == 5 {
            break;
        }
    }
    let info = b.info().unwrap();
    println!(
        "{transactions} transactions committed, then {} refused, first with: {}; map {} KiB after {} resizes",
        errors.len(),
        errors.first().map_or("", String::as_str),
        info.map_size >> 10,
        info.resizes
    );
    assert_eq!(errors.len(), 5, "the disk never filled");
    assert!(info.resizes > 0, "the map never grew: {info:?}");
    for e in &errors {
        assert!(
            e.contains("No space left on device"),
            "a commit failed with: {e}"
        );
    }

    // Not one byte left: a thousand snapshots at once, each seeing the committed state.
    let rest = fs.fill("rest", 0);
    let snapshots: Vec<_> = (0..1000).map(|_| b.read().unwrap()).collect();
    for (k, v) in &committed {
        assert_eq!(snapshots[999].get(0, k).unwrap(), Some(v.as_slice()));
    }
    for k in &refused {
        assert_eq!(snapshots[0].get(0, k).unwrap(), None);
    }
    drop(snapshots);
    assert_eq!(contents(&b), committed);

    // Space again: commits succeed, and the store reopens with exactly what was committed.
    std::fs::remove_file(&filler).unwrap();
    std::fs::remove_file(&rest).unwrap();
    let mut w = b.write().unwrap();
    w.put(0, b"after", &value_for(b"after", 64 << 10)).unwrap();
    w.commit().expect("a commit once space was freed");
    committed.insert(b"after".to_vec(), value_for(b"after", 64 << 10));
    drop(b);
    let b = LmdbBackend::open(&dir, &["t"], options).unwrap();
    assert_eq!(contents(&b), committed);
}
