//! The search planner: which indexes narrow a filter, and to which candidate ids.
//!
//! The planner works on a [`Compiled`] filter. An equality, presence, substring-initial or
//! range item on an indexed attribute reads the ids under its keys; `|` unions its
//! children and needs all of them indexed; `&` intersects the children it can read
//! cheaply. Reads are bounded: `&` first reads each child up to a small limit and stops
//! as soon as one child yields a short list (the others are then only re-checked on the
//! candidates), so `(&(objectClass=user)(sAMAccountName=x))` never reads the 100,000 ids
//! of `objectClass=user`. Candidates are always re-checked against the record, so a
//! truncated index key or a skipped child never changes a result.
//!
//! The plan is a value ([`Explain`]) that says which indexes were used, which were
//! skipped, and whether the search had to scan.

use std::fmt;
use std::ops::Bound;

use kauri_kv::{Direction, ReadTxn};

use crate::config::{DbConfig, IndexFlags};
use crate::db::T_INDEX;
use crate::error::{DbError, DbResult};
use crate::eval::{Compiled, ExtRule};
use crate::keys::{
    ge_bound, initial_prefix, le_bound, presence_prefix, read_id_suffix, value_head, value_prefix,
};

/// Sorted, duplicate-free record ids.
pub type IdList = Vec<u64>;

/// What reading an index for one filter item gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// These ids (a superset of the matches).
    Ids(IdList),
    /// More ids than the limit allowed reading.
    TooMany,
    /// No index serves this item.
    NotIndexed,
}

/// A human-readable account of a search plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explain {
    /// Index reads that narrowed the candidates, e.g. `eq(samaccountname)→1`.
    pub used: Vec<String>,
    /// Index reads abandoned because they would have returned too many ids.
    pub skipped: Vec<String>,
    /// How the scope was applied.
    pub scope: String,
    /// Number of candidate records the filter was tested on.
    pub candidates: usize,
    /// Whether the filter had no usable index and the scope was scanned.
    pub unindexed: bool,
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unindexed {
            write!(f, "UNINDEXED scan; ")?;
        }
        if !self.used.is_empty() {
            write!(f, "indexes: {}; ", self.used.join(", "))?;
        }
        if !self.skipped.is_empty() {
            write!(f, "skipped: {}; ", self.skipped.join(", "))?;
        }
        write!(f, "scope: {}; candidates: {}", self.scope, self.candidates)
    }
}

/// Plans one filter against one key-value view.
pub struct Planner<'a, R: ReadTxn> {
    /// The view whose index table is read.
    pub kv: &'a R,
    /// Index configuration and key limit.
    pub cfg: &'a DbConfig,
    /// Lowercased attribute name of an id (for index flags and explain).
    pub name_of: &'a dyn Fn(u32) -> Option<String>,
    /// The account being written.
    pub explain: Explain,
}

const FIRST_ROUND: usize = 64;
const SECOND_ROUND: usize = 4096;

fn cost_class(c: &Compiled) -> u8 {
    match c {
        Compiled::False | Compiled::Undefined => 0,
        Compiled::Eq { .. } | Compiled::Ext { .. } | Compiled::InSet(_) => 1,
        Compiled::Sub { .. } => 2,
        Compiled::Ge { .. } | Compiled::Le { .. } => 3,
        Compiled::Present { .. } | Compiled::LinkPresent { .. } => 4,
        _ => 5,
    }
}

impl<'a, R: ReadTxn> Planner<'a, R> {
    fn flags(&self, attr: u32) -> (IndexFlags, String) {
        match (self.name_of)(attr) {
            Some(n) => (self.cfg.index_of_lower(&n), n),
            None => (IndexFlags::NONE, format!("attr{attr}")),
        }
    }

    /// Reads the ids of keys in `[lo, hi)`, giving up past `limit`.
    fn scan(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        limit: usize,
        sorted: bool,
    ) -> DbResult<Option<IdList>> {
        let mut ids = Vec::new();
        for kv in self.kv.range(T_INDEX, lo, hi, Direction::Forward)? {
            let (k, _) = kv?;
            let k: &[u8] = &k;
            if ids.len() >= limit {
                return Ok(None);
            }
            ids.push(read_id_suffix(k).ok_or_else(|| DbError::corrupt("index key without id"))?);
        }
        if !sorted {
            ids.sort_unstable();
            ids.dedup();
        }
        Ok(Some(ids))
    }

