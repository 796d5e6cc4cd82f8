//! `kauri bench kdc-domain`: a domain for Kerberos load tests (`scripts/kdc-bench`) —
//! users `user1`…`userN` with one password (their keys derived on every core), every user
//! in one group (so each PAC walks a group of N members), `user1` at the bottom of ten
//! nested groups, and computers `c1`…`c100` with `host/` names for service tickets. It
//! also times building and signing the PAC of such users in this process.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri_db::{Dn, Entry};
use kauri_domain::directory::{Caller, Change, Directory, Request};
use kauri_domain::password::encode_unicode_pwd;
use kauri_kv::lmdb::LmdbBackend;

/// Users added (and their keys derived) per transaction.
const CHUNK: usize = 2_000;
/// Nested groups above `user1`.
const NESTING: usize = 10;
/// Computers with `host/` service names.
const COMPUTERS: usize = 100;

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// The data folder to create (must not exist).
    pub data: PathBuf,
    /// Users.
    pub users: usize,
    /// Their password.
    pub password: String,
    /// Administrator's password.
    pub admin_password: String,
    /// Show progress.
    pub progress: bool,
}

/// What was built and measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Users added.
    pub users: usize,
    /// Seconds to add them (keys included).
    pub add_seconds: f64,
    /// Microseconds to build and sign the PAC of a member of the N-member group.
    pub pac_us_big_group: f64,
    /// Microseconds for `user1`, ten nested groups deep (and in the big group).
    pub pac_us_nested: f64,
    /// Groups in `user1`'s token.
    pub nested_token_groups: usize,
}

