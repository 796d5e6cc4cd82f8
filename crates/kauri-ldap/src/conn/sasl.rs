//! The GSS-SPNEGO SASL bind: SPNEGO carrying NTLMSSP, verified against the domain's
//! accounts with the same rules as a simple bind, and the security layer it negotiates.

use kauri_auth::ntlm::{Authenticate, NtlmServer, NtlmSettings, ServerNames};
use kauri_auth::spnego::{SpnegoServer, Step};
use kauri_auth::{AuthError, SecurityLayer};
use kauri_domain::directory::{Account, DomainInfo};
use kauri_ldap_proto::{BindAuth, LdapResult, ResultCode};

use super::{Conn, Identity};

/// The names the domain's NTLM CHALLENGE announces.
pub(crate) fn server_names(info: &DomainInfo) -> ServerNames {
    let host = info
        .server
        .as_ref()
        .and_then(|s| s.rdn())
        .and_then(|r| r.avas().first().map(|a| a.value.clone()))
        .unwrap_or_else(|| "DC".to_string());
    let dns = info.dns_name.to_ascii_lowercase();
    ServerNames {
        netbios_domain: info.netbios.to_ascii_uppercase(),
        netbios_computer: host.to_ascii_uppercase(),
        dns_domain: dns.clone(),
        dns_computer: format!("{}.{dns}", host.to_ascii_lowercase()),
        dns_tree: dns,
    }
}

/// The bind name an NTLM logon designates: the UPN a client sends with an empty domain,
/// else `DOMAIN\user` in this domain. A domain name that is not this domain's (a client's
/// default `WORKGROUP`) is taken as this domain, as AD does for names it has no trust for.
fn bind_name(auth: &Authenticate, info: &DomainInfo) -> String {
    if auth.domain.is_empty() && auth.user.contains('@') {
        return auth.user.clone();
    }
    format!("{}\\{}", info.netbios, auth.user)
}

/// AD's answer to a token that cannot be accepted: a logon failure (52e), or a token that
/// is not one (SEC_E_INVALID_TOKEN, data 57).
fn refused(e: &AuthError) -> LdapResult {
    let (hresult, data) = match e {
        AuthError::LogonFailure(_) => ("8009030C", "52e"),
        _ => ("80090308", "57"),
    };
    LdapResult::new(
        ResultCode::INVALID_CREDENTIALS,
        format!(
            "{hresult}: LdapErr: DSID-0C0904DC, comment: AcceptSecurityContext error, data \
             {data}, v4563 ({e})"
        ),
    )
}

impl Conn {
    /// What an NTLM logon on this connection is checked against: the TLS channel's binding
    /// (over plain TCP there is no channel), and the names this DC answers to.
    fn ntlm_settings(&self, names: &ServerNames) -> NtlmSettings {
        let mut target_hosts = vec![
            names.dns_computer.clone(),
            names.netbios_computer.clone(),
            names.dns_domain.clone(),
        ];
        let cfg = self.ctx.cfg();
        if !cfg.dns_host_name.is_empty() {
            target_hosts.push(cfg.dns_host_name.clone());
        }
        NtlmSettings {
            channel_binding: self.encrypted.then_some(self.channel_binding).flatten(),
            target_hosts,
        }
    }

    /// One step of a GSS-SPNEGO bind: the exchange so far (if any) and the client's token.
    pub(super) async fn spnego_bind(
        &mut self,
        continuing: Option<SpnegoServer>,
        token: Option<&[u8]>,
    ) -> (LdapResult, Option<Vec<u8>>) {
        let Some(info) = self.ctx.dir.domain() else {
            return (
                LdapResult::new(
                    ResultCode::AUTH_METHOD_NOT_SUPPORTED,
                    "GSS-SPNEGO needs a domain",
                ),
                None,
            );
        };
        let mut server = match continuing {
            Some(s) => s,
            None => {
                let names = server_names(&info);
                let settings = self.ntlm_settings(&names);
                match SpnegoServer::new(names, settings) {
                    Ok(s) => s,
                    Err(e) => return (LdapResult::new(ResultCode::OTHER, e.to_string()), None),
                }
            }
        };
        let auth = match server.step(token.unwrap_or_default()) {
            Err(e) => return (refused(&e), None),
            Ok(Step::Continue(out)) => {
                self.sasl = Some(server);
                return (
                    LdapResult::new(ResultCode::SASL_BIND_IN_PROGRESS, ""),
                    Some(out),
                );
            }
            Ok(Step::Authenticate(auth)) => auth,
        };
        if auth.is_anonymous() {
            return match server.accept(&auth, None) {
                Ok((out, _)) => (LdapResult::success(), Some(out)),
                Err(e) => (refused(&e), None),
            };
        }
        let mut accepted = None;
        let mut account = match self
            .ntlm_account(&info, &auth, &mut |hash| {
                server
                    .accept(&auth, Some(hash))
                    .map(|done| accepted = Some(done))
            })
            .await
        {
            Ok(a) => a,
            Err(refusal) => return (refusal, None),
        };
        let Some((out, session)) = accepted else {
            return (refused(&AuthError::OutOfSequence("account")), None);
        };
        if let Some(s) = &session {
            tracing::debug!(peer = %self.peer, flags = format_args!("{:#010x}", s.flags()), "NTLM logon");
        }
        let layer = session.filter(|s| s.protects_messages());
        match layer {
            // Over TLS, AD refuses sealing and leaves signing to TLS.
            Some(s) if self.encrypted && s.sealed() => {
                return (
                    LdapResult::new(
                        ResultCode::UNWILLING_TO_PERFORM,
                        "00002029: LdapErr: DSID-0C09053E, comment: Cannot bind using \
                         sign/seal on a connection on which TLS or SSL is in effect, data 0, \
                         v4563",
                    ),
                    None,
                );
            }
            Some(_) if self.encrypted => {}
            Some(s) => self.new_layer = Some(Box::new(s) as Box<dyn SecurityLayer>),
            None if self.ctx.cfg().require_strong_auth && !self.encrypted => {
                return (
                    LdapResult::new(
                        ResultCode::STRONGER_AUTH_REQUIRED,
                        "00002028: LdapErr: DSID-0C090259, comment: The server requires binds to \
                         turn on integrity checking if SSL\\TLS are not already active on the \
                         connection, data 0, v4563",
                    ),
                    None,
                );
            }
            None => {}
        }
        add_ntlm_sid(&mut account);
        self.identity = Identity::Account(account);
        (LdapResult::success(), Some(out))
    }

