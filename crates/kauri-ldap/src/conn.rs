//! One client connection: reading requests, dispatching them, writing responses.
//!
//! The connection task owns the socket. Requests are read one at a time, but several may be
//! in progress at once: searches and compares run on blocking threads, writes wait for the
//! single writer, and their responses come back through a bounded channel that the task
//! writes to the socket. When `max_ops_per_connection` requests are in progress the task
//! stops reading until one finishes, so a client cannot grow the server's memory without
//! bound. A message that frames but does not decode gets `protocolError` under its message
//! id; bytes that do not frame get a notice of disconnection and the connection closes.
//! StartTLS swaps the socket for a TLS stream between two messages.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use kauri_db::{Dn, Entry, Modification, ModifyOp, Rdn};
use kauri_ldap_proto::codec::{FrameError, LdapCodec, SaslFraming};
use kauri_ldap_proto::controls as ctl;
use kauri_ldap_proto::decode::DecodeError;
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{
    BindAuth, BindResponse, Control, ExtendedResponse, LdapMessage, LdapResult, MessageId, ModOp,
    ProtocolOp, ResultCode,
};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::codec::{Decoder, Encoder, Framed, FramedParts};
use tokio_util::sync::CancellationToken;

use kauri_net::{Close, Guarded, RequestClock, Slot};

mod kerberos;
mod sasl;

use crate::auth::{self, Identity};
use crate::ctx::Ctx;
use crate::extdn;
use crate::result::{db_result, dir_result};
use crate::search::{self, CursorStore, SearchJob};
use kauri_auth::spnego::SpnegoServer;
use kauri_auth::SecurityLayer;
use kauri_domain::directory::{BindUpdate, Caller, Change, DirError, Request, TREE_DELETE_STEP};

/// A byte stream a connection can run on (TCP, TLS over TCP, a Unix socket).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The frame codec of a connection: LDAP messages in, already-encoded bytes out. It is the
/// upper two layers of the transport (the socket, or TLS over it, is below): a SASL
/// security layer, once a bind negotiated one, then LDAP's own framing.
pub struct ServerCodec {
    ldap: LdapCodec,
    sasl: Option<SaslFraming>,
    max: usize,
    clock: Option<Arc<RequestClock>>,
}

impl ServerCodec {
    /// A codec for messages up to `max` bytes, without a security layer.
    pub fn new(max: usize) -> ServerCodec {
        ServerCodec {
            ldap: LdapCodec::new(max),
            sasl: None,
            max,
            clock: None,
        }
    }

    /// Tells `clock` where requests begin and end, for the per-request time limit.
    pub fn with_clock(mut self, clock: Arc<RequestClock>) -> ServerCodec {
        self.clock = Some(clock);
        self
    }

    /// Protects every message from now on with `layer`.
    fn set_layer(&mut self, layer: Box<dyn SecurityLayer>) {
        self.sasl = Some(SaslFraming::new(layer, self.max));
    }

    /// Whether a SASL security layer protects the connection.
    pub fn has_layer(&self) -> bool {
        self.sasl.is_some()
    }
}

impl Decoder for ServerCodec {
    type Item = Result<LdapMessage, DecodeError>;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, FrameError> {
        let decoded = match self.sasl.as_mut() {
            Some(sasl) => sasl.decode(&mut self.ldap, src),
            None => self.ldap.decode(src),
        };
        if let Some(clock) = &self.clock {
            // Part of a request may also wait inside the SASL layer, already unwrapped.
            let pending = !src.is_empty() || self.sasl.as_ref().is_some_and(|s| s.has_pending());
            clock.decoded(matches!(decoded, Ok(Some(_))), pending);
        }
        decoded
    }
}

impl Encoder<Vec<u8>> for ServerCodec {
    type Error = std::io::Error;

    fn encode(&mut self, item: Vec<u8>, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        match self.sasl.as_mut() {
            Some(sasl) => sasl.wrap_into(&item, dst),
            None => dst.extend_from_slice(&item),
        }
        Ok(())
    }
}

/// Indexes into [`crate::ctx::Counters::finished`] (names in [`crate::ctx::OP_NAMES`]).
const OP_BIND: usize = 0;
const OP_SEARCH: usize = 1;
const OP_ADD: usize = 2;
const OP_MODIFY: usize = 3;
const OP_DELETE: usize = 4;
const OP_MODDN: usize = 5;
const OP_COMPARE: usize = 6;
const OP_EXTENDED: usize = 7;
const OP_ABANDON: usize = 8;
const OP_UNBIND: usize = 9;

/// The response operation that answers a request (by its APPLICATION tag number), for
/// errors on requests that could not be fully decoded.
fn response_op(request_tag: Option<u32>, result: LdapResult) -> ProtocolOp {
    match request_tag {
        Some(0) => ProtocolOp::BindResponse(BindResponse {
            result,
            server_sasl_creds: None,
            sicily: None,
        }),
        Some(3) => ProtocolOp::SearchResultDone(result),
        Some(6) => ProtocolOp::ModifyResponse(result),
        Some(8) => ProtocolOp::AddResponse(result),
        Some(10) => ProtocolOp::DelResponse(result),
        Some(12) => ProtocolOp::ModifyDnResponse(result),
        Some(14) => ProtocolOp::CompareResponse(result),
        _ => ProtocolOp::ExtendedResponse(ExtendedResponse {
            result,
            name: None,
            value: None,
        }),
    }
}

fn msg(id: MessageId, op: ProtocolOp) -> Vec<u8> {
    encode_message(&LdapMessage {
        id,
        op,
        controls: Vec::new(),
    })
}

fn notice_of_disconnection(code: ResultCode, text: &str) -> Vec<u8> {
    encode_message(&ctl::notice_of_disconnection(code, text))
}

/// Connection state the dispatch code needs.
struct Conn {
    ctx: Arc<Ctx>,
    identity: Identity,
    encrypted: bool,
    /// The channel binding of the certificate this connection's TLS handshake used.
    channel_binding: Option<[u8; 16]>,
    out: mpsc::Sender<Vec<u8>>,
    paged: Arc<Mutex<CursorStore>>,
    running: Arc<Mutex<HashMap<MessageId, CancellationToken>>>,
    permits: Arc<Semaphore>,
    peer: String,
    immediate: Vec<Vec<u8>>,
    /// Unix uid and gid of the peer, on the `ldapi://` socket.
    peer_cred: Option<(u32, u32)>,
    /// A GSS-SPNEGO bind in progress.
    sasl: Option<SpnegoServer>,
    /// A GSSAPI bind in progress.
    gssapi: Option<kerberos::GssapiBind>,
    /// A Sicily NTLM bind in progress (its CHALLENGE sent).
    sicily: Option<kauri_auth::ntlm::NtlmServer>,
    /// The security layer a bind just negotiated, installed once its response is out.
    new_layer: Option<Box<dyn SecurityLayer>>,
    /// Whether a SASL layer encrypts the connection (passwords may then travel on it, as
    /// AD allows on a sealed connection).
    sealed: bool,
    /// Whether the client came to the global catalog port: a read-only view of the
    /// forest.
    catalog: bool,
    /// The client's address (none on the local socket).
    client_ip: Option<std::net::IpAddr>,
}

/// The uid this server runs as (EXTERNAL binds from it administer).
fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(u32::MAX)
    }
    #[cfg(not(unix))]
    {
        u32::MAX
    }
}

/// How a client reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Plain TCP (StartTLS available).
    Tcp,
    /// TLS from the first byte (LDAPS).
    Tls,
    /// The local `ldapi://` socket, with the peer's uid and gid.
    Local {
        /// Peer uid.
        uid: u32,
        /// Peer gid.
        gid: u32,
    },
}

/// What the listener knows of a connection it accepted.
pub struct Accepted {
    /// How the client reached the server.
    pub transport: Transport,
    /// The client's address (or the local socket's peer), for logs.
    pub peer: String,
    /// Whether the client came to a global catalog port.
    pub catalog: bool,
    /// The connection's place in the connection table.
    pub slot: Slot,
    /// When it was accepted (the first request is due `init_timeout_secs` after).
    pub at: Instant,
    /// The channel binding of the certificate the TLS handshake used (LDAPS).
    pub channel_binding: Option<[u8; 16]>,
}

