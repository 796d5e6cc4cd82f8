//! The single writer: every change goes through one thread that groups the requests that
//! arrive together into one durable transaction (group commit). Each request runs in its
//! own nested transaction, so one that fails rolls back alone, and each client hears the
//! outcome only after the commit that holds its change is on disk.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_db::{Db, DbError, Dn, Entry, Modification, Rdn};
use kauri_kv::lmdb::LmdbBackend;
use tokio::sync::oneshot;

/// One change a client asked for.
#[derive(Debug)]
pub enum WriteOp {
    /// Add an entry.
    Add(Entry),
    /// Modify an entry (permissive: the permissive-modify control).
    Modify {
        /// The entry.
        dn: Dn,
        /// The changes, all or nothing.
        mods: Vec<Modification>,
        /// Adding present / deleting absent values is not an error.
        permissive: bool,
    },
    /// Delete an entry (subtree: the tree-delete control).
    Delete {
        /// The entry.
        dn: Dn,
        /// Delete everything below it too.
        subtree: bool,
    },
    /// Rename and/or move an entry.
    Rename {
        /// The entry.
        dn: Dn,
        /// Its new RDN.
        new_rdn: Rdn,
        /// Remove the old RDN values.
        delete_old_rdn: bool,
        /// The new parent, for a move.
        new_parent: Option<Dn>,
    },
}

struct Job {
    op: WriteOp,
    reply: oneshot::Sender<Result<(), DbError>>,
}

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
}

impl Writer {
    /// Starts the writer thread.
    pub fn start(db: Arc<Db<LmdbBackend>>, max_batch: usize) -> std::io::Result<Writer> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(4096);
        let stats = Arc::new(WriterStats::default());
        let s = stats.clone();
        std::thread::Builder::new()
            .name("kauri-writer".into())
            .spawn(move || run(&db, &rx, max_batch.max(1), &s))?;
        Ok(Writer { tx, stats })
    }

    /// Submits a change and waits until it is committed (or refused).
    pub async fn submit(&self, op: WriteOp) -> Result<(), DbError> {
        let (reply, rx) = oneshot::channel();
        let tx = self.tx.clone();
        // The queue is bounded; waiting for room happens off the async threads.
        let queued = tokio::task::spawn_blocking(move || tx.send(Job { op, reply }).is_ok())
            .await
            .map_err(|e| DbError::Unavailable(format!("writer unavailable: {e}")))?;
        if !queued {
            return Err(DbError::Unavailable("the writer has stopped".into()));
        }
        rx.await
            .map_err(|_| DbError::Unavailable("the writer dropped the request".into()))?
    }

    /// The writer's counters.
    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }
}

fn apply(w: &mut kauri_db::DbWrite<'_, LmdbBackend>, op: WriteOp) -> Result<(), DbError> {
    match op {
        WriteOp::Add(e) => w.add(e).map(|_| ()),
        WriteOp::Modify {
            dn,
            mods,
            permissive,
        } => {
            if permissive {
                w.modify_permissive(&dn, &mods)
            } else {
                w.modify(&dn, &mods)
            }
        }
        WriteOp::Delete { dn, subtree } => w.delete(&dn, subtree).map(|_| ()),
        WriteOp::Rename {
            dn,
            new_rdn,
            delete_old_rdn,
            new_parent,
        } => w.rename(&dn, &new_rdn, delete_old_rdn, new_parent.as_ref()),
    }
}

fn run(
    db: &Db<LmdbBackend>,
    rx: &std::sync::mpsc::Receiver<Job>,
    max_batch: usize,
    stats: &WriterStats,
) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        while jobs.len() < max_batch {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let mut w = match db.write() {
            Ok(w) => w,
            Err(e) => {
                let msg = e.to_string();
                for j in jobs {
                    let _ = j.reply.send(Err(DbError::Unavailable(msg.clone())));
                }
                continue;
            }
        };
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut replies = Vec::with_capacity(jobs.len());
        for j in jobs {
            // Each operation runs in its own nested transaction inside `DbWrite`.
            outcomes.push(apply(&mut w, j.op));
            replies.push(j.reply);
        }
        let n = replies.len() as u64;
        match w.commit() {
            Ok(_) => {
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
                    let _ = reply.send(outcome);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "commit failed; {n} requests refused");
                let msg = e.to_string();
                for reply in replies {
                    let _ = reply.send(Err(DbError::Unavailable(format!("commit failed: {msg}"))));
                }
            }
        }
    }
}
