//! `kauri domain provision`, and opening a data folder as a directory: a provisioned
//! domain (its schema read back from the Schema naming context) or a plain directory.
//!
//! A data folder holds `db/` (the database), `secrets.key` (the key that seals password
//! hashes, created at provisioning, mode 0600) and `domain.json` (what was provisioned:
//! its presence marks a domain).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use kauri_db::Db;
use kauri_domain::directory::{stored_schema, Directory};
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::{Schema, SchemaSource};
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use serde::{Deserialize, Serialize};

use crate::profile::directory_config;

/// What `domain.json` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DomainFile {
    /// `SAMDOM.EXAMPLE.COM`.
    pub realm: String,
    /// `SAMDOM`.
    pub netbios_domain: String,
    /// This DC's host name.
    pub dc_name: String,
    /// The domain SID.
    pub domain_sid: String,
    /// The domain's DN.
    pub domain_dn: String,
    /// The Administrator's DN.
    pub administrator: String,
    /// The crypt forms kept beside each new password's NT hash (`CryptSHA256`,
    /// `CryptSHA512`; Samba's "password hash userPassword schemes"). None by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub password_hash_schemes: Vec<String>,
}

impl DomainFile {
    /// Reads a data folder's `domain.json`.
    pub fn load(data: &Path) -> Result<DomainFile> {
        let path = domain_file(data);
        let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Writes a data folder's `domain.json`.
    pub fn save(&self, data: &Path) -> Result<()> {
        let path = domain_file(data);
        std::fs::write(&path, serde_json::to_string_pretty(self)?)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// What a database says of its domain (a copy received over the network has no
    /// `domain.json` of its own): the names, and the Administrator found by its RID.
    pub fn discover(r: &kauri_db::DbRead<'_, LmdbBackend>) -> Result<DomainFile> {
        let info = kauri_domain::directory::DomainInfo::discover(r)?
            .context("the database holds no domain")?;
        let admin_sid = info
            .sid
            .with_rid(kauri_domain::sid::rid::ADMINISTRATOR)
            .to_bytes();
        let administrator = match r.find_eq("objectSid", &admin_sid)? {
            Some(ids) if !ids.is_empty() => r.dn_string(ids[0])?,
            _ => format!("CN=Administrator,CN=Users,{}", info.domain_dn),
        };
        let dc_name = info
            .server
            .as_ref()
            .and_then(|s| {
                s.rdn()
                    .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            })
            .unwrap_or_default();
        Ok(DomainFile {
            realm: info.dns_name.to_ascii_uppercase(),
            netbios_domain: info.netbios.clone(),
            dc_name,
            domain_sid: info.sid.to_string(),
            domain_dn: info.domain_dn.to_string(),
            administrator,
            password_hash_schemes: Vec::new(),
        })
    }
}

/// Options of `kauri domain provision`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProvisionOptions {
    /// DNS name of the domain, e.g. SAMDOM.EXAMPLE.COM.
    #[arg(long)]
    pub realm: String,
    /// NetBIOS name of the domain, e.g. SAMDOM.
    #[arg(long)]
    pub domain: String,
    /// The Administrator's password.
    #[arg(long)]
    pub adminpass: String,
    /// Data folder to create (/var/lib/kauri, the packaged one, for the service user).
    #[arg(long, default_value_os_t = crate::paths::default_data())]
    pub targetdir: PathBuf,
    /// Folder with Microsoft's schema files (default: samba-ad-provision's, else the
    /// built-in core schema).
    #[arg(long)]
    pub schema_dir: Option<PathBuf>,
    /// This DC's host name.
    #[arg(long, default_value = "DC1")]
    pub host_name: String,
    /// The site the DC is placed in.
    #[arg(long, default_value = "Default-First-Site-Name")]
    pub site: String,
    /// The DC's address in its DNS records (repeatable); `kauri serve` keeps them in line
    /// with its configuration afterwards.
    #[arg(long = "host-ip", default_value = "127.0.0.1")]
    pub host_ip: Vec<std::net::IpAddr>,
    /// Crypt forms to keep beside each password's NT hash, comma-separated:
    /// CryptSHA256, CryptSHA512 (none by default; recorded in domain.json).
    #[arg(long, value_delimiter = ',')]
    pub password_hash_schemes: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print nothing (the demo provisions quietly).
    #[arg(skip)]
    pub quiet: bool,
}

/// What provisioning reports.
#[derive(Debug, Serialize)]
struct Report {
    realm: String,
    domain: String,
    domain_dn: String,
    domain_sid: String,
    administrator: String,
    entries: usize,
    schema_objects: usize,
    schema_source: String,
    data: String,
    seconds: f64,
}

fn db_dir(data: &Path) -> PathBuf {
    data.join("db")
}

fn key_file(data: &Path) -> PathBuf {
    data.join("secrets.key")
}

fn domain_file(data: &Path) -> PathBuf {
    data.join("domain.json")
}

/// Whether a data folder holds a provisioned domain.
pub fn is_domain(data: &Path) -> bool {
    domain_file(data).exists()
}

/// Where a schema came from, for people.
pub fn describe(source: &SchemaSource) -> String {
    match source {
        SchemaSource::Files(dir) => format!("Microsoft's published schema from {}", dir.display()),
        SchemaSource::Builtin { load_error: None } => {
            "Kauri's built-in core schema (install samba-ad-provision for the full AD schema)"
                .to_string()
        }
        SchemaSource::Builtin {
            load_error: Some(e),
        } => format!("Kauri's built-in core schema (the schema files did not load: {e})"),
    }
}

/// `kauri domain provision`: nothing is left behind when it fails.
pub fn provision(o: &ProvisionOptions) -> Result<()> {
    if is_domain(&o.targetdir) || db_dir(&o.targetdir).join("data.mdb").exists() {
        bail!(
            "{} already holds a directory; provision into a new target folder",
            o.targetdir.display()
        );
    }
    kauri_domain::directory::check_admin_password(&o.adminpass)?;
    let existed = o.targetdir.exists();
    let made = provision_into(o);
    if made.is_err() {
        // What this run created goes; a folder that was there stays (emptied of ours).
        if existed {
            let _ = std::fs::remove_dir_all(db_dir(&o.targetdir));
            let _ = std::fs::remove_file(key_file(&o.targetdir));
            let _ = std::fs::remove_file(domain_file(&o.targetdir));
        } else {
            let _ = std::fs::remove_dir_all(&o.targetdir);
        }
    }
    made
}

fn provision_into(o: &ProvisionOptions) -> Result<()> {
    let started = Instant::now();
    let schemes = kauri_domain::password::CryptSchemes::parse(&o.password_hash_schemes)
        .context("--password-hash-schemes")?;
    let (schema, source) = match &o.schema_dir {
        Some(dir) => (
            Schema::load_dir(dir)
                .with_context(|| format!("loading the schema from {}", dir.display()))?,
            SchemaSource::Files(dir.clone()),
        ),
        None => Schema::load_default(),
    };
    if !o.json && !o.quiet {
        eprintln!("Schema: {}", describe(&source));
    }
    std::fs::create_dir_all(db_dir(&o.targetdir))
        .with_context(|| format!("creating {}", o.targetdir.display()))?;
    let key = SecretKey::create(key_file(&o.targetdir)).context("creating the secrets key")?;
    let db = Db::open_lmdb(
        &db_dir(&o.targetdir),
        schema.db_config(),
        LmdbOptions::default(),
    )
    .context("creating the database")?;
    let dir = Directory::new(Arc::new(db), schema, Some(key)).context("opening the directory")?;
    dir.set_crypt_schemes(schemes);
    let params = ProvisionParams {
        realm: o.realm.to_ascii_uppercase(),
        netbios_domain: o.domain.to_ascii_uppercase(),
        dc_name: o.host_name.to_ascii_uppercase(),
        domain_sid: Sid::new_domain().context("choosing a domain SID")?,
        site: o.site.clone(),
    };
    let bar = if o.json || o.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(0)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} entries")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("provisioning");
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let made = dir
        .provision(&params, &o.adminpass, Some(&progress))
        .context("provisioning")?;
    ensure_dns(&dir, &o.host_ip).context("creating the DNS zones")?;
    bar.finish_and_clear();
    let file = DomainFile {
        realm: params.realm.clone(),
        netbios_domain: params.netbios_domain.clone(),
        dc_name: params.dc_name.clone(),
        domain_sid: made.domain_sid.clone(),
        domain_dn: made.domain_dn.clone(),
        administrator: made.administrator.clone(),
        password_hash_schemes: o.password_hash_schemes.clone(),
    };
    std::fs::write(
        domain_file(&o.targetdir),
        serde_json::to_string_pretty(&file)?,
    )
    .context("writing domain.json")?;
    let report = Report {
        realm: params.realm,
        domain: params.netbios_domain,
        domain_dn: made.domain_dn,
        domain_sid: made.domain_sid,
        administrator: made.administrator,
        // The domain's objects and its DNS zones and records.
        entries: usize::try_from(dir.db().read()?.record_count()?).unwrap_or(made.entries),
        schema_objects: made.schema_objects,
        schema_source: describe(&source),
        data: o.targetdir.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
    };
    if o.quiet {
        return Ok(());
    }
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("Provisioned {} ({})", report.realm, report.domain);
        println!("  domain:         {}", report.domain_dn);
        println!("  domain SID:     {}", report.domain_sid);
        println!("  administrator:  {}", report.administrator);
        println!(
            "  objects:        {} ({} schema definitions)",
            report.entries, report.schema_objects
        );
        println!("  data:           {}", report.data);
        println!("  took:           {:.2} s", report.seconds);
        println!();
        println!(
            "Serve it with: kauri serve --data {}",
            o.targetdir.display()
        );
    }
    Ok(())
}

