//! Passwords on the write path: `unicodePwd` (quoted UTF-16LE) and `userPassword`
//! (plain text) become stored secrets — the NT hash and SHA-512/SHA-256 crypt, sealed
//! with the directory's key and bound to the object's GUID — kept in
//! `supplementalCredentials`, never in the attribute the client wrote. An administrator
//! replaces a password; an account changes its own by deleting the old value and adding
//! the new one. Both only over an encrypted connection, both under the password policy
//! that applies to the account.

use kauri_db::{DbWrite, Modification, ModifyOp};
use kauri_kv::Backend;

use super::add::Attrs;
use super::error::{DirError, DirResult};
use super::prepared::compute;
use super::token::resultant_policy;
use super::view::View;
use super::{now_secs, Change, Directory, Request};
use crate::password::{ad_time_from_unix, decode_unicode_pwd, PasswordPolicy, StoredSecrets};

/// Where the sealed secrets are stored.
pub const SECRETS_ATTR: &str = "supplementalCredentials";

/// The password a value of `attr` carries.
fn password_of(attr: &str, value: &[u8]) -> DirResult<String> {
    // AD takes passwords of up to 256 characters; longer ones would only make the hashing
    // (thousands of rounds, on the writer) a way to stall every other write.
    if value.len() > 1024 {
        return Err(DirError::ConstraintViolation(
            "0000052D: Constraint violation - the password is too long".into(),
        ));
    }
    if attr.eq_ignore_ascii_case("unicodePwd") {
        // Anything but a quoted UTF-16 password (a hash, say) is refused as AD refuses it.
        decode_unicode_pwd(value).map_err(|e| {
            DirError::UnwillingToPerform(format!(
                "0000001F: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM): unicodePwd: {e}"
            ))
        })
    } else {
        String::from_utf8(value.to_vec())
            .map_err(|_| DirError::InvalidAttributeSyntax("userPassword must be UTF-8 text".into()))
    }
}