    /// The account an NTLM AUTHENTICATE names, its proof checked by `proves` against the
    /// account's NT hash, with a simple bind's account rules and bookkeeping; or the bind's
    /// refusal.
    async fn ntlm_account(
        &mut self,
        info: &DomainInfo,
        auth: &Authenticate,
        proves: &mut (dyn FnMut(&[u8; 16]) -> Result<(), AuthError> + Send),
    ) -> Result<Account, LdapResult> {
        let mut why = None;
        let outcome = self
            .ctx
            .dir
            .authenticate_with(&bind_name(auth, info), &mut |secrets| match proves(
                secrets.nt_hash(),
            ) {
                Ok(()) => true,
                Err(e) => {
                    why = Some(e);
                    false
                }
            });
        let outcome = outcome.map_err(|e| crate::result::dir_result(&e))?;
        self.record_bind(outcome.update).await;
        outcome.result.map_err(|failure| {
            if let Some(e) = &why {
                tracing::debug!(peer = %self.peer, error = %e, "NTLM logon refused");
            }
            LdapResult::new(ResultCode::INVALID_CREDENTIALS, failure.sasl_diagnostic())
        })
    }

    /// A Sicily bind (MS-ADTS 5.1.1.1.3), the NTLM binds of clients such as python's ldap3:
    /// package discovery, then NEGOTIATE answered with the CHALLENGE (both in the response's
    /// matchedDN field), then AUTHENTICATE. No security layer follows.
    pub(super) async fn sicily_bind(
        &mut self,
        exchange: Option<NtlmServer>,
        auth: &BindAuth,
    ) -> (LdapResult, Option<BindData>) {
        let Some(info) = self.ctx.dir.domain() else {
            return (
                LdapResult::new(ResultCode::AUTH_METHOD_NOT_SUPPORTED, "NTLM needs a domain"),
                None,
            );
        };
        match auth {
            BindAuth::SicilyDiscovery => (
                LdapResult::success(),
                Some(BindData::Sicily(b"NTLM".to_vec())),
            ),
            BindAuth::SicilyNegotiate(negotiate) => {
                let names = server_names(&info);
                let settings = self.ntlm_settings(&names);
                let mut server = match NtlmServer::new(names, settings) {
                    Ok(s) => s,
                    Err(e) => return (LdapResult::new(ResultCode::OTHER, e.to_string()), None),
                };
                match server.challenge(negotiate) {
                    Ok(challenge) => {
                        self.sicily = Some(server);
                        (LdapResult::success(), Some(BindData::Sicily(challenge)))
                    }
                    Err(e) => (refused(&e), None),
                }
            }
            BindAuth::SicilyResponse(message) => {
                let Some(server) = exchange else {
                    return (refused(&AuthError::OutOfSequence("Sicily response")), None);
                };
                let parsed = match server.parse_authenticate(message) {
                    Ok(a) => a,
                    Err(e) => return (refused(&e), None),
                };
                if parsed.is_anonymous() {
                    return (LdapResult::success(), None);
                }
                if self.ctx.cfg().require_strong_auth && !self.encrypted {
                    return (
                        LdapResult::new(
                            ResultCode::STRONGER_AUTH_REQUIRED,
                            "00002028: LdapErr: DSID-0C090259, comment: The server requires \
                             binds to turn on integrity checking if SSL\\TLS are not already \
                             active on the connection, data 0, v4563",
                        ),
                        None,
                    );
                }
                let account = self
                    .ntlm_account(&info, &parsed, &mut |hash| {
                        server.verify(&parsed, hash).map(|_| ())
                    })
                    .await;
                match account {
                    Ok(mut account) => {
                        add_ntlm_sid(&mut account);
                        self.identity = Identity::Account(account);
                        (LdapResult::success(), None)
                    }
                    Err(refusal) => (refusal, None),
                }
            }
            _ => (
                LdapResult::new(ResultCode::PROTOCOL_ERROR, "not a Sicily bind"),
                None,
            ),
        }
    }
}

/// What a bind response carries besides its result.
pub(super) enum BindData {
    /// SASL credentials for the client.
    Sasl(Vec<u8>),
    /// A Sicily answer, sent in the matchedDN field.
    Sicily(Vec<u8>),
}

/// An NTLM logon's token names how it was made (NTLM Authentication, S-1-5-64-10).
fn add_ntlm_sid(account: &mut Account) {
    if let Ok(ntlm) = kauri_domain::sid::Sid::parse("S-1-5-64-10") {
        account.groups.push(ntlm);
    }
}
