//! The consistency check: every index key, tree key and node verified against the records,
//! every record's parent checked, and the counters checked against what is stored.
//!
//! The expected index and tree keys are computed from the records (streamed in batches)
//! and merged in key order against the stored tables, so a check costs one pass over the
//! records, one sort and one pass over each table. `fix` repairs, in one transaction,
//! everything that can be derived again: indexes and hierarchy tables (rebuilt), links
//! (a forward link is authoritative: its missing back key is added, a back key without
//! its forward key goes, and links naming a missing entry go in both directions) and
//! counters behind the data (raised). Damaged records and orphans are reported for an
//! administrator.

use std::fmt;
use std::ops::Bound;

use kauri_kv::{Backend, Direction, ReadTxn, WriteTxn};

use crate::config::IndexFlags;
use crate::db::{Db, T_INDEX, T_LINKS, T_META, T_NODES, T_TREE};
use crate::error::{DbError, DbResult};
use crate::keys::{
    index_key_attr, link_key, meta, read_u64_be, split_link_key, LINK_BACK, LINK_FORWARD,
};
use crate::record::RecordView;
use crate::reindex::{
    count_records, exists, for_each_record, hierarchy_of, link_presence_keys, record_index_keys,
    KeySorter, Progress,
};

/// One inconsistency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A record's bytes do not decode.
    CorruptRecord {
        /// Record id.
        id: u64,
        /// Why.
        reason: String,
    },
    /// A record names a parent that does not exist.
    Orphan {
        /// Record id.
        id: u64,
        /// The missing parent.
        parent: u64,
    },
    /// An index key the records call for is missing.
    MissingIndexKey {
        /// Hex of the key.
        key: String,
    },
    /// An index key no record calls for.
    ExtraIndexKey {
        /// Hex of the key.
        key: String,
    },
    /// A record is not reachable by its DN (its tree key is missing or points elsewhere).
    MissingTreeKey {
        /// Record id.
        id: u64,
    },
    /// A tree key that no record explains.
    ExtraTreeKey {
        /// Hex of the key.
        key: String,
    },
    /// A node (parent + RDN) that disagrees with its record, or is missing.
    BadNode {
        /// Record id.
        id: u64,
    },
    /// A node without a record.
    ExtraNode {
        /// Node id.
        id: u64,
    },
    /// A link whose other direction is missing, or that names an entry that does not
    /// exist.
    BrokenLink {
        /// Hex of the key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A record refers to a descriptor that is not stored.
    MissingDescriptor {
        /// Record id.
        id: u64,
        /// The descriptor id it names.
        descriptor: u64,
    },
    /// A counter in `meta` is behind what the records hold.
    CounterBehind {
        /// Which counter.
        name: String,
        /// What it says.
        stored: u64,
        /// What it must at least be.
        needed: u64,
    },
}

impl Problem {
    /// Whether `fix` repairs it.
    pub fn fixable(&self) -> bool {
        !matches!(
            self,
            Problem::CorruptRecord { .. }
                | Problem::Orphan { .. }
                | Problem::MissingDescriptor { .. }
        )
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::CorruptRecord { id, reason } => write!(f, "record {id} is damaged: {reason}"),
            Problem::Orphan { id, parent } => {
                write!(f, "record {id} names parent {parent}, which does not exist")
            }
            Problem::MissingIndexKey { key } => write!(f, "index key missing: {key}"),
            Problem::ExtraIndexKey { key } => write!(f, "index key without a record: {key}"),
            Problem::MissingTreeKey { id } => write!(f, "record {id} cannot be reached by its DN"),
            Problem::ExtraTreeKey { key } => write!(f, "tree key without a record: {key}"),
            Problem::BadNode { id } => write!(f, "node of record {id} disagrees with the record"),
            Problem::ExtraNode { id } => write!(f, "node {id} has no record"),
            Problem::BrokenLink { key, reason } => write!(f, "link {key}: {reason}"),
            Problem::MissingDescriptor { id, descriptor } => {
                write!(
                    f,
                    "record {id} names descriptor {descriptor}, which is not stored"
                )
            }
            Problem::CounterBehind {
                name,
                stored,
                needed,
            } => {
                write!(
                    f,
                    "counter {name} is {stored} but must be at least {needed}"
                )
            }
        }
    }
}

