//! `kauri serve` and `kauri demo`: open (or create) a directory and serve it over LDAP.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kauri_db::{Dn, Entry};
use kauri_domain::directory::{Caller, Change, Request};
use kauri_ldap::{Server, ServerConfig};

use crate::domain::open_directory;

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
    /// `--listen-gc ADDR:PORT` (empty string disables the global catalog port).
    pub listen_gc: Option<String>,
    /// `--listen-gc-tls ADDR:PORT` (empty string disables it).
    pub listen_gc_tls: Option<String>,
    /// Kerberos KDC address (`listen_kdc`).
    pub listen_kdc: Option<String>,
    /// Kerberos password-change address (`listen_kpasswd`).
    pub listen_kpasswd: Option<String>,
    /// DNS address (`[dns] listen`).
    pub listen_dns: Option<String>,
}

/// The configuration in force: the file (`--config`, else the packaged one when run as
/// the service user, else none) with the flags on top.
pub fn load_config(o: &Overrides) -> Result<ServerConfig> {
    settings(o, o.config.clone().or_else(kauri::paths::default_config))
}

/// The settings of `file` (every setting at its default without one) with the flags on
/// top; the data folder is the packaged one for the service user unless set.
fn settings(o: &Overrides, file: Option<PathBuf>) -> Result<ServerConfig> {
    let mut cfg = match &file {
        Some(path) => ServerConfig::load(path)?,
        None => ServerConfig {
            data: kauri::paths::default_data(),
            ..ServerConfig::default()
        },
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
    if let Some(l) = &o.listen_gc {
        cfg.listen_gc = l.clone();
    }
    if let Some(l) = &o.listen_gc_tls {
        cfg.listen_gc_tls = l.clone();
    }
    if let Some(l) = &o.listen_kdc {
        cfg.listen_kdc = l.clone();
    }
    if let Some(l) = &o.listen_kpasswd {
        cfg.listen_kpasswd = l.clone();
    }
    if let Some(l) = &o.listen_dns {
        cfg.dns.listen = l.clone();
    }
    Ok(cfg)
}

/// The DC's addresses for its DNS records: `[dns] host_addresses`, else the specific
/// addresses it listens on (LDAP, then DNS), else — listening on every address, as a
/// packaged DC does — the machine's own (up, neither loopback nor link-local), else
/// loopback.
pub fn dns_host_addresses(cfg: &ServerConfig) -> Result<Vec<std::net::IpAddr>> {
    let mut out = Vec::new();
    for a in &cfg.dns.host_addresses {
        out.push(
            a.parse::<std::net::IpAddr>()
                .with_context(|| format!("[dns] host_addresses: '{a}' is not an address"))?,
        );
    }
    if out.is_empty() {
        for l in [&cfg.listen, &cfg.dns.listen] {
            if let Ok(sa) = l.parse::<std::net::SocketAddr>() {
                if !sa.ip().is_unspecified() && !out.contains(&sa.ip()) {
                    out.push(sa.ip());
                }
            }
        }
    }
    if out.is_empty() {
        out = machine_addresses();
    }
    if out.is_empty() {
        out.push(std::net::IpAddr::from([127, 0, 0, 1]));
    }
    Ok(out)
}

/// The addresses of this machine's interfaces that are up, other than loopback and
/// link-local ones: where clients on the network reach it.
fn machine_addresses() -> Vec<std::net::IpAddr> {
    use std::net::IpAddr;
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list that freeifaddrs frees below; every pointer read
    // is checked for null and points into that list.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut at = list;
        while !at.is_null() {
            let ifa = &*at;
            at = ifa.ifa_next;
            let up = ifa.ifa_flags & (libc::IFF_UP as u32) != 0;
            let loopback = ifa.ifa_flags & (libc::IFF_LOOPBACK as u32) != 0;
            if !up || loopback || ifa.ifa_addr.is_null() {
                continue;
            }
            let ip = match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes())
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::from(sin6.sin6_addr.s6_addr)
                }
                _ => continue,
            };
            let link_local = match ip {
                IpAddr::V4(v4) => v4.is_link_local(),
                IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
            };
            if !link_local && !ip.is_loopback() && !out.contains(&ip) {
                out.push(ip);
            }
        }
        libc::freeifaddrs(list);
    }
    out
}

