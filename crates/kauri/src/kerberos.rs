//! The Kerberos side of a domain's administration: `kauri domain exportkeytab` (keys for
//! services that run outside the DC), `kauri domain krbtgt rotate` (new keys for the
//! account that signs every ticket), the rotation a restore does, and the key facts
//! `kauri user show` and `kauri computer show` print.
//!
//! These read and write the data folder directly, with its sealing key: the keys never
//! cross the network (over LDAP an account's keys cannot be read at all). They are safe
//! beside a running server on the same folder, as the other data-folder commands are:
//! LMDB serializes this process's write with the server's writer, and the KDC reads the
//! keys afresh for every request, so a rotation takes effect on the next one.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kauri_db::{DbRead, Dn, Modification, ModifyOp};
use kauri_domain::directory::view::View;
use kauri_domain::directory::{Caller, Change, Directory, Request};
use kauri_domain::password::StoredSecrets;
use kauri_domain::sid::{rid, Sid};
use kauri_kv::lmdb::LmdbBackend;
use serde::Serialize;
use serde_json::{json, Value};

use kauri::domain::{is_domain, open_domain_directory};
use kauri::keytab::{self, Entry};

/// Options of `kauri domain exportkeytab`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportKeytabOptions {
    /// The keytab file to write (MIT's format, mode 0600).
    pub file: PathBuf,
    /// The domain's data folder (the keys are read from it, never over the network).
    #[arg(short = 'H', long = "data", default_value_os_t = kauri::paths::default_data())]
    pub data: PathBuf,
    /// A principal whose keys to export, `name@REALM` or `service/host@REALM` (the realm
    /// may be left out); repeat for several. Default: this DC's account (`DC1$`) under
    /// its sAMAccountName and every one of its servicePrincipalNames.
    #[arg(long = "principal", value_name = "PRINCIPAL")]
    pub principals: Vec<String>,
    /// Replace the file when it exists.
    #[arg(long, conflicts_with = "append")]
    pub force: bool,
    /// Add the keys to an existing keytab (as MIT's `ktadd` does); a key of the same
    /// principal, version and type already there is replaced, the rest kept.
    #[arg(long)]
    pub append: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The `kauri domain krbtgt` commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum KrbtgtCommand {
    /// Give krbtgt a new random password: new keys under the next key version.
    ///
    /// Tickets issued under the keys being replaced keep working (they become the previous
    /// keys); tickets older than those stop working. Rotate again once the longest ticket
    /// lifetime has passed to retire the keys replaced now, or twice in a row to make
    /// every ticket issued so far useless (after a compromise). Safe while the server
    /// runs: its KDC uses the new keys from the next request on.
    Rotate(RotateOptions),
}

/// Options of `kauri domain krbtgt rotate`.
#[derive(Debug, Clone, clap::Args)]
pub struct RotateOptions {
    /// The domain's data folder.
    #[arg(short = 'H', long = "data", default_value_os_t = kauri::paths::default_data())]
    pub data: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A principal name as given: its components and realm (`None` when left out).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Principal {
    components: Vec<String>,
    realm: Option<String>,
}

/// Reads a principal in Kerberos' text form: components separated by `/`, the realm
/// after the last unescaped `@`, `\` escaping the next character (`\n`, `\t`, `\b` and
/// `\0` as MIT reads them).
fn parse_principal(text: &str) -> Result<Principal> {
    let mut components = vec![String::new()];
    let mut realm: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some('b') => '\u{8}',
                Some('0') => '\0',
                Some(other) => other,
                None => bail!("{text}: ends with a lone backslash"),
            },
            '/' | '@' if realm.is_some() => {
                bail!("{text}: a realm holds no unescaped '/' or '@'")
            }
            '/' => {
                components.push(String::new());
                continue;
            }
            '@' => {
                realm = Some(String::new());
                continue;
            }
            c => c,
        };
        match realm.as_mut() {
            Some(r) => r.push(c),
            None => components.last_mut().expect("never empty").push(c),
        }
    }
    if components.iter().any(String::is_empty) {
        bail!("{text}: a principal name has no empty components");
    }
    if realm.as_deref() == Some("") {
        bail!("{text}: the realm after '@' is empty");
    }
    Ok(Principal { components, realm })
}

