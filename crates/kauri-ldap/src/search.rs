//! Search requests: the root DSE, attribute selection, streaming in batches, size and time
//! limits, abandon, and the paged-results control.
//!
//! A search runs on a blocking thread. It plans once (a [`SearchCursor`] holds the candidate
//! ids, never entries), then repeatedly opens a snapshot, tests up to a batch of candidates,
//! encodes the matches, closes the snapshot and only then hands the encoded entries to the
//! connection, waiting when the client reads slowly. So a slow client never pins an old
//! snapshot, and a search never holds more than one batch of entries in memory. A paged
//! search keeps its cursor in the connection's [`PagedStore`] between pages.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kauri_db::read::DnCache;
use kauri_db::search::SearchCursor;
use kauri_db::syntax::{guid_to_string, sid_to_string};
use kauri_db::{DbError, Dn, Scope, SearchRequest as DbSearch};
use kauri_ldap_proto::controls::{self as ctl, ControlValue};
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{
    Attribute, Control, LdapMessage, LdapResult, MessageId, ProtocolOp, ResultCode, SearchRequest,
    SearchResultEntry, SearchScope,
};
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;

use crate::auth::Identity;
use crate::ctx::Ctx;
use crate::result::db_result;

/// Candidates tested per snapshot.
const BATCH: usize = 512;

/// Paged-search cursors of one connection, bounded in count and age.
#[derive(Default)]
pub struct PagedStore {
    next: u64,
    cursors: HashMap<u64, (SearchCursor, Instant)>,
}

impl PagedStore {
    fn put(&mut self, cursor: SearchCursor, max: usize, ttl: Duration) -> Vec<u8> {
        self.cursors.retain(|_, (_, t)| t.elapsed() < ttl);
        while self.cursors.len() >= max.max(1) {
            let oldest = self
                .cursors
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => {
                    self.cursors.remove(&k);
                }
                None => break,
            }
        }
        self.next += 1;
        let mut salt = [0u8; 8];
        let _ = getrandom::fill(&mut salt);
        let cookie = self.next ^ (u64::from_le_bytes(salt) & !0xffff_ffff);
        self.cursors.insert(cookie, (cursor, Instant::now()));
        cookie.to_be_bytes().to_vec()
    }

    fn take(&mut self, cookie: &[u8], ttl: Duration) -> Option<SearchCursor> {
        let key = u64::from_be_bytes(cookie.try_into().ok()?);
        let (c, t) = self.cursors.remove(&key)?;
        (t.elapsed() < ttl).then_some(c)
    }

    /// Cursors held.
    pub fn len(&self) -> usize {
        self.cursors.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.cursors.is_empty()
    }
}

/// Which attributes a search returns.
struct Selection {
    all_user: bool,
    names: Vec<String>,
}

impl Selection {
    fn new(requested: &[String]) -> Selection {
        let mut all_user = requested.is_empty();
        let mut names = Vec::new();
        for r in requested {
            match r.as_str() {
                "*" => all_user = true,
                "+" | "1.1" => {}
                other => names.push(other.to_ascii_lowercase()),
            }
        }
        Selection { all_user, names }
    }
}

/// Everything a search needs from the connection.
pub struct SearchJob {
    /// The message id.
    pub id: MessageId,
    /// The request.
    pub req: SearchRequest,
    /// Its controls.
    pub controls: Vec<Control>,
    /// Who asks.
    pub identity: Identity,
    /// Where encoded responses go.
    pub out: Sender<Vec<u8>>,
    /// Set by abandon.
    pub cancel: CancellationToken,
    /// The connection's paged cursors.
    pub paged: Arc<parking_lot::Mutex<PagedStore>>,
}

fn done(id: MessageId, result: LdapResult, controls: Vec<Control>) -> Vec<u8> {
    encode_message(&LdapMessage {
        id,
        op: ProtocolOp::SearchResultDone(result),
        controls,
    })
}

fn send(out: &Sender<Vec<u8>>, bytes: Vec<u8>) -> bool {
    out.blocking_send(bytes).is_ok()
}

/// Runs a search to completion on the calling (blocking) thread.
pub fn run(ctx: &Ctx, job: SearchJob) {
    let id = job.id;
    let out = job.out.clone();
    let response = match search(ctx, &job) {
        Ok(Some((result, controls))) => done(id, result, controls),
        Ok(None) => return, // abandoned or the connection went away
        Err(result) => done(id, result, Vec::new()),
    };
    let _ = send(&out, response);
}

type Outcome = Result<Option<(LdapResult, Vec<Control>)>, LdapResult>;

