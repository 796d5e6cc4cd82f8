//! Values stored once however many records hold them: AD's security descriptors. At 100,000
//! users a domain holds a handful of distinct descriptors (one per class and place in the
//! tree), each about a kilobyte, so storing each once saves about as much as every other
//! attribute of a user together, and gives an access check a small number to cache its
//! decisions by.
//!
//! The attribute named by [`crate::DbConfig::descriptor_attribute`] holds, in the record,
//! the 8-byte big-endian id of its value in the `descriptors` table; every write path
//! (add, modify, bulk load) turns a value into its id, and [`crate::DbRead::to_entry`]
//! turns it back, so callers that read and write entries see the descriptor itself.
//!
//! ```text
//! descriptors table:
//!   0x01 | id u64 BE       → the value's bytes
//!   0x02 | SHA-256(value)  → id u64 BE
//! meta `next_descriptor`   → next id (u64 BE), from 1
//! ```
//!
//! Ids are never reused. A value no record refers to any longer stays until the
//! consistency check's repair or [`crate::Db::sweep_descriptors`] removes it.

use std::collections::HashSet;

use kauri_kv::{Direction, ReadTxn, WriteTxn};
use sha2::{Digest, Sha256};

use crate::db::{T_DESCRIPTORS, T_META};
use crate::error::{DbError, DbResult};
use crate::keys::{meta, read_u64_be};

/// Key kind of `id → value`.
const BY_ID: u8 = 0x01;
/// Key kind of `hash → id`.
const BY_HASH: u8 = 0x02;

/// The largest value stored: AD refuses descriptors past 64 KiB (an ACL's size is a u16).
pub const MAX_DESCRIPTOR_LEN: usize = 65_535 * 2;

/// The `id → value` key of a descriptor.
pub fn id_key(id: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = BY_ID;
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

fn hash_key(value: &[u8]) -> [u8; 33] {
    let mut k = [0u8; 33];
    k[0] = BY_HASH;
    k[1..].copy_from_slice(&Sha256::digest(value));
    k
}

/// The id a record's stored value names, if it is one (8 bytes).
pub fn id_of_stored(stored: &[u8]) -> Option<u64> {
    (stored.len() == 8).then(|| read_u64_be(stored)).flatten()
}

/// The id of `value`, stored under a new id when it is not stored yet.
pub fn intern<W: WriteTxn>(w: &mut W, value: &[u8]) -> DbResult<u64> {
    if value.len() > MAX_DESCRIPTOR_LEN {
        return Err(DbError::ConstraintViolation(format!(
            "a security descriptor of {} bytes is longer than the {MAX_DESCRIPTOR_LEN}-byte limit",
            value.len()
        )));
    }
    let hk = hash_key(value);
    if let Some(id) = w.get(T_DESCRIPTORS, &hk)?.and_then(read_u64_be) {
        return Ok(id);
    }
    let id = w
        .get(T_META, meta::NEXT_DESCRIPTOR)?
        .and_then(read_u64_be)
        .unwrap_or(1);
    w.put(T_META, meta::NEXT_DESCRIPTOR, &(id + 1).to_be_bytes())?;
    w.put(T_DESCRIPTORS, &hk, &id.to_be_bytes())?;
    w.put(T_DESCRIPTORS, &id_key(id), value)?;
    Ok(id)
}

/// The id `value` is stored under, without storing it.
pub fn find<R: ReadTxn>(r: &R, value: &[u8]) -> DbResult<Option<u64>> {
    Ok(r.get(T_DESCRIPTORS, &hash_key(value))?
        .and_then(read_u64_be))
}

/// The value stored under `id`.
pub fn get<R: ReadTxn>(r: &R, id: u64) -> DbResult<Option<&[u8]>> {
    Ok(r.get(T_DESCRIPTORS, &id_key(id))?)
}

/// Every stored id, in order.
pub fn all_ids<R: ReadTxn>(r: &R) -> DbResult<Vec<u64>> {
    let mut out = Vec::new();
    for item in r.prefix(T_DESCRIPTORS, &[BY_ID], Direction::Forward)? {
        let (k, _) = item?;
        if let Some(id) = k.get(1..).and_then(read_u64_be) {
            out.push(id);
        }
    }
    Ok(out)
}

/// Removes the stored values whose ids are not in `used`; returns how many went.
pub fn remove_unused<W: WriteTxn>(w: &mut W, used: &HashSet<u64>) -> DbResult<u64> {
    let mut gone = Vec::new();
    for item in w.prefix(T_DESCRIPTORS, &[BY_ID], Direction::Forward)? {
        let (k, v) = item?;
        if let Some(id) = k.get(1..).and_then(read_u64_be) {
            if !used.contains(&id) {
                gone.push((id, hash_key(v)));
            }
        }
    }
    for (id, hk) in &gone {
        w.delete(T_DESCRIPTORS, &id_key(*id))?;
        w.delete(T_DESCRIPTORS, hk)?;
    }
    Ok(gone.len() as u64)
}

impl<B: kauri_kv::Backend> crate::Db<B> {
    /// Removes the descriptors no record refers to any longer (after deletions and
    /// descriptor changes), in `w`; returns how many went.
    pub fn sweep_descriptors_in(&self, w: &mut crate::DbWrite<'_, B>) -> DbResult<u64> {
        let Some(name) = self.config().descriptor_attribute.clone() else {
            return Ok(0);
        };
        let Some(attr) = w.stored_attr_id(&name) else {
            return Ok(0);
        };
        w.forget_last_descriptor();
        let kv = w.kv();
        let mut used = HashSet::new();
        let mut last = None;
        loop {
            let next = crate::reindex::for_each_record(kv, last, 4096, |_, bytes| {
                let rec = crate::record::RecordView::parse(bytes)?;
                if let Some(a) = rec.attr(attr) {
                    for v in a.values() {
                        if let Some(id) = id_of_stored(v.raw) {
                            used.insert(id);
                        }
                    }
                }
                Ok(())
            })?;
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        remove_unused(kv, &used)
    }
}