/// An account's current keys, as a keytab and the KDC know them.
struct AccountKeys {
    /// The account's DN.
    dn: String,
    /// msDS-KeyVersionNumber: the kvno of these keys (0 when the attribute is missing, as
    /// the KDC reads it).
    kvno: u32,
    /// (enctype, key), strongest first.
    keys: Vec<(u16, Vec<u8>)>,
}

impl Drop for AccountKeys {
    fn drop(&mut self) {
        // Password equivalents: wiped before the memory is freed (see `keytab::Entry`).
        for (_, key) in &mut self.keys {
            key.fill(0);
            std::hint::black_box(&key);
        }
    }
}

/// The key types of a set of secrets, strongest first.
fn key_types(aes: bool) -> Vec<u16> {
    let mut out = Vec::new();
    if aes {
        out.extend([
            keytab::AES256_CTS_HMAC_SHA1_96,
            keytab::AES128_CTS_HMAC_SHA1_96,
        ]);
    }
    out.push(keytab::ARCFOUR_HMAC);
    out
}

/// The current keys of stored secrets: AES256 and AES128 when the password was set since
/// Kauri derives them, and always RC4 (the NT hash): the keys the KDC offers
/// (`kauri_domain::directory::kerberos_keys::current_keys`).
fn current_keys(s: &StoredSecrets) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    if let Some(k) = s.kerberos() {
        out.push((keytab::AES256_CTS_HMAC_SHA1_96, k.aes256.to_vec()));
        out.push((keytab::AES128_CTS_HMAC_SHA1_96, k.aes128.to_vec()));
    }
    out.push((keytab::ARCFOUR_HMAC, s.nt_hash().to_vec()));
    out
}

/// The key version an account's keys carry (msDS-KeyVersionNumber, read as the KDC does).
fn kvno_of<V: View>(v: &V, id: u64) -> Result<u32> {
    Ok(v.int(id, "msDS-KeyVersionNumber")?
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0))
}

/// Whether record `id` is the domain's krbtgt account.
fn is_krbtgt<V: View>(v: &V, domain_sid: &Sid, id: u64) -> Result<bool> {
    let krbtgt = domain_sid.with_rid(rid::KRBTGT).to_bytes();
    Ok(v.values(id, "objectSid")?.first() == Some(&krbtgt))
}

/// Finds the account a principal designates, as the KDC does, and reads its keys.
fn keys_of(
    dir: &Directory<LmdbBackend>,
    r: &DbRead<'_, LmdbBackend>,
    p: &Principal,
    text: &str,
) -> Result<AccountKeys> {
    let domain = dir.domain().context("the data folder holds no domain")?;
    if let Some(realm) = &p.realm {
        if !dir.kdc_is_our_realm(realm) {
            bail!(
                "{text}: {realm} is not this domain's realm ({})",
                domain.dns_name.to_ascii_uppercase()
            );
        }
    }
    let id = if p.components.len() == 1 {
        dir.kdc_find_client(r, &p.components)?
    } else {
        dir.kdc_find_service(r, &p.components)?
    };
    let Some(id) = id else {
        bail!("{text}: no account has this name (sAMAccountName, userPrincipalName or servicePrincipalName)");
    };
    let dn = r.dn_string(id)?;
    if is_krbtgt(r, &domain.sid, id)? {
        bail!(
            "{text} is the krbtgt account ({dn}): its keys sign every ticket of the domain and \
             are never exported"
        );
    }
    let Some(secrets) = dir
        .stored_secrets(r, id)
        .with_context(|| format!("reading the keys of {dn}"))?
    else {
        bail!("{text} ({dn}) has no password, so no keys; set one first");
    };
    Ok(AccountKeys {
        kvno: kvno_of(r, id)?,
        keys: current_keys(&secrets),
        dn,
    })
}

/// The principals `exportkeytab` exports without `--principal`: this DC's account by
/// its sAMAccountName and by each of its servicePrincipalNames.
fn dc_principals(dir: &Directory<LmdbBackend>, r: &DbRead<'_, LmdbBackend>) -> Result<Vec<String>> {
    let domain = dir.domain().context("the data folder holds no domain")?;
    let dc = domain
        .dc_computer
        .as_ref()
        .context("the domain names no computer account for this DC")?;
    let id = r
        .lookup(dc)?
        .with_context(|| format!("this DC's account {dc} is missing"))?;
    let sam = View::text(r, id, "sAMAccountName")?
        .with_context(|| format!("{dc} has no sAMAccountName"))?;
    let escape = |s: &str| s.replace('\\', "\\\\").replace('@', "\\@");
    let mut out = vec![escape(&sam)];
    let mut spns: Vec<String> = r
        .values(id, "servicePrincipalName")?
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    spns.sort_by_key(|s| s.to_ascii_lowercase());
    // An SPN's '/' separate components; an '@' inside one is part of the name.
    out.extend(spns.iter().map(|s| escape(s)));
    Ok(out)
}