/// Serves one connection until the client unbinds or disconnects, or a connection rule
/// closes it.
pub async fn serve(io: Box<dyn Io>, ctx: Arc<Ctx>, accepted: Accepted) {
    ctx.counters
        .open_connections
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ctx.counters
        .connections
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let peer = accepted.peer.clone();
    let result = run(io, ctx.clone(), accepted).await;
    if let Err(e) = result {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
    ctx.counters
        .open_connections
        .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
}

enum Next {
    Continue,
    Close,
    StartTls(MessageId),
}

/// The stream a connection's frames are read from: the socket (or TLS over it) under the
/// per-request time limit.
type Stream = Guarded<Box<dyn Io>>;

/// How long a write may wait for the client to read (`write_timeout_secs`; none when 0): a
/// client that asks and never reads cannot keep its connection, buffers and place forever.
#[derive(Clone, Copy)]
struct Deadline(Option<Duration>);

impl Deadline {
    fn new(secs: u64) -> Deadline {
        Deadline((secs > 0).then(|| Duration::from_secs(secs)))
    }

    /// Runs a write, failing it with `TimedOut` when it takes longer than allowed.
    async fn run<T>(
        self,
        write: impl std::future::Future<Output = std::io::Result<T>>,
    ) -> std::io::Result<T> {
        match self.0 {
            None => write.await,
            Some(limit) => tokio::time::timeout(limit, write)
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, WriteTimedOut))?,
        }
    }
}

/// The error of a write that outlasted `write_timeout_secs`, told apart from the system's
/// own timeouts so the connection rule that ended it is counted.
#[derive(Debug, thiserror::Error)]
#[error("the client read nothing for too long")]
struct WriteTimedOut;

impl WriteTimedOut {
    fn is(e: &std::io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<WriteTimedOut>())
    }
}

/// The notice of a connection closed to make room for a newcomer.
const EVICTED: &str =
    "the server is busy: an idle unauthenticated connection was closed for a new one";

/// Sends a notice of disconnection before closing, giving up after a second: a client that
/// is being disconnected gets no longer than that to read it.
async fn notify(framed: &mut Framed<Stream, ServerCodec>, code: ResultCode, text: &str) {
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        framed.send(notice_of_disconnection(code, text)),
    )
    .await;
}

/// The stream and codec of a new (or newly encrypted) connection.
fn layers(io: Box<dyn Io>, ctx: &Ctx, clock: &Arc<RequestClock>) -> (Stream, ServerCodec) {
    let cfg = ctx.cfg();
    let limit = Duration::from_secs(cfg.request_timeout_secs);
    (
        Guarded::new(io, clock.clone(), limit),
        ServerCodec::new(cfg.max_pdu).with_clock(clock.clone()),
    )
}

/// Bytes of read buffer a connection starts with.
const READ_BUFFER: usize = 8 << 10;

async fn run(io: Box<dyn Io>, ctx: Arc<Ctx>, accepted: Accepted) -> std::io::Result<()> {
    let Accepted {
        transport,
        peer,
        catalog,
        slot,
        at: accepted_at,
        channel_binding,
    } = accepted;
    // A local socket is as private as an encrypted connection.
    let encrypted = transport != Transport::Tcp;
    let peer_cred = match transport {
        Transport::Local { uid, gid } => Some((uid, gid)),
        _ => None,
    };
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(64);
    // The settings this connection starts with (a reload applies to the connections after).
    let cfg = ctx.cfg();
    let max_ops = cfg.max_ops_per_connection.max(1);
    let client_ip = peer.parse::<std::net::SocketAddr>().ok().map(|a| a.ip());
    let mut conn = Conn {
        ctx: ctx.clone(),
        identity: Identity::Anonymous,
        encrypted,
        channel_binding,
        out: out_tx,
        paged: Arc::new(Mutex::new(CursorStore::default())),
        running: Arc::new(Mutex::new(HashMap::new())),
        permits: Arc::new(Semaphore::new(max_ops)),
        peer,
        immediate: Vec::new(),
        peer_cred,
        sasl: None,
        gssapi: None,
        sicily: None,
        new_layer: None,
        sealed: false,
        catalog,
        client_ip,
    };
    let clock = RequestClock::new();
    let (stream, codec) = layers(io, &ctx, &clock);
    let mut framed = Framed::with_capacity(stream, codec, READ_BUFFER);
    let idle = Duration::from_secs(cfg.idle_timeout_secs.max(1));
    let init = (cfg.init_timeout_secs > 0).then(|| Duration::from_secs(cfg.init_timeout_secs));
    let writes = Deadline::new(cfg.write_timeout_secs);
    drop(cfg);
    let mut first_request = true;
    let mut last_activity = Instant::now();
    let mut permit: Option<OwnedSemaphorePermit> = None;
    let outcome: std::io::Result<()> = async { loop {
        // Requests in progress, or a bind between its legs, keep the connection in place.
        let busy = conn.permits.available_permits() + usize::from(permit.is_some()) < max_ops
            || conn.sasl.is_some()
            || conn.sicily.is_some();
        if !busy {
            slot.end_work();
        }
        // Until its first request a connection has InitRecvTimeout; then MaxConnIdleTime.
        let idle_deadline = (last_activity + idle, Close::IdleTimeout);
        let (deadline, rule) = match init {
            Some(init) if first_request => std::cmp::min_by_key(
                (accepted_at + init, Close::InitTimeout),
                idle_deadline,
                |d| d.0,
            ),
            _ => idle_deadline,
        };
        let deadline = tokio::time::Instant::from_std(deadline);
        tokio::select! {
            biased;
            Some(bytes) = out_rx.recv() => {
                // Write everything that is ready with one flush, unless the client has
                // stopped reading.
                let written = writes.run(async {
                    framed.feed(bytes).await?;
                    let mut fed = 1;
                    while fed < 64 {
                        match out_rx.try_recv() {
                            Ok(more) => {
                                framed.feed(more).await?;
                                fed += 1;
                            }
                            Err(_) => break,
                        }
                    }
                    framed.flush().await
                })
                .await;
                written?;
                last_activity = Instant::now();
                slot.touch();
            }
            _ = slot.evicted() => {
                tracing::debug!(peer = %conn.peer, "closed to make room for another connection");
                notify(&mut framed, ResultCode::UNAVAILABLE, EVICTED).await;
                break;
            }
            p = conn.permits.clone().acquire_owned(), if permit.is_none() => {
                permit = p.ok();
            }
            frame = framed.next(), if permit.is_some() => {
                last_activity = Instant::now();
                slot.touch();
                let Some(frame) = frame else { break };
                // Claimed before it is served, so it cannot be closed for a newcomer
                // halfway; a connection closed for one just before serves nothing more.
                if !slot.begin_work() {
                    notify(&mut framed, ResultCode::UNAVAILABLE, EVICTED).await;
                    break;
                }
                match frame {
                    Err(FrameError::Io(e)) if kauri_net::is_request_timeout(&e) => {
                        slot.closed_by(Close::RequestTimeout);
                        tracing::debug!(peer = %conn.peer, "request not received in time; disconnecting");
                        notify(&mut framed, ResultCode::UNAVAILABLE, "a request did not arrive whole in time").await;
                        break;
                    }
                    Err(FrameError::Io(e)) => return Err(e),
                    Err(e) => {
                        conn.ctx.counters.bad_messages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        tracing::debug!(peer = %conn.peer, error = %e, "unreadable data; disconnecting");
                        notify(&mut framed, ResultCode::PROTOCOL_ERROR, &e.to_string()).await;
                        break;
                    }
                    Ok(Err(bad)) => {
                        first_request = false;
                        conn.ctx.counters.bad_messages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        match bad.id {
                            Some(id) if id > 0 && !matches!(bad.op, Some(2) | Some(16)) => {
                                let result = LdapResult::new(bad.code, bad.reason.clone());
                                writes.run(framed.send(msg(id, response_op(bad.op, result)))).await?;
                            }
                            _ => {
                                notify(&mut framed, ResultCode::PROTOCOL_ERROR, &bad.reason).await;
                                break;
                            }
                        }
                    }
                    // Message id 0 belongs to the server's unsolicited notifications (RFC 4511
                    // 4.1.1.1): a client that sends it is not speaking LDAP.
                    Ok(Ok(m)) if m.id == 0 => {
                        conn.ctx.counters.bad_messages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        notify(&mut framed, ResultCode::PROTOCOL_ERROR, "message id 0 is reserved for unsolicited notifications").await;
                        break;
                    }
                    Ok(Ok(m)) => {
                        first_request = false;
                        let Some(p) = permit.take() else { continue };
                        let next = conn.dispatch(m, p).await;
                        slot.set_authenticated(conn.identity != Identity::Anonymous);
                        if !conn.immediate.is_empty() {
                            let immediate = std::mem::take(&mut conn.immediate);
                            writes.run(async {
                                for bytes in immediate {
                                    framed.feed(bytes).await?;
                                }
                                framed.flush().await
                            })
                            .await?;
                        }
                        // A bind's security layer starts after its response.
                        if let Some(layer) = conn.new_layer.take() {
                            conn.sealed = layer.sealed();
                            framed.codec_mut().set_layer(layer);
                        }
                        match next {
                            Next::Continue => {}
                            Next::Close => break,
                            Next::StartTls(id) => {
                                match start_tls(&mut conn, framed, id, &clock, &slot).await {
                                    Ok(Some(f)) => framed = f,
                                    Ok(None) => return Ok(()),
                                    Err(e) => return Err(e),
                                }
                            }
                        }
                    }
                }
            }
            _ = tokio::time::sleep_until(deadline), if !busy => {
                slot.closed_by(rule);
                tracing::debug!(peer = %conn.peer, rule = rule.name(), "connection timed out");
                let text = match rule {
                    Close::InitTimeout => "no request arrived in time",
                    _ => "idle timeout",
                };
                notify(&mut framed, ResultCode::UNAVAILABLE, text).await;
                break;
            }
        }
    }
    Ok(()) }.await;
    if outcome.as_ref().is_err_and(WriteTimedOut::is) {
        slot.closed_by(Close::WriteTimeout);
    }
    // Stop what is still running for this connection.
    for (_, t) in conn.running.lock().drain() {
        t.cancel();
    }
    outcome
}

