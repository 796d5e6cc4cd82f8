//! The password-change service (RFC 3244, MS-KILE 3.1.5.7 and 3.3.5.8): a client sends
//! a ticket for `kadmin/changepw` and, sealed with its authenticator's subkey, a new
//! password — its own (version 1, the ticket must come from an AS exchange) or another
//! account's (version 0xff80, the form adcli uses for a computer it creates; only
//! administrators may set others' passwords). The password goes through the same
//! policy, history and minimum-age rules as LDAP; a password the policy refuses is
//! answered with AD's policy blob, which clients turn into the reason.

use std::net::SocketAddr;
use std::sync::Arc;

use kauri_auth::krb::crypto::Key;
use kauri_auth::krb::msg::constants::{addr_type, error_code};
use kauri_auth::krb::msg::kpasswd::{result_code, KPASSWD_VERSION_CHANGE, KPASSWD_VERSION_SET};
use kauri_auth::krb::msg::{
    ticket_flags, AdPolicyInfo, ApRep, ApReq, Authenticator, ChangePasswdData, EncApRepPart,
    EncKrbPrivPart, EncTicketPart, EncryptedData, HostAddress, KerberosTime, KpasswdReply,
    KpasswdRequest, KpasswdResult, KrbPriv,
};
use kauri_domain::directory::DirError;
use kauri_domain::sid::Sid;
use kauri_ldap::writer::Task;

use crate::issue::USAGE_TICKET;
use crate::kdc::{now_usec, same_name, Kdc, Refusal};
use crate::tgs_req::key_for;
use crate::transport::Service;
use kauri_auth::krb::replay::digest;

/// The HostAddress type of an IPv6 address (RFC 4120 §7.5.3).
const ADDR_INET6: i32 = 24;

/// Longest password taken, in characters (AD's limit).
const MAX_PASSWORD_CHARS: usize = 256;

/// Key usage of the authenticator of an AP-REQ.
const USAGE_AP_REQ_AUTHENTICATOR: u32 = 11;
/// Key usage of the AP-REP's encrypted part.
const USAGE_AP_REP: u32 = 12;
/// Key usage of a KRB-PRIV's encrypted part.
const USAGE_KRB_PRIV: u32 = 13;

/// The password-change service, sharing the KDC's directory, writer and replay cache.
pub struct Kpasswd {
    /// The KDC whose keys and settings it uses.
    pub kdc: Arc<Kdc>,
    /// The address it answers from (the KRB-PRIV's sender address).
    pub local: SocketAddr,
    /// Recent answers by request, for a request sent again.
    pub lookaside: crate::kdc::Lookaside,
}

/// A checked request: who asks, whose password, and the keys of the reply.
struct Checked {
    part: EncTicketPart,
    client_sid: Sid,
    auth: Authenticator,
    session: Key,
    subkey: Key,
    version: u16,
    priv_part: EncKrbPrivPart,
}

/// A result for the client: the code and its text (or AD's policy blob).
fn result(code: u16, text: &str) -> KpasswdResult {
    KpasswdResult::text(code, text)
}