/// How the keytab file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteMode {
    /// A new file; an existing one is an error.
    Create,
    /// The file replaced whole.
    Replace,
    /// Added to what the file holds.
    Append,
}

/// Writes `entries` to `path` with mode 0600, in a temporary file renamed into place, so
/// the keytab is whole or untouched. Returns how many entries the file kept from before.
fn write_keytab(path: &Path, mut entries: Vec<Entry>, mode: WriteMode) -> Result<usize> {
    let exists = std::fs::symlink_metadata(path).is_ok();
    if exists && mode == WriteMode::Create {
        bail!(
            "{} exists; pass --force to replace it, or --append to add these keys to it",
            path.display()
        );
    }
    let mut kept = 0;
    if exists && mode == WriteMode::Append {
        let old = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let old = keytab::decode(&old).with_context(|| format!("reading {}", path.display()))?;
        let mut all: Vec<Entry> = old
            .into_iter()
            .filter(|o| !entries.iter().any(|e| e.same_slot(o)))
            .collect();
        kept = all.len();
        all.append(&mut entries);
        entries = all;
    }
    let mut bytes = keytab::encode(&entries)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // tempfile creates the file with mode 0600, before any key is written to it.
    let mut tmp = tempfile::Builder::new()
        .prefix(".kauri-keytab-")
        .tempfile_in(&parent)
        .with_context(|| format!("creating a file in {}", parent.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o600))?;
    }
    let written = tmp.write_all(&bytes);
    bytes.fill(0);
    std::hint::black_box(&bytes);
    written?;
    tmp.as_file().sync_all()?;
    let placed = if mode == WriteMode::Create {
        tmp.persist_noclobber(path).map(|_| ())
    } else {
        tmp.persist(path).map(|_| ())
    };
    placed
        .map_err(|e| anyhow::Error::new(e.error).context(format!("writing {}", path.display())))?;
    Ok(kept)
}

/// One principal `exportkeytab` wrote.
#[derive(Debug, Serialize)]
struct Exported {
    principal: String,
    account: String,
    kvno: u32,
    key_types: Vec<String>,
}

/// What `exportkeytab` reports.
#[derive(Debug, Serialize)]
struct ExportReport {
    file: String,
    principals: Vec<Exported>,
    keys: usize,
    /// Keys the file held before and still holds (`--append`).
    kept: usize,
    /// Accounts whose passwords predate AES keys: only their RC4 key was written.
    rc4_only: Vec<String>,
}

