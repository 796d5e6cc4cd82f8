//! The replay cache (RFC 4120 §3.2.3, §3.3.3.1): an authenticator is accepted once. Each
//! is remembered by a digest of its encrypted form for as long as the clock skew would
//! let it pass, in shards so concurrent requests rarely meet on one lock.

use std::collections::HashMap;

use parking_lot::Mutex;

/// Shards of the cache.
const SHARDS: usize = 16;

/// Entries per shard before expired ones are first swept out.
const SWEEP_AT: usize = 4096;

/// See the module documentation.
pub struct ReplayCache {
    shards: Vec<Mutex<Shard>>,
}

/// One shard: digests with their expiry, and the size at which it is next swept — twice
/// what a sweep left, so the cost of sweeping stays proportional to the insertions.
struct Shard {
    seen: HashMap<u128, i64>,
    sweep_at: usize,
}

impl Default for ReplayCache {
    fn default() -> Self {
        ReplayCache {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        seen: HashMap::new(),
                        sweep_at: SWEEP_AT,
                    })
                })
                .collect(),
        }
    }
}

impl ReplayCache {
    /// Records an authenticator (its digest) accepted until `last` (Unix seconds: the
    /// authenticator's time plus the allowed skew, the last second it passes the skew
    /// check); false if it was seen already and is still acceptable at `now`.
    pub fn insert(&self, digest: u128, last: i64, now: i64) -> bool {
        let shard = &self.shards[(digest as usize) % SHARDS];
        let mut s = shard.lock();
        if s.seen.len() >= s.sweep_at {
            s.seen.retain(|_, e| *e >= now);
            s.sweep_at = (s.seen.len() * 2).max(SWEEP_AT);
        }
        match s.seen.get(&digest) {
            Some(e) if *e >= now => false,
            _ => {
                s.seen.insert(digest, last);
                true
            }
        }
    }
}

/// A 128-bit digest of an authenticator's ciphertext (first half of its SHA-256), the key
/// under which it is remembered.
pub fn digest(ciphertext: &[u8]) -> u128 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(ciphertext);
    let mut first = [0u8; 16];
    first.copy_from_slice(&d[..16]);
    u128::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authenticator_passes_once_until_it_expires() {
        let c = ReplayCache::default();
        let d = digest(b"authenticator");
        assert!(c.insert(d, 100, 10));
        assert!(!c.insert(d, 100, 50));
        // Its last acceptable second still knows it.
        assert!(!c.insert(d, 100, 100));
        // Expired: the skew would refuse it anyway, so it may be forgotten.
        assert!(c.insert(d, 300, 101));
        assert!(c.insert(digest(b"another"), 100, 10));
    }

    #[test]
    fn sweeping_keeps_live_entries() {
        let c = ReplayCache::default();
        for i in 0..(SWEEP_AT * SHARDS * 2) as u128 {
            c.insert(i, if i % 2 == 0 { 5 } else { 1_000 }, 10);
        }
        // Odd digests are still live.
        assert!(!c.insert(1, 1_000, 10));
        let total: usize = c.shards.iter().map(|s| s.lock().seen.len()).sum();
        assert!(total < SWEEP_AT * SHARDS * 2);
    }
}
