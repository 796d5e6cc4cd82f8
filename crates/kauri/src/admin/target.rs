//! Where an object-management command works: a local data folder or a remote server,
//! behind one trait, so every command is written once and answers the same way (and
//! refuses with the same LDAP result codes) wherever it runs.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use kauri_db::{Modification, ModifyOp};

/// How to reach a directory and who to be there.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// A domain's data folder, or a server: ldap://host[:port] (StartTLS is used),
    /// ldaps://host[:port] or ldapi://<socket path, %2F for />. The data folder is
    /// /var/lib/kauri for the service user unless given.
    #[arg(short = 'H', long = "url", default_value_t = kauri::paths::default_data_text(), global = true)]
    pub url: String,
    #[command(flatten)]
    pub credentials: Credentials,
}

/// Who to bind as on a server, and how to trust it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Credentials {
    /// The account to bind as: a DN, a UPN (name@realm) or DOMAIN\name; `NAME%PASSWORD`
    /// gives the password too, as samba-tool takes it.
    #[arg(short = 'U', long = "username", global = true)]
    pub username: Option<String>,
    /// Its password (prefer --bind-password-file or the prompt: arguments are visible to
    /// other users of the machine).
    #[arg(short = 'w', long, global = true)]
    pub bind_password: Option<String>,
    /// A file whose first line is the password.
    #[arg(long, global = true)]
    pub bind_password_file: Option<PathBuf>,
    /// The CA certificate(s) to trust for the server's certificate (PEM) [default:
    /// $LDAPTLS_CACERT, else the system's].
    #[arg(long, global = true)]
    pub cacert: Option<PathBuf>,
    /// Do not verify the server's certificate (labs only).
    #[arg(long, global = true)]
    pub insecure_tls: bool,
}

impl Credentials {
    /// The account and its password: given, after `%` in `-U`, from the file, or asked
    /// for on the terminal. `None` when no account was given.
    pub fn account(&self) -> Result<Option<(String, String)>> {
        let Some(user) = &self.username else {
            return Ok(None);
        };
        if self.bind_password.is_none() && self.bind_password_file.is_none() {
            if let Some((name, password)) = user.split_once('%') {
                return Ok(Some((name.to_string(), password.to_string())));
            }
        }
        Ok(Some((user.clone(), self.password()?)))
    }

    /// The password: given, from the file, or asked for on the terminal.
    fn password(&self) -> Result<String> {
        if let Some(p) = &self.bind_password {
            return Ok(p.clone());
        }
        if let Some(f) = &self.bind_password_file {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            return Ok(text.lines().next().unwrap_or_default().to_string());
        }
        let who = self.username.as_deref().unwrap_or("the account");
        rpassword::prompt_password(format!("Password for {who}: "))
            .context("reading the password from the terminal (or pass --bind-password-file)")
    }
}

/// The scope of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The entry itself.
    Base,
    /// Its children.
    One,
    /// The entry and everything below it.
    Sub,
}

/// Attribute descriptions with their values, as entries carry them.
pub type Attrs = Vec<(String, Vec<Vec<u8>>)>;

/// One entry found: its DN and the attributes asked for (values as bytes).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The entry's DN.
    pub dn: String,
    /// Attribute descriptions and values, as the directory names them.
    pub attrs: Attrs,
}

impl Found {
    /// Every value of an attribute (case-insensitive name), as text.
    pub fn texts(&self, name: &str) -> Vec<String> {
        self.attrs
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.iter().map(|x| String::from_utf8_lossy(x).into_owned()))
            .collect()
    }

    /// The first value of an attribute, as text.
    pub fn text(&self, name: &str) -> Option<String> {
        self.texts(name).into_iter().next()
    }

    /// The first value of an integer attribute.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.text(name).and_then(|t| t.trim().parse().ok())
    }

    /// The raw values of an attribute.
    pub fn bytes(&self, name: &str) -> Vec<Vec<u8>> {
        self.attrs
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.iter().cloned())
            .collect()
    }

    /// Whether `objectClass` holds `class`.
    pub fn is(&self, class: &str) -> bool {
        self.texts("objectClass")
            .iter()
            .any(|c| c.eq_ignore_ascii_case(class))
    }
}

