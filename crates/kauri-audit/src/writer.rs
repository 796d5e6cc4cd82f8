//! The writer: one background thread that owns the log file, fed by a bounded queue.
//!
//! [`Auditor::log`] never waits: it tests the event against the configured selection and
//! offers it to the queue. A full queue (a disk slower than the load, a stuck journal)
//! costs the event, never the request: the loss is counted, and the writer records it in
//! the log itself as an `audit`/`dropped` event with the count, so a reader of the log
//! sees that and where events are missing.
//!
//! The thread batches: lines go through a buffer that is written out when the queue runs
//! empty, so a burst costs a few large writes. Files are created mode 0600 in a folder
//! created 0700 (the log names accounts and addresses). The current file is rotated when
//! it passes `max_file_bytes` or was begun `max_file_age_hours` ago: renamed to
//! `audit-<UTC yyyymmddThhmmss>.log` beside it (`.1`, `.2`, … when that name is taken),
//! a new `audit.log` started, and the oldest rotated files beyond `keep_files` deleted.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{
    sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError,
};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::{AuditConfig, Selection};
use crate::event::{AuditEvent, Category, Outcome};
use crate::journal::Journal;
use crate::reader::LogSet;
use crate::time::Timestamp;
use crate::AuditError;

/// How often an idle writer wakes to check the age of its file.
const IDLE_WAKE: Duration = Duration::from_secs(30);
/// How often, at most, drops are reported while events keep coming.
const DROP_REPORT_EVERY: Duration = Duration::from_secs(1);
/// How long after a write error the file is opened again.
const REOPEN_AFTER: Duration = Duration::from_secs(1);
/// The write buffer: large enough that a burst is a few system calls.
const WRITE_BUFFER: usize = 256 * 1024;

/// What the log has done so far: for `kauri bench audit`, the server's statistics, and
/// tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AuditStats {
    /// Callers' events written (the log's own `dropped` records are not counted).
    pub written: u64,
    /// Events lost: offered while the queue was full, or lost to a write error.
    pub dropped: u64,
    /// Bytes of JSON lines written, the log's own records included.
    pub bytes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    written: AtomicU64,
    /// Offered while the queue was full (or after shutdown).
    full: AtomicU64,
    /// Lost to write errors.
    failed: AtomicU64,
    bytes: AtomicU64,
}

enum Msg {
    Event(Box<AuditEvent>),
    Flush(SyncSender<()>),
    Shutdown,
}

/// The handle every service logs through: cheap to clone (one `Arc`), safe to share
/// between threads and tasks, and a no-op when auditing is off. The writer thread stops
/// when the last clone is dropped (or at [`Auditor::shutdown`]), after writing what was
/// queued.
#[derive(Clone, Default)]
pub struct Auditor {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    tx: SyncSender<Msg>,
    selection: Selection,
    counters: Arc<Counters>,
    thread: Mutex<Option<JoinHandle<()>>>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            None => f.write_str("Auditor(disabled)"),
            Some(i) => f
                .debug_struct("Auditor")
                .field("path", &i.path)
                .field("stats", &self.stats())
                .finish(),
        }
    }
}

impl Auditor {
    /// Starts the writer for a data folder: checks the settings, creates the folder and
    /// opens the current file (so a log that cannot be written is an error at start,
    /// not a silent gap later), and spawns the thread. With `enabled = false`, or with
    /// neither `file` nor `journal`, this is [`Auditor::disabled`].
    pub fn start(cfg: &AuditConfig, data_dir: &Path) -> Result<Auditor, AuditError> {
        if !cfg.enabled || (!cfg.file && !cfg.journal) {
            return Ok(Auditor::disabled());
        }
        let selection = cfg.validate()?;
        let file = if cfg.file {
            Some(FileSink::open(cfg, &cfg.log_path(data_dir))?)
        } else {
            None
        };
        let path = file.as_ref().map(|f| f.set.current());
        let journal = cfg
            .journal
            .then(|| Journal::connect(cfg.journal_socket_path()));
        let (tx, rx) = sync_channel(cfg.buffer_events);
        let counters = Arc::new(Counters::default());
        let mut writer = Writer {
            rx,
            file,
            journal,
            counters: Arc::clone(&counters),
            reported_full: 0,
            reported_failed: 0,
            last_drop_check: Instant::now(),
            line: Vec::with_capacity(1024),
        };
        let thread = std::thread::Builder::new()
            .name("kauri-audit".into())
            .spawn(move || writer.run())
            .map_err(AuditError::Thread)?;
        Ok(Auditor {
            inner: Some(Arc::new(Inner {
                tx,
                selection,
                counters,
                thread: Mutex::new(Some(thread)),
                path,
            })),
        })
    }