fn search(ctx: &Ctx, job: &SearchJob) -> Outcome {
    let req = &job.req;
    let mut paged: Option<ctl::PagedResults> = None;
    let mut extended_dn: Option<i32> = None;
    for c in &job.controls {
        match c.oid.as_str() {
            ctl::PAGED_RESULTS => match ctl::PagedResults::from_control(c) {
                Ok(p) => paged = Some(p),
                Err(e) => {
                    return Err(LdapResult::new(
                        ResultCode::PROTOCOL_ERROR,
                        format!("paged results control: {e}"),
                    ))
                }
            },
            ctl::EXTENDED_DN => match ctl::ExtendedDn::from_control(c) {
                Ok(x) => extended_dn = Some(x.format),
                Err(e) => {
                    return Err(LdapResult::new(
                        ResultCode::PROTOCOL_ERROR,
                        format!("extended DN control: {e}"),
                    ))
                }
            },
            _ => {}
        }
    }
    if req.base.is_empty() && req.scope == SearchScope::Base {
        let entry = crate::rootdse::entry(ctx, &job.identity, &req.attributes);
        if !send(
            &job.out,
            encode_message(&LdapMessage {
                id: job.id,
                op: ProtocolOp::SearchResultEntry(entry),
                controls: Vec::new(),
            }),
        ) {
            return Ok(None);
        }
        return Ok(Some((LdapResult::success(), Vec::new())));
    }
    if job.identity == Identity::Anonymous && !ctx.cfg.anonymous_read {
        return Err(LdapResult::new(
            ResultCode::OPERATIONS_ERROR,
            "a successful bind is needed to search below the root DSE",
        ));
    }
    let base = Dn::parse(&req.base).map_err(|e| {
        LdapResult::new(
            ResultCode::INVALID_DN_SYNTAX,
            format!("invalid base DN: {e}"),
        )
    })?;
    let scope = match req.scope {
        SearchScope::Base => Scope::Base,
        SearchScope::OneLevel => Scope::OneLevel,
        SearchScope::Subtree => Scope::Subtree,
        SearchScope::Children => Scope::Children,
    };
    let limit_of = |client: i64, server: usize| -> usize {
        let client = usize::try_from(client).unwrap_or(0);
        match (client, server) {
            (0, s) => s,
            (c, 0) => c,
            (c, s) => c.min(s),
        }
    };
    let size_limit = limit_of(i64::from(req.size_limit), ctx.cfg.size_limit);
    let time_limit = limit_of(i64::from(req.time_limit), ctx.cfg.time_limit_secs as usize);
    let started = Instant::now();
    let ttl = Duration::from_secs(ctx.cfg.paged_cursor_ttl_secs);

    // A page ends after `page` entries; an unpaged search after the size limit.
    let (mut cursor, page) = match &paged {
        Some(p) if !p.cookie.is_empty() => {
            let c = job.paged.lock().take(&p.cookie, ttl).ok_or_else(|| {
                LdapResult::new(
                    ResultCode::PROTOCOL_ERROR,
                    "unknown or expired paged results cookie",
                )
            })?;
            if p.size <= 0 {
                // Size 0 with a cookie abandons the paged search.
                return Ok(Some((LdapResult::success(), vec![paged_control(&[])])));
            }
            (c, usize::try_from(p.size).unwrap_or(usize::MAX))
        }
        _ => {
            let mut dreq = DbSearch::new(base, scope, req.filter.clone());
            dreq.size_limit = 0;
            let snap = ctx.db.read().map_err(|e| db_result(&e))?;
            let c = snap.open_cursor(&dreq).map_err(|e| db_result(&e))?;
            let page = match &paged {
                Some(p) if p.size > 0 => usize::try_from(p.size).unwrap_or(usize::MAX),
                _ => usize::MAX,
            };
            (c, page)
        }
    };
    let stop_after = match &paged {
        Some(_) => page,
        None if size_limit == 0 => usize::MAX,
        None => size_limit,
    };

    let sel = Selection::new(&req.attributes);
    let mut sent = 0usize;
    let mut more = true;
    while more && sent < stop_after {
        if job.cancel.is_cancelled() {
            return Ok(None);
        }
        if time_limit != 0 && started.elapsed() > Duration::from_secs(time_limit as u64) {
            return Ok(Some((
                LdapResult::new(ResultCode::TIME_LIMIT_EXCEEDED, "time limit exceeded"),
                Vec::new(),
            )));
        }
        let mut batch: Vec<Vec<u8>> = Vec::new();
        {
            let snap = ctx.db.read().map_err(|e| db_result(&e))?;
            let ids = AttrIds::new(&snap, &sel);
            let mut dns = DnCache::default();
            let mut err: Option<DbError> = None;
            let cancel = &job.cancel;
            more = snap
                .advance(&mut cursor, BATCH, |hit| {
                    if cancel.is_cancelled() {
                        return Ok(ControlFlow::Break(()));
                    }
                    let dn = snap.cached_dn(&mut dns, hit.id)?;
                    let dn = match extended_dn {
                        Some(format) => extended_dn_text(&snap, &hit.record, &dn, format),
                        None => dn,
                    };
                    let attributes = ids.attributes(&snap, &hit.record, req.types_only);
                    batch.push(encode_message(&LdapMessage {
                        id: job.id,
                        op: ProtocolOp::SearchResultEntry(SearchResultEntry { dn, attributes }),
                        controls: Vec::new(),
                    }));
                    sent += 1;
                    Ok(if sent >= stop_after {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    })
                })
                .unwrap_or_else(|e| {
                    err = Some(e);
                    false
                });
            if let Some(e) = err {
                return Err(db_result(&e));
            }
        }
        for b in batch {
            if !send(&job.out, b) {
                return Ok(None);
            }
        }
    }
    if job.cancel.is_cancelled() {
        return Ok(None);
    }
    if paged.is_some() {
        let cookie = if more {
            job.paged.lock().put(cursor, ctx.cfg.max_paged_cursors, ttl)
        } else {
            Vec::new()
        };
        return Ok(Some((LdapResult::success(), vec![paged_control(&cookie)])));
    }
    if more && sent >= stop_after {
        // The limit was reached; it was exceeded only if another entry matches.
        let snap = ctx.db.read().map_err(|e| db_result(&e))?;
        let mut another = false;
        loop {
            let left = snap
                .advance(&mut cursor, BATCH, |_| {
                    another = true;
                    Ok(ControlFlow::Break(()))
                })
                .map_err(|e| db_result(&e))?;
            if another || !left {
                break;
            }
        }
        if another {
            return Ok(Some((
                LdapResult::new(ResultCode::SIZE_LIMIT_EXCEEDED, "size limit exceeded"),
                Vec::new(),
            )));
        }
    }
    Ok(Some((LdapResult::success(), Vec::new())))
}