/// An operation the directory refused: its LDAP result code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (LDAP result {code}, {})", kauri_ldap_client::code_name(kauri_ldap_proto::ResultCode(*.code)))]
pub struct Refused {
    /// The LDAP result code.
    pub code: u32,
    /// The directory's diagnostic message.
    pub message: String,
}

/// What a refused or failed operation returns.
pub type OpResult<T = ()> = std::result::Result<T, anyhow::Error>;

/// One change, for commands that make many (an LDIF import).
#[derive(Debug, Clone)]
pub enum Op {
    /// Add an entry.
    Add {
        /// Its DN.
        dn: String,
        /// Its attributes.
        attrs: Attrs,
    },
    /// Modify an entry.
    Modify {
        /// Its DN.
        dn: String,
        /// The changes, all or none.
        mods: Vec<Modification>,
    },
    /// Delete an entry (with `tree`, its subtree too).
    Delete {
        /// Its DN.
        dn: String,
        /// The tree-delete control.
        tree: bool,
    },
    /// Rename and/or move an entry.
    Rename {
        /// Its DN.
        dn: String,
        /// The new RDN.
        new_rdn: String,
        /// Whether the old RDN's values go.
        delete_old_rdn: bool,
        /// The new parent.
        new_parent: Option<String>,
    },
}

/// The names of the domain a target serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainNames {
    /// `DC=samdom,DC=example,DC=com`.
    pub dn: String,
    /// `samdom.example.com`.
    pub dns_name: String,
    /// `SAMDOM`.
    pub netbios: String,
}

/// A directory the commands read and change: the same calls, locally or over LDAP.
pub trait Target {
    /// The domain served.
    fn domain(&self) -> &DomainNames;

    /// Searches; `attrs` empty means every attribute a client may read. Tombstones are
    /// not returned.
    fn search(
        &mut self,
        base: &str,
        scope: Scope,
        filter: &str,
        attrs: &[&str],
        each: &mut dyn FnMut(Found) -> Result<()>,
    ) -> OpResult;

    /// Adds an entry.
    fn add(&mut self, dn: &str, attrs: Attrs) -> OpResult;

    /// Modifies an entry, all changes or none.
    fn modify(&mut self, dn: &str, mods: Vec<Modification>) -> OpResult;

    /// Deletes an entry (with `tree`, everything below it too).
    fn delete(&mut self, dn: &str, tree: bool) -> OpResult;

    /// Renames and/or moves an entry; the old RDN's values go.
    fn rename(&mut self, dn: &str, new_rdn: &str, new_parent: Option<&str>) -> OpResult {
        self.rename_with(dn, new_rdn, true, new_parent)
    }

    /// Renames and/or moves an entry, keeping the old RDN's values unless
    /// `delete_old_rdn`.
    fn rename_with(
        &mut self,
        dn: &str,
        new_rdn: &str,
        delete_old_rdn: bool,
        new_parent: Option<&str>,
    ) -> OpResult;

    /// The local data folder behind this target, when it is one (for the commands that
    /// read the database directly, faster than through searches).
    fn as_local(&self) -> Option<&super::local::LocalTarget> {
        None
    }

    /// Applies one change.
    fn apply(&mut self, op: Op) -> OpResult {
        match op {
            Op::Add { dn, attrs } => self.add(&dn, attrs),
            Op::Modify { dn, mods } => self.modify(&dn, mods),
            Op::Delete { dn, tree } => self.delete(&dn, tree),
            Op::Rename {
                dn,
                new_rdn,
                delete_old_rdn,
                new_parent,
            } => self.rename_with(&dn, &new_rdn, delete_old_rdn, new_parent.as_deref()),
        }
    }

