//! Collecting index keys and writing them in key order (re-index, bulk load, check).
//!
//! Every index key is a *prefix* (kind, attribute, escaped value, terminator) followed by
//! an 8-byte big-endian record id. Many keys share a prefix (`objectClass=top` is one
//! prefix with one id per record), and records are streamed in id order, so the ids of a
//! prefix arrive already sorted. The sorter therefore interns each distinct prefix once in
//! a hash table over a byte arena, chains the ids of a prefix in arrival order, sorts only
//! the distinct prefixes, and reads the keys out as "prefix, then its ids". Sorting whole
//! keys instead spends most of its time on cache misses comparing long keys that differ
//! only in their last bytes.

use kauri_kv::{Direction, TableId, WriteTxn};

use crate::error::{DbError, DbResult};
use crate::keys::{index_key_attr, KIND_VALUE, TERM_CUT};
use crate::quick_hash::quick_hash as hash;

const EMPTY: u32 = u32::MAX;
/// A free slot of the hash table.
const FREE: u64 = u64::MAX;

/// A slot of the hash table: the prefix's number, and the high half of its hash, so that a
/// probe compares prefix bytes (in the arena, mostly not in cache) only when the hashes
/// agree.
fn slot(hash: u64, prefix: usize) -> u64 {
    (hash & 0xffff_ffff_0000_0000) | prefix as u64
}
/// Keys handed to the key-value layer per batch.
pub(crate) const WRITE_CHUNK: usize = 65_536;

#[derive(Debug, Clone, Copy)]
struct Prefix {
    start: u32,
    len: u32,
    head: u128,
    first: u32,
    last: u32,
    last_id: u64,
    sorted: bool,
}

/// Collects keys that end in an 8-byte id; see the module docs. The order it produces is
/// the byte order of the keys as long as no key's prefix (all but the id) is a proper
/// prefix of another's, which holds for index keys: value prefixes end in a terminator
/// that escaped values never contain, presence prefixes all have the same length.
#[derive(Debug)]
pub struct KeySorter {
    arena: Vec<u8>,
    prefixes: Vec<Prefix>,
    slots: Vec<u64>,
    ids: Vec<u64>,
    next: Vec<u32>,
    budget: usize,
    overflow: bool,
}

fn head16(k: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = k.len().min(16);
    b[..n].copy_from_slice(&k[..n]);
    u128::from_be_bytes(b)
}

impl KeySorter {
    /// A sorter that reports itself full past about `budget` bytes.
    pub fn new(budget: usize) -> KeySorter {
        KeySorter {
            arena: Vec::new(),
            prefixes: Vec::new(),
            slots: vec![FREE; 1024],
            ids: Vec::new(),
            next: Vec::new(),
            budget: budget.min(u32::MAX as usize / 2),
            overflow: false,
        }
    }

    fn prefix_bytes(&self, p: &Prefix) -> &[u8] {
        let s = p.start as usize;
        self.arena.get(s..s + p.len as usize).unwrap_or(&[])
    }

    fn grow_slots(&mut self) {
        self.rehash(self.slots.len() * 2);
    }

    /// Rebuilds the hash table with `cap` slots (a power of two above the prefix count).
    fn rehash(&mut self, cap: usize) {
        let mut slots = vec![FREE; cap];
        let mask = cap - 1;
        for (i, p) in self.prefixes.iter().enumerate() {
            let h = hash(
                self.arena
                    .get(p.start as usize..(p.start + p.len) as usize)
                    .unwrap_or(&[]),
            );
            let mut at = h as usize & mask;
            while slots[at] != FREE {
                at = (at + 1) & mask;
            }
            slots[at] = slot(h, i);
        }
        self.slots = slots;
    }