/// StartTLS: answers the request and, when it succeeds, performs the handshake; returns
/// the framing over TLS, the plain one unchanged when the request was refused, or `None`
/// when the connection must end (bytes that followed the request in the clear, a handshake
/// that failed, timed out or was cut short to make room).
async fn start_tls(
    conn: &mut Conn,
    mut framed: Framed<Stream, ServerCodec>,
    id: MessageId,
    clock: &Arc<RequestClock>,
    slot: &Slot,
) -> std::io::Result<Option<Framed<Stream, ServerCodec>>> {
    let ext = |code, text: &str| {
        msg(
            id,
            ProtocolOp::ExtendedResponse(ExtendedResponse {
                result: LdapResult::new(code, text),
                name: Some(ctl::START_TLS.to_string()),
                value: None,
            }),
        )
    };
    let writes = Deadline::new(conn.ctx.cfg().write_timeout_secs);
    let tls_now = conn.ctx.tls();
    let refusal = if tls_now.is_none() {
        Some((ResultCode::UNAVAILABLE, "TLS is not configured"))
    } else if conn.encrypted {
        Some((ResultCode::OPERATIONS_ERROR, "TLS is already active"))
    } else if !conn.running.lock().is_empty() {
        Some((
            ResultCode::OPERATIONS_ERROR,
            "operations are still in progress",
        ))
    } else if framed.codec().has_layer() {
        Some((
            ResultCode::OPERATIONS_ERROR,
            "00002020: a SASL security layer already protects this connection",
        ))
    } else {
        None
    };
    if let Some((code, text)) = refusal {
        writes.run(framed.send(ext(code, text))).await?;
        return Ok(Some(framed));
    }
    // A client must wait for the answer before it sends anything more (RFC 4511 4.14.1).
    // Bytes already here were sent in the clear and would be taken as if they had come
    // over TLS: a man in the middle's way to inject requests. The connection ends.
    if !framed.read_buffer().is_empty() {
        notify(
            &mut framed,
            ResultCode::PROTOCOL_ERROR,
            "data followed the StartTLS request before its response",
        )
        .await;
        return Ok(None);
    }
    let Some(tls_now) = tls_now else {
        return Ok(None);
    };
    writes
        .run(framed.send(ext(ResultCode::SUCCESS, "")))
        .await?;
    let parts = framed.into_parts();
    // The handshake has the time a new connection has for its first request, and gives
    // way like any idle connection.
    let handshake = tls_now.acceptor.accept(parts.io.into_inner());
    let limit = conn.ctx.cfg().handshake_timeout();
    slot.end_work();
    let tls = tokio::select! {
        r = tokio::time::timeout(limit, handshake) => match r {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                slot.closed_by(Close::InitTimeout);
                return Ok(None);
            }
        },
        _ = slot.evicted() => return Ok(None),
    };
    conn.encrypted = true;
    conn.channel_binding = tls_now.channel_binding;
    let (stream, codec) = layers(Box::new(tls), &conn.ctx, clock);
    Ok(Some(Framed::from_parts(FramedParts::new::<Vec<u8>>(
        stream, codec,
    ))))
}

/// Whether every critical control is one this operation supports.
fn check_controls(controls: &[Control], supported: &[&str]) -> Result<(), LdapResult> {
    for c in controls {
        if c.critical && !supported.contains(&c.oid.as_str()) {
            return Err(LdapResult::new(
                ResultCode::UNAVAILABLE_CRITICAL_EXTENSION,
                format!(
                    "critical control {} is not supported for this operation",
                    c.oid
                ),
            ));
        }
    }
    Ok(())
}

fn has_control(controls: &[Control], oid: &str) -> bool {
    controls.iter().any(|c| c.oid == oid)
}

const SEARCH_CONTROLS: &[&str] = &[
    ctl::PAGED_RESULTS,
    ctl::SORT_REQUEST,
    ctl::VLV_REQUEST,
    ctl::DOMAIN_SCOPE,
    ctl::SEARCH_OPTIONS,
    ctl::SHOW_DELETED,
    // Without the recycle bin, recycled objects are the tombstones show-deleted shows,
    // and no link value is kept deactivated, so there is none more to reveal.
    ctl::SHOW_RECYCLED,
    ctl::SHOW_DEACTIVATED_LINK,
    ctl::EXTENDED_DN,
    ctl::ASQ,
    ctl::SD_FLAGS,
];

impl Conn {
    /// Whether passwords may travel on this connection: encrypted ones, and plain ones
    /// when the server is configured to accept them there (Samba's behaviour).
    fn passwords_allowed(&self) -> bool {
        self.encrypted || self.sealed || self.ctx.cfg().plain_ldap_passwords
    }

    /// The Who am I? answer: AD's `u:DOMAIN\\name` for an account of the domain, however
    /// it bound; `dn:` with the DN otherwise.
    fn who_am_i(&self) -> String {
        use kauri_domain::directory::view::View;
        if let (Identity::Account(a), Some(domain)) = (&self.identity, self.ctx.dir.domain()) {
            let sam = self
                .ctx
                .db
                .read()
                .ok()
                .and_then(|r| r.text(a.id, "sAMAccountName").ok().flatten());
            if let Some(sam) = sam {
                return format!("u:{}\\{sam}", domain.netbios);
            }
        }
        self.identity.authz_id()
    }

    /// Queues a response decided on the connection's own task; the loop writes it right
    /// after the dispatch, without a hop through the response channel.
    fn reply(&mut self, bytes: Vec<u8>) {
        self.immediate.push(bytes);
    }