fn paged_control(cookie: &[u8]) -> Control {
    ctl::PagedResults {
        size: 0,
        cookie: cookie.to_vec(),
    }
    .to_control(false)
}

/// Attribute ids resolved once per snapshot for the selection.
struct AttrIds {
    all: bool,
    ids: Vec<u32>,
}

impl AttrIds {
    fn new(snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>, sel: &Selection) -> AttrIds {
        AttrIds {
            all: sel.all_user,
            ids: sel.names.iter().filter_map(|n| snap.attr_id(n)).collect(),
        }
    }

    fn attributes(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        rec: &kauri_db::record::RecordView<'_>,
        types_only: bool,
    ) -> Vec<Attribute> {
        let mut out = Vec::new();
        let mut emit = |a: kauri_db::record::AttrView<'_>| {
            let Some(name) = snap.attr_name(a.id) else {
                return;
            };
            let values = if types_only {
                Vec::new()
            } else {
                a.values().map(|v| v.raw.to_vec()).collect()
            };
            out.push(Attribute {
                name: name.to_string(),
                values,
            });
        };
        if self.all {
            for a in rec.attrs() {
                emit(a);
            }
        } else {
            for id in &self.ids {
                if let Some(a) = rec.attr(*id) {
                    emit(a);
                }
            }
        }
        out
    }
}

/// The DN in the extended form AD returns with the extended-DN control:
/// `<GUID=…>;<SID=…>;dn`, hexadecimal (format 0) or string forms (format 1).
fn extended_dn_text(
    snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
    rec: &kauri_db::record::RecordView<'_>,
    dn: &str,
    format: i32,
) -> String {
    let first = |name: &str| {
        snap.attr_id(name)
            .and_then(|id| rec.attr(id))
            .and_then(|a| a.values().next())
            .map(|v| v.raw.to_vec())
    };
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut s = String::new();
    if let Some(g) = first("objectGUID") {
        let text = match <[u8; 16]>::try_from(g.as_slice()) {
            Ok(arr) if format == 1 => guid_to_string(&arr),
            _ => hex(&g),
        };
        s.push_str(&format!("<GUID={text}>;"));
    }
    if let Some(sid) = first("objectSid") {
        let text = if format == 1 {
            sid_to_string(&sid).unwrap_or_else(|| hex(&sid))
        } else {
            hex(&sid)
        };
        s.push_str(&format!("<SID={text}>;"));
    }
    s.push_str(dn);
    s
}
