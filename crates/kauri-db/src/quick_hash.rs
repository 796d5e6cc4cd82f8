//! A fast, non-cryptographic hash for maps over keys and values the database or a bulk
//! load meets by the million (index key prefixes, names, normalized values), and for the
//! schema's own names looked up for every attribute of every entry. Not for maps a client
//! fills with keys it chooses to collide: use the standard hasher there.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

/// Eight bytes at a time, rotate, xor and multiply; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct QuickHash(u64);

impl Default for QuickHash {
    fn default() -> QuickHash {
        QuickHash(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for QuickHash {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(MULTIPLIER);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(MULTIPLIER);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// A map hashed with [`QuickHash`].
pub type QuickMap<K, V> = HashMap<K, V, BuildHasherDefault<QuickHash>>;

/// A set hashed with [`QuickHash`].
pub type QuickSet<K> = HashSet<K, BuildHasherDefault<QuickHash>>;

/// The [`QuickHash`] of one byte string.
pub fn quick_hash(bytes: &[u8]) -> u64 {
    let mut h = QuickHash::default();
    h.write(bytes);
    h.finish()
}
