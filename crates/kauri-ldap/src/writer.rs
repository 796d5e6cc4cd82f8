//! The single writer: every change goes through one thread that groups the requests that
//! arrive together into one durable transaction (group commit). Each request runs in its
//! own nested transaction, so one that fails rolls back alone, and each client hears the
//! outcome only after the commit that holds its change is on disk.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_domain::directory::{DirError, Directory, Origin, Request};
use kauri_kv::lmdb::LmdbBackend;
use tokio::sync::oneshot;

/// Work of another service (DNS updates, the scavenger) done in the writer's transaction,
/// all of it or none: it runs in a nested transaction that is rolled back when it fails.
pub struct Work(pub Box<WorkFn>);

/// The function inside a [`Work`].
pub type WorkFn = dyn FnOnce(&Directory<LmdbBackend>, &mut kauri_db::DbWrite<'_, LmdbBackend>) -> Result<(), DirError>
    + Send;

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Work")
    }
}

/// Work the writer does besides client requests.
#[derive(Debug)]
pub enum Task {
    /// A change, validated by the directory service, and where it came from (audited
    /// when the origin names a service).
    Change(Box<Request>, Origin),
    /// Purge tombstones older than the tombstone lifetime.
    CollectTombstones,
    /// Publish committed schema changes (the root DSE's `schemaUpdateNow`).
    SchemaUpdateNow,
    /// Count a bad password against an account (lockout), on the state the writer sees.
    BadPassword(kauri_db::Dn),
    /// A password set (`change` false) or changed (`change` true) through Kerberos'
    /// password-change service, under the account's password policy.
    KerberosPassword {
        /// The account.
        dn: kauri_db::Dn,
        /// The new password.
        password: String,
        /// Whether the account changes its own password (minimum age and history apply).
        change: bool,
    },
    /// Another service's work.
    Run(Work),
}

struct Job {
    task: Task,
    reply: oneshot::Sender<Result<(), DirError>>,
    /// Nobody waits for it and it may wait for company (see [`Writer::enqueue_lazy`]).
    lazy: bool,
}

/// How long a lazy change may wait for other changes to share its commit.
pub const LAZY_DELAY: std::time::Duration = std::time::Duration::from_millis(50);

/// How many changes end the wait of lazy ones: a commit rewrites every page its changes
/// touch, and the old copies stay until later commits reuse them, so a larger batch of
/// changes to scattered records would only grow the file.
pub const LAZY_BATCH: usize = 16;

/// Counters of the writer, for metrics.
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Requests committed.
    pub requests: AtomicU64,
    /// Commits by batch size: 1, 2, ≤4, ≤8, … ≤256, more.
    pub batch_buckets: [AtomicU64; 10],
}

/// Upper bounds of the commit batch size buckets (a last bucket catches the rest).
pub const BATCH_BUCKETS: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// The handle request handlers send changes to.
#[derive(Clone)]
pub struct Writer {
    tx: std::sync::mpsc::SyncSender<Job>,
    stats: Arc<WriterStats>,
    thread: Arc<parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>>,
}

/// Waits for the writer thread to finish what it was given: it ends once every [`Writer`]
/// handle is gone, after committing the batch in hand.
pub struct WriterDone(Arc<parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>>);

impl WriterDone {
    /// Waits up to `limit` for the writer thread to end (a search still running on a
    /// blocking thread keeps a handle alive until it finishes); true when it has.
    pub fn wait(self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let Some(t) = self.0.lock().take() else {
            return true;
        };
        while !t.is_finished() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = t.join();
        true
    }
}