/// Opens a data folder as a directory: a domain with its stored schema, or a plain
/// directory with the default one.
pub fn open_directory(data: &Path) -> Result<(Arc<Directory<LmdbBackend>>, SchemaSource)> {
    std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    let (default_schema, source) = Schema::load_default();
    if !is_domain(data) {
        let db = Db::open_lmdb(&db_dir(data), directory_config(), LmdbOptions::default())
            .with_context(|| format!("opening the database in {}", db_dir(data).display()))?;
        let dir = Directory::new(Arc::new(db), default_schema, None)?;
        if let Some(d) = dir.domain() {
            bail!(
                "{} holds the domain {} but no domain.json: it was not provisioned by \
                 `kauri domain provision` (or the file was lost) and cannot be served as a domain",
                data.display(),
                d.domain_dn
            );
        }
        return Ok((Arc::new(dir), source));
    }
    Ok((domain_directory(data, true, default_schema)?, source))
}

/// Gives krbtgt and this DC's account Kerberos keys when they have none (a domain made
/// before Kauri had a KDC); returns the DNs given keys.
pub fn ensure_kerberos_keys(dir: &Directory<LmdbBackend>) -> Result<Vec<String>> {
    if dir.domain().is_none() || dir.secret_key().is_none() {
        return Ok(Vec::new());
    }
    let mut w = dir.db().write()?;
    let done = dir
        .ensure_kerberos_keys(&mut w)
        .context("giving krbtgt and the DC account Kerberos keys")?;
    if done.is_empty() {
        w.abort();
    } else {
        w.commit()?;
        dir.after_commit()?;
    }
    Ok(done)
}

