//! The `kauri` command: the server, the demo, domain provisioning, object management,
//! LDIF, database care, backups and benchmarks.

mod admin;
mod audit_cmd;
mod backup;
mod bench_access;
mod bench_admin;
mod bench_auth;
mod bench_db;
mod bench_dns;
mod bench_domain;
mod bench_kdc;
mod bench_ldap;
mod dbcmd;
mod kerberos;
mod ldifcmd;
mod logging;
mod manual;
mod populate;
mod serve;
mod service;
mod status;
mod traffic;

use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};
use kauri::{domain, ldif, ldif_read, profile};

/// Entries are many small vectors made and freed by the million; mimalloc's per-thread
/// pages keep that off glibc's arena locks and free lists.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `kauri --version`: the release, and the storage format this build writes (it upgrades
/// older databases to it and refuses newer ones).
fn version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (storage format {})",
            env!("CARGO_PKG_VERSION"),
            kauri_db::db::STORE_FORMAT
        )
    })
}

/// Kauri: an Active Directory-compatible domain controller.
#[derive(Debug, Parser)]
#[command(name = "kauri", version = version(), about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a directory over LDAP.
    Serve {
        #[command(flatten)]
        opts: ServeOpts,
    },
    /// Create (or reuse) a demo domain in ./kauri-data (/var/lib/kauri for the service
    /// user) and serve it on 127.0.0.1.
    Demo {
        #[command(flatten)]
        opts: ServeOpts,
    },
    /// A running server's version, uptime, listeners, connections, load, database and
    /// last backup, from its metrics endpoint or (with -H) over LDAP.
    Status(status::StatusOptions),
    /// Benchmarks with published numbers.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Care of a local database folder.
    Db {
        #[command(subcommand)]
        what: DbCommand,
    },
    /// Active Directory domains.
    Domain {
        #[command(subcommand)]
        what: DomainCommand,
    },
    /// Check a data folder (same as `db check`): indexes, hierarchy, links, and for a
    /// domain every object against the schema; exit code 1 when inconsistent.
    Dbcheck {
        /// The data folder (or its database folder).
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Repair what a re-index repairs.
        #[arg(long)]
        fix: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild every index and the hierarchy tables (same as `db reindex`).
    Reindex {
        /// The data folder (or its database folder).
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// LDIF (RFC 2849) out of and into a data folder or a server.
    Ldif {
        #[command(subcommand)]
        what: LdifCommand,
    },
    /// User accounts.
    User {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::user::UserCommand,
    },
    /// Groups.
    Group {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::group::GroupCommand,
    },
    /// Organizational units.
    Ou {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::ou::OuCommand,
    },
    /// Computer accounts.
    Computer {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::computer::ComputerCommand,
    },
    /// AD-integrated DNS: zones and records.
    Dns {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::dns::DnsCommand,
    },
    /// Security descriptors of directory objects: show them (or what one principal may
    /// do), add and remove ACEs, change owners.
    Dsacl {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::dsacl::DsaclCommand,
    },
    /// The audit log: every authentication and change, with Windows event IDs, read
    /// back and filtered (or followed as it is written).
    Audit(audit_cmd::AuditOptions),
    /// Traffic tools: populate a domain, summarize captures, learn a model, replay it
    /// against any domain controller, and chart the runs.
    Traffic {
        #[command(subcommand)]
        what: traffic::TrafficCommand,
    },
    /// Contacts.
    Contact {
        #[command(flatten)]
        target: admin::TargetArgs,
        /// Print the result as JSON.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        what: admin::contact::ContactCommand,
    },
    /// Shell completions (bash, zsh, fish, elvish, powershell), on standard output.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Manual pages for `kauri` and each of its subcommands, written into a folder.
    Man {
        /// The folder for `kauri.1`, `kauri-serve.1`, …
        dir: PathBuf,
        /// Print the files written as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum LdifCommand {
    /// Every entry (or a subtree, or the matches of a filter) as LDIF, parents before
    /// children; passwords and other secrets are never written.
    Export(ldifcmd::ExportOptions),
    /// Apply an LDIF file: content records are added; change records (add, delete,
    /// modify, moddn) are applied as they say.
    Import(ldifcmd::ImportOptions),
}

#[derive(Debug, Subcommand)]
enum DomainCommand {
    /// Create a new domain (a new forest) in an empty data folder.
    Provision(domain::ProvisionOptions),
    /// Backups, lab copies and restores.
    Backup {
        #[command(subcommand)]
        what: BackupCommand,
    },
    /// Write accounts' Kerberos keys to an MIT keytab, for services outside the DC.
    ///
    /// The current keys (AES256, AES128, RC4) of the principals named, by default this
    /// DC's account under its name and every servicePrincipalName. An existing file is
    /// replaced only with --force, or added to with --append. The keys stay valid until
    /// the account's password changes; export again then.
    Exportkeytab(kerberos::ExportKeytabOptions),
    /// The krbtgt account, whose keys sign every ticket.
    Krbtgt {
        #[command(subcommand)]
        what: kerberos::KrbtgtCommand,
    },
}

#[derive(Debug, Subcommand)]
enum BackupCommand {
    /// A consistent copy of a data folder's domain, safe while the server runs.
    Offline(backup::OfflineOptions),
    /// A consistent copy pulled from a running DC (as an administrator, over TLS).
    Online(backup::OnlineOptions),
    /// A lab copy: the domain renamed, every secret removed.
    Rename(backup::RenameOptions),
    /// A new authoritative DC built from a backup.
    Restore(backup::RestoreOptions),
    /// Check an archive (checksums, format) without restoring it.
    Verify(backup::VerifyOptions),
}

#[derive(Debug, clap::Args)]
struct ServeOpts {
    /// Configuration file (TOML); every setting has a default. Run as the service user,
    /// /etc/kauri/kauri.toml unless given.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Data folder (database, TLS pair); overrides the file (default ./kauri-data,
    /// /var/lib/kauri for the service user).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Plain LDAP address, e.g. 127.0.0.1:3389; overrides the file.
    #[arg(long)]
    listen: Option<String>,
    /// LDAPS address, e.g. 127.0.0.1:3636 ("" to disable); overrides the file.
    #[arg(long)]
    listen_tls: Option<String>,
    /// Global catalog address, e.g. 127.0.0.1:3268 ("" to disable); overrides the file.
    #[arg(long)]
    listen_gc: Option<String>,
    /// Global catalog address with TLS, e.g. 127.0.0.1:3269 ("" to disable).
    #[arg(long)]
    listen_gc_tls: Option<String>,
    /// Kerberos KDC address, TCP and UDP, e.g. 127.0.0.1:88 ("" to disable).
    #[arg(long)]
    listen_kdc: Option<String>,
    /// Kerberos password-change address, TCP and UDP, e.g. 127.0.0.1:464 ("" to disable).
    #[arg(long)]
    listen_kpasswd: Option<String>,
    /// DNS address, TCP and UDP, e.g. 127.0.0.1:53 ("" to disable).
    #[arg(long)]
    listen_dns: Option<String>,
}

impl ServeOpts {
    fn overrides(&self) -> serve::Overrides {
        serve::Overrides {
            config: self.config.clone(),
            data: self.data.clone(),
            listen: self.listen.clone(),
            listen_tls: self.listen_tls.clone(),
            listen_gc: self.listen_gc.clone(),
            listen_gc_tls: self.listen_gc_tls.clone(),
            listen_kdc: self.listen_kdc.clone(),
            listen_kpasswd: self.listen_kpasswd.clone(),
            listen_dns: self.listen_dns.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// A domain for Kerberos load tests (scripts/kdc-bench): users user1…userN with one
    /// password, one group of all of them, ten nested groups above user1, computers with
    /// host/ names; prints how long a PAC takes to build and sign for such users.
    KdcDomain {
        /// Users.
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// Their password.
        #[arg(long, default_value = "Kdc.Bench-Passw0rd")]
        password: String,
        /// The data folder to create.
        #[arg(long)]
        data: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What DNS scavenging costs: a zone of N names with one dynamic record each, a share
    /// of them stale; a dry pass, the real pass and the purge of the tombstones, timed.
    DnsScavenge {
        /// Names in the zone.
        #[arg(long, default_value_t = 100_000)]
        records: usize,
        /// Percent of them stale.
        #[arg(long, default_value_t = 10)]
        stale_percent: u32,
        /// The data folder to create.
        #[arg(long)]
        data: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What NTLM binds, sealed connections and CLDAP pings cost, against a domain with
    /// many users.
    Auth {
        /// Users in the domain.
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// Connection (and UDP socket) counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8])]
        connections: Vec<usize>,
        /// Measured seconds per workload and count.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Folder for the benchmark domain (removed afterwards).
        #[arg(long, default_value = "bench-data")]
        dir: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The directory database at 10k and 100k users (about 23k and 230k records).
    Db {
        /// User counts to run at, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
        users: Vec<usize>,
        /// Folder for the benchmark databases.
        #[arg(long, default_value = "bench-data")]
        dir: PathBuf,
        /// Keep the databases afterwards.
        #[arg(long)]
        keep: bool,
        /// Equality searches per run.
        #[arg(long, default_value_t = 50_000)]
        searches: usize,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The LDAP server under load over TCP: searches, binds, modifies, adds and deletes at
    /// several connection counts, and a paged sweep; optionally against OpenLDAP slapd.
    Ldap {
        /// Users in the directory.
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// Folder for the benchmark database.
        #[arg(long, default_value = "bench-data")]
        dir: PathBuf,
        /// Connection counts to run at, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8, 64])]
        connections: Vec<usize>,
        /// Measured seconds per workload and connection count.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Servers to measure.
        #[arg(long, value_enum, default_value_t = bench_ldap::Against::Kauri)]
        against: bench_ldap::Against,
        /// Only the domain, OUs, containers and users (implied by `--against both`).
        #[arg(long)]
        users_only: bool,
        /// The slapd to measure, ldap://HOST:PORT.
        #[arg(long)]
        slapd_uri: Option<String>,
        /// DN the client binds as on slapd.
        #[arg(long, default_value = "cn=admin,dc=samdom,dc=example,dc=com")]
        slapd_bind_dn: String,
        /// Its password.
        #[arg(long)]
        slapd_password: Option<String>,
        /// The slapd suffix holding the directory.
        #[arg(long, default_value = "dc=samdom,dc=example,dc=com")]
        slapd_base: String,
        /// Only write the users-only directory as LDIF for slapd to FILE, then stop.
        #[arg(long)]
        write_ldif: Option<PathBuf>,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A provisioned AD domain over LDAP: provisioning, an Exchange-sized schema
    /// extension, users with group memberships on one and several connections, member adds
    /// as a group grows, binds, tokenGroups and in-chain searches.
    Domain {
        /// Folder for the benchmark domain (removed afterwards).
        #[arg(long, default_value = "bench-data")]
        dir: PathBuf,
        /// Users added in each of the two user runs [default: 100000; 1000 with --quick].
        #[arg(long)]
        users: Option<usize>,
        /// Connections of the concurrent user run and of the group growth.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// attributeSchema objects of the schema extension [default: 1000; 100 with --quick].
        #[arg(long)]
        attributes: Option<usize>,
        /// classSchema objects of the schema extension [default: 200; 20 with --quick].
        #[arg(long)]
        classes: Option<usize>,
        /// Members the big group grows to [default: 100000; 2000 with --quick].
        #[arg(long)]
        group_size: Option<usize>,
        /// Member adds timed at each group size [default: 500; 100 with --quick].
        #[arg(long)]
        window: Option<usize>,
        /// Timed binds and searches per lookup [default: 2000; 200 with --quick].
        #[arg(long)]
        samples: Option<usize>,
        /// A small run that takes seconds; the sizes above still override it.
        #[arg(long)]
        quick: bool,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The administrator's commands at scale: LDIF import and export, backups (also while
    /// the server takes writes), restore, re-index, dbcheck, group statistics.
    Admin {
        /// Users to load.
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// Groups to load (users join 2 or 3 each).
        #[arg(long, default_value_t = 2_000)]
        groups: usize,
        /// Folder for the benchmark's files.
        #[arg(long, default_value = "bench-data")]
        dir: PathBuf,
        /// Keep the files afterwards.
        #[arg(long)]
        keep: bool,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What access checks and stored-once security descriptors cost: searches and a paged
    /// sweep as an ordinary account against the configured admin DN (no checks), the
    /// database's descriptors, and a descriptor change re-propagated to every user below.
    Access {
        /// Users in OU=Staff [default: 100000; 5000 with --quick].
        #[arg(long)]
        users: Option<usize>,
        /// Measured seconds of each search window.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Search windows per identity and connection count (the two alternate).
        #[arg(long, default_value_t = 2)]
        rounds: usize,
        /// Connection counts of the searches, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8])]
        connections: Vec<usize>,
        /// Users added per transaction.
        #[arg(long, default_value_t = 5_000)]
        batch: usize,
        /// Folder for the temporary domain [default: the system's temporary folder].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A small run: 5,000 users.
        #[arg(long)]
        quick: bool,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The audit log's writer: events per second into a file in a temporary folder with
    /// the default settings, flooded (what drops when the queue is full) and paced (what
    /// it sustains without dropping).
    Audit {
        /// Events to log.
        #[arg(long, default_value_t = 1_000_000)]
        events: u64,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The read half of `bench db`, run in its own process (prints JSON).
    #[command(hide = true)]
    DbQueries {
        /// The database folder `bench db` built.
        #[arg(long)]
        dir: PathBuf,
        /// Users in that database.
        #[arg(long)]
        users: usize,
        /// Equality searches per run.
        #[arg(long)]
        searches: usize,
    },
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// Rebuild every index and the hierarchy tables from the records.
    Reindex {
        /// The database folder.
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Verify indexes and hierarchy against the records; exit code 1 when inconsistent.
    Check {
        /// The database folder.
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Repair what a re-index repairs.
        #[arg(long)]
        fix: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Records, USN, sizes.
    Stats {
        /// The database folder.
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite the database file without its free pages (offline: stop the server first).
    Compact {
        /// The database folder.
        #[arg(short = 'H', long = "data")]
        data: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Prints benchmark reports as JSON or as the Markdown tables BENCHMARKS.md holds.
fn print_reports<T: serde::Serialize>(
    json: bool,
    reports: &[T],
    markdown: fn(&[T]) -> String,
) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(reports)?);
    } else {
        print!("{}", markdown(reports));
    }
    Ok(())
}

/// Runs the check; an inconsistent database ends the process with exit code 1.
fn check_or_exit(data: &std::path::Path, fix: bool, json: bool) -> Result<()> {
    if !dbcmd::check(data, fix, json)? {
        std::process::exit(1);
    }
    Ok(())
}

fn main() {
    // Output piped into `head` and the like ends quietly when the reader goes, as other
    // Unix tools do. (SIGPIPE stays ignored: the server and the LDAP client must see a
    // closed socket as an error, not die of it.)
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info);
    }));
    if let Err(e) = run() {
        // Only a bare I/O error: output written to a closed pipe. The network's errors
        // reach here wrapped in the client's error type, and are reported.
        let closed_pipe = e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
        if closed_pipe {
            std::process::exit(141);
        }
        // The chain of causes on one line; a refusal ends with its LDAP result code.
        eprintln!("kauri: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    logging::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { opts } => serve::serve(&opts.overrides())?,
        Command::Demo { opts } => serve::demo(&opts.overrides())?,
        Command::Status(opts) => status::run(&opts)?,
        Command::Bench {
            what:
                BenchCommand::Db {
                    users,
                    dir,
                    keep,
                    searches,
                    json,
                },
        } => {
            let opts = bench_db::BenchOptions {
                scales: users,
                dir,
                keep,
                searches,
                progress: !json,
            };
            let reports = bench_db::run(&opts)?;
            print_reports(json, &reports, bench_db::markdown)?;
        }
        Command::Bench {
            what:
                BenchCommand::Ldap {
                    users,
                    dir,
                    connections,
                    seconds,
                    against,
                    users_only,
                    slapd_uri,
                    slapd_bind_dn,
                    slapd_password,
                    slapd_base,
                    write_ldif,
                    json,
                },
        } => {
            if let Some(path) = write_ldif {
                let n = bench_ldap::write_ldif(&path, users)?;
                eprintln!("kauri: wrote {n} entries to {}", path.display());
            } else {
                let slapd = slapd_uri.map(|uri| bench_ldap::SlapdTarget {
                    uri,
                    bind_dn: slapd_bind_dn,
                    password: slapd_password.unwrap_or_default(),
                    base: slapd_base,
                });
                let opts = bench_ldap::Options {
                    users,
                    dir,
                    connections,
                    seconds,
                    against,
                    users_only,
                    slapd,
                    progress: !json,
                };
                let reports = bench_ldap::run(&opts)?;
                print_reports(json, &reports, bench_ldap::markdown)?;
            }
        }
        Command::Bench {
            what:
                BenchCommand::KdcDomain {
                    users,
                    password,
                    data,
                    json,
                },
        } => {
            bench_kdc::check_free(&data)?;
            let report = bench_kdc::run(&bench_kdc::Options {
                data,
                users,
                admin_password: password.clone(),
                password,
                progress: !json,
            })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "{} users added in {:.1} s (keys derived on every core); a PAC built and \
                     signed in {:.0} µs for a member of the {}-member group, {:.0} µs for \
                     user1 ({} groups, 10 nested)",
                    report.users,
                    report.add_seconds,
                    report.pac_us_big_group,
                    report.users,
                    report.pac_us_nested,
                    report.nested_token_groups
                );
            }
        }
        Command::Bench {
            what:
                BenchCommand::DnsScavenge {
                    records,
                    stale_percent,
                    data,
                    json,
                },
        } => {
            bench_kdc::check_free(&data)?;
            let report = bench_dns::run(&bench_dns::Options {
                data,
                records,
                stale_percent,
                progress: !json,
            })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "{} names written in {:.1} s; scavenging: dry pass {:.2} s, real pass {:.2} s \
                     ({} stale records removed), purge 15 days later {:.2} s ({} tombstones)",
                    report.records,
                    report.write_seconds,
                    report.dry_run_seconds,
                    report.scavenge_seconds,
                    report.removed,
                    report.purge_seconds,
                    report.purged
                );
            }
        }
        Command::Bench {
            what:
                BenchCommand::Auth {
                    users,
                    connections,
                    seconds,
                    dir,
                    json,
                },
        } => {
            let opts = bench_auth::Options {
                dir,
                users,
                seconds,
                connections,
                progress: !json,
            };
            let report = bench_auth::run(&opts)?;
            print_reports(json, &[report], bench_auth::markdown)?;
        }
        Command::Bench {
            what:
                BenchCommand::Domain {
                    dir,
                    users,
                    concurrency,
                    attributes,
                    classes,
                    group_size,
                    window,
                    samples,
                    quick,
                    json,
                },
        } => {
            let mut opts = bench_domain::Options::sizes(dir, quick);
            opts.concurrency = concurrency;
            opts.progress = !json;
            for (given, field) in [
                (users, &mut opts.users),
                (attributes, &mut opts.attributes),
                (classes, &mut opts.classes),
                (group_size, &mut opts.group_size),
                (window, &mut opts.window),
                (samples, &mut opts.samples),
            ] {
                if let Some(v) = given {
                    *field = v;
                }
            }
            let report = bench_domain::run(&opts)?;
            print_reports(json, &[report], bench_domain::markdown)?;
        }
        Command::Bench {
            what:
                BenchCommand::Admin {
                    users,
                    groups,
                    dir,
                    keep,
                    json,
                },
        } => {
            let report = bench_admin::run(&bench_admin::Options {
                users,
                groups,
                dir,
                keep,
                progress: !json,
            })?;
            print_reports(json, &[report], bench_admin::markdown)?;
        }
        Command::Bench {
            what:
                BenchCommand::Access {
                    users,
                    seconds,
                    rounds,
                    connections,
                    batch,
                    dir,
                    quick,
                    json,
                },
        } => {
            let report = bench_access::run(&bench_access::Options {
                dir: dir.unwrap_or_else(std::env::temp_dir),
                users: users.unwrap_or(if quick { 5_000 } else { 100_000 }),
                seconds,
                rounds,
                connections,
                batch,
                progress: !json,
            })?;
            print_reports(json, &[report], bench_access::markdown)?;
        }
        Command::Bench {
            what: BenchCommand::Audit { events, json },
        } => {
            let reports = audit_cmd::bench(events)?;
            print_reports(json, &reports, audit_cmd::markdown)?;
        }
        Command::Bench {
            what:
                BenchCommand::DbQueries {
                    dir,
                    users,
                    searches,
                },
        } => {
            let measures = bench_db::run_queries(&dir, users, searches)?;
            println!("{}", serde_json::to_string(&measures)?);
        }
        Command::Db { what } => match what {
            DbCommand::Reindex { data, json } => dbcmd::reindex(&data, json)?,
            DbCommand::Check { data, fix, json } => check_or_exit(&data, fix, json)?,
            DbCommand::Stats { data, json } => dbcmd::stats(&data, json)?,
            DbCommand::Compact { data, json } => dbcmd::compact(&data, json)?,
        },
        Command::Dbcheck { data, fix, json } => check_or_exit(&data, fix, json)?,
        Command::Completions { shell } => {
            manual::completions(Cli::command(), shell, &mut std::io::stdout())?;
        }
        Command::Man { dir, json } => {
            let pages = manual::write_pages(Cli::command(), &dir)?;
            if json {
                println!("{}", serde_json::json!({ "pages": pages }));
            } else {
                println!(
                    "kauri: wrote {} manual pages into {}",
                    pages.len(),
                    dir.display()
                );
            }
        }
        Command::Reindex { data, json } => dbcmd::reindex(&data, json)?,
        Command::Domain { what } => match what {
            DomainCommand::Provision(opts) => domain::provision(&opts)?,
            DomainCommand::Backup { what } => match what {
                BackupCommand::Offline(o) => backup::offline(&o)?,
                BackupCommand::Online(o) => backup::online(&o)?,
                BackupCommand::Rename(o) => backup::rename(&o)?,
                BackupCommand::Restore(o) => backup::restore(&o)?,
                BackupCommand::Verify(o) => backup::verify(&o)?,
            },
            DomainCommand::Exportkeytab(o) => kerberos::export_keytab(&o)?,
            DomainCommand::Krbtgt { what } => kerberos::krbtgt(&what)?,
        },
        Command::User { target, json, what } => {
            admin::user::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Group { target, json, what } => {
            admin::group::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Ou { target, json, what } => {
            admin::ou::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Computer { target, json, what } => {
            admin::computer::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Dns { target, json, what } => {
            admin::dns::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Dsacl { target, json, what } => {
            admin::dsacl::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Audit(opts) => audit_cmd::run(&opts)?,
        Command::Traffic { what } => traffic::run(what)?,
        Command::Contact { target, json, what } => {
            admin::contact::run(admin::target::open(&target)?.as_mut(), &what, json)?
        }
        Command::Ldif {
            what: LdifCommand::Import(opts),
        } => ldifcmd::import(&opts)?,
        Command::Ldif {
            what: LdifCommand::Export(opts),
        } => {
            let n = ldifcmd::export(&opts)?;
            eprintln!(
                "kauri: exported {n} entries to {}",
                ldifcmd::describe(opts.output.as_deref())
            );
        }
    }
    Ok(())
}
