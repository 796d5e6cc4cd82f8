//! Key encodings of every table, and the small integer codecs the record format uses.
//!
//! Tables (one key-value table each; `docs/storage-format.md` has the full picture):
//!
//! | table     | key                                   | value                                  |
//! |-----------|---------------------------------------|----------------------------------------|
//! | `meta`    | ASCII name (see [`meta`])             | per name                               |
//! | `entries` | id: u64 big-endian                    | record (see [`crate::record`])         |
//! | `nodes`   | id: u64 big-endian                    | parent id u64 BE ++ name (RDN text, or |
//! |           |                                       | the whole DN of a naming context)      |
//! | `tree`    | parent id u64 BE ++ RDN key           | child id u64 BE                        |
//! | `index`   | see [`value_key`] / [`presence_key`]  | empty                                  |
//! | `links`   | see [`link_key`]                      | forward: link stamp; back: empty       |
//! | `descriptors` | see [`crate::descriptors`]        | a value stored once, or its id         |
//!
//! Ids start at 1; id 0 stands for the (empty) root DN, the parent of naming contexts.
//! Big-endian ids make key order equal numeric order, so new records append at the end of
//! the B-tree and a parent's children sit together under one prefix.
//!
//! **RDN keys** are the normalized RDN ([`crate::dn::Rdn::norm`]). When that is too long for
//! the key limit, it is cut and followed by `0x00` and the 32-byte SHA-256 of the whole
//! normalized RDN; a normalized RDN never contains a raw `0x00`, so the two forms never
//! collide.
//!
//! **Index keys** carry the index kind, the attribute id and the normalized value, then the
//! record id, so the ids of one value are a contiguous, id-ordered run, an insert touches one
//! small key (no id list is ever rewritten), and order-preserving value encodings make
//! ranges and prefixes plain range scans:
//!
//! ```text
//! value key:    0x01 | attr u32 BE | escaped(value) | 0x00 0x01 | id u64 BE
//! truncated:    0x01 | attr u32 BE | escaped(value)[..cut] | 0x00 0x02 | id u64 BE
//! presence key: 0x02 | attr u32 BE | id u64 BE
//! ```
//!
//! `escaped` doubles each `0x00` as `0x00 0xff`, which keeps byte order and makes the
//! terminator unambiguous. Values whose key would pass the limit are cut on an escape
//! boundary and marked `0x00 0x02`; every value sharing that cut prefix lands on the same
//! key, so searches re-check candidates against the record.

use sha2::{Digest, Sha256};

/// Index key kind byte of value keys (equality, ordering, substring-initial).
pub const KIND_VALUE: u8 = 0x01;
/// Index key kind byte of presence keys.
pub const KIND_PRESENCE: u8 = 0x02;
/// Terminator after a complete escaped value.
pub const TERM_FULL: [u8; 2] = [0x00, 0x01];
/// Terminator after a truncated escaped value.
pub const TERM_CUT: [u8; 2] = [0x00, 0x02];

/// Names of the entries of the `meta` table.
pub mod meta {
    /// Storage format version (u32 BE). See [`crate::db::STORE_FORMAT`].
    pub const FORMAT: &[u8] = b"format";
    /// Highest committed USN (u64 BE).
    pub const USN: &[u8] = b"usn";
    /// Next record id to hand out (u64 BE).
    pub const NEXT_ID: &[u8] = b"next_id";
    /// Next attribute id to hand out (u32 BE).
    pub const NEXT_ATTR: &[u8] = b"next_attr";
    /// Prefix of `name → id` attribute registrations: `a:` ++ lowercased name → u32 BE.
    pub const ATTR_BY_NAME: &[u8] = b"a:";
    /// Prefix of `id → name` attribute registrations: `i:` ++ u32 BE → name as first seen.
    pub const ATTR_BY_ID: &[u8] = b"i:";
    /// This database's invocation id (16 bytes), stamped on originating changes.
    pub const INVOCATION: &[u8] = b"invocation";
    /// Invocation ids this database had before (a restore gives it a new one): 24 bytes
    /// each, the id ++ the highest USN (u64 BE) it reached, oldest first.
    pub const RETIRED_INVOCATIONS: &[u8] = b"retired_invocations";
    /// Fingerprint of the index configuration the indexes were built with.
    pub const INDEX_CONFIG: &[u8] = b"index_config";
    /// Present while a chunked bulk load has stored records whose index keys are not
    /// written yet; a database opened with it re-indexes itself.
    pub const BULK_PENDING: &[u8] = b"bulk_pending";
    /// Fingerprint of the attribute syntaxes the stored normalized values were made with.
    pub const SCHEMA_CONFIG: &[u8] = b"schema_config";
    /// Next id of the `descriptors` table (u64 BE; absent means 1).
    pub const NEXT_DESCRIPTOR: &[u8] = b"next_descriptor";
}