    async fn dispatch(&mut self, m: LdapMessage, permit: OwnedSemaphorePermit) -> Next {
        let id = m.id;
        let started = Instant::now();
        match m.op {
            ProtocolOp::UnbindRequest => {
                self.ctx.counters.finish(OP_UNBIND, true, started.elapsed());
                Next::Close
            }
            ProtocolOp::AbandonRequest(target) => {
                let found = match self.running.lock().get(&target) {
                    Some(t) => {
                        t.cancel();
                        true
                    }
                    None => false,
                };
                self.ctx
                    .counters
                    .finish(OP_ABANDON, found, started.elapsed());
                Next::Continue
            }
            ProtocolOp::BindRequest(b) => {
                let (result, data) = self.bind(b.version, &b.name, &b.auth).await;
                let (server_sasl_creds, sicily) = match data {
                    Some(sasl::BindData::Sasl(c)) => (Some(c), None),
                    Some(sasl::BindData::Sicily(d)) => (None, Some(d)),
                    None => (None, None),
                };
                self.ctx.counters.finish(
                    OP_BIND,
                    result.code == ResultCode::SUCCESS,
                    started.elapsed(),
                );
                tracing::debug!(peer = %self.peer, id, op = "bind", code = result.code.0, elapsed_us = started.elapsed().as_micros() as u64);
                self.audit_bind(&b.name, &b.auth, &result, started.elapsed());
                self.reply(msg(
                    id,
                    ProtocolOp::BindResponse(BindResponse {
                        result,
                        server_sasl_creds,
                        sicily,
                    }),
                ));
                Next::Continue
            }
            ProtocolOp::SearchRequest(req) => {
                if let Err(result) = check_controls(&m.controls, SEARCH_CONTROLS) {
                    self.reply(msg(id, ProtocolOp::SearchResultDone(result)));
                    return Next::Continue;
                }
                let token = CancellationToken::new();
                self.running.lock().insert(id, token.clone());
                let inline = !m.controls.iter().any(|c| {
                    matches!(
                        c.oid.as_str(),
                        ctl::PAGED_RESULTS | ctl::SORT_REQUEST | ctl::VLV_REQUEST
                    )
                });
                let mut job = SearchJob {
                    id,
                    req,
                    controls: m.controls,
                    identity: self.identity.clone(),
                    out: if inline {
                        search::Sink::buffer()
                    } else {
                        search::Sink::Channel(self.out.clone())
                    },
                    cancel: token,
                    paged: self.paged.clone(),
                    client: self.client_ip,
                    catalog: self.catalog,
                };
                if inline {
                    // Small searches answer from the connection task; the rest move on.
                    let outcome = search::run(&self.ctx, &job);
                    if !job.out.too_big() {
                        self.immediate.extend(job.out.take());
                        if let Some(ok) = outcome {
                            self.ctx.counters.finish(OP_SEARCH, ok, started.elapsed());
                        }
                        self.running.lock().remove(&id);
                        drop(permit);
                        return Next::Continue;
                    }
                    job.out = search::Sink::Channel(self.out.clone());
                }
                let ctx = self.ctx.clone();
                let running = self.running.clone();
                tokio::task::spawn_blocking(move || {
                    if let Some(ok) = search::run(&ctx, &job) {
                        ctx.counters.finish(OP_SEARCH, ok, started.elapsed());
                    }
                    running.lock().remove(&id);
                    tracing::debug!(
                        id,
                        op = "search",
                        elapsed_us = started.elapsed().as_micros() as u64
                    );
                    drop(permit);
                });
                Next::Continue
            }
            ProtocolOp::CompareRequest(c) => {
                // One entry read: answered on the connection's task, like a bind.
                let result = compare(
                    &self.ctx,
                    &self.identity,
                    self.catalog,
                    &c.dn,
                    &c.attribute,
                    &c.value,
                );
                let ok = matches!(
                    result.code,
                    ResultCode::COMPARE_TRUE | ResultCode::COMPARE_FALSE
                );
                self.ctx.counters.finish(OP_COMPARE, ok, started.elapsed());
                self.reply(msg(id, ProtocolOp::CompareResponse(result)));
                drop(permit);
                Next::Continue
            }
            ProtocolOp::AddRequest(mut a) => {
                a.dn = extdn::plain_dn(&self.ctx, &a.dn);
                for attr in &mut a.attributes {
                    extdn::plain_values(&self.ctx, &attr.name, &mut attr.values);
                }
                let op = self.ctx.parse_dn("DN", &a.dn).map(|dn| {
                    let mut e = Entry::new(dn);
                    for attr in a.attributes {
                        e.push(&attr.name, attr.values);
                    }
                    Change::Add(e)
                });
                self.write(
                    OP_ADD,
                    id,
                    m.controls,
                    // AD accepts the SD flags control on an add and ignores it.
                    &[ctl::SD_FLAGS],
                    op,
                    ProtocolOp::AddResponse,
                    permit,
                )
                .await;
                Next::Continue
            }
            ProtocolOp::ModifyRequest(r) => {
                let permissive = has_control(&m.controls, ctl::PERMISSIVE_MODIFY);
                if r.dn.is_empty() && self.ctx.dir.domain().is_some() {
                    let result = self.root_dse_modify(&r.changes).await;
                    self.ctx.counters.finish(
                        OP_MODIFY,
                        result.code == ResultCode::SUCCESS,
                        started.elapsed(),
                    );
                    self.reply(msg(id, ProtocolOp::ModifyResponse(result)));
                    drop(permit);
                    return Next::Continue;
                }
                let target = extdn::plain_dn(&self.ctx, &r.dn);
                let mut r = r;
                for c in &mut r.changes {
                    extdn::plain_values(&self.ctx, &c.attribute.name, &mut c.attribute.values);
                }
                let sd_flags = m
                    .controls
                    .iter()
                    .find(|c| c.oid == ctl::SD_FLAGS)
                    .and_then(|c| <ctl::SdFlags as ctl::ControlValue>::from_control(c).ok())
                    .map(|f| f.flags as u32);
                let op = self.ctx.parse_dn("DN", &target).map(|dn| Change::Modify {
                    sd_flags,
                    dn,
                    mods: r
                        .changes
                        .into_iter()
                        .map(|c| Modification {
                            op: match c.op {
                                ModOp::Add => ModifyOp::Add,
                                ModOp::Delete => ModifyOp::Delete,
                                ModOp::Replace => ModifyOp::Replace,
                                ModOp::Increment => ModifyOp::Increment,
                            },
                            attr: c.attribute.name,
                            values: c.attribute.values,
                        })
                        .collect(),
                    permissive,
                });
                self.write(
                    OP_MODIFY,
                    id,
                    m.controls,
                    // AD takes the show-deleted controls on a modify too (Samba's tools
                    // send them with descriptor changes); a live object is found as without.
                    &[
                        ctl::PERMISSIVE_MODIFY,
                        ctl::SD_FLAGS,
                        ctl::SHOW_DELETED,
                        ctl::SHOW_RECYCLED,
                    ],
                    op,
                    ProtocolOp::ModifyResponse,
                    permit,
                )
                .await;
                Next::Continue
            }
            ProtocolOp::DelRequest(dn) => {
                let subtree = has_control(&m.controls, ctl::TREE_DELETE);
                let limited = m.controls.iter().find(|c| c.oid == ctl::TREE_DELETE_EX);
                let target = self.ctx.parse_dn("DN", &extdn::plain_dn(&self.ctx, &dn));
                if (subtree || limited.is_some()) && self.ctx.dir.domain().is_some() {
                    let limit =
                        match limited.map(<ctl::TreeDeleteEx as ctl::ControlValue>::from_control) {
                            Some(Ok(x)) => Ok(Some(x.limit())),
                            Some(Err(e)) => {
                                Err(LdapResult::new(ResultCode::PROTOCOL_ERROR, e.to_string()))
                            }
                            None => Ok(None),
                        };
                    let result = self
                        .tree_delete(&m.controls, target.and_then(|t| limit.map(|l| (t, l))))
                        .await;
                    self.ctx.counters.finish(
                        OP_DELETE,
                        result.code == ResultCode::SUCCESS,
                        started.elapsed(),
                    );
                    self.reply(msg(id, ProtocolOp::DelResponse(result)));
                    drop(permit);
                    return Next::Continue;
                }
                let op = target.map(|dn| Change::Delete { dn, tree: subtree });
                self.write(
                    OP_DELETE,
                    id,
                    m.controls,
                    &[ctl::TREE_DELETE],
                    op,
                    ProtocolOp::DelResponse,
                    permit,
                )
                .await;
                Next::Continue
            }
            ProtocolOp::ModifyDnRequest(r) => {
                let bad = |what: &str, e: String| {
                    LdapResult::new(
                        ResultCode::INVALID_DN_SYNTAX,
                        format!("invalid {what}: {e}"),
                    )
                };
                let op = (|| {
                    let dn = self
                        .ctx
                        .parse_dn("DN", &extdn::plain_dn(&self.ctx, &r.dn))?;
                    if self.ctx.dir.domain().is_some() {
                        if r.new_rdn.is_empty() {
                            return Err(LdapResult::new(
                                ResultCode::PROTOCOL_ERROR,
                                "00002021: the new RDN is empty",
                            ));
                        }
                        if kauri_db::Dn::parse(&r.new_rdn).is_ok_and(|d| d.rdns().len() > 1) {
                            return Err(LdapResult::new(
                                ResultCode::NAMING_VIOLATION,
                                "00002037: NameErr: DSID-0305109C, problem 2005 \
                                 (NAMING_VIOLATION), data 0: the new RDN holds several RDNs",
                            ));
                        }
                    }
                    let new_rdn =
                        Rdn::parse(&r.new_rdn).map_err(|e| bad("new RDN", e.to_string()))?;
                    // AD: a new RDN without a value is a naming violation.
                    self.ctx.check_rdn(&new_rdn).map_err(|e| {
                        LdapResult::new(ResultCode::NAMING_VIOLATION, format!("new RDN: {e}"))
                    })?;
                    let new_parent = match &r.new_superior {
                        Some(s) => Some(
                            self.ctx
                                .parse_dn("new superior", &extdn::plain_dn(&self.ctx, s))?,
                        ),
                        None => None,
                    };
                    Ok(Change::Rename {
                        dn,
                        new_rdn,
                        delete_old_rdn: r.delete_old_rdn,
                        new_parent,
                    })
                })();
                self.write(
                    OP_MODDN,
                    id,
                    m.controls,
                    &[],
                    op,
                    ProtocolOp::ModifyDnResponse,
                    permit,
                )
                .await;
                Next::Continue
            }
            ProtocolOp::ExtendedRequest(x) => match x.name.as_str() {
                ctl::START_TLS => {
                    self.ctx
                        .counters
                        .finish(OP_EXTENDED, true, started.elapsed());
                    drop(permit);
                    Next::StartTls(id)
                }
                ctl::WHO_AM_I => {
                    self.ctx
                        .counters
                        .finish(OP_EXTENDED, true, started.elapsed());
                    let value = self.who_am_i().into_bytes();
                    self.reply(msg(
                        id,
                        ProtocolOp::ExtendedResponse(ExtendedResponse {
                            result: LdapResult::success(),
                            name: None,
                            value: Some(value),
                        }),
                    ));
                    Next::Continue
                }
                ctl::PASSWORD_MODIFY => {
                    self.password_modify(id, x.value.as_deref(), permit);
                    Next::Continue
                }
                ctl::KAURI_BACKUP => {
                    self.backup(id, x.value.as_deref(), started, permit);
                    Next::Continue
                }
                ctl::KAURI_STATUS => {
                    self.status(id, started, permit);
                    Next::Continue
                }
                other => {
                    self.refuse_extended(
                        id,
                        started,
                        ResultCode::PROTOCOL_ERROR,
                        format!("unsupported extended operation {other}"),
                        None,
                    );
                    Next::Continue
                }
            },
            _ => {
                // A client sent a response: that is not a conversation we can have.
                let _ = self
                    .out
                    .send(notice_of_disconnection(
                        ResultCode::PROTOCOL_ERROR,
                        "unexpected response message",
                    ))
                    .await;
                Next::Close
            }
        }
    }

