//! Search requests: the root DSE, attribute selection, streaming in batches, size and time
//! limits, abandon, and the paged-results control.
//!
//! A search runs on a blocking thread. It plans once (a [`SearchCursor`] holds the candidate
//! ids, never entries), then repeatedly opens a snapshot, tests up to a batch of candidates,
//! encodes the matches, closes the snapshot and only then hands the encoded entries to the
//! connection, waiting when the client reads slowly. So a slow client never pins an old
//! snapshot, and a search never holds more than one batch of entries in memory. A paged
//! search keeps its cursor, and a VLV search its sorted list, in the connection's
//! [`CursorStore`] between requests.

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
/// Bytes of encoded entries a batch collects at most before it is handed over.
const BATCH_BYTES: usize = 4 << 20;

/// VLV result lists a connection keeps at most (AD keeps ten per connection; an older
/// context id is then refused).
const VLV_CONTEXTS: usize = 10;

/// A VLV search's sorted result list, kept under the context id given to the client, so
/// later windows neither search nor sort again (AD's behaviour: entries added meanwhile
/// stay out, deleted ones drop out, changed ones show their new values in their old place).
struct VlvContext {
    /// The search the list answers (see [`fingerprint`]).
    fingerprint: Vec<u8>,
    /// The filter, to test each entry again when a window reaches it.
    cursor: SearchCursor,
    /// Record ids in sorted order.
    ids: Vec<u64>,
}

/// The search state one connection keeps between requests: paged-search cursors and VLV
/// result lists, each bounded in count and age.
#[derive(Default)]
pub struct CursorStore {
    next: u64,
    cursors: HashMap<u64, (SearchCursor, Vec<u8>, Instant)>,
    vlv: HashMap<u64, (Arc<VlvContext>, Instant)>,
}

/// Drops entries older than `ttl`, then the oldest until fewer than `max` remain.
fn make_room<T>(map: &mut HashMap<u64, T>, age: impl Fn(&T) -> Instant, max: usize, ttl: Duration) {
    map.retain(|_, v| age(v).elapsed() < ttl);
    while map.len() >= max.max(1) {
        let Some(oldest) = map.iter().min_by_key(|(_, v)| age(v)).map(|(k, _)| *k) else {
            break;
        };
        map.remove(&oldest);
    }
}

impl CursorStore {
    /// A fresh key: a counter with random high bits, so a client cannot guess another
    /// search's cookie from its own.
    fn key(&mut self) -> u64 {
        self.next += 1;
        let mut salt = [0u8; 8];
        let _ = getrandom::fill(&mut salt);
        self.next ^ (u64::from_le_bytes(salt) & !0xffff_ffff)
    }

    fn put(
        &mut self,
        cursor: SearchCursor,
        fingerprint: Vec<u8>,
        max: usize,
        ttl: Duration,
    ) -> Vec<u8> {
        make_room(&mut self.cursors, |v| v.2, max, ttl);
        let key = self.key();
        self.cursors
            .insert(key, (cursor, fingerprint, Instant::now()));
        key.to_be_bytes().to_vec()
    }

    fn take(&mut self, cookie: &[u8], ttl: Duration) -> Option<(SearchCursor, Vec<u8>)> {
        let key = u64::from_be_bytes(cookie.try_into().ok()?);
        let (c, f, t) = self.cursors.remove(&key)?;
        (t.elapsed() < ttl).then_some((c, f))
    }

    fn put_vlv(&mut self, context: Arc<VlvContext>, ttl: Duration) -> Vec<u8> {
        make_room(&mut self.vlv, |v| v.1, VLV_CONTEXTS, ttl);
        let key = self.key();
        self.vlv.insert(key, (context, Instant::now()));
        key.to_be_bytes().to_vec()
    }

    fn get_vlv(&mut self, id: &[u8], ttl: Duration) -> Option<Arc<VlvContext>> {
        let key = u64::from_be_bytes(id.try_into().ok()?);
        let (c, t) = self.vlv.get_mut(&key)?;
        if t.elapsed() >= ttl {
            self.vlv.remove(&key);
            return None;
        }
        // A context in use stays young.
        *t = Instant::now();
        Some(c.clone())
    }

    /// Paged cursors and VLV lists held.
    pub fn len(&self) -> usize {
        self.cursors.len() + self.vlv.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.cursors.is_empty() && self.vlv.is_empty()
    }
}

/// What identifies a search across pages: base, scope, filter, attributes (when
/// `with_attributes`) and the controls other than those in `skip`, in any order. A paged
/// search continued with a different one is refused, as AD does.
fn fingerprint(
    req: &SearchRequest,
    controls: &[Control],
    skip: &[&str],
    with_attributes: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |b: &[u8]| {
        out.extend_from_slice(&(b.len() as u64).to_be_bytes());
        out.extend_from_slice(b);
    };
    field(req.base.to_ascii_lowercase().as_bytes());
    field(&[req.scope as u8, u8::from(req.types_only)]);
    field(format!("{:?}", req.filter).as_bytes());
    if with_attributes {
        for a in &req.attributes {
            field(a.to_ascii_lowercase().as_bytes());
        }
    }
    let mut ctls: Vec<&Control> = controls
        .iter()
        .filter(|c| !skip.contains(&c.oid.as_str()))
        .collect();
    ctls.sort_by(|a, b| a.oid.cmp(&b.oid).then(a.value.cmp(&b.value)));
    for c in ctls {
        field(c.oid.as_bytes());
        field(&[u8::from(c.critical)]);
        field(c.value.as_deref().unwrap_or_default());
    }
    out
}

/// A range of value positions asked for: first, and last (`None` = to the end).
type ValueRange = (usize, Option<usize>);

/// One requested attribute, with the value range asked for (`member;range=0-*`).
struct Wanted {
    name: String,
    range: Option<ValueRange>,
}

/// Which attributes a search returns.
struct Selection {
    all_user: bool,
    wanted: Vec<Wanted>,
}

/// Splits `name;range=low-high` (or `low-*`) into the name and the range.
fn parse_range(requested: &str) -> (String, Option<ValueRange>) {
    let lower = requested.to_ascii_lowercase();
    let mut base = Vec::new();
    let mut range = None;
    for (i, part) in lower.split(';').enumerate() {
        if i > 0 {
            if let Some(spec) = part.strip_prefix("range=") {
                if let Some((lo, hi)) = spec.split_once('-') {
                    if let Ok(lo) = lo.parse::<usize>() {
                        let hi = if hi == "*" {
                            None
                        } else {
                            hi.parse::<usize>().ok()
                        };
                        // A range that ends before it starts asks for nothing valid.
                        if hi.is_some_and(|h| h < lo) {
                            continue;
                        }
                        if hi.is_some() || spec.ends_with('*') {
                            range = Some((lo, hi));
                            continue;
                        }
                    }
                }
            }
        }
        base.push(part);
    }
    (base.join(";"), range)
}

impl Selection {
    fn new(requested: &[String]) -> Selection {
        let mut all_user = requested.is_empty();
        let mut wanted = Vec::new();
        for r in requested {
            match r.as_str() {
                "*" => all_user = true,
                "+" | "1.1" => {}
                other => {
                    let (name, range) = parse_range(other);
                    wanted.push(Wanted { name, range });
                }
            }
        }
        Selection { all_user, wanted }
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
    pub out: Sink,
    /// Set by abandon.
    pub cancel: CancellationToken,
    /// The connection's paged cursors and VLV lists.
    pub paged: Arc<parking_lot::Mutex<CursorStore>>,
    /// The client's address (an LDAP ping answers with the client's site).
    pub client: Option<std::net::IpAddr>,
    /// Whether the search came to the global catalog: the whole forest, partial
    /// attribute set only.
    pub catalog: bool,
}

fn done(id: MessageId, result: LdapResult, controls: Vec<Control>) -> Vec<u8> {
    encode_message(&LdapMessage {
        id,
        op: ProtocolOp::SearchResultDone(result),
        controls,
    })
}

/// Where a search's encoded responses go: the connection's channel (a search on a
/// blocking thread, waiting while the client reads slowly), or a buffer the connection
/// writes itself (a small search run on the connection's own task).
pub enum Sink {
    /// The connection's response channel.
    Channel(Sender<Vec<u8>>),
    /// Responses kept for the connection task; `too_big` is set when the search turned out
    /// to need more than [`INLINE_CANDIDATES`] candidates, or more than [`INLINE_BUDGET`]
    /// of time, and was not finished.
    Buffer {
        /// The encoded responses, in order.
        messages: parking_lot::Mutex<Vec<Vec<u8>>>,
        /// Set when the search must run on a blocking thread instead.
        too_big: std::sync::atomic::AtomicBool,
        /// When the search started.
        started: Instant,
    },
}

impl Sink {
    /// A buffer for a search run on the connection task.
    pub fn buffer() -> Sink {
        Sink::Buffer {
            messages: parking_lot::Mutex::new(Vec::new()),
            too_big: std::sync::atomic::AtomicBool::new(false),
            started: Instant::now(),
        }
    }

