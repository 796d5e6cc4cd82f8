//! One connection to an LDAP server and the operations on it.
//!
//! Requests may be pipelined with [`LdapClient::send`] and [`LdapClient::recv`]: responses
//! that arrive for another request in progress are kept until it asks for them, and
//! responses for requests the client no longer waits for (abandoned, timed out) are
//! dropped. The operation methods send one request and read its responses to the end.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kauri_ldap_proto::codec::{FrameError, DEFAULT_MAX_MESSAGE};

use crate::codec::ClientCodec;
use kauri_ldap_proto::controls::{
    ControlValue, PagedResults, PasswordModifyRequest, PasswordModifyResponse,
    NOTICE_OF_DISCONNECTION, PAGED_RESULTS, PASSWORD_MODIFY, START_TLS, WHO_AM_I,
};
use kauri_ldap_proto::decode::DecodeError;
use kauri_ldap_proto::{
    AddRequest, Attribute, BindAuth, BindRequest, BindResponse, Change, CompareRequest, Control,
    ExtendedRequest, ExtendedResponse, IntermediateResponse, LdapMessage, LdapResult, MessageId,
    ModifyDnRequest, ModifyRequest, ProtocolOp, ResultCode, SearchRequest, SearchResultEntry,
};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::Framed;

use crate::error::{CheckResult, ClientError};
use crate::tls::TlsOptions;
use crate::transport::{self, within, Transport};
use crate::url::LdapUrl;

/// How to connect, and how long to wait.
///
/// Timeouts need tokio's time driver (`enable_time` or `enable_all` on the runtime).
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Longest wait for the connection to open, TLS handshake included (also for the
    /// handshake of StartTLS). Default 30 seconds; `None` waits as long as the system does.
    pub connect_timeout: Option<Duration>,
    /// Longest wait for the server to take a request or to send the next message of a
    /// response. A streamed response (a large search, a backup) may therefore take
    /// longer in all, as long as the server keeps sending. Default `None` (no limit).
    pub timeout: Option<Duration>,
    /// Certificate checking for `ldaps://` and StartTLS.
    pub tls: TlsOptions,
    /// Largest response message accepted, in bytes; a larger one ends the connection.
    /// Default 16 MiB.
    pub max_message: usize,
}

impl Default for ConnectOptions {
    fn default() -> ConnectOptions {
        ConnectOptions {
            connect_timeout: Some(Duration::from_secs(30)),
            timeout: None,
            tls: TlsOptions::default(),
            max_message: DEFAULT_MAX_MESSAGE,
        }
    }
}

impl ConnectOptions {
    /// Sets [`ConnectOptions::connect_timeout`].
    pub fn with_connect_timeout(mut self, limit: Option<Duration>) -> ConnectOptions {
        self.connect_timeout = limit;
        self
    }

    /// Sets [`ConnectOptions::timeout`].
    pub fn with_timeout(mut self, limit: Option<Duration>) -> ConnectOptions {
        self.timeout = limit;
        self
    }

    /// Sets [`ConnectOptions::tls`].
    pub fn with_tls(mut self, tls: TlsOptions) -> ConnectOptions {
        self.tls = tls;
        self
    }
}

/// Everything a search returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The entries, in the order received.
    pub entries: Vec<SearchResultEntry>,
    /// Continuation references (each a list of URLs).
    pub referrals: Vec<Vec<String>>,
    /// The result of the search done message.
    pub result: LdapResult,
    /// The controls of the search done message (paged results cookie, sort result, …).
    pub controls: Vec<Control>,
}

/// The end of a search whose entries went to a callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDone {
    /// Continuation references (each a list of URLs).
    pub referrals: Vec<Vec<String>>,
    /// The result of the (last) search done message.
    pub result: LdapResult,
    /// The controls of the (last) search done message.
    pub controls: Vec<Control>,
}

/// The answer to "Who am I?" (RFC 4532).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhoAmI {
    /// The result.
    pub result: LdapResult,
    /// The authorization identity (`dn:…`, `u:…`), empty when anonymous or on failure.
    pub authz_id: String,
}

/// The answer to a password modify request (RFC 3062).
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordModified {
    /// The result.
    pub result: LdapResult,
    /// The password the server generated, when the request named no new one.
    pub generated: Option<Vec<u8>>,
}