    /// Applies changes in order, each on its own (one failing leaves the others as they
    /// are); returns one result per change. With `stop_at_error`, nothing after the
    /// first failure is applied and its results are left out. Targets apply them faster
    /// than one by one: in one transaction locally, pipelined over LDAP.
    fn apply_batch(&mut self, ops: Vec<Op>, stop_at_error: bool) -> Result<Vec<OpResult>> {
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            let r = self.apply(op);
            let failed = r.is_err();
            out.push(r);
            if failed && stop_at_error {
                break;
            }
        }
        Ok(out)
    }

    /// Every entry found, collected.
    fn search_all(
        &mut self,
        base: &str,
        scope: Scope,
        filter: &str,
        attrs: &[&str],
    ) -> OpResult<Vec<Found>> {
        let mut out = Vec::new();
        self.search(base, scope, filter, attrs, &mut |f| {
            out.push(f);
            Ok(())
        })?;
        Ok(out)
    }

    /// The one entry at `dn`, if it exists.
    fn read(&mut self, dn: &str, attrs: &[&str]) -> OpResult<Option<Found>> {
        match self.search_all(dn, Scope::Base, "(objectClass=*)", attrs) {
            Ok(mut v) => Ok(v.pop()),
            Err(e) if is_code(&e, 32) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces one attribute's values.
    fn replace(&mut self, dn: &str, attr: &str, values: &[&str]) -> OpResult {
        self.modify(dn, vec![Modification::new(ModifyOp::Replace, attr, values)])
    }

    /// The object's `nTSecurityDescriptor` as the directory returns it with the SD flags
    /// control (1.2.840.113556.1.4.801) naming the parts in `flags` (owner 1, group 2,
    /// DACL 4, SACL 8); `None` when the object has none. Without the control a server
    /// need not return the descriptor to a `*` read, and returns the SACL to no one but
    /// administrators; this default reads every part and keeps those asked for.
    fn read_descriptor(&mut self, dn: &str, flags: u32) -> OpResult<Option<Vec<u8>>> {
        let found = self.read(dn, &[SD_ATTR])?.ok_or_else(|| Refused {
            code: 32,
            message: format!("no such object: {dn}"),
        })?;
        let Some(bytes) = found.bytes(SD_ATTR).into_iter().next() else {
            return Ok(None);
        };
        // What cannot be parsed goes back as it is, for the caller to report.
        match kauri_domain::security::SecurityDescriptor::from_bytes(&bytes) {
            Ok(sd) => Ok(Some(sd.only(flags).to_bytes().unwrap_or(bytes))),
            Err(_) => Ok(Some(bytes)),
        }
    }

    /// Replaces the parts of the object's `nTSecurityDescriptor` that `flags` names with
    /// those of `value` (a self-relative descriptor), as a modify with the SD flags
    /// control does; the directory then re-propagates inheritance below the object.
    fn write_descriptor(&mut self, dn: &str, value: Vec<u8>, flags: u32) -> OpResult {
        let _ = (dn, value, flags);
        Err(anyhow::anyhow!(
            "this target cannot write a security descriptor part by part"
        ))
    }

    /// The SIDs of every group the account at `dn` belongs to, transitively, its primary
    /// group included (the constructed `tokenGroups`), in their binary form.
    fn token_groups(&mut self, dn: &str) -> OpResult<Vec<Vec<u8>>> {
        let found = self.read(dn, &["tokenGroups"])?.ok_or_else(|| Refused {
            code: 32,
            message: format!("no such object: {dn}"),
        })?;
        Ok(found.bytes("tokenGroups"))
    }
}

/// The attribute holding an object's security descriptor.
pub const SD_ATTR: &str = "nTSecurityDescriptor";

/// Whether an error is a refusal with this LDAP result code.
pub fn is_code(e: &anyhow::Error, code: u32) -> bool {
    e.downcast_ref::<Refused>().is_some_and(|r| r.code == code)
}

/// Opens the target the arguments name.
pub fn open(args: &TargetArgs) -> Result<Box<dyn Target>> {
    let url = args.url.as_str();
    if url.starts_with("ldap://") || url.starts_with("ldaps://") || url.starts_with("ldapi://") {
        return Ok(Box::new(super::remote::RemoteTarget::connect(
            url,
            &args.credentials,
        )?));
    }
    if url.contains("://") {
        bail!("{url}: a target is a data folder or an ldap://, ldaps:// or ldapi:// URL");
    }
    Ok(Box::new(super::local::LocalTarget::open(&PathBuf::from(
        url,
    ))?))
}