/// `kauri domain exportkeytab`.
pub fn export_keytab(o: &ExportKeytabOptions) -> Result<()> {
    if !is_domain(&o.data) {
        bail!(
            "{} is not a domain's data folder (no domain.json)",
            o.data.display()
        );
    }
    let dir = open_domain_directory(&o.data, true)?;
    let realm = dir.kdc_realm().context("the data folder holds no domain")?;
    let r = dir.db().read()?;
    let names = if o.principals.is_empty() {
        dc_principals(&dir, &r)?
    } else {
        o.principals.clone()
    };
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX))
        .unwrap_or(0);
    let mut entries = Vec::new();
    let mut report = ExportReport {
        file: o.file.display().to_string(),
        principals: Vec::new(),
        keys: 0,
        kept: 0,
        rc4_only: Vec::new(),
    };
    for text in &names {
        let p = parse_principal(text)?;
        let acct = keys_of(&dir, &r, &p, text)?;
        // The realm is written as the KDC names it, whichever form was given.
        let keys: Vec<Entry> = acct
            .keys
            .iter()
            .map(|(enctype, key)| Entry {
                realm: realm.clone(),
                components: p.components.clone(),
                name_type: keytab::NT_PRINCIPAL,
                timestamp,
                kvno: acct.kvno,
                enctype: *enctype,
                key: key.clone(),
            })
            .collect();
        let principal = keys
            .first()
            .map(Entry::principal)
            .with_context(|| format!("{text} has no keys"))?;
        if report.principals.iter().any(|e| e.principal == principal) {
            continue;
        }
        if acct.keys.len() == 1 && !report.rc4_only.contains(&acct.dn) {
            report.rc4_only.push(acct.dn.clone());
        }
        report.principals.push(Exported {
            principal,
            account: acct.dn.clone(),
            kvno: acct.kvno,
            key_types: keys
                .iter()
                .map(|e| keytab::enctype_name(e.enctype))
                .collect(),
        });
        entries.extend(keys);
    }
    drop(r);
    report.keys = entries.len();
    let mode = match (o.force, o.append) {
        (_, true) => WriteMode::Append,
        (true, false) => WriteMode::Replace,
        (false, false) => WriteMode::Create,
    };
    report.kept = write_keytab(&o.file, entries, mode)?;
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "Wrote {} keys of {} principals to {} (mode 0600)",
        report.keys,
        report.principals.len(),
        report.file
    );
    if report.kept > 0 {
        println!("  kept {} keys the file held before", report.kept);
    }
    for e in &report.principals {
        println!(
            "  {}  kvno {}  {}",
            e.principal,
            e.kvno,
            e.key_types.join(", ")
        );
    }
    for dn in &report.rc4_only {
        println!(
            "Note: {dn} has only an RC4 key (its password predates AES keys); set its \
             password again for AES keys, then export again."
        );
    }
    println!(
        "The keys stay valid until the account's password changes (its kvno grows): export \
         again then."
    );
    Ok(())
}

/// What a krbtgt rotation did.
#[derive(Debug, Clone, Serialize)]
pub struct Rotated {
    /// The krbtgt account's DN.
    pub dn: String,
    /// The key version of the new keys.
    pub kvno: u32,
    /// The key version of the keys still accepted beside them (the replaced ones), when
    /// there were keys to keep.
    pub previous_kvno: Option<u32>,
}

/// A password nobody knows, for krbtgt: 64 characters from 48 random bytes.
fn random_password() -> Result<String> {
    use base64::Engine;
    let mut raw = [0u8; 48];
    getrandom::fill(&mut raw).map_err(|e| anyhow::anyhow!("random password: {e}"))?;
    let text = base64::engine::general_purpose::STANDARD.encode(raw);
    raw.fill(0);
    Ok(text)
}

/// Gives the domain's krbtgt account a new random password in one transaction: new keys
/// under the next key version, the replaced keys kept as the previous ones (the KDC still
/// accepts tickets under them), the keys before those forgotten.
pub fn rotate_krbtgt(dir: &Directory<LmdbBackend>) -> Result<Rotated> {
    let domain = dir.domain().context("the data folder holds no domain")?;
    if dir.secret_key().is_none() {
        bail!("the directory was opened without its sealing key");
    }
    let sid = domain.sid.with_rid(rid::KRBTGT).to_bytes();
    let mut w = dir.db().write()?;
    let id = w
        .find_eq("objectSid", &sid)?
        .and_then(|ids| ids.first().copied())
        .context("the domain has no krbtgt account")?;
    let dn_text = w.dn_string(id)?;
    let dn = Dn::parse(&dn_text).map_err(|e| anyhow::anyhow!("{dn_text}: {e}"))?;
    let set = Modification {
        op: ModifyOp::Replace,
        attr: "unicodePwd".into(),
        values: vec![kauri_domain::password::encode_unicode_pwd(
            &random_password()?,
        )],
    };
    dir.apply(
        &mut w,
        &Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Modify {
                sd_flags: None,
                dn,
                mods: vec![set],
                permissive: false,
            },
        },
    )
    .with_context(|| format!("setting a new password on {dn_text}"))?;
    let kvno = kvno_of(&w, id)?;
    let previous = dir
        .stored_secrets(&w, id)?
        .is_some_and(|s| s.previous().is_some());
    w.commit()?;
    dir.after_commit()?;
    Ok(Rotated {
        dn: dn_text,
        kvno,
        previous_kvno: previous.then(|| kvno.saturating_sub(1)),
    })
}