    /// A bind: its result, and the server's SASL credentials for the client.
    async fn bind(
        &mut self,
        version: i32,
        name: &str,
        auth: &BindAuth,
    ) -> (LdapResult, Option<sasl::BindData>) {
        // A new bind always starts from anonymous.
        self.identity = Identity::Anonymous;
        let continuing = std::mem::take(&mut self.sasl);
        let gssapi = std::mem::take(&mut self.gssapi);
        let sicily = std::mem::take(&mut self.sicily);
        if version != 3 {
            return (
                LdapResult::new(ResultCode::PROTOCOL_ERROR, "only LDAPv3 is supported"),
                None,
            );
        }
        if let BindAuth::Sasl {
            mechanism,
            credentials,
        } = auth
        {
            if mechanism.eq_ignore_ascii_case("GSS-SPNEGO") {
                if continuing.is_none() {
                    let krb = credentials
                        .as_deref()
                        .and_then(kauri_auth::spnego::kerberos_init);
                    if let Some(k) = krb {
                        let (result, creds) = self.spnego_kerberos_bind(
                            &k.token,
                            &k.mech,
                            k.mech_list.as_deref(),
                            k.mic.as_deref(),
                            k.first_choice,
                        );
                        return (result, creds.map(sasl::BindData::Sasl));
                    }
                }
                let (result, creds) = self.spnego_bind(continuing, credentials.as_deref()).await;
                return (result, creds.map(sasl::BindData::Sasl));
            }
            if mechanism.eq_ignore_ascii_case("GSSAPI") {
                let (result, creds) = self.gssapi_bind(gssapi, credentials.as_deref());
                return (result, creds.map(sasl::BindData::Sasl));
            }
        }
        match auth {
            BindAuth::SicilyDiscovery
            | BindAuth::SicilyNegotiate(_)
            | BindAuth::SicilyResponse(_) => self.sicily_bind(sicily, auth).await,
            _ => (self.single_step_bind(name, auth).await, None),
        }
    }

    async fn single_step_bind(&mut self, name: &str, auth: &BindAuth) -> LdapResult {
        match auth {
            BindAuth::Simple(p) if p.is_empty() => {
                // Anonymous (empty name) or unauthenticated (name, no password): anonymous.
                LdapResult::success()
            }
            BindAuth::Simple(p) => self.password_bind(name, p).await,
            BindAuth::Sasl {
                mechanism,
                credentials,
            } => match mechanism.to_ascii_uppercase().as_str() {
                "EXTERNAL" => self.external_bind(credentials.as_deref()),
                "PLAIN" => {
                    // RFC 4616: authzid NUL authcid NUL password; the authzid must be empty or
                    // name the same identity.
                    let creds = credentials.as_deref().unwrap_or_default();
                    let mut parts = creds.splitn(3, |b| *b == 0);
                    let (Some(authz), Some(authc), Some(password)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return LdapResult::new(
                            ResultCode::PROTOCOL_ERROR,
                            "malformed SASL PLAIN credentials",
                        );
                    };
                    let authc = String::from_utf8_lossy(authc);
                    let authc = authc.strip_prefix("dn:").unwrap_or(&authc).to_string();
                    let result = self.password_bind(&authc, password).await;
                    let authz = String::from_utf8_lossy(authz);
                    let authz = authz.strip_prefix("dn:").unwrap_or(&authz);
                    if result.code == ResultCode::SUCCESS
                        && !authz.is_empty()
                        && Dn::parse(authz).ok() != Dn::parse(&authc).ok()
                    {
                        self.identity = Identity::Anonymous;
                        return LdapResult::new(
                            ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                            "authorization as another identity is not allowed",
                        );
                    }
                    result
                }
                other => LdapResult::new(
                    ResultCode::AUTH_METHOD_NOT_SUPPORTED,
                    format!("SASL mechanism {other} is not supported"),
                ),
            },
            // Answered by `sicily_bind`.
            BindAuth::SicilyDiscovery
            | BindAuth::SicilyNegotiate(_)
            | BindAuth::SicilyResponse(_) => {
                LdapResult::new(ResultCode::PROTOCOL_ERROR, "a Sicily bind out of place")
            }
        }
    }

    /// EXTERNAL on the local socket: the peer's Unix credentials. The superuser and the
    /// server's own user administer; other users are authenticated readers.
    fn external_bind(&mut self, requested_authz: Option<&[u8]>) -> LdapResult {
        let Some((uid, gid)) = self.peer_cred else {
            return LdapResult::new(
                ResultCode::INAPPROPRIATE_AUTHENTICATION,
                "SASL EXTERNAL is available on the ldapi:// socket only",
            );
        };
        if requested_authz.is_some_and(|a| !a.is_empty()) {
            return LdapResult::new(
                ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                "authorization as another identity is not allowed",
            );
        }
        let dn = format!("gidNumber={gid}+uidNumber={uid},cn=peercred,cn=external,cn=auth");
        self.identity = if uid == 0 || uid == current_uid() {
            Identity::Admin(dn)
        } else {
            Identity::User(dn)
        };
        LdapResult::success()
    }

    async fn password_bind(&mut self, name: &str, password: &[u8]) -> LdapResult {
        if self.ctx.cfg().require_strong_auth && !self.encrypted {
            return LdapResult::new(
                ResultCode::STRONGER_AUTH_REQUIRED,
                "password binds need an encrypted connection (LDAPS or StartTLS)",
            );
        }
        let invalid = || LdapResult::new(ResultCode::INVALID_CREDENTIALS, "invalid credentials");
        if self.ctx.dir.domain().is_some()
            && self.ctx.admin_dn.as_ref() != Dn::parse(name).ok().as_ref()
        {
            return self.domain_bind(name, password).await;
        }
        let Ok(dn) = Dn::parse(name) else {
            return invalid();
        };
        if self.ctx.admin_dn.as_ref() == Some(&dn) {
            let cfg = self.ctx.cfg();
            if !cfg.admin_password.is_empty()
                && auth::verify(cfg.admin_password.as_bytes(), password)
            {
                self.identity = Identity::Admin(dn.to_string());
                return LdapResult::success();
            }
            return invalid();
        }
        let verified = self.ctx.db.read().ok().and_then(|r| {
            let id = r.lookup(&dn).ok()??;
            let rec = r.record(id).ok()??;
            let attr = r.attr_id("userPassword")?;
            let ok = rec
                .attr(attr)?
                .values()
                .any(|v| auth::verify(v.raw, password));
            Some((ok, r.dn_string(id).ok()?))
        });
        match verified {
            Some((true, stored_dn)) => {
                self.identity = Identity::User(stored_dn);
                LdapResult::success()
            }
            _ => invalid(),
        }
    }

    /// A simple bind against the domain's accounts (AD's rules and sub-codes).
    async fn domain_bind(&mut self, name: &str, password: &[u8]) -> LdapResult {
        let password = String::from_utf8_lossy(password);
        let outcome = match self.ctx.dir.authenticate(name, &password) {
            Ok(o) => o,
            Err(e) => return dir_result(&e),
        };
        self.record_bind(outcome.update).await;
        match outcome.result {
            Ok(account) => {
                self.identity = Identity::Account(account);
                LdapResult::success()
            }
            Err(failure) => LdapResult::new(ResultCode::INVALID_CREDENTIALS, failure.diagnostic()),
        }
    }