impl Writer {
    /// Starts the writer thread.
    pub fn start(dir: Arc<Directory<LmdbBackend>>, max_batch: usize) -> std::io::Result<Writer> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(4096);
        let stats = Arc::new(WriterStats::default());
        let s = stats.clone();
        let thread = std::thread::Builder::new()
            .name("kauri-writer".into())
            .spawn(move || run(&dir, &rx, max_batch.max(1), &s))?;
        Ok(Writer {
            tx,
            stats,
            thread: Arc::new(parking_lot::Mutex::new(Some(thread))),
        })
    }

    /// What to wait on for the writer's last commit, once the server is dropped.
    pub fn done(&self) -> WriterDone {
        WriterDone(self.thread.clone())
    }

    /// Submits a change and waits until it is committed (or refused).
    pub async fn submit(&self, req: Request) -> Result<(), DirError> {
        self.run_task(Task::Change(Box::new(req), Origin::default()))
            .await
    }

    /// Queues a change at once and returns where its outcome will arrive: a connection
    /// calls this in the order its requests came, so the changes a client pipelines
    /// reach the writer in that order (an add, then a group naming it). When the queue is
    /// full the caller waits here, which slows that connection alone.
    pub fn enqueue(
        &self,
        req: Request,
    ) -> Result<oneshot::Receiver<Result<(), DirError>>, DirError> {
        self.queue(req, Origin::default(), false)
    }

    /// [`Writer::enqueue`] for a client's request, audited as coming from `origin`.
    pub fn enqueue_from(
        &self,
        req: Request,
        origin: Origin,
    ) -> Result<oneshot::Receiver<Result<(), DirError>>, DirError> {
        self.queue(req, origin, false)
    }

    /// Queues bookkeeping nobody reads back at once (a bind's `lastLogonTimestamp`, which
    /// AD itself keeps only to within days): it may wait up to [`LAZY_DELAY`] for other
    /// changes, so a morning of first logons costs a few commits a second instead of one
    /// per bind. Any waited-for change arriving meanwhile commits at once and takes it along.
    pub fn enqueue_lazy(&self, req: Request) -> Result<(), DirError> {
        self.queue(req, Origin::default(), true).map(drop)
    }

    fn queue(
        &self,
        req: Request,
        origin: Origin,
        lazy: bool,
    ) -> Result<oneshot::Receiver<Result<(), DirError>>, DirError> {
        let unavailable = || {
            DirError::Db(kauri_db::DbError::Unavailable(
                "the writer has stopped".into(),
            ))
        };
        let (reply, rx) = oneshot::channel();
        let job = Job {
            task: Task::Change(Box::new(req), origin),
            reply,
            lazy,
        };
        match self.tx.try_send(job) {
            Ok(()) => Ok(rx),
            Err(std::sync::mpsc::TrySendError::Full(job)) => {
                let send = || self.tx.send(job).is_ok();
                let multi_thread = tokio::runtime::Handle::try_current().is_ok_and(|h| {
                    h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
                });
                let sent = if multi_thread {
                    tokio::task::block_in_place(send)
                } else {
                    send()
                };
                if sent {
                    Ok(rx)
                } else {
                    Err(unavailable())
                }
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => Err(unavailable()),
        }
    }

    /// Hands the writer a task and waits for its outcome.
    pub async fn run_task(&self, task: Task) -> Result<(), DirError> {
        let unavailable = |m: String| DirError::Db(kauri_db::DbError::Unavailable(m));
        let (reply, rx) = oneshot::channel();
        let tx = self.tx.clone();
        // The queue is bounded; waiting for room happens off the async threads.
        let queued = tokio::task::spawn_blocking(move || {
            tx.send(Job {
                task,
                reply,
                lazy: false,
            })
            .is_ok()
        })
        .await
        .map_err(|e| unavailable(format!("writer unavailable: {e}")))?;
        if !queued {
            return Err(unavailable("the writer has stopped".into()));
        }
        rx.await
            .map_err(|_| unavailable("the writer dropped the request".into()))?
    }

    /// The writer's counters.
    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }
}

fn apply(
    dir: &Directory<LmdbBackend>,
    w: &mut kauri_db::DbWrite<'_, LmdbBackend>,
    task: Task,
) -> Result<(), DirError> {
    match task {
        Task::Change(req, origin) => dir.apply_from(w, &req, &origin),
        Task::CollectTombstones => {
            let n = dir.collect_tombstones(w)?;
            if n > 0 {
                tracing::info!(purged = n, "tombstones past their lifetime purged");
            }
            Ok(())
        }
        Task::SchemaUpdateNow => Ok(()),
        Task::BadPassword(dn) => dir.record_bad_password(w, &dn),
        Task::KerberosPassword {
            dn,
            password,
            change,
        } => {
            let result = dir.kerberos_password(w, &dn, &password, change);
            dir.audit_kerberos_password(w, &dn, change, &result);
            result
        }
        Task::Run(Work(work)) => {
            w.begin_nested()?;
            match work(dir, w) {
                Ok(()) => Ok(w.commit_nested()?),
                Err(e) => {
                    w.abort_nested()?;
                    Err(e)
                }
            }
        }
    }
}