/// Brings the domain's DNS data up to date for this DC at start, and says what changed.
fn ensure_dns_at_start(
    dir: &kauri_domain::directory::Directory<kauri_kv::lmdb::LmdbBackend>,
    cfg: &ServerConfig,
) -> Result<()> {
    let addrs = dns_host_addresses(cfg)?;
    let done = crate::domain::ensure_dns(dir, &addrs).context("updating the DNS records")?;
    if done.partitions_created {
        eprintln!("kauri: created the DomainDnsZones and ForestDnsZones partitions");
    }
    for z in &done.zones_created {
        eprintln!("kauri: created the DNS zone {z}");
    }
    if done.nodes_changed > 0 {
        eprintln!("kauri: updated {} DNS names of this DC", done.nodes_changed);
    }
    Ok(())
}

/// Starts the audit log (`[audit]`) in the data folder and hands it to the directory, so
/// every service's logons and changes reach it.
fn start_audit(
    dir: &kauri_domain::directory::Directory<kauri_kv::lmdb::LmdbBackend>,
    cfg: &ServerConfig,
) -> Result<()> {
    let auditor = kauri_audit::Auditor::start(&cfg.audit, &cfg.data)
        .context("starting the audit log ([audit])")?;
    if let Some(path) = auditor.log_path() {
        eprintln!("kauri: audit log {}", path.display());
    }
    dir.set_auditor(auditor);
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Raises the soft limit on open files to the hard one: every connection is a descriptor,
/// and a service manager's usual soft limit (1,024) is below the connection limit. Says so
/// when even the hard limit is too low for `connections`.
fn raise_open_file_limit(connections: usize) {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write the one struct passed.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                lim = raised;
            }
        }
        // Room for the database, the listeners and the logs besides the connections.
        let needed = connections as u64 + 64;
        if lim.rlim_cur < needed {
            eprintln!(
                "kauri: warning: the open file limit is {}, below the {connections} connections \
                 allowed; raise it (LimitNOFILE=) or lower max_connections",
                lim.rlim_cur
            );
        }
    }
    #[cfg(not(unix))]
    let _ = connections;
}

/// `kauri serve`.
pub fn serve(o: &Overrides) -> Result<()> {
    let cfg = load_config(o)?;
    crate::logging::set_filter(&cfg.log).map_err(anyhow::Error::msg)?;
    raise_open_file_limit(cfg.max_connections);
    let (dir, source) = open_directory(&cfg.data)?;
    start_audit(&dir, &cfg)?;
    if let Some(d) = dir.domain() {
        eprintln!(
            "kauri: domain {} ({})",
            d.dns_name.to_ascii_uppercase(),
            d.domain_dn
        );
        for dn in crate::domain::ensure_kerberos_keys(&dir)? {
            eprintln!("kauri: gave {dn} Kerberos keys");
        }
        let given = crate::domain::ensure_descriptors(&dir)?;
        if given > 0 {
            eprintln!("kauri: gave {given} objects their security descriptors");
        }
        ensure_dns_at_start(&dir, &cfg)?;
    }
    let serving = match dir.domain() {
        Some(d) => format!("serving {}", d.dns_name.to_ascii_uppercase()),
        None => "serving".to_string(),
    };
    let rt = runtime()?;
    let writer_done = rt.block_on(async move {
        let server = Server::bind(cfg, dir, source).await?;
        let writer_done = server.ctx().writer.done();
        eprintln!("kauri: serving ldap://{}", server.local_addr()?);
        if let Some(a) = server.tls_addr() {
            eprintln!("kauri: serving ldaps://{a}");
        }
        if let Some(a) = server.cldap_addr() {
            eprintln!("kauri: serving cldap://{a} (LDAP pings over UDP)");
        }
        let (gc, gc_tls) = server.catalog_addrs();
        if let Some(a) = gc {
            eprintln!("kauri: serving the global catalog at ldap://{a}");
        }
        if let Some(a) = gc_tls {
            eprintln!("kauri: serving the global catalog at ldaps://{a}");
        }
        let krb = kauri_kdc::start(server.ctx()).await?;
        for a in &krb.kdc {
            eprintln!("kauri: serving Kerberos at {a} (TCP and UDP)");
        }
        for a in &krb.kpasswd {
            eprintln!("kauri: serving Kerberos password changes at {a} (TCP and UDP)");
        }
        for a in kauri_dns::start(server.ctx()).await? {
            eprintln!("kauri: serving DNS at {a} (TCP and UDP)");
        }
        // The database is open and every listener bound: a service manager may call the
        // server started (accepting begins below; connections wait in the backlog).
        crate::service::tell(&format!(
            "READY=1\nSTATUS={serving} at ldap://{}",
            server.local_addr()?
        ));
        let reloads = reload_on_hangup(server.ctx(), o.clone());
        // SIGTERM (a service manager) or Ctrl-C: stop accepting and leave.
        tokio::select! {
            _ = server.run() => {}
            _ = reloads => {}
            _ = stop_signal() => {
                crate::service::tell("STOPPING=1\nSTATUS=finishing the writes in flight");
                eprintln!("kauri: stopping");
            }
        }
        Ok::<_, anyhow::Error>(writer_done)
    })?;
    // Connections end with the runtime; the writer commits what it holds, then stops.
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    if !writer_done.wait(std::time::Duration::from_secs(10)) {
        eprintln!("kauri: the writer did not stop in time; every committed change is on disk");
    }
    Ok(())
}

