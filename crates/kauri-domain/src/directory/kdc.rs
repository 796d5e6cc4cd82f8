//! What a KDC asks of the directory: which account a client or service principal name
//! designates (sAMAccountName, userPrincipalName, servicePrincipalName with AD's `host/`
//! aliases, `krbtgt`), the account's keys and the facts a ticket's PAC carries, whether
//! AD's account rules let it log on, and its token (the same transitive walk as binds
//! and tokenGroups). One read snapshot answers each request; nothing here writes.

use kauri_db::DbRead;
use kauri_kv::Backend;

use super::bind_facts::token_from;
use super::error::DirResult;
use super::info::DomainInfo;
use super::principal::{parse_u32_bits, uac};
use super::token::{policy_of, resultant_pso_among};
use super::view::View;
use super::Directory;
use crate::password::{
    ad_time_from_unix, is_expired, lockout_active, PasswordPolicy, StoredSecrets,
};
use crate::sid::{rid, Sid};

/// AD's default `sPNMappings`: the service classes a `host/` SPN stands for.
const DEFAULT_HOST_ALIASES: &str = "alerter,appmgmt,cisvc,clipsrv,browser,dhcp,dnscache,\
replicator,eventlog,eventsystem,policyagent,oakley,dmserver,dns,mcsvc,fax,msiserver,ias,\
messenger,netlogon,netman,netdde,netddedsm,nmagent,plugplay,protectedstorage,rasman,rpclocator,\
rpc,rpcss,remoteaccess,rsvp,samss,scardsvr,scesrv,seclogon,scm,dcom,cifs,spooler,snmp,schedule,\
tapisrv,trksvr,trkwks,ups,time,wins,www,http,w3svc,iisadmin,msdtc";

/// An account as the KDC sees it, read from one snapshot.
#[derive(Debug, Clone)]
pub struct KdcAccount {
    /// Record id.
    pub id: u64,
    /// The entry's DN.
    pub dn: String,
    /// sAMAccountName (the canonical client name).
    pub sam: String,
    /// userPrincipalName, when set.
    pub upn: Option<String>,
    /// objectSid.
    pub sid: Option<Sid>,
    /// userAccountControl.
    pub uac: u32,
    /// msDS-KeyVersionNumber (the kvno of the current keys).
    pub kvno: u32,
    /// The account's password secrets (its keys); `None` without a password.
    pub secrets: Option<StoredSecrets>,
    /// msDS-SupportedEncryptionTypes, when set.
    pub supported_enctypes: Option<u32>,
    /// displayName (the PAC's full name).
    pub display_name: String,
    /// homeDirectory.
    pub home_directory: String,
    /// homeDrive.
    pub home_drive: String,
    /// scriptPath.
    pub script_path: String,
    /// profilePath.
    pub profile_path: String,
    /// pwdLastSet (AD time; 0 = must change).
    pub pwd_last_set: i64,
    /// lastLogon (AD time).
    pub last_logon: i64,
    /// logonCount.
    pub logon_count: u32,
    /// badPwdCount.
    pub bad_pwd_count: u32,
    /// primaryGroupID.
    pub primary_group_id: u32,
    /// accountExpires (AD time; 0 or i64::MAX = never).
    pub account_expires: i64,
    /// lockoutTime (AD time; 0 = not locked).
    pub lockout_time: i64,
    /// lastLogonTimestamp (AD time).
    pub last_logon_timestamp: i64,
    /// Whether this is the domain's krbtgt account (RID 502).
    pub is_krbtgt: bool,
    /// Whether this is a computer (workstation or DC) account.
    pub is_computer: bool,
}

/// Why AD's account rules refuse a Kerberos logon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KdcRefusal {
    /// The account is disabled (KDC_ERR_CLIENT_REVOKED, STATUS_ACCOUNT_DISABLED).
    Disabled,
    /// The account is locked out (KDC_ERR_CLIENT_REVOKED, STATUS_ACCOUNT_LOCKED_OUT).
    LockedOut,
    /// The account has expired (KDC_ERR_CLIENT_REVOKED, STATUS_ACCOUNT_EXPIRED).
    AccountExpired,
    /// The password has expired (KDC_ERR_KEY_EXPIRED, STATUS_PASSWORD_EXPIRED).
    PasswordExpired,
    /// The password must be changed at next logon (KDC_ERR_KEY_EXPIRED,
    /// STATUS_PASSWORD_MUST_CHANGE).
    MustChangePassword,
}