/// Gives the domain its DNS partitions, zones and this DC's records for `addresses`
/// (creating what is missing, moving the DC's addresses), as provisioning and every
/// start do.
pub fn ensure_dns(
    dir: &Directory<LmdbBackend>,
    addresses: &[std::net::IpAddr],
) -> Result<kauri_domain::dns::DnsEnsured> {
    if dir.domain().is_none() {
        return Ok(Default::default());
    }
    let now = kauri_domain::directory::now_secs();
    let mut w = dir.db().write()?;
    let done = dir.ensure_dns(&mut w, addresses, now)?;
    if done == Default::default() {
        w.abort();
    } else {
        w.commit()?;
        dir.after_commit()?;
        dir.rediscover()?;
    }
    Ok(done)
}

/// Gives every object of a domain made before security descriptors existed its
/// descriptor (once; later starts find nothing to do), with a progress line on a terminal.
/// Returns how many objects received one.
pub fn ensure_descriptors(dir: &Directory<LmdbBackend>) -> Result<u64> {
    if dir.domain().is_none() {
        return Ok(0);
    }
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new_spinner()
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_message("security descriptors: objects examined");
    let mut w = dir.db().write()?;
    let given = dir
        .ensure_descriptors(&mut w, Some(&|n| bar.set_position(n)))
        .context("computing security descriptors")?;
    bar.finish_and_clear();
    if given == 0 {
        w.abort();
    } else {
        w.commit()?;
        dir.after_commit()?;
    }
    Ok(given)
}