impl Kpasswd {
    /// Authenticates a request and opens its KRB-PRIV.
    fn check(&self, req: &KpasswdRequest) -> Result<Checked, (Refusal, KpasswdResult)> {
        let kdc = &self.kdc;
        let dir = &kdc.ctx.dir;
        let auth_err = |text: &str| {
            (
                Refusal::new(error_code::KRB_AP_ERR_BAD_INTEGRITY, text),
                result(result_code::AUTHERROR, text),
            )
        };
        if req.version != KPASSWD_VERSION_CHANGE && req.version != KPASSWD_VERSION_SET {
            return Err((
                Refusal::new(error_code::KRB_ERR_GENERIC, "unknown protocol version"),
                result(result_code::BAD_VERSION, "unknown protocol version"),
            ));
        }
        let ap = ApReq::decode(&req.ap_req).map_err(|_| {
            (
                Refusal::new(error_code::KRB_AP_ERR_MSG_TYPE, "malformed AP-REQ"),
                result(result_code::MALFORMED, "malformed request"),
            )
        })?;
        let tkt = &ap.ticket;
        let changepw = tkt.sname.components.len() == 2
            && tkt.sname.components[0].eq_ignore_ascii_case("kadmin")
            && tkt.sname.components[1].eq_ignore_ascii_case("changepw");
        if !changepw || !dir.kdc_is_our_realm(&tkt.realm) {
            return Err(auth_err("the ticket is not for kadmin/changepw"));
        }
        let domain = dir.domain().ok_or_else(|| auth_err("no domain"))?;
        let r = dir
            .db()
            .read()
            .map_err(|_| auth_err("directory unavailable"))?;
        let krbtgt = dir
            .kdc_krbtgt(&r, &domain)
            .ok()
            .flatten()
            .and_then(|id| dir.kdc_account(&r, id).ok().flatten())
            .ok_or_else(|| auth_err("no krbtgt"))?;
        drop(r);
        let key = key_for(&krbtgt, tkt.enc_part.etype, tkt.enc_part.kvno)
            .map_err(|rf| (rf.clone(), result(result_code::AUTHERROR, &rf.text)))?;
        let plain = key
            .key
            .decrypt(USAGE_TICKET, &tkt.enc_part.cipher)
            .map_err(|_| auth_err("ticket does not decrypt"))?;
        let part = EncTicketPart::decode(&plain).map_err(|_| auth_err("ticket does not decode"))?;
        // The client is the PAC's, its signatures krbtgt's; a PAC with the requestor or
        // attributes buffers is a TGT's, which is no password-change ticket.
        let pac = kauri_auth::krb::acceptor::ticket_pac(&part)
            .and_then(|b| kauri_auth::krb::pac::Pac::parse(&b).ok())
            .ok_or_else(|| auth_err("the ticket has no PAC"))?;
        let signer = kauri_auth::krb::signer::KeySigner(&key.key);
        pac.verify(Some(&signer), Some(&signer), None)
            .map_err(|_| auth_err("the ticket's PAC does not verify"))?;
        if pac.requestor().ok().flatten().is_some()
            || pac.attributes_info().ok().flatten().is_some()
        {
            return Err(auth_err("the ticket is not for kadmin/changepw"));
        }
        let client_sid = pac
            .logon_info()
            .ok()
            .flatten()
            .and_then(|i| {
                let domain = Sid::from_bytes(i.logon_domain_id.as_deref()?).ok()?;
                Some(domain.with_rid(i.user_id))
            })
            .ok_or_else(|| auth_err("the ticket's PAC names no client"))?;
        let (now, _) = now_usec();
        let skew = kdc.settings().skew_secs;
        if part.endtime.0 < now {
            return Err((
                Refusal::new(error_code::KRB_AP_ERR_TKT_EXPIRED, "ticket expired"),
                result(result_code::AUTHERROR, "ticket expired"),
            ));
        }
        let session =
            kauri_auth::krb::key_of(&part.key).ok_or_else(|| auth_err("session key unusable"))?;
        let auth_plain = session
            .decrypt(USAGE_AP_REQ_AUTHENTICATOR, &ap.authenticator.cipher)
            .map_err(|_| auth_err("authenticator does not decrypt"))?;
        let auth = Authenticator::decode(&auth_plain).map_err(|_| auth_err("bad authenticator"))?;
        if !same_name(&auth.cname, &part.cname) || (auth.ctime.0 - now).abs() > skew {
            return Err(auth_err("authenticator does not match the ticket"));
        }
        if !kdc
            .replay
            .insert(digest(&ap.authenticator.cipher), auth.ctime.0 + skew, now)
        {
            return Err((
                Refusal::new(error_code::KRB_AP_ERR_REPEAT, "request replayed"),
                result(result_code::AUTHERROR, "request replayed"),
            ));
        }
        let subkey = auth
            .subkey
            .as_ref()
            .and_then(kauri_auth::krb::key_of)
            .ok_or_else(|| auth_err("the authenticator has no subkey"))?;
        let krb_priv = KrbPriv::decode(&req.krb_priv).map_err(|_| {
            (
                Refusal::new(error_code::KRB_AP_ERR_MSG_TYPE, "malformed KRB-PRIV"),
                result(result_code::MALFORMED, "malformed request"),
            )
        })?;
        let priv_plain = subkey
            .decrypt(USAGE_KRB_PRIV, &krb_priv.enc_part.cipher)
            .map_err(|_| auth_err("the request does not decrypt"))?;
        let priv_part =
            EncKrbPrivPart::decode(&priv_plain).map_err(|_| auth_err("bad KRB-PRIV part"))?;
        Ok(Checked {
            part,
            client_sid,
            auth,
            session,
            subkey,
            version: req.version,
            priv_part,
        })
    }