impl<B: Backend> Directory<B> {
    /// The new passwords a change carries (an add's, or a modify's added and replaced
    /// values), to hash before the change reaches the writer: every password set derives
    /// Kerberos keys (and, when the domain keeps them, crypt forms).
    pub fn passwords_to_prepare(&self, change: &Change) -> Vec<PasswordToPrepare> {
        let mut out = Vec::new();
        let mut take = |attr: &str, values: &[Vec<u8>], account: &AccountRef| {
            if is_password_attr(attr) {
                out.extend(values.iter().filter_map(|v| {
                    Some(PasswordToPrepare {
                        password: password_of(attr, v).ok()?,
                        account: account.clone(),
                    })
                }));
            }
        };
        match change {
            Change::Add(entry) => {
                let first = |name: &str| {
                    entry
                        .attrs
                        .iter()
                        .find(|(a, _)| a.eq_ignore_ascii_case(name))
                        .and_then(|(_, v)| v.first())
                };
                let account = AccountRef::New {
                    sam: first("sAMAccountName").map(|v| String::from_utf8_lossy(v).into_owned()),
                    uac: first("userAccountControl")
                        .and_then(|v| super::principal::parse_u32_bits(v))
                        .unwrap_or(0),
                };
                for (attr, values) in &entry.attrs {
                    take(attr, values, &account);
                }
            }
            Change::Modify { dn, mods, .. } => {
                let account = AccountRef::Existing(dn.clone());
                for m in mods {
                    if m.op != ModifyOp::Delete {
                        take(&m.attr, &m.values, &account);
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// Hashes `passwords` (from [`Directory::passwords_to_prepare`]) on this thread, for
    /// the writer to take when it stores them. Meant for a blocking thread of the
    /// connection that sent the change, before it is queued.
    pub fn prepare_passwords(&self, passwords: &[PasswordToPrepare]) {
        let schemes = self.crypt_schemes();
        for p in passwords {
            let salt = match &p.account {
                AccountRef::New { sam, uac } => self.salt_for_new(sam.as_deref(), *uac),
                AccountRef::Existing(dn) => self.db().read().ok().and_then(|r| {
                    let id = r.id_of(dn).ok()??;
                    self.salt_of(&r, id).ok()?
                }),
            };
            // A password the hashing refuses is refused again, with its error, by the
            // writer; a salt that changes before the writer stores the password only
            // leaves this preparation unused.
            let _ = self.prepared.prepare(&p.password, schemes, salt.as_deref());
        }
    }
}

/// A password on its way to the writer, with the account it is for.
#[derive(Debug, Clone)]
pub struct PasswordToPrepare {
    password: String,
    account: AccountRef,
}

/// Which account a password is for: one being added, or an existing entry.
#[derive(Debug, Clone)]
enum AccountRef {
    New { sam: Option<String>, uac: u32 },
    Existing(kauri_db::Dn),
}

/// Whether an attribute (by its schema name) carries a new or old password.
pub(crate) fn is_password_attr(name: &str) -> bool {
    name.eq_ignore_ascii_case("unicodePwd") || name.eq_ignore_ascii_case("userPassword")
}

impl<B: Backend> Directory<B> {
    fn require_encryption(&self, req: &Request) -> DirResult<()> {
        if req.encrypted || req.caller.is_system() {
            Ok(())
        } else {
            Err(DirError::UnwillingToPerform(
                "0000001F: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM): passwords \
                 can only be set over an encrypted connection"
                    .into(),
            ))
        }
    }

    fn seal(&self, secrets: &StoredSecrets, guid: &[u8]) -> DirResult<Vec<u8>> {
        let key = self.secret_key().ok_or_else(|| {
            DirError::UnwillingToPerform("this directory has no key to protect passwords".into())
        })?;
        key.seal(&secrets.encode(), guid)
            .map_err(|e| DirError::UnwillingToPerform(format!("sealing the password: {e}")))
    }

    /// The stored secrets of an account, unsealed (`None` when it has no password).
    pub fn stored_secrets<V: View>(&self, v: &V, id: u64) -> DirResult<Option<StoredSecrets>> {
        let Some(sealed) = v.values(id, SECRETS_ATTR)?.into_iter().next() else {
            return Ok(None);
        };
        let guid = v
            .values(id, "objectGUID")?
            .into_iter()
            .next()
            .unwrap_or_default();
        self.open_secrets(&sealed, &guid, id)
    }

    /// Unseals the stored secrets of record `id` (sealed with its objectGUID); `None`
    /// without a key.
    pub(crate) fn open_secrets(
        &self,
        sealed: &[u8],
        guid: &[u8],
        id: u64,
    ) -> DirResult<Option<StoredSecrets>> {
        let Some(key) = self.secret_key() else {
            return Ok(None);
        };
        let plain = key
            .open(sealed, guid)
            .map_err(|e| DirError::UnwillingToPerform(format!("stored secrets of {id}: {e}")))?;
        StoredSecrets::decode(&plain)
            .map(Some)
            .map_err(|e| DirError::UnwillingToPerform(format!("stored secrets of {id}: {e}")))
    }

    /// On add: a password given as `unicodePwd` or `userPassword` becomes sealed secrets
    /// (checked against the domain's policy; a new account has no history).
    pub(crate) fn take_new_password<V: View>(
        &self,
        w: &V,
        req: &Request,
        attrs: &mut Attrs,
        guid: &[u8; 16],
    ) -> DirResult<()> {
        let mut given = None;
        for attr in ["unicodePwd", "userPassword"] {
            if let Some(v) = attrs.get(attr).map(<[Vec<u8>]>::to_vec) {
                attrs.set(attr, Vec::new());
                if let Some(first) = v.first() {
                    given = Some(password_of(attr, first)?);
                }
            }
        }
        let Some(password) = given else {
            // An account created to require a smart card gets keys nobody knows.
            let uac = attrs
                .get("userAccountControl")
                .and_then(|v| v.first())
                .and_then(|v| super::principal::parse_u32_bits(v))
                .unwrap_or(0);
            if uac & 0x4_0000 != 0 {
                let sam = attrs
                    .get("sAMAccountName")
                    .and_then(|v| v.first())
                    .map(|v| String::from_utf8_lossy(v).into_owned());
                let salt = self.salt_for_new(sam.as_deref(), uac);
                let secrets = compute(&random_text()?, self.crypt_schemes(), salt.as_deref())
                    .map_err(|e| DirError::UnwillingToPerform(e.to_string()))?;
                attrs.set(SECRETS_ATTR, vec![self.seal(&secrets, guid)?]);
            }
            return Ok(());
        };
        self.require_encryption(req)?;
        let policy = self.domain_policy(w)?;
        let sam = attrs
            .get("sAMAccountName")
            .and_then(|v| v.first())
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        let display = attrs
            .get("displayName")
            .and_then(|v| v.first())
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        if !req.caller.is_system() {
            policy
                .check_new_password(&password, &sam, &display, None)
                .map_err(|v| DirError::ConstraintViolation(v.diagnostic()))?;
        }
        let uac_bits = attrs
            .get("userAccountControl")
            .and_then(|v| v.first())
            .and_then(|v| super::principal::parse_u32_bits(v))
            .unwrap_or(0);
        let salt = self.salt_for_new(Some(&sam), uac_bits);
        let secrets = self
            .prepared
            .secrets(&password, self.crypt_schemes(), salt.as_deref())
            .map_err(|e| DirError::UnwillingToPerform(e.to_string()))?;
        attrs.set(SECRETS_ATTR, vec![self.seal(&secrets, guid)?]);
        attrs.set(
            "pwdLastSet",
            vec![ad_time_from_unix(now_secs() as i64)
                .to_string()
                .into_bytes()],
        );
        Ok(())
    }

    /// On modify: the password modifications of a request, turned into the changes to
    /// store (sealed secrets, pwdLastSet). Empty when the request changes no password.
    pub(crate) fn password_changes(
        &self,
        w: &DbWrite<'_, B>,
        req: &Request,
        id: u64,
        mods: &[&Modification],
    ) -> DirResult<Vec<Modification>> {
        if mods.is_empty() {
            return Ok(Vec::new());
        }
        // Modifications without a value: an add is a constraint violation; a replace, and a
        // lone delete of unicodePwd, unwillingToPerform (AD's answers).
        for m in mods {
            if !m.values.is_empty() {
                continue;
            }
            let unwilling = match m.op {
                ModifyOp::Add => false,
                ModifyOp::Replace => true,
                _ => mods.len() == 1 && m.attr.eq_ignore_ascii_case("unicodePwd"),
            };
            let text = format!("{}: a password modification needs a value", m.attr);
            if unwilling {
                return Err(DirError::UnwillingToPerform(format!(
                    "0000001F: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM): {text}"
                )));
            }
            if m.op == ModifyOp::Add || mods.len() == 1 {
                return Err(DirError::ConstraintViolation(format!(
                    "0000052D: Constraint violation - {text}"
                )));
            }
        }
        self.require_encryption(req)?;
        // In a domain the access check has already decided who may reset (the
        // User-Force-Change-Password right); elsewhere administrators may.
        let may_reset = req.caller.is_admin() || self.domain().is_some();
        let mut old = None;
        let mut new = None;
        for m in mods {
            // A value that is no password (a hash) is unwilling in a set, a constraint
            // violation in a change.
            let value = m
                .values
                .first()
                .map(|v| password_of(&m.attr, v))
                .transpose()
                .map_err(|e| match e {
                    DirError::UnwillingToPerform(text) if m.op != ModifyOp::Replace => {
                        DirError::ConstraintViolation(text.replacen(
                            "0000001F: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM)",
                            "0000052D: Constraint violation",
                            1,
                        ))
                    }
                    other => other,
                })?;
            match m.op {
                ModifyOp::Replace if may_reset => new = value,
                ModifyOp::Delete => old = value,
                ModifyOp::Add => new = value,
                _ => {
                    return Err(DirError::UnwillingToPerform(
                        "a password is replaced by an administrator, or changed by deleting \
                         the old value and adding the new one"
                            .into(),
                    ))
                }
            }
        }
        let new =
            new.ok_or_else(|| DirError::ConstraintViolation("no new password given".into()))?;
        let current = self.stored_secrets(w, id)?;
        let policy = resultant_policy(w, self, id)?;
        let sam = w.text(id, "sAMAccountName")?.unwrap_or_default();
        let display = w.text(id, "displayName")?.unwrap_or_default();
        let change = old.is_some() || !may_reset;
        // The rights, once the request's shape is known valid (MS-ADTS 3.1.1.5.3.1): a
        // change needs User-Change-Password (constraintViolation without it), a reset
        // User-Force-Change-Password (insufficientAccessRights).
        if let Some(p) = self.principal(w, &req.caller)? {
            let snap = self.working_schema();
            use super::acl::extended;
            if change {
                if !self.has_control_access(w, &snap, &p, id, extended::CHANGE_PASSWORD)? {
                    return Err(DirError::ConstraintViolation(
                        "0000052D: the caller may not change this password".into(),
                    ));
                }
            } else if !self.has_control_access(w, &snap, &p, id, extended::RESET_PASSWORD)? {
                // Without the old value and without the right to reset: a replace is
                // refused for rights, an add (with or without an empty delete) is a change
                // missing its old password.
                return Err(if mods.iter().any(|m| m.op == ModifyOp::Replace) {
                    super::acl::insufficient("no right to reset this password")
                } else {
                    DirError::ConstraintViolation("the old password must be given".into())
                });
            }
        }
        if change {
            let old = old.ok_or_else(|| {
                DirError::ConstraintViolation("the old password must be given".into())
            })?;
            let ok = current.as_ref().is_some_and(|s| s.verify(&old));
            if !ok {
                let dn = kauri_db::Dn::parse(&w.dn_of(id)?)
                    .map_err(|e| DirError::UnwillingToPerform(format!("stored DN: {e}")))?;
                return Err(DirError::WrongPassword {
                    dn,
                    message: "00000056: AtrErr: DSID-03191083, #1: 0: 00000056: problem 1005 \
                              (CONSTRAINT_ATT_TYPE), data 0, Att 9005a (unicodePwd): the old \
                              password is wrong"
                        .into(),
                });
            }
            let last = w.int(id, "pwdLastSet")?.unwrap_or(0);
            policy
                .check_min_age(last, ad_time_from_unix(now_secs() as i64))
                .map_err(|v| DirError::ConstraintViolation(v.diagnostic()))?;
        }
        let history = if change { current.as_ref() } else { None };
        if !req.caller.is_system() {
            policy
                .check_new_password(&new, &sam, &display, history)
                .map_err(|v| DirError::ConstraintViolation(v.diagnostic()))?;
        }
        let now = ad_time_from_unix(now_secs() as i64).to_string();
        Ok(vec![
            self.new_secrets(w, id, current.as_ref(), &new, policy.history_length)?,
            Modification::new(ModifyOp::Replace, "pwdLastSet", &[&now]),
            next_key_version(w, id)?,
        ])
    }

    /// A password set or changed over Kerberos' password-change service (RFC 3244): the
    /// ticket proved who asks, so no old password is given. A change (`change`: the
    /// account's own, as `kpasswd` does) meets the minimum age and the history as well as
    /// the policy's other rules; a set by an administrator meets only the latter.
    pub fn kerberos_password(
        &self,
        w: &mut DbWrite<'_, B>,
        dn: &kauri_db::Dn,
        password: &str,
        change: bool,
    ) -> DirResult<()> {
        let id = w.id_of(dn)?.ok_or_else(|| super::no_such_object(dn))?;
        let current = self.stored_secrets(w, id)?;
        let policy = resultant_policy(w, self, id)?;
        let sam = w.text(id, "sAMAccountName")?.unwrap_or_default();
        let display = w.text(id, "displayName")?.unwrap_or_default();
        let bits = w
            .values(id, "userAccountControl")?
            .first()
            .and_then(|v| super::principal::parse_u32_bits(v))
            .unwrap_or(0);
        // A computer's own password (a machine changing its secret) is not a person's:
        // AD holds it to no password policy.
        let machine = super::kerberos::is_computer_uac(bits);
        if change && !machine {
            let last = w.int(id, "pwdLastSet")?.unwrap_or(0);
            policy
                .check_min_age(last, ad_time_from_unix(now_secs() as i64))
                .map_err(|v| DirError::ConstraintViolation(v.diagnostic()))?;
        }
        let history = if change { current.as_ref() } else { None };
        if !machine {
            policy
                .check_new_password(password, &sam, &display, history)
                .map_err(|v| DirError::ConstraintViolation(v.diagnostic()))?;
        }
        let now = ad_time_from_unix(now_secs() as i64).to_string();
        let mods = vec![
            self.new_secrets(w, id, current.as_ref(), password, policy.history_length)?,
            Modification::new(ModifyOp::Replace, "pwdLastSet", &[&now]),
            next_key_version(w, id)?,
        ];
        self.apply(w, &super::Request::system_modify(dn.clone(), mods, false))
    }

    /// The change that stores an account's new password: sealed secrets, the previous
    /// ones (if any) carried into the history.
    fn new_secrets(
        &self,
        w: &DbWrite<'_, B>,
        id: u64,
        current: Option<&StoredSecrets>,
        password: &str,
        history_length: u32,
    ) -> DirResult<Modification> {
        let salt = self.salt_of(w, id)?;
        let next = self
            .prepared
            .secrets(password, self.crypt_schemes(), salt.as_deref())
            .map_err(|e| DirError::UnwillingToPerform(e.to_string()))?;
        let secrets = match current {
            Some(c) => c.followed_by(next, history_length),
            None => next,
        };
        let guid = w
            .values(id, "objectGUID")?
            .into_iter()
            .next()
            .unwrap_or_default();
        Ok(Modification {
            op: ModifyOp::Replace,
            attr: SECRETS_ATTR.to_string(),
            values: vec![self.seal(&secrets, &guid)?],
        })
    }

    /// The change that gives an account a random password nobody knows (AD does so when
    /// an account comes to require a smart card): new keys, a new key version, the
    /// password history kept, pwdLastSet untouched.
    pub(crate) fn random_password(
        &self,
        w: &DbWrite<'_, B>,
        id: u64,
    ) -> DirResult<Vec<Modification>> {
        let password = random_text()?;
        let history = resultant_policy(w, self, id)?.history_length;
        let current = self.stored_secrets(w, id)?;
        Ok(vec![
            self.new_secrets(w, id, current.as_ref(), &password, history)?,
            next_key_version(w, id)?,
        ])
    }

    /// The domain's own password policy (the domain object's attributes).
    pub(crate) fn domain_policy<V: View>(&self, v: &V) -> DirResult<PasswordPolicy> {
        let Some(domain) = self.domain() else {
            return Ok(PasswordPolicy::default());
        };
        policy_from(v, domain.domain_id, false)
    }
}

/// Where an account keeps its key version (AD's `msDS-KeyVersionNumber`): 1 from its
/// creation, one more with every new password. Kerberos keys carry it as their kvno.
pub(crate) const KEY_VERSION_ATTR: &str = "msDS-KeyVersionNumber";

/// A password nobody knows: 64 random printable characters.
pub(crate) fn random_text() -> DirResult<String> {
    let mut raw = [0u8; 64];
    getrandom::fill(&mut raw)
        .map_err(|e| DirError::UnwillingToPerform(format!("random password: {e}")))?;
    Ok(raw.iter().map(|b| char::from(b'!' + (b % 94))).collect())
}

/// The change that moves an account to its next key version.
fn next_key_version<B: Backend>(w: &DbWrite<'_, B>, id: u64) -> DirResult<Modification> {
    let next = w.int(id, KEY_VERSION_ATTR)?.unwrap_or(0).saturating_add(1);
    Ok(Modification::new(
        ModifyOp::Replace,
        KEY_VERSION_ATTR,
        &[&next.to_string()],
    ))
}

/// A policy from the attributes of a domain object or a password settings object.
pub(crate) fn policy_from<V: View>(v: &V, id: u64, pso: bool) -> DirResult<PasswordPolicy> {
    let names: &[&str] = if pso {
        &[
            "msDS-MinimumPasswordLength",
            "msDS-PasswordComplexityEnabled",
            "msDS-PasswordHistoryLength",
            "msDS-MinimumPasswordAge",
            "msDS-MaximumPasswordAge",
            "msDS-LockoutThreshold",
            "msDS-LockoutDuration",
            "msDS-LockoutObservationWindow",
        ]
    } else {
        &[
            "minPwdLength",
            "pwdProperties",
            "pwdHistoryLength",
            "minPwdAge",
            "maxPwdAge",
            "lockoutThreshold",
            "lockoutDuration",
            "lockOutObservationWindow",
        ]
    };
    let mut map = std::collections::HashMap::new();
    for (n, t) in names.iter().zip(v.texts(id, names)?) {
        if let Some(t) = t {
            map.insert(n.to_string(), t);
        }
    }
    let r = if pso {
        PasswordPolicy::from_password_settings(&map)
    } else {
        PasswordPolicy::from_domain_attributes(&map)
    };
    r.map_err(|e| DirError::UnwillingToPerform(format!("password policy of {id}: {e}")))
}