    /// Hands a bind's bookkeeping (bad password counts, the last logon time) to the writer.
    async fn record_bind(&mut self, update: Option<BindUpdate>) {
        let recorded = match update {
            // The last logon time alone is written behind the answer, as AD updates it:
            // nobody reads it back at once, and a first bind does not wait for a commit.
            Some(BindUpdate::Success(dn, mods))
                if mods
                    .iter()
                    .all(|m| m.attr.eq_ignore_ascii_case("lastLogonTimestamp")) =>
            {
                let req = Request::system_modify(dn, mods, true);
                self.ctx.writer.enqueue_lazy(req)
            }
            Some(BindUpdate::Success(dn, mods)) => {
                let req = Request::system_modify(dn, mods, true);
                self.ctx.writer.submit(req).await
            }
            Some(BindUpdate::BadPassword(dn)) => {
                self.ctx
                    .writer
                    .run_task(crate::writer::Task::BadPassword(dn))
                    .await
            }
            None => Ok(()),
        };
        if let Err(e) = recorded {
            tracing::warn!(error = %e, "recording a bind's outcome failed");
        }
    }

    /// The backup extended operation: administrators only, on an encrypted connection
    /// (the dump holds every password hash, and the key that unseals them).
    fn backup(
        &mut self,
        id: MessageId,
        value: Option<&[u8]>,
        started: Instant,
        permit: OwnedSemaphorePermit,
    ) {
        let refuse = |code: ResultCode, text: &str| {
            msg(
                id,
                ProtocolOp::ExtendedResponse(ExtendedResponse {
                    result: LdapResult::new(code, text.to_string()),
                    name: Some(ctl::KAURI_BACKUP.to_string()),
                    value: None,
                }),
            )
        };
        let refusal = if !self.caller().is_admin() {
            Some(refuse(
                ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                "only an administrator may take a backup",
            ))
        } else if !self.encrypted {
            Some(refuse(
                ResultCode::CONFIDENTIALITY_REQUIRED,
                "a backup carries the domain's secrets: use ldaps:// or StartTLS",
            ))
        } else if !matches!(value, None | Some([0]) | Some([1])) {
            Some(refuse(
                ResultCode::PROTOCOL_ERROR,
                "the backup request value is one byte, 00 or 01",
            ))
        } else {
            None
        };
        if let Some(r) = refusal {
            self.ctx
                .counters
                .finish(OP_EXTENDED, false, started.elapsed());
            self.reply(r);
            return;
        }
        let with_key = value != Some(&[0]);
        let ctx = self.ctx.clone();
        let out = self.out.clone();
        let peer = self.peer.clone();
        tokio::task::spawn_blocking(move || {
            let ok = crate::backup::run(&ctx, id, with_key, &out, msg);
            ctx.counters.finish(OP_EXTENDED, ok, started.elapsed());
            tracing::info!(%peer, id, ok, with_key, elapsed_ms = started.elapsed().as_millis() as u64, "backup");
            drop(permit);
        });
    }

    /// Answers an extended request with a refusal (counted as a failed request).
    fn refuse_extended(
        &mut self,
        id: MessageId,
        started: Instant,
        code: ResultCode,
        text: String,
        name: Option<&str>,
    ) {
        self.ctx
            .counters
            .finish(OP_EXTENDED, false, started.elapsed());
        self.reply(msg(
            id,
            ProtocolOp::ExtendedResponse(ExtendedResponse {
                result: LdapResult::new(code, text),
                name: name.map(str::to_string),
                value: None,
            }),
        ));
    }

    /// The status extended operation: the metrics text, for administrators only (it names
    /// the server's listeners and load, which other callers have no business reading).
    fn status(&mut self, id: MessageId, started: Instant, permit: OwnedSemaphorePermit) {
        if !self.caller().is_admin() {
            self.refuse_extended(
                id,
                started,
                ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                "00002098: SecErr: DSID-03150BC1, problem 4003 (INSUFF_ACCESS_RIGHTS), \
                 data 0: only an administrator may read the server's status"
                    .to_string(),
                Some(ctl::KAURI_STATUS),
            );
            return;
        }
        let ctx = self.ctx.clone();
        let out = self.out.clone();
        // Rendering reads the database file's freelist: off the connection's task.
        tokio::task::spawn_blocking(move || {
            let text = crate::metrics::render(&ctx);
            ctx.counters.finish(OP_EXTENDED, true, started.elapsed());
            let _ = out.blocking_send(msg(
                id,
                ProtocolOp::ExtendedResponse(ExtendedResponse {
                    result: LdapResult::success(),
                    name: Some(ctl::KAURI_STATUS.to_string()),
                    value: Some(text.into_bytes()),
                }),
            ));
            drop(permit);
        });
    }

    /// Logs a finished bind: 4624 and the token it gave (4627) when it succeeded as an
    /// account, 4625 with the reason when the credentials were refused. Steps of a SASL
    /// exchange in progress and anonymous binds are not logons.
    fn audit_bind(&self, name: &str, auth: &BindAuth, result: &LdapResult, took: Duration) {
        use kauri_audit::{AuditEvent, Category, Outcome};
        let auditor = self.ctx.dir.auditor();
        if !auditor.is_enabled() {
            return;
        }
        let mechanism = match auth {
            BindAuth::Simple(_) => "simple".to_string(),
            BindAuth::Sasl { mechanism, .. } => mechanism.to_ascii_uppercase(),
            _ => "NTLM (Sicily)".to_string(),
        };
        let origin = self.origin();
        let base = |e: AuditEvent| {
            let e = e
                .with_service(origin.service.clone())
                .with_mechanism(mechanism.clone())
                .with_duration(took)
                .with_result_code(result.code.0);
            match &origin.remote {
                Some(r) => e.with_remote(r),
                None => e,
            }
        };
        if result.code == ResultCode::SUCCESS {
            let (user, sid, groups) = match &self.identity {
                Identity::Anonymous => return,
                Identity::Admin(dn) | Identity::User(dn) => (dn.clone(), None, Vec::new()),
                Identity::Account(a) => (a.dn.clone(), a.sid.clone(), a.groups.clone()),
            };
            let logon = base(AuditEvent::logon(Outcome::Success)).with_user(user.clone());
            let logon = match &sid {
                Some(s) => logon.with_user_sid(s),
                None => logon,
            };
            auditor.log(logon);
            if !groups.is_empty() {
                let token = base(AuditEvent::new(Category::Token, "token", Outcome::Success))
                    .with_event_id(4627)
                    .with_user(user)
                    .with_groups(groups.iter().map(ToString::to_string));
                auditor.log(match &sid {
                    Some(s) => token.with_user_sid(s),
                    None => token,
                });
            }
        } else if result.code == ResultCode::INVALID_CREDENTIALS
            || result.code == ResultCode::INAPPROPRIATE_AUTHENTICATION
            || result.code == ResultCode::STRONGER_AUTH_REQUIRED
        {
            let e = base(AuditEvent::logon(Outcome::Failure)).with_reason(result.message.clone());
            auditor.log(if name.is_empty() {
                e
            } else {
                e.with_user(name)
            });
        }
    }

    /// Where the connection's requests come from, for the audit log.
    fn origin(&self) -> kauri_domain::directory::Origin {
        kauri_domain::directory::Origin {
            service: if self.catalog {
                "gc"
            } else if self.encrypted {
                "ldaps"
            } else {
                "ldap"
            }
            .to_string(),
            remote: Some(self.peer.clone()),
            session: None,
        }
    }

    /// Who the connection's requests run as.
    fn caller(&self) -> Caller {
        self.identity.caller(&self.ctx)
    }

