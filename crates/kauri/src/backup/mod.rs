//! `kauri domain backup …`: consistent backups of a domain (from its data folder, or pulled
//! from a running DC), lab copies under new names without secrets, verification, and the
//! restore that builds a new authoritative DC from any of them.
//!
//! Every backup is one read snapshot of the database: LMDB readers see one committed state
//! however long they read, and never block the server's writer, so a backup taken while
//! clients write holds exactly the changes committed before it started. The sealing key
//! does not change after provisioning, so the hashes and the key that unseals them always
//! agree.

mod online;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri::backup::archive;
use kauri_db::db::{TABLES, TABLE_SPECS};
use kauri_db::Db;
use kauri_domain::directory::{
    Caller, Change, Directory, RenameSpec, Request, RestoreSpec, DEFAULT_RID_MARGIN,
};
use kauri_domain::password::SecretKey;
use kauri_kv::dump::{load_dump, write_dump};
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use serde::Serialize;

pub use online::{OnlineOptions, RemoteArgs};

use crate::domain::{is_domain, open_domain_db, open_domain_directory, DomainFile};
use archive::{ArchiveWriter, DumpInfo, Kind, Manifest, RenamedFrom};

/// Options of `kauri domain backup offline`.
#[derive(Debug, Clone, clap::Args)]
pub struct OfflineOptions {
    /// The domain's data folder.
    #[arg(short = 'H', long = "data", default_value_os_t = kauri::paths::default_data())]
    pub data: PathBuf,
    /// Folder to write the archive to (created if missing).
    #[arg(long)]
    pub targetdir: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kauri domain backup rename`.
#[derive(Debug, Clone, clap::Args)]
pub struct RenameOptions {
    /// The new NetBIOS domain name, e.g. LAB.
    pub new_domain: String,
    /// The new DNS realm, e.g. LAB.EXAMPLE.ORG.
    pub new_realm: String,
    /// Copy from this data folder instead of a server.
    #[arg(short = 'H', long = "data", conflicts_with = "server")]
    pub data: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Folder to write the archive to (created if missing).
    #[arg(long)]
    pub targetdir: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kauri domain backup restore`.
#[derive(Debug, Clone, clap::Args)]
pub struct RestoreOptions {
    /// The archive to restore.
    #[arg(long)]
    pub backup_file: PathBuf,
    /// The new DC's data folder (must not exist, or be empty).
    #[arg(long)]
    pub targetdir: PathBuf,
    /// The new DC's host name.
    #[arg(long)]
    pub newservername: String,
    /// The site to place the new DC in [default: the site of the backed-up DC].
    #[arg(long)]
    pub site: Option<String>,
    /// A new password for the Administrator (a renamed backup has none; one is generated
    /// and printed when this is absent).
    #[arg(long)]
    pub adminpass: Option<String>,
    /// How far past the old domain's RID allocations the new DC starts.
    #[arg(long, default_value_t = DEFAULT_RID_MARGIN)]
    pub rid_margin: u32,
    /// Do not run the consistency check on the restored database.
    #[arg(long)]
    pub skip_check: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kauri domain backup verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyOptions {
    /// The archive to verify.
    #[arg(long)]
    pub backup_file: PathBuf,
    /// Print the manifest as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What a backup command reports.
#[derive(Debug, Serialize)]
struct BackupReport {
    archive: String,
    kind: Kind,
    realm: String,
    records: u64,
    highest_usn: u64,
    dump_bytes: u64,
    archive_bytes: u64,
    secrets: bool,
    seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    renamed_from: Option<RenamedFrom>,
}

/// The time now as GeneralizedTime, and a file-name-friendly form of it.
fn now() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let generalized = kauri_db::syntax::generalized_time(secs);
    let stamp = format!("{}-{}", &generalized[..8], &generalized[8..14]);
    (generalized, stamp)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bytes_bar(show: bool, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} {bytes} ({bytes_per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(what.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn length_bar(show: bool, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// What a backup archive says about itself beside the database.
struct About<'a> {
    kind: Kind,
    domain: DomainFile,
    key: Option<&'a [u8]>,
    source: String,
    renamed_from: Option<RenamedFrom>,
}

/// Writes the database of `snapshot` and the rest of a backup into a new archive in
/// `targetdir`; removes the unfinished file when anything fails.
fn write_archive(
    snapshot: &kauri_db::DbRead<'_, LmdbBackend>,
    about: About<'_>,
    targetdir: &Path,
    show: bool,
) -> Result<(PathBuf, Manifest)> {
    let About {
        kind,
        domain,
        key,
        source,
        renamed_from,
    } = about;
    std::fs::create_dir_all(targetdir)
        .with_context(|| format!("creating {}", targetdir.display()))?;
    let (created, stamp) = now();
    let name = format!(
        "kauri-backup-{}-{}-{stamp}.tar.zst",
        domain.realm.to_ascii_lowercase(),
        kind.as_str()
    );
    let path = targetdir.join(name);
    let mut ar = ArchiveWriter::create(&path, kind)?;
    let bar = bytes_bar(show, "dump");
    let written = (|| -> Result<_> {
        if let Some(k) = key {
            ar.add_file(archive::SECRETS_KEY, k)?;
        }
        let progress = |b: u64| bar.set_position(b);
        let mut pieces = ar.dump_writer(&progress);
        let stats = write_dump(snapshot.kv(), TABLES, &mut pieces)?;
        pieces.finish()?;
        Ok(stats)
    })();
    bar.finish_and_clear();
    let stats = match written {
        Ok(s) => s,
        Err(e) => {
            ar.discard();
            return Err(e.context("writing the backup"));
        }
    };
    let manifest = Manifest {
        format: archive::FORMAT,
        kind,
        created,
        kauri_version: env!("CARGO_PKG_VERSION").to_string(),
        source,
        domain,
        renamed_from,
        highest_usn: snapshot.usn()?,
        invocation_id: hex(&snapshot.db().invocation_id()),
        records: stats.per_table.get(1).copied().unwrap_or(0),
        secrets: key.is_some(),
        dump: DumpInfo {
            format: kauri_kv::dump::VERSION,
            tables: TABLES.iter().map(|t| t.to_string()).collect(),
            pairs: stats.pairs,
            bytes: stats.bytes,
        },
        files: Vec::new(),
    };
    let path = ar.finish(manifest.clone())?;
    Ok((path, manifest))
}

fn report(path: &Path, m: &Manifest, started: Instant, json: bool) -> Result<()> {
    let r = BackupReport {
        archive: path.display().to_string(),
        kind: m.kind,
        realm: m.domain.realm.clone(),
        records: m.records,
        highest_usn: m.highest_usn,
        dump_bytes: m.dump.bytes,
        archive_bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        secrets: m.secrets,
        seconds: started.elapsed().as_secs_f64(),
        renamed_from: m.renamed_from.clone(),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("Backed up {} ({} backup)", r.realm, r.kind.as_str());
    if let Some(old) = &r.renamed_from {
        println!("  renamed from:   {} ({})", old.realm, old.netbios_domain);
    }
    println!("  archive:        {}", r.archive);
    println!(
        "  entries:        {} (highest USN {})",
        r.records, r.highest_usn
    );
    println!(
        "  size:           {:.1} MiB ({:.1} MiB uncompressed)",
        r.archive_bytes as f64 / 1048576.0,
        r.dump_bytes as f64 / 1048576.0
    );
    println!(
        "  secrets:        {}",
        if r.secrets {
            "included (keep the archive private)"
        } else {
            "none"
        }
    );
    println!("  took:           {:.2} s", r.seconds);
    Ok(())
}

/// `kauri domain backup offline`: a data folder's domain, from one read snapshot, safe
/// while the server runs.
pub fn offline(o: &OfflineOptions) -> Result<()> {
    let started = Instant::now();
    if !is_domain(&o.data) {
        bail!(
            "{} is not a domain's data folder (no domain.json)",
            o.data.display()
        );
    }
    let domain = DomainFile::load(&o.data)?;
    let key = std::fs::read(o.data.join("secrets.key")).context("reading secrets.key")?;
    let db = open_domain_db(&o.data)?;
    let snapshot = db.read()?;
    let about = About {
        kind: Kind::Offline,
        domain,
        key: Some(&key),
        source: std::fs::canonicalize(&o.data)
            .unwrap_or_else(|_| o.data.clone())
            .display()
            .to_string(),
        renamed_from: None,
    };
    let (path, manifest) = write_archive(&snapshot, about, &o.targetdir, !o.json)?;
    // The folder's server reports it as its last backup (`kauri status`).
    if let Err(e) = kauri_ldap::status::record_backup(&o.data, std::time::SystemTime::now()) {
        eprintln!(
            "kauri: warning: the time of this backup was not recorded in {}: {e}",
            o.data.display()
        );
    }
    report(&path, &manifest, started, o.json)
}

/// `kauri domain backup online`: pulled from a running DC.
pub fn online(o: &OnlineOptions) -> Result<()> {
    let started = Instant::now();
    let server = o.remote.server()?;
    let copy = Copy::new_beside(&o.targetdir)?;
    let key = online::pull(&o.remote, true, |input, expected| {
        copy.load(input, expected, !o.json)
    })?;
    let db = open_domain_db(copy.folder.path())?;
    let snapshot = db.read()?;
    let domain = DomainFile::discover(&snapshot)?;
    let about = About {
        kind: Kind::Online,
        domain,
        key: key.as_deref(),
        source: server,
        renamed_from: None,
    };
    let (path, manifest) = write_archive(&snapshot, about, &o.targetdir, !o.json)?;
    report(&path, &manifest, started, o.json)
}

/// `kauri domain backup verify`.
pub fn verify(o: &VerifyOptions) -> Result<()> {
    let bar = length_bar(!o.json, "verify");
    let v = archive::verify(&o.backup_file, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    if o.json {
        println!("{}", serde_json::to_string_pretty(&v.manifest)?);
        return Ok(());
    }
    let m = &v.manifest;
    println!(
        "{}: a sound Kauri backup (format {})",
        o.backup_file.display(),
        m.format
    );
    println!("  kind:           {} from {}", m.kind.as_str(), m.source);
    println!(
        "  domain:         {} ({}), DC {}",
        m.domain.realm, m.domain.netbios_domain, m.domain.dc_name
    );
    println!("  taken:          {}", m.created);
    println!(
        "  entries:        {} (highest USN {})",
        m.records, m.highest_usn
    );
    println!(
        "  secrets:        {}",
        if m.secrets { "included" } else { "none" }
    );
    println!("  members:        {} checked", m.files.len() + 1);
    Ok(())
}

/// A copy of a domain in a temporary folder, for a rename: loaded from a dump stream (a
/// server) or copied from a data folder.
struct Copy {
    folder: tempfile::TempDir,
}

impl Copy {
    fn new_beside(targetdir: &Path) -> Result<Copy> {
        std::fs::create_dir_all(targetdir)
            .with_context(|| format!("creating {}", targetdir.display()))?;
        let folder = tempfile::Builder::new()
            .prefix(".kauri-copy-")
            .tempdir_in(targetdir)
            .context("creating a work folder")?;
        Ok(Copy { folder })
    }

    fn db_dir(&self) -> PathBuf {
        self.folder.path().join("db")
    }

    /// Loads a dump into the copy's (new, empty) database.
    fn load(&self, input: &mut dyn Read, expected: Option<u64>, show: bool) -> Result<()> {
        let kv = LmdbBackend::open_shaped(&self.db_dir(), TABLE_SPECS, load_options(expected))?;
        let bar = bytes_bar(show, "load");
        let progress = |b: u64| bar.set_position(b);
        load_dump(&kv, TABLES, input, Some(&progress))?;
        bar.finish_and_clear();
        kv.sync()?;
        Ok(())
    }
}

/// LMDB settings for loading a dump of `bytes`: a map that holds it without growing, and
/// no sync per batch (the loader syncs once at the end; a crash only loses the copy).
fn load_options(bytes: Option<u64>) -> LmdbOptions {
    let want = bytes.unwrap_or(0).saturating_mul(3) / 2 + (64 << 20);
    LmdbOptions {
        map_size: (want as usize).max(1 << 30).next_multiple_of(1 << 20),
        durable: false,
        ..LmdbOptions::default()
    }
}

/// `kauri domain backup rename`: a lab copy under new names, without secrets.
pub fn rename(o: &RenameOptions) -> Result<()> {
    let started = Instant::now();
    let copy = Copy::new_beside(&o.targetdir)?;
    let (old, source) = match &o.data {
        Some(data) => {
            if !is_domain(data) {
                bail!(
                    "{} is not a domain's data folder (no domain.json)",
                    data.display()
                );
            }
            let db = open_domain_db(data)?;
            db.kv()
                .copy_to(&copy.db_dir(), true)
                .context("copying the database")?;
            (
                DomainFile::load(data)?,
                std::fs::canonicalize(data)
                    .unwrap_or_else(|_| data.clone())
                    .display()
                    .to_string(),
            )
        }
        None => {
            let server = o.remote.server()?;
            online::pull(&o.remote, false, |input, expected| {
                copy.load(input, expected, !o.json)
            })?;
            let db = open_domain_db(copy.folder.path())?;
            let r = db.read()?;
            (DomainFile::discover(&r)?, server)
        }
    };
    let dir = open_domain_directory(copy.folder.path(), false)?;
    let renamed = dir
        .rename_domain(&RenameSpec {
            realm: o.new_realm.clone(),
            netbios: o.new_domain.clone(),
        })
        .context("renaming the copy")?;
    let snapshot = dir.db().read()?;
    let mut domain = DomainFile::discover(&snapshot)?;
    domain.dc_name = old.dc_name.clone();
    let about = About {
        kind: Kind::Rename,
        domain,
        key: None,
        source,
        renamed_from: Some(RenamedFrom {
            realm: old.realm.clone(),
            netbios_domain: old.netbios_domain.clone(),
            domain_dn: renamed.old_domain_dn.clone(),
        }),
    };
    let (path, manifest) = write_archive(&snapshot, about, &o.targetdir, !o.json)?;
    drop(snapshot);
    drop(dir);
    report(&path, &manifest, started, o.json)
}

/// What a restore reports.
#[derive(Debug, Serialize)]
struct RestoreOutcome {
    data: String,
    realm: String,
    dc_name: String,
    dc_computer: String,
    ntds_settings: String,
    dc_sid: String,
    removed_dcs: Vec<String>,
    rid_pool: (u32, u32),
    next_available_rid: u32,
    records: u64,
    backup_kind: Kind,
    krbtgt_rotated: KrbtgtRotated,
    #[serde(skip_serializing_if = "Option::is_none")]
    administrator_password: Option<String>,
    seconds: f64,
}

/// What a restore did to krbtgt's keys.
#[derive(Debug, Serialize)]
struct KrbtgtRotated {
    /// The krbtgt account.
    dn: String,
    /// How many times its keys were replaced (2).
    times: u32,
    /// Its key version now.
    kvno: u32,
}

/// `kauri domain backup restore`.
pub fn restore(o: &RestoreOptions) -> Result<()> {
    let started = Instant::now();
    let target = &o.targetdir;
    if target.exists() {
        let empty = std::fs::read_dir(target)
            .with_context(|| format!("reading {}", target.display()))?
            .next()
            .is_none();
        if !empty {
            bail!(
                "{} is not empty; restore into a new folder",
                target.display()
            );
        }
    }
    kauri_domain::provision::check_dc_name(&o.newservername)
        .map_err(|e| anyhow::anyhow!("--newservername: {e}"))?;
    let show = !o.json;
    let bar = length_bar(show, "verify");
    let verified = archive::verify(&o.backup_file, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    let m = &verified.manifest;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let work = tempfile::Builder::new()
        .prefix(".kauri-restore-")
        .tempdir_in(&parent)
        .context("creating a work folder")?;
    let data = work.path();

    // The database, with a new invocation id.
    {
        let kv = LmdbBackend::open_shaped(
            &data.join("db"),
            TABLE_SPECS,
            load_options(Some(m.dump.bytes)),
        )?;
        let bar = length_bar(show, "load");
        bar.set_length(m.dump.bytes);
        archive::with_dump(&o.backup_file, |input| {
            load_dump(&kv, TABLES, input, Some(&|b| bar.set_position(b)))?;
            Ok(())
        })?;
        bar.finish_and_clear();
        Db::<LmdbBackend>::retire_invocation(&kv)?;
        kv.sync()?;
    }
    match &verified.secrets_key {
        Some(bytes) => {
            let key: [u8; kauri_domain::password::KEY_LEN] = bytes
                .as_slice()
                .try_into()
                .context("the archive's sealing key has the wrong length")?;
            SecretKey::from_bytes(key).save_new(data.join("secrets.key"))?;
        }
        // A renamed copy's hashes are gone: the new DC seals with a key of its own.
        None => {
            SecretKey::create(data.join("secrets.key"))?;
        }
    }
    let mut domain = m.domain.clone();
    domain.dc_name = o.newservername.to_ascii_uppercase();
    domain.save(data)?;

    let dir = open_domain_directory(data, true)?;
    let made = dir
        .become_restored_dc(&RestoreSpec {
            dc_name: o.newservername.clone(),
            site: o.site.clone(),
            rid_margin: o.rid_margin,
        })
        .context("making the restored database a DC of its own")?;
    let password = match (&o.adminpass, m.kind) {
        (Some(p), _) => Some(p.clone()),
        (None, Kind::Rename) => Some(
            kauri_domain::password::generate_password()
                .map_err(|e| anyhow::anyhow!("generating a password: {e}"))?,
        ),
        (None, _) => None,
    };
    if let Some(p) = &password {
        set_password(&dir, &domain.administrator, p)
            .context("setting the Administrator's password")?;
    }
    // As AD's restore does: krbtgt's keys rotated twice, so that neither the keys of the
    // backup nor the ones before them (both accepted by a KDC) decrypt anything here, and
    // no ticket issued before the backup was taken is honoured by the new DC.
    let mut krbtgt = None;
    for _ in 0..2 {
        krbtgt = Some(crate::kerberos::rotate_krbtgt(&dir).context("rotating krbtgt's keys")?);
    }
    let krbtgt = krbtgt.context("krbtgt was not rotated")?;
    if !o.skip_check {
        let bar = length_bar(show, "check");
        let report = dir.db().check(
            false,
            Some(&|done, total| {
                bar.set_length(total);
                bar.set_position(done);
            }),
        )?;
        bar.finish_and_clear();
        let domain_report = dir.check_domain()?;
        if !report.is_clean() || !domain_report.problems.is_empty() {
            let mut lines: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
            lines.extend(
                domain_report
                    .problems
                    .iter()
                    .map(|p| format!("{}: {}", p.dn, p.what)),
            );
            lines.truncate(20);
            bail!(
                "the restored database is not consistent, so nothing was kept (run `kauri \
                 dbcheck --fix` where the backup came from, or pass --skip-check):\n  {}",
                lines.join("\n  ")
            );
        }
    }
    let records = dir.db().read()?.record_count()?;
    drop(dir);
    // The folder appears whole or not at all.
    let work = work.keep();
    if target.exists() {
        std::fs::remove_dir(target).with_context(|| format!("replacing {}", target.display()))?;
    }
    std::fs::rename(&work, target)
        .with_context(|| format!("moving the restored domain to {}", target.display()))?;
    let out = RestoreOutcome {
        data: target.display().to_string(),
        realm: domain.realm.clone(),
        dc_name: domain.dc_name.clone(),
        dc_computer: made.dc_computer,
        ntds_settings: made.ntds_settings,
        dc_sid: made.dc_sid,
        removed_dcs: made.removed_dcs,
        rid_pool: made.rid_pool,
        next_available_rid: made.next_available_rid,
        records,
        backup_kind: m.kind,
        krbtgt_rotated: KrbtgtRotated {
            dn: krbtgt.dn,
            times: 2,
            kvno: krbtgt.kvno,
        },
        administrator_password: if o.adminpass.is_none() {
            password
        } else {
            None
        },
        seconds: started.elapsed().as_secs_f64(),
    };
    if o.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "Restored {} ({} backup) as DC {}",
        out.realm,
        out.backup_kind.as_str(),
        out.dc_name
    );
    println!("  data:           {}", out.data);
    println!("  DC account:     {} ({})", out.dc_computer, out.dc_sid);
    println!("  NTDS Settings:  {}", out.ntds_settings);
    for old in &out.removed_dcs {
        println!("  removed DC:     {old}");
    }
    println!(
        "  RID pool:       {}-{} (the domain hands out from {} on)",
        out.rid_pool.0, out.rid_pool.1, out.next_available_rid
    );
    println!("  entries:        {}", out.records);
    println!(
        "  krbtgt:         keys rotated {} times (now kvno {}): Kerberos tickets issued \
         before the restore are refused",
        out.krbtgt_rotated.times, out.krbtgt_rotated.kvno
    );
    if let Some(p) = &out.administrator_password {
        println!("  Administrator password: {p}");
    }
    println!("  took:           {:.2} s", out.seconds);
    println!();
    println!("Serve it with: kauri serve --data {}", out.data);
    Ok(())
}

/// Sets an account's password as the server would for an administrator.
fn set_password(dir: &Directory<LmdbBackend>, dn: &str, password: &str) -> Result<()> {
    let dn = kauri_db::Dn::parse(dn).map_err(|e| anyhow::anyhow!("{dn}: {e}"))?;
    let mut w = dir.db().write()?;
    dir.apply(
        &mut w,
        &Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Modify {
                sd_flags: None,
                dn,
                mods: vec![kauri_db::Modification {
                    op: kauri_db::ModifyOp::Replace,
                    attr: "unicodePwd".into(),
                    values: vec![kauri_domain::password::encode_unicode_pwd(password)],
                }],
                permissive: false,
            },
        },
    )?;
    w.commit()?;
    Ok(())
}
