//! Operating-system randomness for confounders and random keys, drawn in
//! batches.
//!
//! A `getrandom` system call costs about as much as encrypting a small
//! Kerberos message, and a KDC reply needs two confounders and a session
//! key. So each thread keeps a small buffer filled from the OS CSPRNG (not a
//! userspace generator: every byte handed out came from `getrandom`) and
//! hands it out in pieces; bytes are wiped from the buffer as they are used.
//!
//! The buffer is per thread, so threads never share bytes. A process that
//! `fork`s without `exec` must not use this module in both parent and child
//! with a partly used buffer, as the child would inherit it.

use core::cell::RefCell;

use zeroize::Zeroize;

use super::CryptoError;

/// Bytes fetched per system call.
const POOL_LEN: usize = 256;
/// Requests larger than this bypass the buffer.
const MAX_POOLED: usize = 64;

/// Unused random bytes are `buf[pos..]`; everything before `pos` is zero.
struct Pool {
    /// Random bytes from the OS, zeroed once handed out.
    buf: [u8; POOL_LEN],
    /// Index of the first unused byte.
    pos: usize,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.buf.zeroize();
    }
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool {
            buf: [0u8; POOL_LEN],
            pos: POOL_LEN,
        })
    };
}

/// One `getrandom` call.
fn os_fill(out: &mut [u8]) -> Result<(), CryptoError> {
    getrandom::fill(out).map_err(|_| CryptoError::NoRandomness)
}

/// Fills `out` with bytes from the operating system's CSPRNG.
pub(super) fn fill(out: &mut [u8]) -> Result<(), CryptoError> {
    if out.len() > MAX_POOLED {
        return os_fill(out);
    }
    let pooled = POOL.try_with(|cell| {
        // The borrow cannot be held elsewhere (no callbacks run while it is
        // taken), but fall back to the OS rather than panic if it were.
        let Ok(mut pool) = cell.try_borrow_mut() else {
            return os_fill(out);
        };
        let end = match pool.pos.checked_add(out.len()) {
            Some(end) if end <= POOL_LEN => end,
            _ => {
                if let Err(e) = os_fill(&mut pool.buf) {
                    pool.buf.zeroize();
                    pool.pos = POOL_LEN;
                    return Err(e);
                }
                pool.pos = 0;
                out.len()
            }
        };
        let start = pool.pos;
        let src = pool
            .buf
            .get_mut(start..end)
            .ok_or(CryptoError::Internal("random pool"))?;
        out.copy_from_slice(src);
        src.zeroize();
        pool.pos = end;
        Ok(())
    });
    // The thread-local is gone only during thread teardown.
    pooled.unwrap_or_else(|_| os_fill(out))
}