/// Reads the settings again on every SIGHUP (`systemctl reload`) and puts them in force:
/// the TLS certificate and key, the log filter, and every setting that can change while
/// serving. Settings that cannot (listeners, the data folder) are named and wait for a
/// restart; a file that cannot be used changes nothing. Never resolves.
async fn reload_on_hangup(ctx: std::sync::Arc<kauri_ldap::Ctx>, o: Overrides) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            return std::future::pending().await;
        };
        while hangups.recv().await.is_some() {
            crate::service::tell(&format!(
                "RELOADING=1\nMONOTONIC_USEC={}",
                crate::service::monotonic_usec()
            ));
            let status = match reload(&ctx, &o) {
                Ok(text) => {
                    eprintln!("kauri: {text}");
                    text
                }
                Err(e) => {
                    let text = format!("reload refused, nothing changed: {e:#}");
                    eprintln!("kauri: {text}");
                    text
                }
            };
            crate::service::tell(&format!("READY=1\nSTATUS={status}"));
        }
    }
    std::future::pending().await
}

/// One reload; says what changed.
fn reload(ctx: &kauri_ldap::Ctx, o: &Overrides) -> Result<String> {
    let cfg = load_config(o)?;
    crate::logging::check_filter(&cfg.log).map_err(anyhow::Error::msg)?;
    let done = ctx.reload(cfg)?;
    crate::logging::set_filter(&ctx.cfg().log).map_err(anyhow::Error::msg)?;
    let mut text = format!("reloaded; certificate {}", done.certificate.display());
    if done.applied.is_empty() {
        text.push_str("; no setting changed");
    } else {
        text.push_str(&format!("; in force now: {}", done.applied.join(", ")));
    }
    if !done.need_restart.is_empty() {
        text.push_str(&format!(
            "; changed but kept until a restart: {}",
            done.need_restart.join(", ")
        ));
    }
    Ok(text)
}

/// Resolves on SIGTERM or SIGINT.
async fn stop_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = ctrl_c => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

const DEMO_REALM: &str = "SAMDOM.EXAMPLE.COM";
/// The demo's KDC and password-change ports (unprivileged).
const DEMO_KDC: &str = "127.0.0.1:3088";
const DEMO_KPASSWD: &str = "127.0.0.1:3464";
const DEMO_DNS: &str = "127.0.0.1:3053";
const DEMO_DOMAIN: &str = "DC=samdom,DC=example,DC=com";