    #[allow(clippy::too_many_arguments)]
    async fn write(
        &self,
        kind: usize,
        id: MessageId,
        controls: Vec<Control>,
        supported: &[&str],
        op: Result<Change, LdapResult>,
        respond: fn(LdapResult) -> ProtocolOp,
        permit: OwnedSemaphorePermit,
    ) {
        let started = Instant::now();
        // The global catalog is a read-only view; anonymous callers change nothing unless
        // the domain allows anonymous operations (AD's answer otherwise).
        let op = if self.identity == Identity::Anonymous
            && self.ctx.dir.domain().is_some()
            && !self.ctx.anonymous_allowed()
        {
            Err(LdapResult::new(
                ResultCode::OPERATIONS_ERROR,
                "000004DC: LdapErr: DSID-0C090A5C, comment: In order to perform this operation \
                 a successful bind must be completed on the connection., data 0, v4563",
            ))
        } else if self.catalog {
            Err(LdapResult::new(
                ResultCode::UNWILLING_TO_PERFORM,
                "00002077: the global catalog is read-only; write on the domain's LDAP port",
            ))
        } else {
            op
        };
        let checked = check_controls(&controls, supported).and(op);
        // Passwords are hashed here, on a blocking thread of this connection, while other
        // connections hash theirs; the writer only stores the results. The connection
        // reads nothing more meanwhile, so its changes keep their order.
        let checked = match checked {
            Ok(change) => {
                let passwords = self.ctx.dir.passwords_to_prepare(&change);
                if !passwords.is_empty() {
                    let dir = self.ctx.dir.clone();
                    let _ = tokio::task::spawn_blocking(move || dir.prepare_passwords(&passwords))
                        .await;
                }
                Ok(change)
            }
            Err(e) => Err(e),
        };
        // Queued here, on the connection's task, so pipelined changes keep their order.
        let queued = checked.map(|change| {
            self.ctx.writer.enqueue_from(
                Request {
                    caller: self.caller(),
                    encrypted: self.passwords_allowed(),
                    change,
                },
                self.origin(),
            )
        });
        let ctx = self.ctx.clone();
        let out = self.out.clone();
        tokio::spawn(async move {
            let result = match queued {
                Err(r) => r,
                Ok(Err(e)) => dir_result(&e),
                Ok(Ok(rx)) => match rx.await {
                    Ok(Ok(())) => LdapResult::success(),
                    Ok(Err(e)) => dir_result(&e),
                    Err(_) => LdapResult::new(
                        ResultCode::UNAVAILABLE,
                        "the writer dropped the request".to_string(),
                    ),
                },
            };
            ctx.counters
                .finish(kind, result.code == ResultCode::SUCCESS, started.elapsed());
            let _ = out.send(msg(id, respond(result))).await;
            drop(permit);
        });
    }

    /// A tree delete in a domain, in steps of at most [`TREE_DELETE_STEP`] objects that
    /// each commit on their own, so other writers go between them; the connection reads
    /// nothing more until it is done (its later requests keep their order). With the
    /// limited control (TREE_DELETE_EX) one step of the client's size is taken and
    /// adminLimitExceeded answers while objects remain, as AD does.
    async fn tree_delete(
        &self,
        controls: &[Control],
        target: Result<(Dn, Option<usize>), LdapResult>,
    ) -> LdapResult {
        if self.catalog {
            return LdapResult::new(
                ResultCode::UNWILLING_TO_PERFORM,
                "00002077: the global catalog is read-only; write on the domain's LDAP port",
            );
        }
        if let Err(r) = check_controls(controls, &[ctl::TREE_DELETE, ctl::TREE_DELETE_EX]) {
            return r;
        }
        let (dn, limit) = match target {
            Ok(t) => t,
            Err(r) => return r,
        };
        // The whole subtree is checked for critical objects on a snapshot, off the
        // writer, so a large tree holds up no other write while it is looked at.
        let dir = self.ctx.dir.clone();
        let checked = {
            let dn = dn.clone();
            tokio::task::spawn_blocking(move || dir.check_tree_delete(&dn)).await
        };
        match checked {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return dir_result(&e),
            Err(_) => {
                return LdapResult::new(ResultCode::OTHER, "the tree delete check failed");
            }
        }
        let step = kauri_domain::directory::TreeStep {
            max: limit.unwrap_or(TREE_DELETE_STEP),
        };
        loop {
            let queued = self.ctx.writer.enqueue_from(
                Request {
                    caller: self.caller(),
                    encrypted: self.passwords_allowed(),
                    change: Change::DeleteTreeStep {
                        dn: dn.clone(),
                        step,
                    },
                },
                self.origin(),
            );
            let outcome = match queued {
                Ok(rx) => rx.await,
                Err(e) => return dir_result(&e),
            };
            match outcome {
                Ok(Ok(())) => return LdapResult::success(),
                Ok(Err(DirError::TreeDeleteNotFinished(_))) if limit.is_none() => {}
                Ok(Err(e)) => return dir_result(&e),
                Err(_) => {
                    return LdapResult::new(
                        ResultCode::UNAVAILABLE,
                        "the writer dropped the request".to_string(),
                    )
                }
            }
        }
    }

    /// RFC 3062: the administrator sets anyone's password; a user changes their own after
    /// proving the old one. The new value is stored hashed in `userPassword`.
    fn password_modify(
        &mut self,
        id: MessageId,
        value: Option<&[u8]>,
        permit: OwnedSemaphorePermit,
    ) {
        let respond =
            move |result: LdapResult, gen: Option<Vec<u8>>| password_response(id, result, gen);
        let req = match ctl::PasswordModifyRequest::decode(value) {
            Ok(r) => r,
            Err(e) => {
                self.reply(respond(
                    LdapResult::new(ResultCode::PROTOCOL_ERROR, format!("password modify: {e}")),
                    None,
                ));
                return;
            }
        };
        let target = match (&req.user_identity, &self.identity) {
            (Some(u), _) => String::from_utf8_lossy(u)
                .trim_start_matches("dn:")
                .to_string(),
            (None, Identity::User(dn)) | (None, Identity::Admin(dn)) => dn.clone(),
            (None, Identity::Account(a)) => a.dn.clone(),
            (None, Identity::Anonymous) => String::new(),
        };
        if self.ctx.dir.domain().is_some() {
            self.domain_password_modify(id, &target, req, permit);
            return;
        }
        let Ok(dn) = Dn::parse(&target) else {
            self.reply(respond(
                LdapResult::new(ResultCode::INVALID_DN_SYNTAX, "invalid user identity"),
                None,
            ));
            return;
        };
        let allowed = match &self.identity {
            Identity::Admin(_) => true,
            Identity::User(me) => {
                Dn::parse(me).is_ok_and(|m| m == dn) && {
                    let old = req.old_password.clone().unwrap_or_default();
                    self.ctx.db.read().ok().and_then(|r| {
                        let id = r.lookup(&dn).ok()??;
                        let rec = r.record(id).ok()??;
                        let attr = r.attr_id("userPassword")?;
                        Some(rec.attr(attr)?.values().any(|v| auth::verify(v.raw, &old)))
                    }) == Some(true)
                }
            }
            Identity::Anonymous | Identity::Account(_) => false,
        };
        if !allowed {
            self.reply(respond(
                LdapResult::new(
                    ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                    "not allowed to change this password",
                ),
                None,
            ));
            return;
        }
        let (new_password, generated) = match new_password(&req) {
            Ok(p) => p,
            Err(result) => {
                self.reply(respond(result, None));
                return;
            }
        };
        let Ok(hash) = auth::hash_password(&new_password) else {
            self.reply(respond(
                LdapResult::new(ResultCode::OTHER, "no randomness for a salt"),
                None,
            ));
            return;
        };
        let ctx = self.ctx.clone();
        let out = self.out.clone();
        tokio::spawn(async move {
            // Authorized above; the change itself runs as the server.
            let req = Request::system_modify(
                dn,
                vec![Modification {
                    op: ModifyOp::Replace,
                    attr: "userPassword".into(),
                    values: vec![hash.into_bytes()],
                }],
                false,
            );
            let _ = out
                .send(submit_password_change(&ctx, req, generated, respond).await)
                .await;
            drop(permit);
        });
    }
}

