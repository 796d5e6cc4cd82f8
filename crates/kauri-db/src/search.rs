//! Searching: the scope is settled from the hierarchy before any record is read, the
//! filter is narrowed by the planner, and each candidate record is tested in place.
//!
//! Scope and index meet like this: the index and the scope (children or subtree of the
//! base, from the `tree` table) are read alternately with growing limits until one of them
//! fits. A short index list is checked id by id for being below the base (walking up the
//! `nodes` table, remembering every ancestor decided); a small scope is intersected with the
//! index. Either way the work is about the smaller of the two sizes. A search with no
//! usable index enumerates its scope (or, below the root, scans the `entries` table) and is
//! counted and logged as unindexed.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kauri_kv::{Backend, Direction, ReadTxn};

use crate::db::T_ENTRIES;
use crate::dn::Dn;
use crate::entry::Entry;
use crate::error::{DbError, DbResult};
use crate::eval::{avas_of_rdns, compile, eval, eval_hiding, Compiled, Tri};
use crate::filter::Filter;
use crate::keys::read_u64_be;
use crate::plan::{intersect, Explain, IdList, Outcome, Planner};
use crate::read::{for_each_child, node, DbRead, DnCache};
use crate::record::RecordView;

/// LDAP search scopes (RFC 4511 and the `children` scope of RFC 4512 drafts / OpenLDAP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The base entry only.
    Base,
    /// The base's immediate children.
    OneLevel,
    /// The base and everything below it.
    Subtree,
    /// Everything below the base, not the base itself.
    Children,
}

/// A search as the database sees it.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Where the search starts.
    pub base: Dn,
    /// How far below it to look.
    pub scope: Scope,
    /// What to match.
    pub filter: Filter,
    /// Stop with [`DbError::SizeLimitExceeded`] after this many entries (0 = no limit).
    pub size_limit: usize,
    /// Stop with [`DbError::TimeLimitExceeded`] after this long.
    pub time_limit: Option<Duration>,
}

impl SearchRequest {
    /// A search with no limits.
    pub fn new(base: Dn, scope: Scope, filter: Filter) -> SearchRequest {
        SearchRequest {
            base,
            scope,
            filter,
            size_limit: 0,
            time_limit: None,
        }
    }
}

/// What a reader may see of a record ([`DbRead::advance_seen`]).
#[derive(Debug, Clone)]
pub enum Sight {
    /// The record is not there for this reader.
    Invisible,
    /// Every attribute is.
    Whole,
    /// The attributes with these ids (sorted) are not.
    Partly(std::sync::Arc<[u32]>),
}

/// One matching entry, handed to the search callback.
pub struct Hit<'s> {
    /// Record id.
    pub id: u64,
    /// The record, read in place.
    pub record: RecordView<'s>,
}

/// What a finished search reports.
#[derive(Debug, Clone, Default)]
pub struct SearchStats {
    /// The plan that ran.
    pub explain: Explain,
    /// Entries passed to the callback.
    pub returned: usize,
}

/// Index reads first try to stay below this many ids; a shorter list is checked against
/// the scope id by id.
const PROBE_LIMIT: usize = 256;
/// The alternating limits of index reads and scope enumerations (see
/// [`DbRead::search`]); the last step has no limit, so it always decides.
const STEPS: [(usize, usize); 5] = [
    (16, 64),
    (PROBE_LIMIT, 1024),
    (4096, 16_384),
    (65_536, 262_144),
    (usize::MAX, usize::MAX),
];

/// A planned search that can be advanced batch by batch, in any snapshot of the same
/// database (see [`DbRead::open_cursor`]). It holds record ids, not entries.
#[derive(Debug, Clone)]
pub struct SearchCursor {
    compiled: Compiled,
    cands: CursorCands,
    explain: Explain,
    examined: usize,
    returned: usize,
}

#[derive(Debug, Clone)]
enum CursorCands {
    Ids { ids: IdList, pos: usize },
    All { next_id: u64 },
}