/// Provisions the demo domain in an empty data folder and adds a few people; returns
/// whether it did (false: the folder already holds it).
fn demo_domain(data: &Path, password: &str) -> Result<bool> {
    if crate::domain::is_domain(data) {
        return Ok(false);
    }
    if data.join("db").join("data.mdb").exists() {
        anyhow::bail!(
            "{} holds a directory that is not a domain (made by an older Kauri?); remove it \
             or pass --data elsewhere",
            data.display()
        );
    }
    crate::domain::provision(&crate::domain::ProvisionOptions {
        realm: DEMO_REALM.into(),
        domain: "SAMDOM".into(),
        adminpass: password.into(),
        targetdir: data.to_path_buf(),
        schema_dir: None,
        host_name: "DC1".into(),
        site: "Default-First-Site-Name".into(),
        host_ip: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        password_hash_schemes: Vec::new(),
        json: false,
        quiet: true,
    })
    .map(|_| ())?;
    let (dir, _) = open_directory(data)?;
    let dn = |s: String| Dn::parse(&s).map_err(|e| anyhow::anyhow!("{s}: {e}"));
    let system = |change: Change| Request {
        caller: Caller::System,
        encrypted: true,
        change,
    };
    let mut w = dir.db().write()?;
    let ou = format!("OU=Demo,{DEMO_DOMAIN}");
    dir.apply(
        &mut w,
        &system(Change::Add(
            Entry::new(dn(ou.clone())?)
                .with("objectClass", &["organizationalUnit"])
                .with("description", &["Kauri demo people"]),
        )),
    )?;
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
        let user_dn = format!("CN={cn},{ou}");
        let mut e = Entry::new(dn(user_dn.clone())?)
            .with("objectClass", &["user"])
            .with("givenName", &[given])
            .with("sn", &[sn])
            .with("displayName", &[&cn])
            .with("sAMAccountName", &[&uid])
            .with("userPrincipalName", &[&format!("{uid}@samdom.example.com")])
            .with("mail", &[&format!("{uid}@example.com")])
            .with("department", &[dept])
            .with("employeeID", &[&format!("E{:05}", i + 1)])
            .with("userAccountControl", &["512"]);
        e.push(
            "unicodePwd",
            vec![kauri_domain::password::encode_unicode_pwd(password)],
        );
        dir.apply(&mut w, &system(Change::Add(e)))?;
        members.push(user_dn);
    }
    let member_refs: Vec<&str> = members.iter().map(String::as_str).collect();
    dir.apply(
        &mut w,
        &system(Change::Add(
            Entry::new(dn(format!("CN=Demo Team,{ou}"))?)
                .with("objectClass", &["group"])
                .with("sAMAccountName", &["demo-team"])
                .with("member", &member_refs),
        )),
    )?;
    w.commit()?;
    Ok(true)
}

fn random_password() -> Result<String> {
    kauri_domain::password::generate_password().map_err(|e| anyhow::anyhow!("{e}"))
}