impl Conn {
    /// RFC 3062 in a domain: the change is a `unicodePwd` change (old and new) when the
    /// old password is given, or an administrator's reset; the directory applies its
    /// rules (encryption, policy, history, who may).
    fn domain_password_modify(
        &mut self,
        id: MessageId,
        target: &str,
        req: ctl::PasswordModifyRequest,
        permit: OwnedSemaphorePermit,
    ) {
        let respond =
            move |result: LdapResult, gen: Option<Vec<u8>>| password_response(id, result, gen);
        let dn = match self.ctx.db.read().ok().and_then(|r| {
            let id = self.ctx.dir.resolve_bind_name(&r, target).ok()??;
            r.dn_string(id).ok()
        }) {
            Some(d) => d,
            None => {
                self.reply(respond(
                    LdapResult::new(ResultCode::NO_SUCH_OBJECT, "no such user"),
                    None,
                ));
                return;
            }
        };
        let Ok(dn) = Dn::parse(&dn) else {
            self.reply(respond(
                LdapResult::new(ResultCode::INVALID_DN_SYNTAX, "invalid user identity"),
                None,
            ));
            return;
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let (new, generated) = match new_password(&req) {
            Ok((p, generated)) => (text(&p), generated),
            Err(result) => {
                self.reply(respond(result, None));
                return;
            }
        };
        let encode = kauri_domain::password::encode_unicode_pwd;
        let mods = match req.old_password.as_deref() {
            Some(old) => vec![
                Modification {
                    op: ModifyOp::Delete,
                    attr: "unicodePwd".into(),
                    values: vec![encode(&text(old))],
                },
                Modification {
                    op: ModifyOp::Add,
                    attr: "unicodePwd".into(),
                    values: vec![encode(&new)],
                },
            ],
            None => vec![Modification {
                op: ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![encode(&new)],
            }],
        };
        let request = Request {
            caller: self.caller(),
            encrypted: self.passwords_allowed(),
            change: Change::Modify {
                sd_flags: None,
                dn,
                mods,
                permissive: false,
            },
        };
        let ctx = self.ctx.clone();
        let out = self.out.clone();
        tokio::spawn(async move {
            let _ = out
                .send(submit_password_change(&ctx, request, generated, respond).await)
                .await;
            drop(permit);
        });
    }

    /// A modify of the root DSE: `schemaUpdateNow` publishes committed schema changes.
    async fn root_dse_modify(&self, changes: &[kauri_ldap_proto::Change]) -> LdapResult {
        let known = changes
            .iter()
            .all(|c| c.attribute.name.eq_ignore_ascii_case("schemaUpdateNow"));
        if !known || changes.is_empty() {
            return LdapResult::new(
                ResultCode::UNWILLING_TO_PERFORM,
                "00002035: SvcErr: DSID-0315139D, problem 5003 (WILL_NOT_PERFORM), data 0: the \
                 root DSE accepts schemaUpdateNow only",
            );
        }
        if !self.identity.is_admin() {
            return LdapResult::new(
                ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                "only an administrator may update the schema cache",
            );
        }
        match self
            .ctx
            .writer
            .run_task(crate::writer::Task::SchemaUpdateNow)
            .await
        {
            Ok(()) => LdapResult::success(),
            Err(e) => dir_result(&e),
        }
    }
}

/// The response to a password modify request, with the generated password if any.
fn password_response(id: MessageId, result: LdapResult, gen: Option<Vec<u8>>) -> Vec<u8> {
    msg(
        id,
        ProtocolOp::ExtendedResponse(ExtendedResponse {
            result,
            name: None,
            value: gen,
        }),
    )
}

/// The new password of a password modify request, or one generated for it (also returned
/// on its own, to send back).
fn new_password(
    req: &ctl::PasswordModifyRequest,
) -> Result<(Vec<u8>, Option<Vec<u8>>), LdapResult> {
    match req.new_password.clone() {
        Some(p) if !p.is_empty() => Ok((p, None)),
        _ => kauri_domain::password::generate_password()
            .map(|p| (p.clone().into_bytes(), Some(p.into_bytes())))
            .map_err(|_| LdapResult::new(ResultCode::OTHER, "no randomness for a password")),
    }
}

/// Runs a password modify's change through the writer and builds the response, with the
/// generated password when one was made and the change succeeded.
async fn submit_password_change(
    ctx: &Ctx,
    req: Request,
    generated: Option<Vec<u8>>,
    respond: impl Fn(LdapResult, Option<Vec<u8>>) -> Vec<u8>,
) -> Vec<u8> {
    let started = Instant::now();
    let result = match ctx.writer.submit(req).await {
        Ok(()) => LdapResult::success(),
        Err(e) => dir_result(&e),
    };
    ctx.counters.finish(
        OP_EXTENDED,
        result.code == ResultCode::SUCCESS,
        started.elapsed(),
    );
    let gen = generated
        .filter(|_| result.code == ResultCode::SUCCESS)
        .and_then(|p| {
            ctl::PasswordModifyResponse {
                gen_passwd: Some(p),
            }
            .encode()
        });
    respond(result, gen)
}

/// The compare operation: compareTrue/compareFalse, or the error that prevents deciding.
fn compare(
    ctx: &Ctx,
    identity: &Identity,
    catalog: bool,
    dn: &str,
    attr: &str,
    value: &[u8],
) -> LdapResult {
    if *identity == Identity::Anonymous && !ctx.anonymous_allowed() {
        return LdapResult::new(
            ResultCode::OPERATIONS_ERROR,
            "a successful bind is needed to compare",
        );
    }
    let Ok(dn) = Dn::parse(&crate::extdn::plain_dn(ctx, dn)) else {
        return LdapResult::new(ResultCode::INVALID_DN_SYNTAX, "invalid DN");
    };
    if ctx
        .hidden_attributes(ctx.reads_beyond_policy(identity), catalog)
        .iter()
        .any(|h| h.eq_ignore_ascii_case(attr.split(';').next().unwrap_or(attr)))
    {
        return LdapResult::new(
            ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
            format!("{attr} cannot be compared"),
        );
    }
    let r = match ctx.db.read() {
        Ok(r) => r,
        Err(e) => return db_result(&e),
    };
    let (entry_id, rec) = match r.lookup(&dn) {
        Ok(Some(id)) if id != 0 => match r.record(id) {
            Ok(Some(rec)) => (id, rec),
            Ok(None) => {
                return LdapResult::new(ResultCode::NO_SUCH_OBJECT, format!("no such object: {dn}"))
            }
            Err(e) => return db_result(&e),
        },
        Ok(_) => {
            return LdapResult::new(ResultCode::NO_SUCH_OBJECT, format!("no such object: {dn}"))
        }
        Err(e) => return db_result(&e),
    };
    if ctx.dir.domain().is_some()
        && !identity.is_admin()
        && r.attr_id("isDeleted")
            .and_then(|a| rec.attr(a))
            .is_some_and(|a| a.values().any(|v| v.raw.eq_ignore_ascii_case(b"TRUE")))
    {
        return LdapResult::new(ResultCode::NO_SUCH_OBJECT, format!("no such object: {dn}"));
    }
    // The object must be visible to the caller, and the attribute readable.
    if ctx.dir.domain().is_some() {
        let caller = identity.caller(ctx);
        let other = |e: kauri_domain::directory::DirError| {
            LdapResult::new(ResultCode::OTHER, format!("access check: {e}"))
        };
        let principal = match ctx.dir.principal(&r, &caller) {
            Ok(p) => p,
            Err(e) => return other(e),
        };
        if let Some(p) = principal {
            let schema = ctx.dir.schema();
            match ctx.dir.visible(&r, &schema, &p, entry_id) {
                Ok(true) => {}
                Ok(false) => {
                    return LdapResult::new(
                        ResultCode::NO_SUCH_OBJECT,
                        format!("no such object: {dn}"),
                    )
                }
                Err(e) => return other(e),
            }
            let base = attr.split(';').next().unwrap_or(attr);
            let name = schema
                .schema
                .attribute(base)
                .or_else(|| schema.schema.attribute_by_oid(base))
                .map(|d| d.ldap_name.to_ascii_lowercase())
                .unwrap_or_else(|| base.to_ascii_lowercase());
            match ctx.dir.read_access_of(&r, &schema, &p, entry_id) {
                Ok(Some(a)) if a.hidden.binary_search(&name).is_ok() => {
                    return LdapResult::new(
                        ResultCode::INSUFFICIENT_ACCESS_RIGHTS,
                        format!("{attr} cannot be compared"),
                    )
                }
                Ok(_) => {}
                Err(e) => return other(e),
            }
        }
    }
    // A linked attribute's values are the DNs of the entries it links to.
    // Looked up key by key: a group of any size answers in two reads.
    if let Some(aid) = r.attr_id(attr) {
        let wanted = std::str::from_utf8(value)
            .ok()
            .and_then(|t| Dn::parse(t).ok())
            .and_then(|d| r.lookup(&d).ok().flatten())
            .unwrap_or(0);
        if let Ok(Some((found, any))) = r.link_exists(entry_id, aid, wanted) {
            return match (found, any) {
                (true, _) => LdapResult::new(ResultCode::COMPARE_TRUE, ""),
                (false, false) => LdapResult::new(
                    ResultCode::NO_SUCH_ATTRIBUTE,
                    format!("{attr} is not present"),
                ),
                (false, true) => LdapResult::new(ResultCode::COMPARE_FALSE, ""),
            };
        }
    }
    let syntax = ctx.db.config().schema.syntax_of(attr);
    let Ok(norm) = syntax.normalize(value) else {
        return LdapResult::new(
            ResultCode::INVALID_ATTRIBUTE_SYNTAX,
            format!("value does not fit {attr}"),
        );
    };
    let Some(a) = r.attr_id(attr).and_then(|id| rec.attr(id)) else {
        return LdapResult::new(
            ResultCode::NO_SUCH_ATTRIBUTE,
            format!("{attr} is not present"),
        );
    };
    if a.values().any(|v| v.norm_eq(&norm)) {
        LdapResult::new(ResultCode::COMPARE_TRUE, "")
    } else {
        LdapResult::new(ResultCode::COMPARE_FALSE, "")
    }
}