/// `kauri domain krbtgt …`.
pub fn krbtgt(cmd: &KrbtgtCommand) -> Result<()> {
    match cmd {
        KrbtgtCommand::Rotate(o) => {
            if !is_domain(&o.data) {
                bail!(
                    "{} is not a domain's data folder (no domain.json)",
                    o.data.display()
                );
            }
            let dir = open_domain_directory(&o.data, true)?;
            let done = rotate_krbtgt(&dir)?;
            if o.json {
                println!("{}", serde_json::to_string_pretty(&done)?);
                return Ok(());
            }
            println!("Rotated the keys of {} (now kvno {})", done.dn, done.kvno);
            match done.previous_kvno {
                Some(p) => {
                    println!(
                        "  tickets issued under kvno {p} keep working until they expire; older \
                         ones no longer do"
                    );
                    println!(
                        "  rotate again after the longest ticket lifetime (10 hours by \
                         default) to retire kvno {p}"
                    );
                }
                None => println!("  krbtgt had no keys before: no earlier ticket is accepted"),
            }
            Ok(())
        }
    }
}

/// What `… show` says of an account's Kerberos keys: read from the data folder, the key
/// types and versions (never the keys); over LDAP, where the keys cannot be read, only
/// the key version.
pub fn key_facts(t: &mut dyn crate::admin::target::Target, dn: &str) -> Result<Value> {
    if let Some(local) = t.as_local() {
        let dir = local.directory();
        let r = dir.db().read()?;
        let parsed = Dn::parse(dn).map_err(|e| anyhow::anyhow!("{dn}: {e}"))?;
        let id = r
            .lookup(&parsed)?
            .with_context(|| format!("{dn} is gone"))?;
        let kvno = kvno_of(&r, id)?;
        // Keys that cannot be unsealed (a damaged value) do not keep the rest from showing.
        let secrets = match dir.stored_secrets(&r, id) {
            Ok(s) => s,
            Err(e) => {
                return Ok(json!({
                    "kvno": kvno,
                    "key_types": null,
                    "note": format!("the keys could not be read: {e}"),
                }))
            }
        };
        let Some(s) = secrets else {
            return Ok(json!({
                "kvno": kvno,
                "key_types": [],
                "note": "no password, so no keys",
            }));
        };
        let names = |aes: bool| -> Vec<String> {
            key_types(aes)
                .into_iter()
                .map(keytab::enctype_name)
                .collect()
        };
        let mut out = json!({
            "kvno": kvno,
            "key_types": names(s.kerberos().is_some()),
        });
        if let Some(k) = s.kerberos() {
            out["salt"] = json!(k.salt);
        } else {
            out["note"] = json!(
                "its password predates AES keys: AES keys come with its next password change"
            );
        }
        if let Some(p) = s.previous() {
            out["previous"] = json!({
                "kvno": kvno.saturating_sub(1),
                "key_types": names(p.kerberos.is_some()),
            });
        }
        return Ok(out);
    }
    let kvno = t
        .read(dn, &["msDS-KeyVersionNumber"])?
        .and_then(|f| f.int("msDS-KeyVersionNumber"));
    Ok(json!({
        "kvno": kvno,
        "key_types": null,
        "note": "over LDAP only the key version can be read; the key types are shown from the data folder",
    }))
}