    /// An auditor that records nothing: for tools and tests that do not audit.
    pub fn disabled() -> Auditor {
        Auditor { inner: None }
    }

    /// Whether events are recorded at all; lets a caller skip building an event.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The current log file, when events go to a file.
    pub fn log_path(&self) -> Option<&Path> {
        self.inner.as_ref().and_then(|i| i.path.as_deref())
    }

    /// Records an event, if the configuration selects it. Never blocks: when the queue
    /// is full the event is counted as dropped, and the drop is recorded in the log.
    pub fn log(&self, event: AuditEvent) {
        let Some(inner) = &self.inner else {
            return;
        };
        if !inner.selection.wants(&event) {
            return;
        }
        match inner.tx.try_send(Msg::Event(Box::new(event))) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                inner.counters.full.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts so far. `written` and `dropped` include only events already handled by the
    /// writer; call [`Auditor::flush`] first for exact figures.
    pub fn stats(&self) -> AuditStats {
        let Some(inner) = &self.inner else {
            return AuditStats::default();
        };
        let c = &inner.counters;
        AuditStats {
            written: c.written.load(Ordering::Relaxed),
            dropped: c.full.load(Ordering::Relaxed) + c.failed.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
        }
    }

    /// Waits until every event logged before this call is written and the file synced
    /// to disk (and any drops so far recorded). Blocks: for shutdown, tests and
    /// benchmarks, not for the serving path.
    pub fn flush(&self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let (tx, rx) = sync_channel(1);
        if inner.tx.send(Msg::Flush(tx)).is_ok() {
            // An error means the writer is gone, and there is nothing left to wait for.
            let _ = rx.recv();
        }
    }

    /// Writes what is queued, syncs, and stops the writer thread; events logged after
    /// this are counted as dropped. Dropping the last clone does the same.
    pub fn shutdown(&self) {
        if let Some(inner) = &self.inner {
            inner.stop();
        }
    }
}

impl Inner {
    fn stop(&self) {
        let handle = self
            .thread
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            if self.tx.send(Msg::Shutdown).is_ok() && h.join().is_err() {
                tracing::error!("the audit writer thread panicked");
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The writer thread's state.
struct Writer {
    rx: Receiver<Msg>,
    file: Option<FileSink>,
    journal: Option<Journal>,
    counters: Arc<Counters>,
    reported_full: u64,
    reported_failed: u64,
    last_drop_check: Instant,
    line: Vec<u8>,
}

impl Writer {
    fn run(&mut self) {
        loop {
            let msg = match self.rx.try_recv() {
                Ok(m) => m,
                Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {
                    // The queue ran empty: the burst is over; write it out.
                    self.report_drops();
                    self.idle();
                    match self.rx.recv_timeout(IDLE_WAKE) {
                        Ok(m) => m,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            };
            match msg {
                Msg::Event(e) => {
                    self.write(&e, true);
                    if self.last_drop_check.elapsed() >= DROP_REPORT_EVERY {
                        self.report_drops();
                    }
                }
                Msg::Flush(reply) => {
                    self.report_drops();
                    if let Some(f) = &mut self.file {
                        f.flush(true);
                    }
                    let _ = reply.send(());
                }
                Msg::Shutdown => break,
            }
        }
        self.report_drops();
        if let Some(f) = &mut self.file {
            f.flush(true);
        }
    }

    /// Writes the buffer out, and rotates a file that has grown old while idle.
    fn idle(&mut self) {
        if let Some(f) = &mut self.file {
            f.flush(false);
            f.rotate_if_old(Timestamp::now());
        }
    }

    /// Writes one event to the file and the journal; false when the file write failed.
    fn write(&mut self, e: &AuditEvent, counted: bool) -> bool {
        self.line.clear();
        if e.write_json(&mut self.line).is_err() {
            if counted {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
            }
            return false;
        }
        if let Some(j) = &mut self.journal {
            j.send(e, &self.line);
        }
        self.line.push(b'\n');
        let ok = match &mut self.file {
            Some(f) => f.write(&self.line, Timestamp::now()),
            None => true,
        };
        if ok {
            if counted {
                self.counters.written.fetch_add(1, Ordering::Relaxed);
            }
            self.counters
                .bytes
                .fetch_add(self.line.len() as u64, Ordering::Relaxed);
        } else if counted {
            self.counters.failed.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// Records, in the log, events lost since the last report.
    fn report_drops(&mut self) {
        self.last_drop_check = Instant::now();
        let full = self.counters.full.load(Ordering::Relaxed);
        let failed = self.counters.failed.load(Ordering::Relaxed);
        let (new_full, new_failed) = (full - self.reported_full, failed - self.reported_failed);
        if new_full == 0 && new_failed == 0 {
            return;
        }
        let reason = match (new_full, new_failed) {
            (_, 0) => "the audit queue was full".to_string(),
            (0, _) => "writing the audit log failed".to_string(),
            (a, b) => format!("{a} with the audit queue full, {b} to write errors"),
        };
        let e = AuditEvent::new(Category::Audit, "dropped", Outcome::Failure)
            .with_service("audit")
            .with_dropped(new_full + new_failed)
            .with_reason(reason);
        tracing::warn!(
            dropped = new_full + new_failed,
            "audit events were dropped; recorded in the audit log"
        );
        if self.write(&e, false) {
            self.reported_full = full;
            self.reported_failed = failed;
        }
    }
}

/// The current file and its rotation.
struct FileSink {
    set: LogSet,
    out: Option<BufWriter<File>>,
    size: u64,
    /// When the current file was begun (by the clock, when its first line was written).
    started: Option<Timestamp>,
    max_bytes: u64,
    max_age: Option<Duration>,
    keep: usize,
    /// After an error: when to open the file again.
    retry_at: Option<Instant>,
    /// After a failed rename: when to try rotating again.
    rotate_retry_at: Option<Instant>,
    failing: bool,
}

impl FileSink {
    fn open(cfg: &AuditConfig, path: &Path) -> Result<FileSink, AuditError> {
        let set = LogSet::for_file(path);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(set.dir())
            .map_err(|e| AuditError::io(set.dir(), e))?;
        let mut sink = FileSink {
            set,
            out: None,
            size: 0,
            started: None,
            max_bytes: cfg.max_file_bytes,
            max_age: (cfg.max_file_age_hours > 0)
                .then(|| Duration::from_secs(cfg.max_file_age_hours.saturating_mul(3600))),
            keep: cfg.keep_files,
            retry_at: None,
            rotate_retry_at: None,
            failing: false,
        };
        sink.open_current()
            .map_err(|e| AuditError::io(sink.set.current(), e))?;
        Ok(sink)
    }

    /// Opens (or creates) the current file for appending.
    fn open_current(&mut self) -> std::io::Result<()> {
        let path = self.set.current();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        self.size = file.metadata()?.len();
        self.started = if self.size > 0 {
            // When the file was begun: its first event's time, else its birth time
            // where the file system keeps one.
            let born = || file.metadata().ok()?.created().ok();
            Some(
                first_event_time(&path)
                    .or_else(|| born().map(Timestamp::from_system_time))
                    .unwrap_or_else(Timestamp::now),
            )
        } else {
            None
        };
        self.out = Some(BufWriter::with_capacity(WRITE_BUFFER, file));
        Ok(())
    }

    fn fail(&mut self, what: &str, e: &std::io::Error) {
        if !self.failing {
            tracing::error!(
                path = %self.set.current().display(),
                "audit log: {what}: {e}; events are counted as dropped until it works again"
            );
        }
        self.failing = true;
        if let Some(w) = self.out.take() {
            // Whatever is still buffered is lost with the file: do not write it later.
            let _ = w.into_parts();
        }
        self.retry_at = Some(Instant::now() + REOPEN_AFTER);
    }

    /// Appends a line; `now` is the wall clock (not the event's time, which a caller may
    /// set in the past), for the file's age.
    fn write(&mut self, line: &[u8], now: Timestamp) -> bool {
        if self.out.is_none() {
            if self.retry_at.is_some_and(|t| Instant::now() < t) {
                return false;
            }
            if let Err(e) = self.open_current() {
                self.fail("opening", &e);
                return false;
            }
        }
        self.rotate_if_old(now);
        let Some(out) = &mut self.out else {
            return false;
        };
        if let Err(e) = out.write_all(line) {
            self.fail("writing", &e);
            return false;
        }
        if self.failing {
            tracing::info!("audit log: writing again");
            self.failing = false;
        }
        if self.size == 0 {
            self.started = Some(now);
        }
        self.size += line.len() as u64;
        if self.size >= self.max_bytes {
            self.rotate();
        }
        true
    }

    /// Writes the buffer to the file, and with `sync` to the disk.
    fn flush(&mut self, sync: bool) {
        let Some(out) = &mut self.out else {
            return;
        };
        let r = out.flush().and_then(|()| {
            if sync {
                out.get_ref().sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(e) = r {
            self.fail("flushing", &e);
        }
    }

    fn rotate_if_old(&mut self, now: Timestamp) {
        let (Some(max_age), Some(started)) = (self.max_age, self.started) else {
            return;
        };
        if self.size > 0 && now.minus(max_age) >= started {
            self.rotate();
        }
    }

    /// Renames the current file aside, starts a new one, and prunes old ones.
    fn rotate(&mut self) {
        if self.rotate_retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.flush(true);
        if self.out.is_none() {
            return;
        }
        let current = self.set.current();
        let target = self.set.next_rotated_path(Timestamp::now());
        if let Err(e) = std::fs::rename(&current, &target) {
            tracing::error!(
                from = %current.display(),
                to = %target.display(),
                "audit log: cannot rotate: {e}; writing on to the current file"
            );
            self.rotate_retry_at = Some(Instant::now() + Duration::from_secs(60));
            return;
        }
        self.rotate_retry_at = None;
        if let Err(e) = self.open_current() {
            self.fail("opening a new file after rotation", &e);
        }
        self.prune();
    }

    /// Deletes the oldest rotated files beyond `keep`.
    fn prune(&self) {
        if self.keep == 0 {
            return;
        }
        let rotated = match self.set.rotated_files() {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(dir = %self.set.dir().display(), "audit log: listing rotated files: {e}");
                return;
            }
        };
        let excess = rotated.len().saturating_sub(self.keep);
        for old in rotated.iter().take(excess) {
            if let Err(e) = std::fs::remove_file(&old.path) {
                tracing::error!(path = %old.path.display(), "audit log: removing an old file: {e}");
            }
        }
    }
}

/// The time of a file's first event, read from its first line (at most 64 KiB of it, so
/// a damaged file cannot make the writer read gigabytes at start).
fn first_event_time(path: &Path) -> Option<Timestamp> {
    #[derive(serde::Deserialize)]
    struct TimeOnly {
        time: Timestamp,
    }
    let mut line = Vec::new();
    let f = File::open(path).ok()?;
    BufReader::new(f)
        .take(64 * 1024)
        .read_until(b'\n', &mut line)
        .ok()?;
    serde_json::from_slice::<TimeOnly>(&line)
        .ok()
        .map(|t| t.time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::{Filter, ReadStats};
    use std::os::unix::fs::PermissionsExt;

    fn cfg(dir: &Path) -> AuditConfig {
        AuditConfig {
            path: Some(dir.join("audit.log")),
            ..AuditConfig::default()
        }
    }

    fn read_all(dir: &Path) -> (Vec<AuditEvent>, ReadStats) {
        let mut out = Vec::new();
        let stats = crate::reader::read(&LogSet::open(dir).unwrap(), &Filter::default(), |r| {
            out.push(r.event.clone());
            true
        })
        .unwrap();
        (out, stats)
    }

    #[test]
    fn writes_and_reads_back_with_private_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let a = Auditor::start(&AuditConfig::default(), &data).unwrap();
        assert_eq!(a.log_path(), Some(data.join("audit/audit.log").as_path()));
        for i in 0..100u64 {
            a.log(
                AuditEvent::logon(Outcome::Success)
                    .with_service("ldap")
                    .with_user(format!("user{i}"))
                    .with_session(i),
            );
        }
        a.flush();
        assert_eq!(
            a.stats(),
            AuditStats {
                written: 100,
                dropped: 0,
                bytes: std::fs::metadata(data.join("audit/audit.log"))
                    .unwrap()
                    .len()
            }
        );
        let (events, stats) = read_all(&data.join("audit"));
        assert_eq!(events.len(), 100);
        assert_eq!(stats.skipped, 0);
        assert_eq!(events[7].user.as_deref(), Some("user7"));
        assert_eq!(events[7].session, Some(7));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&data.join("audit")), 0o700);
        assert_eq!(mode(&data.join("audit/audit.log")), 0o600);
        // A clone shares the writer; dropping every clone stops it after writing.
        let b = a.clone();
        drop(a);
        b.log(AuditEvent::logon(Outcome::Failure));
        drop(b);
        assert_eq!(read_all(&data.join("audit")).0.len(), 101);
    }

    #[test]
    fn rotation_by_size_keeps_keep_files() {
        let tmp = tempfile::tempdir().unwrap();
        let c = AuditConfig {
            max_file_bytes: 2_000,
            keep_files: 3,
            ..cfg(tmp.path())
        };
        let a = Auditor::start(&c, tmp.path()).unwrap();
        for i in 0..400u64 {
            a.log(AuditEvent::change("modify", Outcome::Success).with_usn(i));
            if i % 50 == 0 {
                a.flush();
            }
        }
        a.flush();
        let set = LogSet::open(tmp.path()).unwrap();
        let rotated = set.rotated_files().unwrap();
        assert_eq!(rotated.len(), 3, "{rotated:?}");
        for r in &rotated {
            let name = r.path.file_name().unwrap().to_str().unwrap();
            assert!(
                name.starts_with("audit-") && name.ends_with(".log"),
                "{name}"
            );
            let len = std::fs::metadata(&r.path).unwrap().len();
            assert!((2_000..2_200).contains(&len), "{name}: {len}");
        }
        // What is left is the newest events, in order, without gaps.
        let (events, _) = read_all(tmp.path());
        let usns: Vec<u64> = events.iter().map(|e| e.usn.unwrap()).collect();
        assert_eq!(*usns.last().unwrap(), 399);
        assert!(usns.windows(2).all(|w| w[1] == w[0] + 1), "{usns:?}");
        assert!(usns.len() < 400);
    }

    #[test]
    fn rotation_by_age() {
        let tmp = tempfile::tempdir().unwrap();
        // A back-dated event does not make a fresh file old.
        let a = Auditor::start(&cfg(tmp.path()), tmp.path()).unwrap();
        let old = Timestamp::now().minus(Duration::from_secs(48 * 3600));
        a.log(AuditEvent::logon(Outcome::Success).with_time(old));
        a.log(AuditEvent::logon(Outcome::Success));
        a.flush();
        let set = LogSet::open(tmp.path()).unwrap();
        assert_eq!(set.rotated_files().unwrap().len(), 0);
        drop(a);
        // A file begun two days ago (by a previous run) is rotated at the next event.
        let path = tmp.path().join("audit.log");
        let mut body = AuditEvent::logon(Outcome::Success)
            .with_time(old)
            .to_json_line();
        body.push('\n');
        body.push_str(&std::fs::read_to_string(&path).unwrap());
        std::fs::write(&path, body).unwrap();
        let a = Auditor::start(&cfg(tmp.path()), tmp.path()).unwrap();
        a.log(AuditEvent::logon(Outcome::Failure));
        a.flush();
        assert_eq!(set.rotated_files().unwrap().len(), 1);
        assert_eq!(read_all(tmp.path()).0.len(), 4);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[test]
    fn drops_are_counted_and_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let c = AuditConfig {
            buffer_events: 1,
            ..cfg(tmp.path())
        };
        let a = Auditor::start(&c, tmp.path()).unwrap();
        let sent = 200_000u64;
        for i in 0..sent {
            a.log(
                AuditEvent::change("modify", Outcome::Success)
                    .with_usn(i)
                    .with_attributes(["description", "telephoneNumber", "mail"]),
            );
        }
        a.flush();
        let s = a.stats();
        assert!(s.dropped > 0, "{s:?}");
        assert_eq!(s.written + s.dropped, sent);
        let (events, _) = read_all(tmp.path());
        let reports: Vec<&AuditEvent> = events
            .iter()
            .filter(|e| e.category == Category::Audit && e.action == "dropped")
            .collect();
        assert!(!reports.is_empty());
        let reported: u64 = reports.iter().map(|e| e.dropped.unwrap()).sum();
        assert_eq!(reported, s.dropped);
        assert_eq!(events.len() as u64 - reports.len() as u64, s.written);
    }

    #[test]
    fn selection_applies_before_the_queue() {
        let tmp = tempfile::tempdir().unwrap();
        let c = AuditConfig {
            events: vec!["authentication".into(), "!4625".into()],
            ..cfg(tmp.path())
        };
        let a = Auditor::start(&c, tmp.path()).unwrap();
        a.log(AuditEvent::logon(Outcome::Success).with_user("yes"));
        a.log(AuditEvent::logon(Outcome::Failure).with_user("no"));
        a.log(AuditEvent::change("add", Outcome::Success).with_user("no"));
        a.flush();
        let (events, _) = read_all(tmp.path());
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].user.as_deref(), Some("yes"));
        assert_eq!(a.stats().written, 1);
    }

    #[test]
    fn disabled_and_bad_configurations() {
        let tmp = tempfile::tempdir().unwrap();
        let off = Auditor::start(
            &AuditConfig {
                enabled: false,
                ..cfg(tmp.path())
            },
            tmp.path(),
        )
        .unwrap();
        assert!(!off.is_enabled());
        off.log(AuditEvent::logon(Outcome::Success));
        off.flush();
        assert_eq!(off.stats(), AuditStats::default());
        assert!(!tmp.path().join("audit.log").exists());
        assert!(!Auditor::disabled().is_enabled());

        let bad = AuditConfig {
            events: vec!["logons".into()],
            ..cfg(tmp.path())
        };
        assert!(matches!(
            Auditor::start(&bad, tmp.path()),
            Err(AuditError::Config(_))
        ));
        // A log that cannot be created is an error at start.
        let blocker = tmp.path().join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let unwritable = AuditConfig {
            path: Some(blocker.join("audit.log")),
            ..AuditConfig::default()
        };
        assert!(matches!(
            Auditor::start(&unwritable, tmp.path()),
            Err(AuditError::Io { .. })
        ));
    }

    #[test]
    fn shutdown_then_log_counts_a_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Auditor::start(&cfg(tmp.path()), tmp.path()).unwrap();
        a.log(AuditEvent::logon(Outcome::Success));
        a.shutdown();
        a.log(AuditEvent::logon(Outcome::Success));
        a.flush(); // returns at once: the writer is gone
        assert_eq!(a.stats().written, 1);
        assert_eq!(a.stats().dropped, 1);
        a.shutdown();
    }

    #[test]
    fn appends_to_an_existing_file() {
        let tmp = tempfile::tempdir().unwrap();
        for _ in 0..2 {
            let a = Auditor::start(&cfg(tmp.path()), tmp.path()).unwrap();
            a.log(AuditEvent::logon(Outcome::Success));
        }
        assert_eq!(read_all(tmp.path()).0.len(), 2);
    }

    #[test]
    fn journal_is_off_by_default_and_gets_every_event_when_on() {
        use std::os::unix::net::UnixDatagram;
        let tmp = tempfile::tempdir().unwrap();
        let sock_path = tmp.path().join("journal.sock");
        let sock = UnixDatagram::bind(&sock_path).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut buf = vec![0u8; 65536];

        assert!(!AuditConfig::default().journal);
        let off = Auditor::start(
            &AuditConfig {
                journal_socket: Some(sock_path.clone()),
                ..cfg(tmp.path())
            },
            tmp.path(),
        )
        .unwrap();
        off.log(AuditEvent::logon(Outcome::Success));
        off.flush();
        assert!(
            sock.recv(&mut buf).is_err(),
            "journal got an entry while off"
        );

        let on = Auditor::start(
            &AuditConfig {
                journal: true,
                file: false,
                journal_socket: Some(sock_path.clone()),
                ..cfg(tmp.path())
            },
            tmp.path(),
        )
        .unwrap();
        on.log(AuditEvent::logon(Outcome::Failure).with_user("alice"));
        on.flush();
        let n = sock.recv(&mut buf).unwrap();
        let fields = crate::journal::decode(&buf[..n]).unwrap();
        let get = |k: &str| {
            fields
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        assert_eq!(get("PRIORITY").as_deref(), Some("4"));
        assert_eq!(get("KAURI_EVENT_ID").as_deref(), Some("4625"));
        assert_eq!(get("SYSLOG_IDENTIFIER").as_deref(), Some("kauri"));
        let msg: AuditEvent = serde_json::from_str(&get("MESSAGE").unwrap()).unwrap();
        assert_eq!(msg.user.as_deref(), Some("alice"));
        assert_eq!(on.stats().written, 1);

        // A missing journal is a warning, not an error.
        let missing = Auditor::start(
            &AuditConfig {
                journal: true,
                journal_socket: Some(tmp.path().join("absent.sock")),
                ..cfg(tmp.path())
            },
            tmp.path(),
        )
        .unwrap();
        missing.log(AuditEvent::logon(Outcome::Success));
        missing.flush();
        assert_eq!(missing.stats().written, 1);
    }
}