impl KdcRefusal {
    /// The NTSTATUS AD reports with the refusal.
    pub fn ntstatus(self) -> u32 {
        match self {
            KdcRefusal::Disabled => 0xC000_0072,
            KdcRefusal::LockedOut => 0xC000_0234,
            KdcRefusal::AccountExpired => 0xC000_0193,
            KdcRefusal::PasswordExpired => 0xC000_0071,
            KdcRefusal::MustChangePassword => 0xC000_0224,
        }
    }

    /// Whether the refusal is about the password (the client may change it and retry).
    pub fn is_password(self) -> bool {
        matches!(
            self,
            KdcRefusal::PasswordExpired | KdcRefusal::MustChangePassword
        )
    }
}

/// The password times a PAC reports: when the password may next change and when it must.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordTimes {
    /// AD time from which a change is allowed.
    pub can_change: i64,
    /// AD time at which the password expires (i64::MAX for never).
    pub must_change: i64,
}

impl<B: Backend> Directory<B> {
    /// The realm this directory's KDC serves: the domain's DNS name in capitals.
    pub fn kdc_realm(&self) -> Option<String> {
        self.domain().map(|d| d.dns_name.to_ascii_uppercase())
    }

    /// Whether `realm` names this domain (its DNS name or NetBIOS name, in any case).
    pub fn kdc_is_our_realm(&self, realm: &str) -> bool {
        self.domain().is_some_and(|d| {
            realm.eq_ignore_ascii_case(&d.dns_name) || realm.eq_ignore_ascii_case(&d.netbios)
        })
    }

    /// The account a client principal name designates: one component is a
    /// sAMAccountName (or, with a `@`, a userPrincipalName or the implicit
    /// `name@<dns domain>`; a name not found is also tried with a `$`, as AD finds
    /// computers); several components are a servicePrincipalName.
    pub fn kdc_find_client(
        &self,
        r: &DbRead<'_, B>,
        components: &[String],
    ) -> DirResult<Option<u64>> {
        match components {
            [one] if one.contains('@') => self.resolve_bind_name(r, one),
            [one] => {
                if let Some(id) = find_live(r, "sAMAccountName", one)? {
                    return Ok(Some(id));
                }
                if !one.ends_with('$') {
                    return find_live(r, "sAMAccountName", &format!("{one}$"));
                }
                Ok(None)
            }
            [] => Ok(None),
            _ => self.kdc_find_service(r, components),
        }
    }

