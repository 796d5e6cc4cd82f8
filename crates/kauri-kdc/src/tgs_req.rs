//! The TGS exchange (RFC 4120 §3.3): a client presents its TGT and an authenticator and
//! gets a ticket for a service (or its TGT renewed). The TGT must be ours (a krbtgt key
//! of a known version), fresh, presented once, bound to this request by the
//! authenticator's checksum, and carry a PAC whose signatures verify; the PAC is copied
//! into the new ticket and signed again for its service.

use kauri_auth::krb::crypto::Key;
use kauri_auth::krb::msg::constants::{error_code, padata};
use kauri_auth::krb::msg::{
    kdc_options, ticket_flags, ApReq, Authenticator, EncKdcRepPart, EncTicketPart, EncryptedData,
    KdcKind, KdcRep, KdcReq, KerberosFlags, KerberosTime, LastReq, LastReqEntry, PaData,
};
use kauri_auth::krb::pac::{Pac, TicketKind, PAC_WAS_GIVEN_IMPLICITLY, PAC_WAS_REQUESTED};
use kauri_auth::krb::signer::KeySigner;
use kauri_domain::directory::kdc::KdcAccount;
use kauri_domain::sid::Sid;

use crate::as_req::account_refusal;
use crate::issue::{find_pac, seal_ticket, USAGE_TICKET};
use crate::kdc::{now_usec, same_name, Answer, Kdc, Refusal};
use crate::keys::{self, session_etype, ticket_key, LongTermKey};
use kauri_auth::krb::replay::digest;

/// Key usage of the authenticator in a TGS-REQ.
const USAGE_TGS_AUTHENTICATOR: u32 = 7;
/// Key usage of the authenticator's checksum over the request body.
const USAGE_TGS_REQ_CHECKSUM: u32 = 6;
/// Key usages of the TGS-REP's encrypted part, with the session key and with a subkey.
const USAGE_TGS_REP_SESSION: u32 = 8;
const USAGE_TGS_REP_SUBKEY: u32 = 9;

/// userAccountControl: the service takes tickets without a PAC.
const NO_AUTH_DATA_REQUIRED: u32 = 0x0200_0000;
/// userAccountControl: "account is sensitive and cannot be delegated".
const NOT_DELEGATED: u32 = 0x0010_0000;
/// userAccountControl: the service may be delegated to.
const TRUSTED_FOR_DELEGATION: u32 = 0x0008_0000;

/// A TGT that passed every check.
pub(crate) struct CheckedTgt {
    /// Its decrypted part.
    pub part: EncTicketPart,
    /// Its PAC, signatures verified.
    pub pac: Pac,
    /// The key its reply is encrypted with (the authenticator's subkey or the session key).
    pub reply_key: Key,
    /// Whether `reply_key` is a subkey.
    pub subkey: bool,
}

/// The key of a ticket's encryption type and version, or the KRB-ERROR for its absence.
pub(crate) fn key_for(
    acct: &KdcAccount,
    etype: i32,
    kvno: Option<u32>,
) -> Result<LongTermKey, Refusal> {
    keys::key_for(acct, etype, kvno).map_err(|unknown_version| {
        if unknown_version {
            Refusal::new(error_code::KRB_AP_ERR_BADKEYVER, "unknown key version")
        } else {
            Refusal::new(error_code::KRB_AP_ERR_NOKEY, "no key of that type")
        }
    })
}

