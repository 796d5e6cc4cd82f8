//! What a running server says about itself beyond its counters, for the metrics endpoint
//! and `kauri status`: when it started, what it listens on, how many LDAP requests it
//! finished in the last minute, and when its data folder was last backed up.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The file in the data folder that holds the time of the last completed backup.
///
/// A file rather than a key in the database: the backups are read snapshots, and the
/// offline one runs in another process on a database the server may be writing, so a
/// write transaction of its own just to say "done" would be the only write either makes;
/// a key would also travel inside the next backup and claim the restored DC was backed
/// up. The file is replaced atomically (written beside, then renamed), so a reader sees
/// the old time or the new one.
pub const LAST_BACKUP_FILE: &str = "last-backup";

/// One bound listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// What it serves: `ldap`, `ldaps`, `cldap`, `gc`, `gc-tls`, `ldapi`, `kerberos`,
    /// `kpasswd`, `dns` or `metrics`.
    pub service: &'static str,
    /// Where: `host:port`, or the socket's path.
    pub address: String,
}

/// The server's facts that are not counters.
#[derive(Debug)]
pub struct Status {
    started: u64,
    data: PathBuf,
    listeners: parking_lot::Mutex<Vec<Listener>>,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Status {
    /// A server starting now on the data folder `data`.
    pub fn new(data: PathBuf) -> Status {
        Status {
            started: unix_now(),
            data,
            listeners: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// When the server started, in Unix seconds.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Records a listener once it is bound (each service calls this as it binds).
    pub fn listening(&self, service: &'static str, address: impl std::fmt::Display) {
        self.listeners.lock().push(Listener {
            service,
            address: address.to_string(),
        });
    }

    /// The listeners bound so far, in the order they were bound.
    pub fn listeners(&self) -> Vec<Listener> {
        self.listeners.lock().clone()
    }

    /// When the data folder was last backed up (Unix seconds), if it ever was.
    pub fn last_backup(&self) -> Option<u64> {
        last_backup(&self.data)
    }

    /// Records that a backup of the data folder completed now; a folder that cannot be
    /// written is logged, the backup stands.
    pub fn backed_up(&self) {
        if let Err(e) = record_backup(&self.data, SystemTime::now()) {
            tracing::warn!(error = %e, "the time of the backup was not recorded");
        }
    }
}

/// When the data folder `data` was last backed up (Unix seconds), if it ever was.
pub fn last_backup(data: &Path) -> Option<u64> {
    std::fs::read_to_string(data.join(LAST_BACKUP_FILE))
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

/// Records in the data folder `data` that a backup of it completed at `at`.
pub fn record_backup(data: &Path, at: SystemTime) -> std::io::Result<()> {
    use std::io::Write;
    let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut tmp = tempfile::NamedTempFile::new_in(data)?;
    writeln!(tmp, "{secs}")?;
    tmp.as_file().sync_all()?;
    tmp.persist(data.join(LAST_BACKUP_FILE))
        .map_err(|e| e.error)?;
    Ok(())
}

/// Slots of the ring: more than the 60 seconds summed, so the slot of the current second
/// never holds one of the 60 before it.
const SLOTS: usize = 64;
/// Seconds summed by [`PerSecond::last_minute`].
const WINDOW: u32 = 60;

/// Events per second over the last minute, counted without a lock: a ring of slots, each
/// one atomic word holding a second (high half, counted from the ring's creation, 0 for
/// never) and the events in it (low half).
#[derive(Debug)]
pub struct PerSecond {
    base: Instant,
    slots: [AtomicU64; SLOTS],
}

impl Default for PerSecond {
    fn default() -> Self {
        PerSecond {
            base: Instant::now(),
            slots: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl PerSecond {
    /// The current second, counted from 1 at the ring's creation.
    fn second(&self) -> u32 {
        u32::try_from(self.base.elapsed().as_secs().saturating_add(1)).unwrap_or(u32::MAX)
    }

    /// Counts one event now.
    pub fn record(&self) {
        self.record_at(self.second());
    }

    /// Events in the current second and the 59 before it.
    pub fn last_minute(&self) -> u64 {
        self.sum_at(self.second())
    }

    /// Counts one event in second `sec`.
    fn record_at(&self, sec: u32) {
        let Some(slot) = self.slots.get(sec as usize % SLOTS) else {
            return;
        };
        let mut cur = slot.load(Ordering::Relaxed);
        loop {
            if (cur >> 32) as u32 == sec {
                // The usual case: one add. (Four billion events in one second would carry
                // into the second; a caller stalled for a whole turn of the ring between
                // the load and the add counts in the wrong second. Neither happens.)
                slot.fetch_add(1, Ordering::Relaxed);
                return;
            }
            // The slot holds an older second: start it afresh, unless another thread did.
            match slot.compare_exchange_weak(
                cur,
                u64::from(sec) << 32 | 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// Events in second `sec` and the 59 before it.
    fn sum_at(&self, sec: u32) -> u64 {
        self.slots
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|v| {
                let at = (v >> 32) as u32;
                at != 0 && at <= sec && sec - at < WINDOW
            })
            .map(|v| v & 0xffff_ffff)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_sums_the_last_sixty_seconds() {
        let ring = PerSecond::default();
        assert_eq!(ring.sum_at(1), 0);
        for _ in 0..3 {
            ring.record_at(1);
        }
        ring.record_at(2);
        assert_eq!(ring.sum_at(2), 4);
        // Second 1 is in the window until second 60, gone at 61.
        assert_eq!(ring.sum_at(60), 4);
        assert_eq!(ring.sum_at(61), 1);
        assert_eq!(ring.sum_at(62), 0);
        // A slot used again 64 seconds later starts from nothing.
        ring.record_at(65);
        assert_eq!(ring.sum_at(65), 1);
        ring.record_at(66);
        ring.record_at(66);
        assert_eq!(ring.sum_at(66), 3);
        // A full minute of traffic, one event more each second.
        let busy = PerSecond::default();
        for sec in 1..=200u32 {
            for _ in 0..sec {
                busy.record_at(sec);
            }
        }
        assert_eq!(busy.sum_at(200), (141..=200).sum::<u64>());
        // Seconds after the one asked about do not count (the ring holds 137 to 200).
        assert_eq!(busy.sum_at(150), (137..=150).sum::<u64>());
    }

    #[test]
    fn the_ring_counts_every_event_of_many_threads() {
        let ring = PerSecond::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..10_000u32 {
                        ring.record_at(100 + i / 5_000);
                    }
                });
            }
        });
        assert_eq!(ring.sum_at(101), 40_000);
        ring.record();
        assert!(ring.last_minute() >= 1);
    }

    #[test]
    fn the_last_backup_is_kept_in_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let status = Status::new(dir.path().to_path_buf());
        assert_eq!(status.last_backup(), None);
        let at = UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        record_backup(dir.path(), at).unwrap();
        assert_eq!(status.last_backup(), Some(1_700_000_000));
        status.backed_up();
        assert!(status.last_backup().is_some_and(|t| t >= unix_now() - 5));
        // Nothing is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
