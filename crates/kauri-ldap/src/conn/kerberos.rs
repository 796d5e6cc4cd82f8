//! Kerberos binds: SASL GSSAPI (RFC 4752, with its security-layer negotiation) and
//! GSS-SPNEGO carrying Kerberos (MS-SPNG; the layer follows the context's flags, as AD
//! does). The ticket must be for this DC's own account (its `ldap/`, `host/` or `GC/`
//! names); the bound identity and its token come from the ticket's PAC, with the
//! domain-local built-in groups this DC adds for its own resources.

use kauri_auth::krb::acceptor::Accepted;
use kauri_auth::krb::context::{GssContext, KrbLayer};
use kauri_auth::krb::msg::gss::gss_flags;
use kauri_auth::{AuthError, SecurityLayer};
use kauri_domain::directory::Account;
use kauri_ldap_proto::{LdapResult, ResultCode};

use super::{Conn, Identity};

/// SASL security layers (RFC 4752 §3.3).
const LAYER_NONE: u8 = 1;
const LAYER_INTEGRITY: u8 = 2;
const LAYER_CONFIDENTIALITY: u8 = 4;

/// Largest wrapped message the server takes (AD's MaxReceiveBuffer is 10 MB; ours is the
/// PDU limit, at most the 3 bytes RFC 4752 leaves for it).
const MAX_BUFFER: u32 = 0x00ff_ffff;

/// A GSSAPI bind between its steps.
pub(crate) enum GssapiBind {
    /// The context is made; the client's empty token comes next.
    Established {
        context: GssContext,
        account: Account,
    },
    /// The server's layer offer is out; the client's choice comes next.
    Offered {
        context: GssContext,
        account: Account,
        offered: u8,
    },
}

/// AD's answer to a Kerberos token it cannot accept.
fn refused(e: &AuthError) -> LdapResult {
    LdapResult::new(
        ResultCode::INVALID_CREDENTIALS,
        format!(
            "80090308: LdapErr: DSID-0C0904DC, comment: AcceptSecurityContext error, data \
             57, v4563 ({e})"
        ),
    )
}

impl Conn {
    /// Accepts a client's Kerberos initial token: the ticket must be for this DC.
    fn kerberos_accept(&self, token: &[u8]) -> Result<(Accepted, Account), LdapResult> {
        crate::krb_accept::accept_for_dc(&self.ctx, token).map_err(|e| {
            tracing::debug!(peer = %self.peer, error = %e, "Kerberos bind refused");
            refused(&e)
        })
    }

    /// One step of a SASL GSSAPI bind (RFC 4752).
    pub(super) fn gssapi_bind(
        &mut self,
        continuing: Option<GssapiBind>,
        token: Option<&[u8]>,
    ) -> (LdapResult, Option<Vec<u8>>) {
        let token = token.unwrap_or_default();
        match continuing {
            None => {
                let (accepted, account) = match self.kerberos_accept(token) {
                    Ok(x) => x,
                    Err(r) => return (r, None),
                };
                let reply = accepted.reply.unwrap_or_default();
                self.gssapi = Some(GssapiBind::Established {
                    context: accepted.context,
                    account,
                });
                (
                    LdapResult::new(ResultCode::SASL_BIND_IN_PROGRESS, ""),
                    Some(reply),
                )
            }
            Some(GssapiBind::Established {
                mut context,
                account,
            }) => {
                if !token.is_empty() {
                    return (refused(&AuthError::OutOfSequence("GSSAPI token")), None);
                }
                // Over TLS no layer is offered (AD refuses sign and seal there); without
                // TLS, "none" only when the server does not require integrity.
                let offered = if self.encrypted {
                    LAYER_NONE
                } else if self.ctx.cfg().require_strong_auth {
                    LAYER_INTEGRITY | LAYER_CONFIDENTIALITY
                } else {
                    LAYER_NONE | LAYER_INTEGRITY | LAYER_CONFIDENTIALITY
                };
                let max =
                    MAX_BUFFER.min(u32::try_from(self.ctx.cfg().max_pdu).unwrap_or(MAX_BUFFER));
                let mut offer = max.to_be_bytes();
                offer[0] = offered;
                let wrapped = match context.wrap(&offer, false) {
                    Ok(w) => w,
                    Err(e) => return (refused(&e), None),
                };
                self.gssapi = Some(GssapiBind::Offered {
                    context,
                    account,
                    offered,
                });
                (
                    LdapResult::new(ResultCode::SASL_BIND_IN_PROGRESS, ""),
                    Some(wrapped),
                )
            }
            Some(GssapiBind::Offered {
                mut context,
                account,
                offered,
            }) => {
                let (choice, _) = match context.unwrap(token) {
                    Ok(x) => x,
                    Err(e) => return (refused(&e), None),
                };
                let Some(&layer) = choice.first() else {
                    return (
                        refused(&AuthError::Malformed {
                            what: "GSSAPI layer choice",
                            why: "empty".into(),
                        }),
                        None,
                    );
                };
                if choice.len() < 4 || layer.count_ones() != 1 || layer & offered == 0 {
                    return (
                        refused(&AuthError::Malformed {
                            what: "GSSAPI layer choice",
                            why: "not one of the layers offered".into(),
                        }),
                        None,
                    );
                }
                if layer != LAYER_NONE {
                    let seal = layer == LAYER_CONFIDENTIALITY;
                    self.new_layer =
                        Some(Box::new(KrbLayer::new(context, seal)) as Box<dyn SecurityLayer>);
                }
                self.identity = Identity::Account(account);
                (LdapResult::success(), None)
            }
        }
    }

    /// A GSS-SPNEGO bind whose mechanism is Kerberos: one round, the layer from the
    /// context's flags. `mech` is the Kerberos OID the client chose, `mech_list` the DER
    /// of its mechanism list and `mic` its mechListMIC, if any.
    pub(super) fn spnego_kerberos_bind(
        &mut self,
        token: &[u8],
        mech: &[u8],
        mech_list: Option<&[u8]>,
        mic: Option<&[u8]>,
        first_choice: bool,
    ) -> (LdapResult, Option<Vec<u8>>) {
        let (mut accepted, account) = match self.kerberos_accept(token) {
            Ok(x) => x,
            Err(r) => return (r, None),
        };
        let our_mic =
            match crate::krb_accept::mech_list_mic(&mut accepted, mech_list, mic, first_choice) {
                Ok(m) => m,
                Err(e) => return (refused(&e), None),
            };
        let flags = accepted.gss_flags;
        let wants = flags & (gss_flags::INTEG | gss_flags::CONF) != 0;
        if wants {
            if self.encrypted && flags & gss_flags::CONF != 0 {
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
            if !self.encrypted {
                let seal = flags & gss_flags::CONF != 0;
                self.new_layer =
                    Some(Box::new(KrbLayer::new(accepted.context, seal)) as Box<dyn SecurityLayer>);
            }
        } else if self.ctx.cfg().require_strong_auth && !self.encrypted {
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
        self.identity = Identity::Account(account);
        let out = kauri_auth::spnego::kerberos_response(
            mech,
            accepted.reply.as_deref(),
            our_mic.as_deref(),
        );
        (LdapResult::success(), Some(out))
    }
}