/// [`key_facts`] as lines for people.
pub fn print_key_facts(facts: &Value) {
    let kvno = facts["kvno"]
        .as_u64()
        .map_or_else(|| "unknown".to_string(), |v| v.to_string());
    let types = |v: &Value| -> Option<String> {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    match types(&facts["key_types"]) {
        None => println!(
            "Kerberos key version: {kvno} ({})",
            facts["note"]
                .as_str()
                .unwrap_or("the key types are shown from the data folder")
        ),
        Some(t) if t.is_empty() => println!("Kerberos keys: none (no password)"),
        Some(t) => {
            let note = facts["note"]
                .as_str()
                .map(|n| format!("; {n}"))
                .unwrap_or_default();
            println!("Kerberos keys: {t} (kvno {kvno}{note})");
        }
    }
    if let Some(p) = facts.get("previous") {
        if let Some(t) = types(&p["key_types"]) {
            println!(
                "Previous Kerberos keys: {t} (kvno {}, still accepted for tickets issued under them)",
                p["kvno"]
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> (Vec<String>, Option<String>) {
        let p = parse_principal(text).unwrap();
        (p.components, p.realm)
    }

    fn want(components: &[&str], realm: Option<&str>) -> (Vec<String>, Option<String>) {
        (
            components.iter().map(|c| c.to_string()).collect(),
            realm.map(str::to_string),
        )
    }

    #[test]
    fn principals_parse_as_kerberos_writes_them() {
        assert_eq!(parsed("alice"), want(&["alice"], None));
        assert_eq!(
            parsed("alice@SAMDOM.EXAMPLE.COM"),
            want(&["alice"], Some("SAMDOM.EXAMPLE.COM"))
        );
        assert_eq!(
            parsed("HOST/dc1.samdom.example.com@SAMDOM.EXAMPLE.COM"),
            want(
                &["HOST", "dc1.samdom.example.com"],
                Some("SAMDOM.EXAMPLE.COM")
            )
        );
        assert_eq!(
            parsed("ldap/dc1.samdom.example.com/samdom.example.com"),
            want(
                &["ldap", "dc1.samdom.example.com", "samdom.example.com"],
                None
            )
        );
        // An enterprise name: the UPN's '@' escaped.
        assert_eq!(
            parsed("a.smith\\@example.org@SAMDOM.EXAMPLE.COM"),
            want(&["a.smith@example.org"], Some("SAMDOM.EXAMPLE.COM"))
        );
        assert_eq!(parsed("DC1$"), want(&["DC1$"], None));
    }

    #[test]
    fn malformed_principals_are_refused() {
        for bad in [
            "", "@REALM", "a//b", "a/", "alice@", "a@B@C", "a@B/C", "x\\",
        ] {
            assert!(parse_principal(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn written_principals_read_back_the_same() {
        for text in [
            "alice@SAMDOM.EXAMPLE.COM",
            "HOST/dc1@SAMDOM.EXAMPLE.COM",
            "a.smith\\@example.org@SAMDOM.EXAMPLE.COM",
        ] {
            let p = parse_principal(text).unwrap();
            let e = Entry {
                realm: p.realm.clone().unwrap(),
                components: p.components.clone(),
                name_type: keytab::NT_PRINCIPAL,
                timestamp: 0,
                kvno: 1,
                enctype: keytab::ARCFOUR_HMAC,
                key: vec![0; 16],
            };
            assert_eq!(e.principal(), text);
        }
    }

    #[test]
    fn a_new_keytab_never_replaces_a_file_and_append_replaces_same_slots() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.keytab");
        let e = |kvno: u32, enctype: u16, byte: u8| Entry {
            realm: "R".into(),
            components: vec!["a".into()],
            name_type: keytab::NT_PRINCIPAL,
            timestamp: 1,
            kvno,
            enctype,
            key: vec![byte; 16],
        };
        assert_eq!(
            write_keytab(&path, vec![e(1, 23, 1)], WriteMode::Create).unwrap(),
            0
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(write_keytab(&path, vec![e(2, 23, 2)], WriteMode::Create).is_err());
        // Appending keeps kvno 1 and replaces the same slot's key.
        let kept = write_keytab(&path, vec![e(2, 23, 2), e(2, 17, 3)], WriteMode::Append).unwrap();
        assert_eq!(kept, 1);
        let kept = write_keytab(&path, vec![e(2, 23, 9)], WriteMode::Append).unwrap();
        assert_eq!(kept, 2);
        let all = keytab::decode(&std::fs::read(&path).unwrap()).unwrap();
        let summary: Vec<(u32, u16, u8)> =
            all.iter().map(|x| (x.kvno, x.enctype, x.key[0])).collect();
        assert_eq!(summary, vec![(1, 23, 1), (2, 17, 3), (2, 23, 9)]);
        // Replacing drops everything before.
        write_keytab(&path, vec![e(3, 18, 4)], WriteMode::Replace).unwrap();
        assert_eq!(
            keytab::decode(&std::fs::read(&path).unwrap())
                .unwrap()
                .len(),
            1
        );
        // Appending to what is no keytab is refused and leaves it.
        let other = dir.path().join("notes.txt");
        std::fs::write(&other, b"hello").unwrap();
        assert!(write_keytab(&other, vec![e(1, 23, 1)], WriteMode::Append).is_err());
        assert_eq!(std::fs::read(&other).unwrap(), b"hello");
    }
}