impl SearchCursor {
    /// A cursor over given record ids, delivered in the given order (e.g. after sorting
    /// matches for the server-side sort control); ids deleted meanwhile are skipped.
    pub fn from_ids(ids: IdList) -> SearchCursor {
        SearchCursor {
            compiled: Compiled::True,
            cands: CursorCands::Ids { ids, pos: 0 },
            explain: Explain::default(),
            examined: 0,
            returned: 0,
        }
    }

    /// The same search delivering `ids` in the given order (the server-side sort), each
    /// tested against the filter again when reached: entries deleted or changed so that
    /// they no longer match drop out of later pages.
    pub fn reorder(&self, ids: IdList) -> SearchCursor {
        SearchCursor {
            compiled: self.compiled.clone(),
            cands: CursorCands::Ids { ids, pos: 0 },
            explain: self.explain.clone(),
            examined: 0,
            returned: 0,
        }
    }

    /// The plan that produced the candidates.
    pub fn explain(&self) -> &Explain {
        &self.explain
    }

    /// The attribute ids the filter asserts on (an access check masks those the
    /// reader may not read).
    pub fn filter_attributes(&self) -> Vec<u32> {
        self.compiled.attributes()
    }

    /// Candidates tested so far.
    pub fn examined(&self) -> usize {
        self.examined
    }

    /// Matches delivered so far.
    pub fn returned(&self) -> usize {
        self.returned
    }

    /// Candidates left to test, when known (`None` while scanning the whole table).
    pub fn remaining(&self) -> Option<usize> {
        match &self.cands {
            CursorCands::Ids { ids, pos } => Some(ids.len().saturating_sub(*pos)),
            CursorCands::All { .. } => None,
        }
    }

    /// Bytes of memory the cursor holds (for per-connection limits).
    pub fn memory(&self) -> usize {
        match &self.cands {
            CursorCands::Ids { ids, .. } => ids.capacity() * 8,
            CursorCands::All { .. } => 0,
        }
    }
}

/// Candidate ids for the filter test.
enum Candidates {
    Ids(IdList),
    /// Every record (a subtree search from the root with no usable index).
    All,
}

impl<'d, B: Backend> DbRead<'d, B> {
    /// Compiles a filter for this snapshot. Filters nested deeper than
    /// [`crate::filter::MAX_FILTER_DEPTH`] are refused (compiling, planning and evaluating
    /// recurse, and a filter built by hand or decoded from the wire could be arbitrarily
    /// deep).
    pub fn compile(&self, filter: &Filter) -> DbResult<Compiled> {
        if filter.depth() > crate::filter::MAX_FILTER_DEPTH {
            return Err(DbError::BadFilter(format!(
                "filter nested deeper than {} levels",
                crate::filter::MAX_FILTER_DEPTH
            )));
        }
        Ok(compile(filter, &self.cfg, self))
    }

