//! An advisory lock file beside the LMDB files (`kauri.lock`). Every process that opens the
//! store holds it shared; compaction, which replaces `data.mdb` with a rewritten copy, holds
//! it exclusively. A process that kept the old file open would go on writing into a file
//! nobody reads any more, so compaction runs only when no other process has the store open.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// How the lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// By every process that uses the store.
    Shared,
    /// By the one process that replaces the store's file.
    Exclusive,
}

/// A held lock; released when dropped (the file is closed).
#[derive(Debug)]
pub(crate) struct StoreLock {
    _file: File,
}

/// Takes the lock without waiting; `None` when another process holds it in a conflicting
/// mode.
pub(crate) fn try_lock(dir: &Path, mode: Mode) -> std::io::Result<Option<StoreLock>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("kauri.lock"))?;
    if flock(&file, mode)? {
        Ok(Some(StoreLock { _file: file }))
    } else {
        Ok(None)
    }
}

#[cfg(unix)]
fn flock(file: &File, mode: Mode) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let op = match mode {
        Mode::Shared => libc::LOCK_SH,
        Mode::Exclusive => libc::LOCK_EX,
    } | libc::LOCK_NB;
    loop {
        // SAFETY: the descriptor belongs to `file`, which outlives the call.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

#[cfg(not(unix))]
fn flock(_file: &File, _mode: Mode) -> std::io::Result<bool> {
    Ok(true)
}