    fn scan_prefix(&self, prefix: &[u8], limit: usize, sorted: bool) -> DbResult<Option<IdList>> {
        let end = kauri_kv::prefix_successor(prefix);
        let hi = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        self.scan(Bound::Included(prefix), hi, limit, sorted)
    }

    fn record(&mut self, what: String, r: Option<IdList>) -> Outcome {
        match r {
            Some(ids) => {
                self.explain.used.push(format!("{what}→{}", ids.len()));
                Outcome::Ids(ids)
            }
            None => Outcome::TooMany,
        }
    }

    fn leaf(&mut self, c: &Compiled, limit: usize) -> DbResult<Outcome> {
        let max = self.cfg.max_index_key_len;
        match c {
            Compiled::False | Compiled::Undefined => Ok(Outcome::Ids(Vec::new())),
            Compiled::Eq { attr, norm }
            | Compiled::Ext {
                attr,
                rule: ExtRule::SyntaxEq(norm),
            } => {
                let (flags, name) = self.flags(*attr);
                if !(flags.contains(IndexFlags::EQUALITY) || flags.contains(IndexFlags::UNIQUE)) {
                    return Ok(Outcome::NotIndexed);
                }
                let r = self.scan_prefix(&value_prefix(*attr, norm, max), limit, true)?;
                Ok(self.record(format!("eq({name})"), r))
            }
            Compiled::Sub {
                attr,
                initial: Some(initial),
                ..
            } => {
                let (flags, name) = self.flags(*attr);
                if !flags.contains(IndexFlags::SUBSTRING_INITIAL) || initial.is_empty() {
                    return Ok(Outcome::NotIndexed);
                }
                let r = self.scan_prefix(&initial_prefix(*attr, initial, max), limit, false)?;
                Ok(self.record(format!("sub({name})"), r))
            }
            Compiled::Ge { attr, norm } | Compiled::Le { attr, norm } => {
                let (flags, name) = self.flags(*attr);
                if !flags.contains(IndexFlags::ORDERED) {
                    return Ok(Outcome::NotIndexed);
                }
                let head = value_head(*attr);
                let r = if matches!(c, Compiled::Ge { .. }) {
                    let lo = ge_bound(*attr, norm, max);
                    let end = kauri_kv::prefix_successor(&head).unwrap_or_default();
                    self.scan(Bound::Included(&lo), Bound::Excluded(&end), limit, false)?
                } else {
                    let hi = le_bound(*attr, norm, max);
                    self.scan(Bound::Included(&head), Bound::Excluded(&hi), limit, false)?
                };
                let op = if matches!(c, Compiled::Ge { .. }) {
                    "ge"
                } else {
                    "le"
                };
                Ok(self.record(format!("{op}({name})"), r))
            }
            Compiled::InSet(ids) => {
                if ids.len() > limit {
                    return Ok(Outcome::TooMany);
                }
                Ok(self.record("links".to_string(), Some(ids.to_vec())))
            }
            Compiled::LinkPresent { attr } => {
                let name = (self.name_of)(*attr).unwrap_or_else(|| format!("attr{attr}"));
                let r = self.scan_prefix(&presence_prefix(*attr), limit, true)?;
                Ok(self.record(format!("pres({name})"), r))
            }
            Compiled::Present { attr } => {
                let (flags, name) = self.flags(*attr);
                if flags.contains(IndexFlags::PRESENCE) {
                    let r = self.scan_prefix(&presence_prefix(*attr), limit, true)?;
                    return Ok(self.record(format!("pres({name})"), r));
                }
                // An attribute with value keys has one key per value: every holder is in
                // the attribute's range of them (in value order, so sorted afterwards),
                // as AD answers presence from the attribute's index.
                if !flags.has_value_keys() {
                    return Ok(Outcome::NotIndexed);
                }
                let r = self.scan_prefix(&value_head(*attr), limit, false)?;
                Ok(self.record(format!("pres({name})"), r))
            }
            _ => Ok(Outcome::NotIndexed),
        }
    }

