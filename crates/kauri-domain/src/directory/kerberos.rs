//! The Kerberos side of an account's password: the salt AD derives its AES keys with and
//! the derivation itself (MS-KILE 3.1.1.2), done wherever a password is set.

use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_kv::Backend;

use super::error::DirResult;
use super::principal::{parse_u32_bits, uac};
use super::view::View;
use super::Directory;
use crate::password::{KerberosKeys, PasswordError};

/// The salt of an account's AES keys, as AD forms it: the realm (the domain's DNS name in
/// capitals) then the account name for users, or `host` + the lower-case computer name
/// (without its `$`) + `.` + the lower-case DNS domain for computers.
pub fn kerberos_salt(dns_domain: &str, sam: &str, computer: bool) -> String {
    let realm = dns_domain.to_ascii_uppercase();
    if computer {
        let name = sam.strip_suffix('$').unwrap_or(sam).to_lowercase();
        format!("{realm}host{name}.{}", dns_domain.to_ascii_lowercase())
    } else {
        format!("{realm}{sam}")
    }
}

/// Whether `userAccountControl` marks a computer (workstation or DC) account, whose keys
/// are salted with its host name.
pub fn is_computer_uac(bits: u32) -> bool {
    bits & (uac::WORKSTATION_TRUST_ACCOUNT | uac::SERVER_TRUST_ACCOUNT) != 0
}

/// The AES keys of `password` under `salt`.
pub(crate) fn derive_keys(password: &str, salt: &str) -> Result<KerberosKeys, PasswordError> {
    let [aes256, aes128, _] = Key::all_from_password(password, salt)
        .map_err(|e| PasswordError::Kerberos(e.to_string()))?;
    let (mut k256, mut k128) = ([0u8; 32], [0u8; 16]);
    if aes256.etype() != Enctype::Aes256Sha1
        || aes128.etype() != Enctype::Aes128Sha1
        || aes256.bytes().len() != 32
        || aes128.bytes().len() != 16
    {
        return Err(PasswordError::Kerberos("unexpected key sizes".into()));
    }
    k256.copy_from_slice(aes256.bytes());
    k128.copy_from_slice(aes128.bytes());
    Ok(KerberosKeys {
        salt: salt.to_string(),
        aes256: k256,
        aes128: k128,
    })
}

impl<B: Backend> Directory<B> {
    /// The salt for a new password of the account `id` (`None` outside a domain, or for
    /// an entry that is no account).
    pub(crate) fn salt_of<V: View>(&self, v: &V, id: u64) -> DirResult<Option<String>> {
        let Some(domain) = self.domain() else {
            return Ok(None);
        };
        let Some(sam) = v.text(id, "sAMAccountName")? else {
            return Ok(None);
        };
        let bits = v
            .values(id, "userAccountControl")?
            .first()
            .and_then(|b| parse_u32_bits(b))
            .unwrap_or(0);
        Ok(Some(kerberos_salt(
            &domain.dns_name,
            &sam,
            is_computer_uac(bits),
        )))
    }

    /// The salt for the password of an account being added with these attributes.
    pub(crate) fn salt_for_new(&self, sam: Option<&str>, uac_bits: u32) -> Option<String> {
        let domain = self.domain()?;
        let sam = sam.filter(|s| !s.is_empty())?;
        Some(kerberos_salt(
            &domain.dns_name,
            sam,
            is_computer_uac(uac_bits),
        ))
    }
}

impl<B: Backend> Directory<B> {
    /// Gives the accounts the KDC cannot work without — krbtgt and this DC's computer
    /// account — a random password with Kerberos keys when they have none (a new domain,
    /// or one made before Kauri had a KDC). Returns the DNs given keys.
    pub fn ensure_kerberos_keys(&self, w: &mut kauri_db::DbWrite<'_, B>) -> DirResult<Vec<String>> {
        let Some(domain) = self.domain() else {
            return Ok(Vec::new());
        };
        let mut ids = Vec::new();
        let krbtgt = domain.sid.with_rid(crate::sid::rid::KRBTGT);
        if let Some(found) = w.find_eq("objectSid", &krbtgt.to_bytes())? {
            ids.extend(found.first().copied());
        }
        if let Some(dc) = &domain.dc_computer {
            ids.extend(w.id_of(dc)?);
        }
        let mut done = Vec::new();
        for id in ids {
            let has_keys = self
                .stored_secrets(w, id)?
                .is_some_and(|s| s.kerberos().is_some());
            if has_keys {
                continue;
            }
            let dn = kauri_db::Dn::parse(&w.dn_of(id)?)
                .map_err(|e| super::DirError::UnwillingToPerform(format!("stored DN: {e}")))?;
            let password = super::credentials::random_text()?;
            let set = kauri_db::Modification {
                op: kauri_db::ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![crate::password::encode_unicode_pwd(&password)],
            };
            self.apply(
                w,
                &super::Request::system_modify(dn.clone(), vec![set], false),
            )?;
            done.push(dn.to_string());
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salts_follow_ad() {
        assert_eq!(
            kerberos_salt("kauri.test", "Administrator", false),
            "KAURI.TESTAdministrator"
        );
        assert_eq!(
            kerberos_salt("Kauri.Test", "WS01$", true),
            "KAURI.TESThostws01.kauri.test"
        );
        assert!(is_computer_uac(0x1000) && is_computer_uac(0x2000) && !is_computer_uac(0x200));
    }
}