    /// Whether a search on the connection task has used up its time: it is then marked
    /// too big, stops, and runs again from the start on a blocking thread, so no search
    /// holds up the other connections served by the same thread.
    fn over_budget(&self) -> bool {
        match self {
            Sink::Buffer {
                too_big, started, ..
            } if started.elapsed() > INLINE_BUDGET => {
                too_big.store(true, std::sync::atomic::Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// Whether a buffered search declined to run inline.
    pub fn too_big(&self) -> bool {
        matches!(self, Sink::Buffer { too_big, .. } if too_big.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The buffered responses.
    pub fn take(&self) -> Vec<Vec<u8>> {
        match self {
            Sink::Buffer { messages, .. } => std::mem::take(&mut *messages.lock()),
            Sink::Channel(_) => Vec::new(),
        }
    }
}

/// Searches whose plan holds at most this many candidates (and no paging, sorting or VLV)
/// run on the connection's own task: their few record reads cost less than two thread
/// hand-overs.
pub const INLINE_CANDIDATES: usize = 32;

/// The most time a search may take on the connection's own task; one that needs more
/// (an expensive filter, large constructed attributes) is moved to a blocking thread.
pub const INLINE_BUDGET: Duration = Duration::from_millis(2);

fn send(out: &Sink, bytes: Vec<u8>) -> bool {
    match out {
        Sink::Channel(tx) => tx.blocking_send(bytes).is_ok(),
        Sink::Buffer { messages, .. } => {
            messages.lock().push(bytes);
            true
        }
    }
}

/// Bytes of encoded entries handed to the connection at once.
const SEND_CHUNK: usize = 64 << 10;

/// Hands encoded messages to the connection, packed into chunks of about
/// [`SEND_CHUNK`] bytes so a large result costs few hand-overs and few socket writes.
fn send_all(out: &Sink, batch: Vec<Vec<u8>>) -> bool {
    let mut chunk: Vec<u8> = Vec::new();
    for b in batch {
        if chunk.is_empty() {
            chunk = b;
        } else {
            chunk.extend_from_slice(&b);
        }
        if chunk.len() >= SEND_CHUNK && !send(out, std::mem::take(&mut chunk)) {
            return false;
        }
    }
    chunk.is_empty() || send(out, chunk)
}

/// Runs a search to completion on the calling (blocking) thread; returns whether it ended
/// in success (`None` when abandoned or the connection went away).
pub fn run(ctx: &Ctx, job: &SearchJob) -> Option<bool> {
    let id = job.id;
    let out = &job.out;
    let (response, ok) = match search(ctx, job) {
        Ok(Some((result, controls))) => {
            let ok = result.code == ResultCode::SUCCESS;
            (done(id, result, controls), ok)
        }
        Ok(None) => return None,
        Err(result) => (done(id, result, Vec::new()), false),
    };
    if out.too_big() {
        return None;
    }
    let _ = send(out, response);
    Some(ok)
}

type Outcome = Result<Option<(LdapResult, Vec<Control>)>, LdapResult>;

/// A request control's value, or the protocolError a client gets for a malformed one.
fn decode_control<T: ControlValue>(c: &Control, what: &str) -> Result<T, LdapResult> {
    T::from_control(c)
        .map_err(|e| LdapResult::new(ResultCode::PROTOCOL_ERROR, format!("{what}: {e}")))
}

fn search(ctx: &Ctx, job: &SearchJob) -> Outcome {
    let req = &job.req;
    let mut paged: Option<ctl::PagedResults> = None;
    let mut extended_dn: Option<i32> = None;
    let mut sort: Option<ctl::SortRequest> = None;
    let mut vlv: Option<ctl::VlvRequest> = None;
    let mut vlv_critical = false;
    let mut asq: Option<ctl::Asq> = None;
    for c in &job.controls {
        match c.oid.as_str() {
            ctl::SORT_REQUEST => {
                let x: ctl::SortRequest = decode_control(c, "sort control")?;
                if x.keys.is_empty() {
                    return Err(LdapResult::new(
                        ResultCode::PROTOCOL_ERROR,
                        "sort control without keys",
                    ));
                }
                // Sorting (and VLV positions) would order by values the caller may not
                // read, which reveals them a comparison at a time. (Attributes a global
                // catalog leaves out sort as absent: see `sort_matches`.)
                let hidden = ctx.hidden_attributes(ctx.reads_beyond_policy(&job.identity), false);
                if let Some(k) = x.keys.iter().find(|k| {
                    let base = k.attribute.split(';').next().unwrap_or(&k.attribute);
                    hidden.iter().any(|h| h.eq_ignore_ascii_case(base))
                        || ctx
                            .dir
                            .schema()
                            .schema
                            .attribute_by_oid(base)
                            .is_some_and(|d| hidden.contains(&d.ldap_name))
                }) {
                    return Err(LdapResult::new(
                        ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                        format!("cannot sort on {}", k.attribute),
                    ));
                }
                sort = Some(x);
            }
            ctl::VLV_REQUEST => {
                vlv = Some(decode_control(c, "VLV control")?);
                vlv_critical = c.critical;
            }
            ctl::PAGED_RESULTS => paged = Some(decode_control(c, "paged results control")?),
            ctl::ASQ => asq = Some(decode_control(c, "attribute scoped query control")?),
            ctl::EXTENDED_DN => {
                let x: ctl::ExtendedDn = decode_control(c, "extended DN control")?;
                extended_dn = Some(x.format);
            }
            _ => {}
        }
    }
    if req.base.is_empty() && req.scope == SearchScope::Base {
        // Asking for Netlogon makes the search an LDAP ping: the one attribute when the
        // filter names this DC's domain, no entry otherwise.
        let entry = if crate::netlogon::wants_netlogon(&req.attributes) {
            let server = ctx
                .cfg()
                .listen
                .parse::<std::net::SocketAddr>()
                .ok()
                .map(|a| a.ip());
            crate::netlogon::answer(ctx, &req.filter, job.client, server)
                .map(|blob| crate::netlogon::entry(ctx, &req.attributes, &job.identity, blob))
        } else {
            Some(crate::rootdse::entry(ctx, &req.attributes, &job.identity))
        };
        let Some(entry) = entry else {
            return Ok(Some((LdapResult::success(), Vec::new())));
        };
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
    // Only a base named `CN=Aggregate` can be the subschema entry: other base searches
    // (the common read of one object) skip working out the default naming context.
    let base_dn = ctx.parse_dn("base DN", &crate::extdn::plain_dn(ctx, &req.base));
    let aggregate = base_dn
        .as_ref()
        .ok()
        .and_then(Dn::rdn)
        .is_some_and(|r| r.norm() == "cn=aggregate");
    if req.scope == SearchScope::Base && aggregate {
        let subschema_dn = crate::subschema::Subschema::dn(&ctx.default_naming_context());
        let same = match (&base_dn, Dn::parse(&subschema_dn)) {
            (Ok(a), Ok(b)) => *a == b,
            _ => false,
        };
        if same {
            let entry = ctx.subschema().entry(&subschema_dn, &req.attributes);
            let msg = encode_message(&LdapMessage {
                id: job.id,
                op: ProtocolOp::SearchResultEntry(entry),
                controls: Vec::new(),
            });
            if !send(&job.out, msg) {
                return Ok(None);
            }
            return Ok(Some((LdapResult::success(), Vec::new())));
        }
    }
    if job.identity == Identity::Anonymous && !ctx.anonymous_allowed() {
        let text = if ctx.dir.domain().is_some() {
            // AD's own words, which AD-aware clients recognise.
            "000004DC: LdapErr: DSID-0C090A5C, comment: In order to perform this operation a \
             successful bind must be completed on the connection., data 0, v4563"
        } else {
            "a successful bind is needed to search below the root DSE"
        };
        return Err(LdapResult::new(ResultCode::OPERATIONS_ERROR, text));
    }
    let base = base_dn?;
    base_visible(ctx, job, &base)?;
    let filter = effective_filter(ctx, job);
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
    let cfg = ctx.cfg();
    let size_limit = limit_of(i64::from(req.size_limit), cfg.size_limit);
    let time_limit = limit_of(i64::from(req.time_limit), cfg.time_limit_secs as usize);
    let started = Instant::now();
    let ttl = Duration::from_secs(cfg.paged_cursor_ttl_secs);
    if vlv.is_some() && sort.is_none() {
        return Err(LdapResult::new(
            ResultCode::UNWILLING_TO_PERFORM,
            "the VLV control needs the server-side sort control",
        ));
    }
    if vlv.is_some() && paged.is_some() {
        // AD's answer to the combination.
        return Err(LdapResult::new(
            ResultCode::UNAVAILABLE_CRITICAL_EXTENSION,
            "the VLV and paged results controls cannot be combined",
        ));
    }
    if let (Some(v), Some(keys)) = (&vlv, &sort) {
        return vlv_search(
            ctx,
            job,
            &base,
            scope,
            &filter,
            keys,
            v,
            vlv_critical,
            extended_dn,
        );
    }
    if let Some(q) = &asq {
        return asq_search(ctx, job, &base, scope, &filter, q, extended_dn);
    }
    let continuing = paged.as_ref().is_some_and(|p| !p.cookie.is_empty());
    // The global catalog holds every naming context: nothing to refer to.
    if !continuing && !job.catalog {
        // AD answers a search that spans a subordinate naming context (the configuration
        // partition below the domain) with a continuation reference to it, once.
        for url in subordinate_referrals(ctx, &base, scope) {
            let msg = encode_message(&LdapMessage {
                id: job.id,
                op: ProtocolOp::SearchResultReference(vec![url]),
                controls: Vec::new(),
            });
            if !send(&job.out, msg) {
                return Ok(None);
            }
        }
    }
    let paged_fingerprint = || fingerprint(req, &job.controls, &[ctl::PAGED_RESULTS], true);
    let mut sorted_cursor: Option<SearchCursor> = None;
    let mut extra_controls: Vec<Control> = Vec::new();
    if let (Some(keys), false) = (&sort, continuing) {
        let mut dreq = DbSearch::new(base.clone(), scope, filter.clone());
        dreq.size_limit = 0;
        let (ids, template) = match sort_matches(ctx, &dreq, keys, job) {
            Ok(found) => found,
            Err(result) => return sort_failed(result),
        };
        extra_controls.push(sort_done());
        sorted_cursor = Some(template.reorder(ids));
    }

    // A page ends after `page` entries; an unpaged search after the size limit.
    let (mut cursor, page) = match &paged {
        Some(p) if !p.cookie.is_empty() => {
            let (c, first) = job.paged.lock().take(&p.cookie, ttl).ok_or_else(|| {
                LdapResult::new(
                    ResultCode::PROTOCOL_ERROR,
                    "unknown or expired paged results cookie",
                )
            })?;
            if p.size <= 0 {
                // Size 0 with a cookie abandons the paged search.
                return Ok(Some((LdapResult::success(), vec![paged_control(&[])])));
            }
            if first != paged_fingerprint() {
                return Err(LdapResult::new(
                    ResultCode::UNAVAILABLE_CRITICAL_EXTENSION,
                    "a paged search continues only with the base, scope, filter, attributes \
                     and controls it started with",
                ));
            }
            (c, usize::try_from(p.size).unwrap_or(usize::MAX))
        }
        _ => {
            let c = match sorted_cursor.take() {
                Some(c) => c,
                None => {
                    let mut dreq = DbSearch::new(base.clone(), scope, filter.clone());
                    dreq.size_limit = 0;
                    let snap = ctx.db.read().map_err(|e| db_result(&e))?;
                    let c = snap.open_cursor(&dreq).map_err(|e| db_result(&e))?;
                    if let Sink::Buffer { too_big, .. } = &job.out {
                        if paged.is_some() || c.remaining().is_none_or(|n| n > INLINE_CANDIDATES) {
                            too_big.store(true, std::sync::atomic::Ordering::Relaxed);
                            return Ok(None);
                        }
                    }
                    if job.out.over_budget() {
                        return Ok(None);
                    }
                    c
                }
            };
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
    let sighting = sighting_for(ctx, job, &cursor)?;
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
        let mut batch_bytes = 0usize;
        {
            let snap = ctx.db.read().map_err(|e| db_result(&e))?;
            let ids = AttrIds::new(
                &snap,
                &sel,
                ctx,
                &job.identity,
                scope == Scope::Base,
                job.catalog,
                &job.controls,
            );
            let mut dns = DnCache::default();
            let mut err: Option<DbError> = None;
            let cancel = &job.cancel;
            more = snap
                .advance_seen(&mut cursor, BATCH, &mut sight_of(&sighting, &snap), |hit| {
                    if cancel.is_cancelled() || job.out.over_budget() {
                        return Ok(ControlFlow::Break(()));
                    }
                    batch.push(entry_message(
                        &snap,
                        &ids,
                        &mut dns,
                        &hit,
                        job,
                        extended_dn,
                        sighting.as_ref(),
                    )?);
                    sent += 1;
                    batch_bytes += batch.last().map_or(0, Vec::len);
                    // A batch ends at the limit, or when its entries reach BATCH_BYTES
                    // (large entries must not pile up while the snapshot is held).
                    Ok(if sent >= stop_after || batch_bytes >= BATCH_BYTES {
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
        if job.out.too_big() || !send_all(&job.out, batch) {
            return Ok(None);
        }
    }
    if job.cancel.is_cancelled() {
        return Ok(None);
    }
    if paged.is_some() {
        let cookie = if more {
            let fp = paged_fingerprint();
            job.paged.lock().put(cursor, fp, cfg.max_paged_cursors, ttl)
        } else {
            Vec::new()
        };
        let mut controls = extra_controls;
        controls.push(paged_control(&cookie));
        return Ok(Some((LdapResult::success(), controls)));
    }
    if more && sent >= stop_after {
        // The limit was reached; it was exceeded only if another entry matches.
        let snap = ctx.db.read().map_err(|e| db_result(&e))?;
        let mut another = false;
        loop {
            let left = snap
                .advance_seen(&mut cursor, BATCH, &mut sight_of(&sighting, &snap), |_| {
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
                extra_controls,
            )));
        }
    }
    Ok(Some((LdapResult::success(), extra_controls)))
}

/// The sort key of one entry: per key, the least value (greatest when reversed) of the
/// attribute in its normalized form, `None` when absent.
type SortKeys = Vec<Option<Vec<u8>>>;

fn compare_keys(a: &SortKeys, b: &SortKeys, keys: &ctl::SortRequest) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for (i, k) in keys.keys.iter().enumerate() {
        let ord = match (
            a.get(i).and_then(|x| x.as_ref()),
            b.get(i).and_then(|x| x.as_ref()),
        ) {
            (None, None) => Ordering::Equal,
            // Entries without the attribute come last either way.
            (None, Some(_)) => return Ordering::Greater,
            (Some(_), None) => return Ordering::Less,
            (Some(x), Some(y)) => {
                if k.reverse {
                    y.cmp(x)
                } else {
                    x.cmp(y)
                }
            }
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// All matches of a search, sorted by the sort control's keys (ids only, never entries).
/// Returns the ids with the cursor that found them, whose filter later pages test again.
fn sort_matches(
    ctx: &Ctx,
    dreq: &DbSearch,
    keys: &ctl::SortRequest,
    job: &SearchJob,
) -> Result<(Vec<u64>, SearchCursor), LdapResult> {
    let snap = ctx.db.read().map_err(|e| db_result(&e))?;
    // What the caller cannot see (outside a global catalog's attribute set) sorts as absent.
    let hidden = ctx.hidden_attributes(ctx.reads_beyond_policy(&job.identity), job.catalog);
    let attr_ids: Vec<Option<u32>> = keys
        .keys
        .iter()
        .map(|k| {
            let base = k.attribute.split(';').next().unwrap_or(&k.attribute);
            if hidden.iter().any(|h| h.eq_ignore_ascii_case(base)) {
                None
            } else {
                snap.attr_id(&k.attribute)
            }
        })
        .collect();
    let binary: Vec<bool> = keys
        .keys
        .iter()
        .map(|k| sorts_binary(ctx, &k.attribute))
        .collect();
    let mut cursor = snap.open_cursor(dreq).map_err(|e| db_result(&e))?;
    let mut rows: Vec<(SortKeys, u64)> = Vec::new();
    let max = ctx.cfg().max_sort_entries;
    let mut too_many = false;
    let sighting = sighting_for(ctx, job, &cursor)?;
    snap.advance_seen(
        &mut cursor,
        usize::MAX,
        &mut sight_of(&sighting, &snap),
        |hit| {
            if rows.len() >= max {
                too_many = true;
                return Ok(ControlFlow::Break(()));
            }
            // Values the caller may not read on this entry sort as absent.
            let hides = |attr: u32| {
                sighting
                    .as_ref()
                    .is_some_and(|s| s.borrow().hides(hit.id, attr))
            };
            let key = keys
                .keys
                .iter()
                .zip(&attr_ids)
                .zip(&binary)
                .map(|((k, id), binary)| {
                    let a = id
                        .filter(|id| !hides(*id))
                        .and_then(|id| hit.record.attr(id))?;
                    let vals = a.values().map(|v| sort_key(&v, *binary));
                    if k.reverse {
                        vals.max()
                    } else {
                        vals.min()
                    }
                })
                .collect();
            rows.push((key, hit.id));
            Ok(ControlFlow::Continue(()))
        },
    )
    .map_err(|e| db_result(&e))?;
    if too_many {
        return Err(LdapResult::new(
            ResultCode::ADMIN_LIMIT_EXCEEDED,
            format!("more than {max} entries to sort; narrow the search or page without sorting"),
        ));
    }
    rows.sort_by(|a, b| compare_keys(&a.0, &b.0, keys).then(a.1.cmp(&b.1)));
    Ok((rows.into_iter().map(|(_, id)| id).collect(), cursor))
}

/// Whether AD sorts an attribute's values as bytes: PrintableString ones (serialNumber),
/// case and spaces counting; other strings sort by their matching rule's normalized form.
fn sorts_binary(ctx: &Ctx, attr: &str) -> bool {
    ctx.db.config().schema.syntax_of(attr) == kauri_db::Syntax::PrintableString
}

/// The value a sort compares.
fn sort_key(v: &kauri_db::record::ValueView<'_>, binary: bool) -> Vec<u8> {
    if binary {
        v.raw.to_vec()
    } else {
        v.norm().into_owned()
    }
}

/// The least sort key of an attribute in a record.
fn least_value(
    rec: &kauri_db::record::RecordView<'_>,
    attr: Option<u32>,
    binary: bool,
) -> Option<Vec<u8>> {
    attr.and_then(|a| rec.attr(a))
        .and_then(|x| x.values().map(|v| sort_key(&v, binary)).min())
}

/// An attribute scoped query (AD's ASQ control): the search runs over the entries a DN
/// attribute of the base entry names (`member` of a group, say) instead of below the
/// base, with the filter and attribute selection of the request. Base scope only.
fn asq_search(
    ctx: &Ctx,
    job: &SearchJob,
    base: &Dn,
    scope: Scope,
    filter: &kauri_db::Filter,
    q: &ctl::Asq,
    extended_dn: Option<i32>,
) -> Outcome {
    let refuse = |code: ResultCode, text: String| -> Outcome {
        Ok(Some((
            LdapResult::new(code, text),
            vec![ctl::AsqResponse { result: code }.to_control(false)],
        )))
    };
    if scope != Scope::Base {
        return refuse(
            ResultCode::UNWILLING_TO_PERFORM,
            "the attribute scoped query control needs a base-scope search".into(),
        );
    }
    if ctx.db.config().schema.syntax_of(&q.source_attribute) != kauri_db::Syntax::Dn {
        return refuse(
            ResultCode::INVALID_ATTRIBUTE_SYNTAX,
            format!("{} does not hold DNs", q.source_attribute),
        );
    }
    let snap = ctx.db.read().map_err(|e| db_result(&e))?;
    let Some(id) = snap.lookup(base).map_err(|e| db_result(&e))? else {
        return Err(LdapResult::new(
            ResultCode::NO_SUCH_OBJECT,
            format!("0000208D: NameErr: DSID-0310021B, problem 2001 (NO_OBJECT), data 0: {base}"),
        ));
    };
    let targets: Vec<u64> = match snap
        .linked_ids_by_name(id, &q.source_attribute)
        .map_err(|e| db_result(&e))?
    {
        Some(ids) => ids,
        None => {
            let values = snap
                .attr_id(&q.source_attribute)
                .and_then(|a| {
                    snap.record(id).ok().flatten().and_then(|r| {
                        r.attr(a)
                            .map(|x| x.values().map(|v| v.raw.to_vec()).collect::<Vec<_>>())
                    })
                })
                .unwrap_or_default();
            values
                .iter()
                .filter_map(|v| std::str::from_utf8(v).ok())
                .filter_map(|t| Dn::parse(t).ok())
                .filter_map(|d| snap.lookup(&d).ok().flatten())
                .collect()
        }
    };
    // The request's filter, tested on each named entry.
    let dreq = DbSearch::new(base.clone(), Scope::Base, filter.clone());
    let mut cursor = snap
        .open_cursor(&dreq)
        .map_err(|e| db_result(&e))?
        .reorder(targets);
    let batch = encode_matches(ctx, &snap, job, &mut cursor, usize::MAX, extended_dn)?;
    drop(snap);
    if !send_all(&job.out, batch) {
        return Ok(None);
    }
    Ok(Some((
        LdapResult::success(),
        vec![ctl::AsqResponse {
            result: ResultCode::SUCCESS,
        }
        .to_control(false)],
    )))
}

/// The encoded entries of a cursor's next matches, at most `limit` of them, with the
/// request's attribute selection (one snapshot: for the short lists of VLV windows and
/// attribute scoped queries).
fn encode_matches(
    ctx: &Ctx,
    snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
    job: &SearchJob,
    cursor: &mut SearchCursor,
    limit: usize,
    extended_dn: Option<i32>,
) -> Result<Vec<Vec<u8>>, LdapResult> {
    let sel = Selection::new(&job.req.attributes);
    let attrs = AttrIds::new(
        snap,
        &sel,
        ctx,
        &job.identity,
        false,
        job.catalog,
        &job.controls,
    );
    let mut dns = DnCache::default();
    let mut batch = Vec::new();
    let sighting = sighting_for(ctx, job, cursor)?;
    snap.advance_seen(cursor, usize::MAX, &mut sight_of(&sighting, snap), |hit| {
        batch.push(entry_message(
            snap,
            &attrs,
            &mut dns,
            &hit,
            job,
            extended_dn,
            sighting.as_ref(),
        )?);
        Ok(if batch.len() >= limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    })
    .map_err(|e| db_result(&e))?;
    Ok(batch)
}

/// Continuation references (`ldap://host/NC`) for the naming contexts a search's scope
/// reaches below its own: those not inside another such one. The host is the NC's DNS
/// name from its `DC=` components, as AD writes it.
fn subordinate_referrals(ctx: &Ctx, base: &Dn, scope: Scope) -> Vec<String> {
    let Some(domain) = ctx.dir.domain() else {
        return Vec::new();
    };
    if matches!(scope, Scope::Base) {
        return Vec::new();
    }
    // The domain's partitions, as its information holds them (no read per search); only
    // those reached are written out.
    let ncs: Vec<&Dn> = [&domain.domain_dn, &domain.config_dn, &domain.schema_dn]
        .into_iter()
        .chain(&domain.app_ncs)
        .collect();
    let reached = |d: &Dn| match scope {
        Scope::OneLevel => base.is_parent_of(d),
        _ => d.is_descendant_of(base),
    };
    ncs.iter()
        .filter(|d| reached(d))
        .filter(|d| {
            !ncs.iter()
                .any(|o| d.is_descendant_of(o) && o.is_descendant_of(base))
        })
        .map(|d| {
            let text = d.to_string();
            let host = kauri_domain::directory::dc_host(d).unwrap_or_default();
            // A one-level search reaches only the subordinate context's head: its reference
            // asks for a base search there (RFC 4511 4.5.3).
            let scope = if matches!(scope, Scope::OneLevel) {
                "??base"
            } else {
                ""
            };
            format!("ldap://{host}/{text}{scope}")
        })
        .collect()
}

/// The answer to a sort that cannot be done: the result, and the sort response saying so.
fn sort_failed(result: LdapResult) -> Outcome {
    let control = ctl::SortResult {
        code: result.code,
        attribute: None,
    }
    .to_control(false);
    Ok(Some((result, vec![control])))
}

/// The sort response control of a successful sort.
fn sort_done() -> Control {
    ctl::SortResult {
        code: ResultCode::SUCCESS,
        attribute: None,
    }
    .to_control(false)
}

/// A VLV request: the sorted list (kept from an earlier request of the same search under
/// its context id, or searched and sorted now and kept), then the window around the target.
#[allow(clippy::too_many_arguments)]
fn vlv_search(
    ctx: &Ctx,
    job: &SearchJob,
    base: &Dn,
    scope: Scope,
    filter: &kauri_db::Filter,
    keys: &ctl::SortRequest,
    v: &ctl::VlvRequest,
    critical: bool,
    extended_dn: Option<i32>,
) -> Outcome {
    let ttl = Duration::from_secs(ctx.cfg().paged_cursor_ttl_secs);
    let fp = fingerprint(&job.req, &job.controls, &[ctl::VLV_REQUEST], false);
    let given = v.context_id.as_deref().filter(|c| !c.is_empty());
    let kept = given.and_then(|id| job.paged.lock().get_vlv(id, ttl));
    if given.is_some() && kept.is_none() && critical {
        return Err(LdapResult::new(
            ResultCode::UNAVAILABLE_CRITICAL_EXTENSION,
            "unknown or expired VLV context",
        ));
    }
    let (list, context_id) = match (kept, given) {
        (Some(list), Some(id)) if list.fingerprint == fp => (list, id.to_vec()),
        _ => {
            let mut dreq = DbSearch::new(base.clone(), scope, filter.clone());
            dreq.size_limit = 0;
            let (ids, cursor) = match sort_matches(ctx, &dreq, keys, job) {
                Ok(found) => found,
                Err(result) => return sort_failed(result),
            };
            let list = Arc::new(VlvContext {
                fingerprint: fp,
                cursor,
                ids,
            });
            let id = job.paged.lock().put_vlv(list.clone(), ttl);
            (list, id)
        }
    };
    vlv_window(ctx, job, keys, v, &list, context_id, extended_dn).map(|r| {
        r.map(|(res, mut controls)| {
            controls.insert(0, sort_done());
            (res, controls)
        })
    })
}

/// The 1-based list position a by-offset VLV target names, as AD computes it: the offset
/// scaled from the client's idea of the list size to the real one.
fn vlv_offset(offset: i32, client_count: i32, count: usize) -> usize {
    let offset = usize::try_from(offset).unwrap_or(0);
    let client = usize::try_from(client_count).unwrap_or(0);
    let pos = match client {
        0 => offset,
        // 1 of 1 is the end of the list; anything else the start.
        1 if offset == 1 => count,
        1 => 1,
        _ if client == count => offset,
        _ => {
            let offset = offset.min(client);
            let scaled =
                (count.saturating_sub(1) * offset.saturating_sub(1)) as f64 / (client - 1) as f64;
            1 + scaled.round_ties_even() as usize
        }
    };
    pos.clamp(1, count.max(1))
}

/// The window of a kept VLV list around the target, and the VLV response. Entries are read
/// now, so they show their current values; those deleted or no longer matching are
/// skipped, and the window takes the next ones instead.
fn vlv_window(
    ctx: &Ctx,
    job: &SearchJob,
    keys: &ctl::SortRequest,
    v: &ctl::VlvRequest,
    list: &VlvContext,
    context_id: Vec<u8>,
    extended_dn: Option<i32>,
) -> Outcome {
    let ids = &list.ids;
    let count = ids.len();
    let snap = ctx.db.read().map_err(|e| db_result(&e))?;
    // 1-based position of the target in the sorted list (count + 1 = past the end).
    let target = match &v.target {
        ctl::VlvTarget::ByOffset {
            offset,
            content_count,
        } => vlv_offset(*offset, *content_count, count),
        ctl::VlvTarget::GreaterOrEqual(value) => {
            let Some(first) = keys.keys.first() else {
                return Err(LdapResult::new(
                    ResultCode::PROTOCOL_ERROR,
                    "sort control without keys",
                ));
            };
            let syntax = ctx.db.config().schema.syntax_of(&first.attribute);
            let binary = sorts_binary(ctx, &first.attribute);
            let norm = if binary {
                value.clone()
            } else {
                syntax
                    .normalize(value)
                    .map(|n| n.into_owned())
                    .unwrap_or_else(|_| value.clone())
            };
            let attr = snap.attr_id(&first.attribute);
            let mut pos = count + 1;
            let mut probe = list.cursor.reorder(ids.clone());
            let mut i = 0usize;
            snap.advance(&mut probe, usize::MAX, |hit| {
                i += 1;
                let key = least_value(&hit.record, attr, binary);
                let reached = match key {
                    Some(k) if first.reverse => k <= norm,
                    Some(k) => k >= norm,
                    None => true,
                };
                if reached {
                    pos = i;
                    return Ok(ControlFlow::Break(()));
                }
                Ok(ControlFlow::Continue(()))
            })
            .map_err(|e| db_result(&e))?;
            // Position among the entries still there, mapped back to the kept list.
            if pos <= count {
                pos = probe.examined().max(1);
            }
            pos
        }
    };
    let before = usize::try_from(v.before).unwrap_or(0);
    let after = usize::try_from(v.after).unwrap_or(0);
    let from = target.saturating_sub(before).max(1);
    let wanted = (target - from) + after.min(count.saturating_sub(target)) + 1;
    let mut batch = Vec::new();
    if count > 0 && from <= count {
        let mut cursor = list.cursor.reorder(ids[from - 1..].to_vec());
        batch = encode_matches(ctx, &snap, job, &mut cursor, wanted, extended_dn)?;
    }
    drop(snap);
    if !send_all(&job.out, batch) {
        return Ok(None);
    }
    let response = ctl::VlvResponse {
        target_position: i32::try_from(target).unwrap_or(i32::MAX),
        content_count: i32::try_from(count).unwrap_or(i32::MAX),
        result: ResultCode::SUCCESS,
        context_id: Some(context_id),
    };
    Ok(Some((
        LdapResult::success(),
        vec![response.to_control(false)],
    )))
}

fn paged_control(cookie: &[u8]) -> Control {
    ctl::PagedResults {
        size: 0,
        cookie: cookie.to_vec(),
    }
    .to_control(false)
}

/// One search result entry, encoded: its DN (in extended form when the control asks) and
/// the attributes the selection and the caller allow.
fn entry_message(
    snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
    attrs: &AttrIds,
    dns: &mut DnCache,
    hit: &kauri_db::search::Hit<'_>,
    job: &SearchJob,
    extended_dn: Option<i32>,
    sighting: Option<&crate::sight::Shared>,
) -> Result<Vec<u8>, DbError> {
    let dn = snap.cached_dn(dns, hit.id)?;
    let mut attributes = attrs.attributes(snap, hit.id, &dn, &hit.record, job.req.types_only);
    if let Some(s) = sighting {
        // What the caller may not read of this object, and its descriptor without
        // READ_CONTROL, are left out.
        if let Some((hidden, reads_descriptor)) = s.borrow().hidden_of(hit.id) {
            attributes.retain(|a| {
                let base = a.name.split(';').next().unwrap_or(&a.name);
                hidden
                    .binary_search_by(|h| cmp_ascii_lower(h, base))
                    .is_err()
                    && (reads_descriptor || !base.eq_ignore_ascii_case("ntsecuritydescriptor"))
            });
        }
    }
    if let Some(format) = extended_dn {
        // AD gives every DN value (memberOf, member, manager, …) in the extended form too.
        let schema = attrs.dir.schema();
        for a in &mut attributes {
            let base = a.name.split(';').next().unwrap_or(&a.name);
            if base.eq_ignore_ascii_case("distinguishedName")
                || schema.schema.syntax_of(base) != kauri_db::Syntax::Dn
            {
                continue;
            }
            for v in &mut a.values {
                let Ok(text) = std::str::from_utf8(v) else {
                    continue;
                };
                let target = kauri_db::Dn::parse(text)
                    .ok()
                    .and_then(|d| snap.lookup(&d).ok().flatten())
                    .and_then(|id| snap.record(id).ok().flatten());
                if let Some(rec) = target {
                    *v = extended_dn_text(snap, &rec, text, format).into_bytes();
                }
            }
        }
    }
    let dn = match extended_dn {
        Some(format) => extended_dn_text(snap, &hit.record, &dn, format),
        None => dn,
    };
    Ok(encode_message(&LdapMessage {
        id: job.id,
        op: ProtocolOp::SearchResultEntry(SearchResultEntry { dn, attributes }),
        controls: Vec::new(),
    }))
}

/// The filter a search runs with: assertions on secrets match nothing, and in a domain
/// tombstones stay out of sight unless the show-deleted control asks for them.
fn effective_filter(ctx: &Ctx, job: &SearchJob) -> kauri_db::Filter {
    use kauri_db::Filter;
    let hidden = ctx.hidden_attributes(ctx.reads_beyond_policy(&job.identity), job.catalog);
    let schema = ctx.dir.schema();
    // Hidden attributes named by name or OID, with or without options.
    let secret = |a: &str| {
        let base = a.split(';').next().unwrap_or(a);
        kauri_domain::directory::is_secret(base)
            || hidden.iter().any(|h| h.eq_ignore_ascii_case(base))
            || schema
                .schema
                .attribute_by_oid(base)
                .is_some_and(|d| hidden.contains(&d.ldap_name))
    };
    fn mask(f: &Filter, secret: &dyn Fn(&str) -> bool) -> Filter {
        let never = || Filter::Or(Vec::new());
        match f {
            Filter::And(v) => Filter::And(v.iter().map(|x| mask(x, secret)).collect()),
            Filter::Or(v) => Filter::Or(v.iter().map(|x| mask(x, secret)).collect()),
            Filter::Not(x) => Filter::Not(Box::new(mask(x, secret))),
            Filter::Equality(a, _)
            | Filter::Approx(a, _)
            | Filter::GreaterOrEqual(a, _)
            | Filter::LessOrEqual(a, _)
            | Filter::Present(a)
                if secret(a) =>
            {
                never()
            }
            Filter::Substrings(sub) if secret(&sub.attr) => never(),
            Filter::Extensible(m) if m.attr.as_deref().is_some_and(secret) => never(),
            // A match without an attribute would test every stored attribute, hidden
            // ones included.
            Filter::Extensible(m) if m.attr.is_none() => never(),
            other => other.clone(),
        }
    }
    let plain = crate::extdn::plain_filter(ctx, &job.req.filter);
    let masked = match ctx.dir.domain() {
        Some(d) => {
            let masked = mask(&plain, &secret);
            // The ANR attributes are listed only for a filter that asks for them.
            let masked = if mentions_anr(&masked) {
                let anr_attrs: Vec<&str> = schema
                    .schema
                    .attributes()
                    .filter(|a| a.search_flags & SEARCH_FLAG_ANR != 0)
                    .map(|a| a.ldap_name.as_str())
                    .filter(|a| !secret(a))
                    .collect();
                anr(&masked, &anr_attrs)
            } else {
                masked
            };
            int32_values(
                &categories(&masked, &schema.schema, &d.schema_dn),
                &schema.schema,
            )
        }
        None => mask(&plain, &secret),
    };
    // Deleted objects are for administrators.
    let show_deleted = job.identity.is_admin()
        && job
            .controls
            .iter()
            .any(|c| c.oid == ctl::SHOW_DELETED || c.oid == ctl::SHOW_RECYCLED);
    if ctx.dir.domain().is_none() || show_deleted {
        return masked;
    }
    Filter::And(vec![
        masked,
        Filter::Not(Box::new(Filter::Equality(
            "isDeleted".into(),
            b"TRUE".to_vec(),
        ))),
    ])
}

/// `searchFlags` bit of the attributes ambiguous name resolution searches.
const SEARCH_FLAG_ANR: u32 = 0x4;

/// Whether a filter has an `anr` assertion.
fn mentions_anr(f: &kauri_db::Filter) -> bool {
    use kauri_db::Filter;
    match f {
        Filter::And(v) | Filter::Or(v) => v.iter().any(mentions_anr),
        Filter::Not(x) => mentions_anr(x),
        Filter::Equality(a, _) => a.eq_ignore_ascii_case("anr"),
        Filter::Substrings(sub) => sub.attr.eq_ignore_ascii_case("anr"),
        _ => false,
    }
}

/// AD's ambiguous name resolution: `(anr=text)` finds entries where any ANR attribute
/// (displayName, givenName, sn, sAMAccountName, …) starts with the text; `(anr==text)`
/// where one equals it. A text with a space also tries it as first and last name, either
/// way round (`(anr=ann lee)` finds givenName Ann, sn Lee and givenName Lee, sn Ann).
fn anr(f: &kauri_db::Filter, attrs: &[&str]) -> kauri_db::Filter {
    use kauri_db::filter::SubstringFilter;
    use kauri_db::Filter;
    let walk = |v: &[Filter]| v.iter().map(|x| anr(x, attrs)).collect();
    let prefix = |attr: &str, text: &str| {
        Filter::Substrings(SubstringFilter {
            attr: attr.into(),
            initial: Some(text.as_bytes().to_vec()),
            any: Vec::new(),
            final_: None,
        })
    };
    let expand = |value: &[u8]| -> Filter {
        let text = String::from_utf8_lossy(value);
        let text = text.trim();
        if let Some(exact) = text.strip_prefix('=') {
            let exact = exact.trim();
            return Filter::Or(
                attrs
                    .iter()
                    .map(|a| Filter::Equality((*a).into(), exact.as_bytes().to_vec()))
                    .collect(),
            );
        }
        if text.is_empty() {
            return Filter::Or(Vec::new());
        }
        let mut any: Vec<Filter> = attrs.iter().map(|a| prefix(a, text)).collect();
        if let Some((first, last)) = text.split_once(' ') {
            let (first, last) = (first.trim(), last.trim());
            if !first.is_empty() && !last.is_empty() {
                any.push(Filter::And(vec![
                    prefix("givenName", first),
                    prefix("sn", last),
                ]));
                any.push(Filter::And(vec![
                    prefix("givenName", last),
                    prefix("sn", first),
                ]));
            }
        }
        Filter::Or(any)
    };
    match f {
        Filter::And(v) => Filter::And(walk(v)),
        Filter::Or(v) => Filter::Or(walk(v)),
        Filter::Not(x) => Filter::Not(Box::new(anr(x, attrs))),
        Filter::Equality(a, v) if a.eq_ignore_ascii_case("anr") => expand(v),
        Filter::Substrings(sub)
            if sub.attr.eq_ignore_ascii_case("anr")
                && sub.any.is_empty()
                && sub.final_.is_none() =>
        {
            expand(sub.initial.as_deref().unwrap_or_default())
        }
        other => other.clone(),
    }
}

/// AD compares 32-bit Integer attributes as signed: `(groupType=2147483653)` finds the
/// group whose groupType reads -2147483643. Assertion values between 2^31 and 2^32 are
/// read as their signed 32-bit counterparts.
fn int32_values(f: &kauri_db::Filter, schema: &kauri_domain::schema::Schema) -> kauri_db::Filter {
    use kauri_db::Filter;
    let walk = |v: &[Filter]| v.iter().map(|x| int32_values(x, schema)).collect();
    let fold = |a: &str, v: &[u8]| -> Option<Vec<u8>> {
        let def = schema.attribute(a)?;
        if def.attribute_syntax != "2.5.5.9" {
            return None;
        }
        let n: i64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
        if n > i64::from(i32::MAX) && n <= i64::from(u32::MAX) {
            Some((n as u32 as i32).to_string().into_bytes())
        } else {
            None
        }
    };
    match f {
        Filter::And(v) => Filter::And(walk(v)),
        Filter::Or(v) => Filter::Or(walk(v)),
        Filter::Not(x) => Filter::Not(Box::new(int32_values(x, schema))),
        Filter::Equality(a, v) => match fold(a, v) {
            Some(n) => Filter::Equality(a.clone(), n),
            None => f.clone(),
        },
        other => other.clone(),
    }
}

/// AD's shorthand `(objectCategory=person)`: a class name where a DN belongs stands for
/// that class's `defaultObjectCategory` (`CN=Person,CN=Schema,…`).
fn categories(
    f: &kauri_db::Filter,
    schema: &kauri_domain::schema::Schema,
    schema_dn: &Dn,
) -> kauri_db::Filter {
    use kauri_db::Filter;
    let walk = |v: &[Filter]| v.iter().map(|x| categories(x, schema, schema_dn)).collect();
    match f {
        Filter::And(v) => Filter::And(walk(v)),
        Filter::Or(v) => Filter::Or(walk(v)),
        Filter::Not(x) => Filter::Not(Box::new(categories(x, schema, schema_dn))),
        Filter::Equality(a, v)
            if a.eq_ignore_ascii_case("objectCategory") && !v.contains(&b'=') =>
        {
            let dn = std::str::from_utf8(v)
                .ok()
                .and_then(|name| schema.class(name))
                .and_then(|c| {
                    kauri_domain::schema::objects::default_object_category(c, schema_dn).ok()?
                });
            match dn {
                Some(dn) => Filter::Equality(a.clone(), dn.to_string().into_bytes()),
                None => f.clone(),
            }
        }
        other => other.clone(),
    }
}

/// Operational attributes constructed when a search names them.
const OPERATIONAL: &[&str] = &[
    "parentGUID",
    "canonicalName",
    "createTimeStamp",
    "modifyTimeStamp",
    "subschemaSubentry",
    "structuralObjectClass",
    "primaryGroupToken",
    "msDS-isRODC",
];

/// AD's canonical name of a DN: the DNS name its `DC=` tail spells, then the other RDN
/// values from the top down, `/`-separated (`samdom.example.com/Users/Alice`).
fn canonical_name(dn: &str) -> Option<String> {
    let dn = kauri_db::Dn::parse(dn).ok()?;
    let mut dc = Vec::new();
    let mut path = Vec::new();
    // RDNs run leaf first: walk from the root.
    for rdn in dn.rdns().iter().rev() {
        let ava = rdn.avas().first()?;
        if ava.attr.eq_ignore_ascii_case("dc") && path.is_empty() {
            dc.push(ava.value.clone());
        } else {
            path.push(ava.value.replace('/', "\\/"));
        }
    }
    dc.reverse();
    Some(format!("{}/{}", dc.join("."), path.join("/")))
}

/// Attribute ids resolved once per snapshot for the selection, what the caller may not
/// see, and the constructed attributes asked for.
struct AttrIds {
    all: bool,
    ids: Vec<(u32, Option<ValueRange>)>,
    max_values: usize,
    /// Secrets (for everyone) and confidential attributes (for non-administrators).
    hidden: Vec<u32>,
    /// `distinguishedName`, built from the DN.
    dn: bool,
    /// `tokenGroups` (base searches only, as AD computes it).
    token_groups: bool,
    /// `tokenGroupsNoGCAcceptable` (one domain: the same groups as `tokenGroups`).
    token_groups_no_gc: bool,
    token_groups_global_universal: bool,
    /// `msDS-ResultantPSO`.
    resultant_pso: bool,
    /// `msDS-UserPasswordExpiryTimeComputed`.
    expiry_time: bool,
    /// `replPropertyMetaData`, and the invocation id that stands for this database in it.
    metadata: Option<[u8; 16]>,
    /// `msDS-ReplAttributeMetaData` (the same, as XML).
    metadata_xml: bool,
    /// Stored attributes AD computes, returned only when named (`msDS-KeyVersionNumber`).
    named_only: Vec<u32>,
    /// `nTSecurityDescriptor`'s id (records hold descriptor ids), and the parts of it
    /// returned (the SD flags control).
    descriptor: Option<(u32, DescriptorParts)>,
    /// Operational attributes AD constructs when asked by name: `parentGUID`,
    /// `canonicalName`, `createTimeStamp`, `modifyTimeStamp`, `subschemaSubentry`,
    /// `structuralObjectClass`, `primaryGroupToken`, `msDS-isRODC`.
    operational: Vec<&'static str>,
    dir: Arc<kauri_domain::directory::Directory<kauri_kv::lmdb::LmdbBackend>>,
}

impl AttrIds {
    fn new(
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        sel: &Selection,
        ctx: &Ctx,
        identity: &Identity,
        base_scope: bool,
        catalog: bool,
        controls: &[Control],
    ) -> AttrIds {
        let mut ids: Vec<(u32, Option<ValueRange>)> = Vec::new();
        let wants = |name: &str| sel.wanted.iter().any(|w| w.name.eq_ignore_ascii_case(name));
        for w in &sel.wanted {
            if let Some(id) = snap.attr_id(&w.name) {
                match ids.iter_mut().find(|(i, _)| *i == id) {
                    Some(slot) => {
                        if w.range.is_some() {
                            slot.1 = w.range;
                        }
                    }
                    None => ids.push((id, w.range)),
                }
            }
        }
        let domain = ctx.dir.domain().is_some();
        let mut hidden: Vec<u32> = ctx
            .hidden_attributes(ctx.reads_beyond_policy(identity), catalog)
            .iter()
            .filter_map(|n| snap.attr_id(n))
            .collect();
        hidden.sort_unstable();
        AttrIds {
            all: sel.all_user,
            ids,
            max_values: ctx.cfg().max_val_range.max(1),
            hidden,
            dn: domain && (sel.all_user || wants("distinguishedName")),
            token_groups: domain && base_scope && wants("tokenGroups"),
            token_groups_no_gc: domain && base_scope && wants("tokenGroupsNoGCAcceptable"),
            token_groups_global_universal: domain
                && base_scope
                && wants("tokenGroupsGlobalAndUniversal"),
            resultant_pso: domain && wants("msDS-ResultantPSO"),
            expiry_time: domain && wants("msDS-UserPasswordExpiryTimeComputed"),
            metadata: (domain
                && (wants("replPropertyMetaData") || wants("msDS-ReplAttributeMetaData")))
            .then(|| ctx.db.invocation_id()),
            metadata_xml: domain && wants("msDS-ReplAttributeMetaData"),
            named_only: ["msDS-KeyVersionNumber"]
                .iter()
                .filter(|n| !wants(n))
                .filter_map(|n| snap.attr_id(n))
                .collect(),
            descriptor: snap
                .descriptor_attr_id()
                .map(|a| (a, descriptor_parts(controls, identity))),
            operational: OPERATIONAL
                .iter()
                .copied()
                .filter(|n| domain && wants(n))
                .collect(),
            dir: ctx.dir.clone(),
        }
    }

    /// One operational attribute of an entry, computed from its name and stored values.
    fn operational_value(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        id: u64,
        rec: &kauri_db::record::RecordView<'_>,
        dn: &str,
        name: &str,
    ) -> Option<Vec<u8>> {
        // The entry's own values, and those of another entry (its parent, its DSA).
        let own = |attr: &str| -> Option<Vec<u8>> {
            let a = snap.attr_id(attr)?;
            Some(rec.attr(a)?.values().next()?.raw.to_vec())
        };
        let first = |id: u64, attr: &str| -> Option<Vec<u8>> {
            let a = snap.attr_id(attr)?;
            let other = snap.record(id).ok()??;
            let v = other.attr(a)?.values().next()?.raw.to_vec();
            Some(v)
        };
        let has_class = |class: &str| {
            snap.attr_id("objectClass")
                .and_then(|a| rec.attr(a))
                .is_some_and(|v| {
                    v.values()
                        .any(|c| c.raw.eq_ignore_ascii_case(class.as_bytes()))
                })
        };
        match name {
            "parentGUID" => {
                // A naming context head has no parent in its own partition.
                let instance = own("instanceType")
                    .and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse::<i64>().ok())
                    .unwrap_or(0);
                if instance & 1 != 0 {
                    return None;
                }
                let parent = kauri_db::Dn::parse(dn).ok()?.parent()?;
                let pid = snap.lookup(&parent).ok()??;
                first(pid, "objectGUID")
            }
            "primaryGroupToken" => {
                // A group's RID, which accounts name as their primaryGroupID.
                if !has_class("group") {
                    return None;
                }
                let sid = own("objectSid")?;
                let rid = sid.get(sid.len().checked_sub(4)?..)?;
                let rid = u32::from_le_bytes(rid.try_into().ok()?);
                Some(rid.to_string().into_bytes())
            }
            "msDS-isRODC" => {
                // A DSA is read-only when its category is NTDS-DSA-RO; a server and a
                // DC's computer account answer for their DSA.
                let settings_of = |server: u64| -> Option<u64> {
                    let dn = kauri_db::Dn::parse(&snap.dn_string(server).ok()?).ok()?;
                    let rdn = kauri_db::Rdn::parse("CN=NTDS Settings").ok()?;
                    snap.lookup(&dn.child(rdn)).ok()?
                };
                let dsa = if has_class("nTDSDSA") {
                    id
                } else if has_class("server") {
                    settings_of(id)?
                } else if has_class("computer") {
                    let server = snap
                        .linked_ids_by_name(id, "serverReferenceBL")
                        .ok()??
                        .into_iter()
                        .next()?;
                    settings_of(server)?
                } else {
                    return None;
                };
                let category = first(dsa, "objectCategory")?;
                let ro = String::from_utf8_lossy(&category)
                    .to_ascii_lowercase()
                    .starts_with("cn=ntds-dsa-ro,");
                Some(if ro {
                    b"TRUE".to_vec()
                } else {
                    b"FALSE".to_vec()
                })
            }
            "createTimeStamp" => own("whenCreated"),
            "modifyTimeStamp" => own("whenChanged"),
            "canonicalName" => canonical_name(dn).map(String::into_bytes),
            "subschemaSubentry" => {
                let domain = self.dir.domain()?.domain_dn.to_string();
                Some(crate::subschema::Subschema::dn(&domain).into_bytes())
            }
            _ => None,
        }
    }

    /// Attributes computed when read: the DN, the token, the resultant policy.
    fn constructed(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        id: u64,
        rec: &kauri_db::record::RecordView<'_>,
        dn: &str,
        types_only: bool,
        out: &mut Vec<Attribute>,
    ) {
        let values = |v: Vec<Vec<u8>>| if types_only { Vec::new() } else { v };
        if self.dn {
            out.push(Attribute {
                name: "distinguishedName".into(),
                values: values(vec![dn.as_bytes().to_vec()]),
            });
        }
        for name in &self.operational {
            if *name == "structuralObjectClass" {
                // The object's class chain without its auxiliary classes.
                let schema = self.dir.schema();
                let chain: Vec<Vec<u8>> = snap
                    .attr_id("objectClass")
                    .and_then(|a| {
                        let vals = rec.attr(a)?;
                        Some(
                            vals.values()
                                .filter(|v| {
                                    std::str::from_utf8(v.raw)
                                        .ok()
                                        .and_then(|n| schema.schema.class(n))
                                        .is_none_or(|c| c.object_class_category != 3)
                                })
                                .map(|v| v.raw.to_vec())
                                .collect(),
                        )
                    })
                    .unwrap_or_default();
                if !chain.is_empty() {
                    out.push(Attribute {
                        name: (*name).into(),
                        values: values(chain),
                    });
                }
                continue;
            }
            if let Some(v) = self.operational_value(snap, id, rec, dn, name) {
                out.push(Attribute {
                    name: (*name).into(),
                    values: values(vec![v]),
                });
            }
        }
        if let Some(invocation) = self.metadata {
            use kauri_domain::directory::metadata;
            let schema = self.dir.schema();
            if self.metadata_xml {
                let dsa = self
                    .dir
                    .domain()
                    .and_then(|d| d.ntds_settings.as_ref().map(ToString::to_string))
                    .unwrap_or_default();
                if let Ok(docs) = metadata::repl_attribute_meta_data_xml(
                    snap,
                    &schema.schema,
                    invocation,
                    &dsa,
                    id,
                ) {
                    if !docs.is_empty() {
                        out.push(Attribute {
                            name: "msDS-ReplAttributeMetaData".into(),
                            values: values(docs.into_iter().map(String::into_bytes).collect()),
                        });
                    }
                }
            }
            if let Ok(Some(blob)) =
                metadata::repl_property_meta_data(snap, &schema.schema, invocation, id)
            {
                out.push(Attribute {
                    name: "replPropertyMetaData".into(),
                    values: values(vec![blob]),
                });
            }
        }
        if !self.token_groups
            && !self.token_groups_no_gc
            && !self.token_groups_global_universal
            && !self.resultant_pso
            && !self.expiry_time
        {
            return;
        }
        let Some(domain) = self.dir.domain() else {
            return;
        };
        // Accounts and groups (the domain object has a SID but no token).
        let is_principal = snap
            .attr_id("sAMAccountType")
            .is_some_and(|a| rec.attr(a).is_some());
        if (self.token_groups || self.token_groups_no_gc) && is_principal {
            if let Ok(groups) = kauri_domain::directory::token_groups(snap, &domain, id) {
                let sids: Vec<Vec<u8>> = groups.into_iter().map(|(_, s)| s.to_bytes()).collect();
                for (wanted, name) in [
                    (self.token_groups, "tokenGroups"),
                    (self.token_groups_no_gc, "tokenGroupsNoGCAcceptable"),
                ] {
                    if wanted {
                        out.push(Attribute {
                            name: name.into(),
                            values: values(sids.clone()),
                        });
                    }
                }
            }
        }
        if self.token_groups_global_universal && is_principal {
            if let Ok(groups) =
                kauri_domain::directory::token_groups_global_and_universal(snap, &domain, id)
            {
                out.push(Attribute {
                    name: "tokenGroupsGlobalAndUniversal".into(),
                    values: values(groups.into_iter().map(|(_, s)| s.to_bytes()).collect()),
                });
            }
        }
        if self.expiry_time && is_principal {
            if let Ok(Some(t)) = kauri_domain::directory::password_expiry_time(snap, &self.dir, id)
            {
                out.push(Attribute {
                    name: "msDS-UserPasswordExpiryTimeComputed".into(),
                    values: values(vec![t.to_string().into_bytes()]),
                });
            }
        }
        if self.resultant_pso && is_principal {
            if let Ok(Some(pso)) = kauri_domain::directory::resultant_pso(snap, &domain, id) {
                if let Ok(pso_dn) = snap.dn_string(pso) {
                    out.push(Attribute {
                        name: "msDS-ResultantPSO".into(),
                        values: values(vec![pso_dn.into_bytes()]),
                    });
                }
            }
        }
    }

    fn attributes(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        id: u64,
        dn: &str,
        rec: &kauri_db::record::RecordView<'_>,
        types_only: bool,
    ) -> Vec<Attribute> {
        let mut out = Vec::new();
        self.constructed(snap, id, rec, dn, types_only, &mut out);
        let range_of = |attr: u32| {
            self.ids
                .iter()
                .find(|(i, _)| *i == attr)
                .and_then(|(_, r)| *r)
        };
        if self.all {
            for a in rec.attrs() {
                if self.hidden.binary_search(&a.id).is_ok() || self.named_only.contains(&a.id) {
                    continue;
                }
                if self
                    .descriptor
                    .is_some_and(|(d, p)| d == a.id && !p.with_all)
                    && !self.ids.iter().any(|(i, _)| *i == a.id)
                {
                    continue;
                }
                self.emit_stored(snap, a, range_of(a.id), types_only, &mut out);
            }
            // Linked attributes live in the link table: two prefix reads for all of them.
            if let Ok(links) = snap.link_values(id) {
                let mut dns = snap.dn_cache();
                for (attr, targets) in links {
                    self.emit_linked(
                        snap,
                        &mut dns,
                        attr,
                        &targets,
                        range_of(attr),
                        types_only,
                        &mut out,
                    );
                }
            }
        } else {
            let mut dns = None;
            for (attr, range) in &self.ids {
                if self.hidden.binary_search(attr).is_ok() {
                    continue;
                }
                if let Some(a) = rec.attr(*attr) {
                    self.emit_stored(snap, a, *range, types_only, &mut out);
                } else if let Ok(Some(targets)) = snap.linked_ids(id, *attr) {
                    let dns = dns.get_or_insert_with(|| snap.dn_cache());
                    self.emit_linked(snap, dns, *attr, &targets, *range, types_only, &mut out);
                }
            }
        }
        out
    }

    fn emit_stored(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        a: kauri_db::record::AttrView<'_>,
        range: Option<ValueRange>,
        types_only: bool,
        out: &mut Vec<Attribute>,
    ) {
        let Some(name) = snap.attr_name(a.id) else {
            return;
        };
        if let Some((sd_attr, DescriptorParts { parts, .. })) = self.descriptor {
            if a.id == sd_attr {
                if parts == 0 {
                    return;
                }
                // The record names the descriptor by id; the parts asked for are sent.
                let values = a
                    .values()
                    .filter_map(|v| snap.stored_descriptor(v.raw))
                    .filter_map(|sd| descriptor_part_bytes(sd, parts))
                    .collect::<Vec<_>>();
                if !values.is_empty() {
                    out.push(Attribute {
                        name: name.to_string(),
                        values: if types_only { Vec::new() } else { values },
                    });
                }
                return;
            }
        }
        if let Some(attr) = self.window(&name, a.count as usize, range, types_only, |skip, take| {
            a.values()
                .skip(skip)
                .take(take)
                .map(|v| v.raw.to_vec())
                .collect()
        }) {
            out.push(attr);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_linked(
        &self,
        snap: &kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
        dns: &mut kauri_db::read::DnCache,
        attr: u32,
        targets: &[u64],
        range: Option<ValueRange>,
        types_only: bool,
        out: &mut Vec<Attribute>,
    ) {
        if targets.is_empty() {
            return;
        }
        let Some(name) = snap.attr_name(attr) else {
            return;
        };
        // Only the DNs of the values sent are built: a ranged read of a 100,000-member
        // group names 1,500 entries, not 100,000.
        if let Some(a) = self.window(&name, targets.len(), range, types_only, |skip, take| {
            targets
                .iter()
                .skip(skip)
                .take(take)
                .filter_map(|t| snap.cached_dn(dns, *t).ok())
                .map(String::into_bytes)
                .collect()
        }) {
            out.push(a);
        }
    }

    /// The attribute as sent: whole when it fits `max_values` and no range was asked
    /// for, otherwise at most `max_values` values tagged with the range they cover
    /// (AD's ranged retrieval). `values(skip, take)` produces the values sent.
    fn window(
        &self,
        name: &str,
        count: usize,
        range: Option<ValueRange>,
        types_only: bool,
        values: impl FnOnce(usize, usize) -> Vec<Vec<u8>>,
    ) -> Option<Attribute> {
        let max = self.max_values;
        if range.is_none() && count <= max {
            let values = if types_only {
                Vec::new()
            } else {
                values(0, count)
            };
            return Some(Attribute {
                name: name.to_string(),
                values,
            });
        }
        let (low, high) = range.unwrap_or((0, None));
        if low == count && count > 0 {
            // Just past the last value: AD answers `range=count-*` without values.
            return Some(Attribute {
                name: format!("{name};range={low}-*"),
                values: Vec::new(),
            });
        }
        if low >= count {
            return None;
        }
        let want_last = high.unwrap_or(usize::MAX).min(count - 1);
        let last = want_last.min(low.saturating_add(max - 1));
        if last < low {
            return None;
        }
        let tag = if last >= count - 1 {
            format!("{low}-*")
        } else {
            format!("{low}-{last}")
        };
        let values = if types_only {
            Vec::new()
        } else {
            values(low, last + 1 - low)
        };
        Some(Attribute {
            name: format!("{name};range={tag}"),
            values,
        })
    }
}

/// The DN in the extended form AD returns with the extended-DN control:
/// `<GUID=…>;<SID=…>;dn`, hexadecimal (format 0) or string forms (format 1). The binary
/// (normalized) forms are used, whatever form the client stored.
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
            .map(|v| v.norm().into_owned())
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

/// How a search returns `nTSecurityDescriptor`, as AD does: the parts the SD flags control
/// names (every part when it is absent or zero); nothing at all when the SACL is asked for
/// by a caller without the privilege to read it (an administrator's), which is why tools
/// send flags 7; and with `*` only when the control is present (otherwise only when named).
#[derive(Debug, Clone, Copy)]
struct DescriptorParts {
    /// The parts returned; 0 returns nothing.
    parts: u32,
    /// Whether `*` includes the attribute.
    with_all: bool,
}

fn descriptor_parts(controls: &[Control], identity: &Identity) -> DescriptorParts {
    use kauri_domain::security::descriptor::sd_flags;
    let control = controls
        .iter()
        .find(|c| c.oid == ctl::SD_FLAGS)
        .and_then(|c| ctl::SdFlags::from_control(c).ok());
    let asked = control
        .map(|f| f.flags as u32 & sd_flags::ALL)
        .filter(|f| *f != 0)
        .unwrap_or(sd_flags::ALL);
    let parts = if asked & sd_flags::SACL != 0 && !identity.is_admin() {
        0
    } else {
        asked
    };
    DescriptorParts {
        parts,
        with_all: control.is_some(),
    }
}

/// A stored descriptor reduced to `parts`.
fn descriptor_part_bytes(stored: &[u8], parts: u32) -> Option<Vec<u8>> {
    use kauri_domain::security::descriptor::sd_flags;
    if parts == sd_flags::ALL {
        return Some(stored.to_vec());
    }
    let sd = kauri_domain::security::SecurityDescriptor::from_bytes(stored).ok()?;
    sd.only(parts).to_bytes().ok()
}

/// The sight of the search's caller, `None` when nothing is checked (the server itself, a
/// directory without a domain, the configured administrator).
fn sighting_for(
    ctx: &Ctx,
    job: &SearchJob,
    cursor: &SearchCursor,
) -> Result<Option<crate::sight::Shared>, LdapResult> {
    // A bound account's token is usually cached: found without copying the account or
    // opening a snapshot.
    let cached = match &job.identity {
        Identity::Account(a) => a
            .sid
            .as_ref()
            .and_then(|sid| ctx.dir.cached_principal_of(sid, &a.groups, Some(a.id))),
        _ => None,
    };
    let principal = match cached {
        Some(p) => Some(p),
        None => {
            let snap = ctx.db.read().map_err(|e| db_result(&e))?;
            ctx.dir
                .principal(&snap, &job.identity.caller(ctx))
                .map_err(|e| LdapResult::new(ResultCode::OTHER, format!("access check: {e}")))?
        }
    };
    Ok(principal.map(|p| {
        std::cell::RefCell::new(crate::sight::Sighting::new(
            ctx.dir.clone(),
            p,
            cursor.filter_attributes(),
        ))
    }))
}

/// The callback a cursor asks what the caller sees of a record.
fn sight_of<'a>(
    sighting: &'a Option<crate::sight::Shared>,
    snap: &'a kauri_db::DbRead<'_, kauri_kv::lmdb::LmdbBackend>,
) -> impl FnMut(u64, &kauri_db::record::RecordView<'_>) -> Result<kauri_db::search::Sight, DbError> + 'a
{
    move |id, rec| match sighting {
        Some(s) => s.borrow_mut().sight(snap, id, rec),
        None => Ok(kauri_db::search::Sight::Whole),
    }
}

/// A base the caller may not see is no object, to a base search (MS-ADTS 5.1.3.3.6:
/// the search answers as if it did not exist).
fn base_visible(ctx: &Ctx, job: &SearchJob, base: &Dn) -> Result<(), LdapResult> {
    if job.req.scope != SearchScope::Base || ctx.dir.domain().is_none() {
        return Ok(());
    }
    let snap = ctx.db.read().map_err(|e| db_result(&e))?;
    let Some(id) = snap
        .lookup(base)
        .map_err(|e| db_result(&e))?
        .filter(|i| *i != 0)
    else {
        return Ok(());
    };
    let caller = job.identity.caller(ctx);
    let other = |e: kauri_domain::directory::DirError| {
        LdapResult::new(ResultCode::OTHER, format!("access check: {e}"))
    };
    let Some(p) = ctx.dir.principal(&snap, &caller).map_err(other)? else {
        return Ok(());
    };
    let schema = ctx.dir.schema();
    if ctx.dir.visible(&snap, &schema, &p, id).map_err(other)? {
        return Ok(());
    }
    Err(LdapResult::new(
        ResultCode::NO_SUCH_OBJECT,
        "0000208D: NameErr: DSID-03100241, problem 2001 (NO_OBJECT), data 0, best match \
         of:\n\t''\n",
    ))
}

/// Orders `lower` (lowercase already) against `name` as if `name` were lowercased, without
/// allocating.
fn cmp_ascii_lower(lower: &str, name: &str) -> std::cmp::Ordering {
    lower
        .bytes()
        .cmp(name.bytes().map(|b| b.to_ascii_lowercase()))
}