    /// Plans `c`, reading at most about `limit` ids from any one index.
    pub fn plan(&mut self, c: &Compiled, limit: usize) -> DbResult<Outcome> {
        match c {
            Compiled::True | Compiled::Not(_) | Compiled::ExtDn { .. } => Ok(Outcome::NotIndexed),
            Compiled::Or(cs) => {
                let mut all = Vec::new();
                for x in cs {
                    match self.plan(x, limit.saturating_sub(all.len()))? {
                        Outcome::Ids(ids) => all.extend(ids),
                        other => return Ok(other),
                    }
                    if all.len() > limit {
                        return Ok(Outcome::TooMany);
                    }
                }
                all.sort_unstable();
                all.dedup();
                Ok(Outcome::Ids(all))
            }
            Compiled::And(cs) => self.plan_and(cs, limit),
            leaf => self.leaf(leaf, limit),
        }
    }

    fn plan_and(&mut self, cs: &[Compiled], limit: usize) -> DbResult<Outcome> {
        let mut order: Vec<&Compiled> = cs.iter().collect();
        order.sort_by_key(|c| cost_class(c));
        let mut pending: Vec<&Compiled> = Vec::new();
        let mut cur: Option<IdList> = None;
        let mut any_indexed = false;
        let mut too_many: Vec<&Compiled> = Vec::new();
        for c in order {
            match self.plan(c, FIRST_ROUND.min(limit))? {
                Outcome::Ids(ids) => {
                    any_indexed = true;
                    cur = Some(match cur {
                        None => ids,
                        Some(prev) => intersect(&prev, &ids),
                    });
                }
                Outcome::TooMany => {
                    any_indexed = true;
                    pending.push(c);
                }
                Outcome::NotIndexed => {}
            }
            if cur.as_ref().is_some_and(|c| c.is_empty()) {
                return Ok(Outcome::Ids(Vec::new()));
            }
        }
        for round in [SECOND_ROUND, usize::MAX] {
            if cur.as_ref().is_some_and(|c| c.len() <= FIRST_ROUND) {
                break;
            }
            let mut next = Vec::new();
            for c in pending.drain(..) {
                let cap = match &cur {
                    Some(ids) => round.min(ids.len().saturating_mul(8).max(SECOND_ROUND)),
                    None => round,
                }
                .min(limit);
                match self.plan(c, cap)? {
                    Outcome::Ids(ids) => {
                        cur = Some(match cur {
                            None => ids,
                            Some(prev) => intersect(&prev, &ids),
                        });
                    }
                    _ => next.push(c),
                }
            }
            pending = next;
            if cur.is_some() && round == SECOND_ROUND && !pending.is_empty() {
                // A bounded candidate list exists: what is left only gets re-checked.
                too_many.append(&mut pending);
                break;
            }
        }
        for c in too_many.into_iter().chain(pending) {
            self.explain.skipped.push(describe(c, self.name_of));
        }
        match cur {
            Some(ids) => Ok(Outcome::Ids(ids)),
            None if any_indexed => Ok(Outcome::TooMany),
            None => Ok(Outcome::NotIndexed),
        }
    }
}

fn describe(c: &Compiled, name_of: &dyn Fn(u32) -> Option<String>) -> String {
    let n = |a: &u32| name_of(*a).unwrap_or_else(|| format!("attr{a}"));
    match c {
        Compiled::Eq { attr, .. } | Compiled::Ext { attr, .. } => format!("eq({})", n(attr)),
        Compiled::Sub { attr, .. } => format!("sub({})", n(attr)),
        Compiled::Ge { attr, .. } => format!("ge({})", n(attr)),
        Compiled::Le { attr, .. } => format!("le({})", n(attr)),
        Compiled::Present { attr } => format!("pres({})", n(attr)),
        Compiled::And(_) => "and(…)".to_string(),
        Compiled::Or(_) => "or(…)".to_string(),
        _ => "…".to_string(),
    }
}

/// Intersection of two sorted id lists.
pub fn intersect(a: &[u64], b: &[u64]) -> IdList {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(small.len());
    if big.len() > small.len() * 16 {
        for x in small {
            if big.binary_search(x).is_ok() {
                out.push(*x);
            }
        }
        return out;
    }
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (small.get(i), big.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(*x);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersections() {
        assert_eq!(intersect(&[1, 3, 5, 7], &[3, 4, 5]), vec![3, 5]);
        let big: Vec<u64> = (0..1000).collect();
        assert_eq!(intersect(&[5, 999, 2000], &big), vec![5, 999]);
        assert!(intersect(&[], &big).is_empty());
    }
}
