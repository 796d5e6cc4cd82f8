//! IP fragment reassembly: a datagram split into fragments is summarised once, in the
//! frame of the fragment that completes it. Memory is bounded: only bytes actually
//! captured are kept, a datagram may not exceed 64 KiB, and at most [`MAX_PENDING`]
//! unfinished datagrams are remembered (the oldest is forgotten first).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use super::ip::Fragment;

/// Most unfinished datagrams remembered at once.
pub const MAX_PENDING: usize = 256;
/// Largest datagram payload reassembled.
pub const MAX_DATAGRAM: usize = 65_535;

type Key = (IpAddr, IpAddr, u8, u32);

#[derive(Debug, Default)]
struct Pending {
    pieces: Vec<(usize, Vec<u8>)>,
    total: Option<usize>,
}

/// Collects fragments until their datagram is whole.
#[derive(Debug, Default)]
pub struct Defragmenter {
    pending: HashMap<Key, Pending>,
    order: VecDeque<Key>,
}

impl Defragmenter {
    /// A reassembler with nothing pending.
    pub fn new() -> Defragmenter {
        Defragmenter::default()
    }

    /// Adds one fragment's captured payload; returns the whole payload once every piece
    /// has arrived. A fragment cut short by the snap length can never complete its
    /// datagram.
    pub fn add(
        &mut self,
        src: IpAddr,
        dst: IpAddr,
        protocol: u8,
        frag: Fragment,
        data: &[u8],
        declared: usize,
    ) -> Option<Vec<u8>> {
        let end = frag.offset.checked_add(declared)?;
        if end > MAX_DATAGRAM {
            return None;
        }
        let key = (src, dst, protocol, frag.id);
        if !self.pending.contains_key(&key) {
            if self.pending.len() >= MAX_PENDING {
                if let Some(old) = self.order.pop_front() {
                    self.pending.remove(&old);
                }
            }
            self.order.push_back(key);
        }
        let entry = self.pending.entry(key).or_default();
        if !frag.more {
            entry.total = Some(end);
        }
        if data.len() == declared && !entry.pieces.iter().any(|(o, _)| *o == frag.offset) {
            entry.pieces.push((frag.offset, data.to_vec()));
        }
        let total = entry.total?;
        entry.pieces.sort_by_key(|(o, _)| *o);
        let mut covered = 0;
        for (o, d) in &entry.pieces {
            if *o > covered {
                return None;
            }
            covered = covered.max(o + d.len());
        }
        if covered < total {
            return None;
        }
        let entry = self.pending.remove(&key)?;
        self.order.retain(|k| *k != key);
        let mut whole = vec![0u8; total];
        for (o, d) in entry.pieces {
            let stop = (o + d.len()).min(total);
            if o < stop {
                whole[o..stop].copy_from_slice(&d[..stop - o]);
            }
        }
        Some(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn fragments_join_in_any_order() {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut d = Defragmenter::new();
        let f = |offset, more| Fragment {
            id: 1,
            offset,
            more,
        };
        assert_eq!(d.add(a, a, 17, f(8, false), &[3, 4], 2), None);
        assert_eq!(
            d.add(a, a, 17, f(0, true), &[1; 8], 8),
            Some(vec![1, 1, 1, 1, 1, 1, 1, 1, 3, 4])
        );
        assert_eq!(d.add(a, a, 17, f(0, true), &[1; 8], 9), None);
    }
}