    /// Adds a key; keys shorter than 8 bytes are ignored.
    pub fn push(&mut self, key: &[u8]) {
        let Some(split) = key.len().checked_sub(8) else {
            return;
        };
        let (prefix, id_bytes) = key.split_at(split);
        let mut id = [0u8; 8];
        id.copy_from_slice(id_bytes);
        let id = u64::from_be_bytes(id);
        if self.prefixes.len() * 2 >= self.slots.len() {
            self.grow_slots();
        }
        let mask = self.slots.len() - 1;
        let h = hash(prefix);
        let mut at = h as usize & mask;
        let found = loop {
            let s = self.slots[at];
            if s == FREE {
                break None;
            }
            if s >> 32 == h >> 32 {
                let i = (s & 0xffff_ffff) as usize;
                if self
                    .prefixes
                    .get(i)
                    .is_some_and(|p| self.prefix_bytes(p) == prefix)
                {
                    break Some(i);
                }
            }
            at = (at + 1) & mask;
        };
        let posting = self.ids.len() as u32;
        match found {
            Some(i) => {
                let Some(p) = self.prefixes.get_mut(i) else {
                    return;
                };
                if p.last_id == id {
                    return;
                }
                if id < p.last_id {
                    p.sorted = false;
                }
                let last = p.last as usize;
                p.last = posting;
                p.last_id = id;
                if let Some(n) = self.next.get_mut(last) {
                    *n = posting;
                }
            }
            None => {
                let start = self.arena.len() as u32;
                self.arena.extend_from_slice(prefix);
                self.slots[at] = slot(h, self.prefixes.len());
                self.prefixes.push(Prefix {
                    start,
                    len: prefix.len() as u32,
                    head: head16(prefix),
                    first: posting,
                    last: posting,
                    last_id: id,
                    sorted: true,
                });
            }
        }
        self.ids.push(id);
        self.next.push(EMPTY);
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether the memory budget is used up.
    pub fn is_full(&self) -> bool {
        self.used() >= self.budget
    }

    /// Bytes counted against the budget.
    fn used(&self) -> usize {
        self.arena.len() + self.ids.len() * 12 + self.prefixes.len() * 48
    }

    /// Makes room for `factor` times what it holds, within the budget: a load that knows
    /// how many entries are coming sizes the sorter once from the ones it has seen instead
    /// of growing (and rehashing its table) step by step.
    pub fn reserve_scaled(&mut self, factor: f64) {
        let used = self.used();
        if used == 0 {
            return;
        }
        let factor = factor.min(self.budget as f64 / used as f64);
        if factor.is_nan() || factor <= 1.0 {
            return;
        }
        let more = |n: usize| (n as f64 * (factor - 1.0)) as usize;
        self.arena.reserve(more(self.arena.len()));
        self.ids.reserve(more(self.ids.len()));
        self.next.reserve(more(self.next.len()));
        self.prefixes.reserve(more(self.prefixes.len()));
        let cap = (self.prefixes.capacity() * 2).next_power_of_two();
        if cap > self.slots.len() {
            self.rehash(cap);
        }
    }

    /// Sorts the distinct prefixes and returns the keys in order.
    pub fn finish(self) -> SortedKeys {
        let mut order: Vec<u32> = (0..self.prefixes.len() as u32).collect();
        let arena = &self.arena;
        let prefixes = &self.prefixes;
        let bytes = |i: u32| {
            let p = &prefixes[i as usize];
            arena
                .get(p.start as usize..(p.start + p.len) as usize)
                .unwrap_or(&[])
        };
        let cmp = |a: &u32, b: &u32| {
            let (pa, pb) = (&prefixes[*a as usize], &prefixes[*b as usize]);
            pa.head.cmp(&pb.head).then_with(|| bytes(*a).cmp(bytes(*b)))
        };
        if order.len() > 100_000 {
            let mid = order.len() / 2;
            let (left, right) = order.split_at_mut(mid);
            std::thread::scope(|s| {
                s.spawn(|| left.sort_unstable_by(cmp));
                right.sort_unstable_by(cmp);
            });
            let mut merged = Vec::with_capacity(order.len());
            let (mut i, mut j) = (0, mid);
            while i < mid && j < order.len() {
                if cmp(&order[j], &order[i]).is_lt() {
                    merged.push(order[j]);
                    j += 1;
                } else {
                    merged.push(order[i]);
                    i += 1;
                }
            }
            merged.extend_from_slice(&order[i..mid]);
            merged.extend_from_slice(&order[j..]);
            order = merged;
        } else {
            order.sort_unstable_by(cmp);
        }
        SortedKeys {
            sorter: self,
            order,
        }
    }
}

/// Keys gathered back to back to be written with empty values in one call.
#[derive(Debug, Default)]
pub struct KeyBatch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBatch {
    /// Adds a key.
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// Writes the keys (appending through the batch path when they come after everything
    /// in the table, one put each otherwise) and empties the batch.
    pub fn write<W: WriteTxn>(&mut self, kv: &mut W, table: TableId, append: bool) -> DbResult<()> {
        if append {
            kv.append_batch(table, self.len(), &|i| (self.key(i), &[][..]))?;
        } else {
            for i in 0..self.len() {
                kv.put(table, self.key(i), &[])?;
            }
        }
        self.bytes.clear();
        self.ends.clear();
        Ok(())
    }
}

/// The keys of a [`KeySorter`] in key order, without duplicates.
#[derive(Debug)]
pub struct SortedKeys {
    sorter: KeySorter,
    order: Vec<u32>,
}

impl SortedKeys {
    /// Number of keys (duplicates pushed back to back counted once).
    pub fn len(&self) -> usize {
        self.sorter.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.sorter.is_empty()
    }