/// `kauri demo`: a demo domain in `./kauri-data` (the packaged data folder for the service
/// user), provisioned on first run and reused after, served on 127.0.0.1 with a
/// self-signed TLS pair.
pub fn demo(o: &Overrides) -> Result<()> {
    // The demo's own ports, not the packaged settings' (a service's), in either case.
    let mut cfg = settings(o, o.config.clone())?;
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
    if cfg.listen_ldapi.as_os_str().is_empty() {
        cfg.listen_ldapi = cfg.data.join("ldapi");
    }
    let ldapi = cfg.listen_ldapi.display().to_string().replace('/', "%2F");
    if cfg.listen_kdc == kauri_ldap::config::DEFAULT_KDC {
        cfg.listen_kdc = DEMO_KDC.into();
    }
    if cfg.dns_host_name == "localhost" {
        // The DC's name goes into the TLS certificate generated before the server starts.
        cfg.dns_host_name = "dc1.samdom.example.com".into();
    }
    if cfg.listen_kpasswd == kauri_ldap::config::DEFAULT_KPASSWD {
        cfg.listen_kpasswd = DEMO_KPASSWD.into();
    }
    if cfg.dns.listen == kauri_ldap::config::DEFAULT_DNS {
        cfg.dns.listen = DEMO_DNS.into();
    }
    let created = demo_domain(&cfg.data, &password)?;
    let (dir, source) = open_directory(&cfg.data)?;
    start_audit(&dir, &cfg)?;
    crate::domain::ensure_kerberos_keys(&dir)?;
    crate::domain::ensure_descriptors(&dir)?;
    ensure_dns_at_start(&dir, &cfg)?;
    let schema = crate::domain::describe(&source);
    let (cert, _) = kauri_ldap::tls::cert_paths(&cfg)?;
    let ca = cert.with_file_name("ca.pem");
    let ca = if ca.exists() { ca } else { cert };
    let data = cfg.data.clone();
    runtime()?.block_on(async move {
        let server = Server::bind(cfg, dir, source).await?;
        let port = server.local_addr()?.port();
        println!(
            "Kauri demo domain {DEMO_REALM} ({})",
            if created { "created" } else { "reused" }
        );
        println!("  data:     {}", data.display());
        println!("  schema:   {schema}");
        println!("  admin:    CN=Administrator,CN=Users,{DEMO_DOMAIN} (or SAMDOM\\Administrator)");
        println!("  users:    aroha, wiremu, mere, james, priya in OU=Demo (same password)");
        println!("  password: {password}   (also in {})", pw_file.display());
        println!("  serving:  ldap://127.0.0.1:{port}");
        if let Some(a) = server.tls_addr() {
            println!("            ldaps://127.0.0.1:{}", a.port());
        }
        if let Some(a) = server.cldap_addr() {
            println!("            cldap://127.0.0.1:{} (LDAP pings over UDP)", a.port());
        }
        let krb = kauri_kdc::start(server.ctx()).await?;
        for a in &krb.kdc {
            println!("            kerberos {a} (TCP and UDP)");
        }
        for a in &krb.kpasswd {
            println!("            kpasswd {a} (TCP and UDP)");
        }
        let dns = kauri_dns::start(server.ctx()).await?;
        for a in &dns {
            println!("            dns {a} (TCP and UDP)");
        }
        if let Some(a) = krb.kdc.first() {
            let conf = data.join("krb5.conf");
            let text = demo_krb5_conf(*a, krb.kpasswd.first().copied());
            write_secret(&conf, &text)?;
            println!();
            println!("Kerberos ({} is written with this):", conf.display());
            for line in text.lines() {
                println!("  {line}");
            }
            println!("Try:");
            println!(
                "  echo '{password}' | KRB5_CONFIG={} KRB5CCNAME=FILE:/tmp/kauri-cc kinit aroha@{DEMO_REALM} && KRB5_CONFIG={} KRB5CCNAME=FILE:/tmp/kauri-cc klist -e",
                conf.display(),
                conf.display()
            );
        }
        println!();
        println!("Try:");
        if let Some(a) = dns.first() {
            println!(
                "  dig @{} -p {} _ldap._tcp.dc._msdcs.samdom.example.com SRV",
                a.ip(),
                a.port()
            );
        }
        println!(
            "  ldapsearch -x -H ldap://127.0.0.1:{port} -D 'SAMDOM\\Administrator' -w '{password}' -b OU=Demo,{DEMO_DOMAIN} '(objectClass=user)' sAMAccountName memberOf"
        );
        println!("  ldapwhoami -Q -Y EXTERNAL -H ldapi://{ldapi}");
        println!(
            "  LDAPTLS_CACERT={} ldapwhoami -ZZ -x -H ldap://127.0.0.1:{port} -D aroha@samdom.example.com -w '{password}'",
            ca.display()
        );
        println!();
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        server.run().await;
        Ok(())
    })
}

/// A krb5.conf that points MIT's tools at the demo's KDC.
fn demo_krb5_conf(kdc: std::net::SocketAddr, kpasswd: Option<std::net::SocketAddr>) -> String {
    let kpasswd = kpasswd.map_or_else(|| DEMO_KPASSWD.to_string(), |a| a.to_string());
    format!(
        "[libdefaults]\n    default_realm = {DEMO_REALM}\n    dns_lookup_kdc = false\n    dns_lookup_realm = false\n    rdns = false\n    dns_canonicalize_hostname = false\n[realms]\n    {DEMO_REALM} = {{\n        kdc = {kdc}\n        kpasswd_server = {kpasswd}\n    }}\n[domain_realm]\n    .samdom.example.com = {DEMO_REALM}\n    samdom.example.com = {DEMO_REALM}\n"
    )
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_machine_addresses_are_those_hostname_lists() {
        let found = super::machine_addresses();
        for a in &found {
            assert!(!a.is_loopback(), "{a}");
        }
        // `hostname -I` lists the same addresses (it leaves out loopback and IPv6
        // link-local ones; IPv4 link-local ones are left out here too).
        let Ok(out) = std::process::Command::new("hostname").arg("-I").output() else {
            return;
        };
        for word in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            let Ok(ip) = word.parse::<std::net::IpAddr>() else {
                continue;
            };
            let link_local = matches!(ip, std::net::IpAddr::V4(v4) if v4.is_link_local());
            assert!(link_local || found.contains(&ip), "{ip} not in {found:?}");
        }
    }
}
