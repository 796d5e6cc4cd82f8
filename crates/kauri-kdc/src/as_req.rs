//! The AS exchange (RFC 4120 §3.1): a client proves its password with an encrypted
//! timestamp and gets a ticket-granting ticket with a PAC. AD's account rules apply —
//! disabled, locked out and expired accounts are revoked, an expired password gets
//! KDC_ERR_KEY_EXPIRED so the client can change it — and a wrong password counts toward
//! lockout exactly as a bad LDAP bind does.

use std::net::SocketAddr;

use kauri_auth::krb::crypto::Key;
use kauri_auth::krb::msg::constants::{error_code, name_type, padata};
use kauri_auth::krb::msg::{
    kdc_options, ticket_flags, EncKdcRepPart, EncTicketPart, EncryptedData, EtypeInfo2,
    EtypeInfo2Entry, KdcKind, KdcRep, KdcReq, KerbPaPacRequest, KerberosFlags, KerberosTime,
    LastReq, LastReqEntry, MethodData, PaData, PaEncTsEnc, PrincipalName, TransitedEncoding,
};
use kauri_auth::krb::pac::{Pac, TicketKind};
use kauri_domain::directory::kdc::KdcRefusal;
use kauri_ldap::writer::Task;

use crate::issue::seal_ticket;
use crate::kdc::{now_usec, Answer, Kdc, Refusal};
use crate::keys::{client_keys, session_etype, ticket_key, LongTermKey};
use crate::pac_build::{tgt_contents, PacInput};

/// userAccountControl: "account is sensitive and cannot be delegated".
const NOT_DELEGATED: u32 = 0x0010_0000;

/// Life of a ticket for the password-change service (as MIT gives kadmin/changepw).
const CHANGEPW_LIFE_SECS: i64 = 300;

/// Key usage of PA-ENC-TIMESTAMP.
const USAGE_PA_ENC_TIMESTAMP: u32 = 1;
/// Key usage of the AS-REP's encrypted part.
const USAGE_AS_REP: u32 = 3;

/// The refusal for an account rule.
pub fn account_refusal(r: KdcRefusal) -> Refusal {
    let (code, text) = match r {
        KdcRefusal::Disabled => (error_code::KDC_ERR_CLIENT_REVOKED, "account disabled"),
        KdcRefusal::LockedOut => (error_code::KDC_ERR_CLIENT_REVOKED, "account locked out"),
        KdcRefusal::AccountExpired => (error_code::KDC_ERR_CLIENT_REVOKED, "account expired"),
        KdcRefusal::PasswordExpired => (error_code::KDC_ERR_KEY_EXPIRED, "password expired"),
        KdcRefusal::MustChangePassword => {
            (error_code::KDC_ERR_KEY_EXPIRED, "password must be changed")
        }
    };
    Refusal::new(code, text).with_status(r.ntstatus())
}

/// What the AS exchange read from the directory.
struct Found {
    client: kauri_domain::directory::kdc::KdcAccount,
    service: kauri_domain::directory::kdc::KdcAccount,
    krbtgt_key: LongTermKey,
    reply_key: LongTermKey,
    groups: Vec<kauri_domain::sid::Sid>,
    times: kauri_domain::directory::kdc::PasswordTimes,
}