    /// Applies the password of a checked request; the result for the client.
    async fn apply(&self, c: &Checked) -> KpasswdResult {
        let kdc = &self.kdc;
        let dir = &kdc.ctx.dir;
        let (password, target) = if c.version == KPASSWD_VERSION_CHANGE {
            (c.priv_part.user_data.clone(), None)
        } else {
            match ChangePasswdData::decode(&c.priv_part.user_data) {
                Ok(d) => (d.newpasswd.clone(), d.targname.clone()),
                Err(_) => return result(result_code::MALFORMED, "malformed request"),
            }
        };
        let Ok(password) = String::from_utf8(password) else {
            return result(result_code::MALFORMED, "the password is not UTF-8");
        };
        // AD takes passwords of up to 256 characters; LDAP refuses more than 1,024 bytes.
        if password.chars().count() > MAX_PASSWORD_CHARS {
            return result(result_code::SOFTERROR, "the password is too long");
        }
        // Who asks, and whose password it is.
        let looked_up = (|| -> Result<_, DirError> {
            let r = dir.db().read()?;
            // The PAC's SID, not the ticket's name: a name may have changed hands since.
            let Some(cid) = r
                .find_eq("objectSid", &c.client_sid.to_bytes())?
                .and_then(|v| v.first().copied())
            else {
                return Ok(None);
            };
            // A tombstone keeps its SID but is no account.
            let Some(client) = dir.kdc_account(&r, cid)? else {
                return Ok(None);
            };
            let client_policy = dir.kdc_policy(&r, &client)?;
            if dir
                .kdc_check_account(&client, &client_policy, dir.kdc_now(), true)
                .is_err()
            {
                return Ok(None);
            }
            let tid = match &target {
                Some(t) => dir.kdc_find_client(&r, &t.components)?,
                None => Some(cid),
            };
            let target_acct = match tid {
                Some(id) => dir.kdc_account(&r, id)?,
                None => None,
            };
            let groups = dir.kdc_groups(&r, &client)?;
            let policy = match &target_acct {
                Some(t) => Some(dir.kdc_policy(&r, t)?),
                None => None,
            };
            Ok(Some((client, target_acct, groups, policy)))
        })();
        let (client, target_acct, groups, policy) = match looked_up {
            Ok(Some(x)) => x,
            Ok(None) => return result(result_code::AUTHERROR, "the client is unknown"),
            Err(e) => return result(result_code::HARDERROR, &e.to_string()),
        };
        let Some(target_acct) = target_acct else {
            return result(result_code::HARDERROR, "no such account");
        };
        let own = target_acct.id == client.id;
        // One's own password only with a ticket from a logon that proved the old one
        // (RFC 3244), whichever form of the request carries it.
        if own && !c.part.flags.contains(ticket_flags::INITIAL) {
            return result(
                result_code::INITIAL_FLAG_NEEDED,
                "a password change needs a ticket from an initial logon",
            );
        }
        if !own {
            let admin = dir.domain().is_some_and(|d| {
                kauri_domain::directory::is_admin_token(groups.iter().map(|(_, s)| s), &d.sid)
            });
            if !admin {
                return result(
                    result_code::ACCESSDENIED,
                    "only an administrator may set another account's password",
                );
            }
        }
        let Ok(dn) = kauri_db::Dn::parse(&target_acct.dn) else {
            return result(result_code::HARDERROR, "stored DN unreadable");
        };
        // Hashed here, on a blocking thread, so the writer only stores the result.
        let change = kauri_domain::directory::Change::Modify {
            sd_flags: None,
            dn: dn.clone(),
            mods: vec![kauri_db::Modification {
                op: kauri_db::ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![kauri_domain::password::encode_unicode_pwd(&password)],
            }],
            permissive: false,
        };
        let to_prepare = dir.passwords_to_prepare(&change);
        let prep_dir = dir.clone();
        let _ = tokio::task::spawn_blocking(move || prep_dir.prepare_passwords(&to_prepare)).await;
        let task = Task::KerberosPassword {
            dn,
            password,
            change: own,
        };
        match kdc.ctx.writer.run_task(task).await {
            Ok(()) => result(result_code::SUCCESS, "Password changed"),
            Err(DirError::ConstraintViolation(text)) => {
                tracing::debug!(reason = %text, "kpasswd: refused by the password policy");
                let p = policy.unwrap_or_default();
                let blob = AdPolicyInfo {
                    min_length: p.min_length,
                    history: p.history_length,
                    properties: u32::from(p.complexity),
                    max_age: u64::try_from(p.max_age_secs.max(0))
                        .unwrap_or(0)
                        .saturating_mul(10_000_000),
                    min_age: u64::try_from(p.min_age_secs.max(0))
                        .unwrap_or(0)
                        .saturating_mul(10_000_000),
                };
                KpasswdResult {
                    code: result_code::SOFTERROR,
                    string: blob.encode().to_vec(),
                }
            }
            Err(e) => result(result_code::HARDERROR, &e.to_string()),
        }
    }