fn run(
    dir: &Directory<LmdbBackend>,
    rx: &std::sync::mpsc::Receiver<Job>,
    max_batch: usize,
    stats: &WriterStats,
) {
    while let Ok(first) = rx.recv() {
        let lazy_until = first.lazy.then(|| std::time::Instant::now() + LAZY_DELAY);
        let mut jobs = vec![first];
        gather(rx, &mut jobs, max_batch, lazy_until);
        let unavailable = |m: String| DirError::Db(kauri_db::DbError::Unavailable(m));
        let mut w = match dir.db().write() {
            Ok(w) => w,
            Err(e) => {
                let msg = e.to_string();
                for j in jobs {
                    let _ = j.reply.send(Err(unavailable(msg.clone())));
                }
                continue;
            }
        };
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut replies = Vec::with_capacity(jobs.len());
        for j in jobs {
            // Each operation runs in its own nested transaction inside `DbWrite`.
            outcomes.push(apply(dir, &mut w, j.task));
            replies.push(j.reply);
        }
        let n = replies.len() as u64;
        match w.commit() {
            Ok(_) => {
                if let Err(e) = dir.after_commit() {
                    tracing::error!(error = %e, "publishing the extended schema failed");
                }
                stats.commits.fetch_add(1, Ordering::Relaxed);
                stats.requests.fetch_add(n, Ordering::Relaxed);
                let i = BATCH_BUCKETS
                    .iter()
                    .position(|b| n <= *b)
                    .unwrap_or(BATCH_BUCKETS.len());
                if let Some(b) = stats.batch_buckets.get(i) {
                    b.fetch_add(1, Ordering::Relaxed);
                }
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    // A change nobody waits for (a bind's bookkeeping) is logged if refused.
                    if let Err(Err(e)) = reply.send(outcome) {
                        tracing::warn!(error = %e, "a change written behind its answer was refused");
                    }
                }
            }
            Err(e) => {
                dir.after_abort();
                tracing::error!(error = %e, "commit failed; {n} requests refused");
                let msg = e.to_string();
                for reply in replies {
                    let _ = reply.send(Err(unavailable(format!("commit failed: {msg}"))));
                }
            }
        }
    }
}

/// Takes what else is queued into the batch, up to `max_batch`. While every job in hand is
/// lazy, waits until `lazy_until` for more; a waited-for job ends the wait.
fn gather(
    rx: &std::sync::mpsc::Receiver<Job>,
    jobs: &mut Vec<Job>,
    max_batch: usize,
    lazy_until: Option<std::time::Instant>,
) {
    let mut waiting = lazy_until;
    while jobs.len() < max_batch {
        let next = match waiting {
            Some(until) => {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    rx.try_recv().ok()
                } else {
                    rx.recv_timeout(left).ok()
                }
            }
            None => rx.try_recv().ok(),
        };
        let Some(j) = next else { break };
        if !j.lazy {
            waiting = None;
        }
        jobs.push(j);
        if jobs.len() >= LAZY_BATCH {
            waiting = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn job(lazy: bool) -> Job {
        let (reply, _) = oneshot::channel();
        Job {
            task: Task::SchemaUpdateNow,
            reply,
            lazy,
        }
    }

    #[test]
    fn a_lazy_batch_waits_for_company_until_its_deadline() {
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        let until = Instant::now() + Duration::from_millis(30);
        let sender = std::thread::spawn(move || {
            tx.send(job(true)).unwrap();
            std::thread::sleep(Duration::from_millis(5));
            tx.send(job(true)).unwrap();
            tx
        });
        let mut jobs = vec![job(true)];
        gather(&rx, &mut jobs, 100, Some(until));
        assert!(Instant::now() >= until);
        assert_eq!(jobs.len(), 3);
        drop(sender.join());
    }

    #[test]
    fn a_waited_for_change_ends_the_wait() {
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            tx.send(job(false)).unwrap();
            tx
        });
        let start = Instant::now();
        let mut jobs = vec![job(true)];
        // A deadline far away: only the waited-for change can end the wait in time.
        gather(&rx, &mut jobs, 100, Some(start + Duration::from_secs(60)));
        assert!(start.elapsed() < Duration::from_secs(30));
        assert_eq!(jobs.len(), 2);
        assert!(!jobs[1].lazy);
        drop(sender.join());
    }

    #[test]
    fn a_full_batch_or_a_closed_queue_ends_the_wait() {
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        for _ in 0..5 {
            tx.send(job(true)).unwrap();
        }
        let far = Instant::now() + Duration::from_secs(60);
        let mut jobs = vec![job(true)];
        gather(&rx, &mut jobs, 4, Some(far));
        assert_eq!(jobs.len(), 4);
        drop(tx);
        let mut jobs = vec![job(true)];
        gather(&rx, &mut jobs, 100, Some(far));
        assert_eq!(jobs.len(), 3, "the two left, then the closed queue");
    }

    #[test]
    fn without_lazy_jobs_only_what_is_queued_is_taken() {
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        tx.send(job(true)).unwrap();
        let mut jobs = vec![job(false)];
        gather(&rx, &mut jobs, 100, None);
        assert_eq!(jobs.len(), 2);
        drop(tx);
    }
}