/// The result of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Records examined.
    pub records: u64,
    /// Index keys examined.
    pub index_keys: u64,
    /// Everything found wrong (the first 10,000).
    pub problems: Vec<Problem>,
    /// Problems beyond the ones listed.
    pub more_problems: u64,
    /// Whether `fix` ran a repair.
    pub fixed: bool,
}

impl CheckReport {
    fn add(&mut self, p: Problem) {
        if self.problems.len() < 10_000 {
            self.problems.push(p);
        } else {
            self.more_problems += 1;
        }
    }

    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.more_problems == 0
    }
}

/// What is wrong with one link key.
enum LinkFault {
    /// Not a link key at all.
    Malformed,
    /// It names an entry that does not exist.
    MissingEntry,
    /// The key of the other direction (given) is missing.
    MissingOther([u8; 21]),
}

/// Every link key with what is wrong with it: what the check reports and the repair
/// mends, found one way.
fn link_faults<R: ReadTxn>(kv: &R) -> DbResult<Vec<(Vec<u8>, LinkFault)>> {
    let mut out = Vec::new();
    for item in kv.range(
        T_LINKS,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        let (k, _) = item?;
        let k: &[u8] = &k;
        let Some((kind, from, attr, to)) = split_link_key(k) else {
            out.push((k.to_vec(), LinkFault::Malformed));
            continue;
        };
        if !exists(kv, from)? || !exists(kv, to)? {
            out.push((k.to_vec(), LinkFault::MissingEntry));
            continue;
        }
        let other_kind = if kind == LINK_FORWARD {
            LINK_BACK
        } else {
            LINK_FORWARD
        };
        let other = link_key(other_kind, to, attr, from);
        if kv.get(T_LINKS, &other)?.is_none() {
            out.push((k.to_vec(), LinkFault::MissingOther(other)));
        }
    }
    Ok(out)
}