    fn name_lower_fn(&self) -> impl Fn(u32) -> Option<String> + '_ {
        move |id| self.attr_name(id).map(|n| n.to_ascii_lowercase())
    }

    /// Says how a search would run, without running it.
    pub fn explain(&self, req: &SearchRequest) -> DbResult<Explain> {
        let compiled = self.compile(&req.filter)?;
        let (_, explain) = self.candidates(req, &compiled)?;
        Ok(explain)
    }

    fn candidates(
        &self,
        req: &SearchRequest,
        compiled: &Compiled,
    ) -> DbResult<(Candidates, Explain)> {
        let base = self
            .lookup(&req.base)?
            .ok_or_else(|| DbError::NoSuchObject(req.base.to_string()))?;
        let name_of = self.name_lower_fn();
        let kv = &self.kv;
        let mut explain = Explain::default();
        let plan = |limit: usize, explain: &mut Explain| -> DbResult<Outcome> {
            let mut planner = Planner {
                kv,
                cfg: &self.cfg,
                name_of: &name_of,
                explain: Explain::default(),
            };
            let out = planner.plan(compiled, limit)?;
            if matches!(out, Outcome::Ids(_)) {
                explain.used = planner.explain.used;
                explain.skipped = planner.explain.skipped;
            }
            Ok(out)
        };
        let cands = match req.scope {
            Scope::Base => {
                explain.scope = "base".into();
                if base == 0 {
                    Candidates::Ids(Vec::new())
                } else {
                    Candidates::Ids(vec![base])
                }
            }
            Scope::Subtree | Scope::Children if base == 0 => {
                explain.scope = "whole tree".into();
                match plan(usize::MAX, &mut explain)? {
                    Outcome::Ids(ids) => Candidates::Ids(ids),
                    _ => {
                        explain.unindexed = true;
                        Candidates::All
                    }
                }
            }
            scope => {
                let one_level = scope == Scope::OneLevel;
                let include_base = scope == Scope::Subtree;
                // Which candidates lie in the scope: one-level compares the parent;
                // subtree walks up, remembering every ancestor already decided.
                let filter_ids = |ids: Vec<u64>| -> DbResult<IdList> {
                    let mut kept = Vec::with_capacity(ids.len());
                    // Only the subtree walk uses (and so allocates) the memo.
                    let mut known: HashMap<u64, bool> = HashMap::new();
                    if !one_level {
                        known.insert(base, true);
                        known.insert(0, false);
                    }
                    let mut path = Vec::new();
                    for id in ids {
                        let keep = if one_level {
                            node(kv, id)?.is_some_and(|(p, _)| p == base)
                        } else if id == base {
                            include_base
                        } else {
                            path.clear();
                            let mut cur = id;
                            let verdict = loop {
                                let Some((parent, _)) = node(kv, cur)? else {
                                    break false;
                                };
                                if let Some(v) = known.get(&parent) {
                                    break *v;
                                }
                                path.push(parent);
                                if path.len() > 10_000 {
                                    return Err(DbError::corrupt("hierarchy loop"));
                                }
                                cur = parent;
                            };
                            for p in &path {
                                known.insert(*p, verdict);
                            }
                            verdict
                        };
                        if keep {
                            kept.push(id);
                        }
                    }
                    Ok(kept)
                };
                // The cheaper side leads. Index and scope are read alternately with
                // growing limits; the first to fit wins: a short index list is checked
                // against the scope id by id, a small scope is enumerated and intersected
                // with the index (read no further than the scope is large). Every step
                // costs at most a constant times the step before, so the whole costs about
                // the smaller of the two sizes.
                let mut indexed = true;
                let mut chosen = None;
                for (index_cap, scope_cap) in STEPS {
                    if indexed {
                        match plan(index_cap, &mut explain)? {
                            Outcome::Ids(ids) => {
                                explain.scope = "ancestor check of index candidates".into();
                                chosen = Some(Candidates::Ids(filter_ids(ids)?));
                                break;
                            }
                            Outcome::NotIndexed => indexed = false,
                            Outcome::TooMany => {}
                        }
                    }
                    if let Some(scope_ids) =
                        enumerate_scope(kv, base, one_level, include_base, scope_cap)?
                    {
                        explain.scope = format!("enumerated {} ids", scope_ids.len());
                        chosen = Some(if !indexed {
                            explain.unindexed = true;
                            Candidates::Ids(scope_ids)
                        } else {
                            match plan(scope_ids.len().saturating_mul(2).max(16), &mut explain)? {
                                Outcome::Ids(ids) => Candidates::Ids(intersect(&scope_ids, &ids)),
                                _ => Candidates::Ids(scope_ids),
                            }
                        });
                        break;
                    }
                }
                chosen.unwrap_or(Candidates::Ids(Vec::new()))
            }
        };
        explain.candidates = match &cands {
            Candidates::Ids(v) => v.len(),
            Candidates::All => usize::MAX,
        };
        Ok((cands, explain))
    }

    /// Plans a search and returns a cursor over its matches. The cursor holds the compiled
    /// filter and the candidate ids (or a position in the `entries` table), never entries
    /// or a snapshot, so it can be advanced in later snapshots (a paged search, or a long
    /// search that releases its snapshot between batches); entries deleted meanwhile are
    /// skipped.
    pub fn open_cursor(&self, req: &SearchRequest) -> DbResult<SearchCursor> {
        let compiled = self.compile(&req.filter)?;
        let (cands, explain) = self.candidates(req, &compiled)?;
        if explain.unindexed {
            let n = self.db.unindexed.fetch_add(1, Ordering::Relaxed);
            if n < self.cfg.unindexed_warn_limit {
                tracing::warn!(filter = %req.filter, base = %req.base, "unindexed search: {explain}");
            }
        }
        Ok(SearchCursor {
            compiled,
            cands: match cands {
                Candidates::Ids(ids) => CursorCands::Ids { ids, pos: 0 },
                Candidates::All => CursorCands::All { next_id: 0 },
            },
            explain,
            examined: 0,
            returned: 0,
        })
    }

    /// Tests up to `max_candidates` more candidates of a cursor in this snapshot, calling
    /// `f` with each match until it breaks (the match that breaks counts as delivered).
    /// Returns whether candidates remain.
    pub fn advance(
        &self,
        cursor: &mut SearchCursor,
        max_candidates: usize,
        f: impl FnMut(Hit<'_>) -> DbResult<ControlFlow<()>>,
    ) -> DbResult<bool> {
        self.advance_seen(cursor, max_candidates, &mut |_, _| Ok(Sight::Whole), f)
    }

    /// [`DbRead::advance`] for a reader who may not see every record or attribute:
    /// `sight` says, before the filter is tested, whether the record is visible and which
    /// attributes the filter must treat as absent ([`crate::eval::eval_hiding`]).
    pub fn advance_seen(
        &self,
        cursor: &mut SearchCursor,
        max_candidates: usize,
        sight: &mut dyn FnMut(u64, &RecordView<'_>) -> DbResult<Sight>,
        mut f: impl FnMut(Hit<'_>) -> DbResult<ControlFlow<()>>,
    ) -> DbResult<bool> {
        let cfg = &self.cfg;
        let compiled = &cursor.compiled;
        let mut test = |id: u64, rec: RecordView<'_>| -> DbResult<Option<ControlFlow<()>>> {
            let seen = sight(id, &rec)?;
            let mut dn_avas = || {
                let mut names = Vec::new();
                let mut cur = id;
                while cur != 0 {
                    match node(&self.kv, cur) {
                        Ok(Some((p, r))) => {
                            names.push(r);
                            cur = p;
                        }
                        _ => break,
                    }
                }
                avas_of_rdns(names.into_iter())
            };
            let matched = match &seen {
                Sight::Invisible => return Ok(None),
                Sight::Whole => eval(compiled, id, &rec, cfg, self, &mut dn_avas),
                Sight::Partly(hidden) => {
                    let hides = |a: u32| hidden.binary_search(&a).is_ok();
                    eval_hiding(compiled, id, &rec, cfg, self, &mut dn_avas, &hides)
                }
            };
            if matched != Tri::True {
                return Ok(None);
            }
            f(Hit { id, record: rec }).map(Some)
        };
        let mut budget = max_candidates;
        match &mut cursor.cands {
            CursorCands::Ids { ids, pos } => {
                while budget > 0 {
                    let Some(&id) = ids.get(*pos) else { break };
                    *pos += 1;
                    budget -= 1;
                    cursor.examined += 1;
                    let Some(rec) = self.record(id)? else {
                        continue;
                    };
                    if let Some(flow) = test(id, rec)? {
                        cursor.returned += 1;
                        if flow.is_break() {
                            break;
                        }
                    }
                }
                Ok(*pos < ids.len())
            }
            CursorCands::All { next_id } => {
                let from = next_id.to_be_bytes();
                let mut more = false;
                for item in self.kv.range(
                    T_ENTRIES,
                    std::ops::Bound::Included(&from[..]),
                    std::ops::Bound::Unbounded,
                    Direction::Forward,
                )? {
                    if budget == 0 {
                        more = true;
                        break;
                    }
                    let (k, v) = item?;
                    let k: &[u8] = &k;
                    let id =
                        read_u64_be(k).ok_or_else(|| DbError::corrupt("entry key is not an id"))?;
                    *next_id = id.saturating_add(1);
                    budget -= 1;
                    cursor.examined += 1;
                    if let Some(flow) = test(id, RecordView::parse(v)?)? {
                        cursor.returned += 1;
                        if flow.is_break() {
                            more = true;
                            break;
                        }
                    }
                }
                Ok(more)
            }
        }
    }

    /// Runs a search, calling `f` with each matching entry in id order until it breaks.
    /// Size and time limits end the search with their errors after the entries already
    /// delivered.
    pub fn search(
        &self,
        req: &SearchRequest,
        mut f: impl FnMut(Hit<'_>) -> DbResult<ControlFlow<()>>,
    ) -> DbResult<SearchStats> {
        let start = Instant::now();
        let mut cursor = self.open_cursor(req)?;
        let mut stopped = false;
        let mut delivered = 0usize;
        loop {
            let mut over_limit = false;
            let more = self.advance(&mut cursor, 256, |hit| {
                if req.size_limit != 0 && delivered >= req.size_limit {
                    over_limit = true;
                    return Ok(ControlFlow::Break(()));
                }
                delivered += 1;
                let flow = f(hit)?;
                if flow.is_break() {
                    stopped = true;
                }
                Ok(flow)
            });
            let more = more?;
            if over_limit {
                return Err(DbError::SizeLimitExceeded);
            }
            if stopped || !more {
                break;
            }
            if let Some(limit) = req.time_limit {
                if start.elapsed() > limit {
                    return Err(DbError::TimeLimitExceeded);
                }
            }
        }
        Ok(SearchStats {
            returned: delivered,
            explain: cursor.explain,
        })
    }

    /// Runs a search and returns every match as `(DN, owned entry)`; for tools and tests.
    pub fn search_entries(&self, req: &SearchRequest) -> DbResult<Vec<Entry>> {
        let mut out = Vec::new();
        let mut dns = DnCache::default();
        self.search(req, |hit| {
            let dn_text = dns.dn(&self.kv, hit.id)?;
            let dn = Dn::parse(&dn_text)
                .map_err(|e| DbError::corrupt(format!("stored DN does not parse: {e}")))?;
            out.push(self.to_entry(hit.id, dn, &hit.record));
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(out)
    }

    /// Like [`DbRead::search`] but only counts matches (benchmarks, stats).
    pub fn search_count(&self, req: &SearchRequest) -> DbResult<usize> {
        Ok(self
            .search(req, |_| Ok(ControlFlow::Continue(())))?
            .returned)
    }

    /// A fresh cache for building result DNs.
    pub fn dn_cache(&self) -> DnCache {
        DnCache::default()
    }

    /// The DN text of a record, through a cache shared across one search's results.
    pub fn cached_dn(&self, cache: &mut DnCache, id: u64) -> DbResult<String> {
        cache.dn(&self.kv, id)
    }
}

/// Collects the ids of a scope from the `tree` table (children only, or a whole subtree,
/// with or without the base), sorted; `None` as soon as there are more than `cap`.
pub fn enumerate_scope<R: ReadTxn>(
    kv: &R,
    base: u64,
    one_level: bool,
    include_base: bool,
    cap: usize,
) -> DbResult<Option<IdList>> {
    let mut out: IdList = Vec::new();
    if include_base {
        out.push(base);
    }
    let mut stack = vec![base];
    let mut over = false;
    while let Some(parent) = stack.pop() {
        let mut err = None;
        for_each_child(kv, parent, |id| {
            if out.len() >= cap {
                over = true;
                return false;
            }
            out.push(id);
            if !one_level {
                stack.push(id);
            }
            true
        })
        .map_err(|e| err = Some(e))
        .ok();
        if let Some(e) = err {
            return Err(e);
        }
        if over {
            return Ok(None);
        }
    }
    out.sort_unstable();
    Ok(Some(out))
}