    /// The reply to one request.
    async fn answer(&self, request: &[u8]) -> Option<Vec<u8>> {
        let req = match KpasswdRequest::decode(request) {
            Ok(r) => r,
            Err(_) => {
                let rf = Refusal::new(error_code::KRB_ERR_GENERIC, "malformed request");
                return self.error_reply(&rf, &result(result_code::MALFORMED, "malformed request"));
            }
        };
        let checked = match self.check(&req) {
            Ok(c) => c,
            Err((rf, res)) => return self.error_reply(&rf, &res),
        };
        let outcome = self.apply(&checked).await;
        let (now, usec) = now_usec();
        let mut seq = [0u8; 4];
        let _ = getrandom::fill(&mut seq);
        let seq = u32::from_be_bytes(seq) & 0x3fff_ffff;
        let rep_part = EncApRepPart {
            ctime: checked.auth.ctime,
            cusec: checked.auth.cusec,
            subkey: None,
            seq_number: Some(seq),
        };
        let rep_cipher = checked
            .session
            .encrypt(USAGE_AP_REP, &rep_part.encode())
            .ok()?;
        let ap_rep = ApRep {
            enc_part: EncryptedData {
                etype: checked.session.etype().number(),
                kvno: None,
                cipher: rep_cipher,
            },
        };
        let address = match self.local.ip() {
            std::net::IpAddr::V4(a) => HostAddress {
                addr_type: addr_type::IPV4,
                address: a.octets().to_vec(),
            },
            std::net::IpAddr::V6(a) => HostAddress {
                addr_type: ADDR_INET6,
                address: a.octets().to_vec(),
            },
        };
        let priv_part = EncKrbPrivPart {
            user_data: outcome.encode(),
            timestamp: Some(KerberosTime(now)),
            usec: Some(usec),
            seq_number: Some(seq),
            s_address: Some(address),
            r_address: None,
        };
        let priv_cipher = checked
            .subkey
            .encrypt(USAGE_KRB_PRIV, &priv_part.encode())
            .ok()?;
        let krb_priv = KrbPriv {
            enc_part: EncryptedData {
                etype: checked.subkey.etype().number(),
                kvno: None,
                cipher: priv_cipher,
            },
        };
        KpasswdReply::new(ap_rep.encode(), krb_priv.encode())
            .encode()
            .ok()
    }

    fn error_reply(&self, rf: &Refusal, res: &KpasswdResult) -> Option<Vec<u8>> {
        let mut rf = rf.clone();
        rf.e_data = Some(res.encode());
        let sname = kauri_auth::krb::msg::PrincipalName::new(
            kauri_auth::krb::msg::constants::name_type::NT_SRV_INST,
            &["kadmin", "changepw"],
        );
        let err = self.kdc.error(&rf, Some(&sname));
        KpasswdReply::error(err).encode().ok()
    }
}

impl Service for Kpasswd {
    async fn handle(&self, request: Vec<u8>, _peer: SocketAddr, _udp: bool) -> Option<Vec<u8>> {
        // A retransmission gets the answer the first copy got (the change is made once).
        let key = digest(&request);
        let (now, _) = now_usec();
        if let Some(a) = self.lookaside.get(key, now) {
            return Some(a.as_ref().clone());
        }
        let answer = self.answer(&request).await?;
        self.lookaside
            .put(key, now, std::sync::Arc::new(answer.clone()));
        Some(answer)
    }

    fn too_big(&self, _request: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn too_long(&self) -> Option<Vec<u8>> {
        None
    }
}