/// Kind byte of forward link keys (`member` of a group: group → member).
pub const LINK_FORWARD: u8 = 0x01;
/// Kind byte of back link keys (`memberOf` of a member: member → group).
pub const LINK_BACK: u8 = 0x02;

/// A key of the `links` table. Linked attributes (AD's `member`/`memberOf` and every other
/// linkID pair) are not stored in records; each link is one key in each direction:
///
/// ```text
/// forward: 0x01 | source id u64 BE | forward attr u32 BE | target id u64 BE
/// back:    0x02 | target id u64 BE | forward attr u32 BE | source id u64 BE
/// ```
///
/// Both directions name the forward attribute, so the values of one attribute of one
/// entry are one contiguous run (`member` of a group, `memberOf` of a user), adding a link
/// touches two small keys whatever the group size, and targets are referred to by id so a
/// rename or move never rewrites a link.
pub fn link_key(kind: u8, from: u64, attr: u32, to: u64) -> [u8; 21] {
    let mut k = [0u8; 21];
    k[0] = kind;
    k[1..9].copy_from_slice(&from.to_be_bytes());
    k[9..13].copy_from_slice(&attr.to_be_bytes());
    k[13..21].copy_from_slice(&to.to_be_bytes());
    k
}

/// The prefix of the links of one attribute of one entry in one direction.
pub fn link_prefix(kind: u8, from: u64, attr: u32) -> [u8; 13] {
    let mut k = [0u8; 13];
    k[0] = kind;
    k[1..9].copy_from_slice(&from.to_be_bytes());
    k[9..13].copy_from_slice(&attr.to_be_bytes());
    k
}

/// The prefix of every link of one entry in one direction.
pub fn link_entry_prefix(kind: u8, from: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = kind;
    k[1..9].copy_from_slice(&from.to_be_bytes());
    k
}

/// The parts of a link key: kind, from, attribute, to.
pub fn split_link_key(key: &[u8]) -> Option<(u8, u64, u32, u64)> {
    if key.len() != 21 {
        return None;
    }
    let kind = *key.first()?;
    let from = read_u64_be(key.get(1..9)?)?;
    let attr = u32::from_be_bytes(key.get(9..13)?.try_into().ok()?);
    let to = read_u64_be(key.get(13..21)?)?;
    Some((kind, from, attr, to))
}

/// Big-endian bytes of an id, the key of `entries` and `nodes`.
pub fn id_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Reads a big-endian u64 from the first 8 bytes, if there are 8.
pub fn read_u64_be(bytes: &[u8]) -> Option<u64> {
    let arr: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_be_bytes(arr))
}

/// Reads a big-endian u64 from the last 8 bytes (the id suffix of index keys).
pub fn read_id_suffix(key: &[u8]) -> Option<u64> {
    let start = key.len().checked_sub(8)?;
    read_u64_be(key.get(start..)?)
}