    /// The account a service principal name designates: `krbtgt/<realm>` and
    /// `kadmin/changepw` are the krbtgt account; other names are servicePrincipalName
    /// values, a service class AD's `sPNMappings` maps to `host` also found under
    /// `host/…`; a single component is a sAMAccountName.
    pub fn kdc_find_service(
        &self,
        r: &DbRead<'_, B>,
        components: &[String],
    ) -> DirResult<Option<u64>> {
        let Some(domain) = self.domain() else {
            return Ok(None);
        };
        match components {
            [] => Ok(None),
            [one] => self.kdc_find_client(r, std::slice::from_ref(one)),
            [service, instance] if service.eq_ignore_ascii_case("krbtgt") => {
                if self.kdc_is_our_realm(instance) {
                    self.kdc_krbtgt(r, &domain)
                } else {
                    Ok(None)
                }
            }
            _ => {
                let spn = components.join("/");
                if let Some(id) = find_live(r, "servicePrincipalName", &spn)? {
                    return Ok(Some(id));
                }
                let class = &components[0];
                if self.is_host_alias(r, &domain, class)? {
                    let host = std::iter::once("host")
                        .chain(components[1..].iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join("/");
                    return find_live(r, "servicePrincipalName", &host);
                }
                Ok(None)
            }
        }
    }

    /// The domain's krbtgt account (RID 502).
    pub fn kdc_krbtgt(&self, r: &DbRead<'_, B>, domain: &DomainInfo) -> DirResult<Option<u64>> {
        let sid = domain.sid.with_rid(rid::KRBTGT);
        Ok(r.find_eq("objectSid", &sid.to_bytes())?
            .and_then(|ids| ids.first().copied()))
    }

    /// Whether a service class is one of the `host/` aliases of `sPNMappings`.
    fn is_host_alias(
        &self,
        r: &DbRead<'_, B>,
        domain: &DomainInfo,
        class: &str,
    ) -> DirResult<bool> {
        let ds = ["CN=Directory Service", "CN=Windows NT", "CN=Services"]
            .iter()
            .try_fold(domain.config_dn.clone(), |dn, rdn| {
                kauri_db::Rdn::parse(rdn).map(|r| dn.child(r))
            })
            .ok();
        let mappings = match ds.map(|dn| r.id_of(&dn)).transpose()?.flatten() {
            Some(id) => r.values(id, "sPNMappings")?,
            None => Vec::new(),
        };
        let defaults = [DEFAULT_HOST_ALIASES.as_bytes().to_vec()];
        let lists: Vec<Vec<u8>> = if mappings.is_empty() {
            let mut v = vec![b"host=".to_vec()];
            v[0].extend_from_slice(&defaults[0]);
            v
        } else {
            mappings
        };
        Ok(lists.iter().any(|m| {
            let text = String::from_utf8_lossy(m);
            let Some((target, aliases)) = text.split_once('=') else {
                return false;
            };
            target.trim().eq_ignore_ascii_case("host")
                && aliases
                    .split(',')
                    .any(|a| a.trim().eq_ignore_ascii_case(class))
        }))
    }

    /// The account `id` with its keys and PAC facts; `None` if it is no account.
    pub fn kdc_account(&self, r: &DbRead<'_, B>, id: u64) -> DirResult<Option<KdcAccount>> {
        let Some(domain) = self.domain() else {
            return Ok(None);
        };
        const ATTRS: [&str; 19] = [
            "sAMAccountName",
            "userPrincipalName",
            "userAccountControl",
            "msDS-KeyVersionNumber",
            "msDS-SupportedEncryptionTypes",
            "displayName",
            "homeDirectory",
            "homeDrive",
            "scriptPath",
            "profilePath",
            "pwdLastSet",
            "lastLogon",
            "logonCount",
            "badPwdCount",
            "primaryGroupID",
            "accountExpires",
            "lockoutTime",
            "isDeleted",
            "lastLogonTimestamp",
        ];
        let t = r.texts(id, &ATTRS)?;
        let text = |i: usize| t.get(i).cloned().flatten();
        let int = |i: usize| text(i).and_then(|v| v.trim().parse::<i64>().ok());
        let Some(sam) = text(0) else {
            return Ok(None);
        };
        if text(17).is_some_and(|v| v.eq_ignore_ascii_case("TRUE")) {
            return Ok(None);
        }
        let uac_bits = text(2)
            .and_then(|v| parse_u32_bits(v.as_bytes()))
            .unwrap_or(0);
        let sid = r
            .values(id, "objectSid")?
            .first()
            .and_then(|b| Sid::from_bytes(b).ok());
        let secrets = self.stored_secrets(r, id)?;
        let small = |i: usize| int(i).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        Ok(Some(KdcAccount {
            id,
            dn: r.dn_of(id)?,
            is_krbtgt: sid.as_ref() == Some(&domain.sid.with_rid(rid::KRBTGT)),
            is_computer: super::kerberos::is_computer_uac(uac_bits),
            sam,
            upn: text(1),
            sid,
            uac: uac_bits,
            kvno: small(3),
            secrets,
            supported_enctypes: text(4).and_then(|v| parse_u32_bits(v.as_bytes())),
            display_name: text(5).unwrap_or_default(),
            home_directory: text(6).unwrap_or_default(),
            home_drive: text(7).unwrap_or_default(),
            script_path: text(8).unwrap_or_default(),
            profile_path: text(9).unwrap_or_default(),
            pwd_last_set: int(10).unwrap_or(0),
            last_logon: int(11).unwrap_or(0),
            logon_count: small(12),
            bad_pwd_count: small(13),
            primary_group_id: small(14),
            account_expires: int(15).unwrap_or(0),
            lockout_time: int(16).unwrap_or(0),
            last_logon_timestamp: int(18).unwrap_or(0),
        }))
    }

    /// The password policy that applies to an account (its resultant settings object's,
    /// or the domain's).
    pub fn kdc_policy(&self, r: &DbRead<'_, B>, acct: &KdcAccount) -> DirResult<PasswordPolicy> {
        let Some(domain) = self.domain() else {
            return Ok(PasswordPolicy::default());
        };
        let facts = self.bind_facts(r, &domain)?;
        if !facts.psos {
            return Ok(facts.policy.clone());
        }
        let groups = self.kdc_groups(r, acct)?;
        let pso = resultant_pso_among(r, &domain, acct.id, || Ok(groups.clone()))?;
        policy_of(r, self, pso)
    }

    /// AD's account rules for a Kerberos logon at AD time `now`: lockout, disabled,
    /// expiry of the account, then of its password (unless `password_ok`, for a request
    /// to the password-change service, which an expired password may still reach).
    pub fn kdc_check_account(
        &self,
        acct: &KdcAccount,
        policy: &PasswordPolicy,
        now: i64,
        password_ok: bool,
    ) -> Result<(), KdcRefusal> {
        if acct.uac & uac::ACCOUNTDISABLE != 0 {
            return Err(KdcRefusal::Disabled);
        }
        if acct.lockout_time > 0
            && lockout_active(acct.lockout_time, now, policy.lockout_duration_secs)
        {
            return Err(KdcRefusal::LockedOut);
        }
        let expires = acct.account_expires;
        if expires > 0 && expires != i64::MAX && expires <= now {
            return Err(KdcRefusal::AccountExpired);
        }
        if password_ok || acct.is_krbtgt {
            return Ok(());
        }
        if acct.pwd_last_set == 0 {
            return Err(KdcRefusal::MustChangePassword);
        }
        if acct.uac & uac::DONT_EXPIRE_PASSWORD == 0
            && is_expired(acct.pwd_last_set, now, policy.max_age_secs)
        {
            return Err(KdcRefusal::PasswordExpired);
        }
        Ok(())
    }

    /// When the account's password may next change and when it must, for the PAC.
    pub fn kdc_password_times(&self, acct: &KdcAccount, policy: &PasswordPolicy) -> PasswordTimes {
        let tick = crate::password::AD_TICKS_PER_SECOND;
        let can_change = acct
            .pwd_last_set
            .saturating_add(policy.min_age_secs.saturating_mul(tick));
        let never = acct.uac & uac::DONT_EXPIRE_PASSWORD != 0 || policy.max_age_secs <= 0;
        let must_change = if acct.pwd_last_set == 0 {
            0
        } else if never {
            i64::MAX
        } else {
            acct.pwd_last_set
                .saturating_add(policy.max_age_secs.saturating_mul(tick))
        };
        PasswordTimes {
            can_change,
            must_change,
        }
    }

    /// Every group SID of the account, transitively, its primary group included (what
    /// tokenGroups holds), computed from the snapshot's cached group facts.
    pub fn kdc_groups(&self, r: &DbRead<'_, B>, acct: &KdcAccount) -> DirResult<Vec<(u64, Sid)>> {
        let Some(domain) = self.domain() else {
            return Ok(Vec::new());
        };
        let facts = self.bind_facts(r, &domain)?;
        token_from(
            r,
            &domain,
            &facts,
            acct.id,
            r.links(acct.id, "memberOf")?,
            Some(i64::from(acct.primary_group_id)),
        )
    }

    /// The bookkeeping of a successful logon, as a bind does it: the bad-password count
    /// and lockout cleared when set, the last logon time when it is older than AD's
    /// update interval. Empty when there is nothing to write.
    pub fn kdc_logon_mods(&self, acct: &KdcAccount) -> Vec<kauri_db::Modification> {
        use kauri_db::{Modification, ModifyOp};
        let now = self.kdc_now();
        let mut mods = Vec::new();
        if acct.bad_pwd_count != 0 {
            mods.push(Modification::new(ModifyOp::Replace, "badPwdCount", &["0"]));
        }
        if acct.lockout_time != 0 {
            mods.push(Modification::new(ModifyOp::Replace, "lockoutTime", &["0"]));
        }
        let interval = super::bind::LOGON_TIMESTAMP_INTERVAL_SECS
            .saturating_mul(crate::password::AD_TICKS_PER_SECOND);
        if now.saturating_sub(acct.last_logon_timestamp) > interval {
            mods.push(Modification::new(
                ModifyOp::Replace,
                "lastLogonTimestamp",
                &[&now.to_string()],
            ));
        }
        mods
    }

    /// The current AD time (for [`Directory::kdc_check_account`]).
    pub fn kdc_now(&self) -> i64 {
        ad_time_from_unix(super::now_secs() as i64)
    }
}

/// The first live account holding `value` in `attr`.
fn find_live<B: Backend>(r: &DbRead<'_, B>, attr: &str, value: &str) -> DirResult<Option<u64>> {
    Ok(super::bind::live(r, r.find(attr, value.as_bytes())?))
}