/// Builds the domain (see the module documentation).
pub fn run(o: &Options) -> Result<Report> {
    crate::domain::provision(&crate::domain::ProvisionOptions {
        realm: "SAMDOM.EXAMPLE.COM".into(),
        domain: "SAMDOM".into(),
        adminpass: o.admin_password.clone(),
        targetdir: o.data.clone(),
        schema_dir: None,
        host_name: "DC1".into(),
        site: "Default-First-Site-Name".into(),
        host_ip: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        password_hash_schemes: Vec::new(),
        json: false,
        quiet: true,
    })?;
    let dir = crate::domain::open_domain_directory(&o.data, true)?;
    let domain = dir
        .domain()
        .context("the new folder holds no domain")?
        .domain_dn
        .to_string();
    let started = Instant::now();
    add_users(&dir, o, &domain)?;
    let add_seconds = started.elapsed().as_secs_f64();
    add_groups_and_computers(&dir, o, &domain)?;
    let (pac_us_big_group, _) = time_pac(&dir, "user2")?;
    let (pac_us_nested, nested_token_groups) = time_pac(&dir, "user1")?;
    let report = Report {
        users: o.users,
        add_seconds,
        pac_us_big_group,
        pac_us_nested,
        nested_token_groups,
    };
    // Written last: a folder without it is an interrupted build (scripts/kdc-bench).
    std::fs::write(
        o.data.join("kdc-bench.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    Ok(report)
}

fn system(change: Change) -> Request {
    Request {
        caller: Caller::System,
        encrypted: true,
        change,
    }
}

fn add_users(dir: &Arc<Directory<LmdbBackend>>, o: &Options, domain: &str) -> Result<()> {
    let bar = if o.progress {
        let b = ProgressBar::new(o.users as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} users, {per_sec}, ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let pwd = encode_unicode_pwd(&o.password);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut next = 1usize;
    while next <= o.users {
        let end = (next + CHUNK - 1).min(o.users);
        let entries: Vec<Entry> = (next..=end)
            .map(|i| {
                let name = format!("user{i}");
                let mut e = Entry::new(Dn::parse(&format!("CN={name},CN=Users,{domain}"))?)
                    .with("objectClass", &["user"])
                    .with("sAMAccountName", &[&name])
                    .with(
                        "userPrincipalName",
                        &[&format!("{name}@samdom.example.com")],
                    )
                    .with("userAccountControl", &["66048"]);
                e.push("unicodePwd", vec![pwd.clone()]);
                Ok(e)
            })
            .collect::<Result<_>>()?;
        // Keys are derived on every core before the one writer stores them.
        let changes: Vec<Change> = entries.into_iter().map(Change::Add).collect();
        std::thread::scope(|s| {
            for part in changes.chunks(changes.len().div_ceil(threads).max(1)) {
                let dir = dir.clone();
                s.spawn(move || {
                    for c in part {
                        dir.prepare_passwords(&dir.passwords_to_prepare(c));
                    }
                });
            }
        });
        let mut w = dir.db().write().context("opening a write transaction")?;
        for c in changes {
            dir.apply(&mut w, &system(c)).context("adding a user")?;
        }
        w.commit().context("committing users")?;
        dir.after_commit()?;
        bar.set_position(end as u64);
        next = end + 1;
    }
    bar.finish_and_clear();
    Ok(())
}

fn add_groups_and_computers(dir: &Directory<LmdbBackend>, o: &Options, domain: &str) -> Result<()> {
    let mut w = dir.db().write()?;
    let all = Dn::parse(&format!("CN=Bench All,CN=Users,{domain}"))?;
    dir.apply(
        &mut w,
        &system(Change::Add(
            Entry::new(all.clone())
                .with("objectClass", &["group"])
                .with("sAMAccountName", &["bench-all"]),
        )),
    )?;
    // Members in pieces: one operation writes at most 5,000 linked values (AD's limit).
    let members: Vec<String> = (1..=o.users)
        .map(|i| format!("CN=user{i},CN=Users,{domain}"))
        .collect();
    for piece in members.chunks(5_000) {
        let refs: Vec<&str> = piece.iter().map(String::as_str).collect();
        dir.apply(
            &mut w,
            &system(Change::Modify {
                sd_flags: None,
                dn: all.clone(),
                mods: vec![kauri_db::Modification::new(
                    kauri_db::ModifyOp::Add,
                    "member",
                    &refs,
                )],
                permissive: false,
            }),
        )?;
    }
    let mut inner = format!("CN=user1,CN=Users,{domain}");
    for n in 1..=NESTING {
        let dn = format!("CN=Nest {n},CN=Users,{domain}");
        dir.apply(
            &mut w,
            &system(Change::Add(
                Entry::new(Dn::parse(&dn)?)
                    .with("objectClass", &["group"])
                    .with("sAMAccountName", &[&format!("nest{n}")])
                    .with("member", &[&inner]),
            )),
        )?;
        inner = dn;
    }
    for c in 1..=COMPUTERS {
        let name = format!("c{c}");
        let fqdn = format!("{name}.samdom.example.com");
        let mut e = Entry::new(Dn::parse(&format!("CN={name},CN=Computers,{domain}"))?)
            .with("objectClass", &["computer"])
            .with("sAMAccountName", &[&format!("{}$", name.to_uppercase())])
            .with("userAccountControl", &["4096"])
            .with("dNSHostName", &[&fqdn])
            .with(
                "servicePrincipalName",
                &[&format!("host/{fqdn}"), &format!("host/{name}")],
            )
            .with("msDS-SupportedEncryptionTypes", &["28"]);
        e.push("unicodePwd", vec![encode_unicode_pwd(&o.password)]);
        dir.apply(&mut w, &system(Change::Add(e)))?;
    }
    w.commit()?;
    dir.after_commit()?;
    Ok(())
}

/// Microseconds to build and sign a TGT's PAC for `sam` (mean of many), and its token size.
fn time_pac(dir: &Directory<LmdbBackend>, sam: &str) -> Result<(f64, usize)> {
    use kauri_auth::krb::crypto::{Enctype, Key};
    use kauri_auth::krb::pac::Pac;
    use kauri_auth::krb::signer::KeySigner;
    use kauri_kdc::pac_build::{tgt_contents, PacInput};
    let domain = dir.domain().context("no domain")?;
    let key = Key::random(Enctype::Aes256Sha1).map_err(|e| anyhow::anyhow!("{e}"))?;
    let rounds = 200;
    let mut groups_seen = 0;
    let started = Instant::now();
    for _ in 0..rounds {
        let r = dir.db().read()?;
        let id = dir
            .kdc_find_client(&r, &[sam.to_string()])?
            .with_context(|| format!("{sam} not found"))?;
        let acct = dir.kdc_account(&r, id)?.context("no account")?;
        let policy = dir.kdc_policy(&r, &acct)?;
        let groups: Vec<_> = dir
            .kdc_groups(&r, &acct)?
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        groups_seen = groups.len();
        let contents = tgt_contents(&PacInput {
            acct: &acct,
            domain: &domain,
            groups: &groups,
            times: dir.kdc_password_times(&acct, &policy),
            authtime: 0,
            client_name: sam.to_string(),
            logon_server: "DC1".into(),
            requested: None,
        });
        let mut pac = Pac::from_contents(&contents).map_err(|e| anyhow::anyhow!("{e}"))?;
        let ct = key.etype().checksum_type();
        pac.add_signature_placeholders(ct, ct, false)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        pac.sign(&KeySigner(&key), &KeySigner(&key), None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        std::hint::black_box(pac.encode());
    }
    Ok((
        started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds),
        groups_seen,
    ))
}

/// Whether `path` is free for a new domain.
pub fn check_free(path: &Path) -> Result<()> {
    if path.exists() {
        anyhow::bail!("{} exists; give a new folder", path.display());
    }
    Ok(())
}