impl Kdc {
    /// Answers an AS-REQ (see the module documentation).
    pub(crate) async fn as_exchange(&self, req: &KdcReq, _peer: SocketAddr) -> Answer {
        // One reading of the settings for the whole exchange (a reload may replace them).
        let settings = self.settings();
        let body = &req.req_body;
        let dir = &self.ctx.dir;
        let domain = dir
            .domain()
            .ok_or_else(|| Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "no domain"))?;
        if !dir.kdc_is_our_realm(&body.realm) {
            return Err(Refusal::new(
                error_code::KDC_ERR_WRONG_REALM,
                "not this realm",
            ));
        }
        let cname = body.cname.clone().ok_or_else(|| {
            Refusal::new(error_code::KDC_ERR_C_PRINCIPAL_UNKNOWN, "no client name")
        })?;
        let sname = body.sname.clone().ok_or_else(|| {
            Refusal::new(error_code::KDC_ERR_S_PRINCIPAL_UNKNOWN, "no server name")
        })?;
        let (now, _) = now_usec();
        let pa_ts = req
            .padata
            .as_deref()
            .and_then(|p| PaData::find(p, padata::PA_ENC_TIMESTAMP));
        let pac_request = req
            .padata
            .as_deref()
            .and_then(|p| PaData::find(p, padata::PA_PAC_REQUEST))
            .and_then(|p| KerbPaPacRequest::decode(&p.value).ok())
            .map(|p| p.include_pac);
        // Only the password-change service may be reached with an expired password.
        let changepw = matches!(sname.components.as_slice(),
            [a, b] if a.eq_ignore_ascii_case("kadmin") && b.eq_ignore_ascii_case("changepw"));
        // Everything read comes from one snapshot, released before any write is awaited.
        let found: Result<Found, (Refusal, Option<String>)> = (|| {
            let internal = |e: kauri_domain::directory::DirError| {
                (
                    Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string()),
                    None,
                )
            };
            let r = dir.db().read().map_err(|e| internal(e.into()))?;
            let unknown_client = || {
                let mut rf =
                    Refusal::new(error_code::KDC_ERR_C_PRINCIPAL_UNKNOWN, "client not found")
                        .with_status(0xC000_0064);
                rf.cname = Some(cname.clone());
                (rf, None)
            };
            let cid = dir
                .kdc_find_client(&r, &cname.components)
                .map_err(internal)?
                .ok_or_else(unknown_client)?;
            let client = dir
                .kdc_account(&r, cid)
                .map_err(internal)?
                .ok_or_else(unknown_client)?;
            let unknown_service = || {
                (
                    Refusal::new(error_code::KDC_ERR_S_PRINCIPAL_UNKNOWN, "server not found"),
                    None,
                )
            };
            let sid = dir
                .kdc_find_service(&r, &sname.components)
                .map_err(internal)?
                .ok_or_else(unknown_service)?;
            let service = dir
                .kdc_account(&r, sid)
                .map_err(internal)?
                .ok_or_else(unknown_service)?;
            let krbtgt = dir
                .kdc_krbtgt(&r, &domain)
                .map_err(internal)?
                .and_then(|id| dir.kdc_account(&r, id).ok().flatten())
                .ok_or_else(|| {
                    (
                        Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "no krbtgt"),
                        None,
                    )
                })?;
            let krbtgt_key = ticket_key(&krbtgt).ok_or_else(|| {
                (
                    Refusal::new(error_code::KDC_ERR_SVC_UNAVAILABLE, "krbtgt has no keys"),
                    None,
                )
            })?;
            let policy = dir.kdc_policy(&r, &client).map_err(internal)?;
            let now_ad = dir.kdc_now();
            dir.kdc_check_account(&client, &policy, now_ad, true)
                .map_err(|e| (account_refusal(e), None))?;
            let keys = client_keys(&client, &body.etype);
            if keys.is_empty() {
                return Err((
                    Refusal::new(
                        error_code::KDC_ERR_ETYPE_NOSUPP,
                        "no key of a requested type",
                    ),
                    None,
                ));
            }
            let Some(pa) = pa_ts else {
                let info = EtypeInfo2(
                    keys.iter()
                        .map(|k| EtypeInfo2Entry {
                            etype: k.key.etype().number(),
                            salt: (!k.salt.is_empty()).then(|| k.salt.clone()),
                            s2kparams: None,
                        })
                        .collect(),
                );
                let methods = MethodData(vec![
                    PaData::new(padata::PA_ETYPE_INFO2, info.encode()),
                    PaData::new(padata::PA_ENC_TIMESTAMP, Vec::new()),
                ]);
                let mut rf = Refusal::new(
                    error_code::KDC_ERR_PREAUTH_REQUIRED,
                    "pre-authentication required",
                );
                rf.e_data = Some(methods.encode());
                rf.cname = Some(cname.clone());
                return Err((rf, None));
            };
            let dn = Some(client.dn.clone());
            let failed = || {
                let mut rf = Refusal::new(
                    error_code::KDC_ERR_PREAUTH_FAILED,
                    "pre-authentication failed",
                )
                .with_status(0xC000_006A);
                rf.cname = Some(cname.clone());
                (rf, dn.clone())
            };
            let ed = EncryptedData::decode(&pa.value).map_err(|_| failed())?;
            let reply_key = keys
                .iter()
                .find(|k| k.key.etype().number() == ed.etype)
                .cloned()
                .ok_or_else(failed)?;
            let plain = reply_key
                .key
                .decrypt(USAGE_PA_ENC_TIMESTAMP, &ed.cipher)
                .map_err(|_| failed())?;
            let ts = PaEncTsEnc::decode(&plain).map_err(|_| failed())?;
            if (ts.patimestamp.0 - now).abs() > settings.skew_secs {
                return Err((
                    Refusal::new(error_code::KRB_AP_ERR_SKEW, "clock skew too great"),
                    None,
                ));
            }
            if !changepw {
                dir.kdc_check_account(&client, &policy, now_ad, false)
                    .map_err(|e| (account_refusal(e), None))?;
            }
            let groups = dir
                .kdc_groups(&r, &client)
                .map_err(internal)?
                .into_iter()
                .map(|(_, s)| s)
                .collect();
            let times = dir.kdc_password_times(&client, &policy);
            Ok(Found {
                client,
                service,
                krbtgt_key,
                reply_key,
                groups,
                times,
            })
        })();
        let f = match found {
            Ok(f) => f,
            Err((refusal, bad_password)) => {
                if let Some(dn) = bad_password.and_then(|d| kauri_db::Dn::parse(&d).ok()) {
                    if let Err(e) = self.ctx.writer.run_task(Task::BadPassword(dn)).await {
                        tracing::warn!(error = %e, "kerberos: counting a bad password failed");
                    }
                }
                return Err(refusal);
            }
        };
        self.record_logon(&f.client).await;

        let realm = self.realm();
        let opts = body.kdc_options;
        let to_krbtgt = f.service.is_krbtgt && !changepw;
        let service_key = ticket_key(&f.service).ok_or_else(|| {
            Refusal::new(error_code::KDC_ERR_ETYPE_NOSUPP, "the service has no keys")
        })?;
        let session_type = session_etype(&body.etype, &f.service).ok_or_else(|| {
            Refusal::new(
                error_code::KDC_ERR_ETYPE_NOSUPP,
                "no session key type in common",
            )
        })?;
        let session = Key::random(session_type)
            .map_err(|e| Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string()))?;

        let mut flags = KerberosFlags(ticket_flags::INITIAL | ticket_flags::PRE_AUTHENT);
        // "Account is sensitive and cannot be delegated": its tickets never travel on.
        let delegable = f.client.uac & NOT_DELEGATED == 0 && !changepw;
        if opts.contains(kdc_options::FORWARDABLE) && delegable {
            flags.insert(ticket_flags::FORWARDABLE);
        }
        if opts.contains(kdc_options::PROXIABLE) && delegable {
            flags.insert(ticket_flags::PROXIABLE);
        }
        let life = if to_krbtgt {
            settings.max_ticket_secs
        } else if changepw {
            CHANGEPW_LIFE_SECS.min(settings.max_service_secs)
        } else {
            settings.max_service_secs
        };
        let wanted_end = if body.till.0 <= 0 {
            i64::MAX
        } else {
            body.till.0
        };
        let endtime = wanted_end.min(now + life);
        let mut renew_till = None;
        let wants_renew = opts.contains(kdc_options::RENEWABLE)
            || (opts.contains(kdc_options::RENEWABLE_OK) && wanted_end > endtime);
        if wants_renew && settings.max_renew_secs > 0 && !changepw {
            let wanted = body
                .rtime
                .map(|t| if t.0 <= 0 { i64::MAX } else { t.0 })
                .unwrap_or(wanted_end);
            let till = wanted.min(now + settings.max_renew_secs);
            if till > endtime || opts.contains(kdc_options::RENEWABLE) {
                flags.insert(ticket_flags::RENEWABLE);
                renew_till = Some(KerberosTime(till.max(endtime)));
            }
        }
        let canonical = opts.contains(kdc_options::CANONICALIZE);
        let (crealm, reply_cname) = if canonical {
            (
                realm.clone(),
                PrincipalName::new(name_type::NT_PRINCIPAL, std::slice::from_ref(&f.client.sam)),
            )
        } else {
            (body.realm.clone(), cname.clone())
        };
        let reply_sname = if to_krbtgt {
            self.krbtgt_name()
        } else {
            sname.clone()
        };
        let pac_contents = tgt_contents(&PacInput {
            acct: &f.client,
            domain: &domain,
            groups: &f.groups,
            times: f.times,
            authtime: now,
            client_name: reply_cname.components.join("/"),
            logon_server: self.logon_server.clone(),
            requested: pac_request,
        });
        let pac = Pac::from_contents(&pac_contents)
            .map_err(|e| Refusal::new(error_code::KRB_ERR_GENERIC, format!("PAC: {e}")))?;
        // A ticket for anything but krbtgt has a service's PAC: without the requestor and
        // attributes only TGTs carry, so it can never pass for one.
        let pac = if to_krbtgt {
            pac
        } else {
            pac.reissue(TicketKind::Service)
        };
        let part = EncTicketPart {
            flags,
            key: kauri_auth::krb::encryption_key(&session),
            crealm: crealm.clone(),
            cname: reply_cname.clone(),
            transited: TransitedEncoding {
                tr_type: 1,
                contents: Vec::new(),
            },
            authtime: KerberosTime(now),
            starttime: Some(KerberosTime(now)),
            endtime: KerberosTime(endtime),
            renew_till,
            caddr: body.addresses.clone(),
            authorization_data: None,
        };
        let ticket = seal_ticket(
            part,
            Some(pac),
            &service_key,
            &f.krbtgt_key.key,
            !f.service.is_krbtgt,
            &realm,
            &reply_sname,
        )?;
        let key_expiration =
            (f.times.must_change > 0 && f.times.must_change != i64::MAX).then(|| {
                KerberosTime(kauri_domain::password::unix_from_ad_time(
                    f.times.must_change,
                ))
            });
        let enc = EncKdcRepPart {
            kind: KdcKind::As,
            key: kauri_auth::krb::encryption_key(&session),
            last_req: LastReq(vec![LastReqEntry {
                lr_type: 0,
                lr_value: KerberosTime(now),
            }]),
            nonce: body.nonce,
            key_expiration,
            flags,
            authtime: KerberosTime(now),
            starttime: Some(KerberosTime(now)),
            endtime: KerberosTime(endtime),
            renew_till,
            srealm: realm.clone(),
            sname: reply_sname,
            caddr: body.addresses.clone(),
            encrypted_pa_data: None,
        };
        let cipher = f
            .reply_key
            .key
            .encrypt(USAGE_AS_REP, &enc.encode())
            .map_err(|e| Refusal::new(error_code::KRB_ERR_GENERIC, e.to_string()))?;
        let info = EtypeInfo2(vec![EtypeInfo2Entry {
            etype: f.reply_key.key.etype().number(),
            salt: (!f.reply_key.salt.is_empty()).then(|| f.reply_key.salt.clone()),
            s2kparams: None,
        }]);
        Ok(KdcRep {
            kind: KdcKind::As,
            padata: Some(vec![PaData::new(padata::PA_ETYPE_INFO2, info.encode())]),
            crealm,
            cname: reply_cname,
            ticket,
            enc_part: EncryptedData {
                etype: f.reply_key.key.etype().number(),
                kvno: Some(f.reply_key.kvno),
                cipher,
            },
        }
        .encode())
    }

    /// Writes a successful logon's bookkeeping: the last logon time behind the answer,
    /// a cleared bad-password count before it.
    pub(crate) async fn record_logon(&self, acct: &kauri_domain::directory::kdc::KdcAccount) {
        let mods = self.ctx.dir.kdc_logon_mods(acct);
        if mods.is_empty() {
            return;
        }
        let Ok(dn) = kauri_db::Dn::parse(&acct.dn) else {
            return;
        };
        let lazy = mods
            .iter()
            .all(|m| m.attr.eq_ignore_ascii_case("lastLogonTimestamp"));
        let req = kauri_domain::directory::Request::system_modify(dn, mods, true);
        let done = if lazy {
            self.ctx.writer.enqueue_lazy(req)
        } else {
            self.ctx.writer.submit(req).await
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "kerberos: recording a logon failed");
        }
    }
}