/// The highest USN a record's `uSNChanged` values hold.
fn record_usn(rec: &RecordView<'_>, usn_attr: Option<u32>) -> u64 {
    usn_attr
        .and_then(|u| rec.attr(u))
        .map(|a| {
            a.values()
                .filter_map(|v| std::str::from_utf8(v.raw).ok()?.parse::<u64>().ok())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

fn hex(k: &[u8]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

impl<B: Backend> Db<B> {
    /// Checks the database against itself on one snapshot. With `fix`, repairs what can
    /// be repaired (see the module documentation) in one transaction and checks again.
    pub fn check(&self, fix: bool, progress: Option<Progress<'_>>) -> DbResult<CheckReport> {
        let mut report = self.check_once(progress)?;
        if fix && report.problems.iter().any(Problem::fixable) {
            // As for a re-index, a transaction that outgrew the map runs again in the
            // grown map.
            let mut attempts = 0;
            loop {
                match self.repair_once() {
                    Err(DbError::Kv(kauri_kv::KvError::MapFull(_))) if attempts < 3 => {
                        attempts += 1;
                    }
                    other => break other?,
                }
            }
            let mut again = self.check_once(None)?;
            again.fixed = true;
            report = again;
        }
        Ok(report)
    }

    /// Repairs links and counters, then rebuilds the derived tables, in one transaction.
    fn repair_once(&self) -> DbResult<()> {
        let mut w = self.write()?;
        let usn_attr = self
            .config()
            .usn_attributes
            .as_ref()
            .and_then(|(_, changed)| w.stored_attr_id(changed));
        let kv = w.kv();
        let mut drop_keys: Vec<Vec<u8>> = Vec::new();
        let mut add_keys: Vec<[u8; 21]> = Vec::new();
        for (key, fault) in link_faults(kv)? {
            match fault {
                LinkFault::MissingOther(other) if key.first() == Some(&LINK_FORWARD) => {
                    add_keys.push(other)
                }
                _ => drop_keys.push(key),
            }
        }
        for k in &drop_keys {
            kv.delete(T_LINKS, k)?;
        }
        for k in &add_keys {
            kv.put(T_LINKS, k, &[])?;
        }
        let mut max_id = 0u64;
        let mut max_usn = 0u64;
        let mut last = None;
        loop {
            let next = for_each_record(kv, last, 4096, |id, bytes| {
                max_id = max_id.max(id);
                if let Ok(rec) = RecordView::parse(bytes) {
                    max_usn = max_usn.max(record_usn(&rec, usn_attr));
                }
                Ok(())
            })?;
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        self.rebuild_derived(kv, None)?;
        w.raise_counters(max_id + 1, max_usn);
        self.sweep_descriptors_in(&mut w)?;
        w.commit()?;
        Ok(())
    }

    /// Compares the index table with the keys the records call for. The expected keys
    /// are sorted in memory; when they do not fit the sort budget the attributes are split
    /// into groups checked one pass at a time.
    fn check_indexes<R: ReadTxn>(
        &self,
        kv: &R,
        flags_of: &mut dyn FnMut(u32) -> IndexFlags,
        report: &mut CheckReport,
    ) -> DbResult<()> {
        let max = self.config().max_index_key_len;
        let back_ids = self.link_back_ids();
        let mut groups: u32 = 1;
        'restart: loop {
            let mut found = CheckReport::default();
            let mut keys_seen = 0u64;
            let mut too_big = false;
            for group in 0..groups {
                let mut expected = KeySorter::new(self.config().sort_budget);
                let mut in_group = |a: u32| {
                    if a % groups == group {
                        flags_of(a)
                    } else {
                        IndexFlags::NONE
                    }
                };
                let mut last = None;
                let mut full = false;
                loop {
                    let next = for_each_record(kv, last, 4096, |id, bytes| {
                        if let Ok(rec) = RecordView::parse(bytes) {
                            record_index_keys(&rec, id, &mut in_group, max, &mut expected);
                        }
                        Ok(())
                    })?;
                    if expected.is_full() {
                        full = true;
                        break;
                    }
                    match next {
                        Some(l) => last = Some(l),
                        None => break,
                    }
                }
                link_presence_keys(kv, &back_ids, &mut |a| a % groups == group, &mut expected)?;
                if full && groups < 1 << 16 {
                    too_big = true;
                    break;
                }
                let expected = expected.finish().to_vec()?;
                let mut want = expected.iter().map(Vec::as_slice).peekable();
                for item in kv.range(
                    T_INDEX,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                )? {
                    let (k, _) = item?;
                    let k: &[u8] = &k;
                    if index_key_attr(k).is_some_and(|a| a % groups != group) {
                        continue;
                    }
                    keys_seen += 1;
                    loop {
                        match want.peek() {
                            Some(w) if *w < k => {
                                found.add(Problem::MissingIndexKey { key: hex(w) });
                                want.next();
                            }
                            Some(w) if *w == k => {
                                want.next();
                                break;
                            }
                            _ => {
                                found.add(Problem::ExtraIndexKey { key: hex(k) });
                                break;
                            }
                        }
                    }
                }
                for w in want {
                    found.add(Problem::MissingIndexKey { key: hex(w) });
                }
            }
            if too_big {
                groups *= 4;
                continue 'restart;
            }
            report.index_keys = keys_seen;
            for p in found.problems {
                report.add(p);
            }
            report.more_problems += found.more_problems;
            return Ok(());
        }
    }

    fn check_once(&self, progress: Option<Progress<'_>>) -> DbResult<CheckReport> {
        let snap = self.read()?;
        let kv = snap.kv();
        let max = self.config().max_index_key_len;
        let flags = self.flags_by_id();
        let mut flags_of = |a: u32| flags.get(a as usize).copied().unwrap_or(IndexFlags::NONE);
        let total = count_records(kv)?;
        let mut report = CheckReport::default();
        let mut tree: Vec<(Vec<u8>, u64)> = Vec::new();
        let mut parents: Vec<(u64, u64)> = Vec::new();
        let mut max_id = 0;
        let mut max_usn = 0u64;
        let usn_attr = self
            .config()
            .usn_attributes
            .as_ref()
            .and_then(|(_, changed)| snap.attr_id(changed));
        let descriptor_attr = snap.descriptor_attr_id();
        let mut descriptors: Vec<(u64, u64)> = Vec::new();
        let mut last = None;
        loop {
            let mut batch_problems = Vec::new();
            let next = for_each_record(kv, last, 4096, |id, bytes| {
                report.records += 1;
                max_id = max_id.max(id);
                let rec =
                    match RecordView::parse(bytes).and_then(|r| r.to_owned_record().map(|_| r)) {
                        Ok(r) => r,
                        Err(e) => {
                            batch_problems.push(Problem::CorruptRecord {
                                id,
                                reason: e.to_string(),
                            });
                            return Ok(());
                        }
                    };
                max_usn = max_usn.max(record_usn(&rec, usn_attr));
                if let Some(a) = descriptor_attr.and_then(|a| rec.attr(a)) {
                    for v in a.values() {
                        descriptors
                            .push((id, crate::descriptors::id_of_stored(v.raw).unwrap_or(0)));
                    }
                }
                match hierarchy_of(&rec, max) {
                    Ok((tk, nv)) => {
                        tree.push((tk, id));
                        if kv.get(T_NODES, &id.to_be_bytes())? != Some(nv.as_slice()) {
                            batch_problems.push(Problem::BadNode { id });
                        }
                    }
                    Err(reason) => batch_problems.push(Problem::CorruptRecord { id, reason }),
                }
                if rec.parent() != 0 {
                    parents.push((id, rec.parent()));
                }
                Ok(())
            })?;
            for p in batch_problems {
                report.add(p);
            }
            if let Some(p) = progress {
                p(report.records, total);
            }
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        for (id, parent) in parents {
            if !exists(kv, parent)? {
                report.add(Problem::Orphan { id, parent });
            }
        }
        for (id, descriptor) in descriptors {
            if crate::descriptors::get(kv, descriptor)?.is_none() {
                report.add(Problem::MissingDescriptor { id, descriptor });
            }
        }
        self.check_indexes(kv, &mut flags_of, &mut report)?;
        // Tree: every record reachable, no stray keys.
        tree.sort_unstable();
        let mut want = tree.iter().peekable();
        for item in kv.range(
            T_TREE,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )? {
            let (k, v) = item?;
            let k: &[u8] = &k;
            let id = read_u64_be(v);
            loop {
                match want.peek() {
                    Some((wk, wid)) if wk.as_slice() < k => {
                        report.add(Problem::MissingTreeKey { id: *wid });
                        want.next();
                    }
                    Some((wk, wid)) if wk.as_slice() == k => {
                        if id != Some(*wid) {
                            report.add(Problem::MissingTreeKey { id: *wid });
                        }
                        want.next();
                        break;
                    }
                    _ => {
                        report.add(Problem::ExtraTreeKey { key: hex(k) });
                        break;
                    }
                }
            }
        }
        for (_, wid) in want {
            report.add(Problem::MissingTreeKey { id: *wid });
        }
        // Nodes without records.
        for item in kv.range(
            T_NODES,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )? {
            let (k, _) = item?;
            let k: &[u8] = &k;
            let id = read_u64_be(k).ok_or_else(|| DbError::corrupt("node key is not an id"))?;
            if !exists(kv, id)? {
                report.add(Problem::ExtraNode { id });
            }
        }
        // Links: both directions present, both ends existing.
        for (key, fault) in link_faults(kv)? {
            let reason = match fault {
                LinkFault::Malformed => "malformed key",
                LinkFault::MissingEntry => "names an entry that does not exist",
                LinkFault::MissingOther(_) => "the other direction is missing",
            };
            report.add(Problem::BrokenLink {
                key: hex(&key),
                reason: reason.to_string(),
            });
        }
        // Counters.
        let next_id = kv
            .get(T_META, meta::NEXT_ID)?
            .and_then(read_u64_be)
            .unwrap_or(0);
        if max_id > 0 && next_id <= max_id {
            report.add(Problem::CounterBehind {
                name: "next_id".into(),
                stored: next_id,
                needed: max_id + 1,
            });
        }
        let usn = snap.usn()?;
        if usn < max_usn {
            report.add(Problem::CounterBehind {
                name: "usn".into(),
                stored: usn,
                needed: max_usn,
            });
        }
        Ok(report)
    }
}