/// Opens a provisioned domain's folder as a directory. `with_key` loads the key that seals
/// password hashes (needed to set or verify passwords; a renamed lab copy has none yet).
pub fn open_domain_directory(data: &Path, with_key: bool) -> Result<Arc<Directory<LmdbBackend>>> {
    domain_directory(data, with_key, Schema::load_default().0)
}

fn domain_directory(
    data: &Path,
    with_key: bool,
    fallback: Schema,
) -> Result<Arc<Directory<LmdbBackend>>> {
    let key = if with_key {
        Some(SecretKey::load(key_file(data)).context("loading the secrets key")?)
    } else {
        None
    };
    // A copy being made (a renamed backup) has no domain.json yet.
    let schemes = if domain_file(data).exists() {
        DomainFile::load(data)?.password_hash_schemes
    } else {
        Vec::new()
    };
    let schemes = kauri_domain::password::CryptSchemes::parse(&schemes)
        .with_context(|| format!("password_hash_schemes in {}", domain_file(data).display()))?;
    let (db, schema) = open_domain_db_with(data, fallback)?;
    let dir = Directory::new(Arc::new(db), schema, key)?;
    dir.set_crypt_schemes(schemes);
    if dir.domain().is_none() {
        bail!(
            "{} holds a domain (domain.json) but its database holds none; restore it from a \
             backup (`kauri domain backup restore`)",
            data.display()
        );
    }
    Ok(Arc::new(dir))
}

/// A domain's database, configured by the schema stored in its Schema NC.
pub fn open_domain_db(data: &Path) -> Result<Db<LmdbBackend>> {
    open_domain_db_with(data, Schema::load_default().0).map(|(db, _)| db)
}

fn open_domain_db_with(data: &Path, fallback: Schema) -> Result<(Db<LmdbBackend>, Schema)> {
    // A domain folder's database is never created here: opening a missing one would start
    // an empty directory beside the domain's key and description.
    let file = db_dir(data).join("data.mdb");
    if !file.exists() {
        bail!(
            "{} holds a domain (domain.json) but its database {} is missing; restore it from \
             a backup (`kauri domain backup restore`)",
            data.display(),
            file.display()
        );
    }
    let db = Db::open_lmdb_deferred(&db_dir(data), fallback.db_config(), LmdbOptions::default())
        .with_context(|| format!("opening the database in {}", db_dir(data).display()))?;
    let schema = stored_schema(&db)
        .context("reading the schema from the Schema naming context")?
        .unwrap_or(fallback);
    db.adopt_config(schema.db_config())
        .context("bringing the database up to date with its schema")?;
    Ok((db, schema))
}