impl std::fmt::Debug for PasswordModified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordModified")
            .field("result", &self.result)
            .field("generated", &self.generated.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl CheckResult for SearchOutcome {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

impl CheckResult for SearchDone {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

impl CheckResult for WhoAmI {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

impl CheckResult for PasswordModified {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

/// A response read for a request other than the one being waited for.
struct Queued {
    id: MessageId,
    item: Result<LdapMessage, String>,
}

/// One connection to an LDAP server.
pub struct LdapClient {
    framed: Framed<Transport, ClientCodec>,
    url: LdapUrl,
    opts: ConnectOptions,
    next_id: MessageId,
    /// Requests waiting for (more) responses, with whether they may be abandoned.
    outstanding: HashMap<MessageId, bool>,
    queued: VecDeque<Queued>,
    closed: bool,
}

impl std::fmt::Debug for LdapClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LdapClient")
            .field("url", &self.url.to_string())
            .field("encrypted", &self.is_encrypted())
            .field("outstanding", &self.outstanding.len())
            .field("closed", &self.closed)
            .finish()
    }
}

/// The name of an operation, for messages.
fn op_name(op: &ProtocolOp) -> &'static str {
    match op {
        ProtocolOp::BindRequest(_) => "bind request",
        ProtocolOp::BindResponse(_) => "bind response",
        ProtocolOp::UnbindRequest => "unbind request",
        ProtocolOp::SearchRequest(_) => "search request",
        ProtocolOp::SearchResultEntry(_) => "search result entry",
        ProtocolOp::SearchResultDone(_) => "search result done",
        ProtocolOp::SearchResultReference(_) => "search result reference",
        ProtocolOp::ModifyRequest(_) => "modify request",
        ProtocolOp::ModifyResponse(_) => "modify response",
        ProtocolOp::AddRequest(_) => "add request",
        ProtocolOp::AddResponse(_) => "add response",
        ProtocolOp::DelRequest(_) => "delete request",
        ProtocolOp::DelResponse(_) => "delete response",
        ProtocolOp::ModifyDnRequest(_) => "modify DN request",
        ProtocolOp::ModifyDnResponse(_) => "modify DN response",
        ProtocolOp::CompareRequest(_) => "compare request",
        ProtocolOp::CompareResponse(_) => "compare response",
        ProtocolOp::AbandonRequest(_) => "abandon request",
        ProtocolOp::ExtendedRequest(_) => "extended request",
        ProtocolOp::ExtendedResponse(_) => "extended response",
        ProtocolOp::IntermediateResponse(_) => "intermediate response",
    }
}

/// Whether `op` ends the responses to its request.
fn is_final(op: &ProtocolOp) -> bool {
    !matches!(
        op,
        ProtocolOp::SearchResultEntry(_)
            | ProtocolOp::SearchResultReference(_)
            | ProtocolOp::IntermediateResponse(_)
    )
}

/// The result a response carries, if it is one that does.
pub fn response_result(op: &ProtocolOp) -> Option<&LdapResult> {
    match op {
        ProtocolOp::BindResponse(BindResponse { result, .. })
        | ProtocolOp::ExtendedResponse(ExtendedResponse { result, .. })
        | ProtocolOp::SearchResultDone(result)
        | ProtocolOp::ModifyResponse(result)
        | ProtocolOp::AddResponse(result)
        | ProtocolOp::DelResponse(result)
        | ProtocolOp::ModifyDnResponse(result)
        | ProtocolOp::CompareResponse(result) => Some(result),
        _ => None,
    }
}

fn unexpected(what: &str, op: &ProtocolOp) -> ClientError {
    ClientError::Protocol(format!("{} in answer to {what}", op_name(op)))
}

impl LdapClient {
    /// Connects to the server `url` names (`ldap://`, `ldaps://` or `ldapi://`).
    pub async fn connect(url: &str, opts: &ConnectOptions) -> Result<LdapClient, ClientError> {
        LdapClient::connect_url(&LdapUrl::parse(url)?, opts).await
    }

    /// Connects to the server of an already parsed URL.
    pub async fn connect_url(
        url: &LdapUrl,
        opts: &ConnectOptions,
    ) -> Result<LdapClient, ClientError> {
        let io = transport::open(url, &opts.tls, opts.connect_timeout).await?;
        Ok(LdapClient {
            framed: Framed::new(io, ClientCodec::new(opts.max_message)),
            url: url.clone(),
            opts: opts.clone(),
            next_id: 1,
            outstanding: HashMap::new(),
            queued: VecDeque::new(),
            closed: false,
        })
    }

    /// The URL this connection was opened with.
    pub fn url(&self) -> &LdapUrl {
        &self.url
    }

    /// Whether the connection is private: TLS (`ldaps://` or after StartTLS), or a local
    /// Unix socket. Servers refuse password operations on connections that are not.
    pub fn is_encrypted(&self) -> bool {
        self.framed.get_ref().is_encrypted()
    }

    /// Whether the connection is closed (by the server, by an error or by the client); every
    /// operation then fails with [`ClientError::Closed`].
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Changes the per-operation wait limit (see [`ConnectOptions::timeout`]).
    pub fn set_timeout(&mut self, limit: Option<Duration>) {
        self.opts.timeout = limit;
    }

    /// Upgrades a plain `ldap://` connection to TLS (RFC 4511 section 4.14), checking the
    /// server's certificate as the connect options say. A refusal by the server is a
    /// [`ClientError::Result`] and leaves the connection as it was; a failed handshake
    /// closes it.
    pub async fn start_tls(&mut self) -> Result<(), ClientError> {
        self.usable()?;
        let host = match (&self.url, self.framed.get_ref()) {
            (_, Transport::Tls(_)) => {
                return Err(ClientError::Invalid("TLS is already active".into()))
            }
            (LdapUrl::Ldap { host, .. }, Transport::Tcp(_)) => host.clone(),
            _ => {
                return Err(ClientError::Invalid(
                    "StartTLS needs a plain TCP connection".into(),
                ))
            }
        };
        if !self.outstanding.is_empty() || !self.queued.is_empty() {
            return Err(ClientError::Invalid(
                "StartTLS while other requests wait for responses".into(),
            ));
        }
        let op = ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: START_TLS.to_string(),
            value: None,
        });
        let id = self.send_message(op, Vec::new(), false).await?;
        let msg = self.recv(id).await?;
        match msg.op {
            ProtocolOp::ExtendedResponse(r) => r.check("StartTLS")?,
            other => return Err(unexpected("StartTLS", &other)),
        };
        // Take the socket out of the framing; bytes already read belong to the TLS stream.
        if self.framed.codec().has_layer() {
            return Err(ClientError::Invalid(
                "StartTLS on a connection a SASL layer protects".into(),
            ));
        }
        let codec = ClientCodec::new(self.opts.max_message);
        let placeholder = Framed::new(Transport::Closed, ClientCodec::new(self.opts.max_message));
        let parts = std::mem::replace(&mut self.framed, placeholder).into_parts();
        let Transport::Tcp(tcp) = parts.io else {
            self.closed = true;
            return Err(ClientError::Closed);
        };
        let addr = self.url.authority();
        let upgraded = within(
            self.opts.connect_timeout,
            || format!("TLS handshake with {addr}"),
            transport::handshake(tcp, parts.read_buf.freeze(), &host, &addr, &self.opts.tls),
        )
        .await
        .and_then(|r| r);
        match upgraded {
            Ok(io) => {
                self.framed = Framed::new(io, codec);
                Ok(())
            }
            Err(e) => {
                self.closed = true;
                Err(e)
            }
        }
    }

    /// A simple bind (RFC 4513 section 5.1) with a DN (or, for AD, a UPN or
    /// `DOMAIN\user`) and a password; an empty password is an anonymous bind.
    pub async fn simple_bind(
        &mut self,
        dn: &str,
        password: impl AsRef<[u8]>,
    ) -> Result<LdapResult, ClientError> {
        let req = BindRequest {
            version: 3,
            name: dn.to_string(),
            auth: BindAuth::Simple(password.as_ref().to_vec()),
        };
        Ok(self.bind(req).await?.result)
    }

    /// A SASL bind step with `mechanism` (`PLAIN`, `EXTERNAL`, …); the response carries
    /// the server's credentials for mechanisms that take several steps.
    pub async fn sasl_bind(
        &mut self,
        mechanism: &str,
        credentials: Option<Vec<u8>>,
    ) -> Result<BindResponse, ClientError> {
        self.bind(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Sasl {
                mechanism: mechanism.to_string(),
                credentials,
            },
        })
        .await
    }

    /// A GSS-SPNEGO bind with NTLM as `domain\user`, as AD's own tools bind: every message
    /// after it is sealed (`seal`) or signed by the session it negotiates, unless the
    /// connection already runs TLS.
    pub async fn ntlm_bind(
        &mut self,
        user: &str,
        domain: &str,
        password: &str,
        seal: bool,
    ) -> Result<LdapResult, ClientError> {
        let wrap = !self.is_encrypted();
        let mut spnego =
            kauri_auth::spnego::SpnegoClient::new(user, domain, password, seal && wrap);
        let mut token = spnego.initial();
        loop {
            let r = self.sasl_bind("GSS-SPNEGO", Some(token)).await?;
            if r.result.code != ResultCode::SASL_BIND_IN_PROGRESS
                && r.result.code != ResultCode::SUCCESS
            {
                return Ok(r.result);
            }
            let next = spnego
                .step(r.server_sasl_creds.as_deref().unwrap_or_default())
                .map_err(|e| ClientError::Protocol(format!("NTLM: {e}")))?;
            match next {
                Some(t) if r.result.code == ResultCode::SASL_BIND_IN_PROGRESS => token = t,
                None if r.result.code == ResultCode::SUCCESS => {
                    if let Some(session) = spnego.into_session().filter(|_| wrap) {
                        self.framed.codec_mut().set_layer(Box::new(session));
                    }
                    return Ok(r.result);
                }
                _ => {
                    return Err(ClientError::Protocol(
                        "the GSS-SPNEGO exchange ended out of step".into(),
                    ))
                }
            }
        }
    }

    /// A SASL EXTERNAL bind: on `ldapi://` the server takes the process's Unix
    /// credentials as its identity.
    pub async fn sasl_external(&mut self) -> Result<LdapResult, ClientError> {
        Ok(self.sasl_bind("EXTERNAL", None).await?.result)
    }

    async fn bind(&mut self, req: BindRequest) -> Result<BindResponse, ClientError> {
        let id = self
            .send_message(ProtocolOp::BindRequest(req), Vec::new(), false)
            .await?;
        match self.recv(id).await?.op {
            ProtocolOp::BindResponse(r) => Ok(r),
            other => Err(unexpected("a bind", &other)),
        }
    }

    /// A search, every entry collected. For large results prefer
    /// [`LdapClient::search_each`] or [`LdapClient::search_paged`].
    pub async fn search(
        &mut self,
        req: SearchRequest,
        controls: Vec<Control>,
    ) -> Result<SearchOutcome, ClientError> {
        let mut entries = Vec::new();
        let done = self
            .search_each(req, controls, |e| {
                entries.push(e);
                Ok::<(), ClientError>(())
            })
            .await?;
        Ok(SearchOutcome {
            entries,
            referrals: done.referrals,
            result: done.result,
            controls: done.controls,
        })
    }

    /// A search handing each entry to `each` as it arrives, so no more than one entry is
    /// held. An error from `each` abandons the search and is returned.
    pub async fn search_each<E: From<ClientError>>(
        &mut self,
        req: SearchRequest,
        controls: Vec<Control>,
        mut each: impl FnMut(SearchResultEntry) -> Result<(), E>,
    ) -> Result<SearchDone, E> {
        let id = self.send(ProtocolOp::SearchRequest(req), controls).await?;
        let mut referrals = Vec::new();
        loop {
            let msg = self.recv(id).await?;
            match msg.op {
                ProtocolOp::SearchResultEntry(e) => {
                    if let Err(e) = each(e) {
                        self.abandon_quietly(id).await;
                        return Err(e);
                    }
                }
                ProtocolOp::SearchResultReference(urls) => referrals.push(urls),
                ProtocolOp::SearchResultDone(result) => {
                    return Ok(SearchDone {
                        referrals,
                        result,
                        controls: msg.controls,
                    })
                }
                // Controls such as content synchronization may interleave these.
                ProtocolOp::IntermediateResponse(_) => {}
                other => {
                    self.abandon_quietly(id).await;
                    return Err(unexpected("a search", &other).into());
                }
            }
        }
    }

    /// A search driven page by page with the simple paged results control (RFC 2696,
    /// sent non-critical) until the server's cookie is empty, each entry handed to `each`.
    ///
    /// Returns the last page's result and controls with the referrals of every page. A
    /// page whose result is not success ends the search with that result; a server that
    /// ignores the control answers in one go, which is returned as it is.
    pub async fn search_paged<E: From<ClientError>>(
        &mut self,
        req: SearchRequest,
        controls: Vec<Control>,
        page_size: u32,
        mut each: impl FnMut(SearchResultEntry) -> Result<(), E>,
    ) -> Result<SearchDone, E> {
        if page_size == 0 {
            return Err(ClientError::Invalid("a page size of 0".into()).into());
        }
        if controls.iter().any(|c| c.oid == PAGED_RESULTS) {
            return Err(ClientError::Invalid(
                "search_paged adds the paged results control itself".into(),
            )
            .into());
        }
        let size = i32::try_from(page_size).unwrap_or(i32::MAX);
        let mut cookie = Vec::new();
        let mut referrals = Vec::new();
        loop {
            let mut page_controls = controls.clone();
            page_controls.push(PagedResults { size, cookie }.to_control(false));
            let mut done = self
                .search_each(req.clone(), page_controls, &mut each)
                .await?;
            referrals.append(&mut done.referrals);
            let next = match done.controls.iter().find(|c| c.oid == PAGED_RESULTS) {
                Some(c) if done.result.code == ResultCode::SUCCESS => {
                    PagedResults::from_control(c)
                        .map_err(|e| ClientError::Protocol(format!("in a page's answer: {e}")))?
                        .cookie
                }
                _ => Vec::new(),
            };
            if next.is_empty() {
                done.referrals = referrals;
                return Ok(done);
            }
            cookie = next;
        }
    }

    /// Adds an entry with its attributes (name, values).
    pub async fn add(
        &mut self,
        dn: &str,
        attributes: Vec<(String, Vec<Vec<u8>>)>,
        controls: Vec<Control>,
    ) -> Result<LdapResult, ClientError> {
        let op = ProtocolOp::AddRequest(AddRequest {
            dn: dn.to_string(),
            attributes: attributes
                .into_iter()
                .map(|(name, values)| Attribute { name, values })
                .collect(),
        });
        match self.single(op, controls).await? {
            ProtocolOp::AddResponse(r) => Ok(r),
            other => Err(unexpected("an add", &other)),
        }
    }

    /// Applies `changes` to an entry, in order, all or nothing.
    pub async fn modify(
        &mut self,
        dn: &str,
        changes: Vec<Change>,
        controls: Vec<Control>,
    ) -> Result<LdapResult, ClientError> {
        let op = ProtocolOp::ModifyRequest(ModifyRequest {
            dn: dn.to_string(),
            changes,
        });
        match self.single(op, controls).await? {
            ProtocolOp::ModifyResponse(r) => Ok(r),
            other => Err(unexpected("a modify", &other)),
        }
    }

    /// Deletes an entry (with the tree delete control, its subtree).
    pub async fn delete(
        &mut self,
        dn: &str,
        controls: Vec<Control>,
    ) -> Result<LdapResult, ClientError> {
        match self
            .single(ProtocolOp::DelRequest(dn.to_string()), controls)
            .await?
        {
            ProtocolOp::DelResponse(r) => Ok(r),
            other => Err(unexpected("a delete", &other)),
        }
    }

    /// Renames an entry to `new_rdn` and, with `new_superior`, moves it under another
    /// parent.
    pub async fn modify_dn(
        &mut self,
        dn: &str,
        new_rdn: &str,
        delete_old_rdn: bool,
        new_superior: Option<&str>,
        controls: Vec<Control>,
    ) -> Result<LdapResult, ClientError> {
        let op = ProtocolOp::ModifyDnRequest(ModifyDnRequest {
            dn: dn.to_string(),
            new_rdn: new_rdn.to_string(),
            delete_old_rdn,
            new_superior: new_superior.map(str::to_string),
        });
        match self.single(op, controls).await? {
            ProtocolOp::ModifyDnResponse(r) => Ok(r),
            other => Err(unexpected("a modify DN", &other)),
        }
    }

    /// Whether the entry's `attribute` holds `value`: compareTrue gives `true`,
    /// compareFalse `false`, and any other result (no such entry, no such attribute, …)
    /// is a [`ClientError::Result`], since no comparison took place.
    pub async fn compare(
        &mut self,
        dn: &str,
        attribute: &str,
        value: impl AsRef<[u8]>,
        controls: Vec<Control>,
    ) -> Result<bool, ClientError> {
        let op = ProtocolOp::CompareRequest(CompareRequest {
            dn: dn.to_string(),
            attribute: attribute.to_string(),
            value: value.as_ref().to_vec(),
        });
        let r = match self.single(op, controls).await? {
            ProtocolOp::CompareResponse(r) => r,
            other => return Err(unexpected("a compare", &other)),
        };
        match r.code {
            ResultCode::COMPARE_TRUE => Ok(true),
            ResultCode::COMPARE_FALSE => Ok(false),
            ResultCode::SUCCESS => Err(ClientError::Protocol(
                "success instead of compareTrue or compareFalse".into(),
            )),
            _ => r
                .check(&format!("compare of {attribute} of {dn}"))
                .map(|_| false),
        }
    }

    /// An extended operation answered by one extended response. (StartTLS has its own
    /// method, [`LdapClient::start_tls`].)
    pub async fn extended(
        &mut self,
        name: &str,
        value: Option<Vec<u8>>,
        controls: Vec<Control>,
    ) -> Result<ExtendedResponse, ClientError> {
        let op = ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: name.to_string(),
            value,
        });
        match self.single(op, controls).await? {
            ProtocolOp::ExtendedResponse(r) => Ok(r),
            other => Err(unexpected("an extended request", &other)),
        }
    }

    /// An extended operation answered by any number of intermediate responses (RFC 4511
    /// section 4.13), each handed to `each` as it arrives, then the extended response,
    /// which is returned. An error from `each` abandons the operation and is returned.
    pub async fn extended_stream<E: From<ClientError>>(
        &mut self,
        name: &str,
        value: Option<Vec<u8>>,
        controls: Vec<Control>,
        mut each: impl FnMut(IntermediateResponse) -> Result<(), E>,
    ) -> Result<ExtendedResponse, E> {
        let op = ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: name.to_string(),
            value,
        });
        let id = self.send(op, controls).await?;
        loop {
            match self.recv(id).await?.op {
                ProtocolOp::IntermediateResponse(r) => {
                    if let Err(e) = each(r) {
                        self.abandon_quietly(id).await;
                        return Err(e);
                    }
                }
                ProtocolOp::ExtendedResponse(r) => return Ok(r),
                other => {
                    self.abandon_quietly(id).await;
                    return Err(unexpected("an extended request", &other).into());
                }
            }
        }
    }

    /// "Who am I?" (RFC 4532): the identity the server knows this connection by.
    pub async fn who_am_i(&mut self) -> Result<WhoAmI, ClientError> {
        let r = self.extended(WHO_AM_I, None, Vec::new()).await?;
        let authz_id = match r.value {
            Some(v) if r.result.code == ResultCode::SUCCESS => {
                String::from_utf8(v).map_err(|_| {
                    ClientError::Protocol("an authorization identity not in UTF-8".into())
                })?
            }
            _ => String::new(),
        };
        Ok(WhoAmI {
            result: r.result,
            authz_id,
        })
    }

    /// Password modify (RFC 3062): sets the password of `user` (a DN; `None` for the bound
    /// user), proving `old` where the server asks for it; without `new` the server
    /// generates one and returns it.
    pub async fn password_modify(
        &mut self,
        user: Option<&str>,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<PasswordModified, ClientError> {
        let req = PasswordModifyRequest {
            user_identity: user.map(|u| u.as_bytes().to_vec()),
            old_password: old.map(<[u8]>::to_vec),
            new_password: new.map(<[u8]>::to_vec),
        };
        let r = self
            .extended(PASSWORD_MODIFY, Some(req.encode()), Vec::new())
            .await?;
        let generated = if r.result.code == ResultCode::SUCCESS {
            PasswordModifyResponse::decode(r.value.as_deref())
                .map_err(|e| ClientError::Protocol(e.to_string()))?
                .gen_passwd
        } else {
            None
        };
        Ok(PasswordModified {
            result: r.result,
            generated,
        })
    }

    /// Asks the server to abandon request `id` (it sends no answer); responses to it that
    /// still arrive are dropped.
    pub async fn abandon(&mut self, id: MessageId) -> Result<(), ClientError> {
        self.forget(id);
        self.send_message(ProtocolOp::AbandonRequest(id), Vec::new(), false)
            .await?;
        Ok(())
    }

    /// Ends the session politely (unbind, then closing the stream, with TLS's close
    /// notification). The connection is gone either way.
    pub async fn unbind(mut self) -> Result<(), ClientError> {
        if self.closed {
            return Ok(());
        }
        self.send_message(ProtocolOp::UnbindRequest, Vec::new(), false)
            .await?;
        let limit = self.opts.timeout;
        // The server may close first; what matters was sent.
        let _ = within(limit, || "closing".into(), self.framed.get_mut().shutdown()).await;
        Ok(())
    }

    /// Sends a request as it is and returns its message id, for pipelining; read its
    /// responses with [`LdapClient::recv`]. StartTLS must go through
    /// [`LdapClient::start_tls`].
    pub async fn send(
        &mut self,
        op: ProtocolOp,
        controls: Vec<Control>,
    ) -> Result<MessageId, ClientError> {
        if let ProtocolOp::ExtendedRequest(r) = &op {
            if r.name == START_TLS {
                return Err(ClientError::Invalid(
                    "StartTLS must be sent with start_tls".into(),
                ));
            }
        }
        let abandonable = !matches!(op, ProtocolOp::BindRequest(_));
        self.send_message(op, controls, abandonable).await
    }

    /// The next response to request `id`: one kept from earlier reads, or the next one
    /// for it from the server (responses to other requests in progress are kept for them).
    ///
    /// When the wait passes [`ConnectOptions::timeout`], the request is abandoned (unless
    /// it is a bind) and its later responses are dropped.
    pub async fn recv(&mut self, id: MessageId) -> Result<LdapMessage, ClientError> {
        if let Some(pos) = self.queued.iter().position(|q| q.id == id) {
            if let Some(q) = self.queued.remove(pos) {
                return q.item.map_err(ClientError::Decode);
            }
        }
        self.usable()?;
        if !self.outstanding.contains_key(&id) {
            return Err(ClientError::Invalid(format!(
                "no request with message id {id} is waiting for a response"
            )));
        }
        loop {
            let item = match self.read_one(id).await {
                Ok(item) => item,
                Err(e) => {
                    if matches!(e, ClientError::Timeout { .. }) {
                        self.abandon_quietly(id).await;
                    }
                    return Err(e);
                }
            };
            match item {
                Ok(msg) if msg.id == 0 => return Err(self.unsolicited(msg)),
                Ok(msg) => {
                    if !self.outstanding.contains_key(&msg.id) {
                        continue; // a request no longer waited for
                    }
                    if is_final(&msg.op) {
                        self.outstanding.remove(&msg.id);
                    }
                    if msg.id == id {
                        return Ok(msg);
                    }
                    self.queued.push_back(Queued {
                        id: msg.id,
                        item: Ok(msg),
                    });
                }
                Err(e) => match e.id {
                    Some(eid) if eid != 0 => {
                        // Its remaining responses are dropped: where they end is unknown.
                        if self.outstanding.remove(&eid).is_none() {
                            continue;
                        }
                        if eid == id {
                            return Err(ClientError::Decode(e.to_string()));
                        }
                        self.queued.push_back(Queued {
                            id: eid,
                            item: Err(e.to_string()),
                        });
                    }
                    _ => {
                        // Nothing to tie it to: some request would wait forever.
                        self.closed = true;
                        return Err(ClientError::Decode(e.to_string()));
                    }
                },
            }
        }
    }

    /// Sends a request answered by one response and returns that response (bind, add,
    /// modify, delete, modify DN, compare, extended); the response's controls come with it.
    pub async fn call(
        &mut self,
        op: ProtocolOp,
        controls: Vec<Control>,
    ) -> Result<LdapMessage, ClientError> {
        if matches!(
            op,
            ProtocolOp::SearchRequest(_)
                | ProtocolOp::UnbindRequest
                | ProtocolOp::AbandonRequest(_)
        ) {
            return Err(ClientError::Invalid(format!(
                "a {} is not answered by one response",
                op_name(&op)
            )));
        }
        let id = self.send(op, controls).await?;
        let msg = self.recv(id).await?;
        if !is_final(&msg.op) {
            self.abandon_quietly(id).await;
            return Err(ClientError::Protocol(format!(
                "{} to a request answered by one response",
                op_name(&msg.op)
            )));
        }
        Ok(msg)
    }

    /// [`LdapClient::call`] returning only the operation.
    async fn single(
        &mut self,
        op: ProtocolOp,
        controls: Vec<Control>,
    ) -> Result<ProtocolOp, ClientError> {
        Ok(self.call(op, controls).await?.op)
    }

    fn usable(&self) -> Result<(), ClientError> {
        if self.closed {
            Err(ClientError::Closed)
        } else {
            Ok(())
        }
    }

    fn next_message_id(&mut self) -> MessageId {
        loop {
            let id = self.next_id;
            self.next_id = if id == MessageId::MAX { 1 } else { id + 1 };
            if !self.outstanding.contains_key(&id) && !self.queued.iter().any(|q| q.id == id) {
                return id;
            }
        }
    }

    async fn send_message(
        &mut self,
        op: ProtocolOp,
        controls: Vec<Control>,
        abandonable: bool,
    ) -> Result<MessageId, ClientError> {
        self.usable()?;
        let id = self.next_message_id();
        let answered = !matches!(
            op,
            ProtocolOp::UnbindRequest | ProtocolOp::AbandonRequest(_)
        );
        let unbind = matches!(op, ProtocolOp::UnbindRequest);
        let what = op_name(&op);
        let sent = within(
            self.opts.timeout,
            || format!("sending a {what}"),
            self.framed.send(LdapMessage { id, op, controls }),
        )
        .await;
        match sent {
            Ok(Ok(())) => {}
            // A request half written cannot be taken back: the connection is done.
            Err(e) => {
                self.closed = true;
                return Err(e);
            }
            Ok(Err(e)) => return Err(self.fatal(e)),
        }
        if unbind {
            self.closed = true;
        }
        if answered {
            self.outstanding.insert(id, abandonable);
        }
        Ok(id)
    }

    /// Reads one message from the server.
    async fn read_one(
        &mut self,
        waiting_for: MessageId,
    ) -> Result<Result<LdapMessage, DecodeError>, ClientError> {
        let next = within(
            self.opts.timeout,
            || format!("waiting for the response to message {waiting_for}"),
            self.framed.next(),
        )
        .await?;
        match next {
            Some(Ok(item)) => Ok(item),
            Some(Err(e)) => Err(self.fatal(e)),
            None => {
                self.closed = true;
                Err(ClientError::Closed)
            }
        }
    }

    /// A framing or I/O failure: the connection cannot go on.
    fn fatal(&mut self, e: FrameError) -> ClientError {
        self.closed = true;
        match e {
            FrameError::Io(e) => ClientError::Io(e),
            other => ClientError::Decode(other.to_string()),
        }
    }

    /// An unsolicited notification as an error; a notice of disconnection closes.
    fn unsolicited(&mut self, msg: LdapMessage) -> ClientError {
        match msg.op {
            ProtocolOp::ExtendedResponse(r) => {
                if r.name.as_deref() == Some(NOTICE_OF_DISCONNECTION) {
                    self.closed = true;
                }
                ClientError::Unsolicited {
                    oid: r.name,
                    code: r.result.code,
                    message: r.result.message,
                }
            }
            other => {
                self.closed = true;
                ClientError::Protocol(format!("{} with message id 0", op_name(&other)))
            }
        }
    }

    /// Stops waiting for request `id`: its responses are dropped from now on.
    fn forget(&mut self, id: MessageId) -> Option<bool> {
        self.queued.retain(|q| q.id != id);
        self.outstanding.remove(&id)
    }

    /// Stops waiting for `id` and, if it can be, abandons it at the server; failures to
    /// send the abandon request are left to the next operation to find.
    async fn abandon_quietly(&mut self, id: MessageId) {
        if self.forget(id) == Some(true) && !self.closed {
            let _ = self
                .send_message(ProtocolOp::AbandonRequest(id), Vec::new(), false)
                .await;
        }
    }
}