    /// Calls `f` with every key in order, built in a reused buffer.
    pub fn for_each(&self, mut f: impl FnMut(&[u8]) -> DbResult<()>) -> DbResult<()> {
        if self.sorter.overflow {
            return Err(DbError::UnwillingToPerform(
                "more index keys were collected than one sort can hold".into(),
            ));
        }
        let mut key = Vec::with_capacity(128);
        let mut ids = Vec::new();
        for &i in &self.order {
            let Some(p) = self.sorter.prefixes.get(i as usize) else {
                continue;
            };
            ids.clear();
            let mut at = p.first;
            while at != EMPTY {
                let Some(id) = self.sorter.ids.get(at as usize) else {
                    break;
                };
                ids.push(*id);
                at = self.sorter.next.get(at as usize).copied().unwrap_or(EMPTY);
            }
            if !p.sorted {
                ids.sort_unstable();
                ids.dedup();
            }
            key.clear();
            key.extend_from_slice(self.sorter.prefix_bytes(p));
            let plen = key.len();
            for id in &ids {
                key.truncate(plen);
                key.extend_from_slice(&id.to_be_bytes());
                f(&key)?;
            }
        }
        Ok(())
    }

    /// Every key, owned, in order (for comparisons).
    pub fn to_vec(&self) -> DbResult<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(self.len());
        self.for_each(|k| {
            out.push(k.to_vec());
            Ok(())
        })?;
        Ok(out)
    }

    /// Writes every key with an empty value, appending in batches when the keys all come
    /// after what the table holds. For attributes in `unique`, two records sharing a
    /// complete (not truncated) value, in the batch or against the table, are a
    /// constraint violation.
    pub fn write_into<W: WriteTxn>(
        &self,
        kv: &mut W,
        table: TableId,
        unique: &[u32],
    ) -> DbResult<()> {
        if !unique.is_empty() {
            self.check_unique(kv, table, unique)?;
        }
        let last = match kv
            .range(
                table,
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                Direction::Backward,
            )?
            .next()
        {
            Some(item) => Some(item?.0.to_vec()),
            None => None,
        };
        let mut batch = KeyBatch::default();
        let mut appendable: Option<bool> = None;
        self.for_each(|k| {
            let append = *appendable.get_or_insert_with(|| last.as_deref().is_none_or(|l| k > l));
            batch.push(k);
            if batch.len() >= WRITE_CHUNK {
                batch.write(kv, table, append)?;
            }
            Ok(())
        })?;
        batch.write(kv, table, appendable.unwrap_or(true))
    }

    /// Fails with a constraint violation when a value of an attribute in `unique` is held
    /// by two records, among these keys or against the table.
    pub fn check_unique<W: WriteTxn>(
        &self,
        kv: &W,
        table: TableId,
        unique: &[u32],
    ) -> DbResult<()> {
        for &i in &self.order {
            let Some(p) = self.sorter.prefixes.get(i as usize) else {
                continue;
            };
            let prefix = self.sorter.prefix_bytes(p);
            let Some(attr) = index_key_attr(prefix) else {
                continue;
            };
            if prefix.first() != Some(&KIND_VALUE)
                || !unique.contains(&attr)
                || prefix.ends_with(&TERM_CUT)
            {
                continue;
            }
            let clash = || {
                DbError::ConstraintViolation(format!(
                    "attribute {attr}: a value is used by two entries"
                ))
            };
            if p.first != p.last {
                return Err(clash());
            }
            let id = self.sorter.ids.get(p.first as usize).copied();
            for other in kv.prefix(table, prefix, Direction::Forward)? {
                let (ok, _) = other?;
                if crate::keys::read_id_suffix(&ok) != id {
                    return Err(clash());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_order_as_sorting_whole_keys(keys in prop::collection::vec(
            (0u32..3, prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xff, b'a']), 0..20), 0u64..50, any::<bool>()), 0..300),
            max in prop::sample::select(vec![20usize, 511]),
            // A load sized part way through (`reserve_scaled`) orders the same.
            (sized_at, factor) in (0usize..300, 0.0f64..8.0)) {
            let mut s = KeySorter::new(usize::MAX);
            let mut want: Vec<Vec<u8>> = Vec::new();
            for (n, (attr, value, id, presence)) in keys.iter().enumerate() {
                if n == sized_at {
                    s.reserve_scaled(factor);
                }
                let k = if *presence {
                    crate::keys::presence_key(*attr, *id).to_vec()
                } else {
                    crate::keys::value_key(*attr, value, *id, max)
                };
                s.push(&k);
                want.push(k);
            }
            want.sort();
            want.dedup();
            prop_assert_eq!(s.finish().to_vec().unwrap(), want);
        }
    }
}