/// The RDN part of a `tree` key (see the module docs for the hashed form).
pub fn rdn_key(norm_rdn: &str, max_key_len: usize) -> Vec<u8> {
    let room = max_key_len.saturating_sub(8);
    let bytes = norm_rdn.as_bytes();
    if bytes.len() <= room {
        return bytes.to_vec();
    }
    let keep = room.saturating_sub(33);
    let mut k = Vec::with_capacity(room);
    k.extend_from_slice(bytes.get(..keep).unwrap_or(bytes));
    k.push(0);
    k.extend_from_slice(&Sha256::digest(bytes));
    k
}

/// A whole `tree` key: parent id followed by the RDN key.
pub fn tree_key(parent: u64, norm_rdn: &str, max_key_len: usize) -> Vec<u8> {
    let rk = rdn_key(norm_rdn, max_key_len);
    let mut k = Vec::with_capacity(8 + rk.len());
    k.extend_from_slice(&parent.to_be_bytes());
    k.extend_from_slice(&rk);
    k
}

/// Appends the escaped form of `value` (each `0x00` becomes `0x00 0xff`).
pub fn escape_into(out: &mut Vec<u8>, value: &[u8]) {
    for &b in value {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
}

/// The head of every value key of one attribute: kind and attribute id.
pub fn value_head(attr: u32) -> [u8; 5] {
    let a = attr.to_be_bytes();
    [KIND_VALUE, a[0], a[1], a[2], a[3]]
}

/// The bytes of an escaped value as stored in a key of at most `max_key_len` bytes, and
/// whether it had to be cut. The cut never splits an escape pair.
pub fn escaped_for_key(value: &[u8], max_key_len: usize) -> (Vec<u8>, bool) {
    // head (5) + terminator (2) + id (8)
    let room = max_key_len.saturating_sub(15);
    let mut out = Vec::with_capacity(value.len() + 2);
    for &b in value {
        let need = if b == 0 { 2 } else { 1 };
        if out.len() + need > room {
            return (out, true);
        }
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    (out, false)
}

/// The key prefix shared by every record holding exactly this normalized value (without
/// the id); an equality lookup is a prefix scan of it.
pub fn value_prefix(attr: u32, norm: &[u8], max_key_len: usize) -> Vec<u8> {
    let (esc, cut) = escaped_for_key(norm, max_key_len);
    let mut k = Vec::with_capacity(5 + esc.len() + 10);
    k.extend_from_slice(&value_head(attr));
    k.extend_from_slice(&esc);
    k.extend_from_slice(if cut { &TERM_CUT } else { &TERM_FULL });
    k
}

/// A full value index key: [`value_prefix`] followed by the record id.
pub fn value_key(attr: u32, norm: &[u8], id: u64, max_key_len: usize) -> Vec<u8> {
    let mut k = Vec::with_capacity(norm.len() + 17);
    value_key_into(&mut k, attr, norm, id, max_key_len);
    k
}

/// Writes a full value index key into `out` (cleared first), reusing its allocation.
pub fn value_key_into(out: &mut Vec<u8>, attr: u32, norm: &[u8], id: u64, max_key_len: usize) {
    out.clear();
    out.extend_from_slice(&value_head(attr));
    // head (5) + terminator (2) + id (8)
    let room = 5 + max_key_len.saturating_sub(15);
    let mut cut = false;
    for &b in norm {
        let need = if b == 0 { 2 } else { 1 };
        if out.len() + need > room {
            cut = true;
            break;
        }
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(if cut { &TERM_CUT } else { &TERM_FULL });
    out.extend_from_slice(&id.to_be_bytes());
}

/// The prefix that every value key of a value starting with `norm_initial` starts with
/// (no terminator): substring-initial filters scan it.
pub fn initial_prefix(attr: u32, norm_initial: &[u8], max_key_len: usize) -> Vec<u8> {
    let (esc, _) = escaped_for_key(norm_initial, max_key_len);
    let mut k = Vec::with_capacity(5 + esc.len());
    k.extend_from_slice(&value_head(attr));
    k.extend_from_slice(&esc);
    k
}

/// Inclusive lower bound of the value keys whose value is `>= norm`.
pub fn ge_bound(attr: u32, norm: &[u8], max_key_len: usize) -> Vec<u8> {
    let (esc, _) = escaped_for_key(norm, max_key_len);
    let mut k = Vec::with_capacity(5 + esc.len() + 2);
    k.extend_from_slice(&value_head(attr));
    k.extend_from_slice(&esc);
    k.extend_from_slice(&[0x00, 0x00]);
    k
}

/// Exclusive upper bound of the value keys whose value is `<= norm` (truncated keys of
/// the same prefix included: they are re-checked).
pub fn le_bound(attr: u32, norm: &[u8], max_key_len: usize) -> Vec<u8> {
    let (esc, _) = escaped_for_key(norm, max_key_len);
    let mut k = Vec::with_capacity(5 + esc.len() + 2);
    k.extend_from_slice(&value_head(attr));
    k.extend_from_slice(&esc);
    k.extend_from_slice(&[0x00, 0x03]);
    k
}

/// A presence index key.
pub fn presence_key(attr: u32, id: u64) -> [u8; 13] {
    let mut k = [0u8; 13];
    k[0] = KIND_PRESENCE;
    k[1..5].copy_from_slice(&attr.to_be_bytes());
    k[5..13].copy_from_slice(&id.to_be_bytes());
    k
}

/// The prefix of every presence key of an attribute.
pub fn presence_prefix(attr: u32) -> [u8; 5] {
    let a = attr.to_be_bytes();
    [KIND_PRESENCE, a[0], a[1], a[2], a[3]]
}

/// The attribute id of any index key.
pub fn index_key_attr(key: &[u8]) -> Option<u32> {
    let arr: [u8; 4] = key.get(1..5)?.try_into().ok()?;
    Some(u32::from_be_bytes(arr))
}

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*pos`, advancing it; `None` on truncated or
/// over-long input.
pub fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    let mut shift = 0u32;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if shift >= 64 || (shift == 63 && b > 1) {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Some(v));
            assert_eq!(p, b.len());
        }
        assert_eq!(get_varint(&[0x80], &mut 0), None);
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert_eq!(get_varint(&over, &mut 0), None);
    }

    #[test]
    fn value_keys_keep_order_and_separate_values() {
        let a = value_key(7, b"ab", 1, 511);
        let b = value_key(7, b"abc", 1, 511);
        let c = value_key(7, b"ab\x00x", 1, 511);
        assert!(a < b && a < c);
        assert!(!b.starts_with(&value_prefix(7, b"ab", 511)));
        assert!(!c.starts_with(&value_prefix(7, b"ab", 511)));
        assert!(b.starts_with(&initial_prefix(7, b"ab", 511)));
        assert!(ge_bound(7, b"ab", 511) <= a && a < le_bound(7, b"ab", 511));
        assert!(b > le_bound(7, b"ab", 511) && c > le_bound(7, b"ab", 511));
    }

    #[test]
    fn long_values_are_cut_within_the_limit() {
        let long = vec![0u8; 100];
        let k = value_key(1, &long, 9, 40);
        assert!(k.len() <= 40);
        assert!(k[k.len() - 10..k.len() - 8] == TERM_CUT);
        assert_eq!(read_id_suffix(&k), Some(9));
        let mut buf = vec![9u8; 3];
        for v in [&b"ab"[..], &[0, 0, 1][..], &[7u8; 600][..]] {
            value_key_into(&mut buf, 4, v, 77, 64);
            assert_eq!(buf, value_key(4, v, 77, 64));
            assert_eq!(
                value_key(4, v, 77, 64),
                [value_prefix(4, v, 64), 77u64.to_be_bytes().to_vec()].concat()
            );
        }
        let rk = tree_key(3, &"x".repeat(600), 511);
        assert!(rk.len() <= 511);
    }
}