impl Kdc {
    /// Checks the TGT and authenticator of a TGS-REQ.
    pub(crate) fn check_tgt(
        &self,
        req: &KdcReq,
        krbtgt: &KdcAccount,
        now: i64,
    ) -> Result<CheckedTgt, Refusal> {
        let skew = self.settings().skew_secs;
        let pa = req
            .padata
            .as_deref()
            .and_then(|p| PaData::find(p, padata::PA_TGS_REQ))
            .ok_or_else(|| Refusal::new(error_code::KDC_ERR_PADATA_TYPE_NOSUPP, "no PA-TGS-REQ"))?;
        let ap = ApReq::decode(&pa.value)
            .map_err(|e| Refusal::new(error_code::KRB_AP_ERR_MSG_TYPE, format!("AP-REQ: {e}")))?;
        let tkt = &ap.ticket;
        let ours = tkt.sname.components.len() == 2
            && tkt.sname.components[0].eq_ignore_ascii_case("krbtgt")
            && self.ctx.dir.kdc_is_our_realm(&tkt.sname.components[1])
            && self.ctx.dir.kdc_is_our_realm(&tkt.realm);
        if !ours {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_NOT_US,
                "not a ticket of this KDC",
            ));
        }
        let key = key_for(krbtgt, tkt.enc_part.etype, tkt.enc_part.kvno)?;
        let bad = |what: &str| Refusal::new(error_code::KRB_AP_ERR_BAD_INTEGRITY, what.to_string());
        let plain = key
            .key
            .decrypt(USAGE_TICKET, &tkt.enc_part.cipher)
            .map_err(|_| bad("ticket does not decrypt"))?;
        let part = EncTicketPart::decode(&plain).map_err(|_| bad("ticket does not decode"))?;
        if part.endtime.0 < now {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_TKT_EXPIRED,
                "ticket expired",
            ));
        }
        if part.starttime.unwrap_or(part.authtime).0 > now + skew {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_TKT_NYV,
                "ticket not yet valid",
            ));
        }
        let session =
            kauri_auth::krb::key_of(&part.key).ok_or_else(|| bad("ticket session key unusable"))?;
        let auth_plain = session
            .decrypt(USAGE_TGS_AUTHENTICATOR, &ap.authenticator.cipher)
            .map_err(|_| bad("authenticator does not decrypt"))?;
        let auth =
            Authenticator::decode(&auth_plain).map_err(|_| bad("authenticator does not decode"))?;
        if !same_name(&auth.cname, &part.cname) || !auth.crealm.eq_ignore_ascii_case(&part.crealm) {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_BADMATCH,
                "authenticator is not the ticket's client",
            ));
        }
        if (auth.ctime.0 - now).abs() > skew {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_SKEW,
                "clock skew too great",
            ));
        }
        // The checksum binds the request body to the TGT's session key. Windows answers
        // requests without one (impacket sends none), so its absence is accepted; a
        // checksum that is there must verify.
        if let Some(cksum) = &auth.cksum {
            let body_bytes = req.req_body.checksum_bytes();
            session
                .verify_checksum(
                    USAGE_TGS_REQ_CHECKSUM,
                    &body_bytes,
                    cksum.cksumtype,
                    &cksum.checksum,
                )
                .map_err(|e| match e {
                    kauri_auth::krb::crypto::CryptoError::UnsupportedChecksumType(_)
                    | kauri_auth::krb::crypto::CryptoError::ChecksumTypeMismatch { .. } => {
                        Refusal::new(
                            error_code::KRB_AP_ERR_INAPP_CKSUM,
                            "checksum type not accepted",
                        )
                    }
                    _ => Refusal::new(
                        error_code::KRB_AP_ERR_MODIFIED,
                        "request body checksum wrong",
                    ),
                })?;
        }
        if !self
            .replay
            .insert(digest(&ap.authenticator.cipher), auth.ctime.0 + skew, now)
        {
            return Err(Refusal::new(
                error_code::KRB_AP_ERR_REPEAT,
                "authenticator replayed",
            ));
        }
        let pac_bytes = find_pac(&part)
            .ok_or_else(|| Refusal::new(error_code::KDC_ERR_TGT_REVOKED, "the TGT has no PAC"))?;
        let pac = Pac::parse(&pac_bytes)
            .map_err(|e| Refusal::new(error_code::KRB_AP_ERR_MODIFIED, format!("PAC: {e}")))?;
        let signer = KeySigner(&key.key);
        pac.verify(Some(&signer), Some(&signer), None)
            .map_err(|e| Refusal::new(error_code::KRB_AP_ERR_MODIFIED, format!("PAC: {e}")))?;
        let (reply_key, subkey) = match &auth.subkey {
            Some(k) => (
                kauri_auth::krb::key_of(k)
                    .ok_or_else(|| Refusal::new(error_code::KDC_ERR_ETYPE_NOSUPP, "subkey type"))?,
                true,
            ),
            None => (session, false),
        };
        Ok(CheckedTgt {
            part,
            pac,
            reply_key,
            subkey,
        })
    }

    /// Answers a TGS-REQ (see the module documentation).
    pub(crate) async fn tgs_exchange(&self, req: &KdcReq) -> Answer {
        let body = &req.req_body;
        let dir = &self.ctx.dir;
        let domain = dir
            .domain()
            .ok_or_else(|| Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "no domain"))?;
        let (now, _) = now_usec();
        let opts = body.kdc_options;
        if opts.contains(kdc_options::VALIDATE)
            || opts.contains(kdc_options::ENC_TKT_IN_SKEY)
            || opts.contains(kdc_options::CNAME_IN_ADDL_TKT)
        {
            return Err(Refusal::new(
                error_code::KDC_ERR_BADOPTION,
                "option not supported",
            ));
        }
        // S4U2Self (PA-FOR-USER, PA-S4U-X509-USER) is not offered: refused, rather than
        // answered with a ticket in the requester's own name.
        let s4u = req.padata.as_deref().is_some_and(|p| {
            PaData::find(p, padata::PA_FOR_USER).is_some() || PaData::find(p, 130).is_some()
        });
        if s4u {
            return Err(Refusal::new(
                error_code::KDC_ERR_BADOPTION,
                "S4U2Self is not offered",
            ));
        }
        let renew = opts.contains(kdc_options::RENEW);
        let internal = |e: kauri_domain::directory::DirError| {
            Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string())
        };
        let (tgt, service, krbtgt_key, client_uac) = {
            let r = dir.db().read().map_err(|e| internal(e.into()))?;
            let krbtgt = dir
                .kdc_krbtgt(&r, &domain)
                .map_err(internal)?
                .and_then(|id| dir.kdc_account(&r, id).ok().flatten())
                .ok_or_else(|| Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "no krbtgt"))?;
            let tgt = self.check_tgt(req, &krbtgt, now)?;
            // A TGT names its requestor and carries the PAC attributes (AD's
            // PacRequestorEnforcement): any other ticket sealed with krbtgt's key — a
            // password-change ticket — is not a TGT. The requestor must still be a live
            // account allowed to log on.
            if tgt.pac.attributes_info().ok().flatten().is_none() {
                return Err(Refusal::new(
                    error_code::KDC_ERR_TGT_REVOKED,
                    "the ticket is not a TGT (its PAC has no attributes)",
                ));
            }
            let sid = tgt
                .pac
                .requestor()
                .ok()
                .flatten()
                .and_then(|q| Sid::from_bytes(&q.sid).ok())
                .ok_or_else(|| {
                    Refusal::new(
                        error_code::KDC_ERR_TGT_REVOKED,
                        "the TGT's PAC names no requestor",
                    )
                })?;
            let gone = || {
                Refusal::new(
                    error_code::KDC_ERR_CLIENT_REVOKED,
                    "the client no longer exists",
                )
                .with_status(0xC000_0064)
            };
            let id = r
                .find_eq("objectSid", &sid.to_bytes())
                .map_err(|e| internal(e.into()))?
                .and_then(|v| v.first().copied())
                .ok_or_else(gone)?;
            // A tombstone keeps its SID but is no account.
            let acct = dir
                .kdc_account(&r, id)
                .map_err(internal)?
                .ok_or_else(gone)?;
            let policy = dir.kdc_policy(&r, &acct).map_err(internal)?;
            dir.kdc_check_account(&acct, &policy, dir.kdc_now(), true)
                .map_err(account_refusal)?;
            let client_uac = acct.uac;
            let krbtgt_key = ticket_key(&krbtgt).ok_or_else(|| {
                Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "krbtgt has no keys")
            })?;
            let sname = body.sname.as_ref().ok_or_else(|| {
                Refusal::new(error_code::KDC_ERR_S_PRINCIPAL_UNKNOWN, "no server name")
            })?;
            let service = if renew {
                krbtgt
            } else {
                let id = dir
                    .kdc_find_service(&r, &sname.components)
                    .map_err(internal)?
                    .ok_or_else(|| {
                        Refusal::new(error_code::KDC_ERR_S_PRINCIPAL_UNKNOWN, "server not found")
                    })?;
                dir.kdc_account(&r, id).map_err(internal)?.ok_or_else(|| {
                    Refusal::new(error_code::KDC_ERR_S_PRINCIPAL_UNKNOWN, "server not found")
                })?
            };
            (tgt, service, krbtgt_key, client_uac)
        };
        let realm = self.realm();
        let sname = body.sname.clone().unwrap_or_else(|| self.krbtgt_name());
        let to_krbtgt = service.is_krbtgt
            && sname
                .components
                .first()
                .is_some_and(|c| c.eq_ignore_ascii_case("krbtgt"));
        let reply_sname = if to_krbtgt {
            self.krbtgt_name()
        } else {
            sname.clone()
        };
        let service_key = ticket_key(&service).ok_or_else(|| {
            Refusal::new(error_code::KDC_ERR_ETYPE_NOSUPP, "the service has no keys")
        })?;
        let session_type = session_etype(&body.etype, &service).ok_or_else(|| {
            Refusal::new(
                error_code::KDC_ERR_ETYPE_NOSUPP,
                "no session key type in common",
            )
        })?;
        let session = Key::random(session_type)
            .map_err(|e| Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string()))?;
        let old = &tgt.part;
        let mut flags = KerberosFlags(old.flags.0 & ticket_flags::PRE_AUTHENT);
        let tgt_forwardable =
            old.flags.contains(ticket_flags::FORWARDABLE) && client_uac & NOT_DELEGATED == 0;
        if opts.contains(kdc_options::FORWARDABLE) && tgt_forwardable {
            flags.insert(ticket_flags::FORWARDABLE);
        }
        if (opts.contains(kdc_options::FORWARDED) && tgt_forwardable)
            || old.flags.contains(ticket_flags::FORWARDED)
        {
            flags.insert(ticket_flags::FORWARDED);
        }
        if !to_krbtgt && service.uac & TRUSTED_FOR_DELEGATION != 0 {
            flags.insert(ticket_flags::OK_AS_DELEGATE);
        }
        let old_renewable = old.flags.contains(ticket_flags::RENEWABLE);
        let (endtime, renew_till) = if renew {
            let limit = old.renew_till.map(|t| t.0).unwrap_or(0);
            if !old_renewable || limit < now {
                return Err(Refusal::new(
                    error_code::KDC_ERR_BADOPTION,
                    "ticket not renewable",
                ));
            }
            flags.insert(ticket_flags::RENEWABLE);
            let life = old.endtime.0 - old.starttime.unwrap_or(old.authtime).0;
            ((now + life.max(0)).min(limit), Some(KerberosTime(limit)))
        } else {
            let settings = self.settings();
            let life = if to_krbtgt {
                settings.max_ticket_secs
            } else {
                settings.max_service_secs
            };
            let wanted = if body.till.0 <= 0 {
                i64::MAX
            } else {
                body.till.0
            };
            let end = wanted.min(now + life).min(old.endtime.0);
            let rt = if opts.contains(kdc_options::RENEWABLE) && old_renewable {
                flags.insert(ticket_flags::RENEWABLE);
                let limit = old.renew_till.map(|t| t.0).unwrap_or(end);
                let asked = body
                    .rtime
                    .map(|t| if t.0 <= 0 { i64::MAX } else { t.0 })
                    .unwrap_or(limit);
                Some(KerberosTime(asked.min(limit).max(end)))
            } else {
                None
            };
            (end, rt)
        };
        // The PAC: copied and signed again, unless the service does without one.
        let attrs = tgt.pac.attributes_info().ok().flatten();
        let wanted = attrs
            .map(|a| a.flags & (PAC_WAS_REQUESTED | PAC_WAS_GIVEN_IMPLICITLY) != 0)
            .unwrap_or(true);
        let pac = if to_krbtgt || renew {
            Some(tgt.pac.reissue(TicketKind::Tgt))
        } else if wanted && service.uac & NO_AUTH_DATA_REQUIRED == 0 {
            Some(tgt.pac.reissue(TicketKind::Service))
        } else {
            None
        };
        let part = EncTicketPart {
            flags,
            key: kauri_auth::krb::encryption_key(&session),
            crealm: old.crealm.clone(),
            cname: old.cname.clone(),
            transited: old.transited.clone(),
            authtime: old.authtime,
            starttime: Some(KerberosTime(now)),
            endtime: KerberosTime(endtime),
            renew_till,
            caddr: old.caddr.clone(),
            authorization_data: None,
        };
        let ticket = seal_ticket(
            part,
            pac,
            &service_key,
            &krbtgt_key.key,
            !service.is_krbtgt,
            &realm,
            &reply_sname,
        )?;
        let enc = EncKdcRepPart {
            kind: KdcKind::Tgs,
            key: kauri_auth::krb::encryption_key(&session),
            last_req: LastReq(vec![LastReqEntry {
                lr_type: 0,
                lr_value: old.authtime,
            }]),
            nonce: body.nonce,
            key_expiration: None,
            flags,
            authtime: old.authtime,
            starttime: Some(KerberosTime(now)),
            endtime: KerberosTime(endtime),
            renew_till,
            srealm: realm,
            sname: reply_sname,
            caddr: old.caddr.clone(),
            encrypted_pa_data: None,
        };
        let usage = if tgt.subkey {
            USAGE_TGS_REP_SUBKEY
        } else {
            USAGE_TGS_REP_SESSION
        };
        let cipher = tgt
            .reply_key
            .encrypt(usage, &enc.encode())
            .map_err(|e| Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string()))?;
        Ok(KdcRep {
            kind: KdcKind::Tgs,
            padata: None,
            crealm: old.crealm.clone(),
            cname: old.cname.clone(),
            ticket,
            enc_part: EncryptedData {
                etype: tgt.reply_key.etype().number(),
                kvno: None,
                cipher,
            },
        }
        .encode())
    }
}
