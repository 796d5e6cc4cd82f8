//! `kauri serve` and `kauri demo`: open (or create) a database and serve it over LDAP.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use kauri_db::{Db, Dn, Entry};
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::{Server, ServerConfig};

use crate::profile::directory_config;

/// Flags that override the configuration file.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--data DIR`.
    pub data: Option<PathBuf>,
    /// `--listen ADDR:PORT`.
    pub listen: Option<String>,
    /// `--listen-tls ADDR:PORT` (empty string disables LDAPS).
    pub listen_tls: Option<String>,
}

/// The configuration in force: the file (if any) with the flags on top.
pub fn load_config(o: &Overrides) -> Result<ServerConfig> {
    let mut cfg = match &o.config {
        Some(path) => ServerConfig::load(path)?,
        None => ServerConfig::default(),
    };
    if let Some(d) = &o.data {
        cfg.data = d.clone();
    }
    if let Some(l) = &o.listen {
        cfg.listen = l.clone();
    }
    if let Some(l) = &o.listen_tls {
        cfg.listen_tls = l.clone();
    }
    Ok(cfg)
}

fn open_db(data: &Path) -> Result<Arc<Db<kauri_kv::lmdb::LmdbBackend>>> {
    std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    let db = Db::open_lmdb(&data.join("db"), directory_config(), LmdbOptions::default())
        .with_context(|| format!("opening the database in {}", data.join("db").display()))?;
    Ok(Arc::new(db))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// `kauri serve`.
pub fn serve(o: &Overrides) -> Result<()> {
    let cfg = load_config(o)?;
    let db = open_db(&cfg.data)?;
    runtime()?.block_on(async move {
        let server = Server::bind(cfg, db).await?;
        eprintln!("kauri: serving ldap://{}", server.local_addr()?);
        if let Some(a) = server.tls_addr() {
            eprintln!("kauri: serving ldaps://{a}");
        }
        server.run().await;
        Ok(())
    })
}

const DEMO_SUFFIX: &str = "dc=samdom,dc=example,dc=com";

/// Fills an empty database with a small sample tree; returns whether it did.
pub fn sample_tree(db: &Db<kauri_kv::lmdb::LmdbBackend>, user_password: &str) -> Result<bool> {
    let r = db.read()?;
    if !r.naming_contexts()?.is_empty() {
        return Ok(false);
    }
    drop(r);
    let dn = |s: String| Dn::parse(&s).map_err(|e| anyhow::anyhow!("{s}: {e}"));
    let hashed = kauri_ldap::auth::hash_password(user_password.as_bytes())
        .map_err(|e| anyhow::anyhow!("no randomness for a password salt: {e}"))?;
    let mut w = db.write()?;
    w.add_root(
        Entry::new(dn(DEMO_SUFFIX.to_string())?)
            .with("objectClass", &["top", "domain"])
            .with("description", &["Kauri demo domain"]),
    )?;
    // The configuration and schema partitions AD clients look for in the root DSE; they
    // stay empty until the domain layer provisions them.
    w.add_naming_context(
        Entry::new(dn(format!("CN=Configuration,{DEMO_SUFFIX}"))?)
            .with("objectClass", &["top", "configuration"]),
    )?;
    w.add_naming_context(
        Entry::new(dn(format!("CN=Schema,CN=Configuration,{DEMO_SUFFIX}"))?)
            .with("objectClass", &["top", "dMD"]),
    )?;
    for ou in ["People", "Groups", "Computers"] {
        w.add(
            Entry::new(dn(format!("ou={ou},{DEMO_SUFFIX}"))?)
                .with("objectClass", &["top", "organizationalUnit"]),
        )?;
    }
    let people = [
        ("Aroha", "Ngata", "Engineering"),
        ("Wiremu", "Parata", "Engineering"),
        ("Mere", "Tui", "Finance"),
        ("James", "Smith", "Support"),
        ("Priya", "Patel", "Research"),
    ];
    let mut members = Vec::new();
    for (i, (given, sn, dept)) in people.iter().enumerate() {
        let cn = format!("{given} {sn}");
        let uid = given.to_lowercase();
        let user_dn = format!("cn={cn},ou=People,{DEMO_SUFFIX}");
        w.add(
            Entry::new(dn(user_dn.clone())?)
                .with(
                    "objectClass",
                    &["top", "person", "organizationalPerson", "user"],
                )
                .with("cn", &[&cn])
                .with("givenName", &[given])
                .with("sn", &[sn])
                .with("displayName", &[&cn])
                .with("sAMAccountName", &[&uid])
                .with("userPrincipalName", &[&format!("{uid}@samdom.example.com")])
                .with("mail", &[&format!("{uid}@example.com")])
                .with("department", &[dept])
                .with("employeeID", &[&format!("E{:05}", i + 1)])
                .with("userPassword", &[&hashed]),
        )?;
        members.push(user_dn);
    }
    let member_refs: Vec<&str> = members.iter().map(String::as_str).collect();
    w.add(
        Entry::new(dn(format!("cn=Everyone,ou=Groups,{DEMO_SUFFIX}"))?)
            .with("objectClass", &["top", "group"])
            .with("cn", &["Everyone"])
            .with("member", &member_refs),
    )?;
    w.commit()?;
    Ok(true)
}

fn random_password() -> Result<String> {
    let mut raw = [0u8; 12];
    getrandom::fill(&mut raw).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    let alphabet = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    Ok(raw
        .iter()
        .map(|b| alphabet[(*b as usize) % alphabet.len()] as char)
        .collect())
}

/// `kauri demo`: a demo directory in `./kauri-data` (created on first run, reused after),
/// served on 127.0.0.1 with a self-signed TLS pair.
pub fn demo(o: &Overrides) -> Result<()> {
    let mut cfg = load_config(o)?;
    let pw_file = cfg.data.join("admin-password.txt");
    let password = match std::fs::read_to_string(&pw_file) {
        Ok(p) => p.trim().to_string(),
        Err(_) => {
            std::fs::create_dir_all(&cfg.data)
                .with_context(|| format!("creating {}", cfg.data.display()))?;
            let p = random_password()?;
            write_secret(&pw_file, &p)?;
            p
        }
    };
    cfg.admin_dn = format!("cn=admin,{DEMO_SUFFIX}");
    if cfg.listen_ldapi.as_os_str().is_empty() {
        cfg.listen_ldapi = cfg.data.join("ldapi");
    }
    let ldapi = cfg.listen_ldapi.display().to_string().replace('/', "%2F");
    cfg.admin_password = password.clone();
    let db = open_db(&cfg.data)?;
    let created = sample_tree(&db, &password)?;
    let (cert, _) = kauri_ldap::tls::cert_paths(&cfg)?;
    let ca = cert.with_file_name("ca.pem");
    let ca = if ca.exists() { ca } else { cert };
    let data = cfg.data.clone();
    runtime()?.block_on(async move {
        let server = Server::bind(cfg, db).await?;
        let port = server.local_addr()?.port();
        println!(
            "Kauri demo directory {} ({})",
            DEMO_SUFFIX,
            if created { "created" } else { "reused" }
        );
        println!("  data:     {}", data.display());
        println!("  admin:    cn=admin,{DEMO_SUFFIX}");
        println!("  password: {password}   (also in {})", pw_file.display());
        println!("  serving:  ldap://127.0.0.1:{port}");
        if let Some(a) = server.tls_addr() {
            println!("            ldaps://127.0.0.1:{}", a.port());
        }
        println!();
        println!("Try:");
        println!(
            "  ldapsearch -x -H ldap://127.0.0.1:{port} -D cn=admin,{DEMO_SUFFIX} -w '{password}' -b {DEMO_SUFFIX} '(objectClass=person)' cn mail"
        );
        println!("  ldapwhoami -Q -Y EXTERNAL -H ldapi://{ldapi}");
        println!(
            "  LDAPTLS_CACERT={} ldapwhoami -ZZ -x -H ldap://127.0.0.1:{port} -D cn=admin,{DEMO_SUFFIX} -w '{password}'",
            ca.display()
        );
        println!();
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        server.run().await;
        Ok(())
    })
}

fn write_secret(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
