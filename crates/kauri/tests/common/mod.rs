//! What the command-line tests share: provisioning a domain with the real binary, serving
//! it on free ports, running commands and reading their JSON.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The Administrator's password of every test domain.
pub const PASSWORD: &str = "Passw0rd.Admin";
/// The test domain's DN.
pub const DOMAIN: &str = "DC=samdom,DC=example,DC=com";

/// Runs `kauri` with these arguments.
pub fn kauri<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run kauri")
}

/// Runs `kauri` and insists it succeeds; returns its standard output.
pub fn ok<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let out = kauri(args);
    assert!(
        out.status.success(),
        "kauri {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `kauri` and insists it fails; returns its standard error.
pub fn fails<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let out = kauri(args);
    assert!(
        !out.status.success(),
        "kauri {args:?} should have failed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON a command printed.
pub fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Provisions SAMDOM.EXAMPLE.COM into `dir/name`.
pub fn provision(dir: &Path, name: &str) -> PathBuf {
    let data = dir.join(name);
    ok(&[
        "domain".as_ref(),
        "provision".as_ref(),
        "--realm".as_ref(),
        "SAMDOM.EXAMPLE.COM".as_ref(),
        "--domain".as_ref(),
        "SAMDOM".as_ref(),
        "--adminpass".as_ref(),
        PASSWORD.as_ref(),
        "--json".as_ref(),
        "--targetdir".as_ref(),
        data.as_os_str(),
    ]);
    data
}

/// A server the test started; killed when dropped, even when the test fails.
pub struct Served {
    child: std::process::Child,
    /// `127.0.0.1:port` of plain LDAP.
    pub addr: String,
    /// `127.0.0.1:port` of LDAPS.
    pub tls_addr: String,
    /// `127.0.0.1:port` of the global catalog, when the data folder holds a domain.
    pub gc_addr: Option<String>,
    /// `127.0.0.1:port` of the KDC (TCP and UDP), when the data folder holds a domain.
    pub kdc_addr: Option<String>,
    /// `127.0.0.1:port` of the password-change service, when it holds a domain.
    pub kpasswd_addr: Option<String>,
    /// `127.0.0.1:port` of the DNS server (TCP and UDP), when it holds a domain.
    pub dns_addr: Option<String>,
    /// The CA certificate that signed the server's.
    pub ca: PathBuf,
    /// The last lines the server logged after it started serving.
    log: Arc<Mutex<VecDeque<String>>>,
}

/// How many of the server's last log lines [`Served`] keeps.
const LOG_LINES: usize = 200;

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// `ldap://…`.
    pub fn ldap(&self) -> String {
        format!("ldap://{}", self.addr)
    }

    /// `ldaps://…`.
    pub fn ldaps(&self) -> String {
        format!("ldaps://{}", self.tls_addr)
    }

    /// Whether the server process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the server with SIGKILL, as a crash or a power cut would stop it, and waits
    /// for it to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends the server a signal (`"HUP"`, …).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Stops the server with SIGTERM and waits for it to end (at most a minute, then it is
    /// killed); returns how it ended.
    pub fn stop(&mut self) -> ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            if Instant::now() >= deadline {
                self.kill();
                panic!(
                    "the server did not stop within a minute of SIGTERM; it logged:\n{}",
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines the server logged after it started serving.
    pub fn log_tail(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().map(|l| format!("{l}\n")).collect()
    }

    /// The arguments that make a command act on this server as the Administrator.
    pub fn as_admin(&self, url: &str) -> Vec<String> {
        vec![
            "-H".into(),
            url.into(),
            "-U".into(),
            "SAMDOM\\Administrator".into(),
            "--bind-password".into(),
            PASSWORD.into(),
            "--cacert".into(),
            self.ca.display().to_string(),
        ]
    }
}

/// Serves a data folder on free ports of 127.0.0.1.
pub fn serve(data: &Path) -> Served {
    serve_with(data, &[])
}

/// [`serve`] with more arguments (a `--config` file).
pub fn serve_with(data: &Path, extra: &[&str]) -> Served {
    serve_with_env(data, extra, &[])
}

/// [`serve_with`] with more environment variables (a service manager's).
pub fn serve_with_env(data: &Path, extra: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kauri"))
        .envs(env.iter().copied())
        .arg("serve")
        .arg("--data")
        .arg(data)
        .args(extra)
        .args(["--listen", "127.0.0.1:0", "--listen-tls", "127.0.0.1:0"])
        .args(["--listen-gc", "127.0.0.1:0", "--listen-gc-tls", ""])
        .args([
            "--listen-kdc",
            "127.0.0.1:0",
            "--listen-kpasswd",
            "127.0.0.1:0",
            "--listen-dns",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kauri serve");
    let stderr = child.stderr.take().expect("the server's stderr");
    let mut lines = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok);
    let addr = lines
        .by_ref()
        .find_map(|l| l.strip_prefix("kauri: serving ldap://").map(str::to_string))
        .expect("the server's address");
    let tls_addr = lines
        .by_ref()
        .find_map(|l| {
            l.strip_prefix("kauri: serving ldaps://")
                .map(str::to_string)
        })
        .expect("the server's LDAPS address");
    // A domain's global catalog (data folders without a domain have none).
    let mut gc_addr = None;
    for l in lines.by_ref() {
        if let Some(a) = l.strip_prefix("kauri: serving the global catalog at ldap://") {
            gc_addr = Some(a.to_string());
            break;
        }
        if !l.starts_with("kauri: serving") {
            break;
        }
    }
    // A domain's KDC and password-change service, announced next.
    let mut kdc_addr = None;
    let mut kpasswd_addr = None;
    let mut dns_addr = None;
    if gc_addr.is_some() {
        for l in lines.by_ref() {
            if let Some(a) = l.strip_prefix("kauri: serving Kerberos at ") {
                kdc_addr = a.split_whitespace().next().map(str::to_string);
            } else if let Some(a) = l.strip_prefix("kauri: serving Kerberos password changes at ") {
                kpasswd_addr = a.split_whitespace().next().map(str::to_string);
            } else if let Some(a) = l.strip_prefix("kauri: serving DNS at ") {
                dns_addr = a.split_whitespace().next().map(str::to_string);
            }
            if kdc_addr.is_some() && kpasswd_addr.is_some() && dns_addr.is_some() {
                break;
            }
        }
    }
    // Keep draining what the server logs, so it never writes into a closed pipe, and keep
    // the last lines for messages.
    let log = Arc::new(Mutex::new(VecDeque::with_capacity(LOG_LINES)));
    let kept = log.clone();
    std::thread::spawn(move || {
        for l in lines {
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() == LOG_LINES {
                kept.pop_front();
            }
            kept.push_back(l);
        }
    });
    Served {
        child,
        addr,
        tls_addr,
        gc_addr,
        kdc_addr,
        kpasswd_addr,
        dns_addr,
        ca: data.join("tls").join("ca.pem"),
        log,
    }
}

/// The extended operations the root DSE at `url` announces (`supportedExtension`, read
/// anonymously with `ldapsearch`), as its LDIF.
pub fn supported_extensions(url: &str) -> String {
    let out = Command::new("ldapsearch")
        .args(["-x", "-LLL", "-H", url, "-b", "", "-s", "base"])
        .arg("supportedExtension")
        .output()
        .expect("run ldapsearch (install ldap-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ldapwhoami` as an account: its authorization identity, or the error.
pub fn whoami(url: &str, user: &str, password: &str) -> Result<String, String> {
    let o = Command::new("ldapwhoami")
        .args(["-x", "-H", url, "-D", user, "-w", password])
        .output()
        .expect("run ldapwhoami (install ldap-utils)");
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// Client options for the tests that write through a real connection: a generous
/// timeout, as a server under test may be slow to answer but must answer.
pub fn client_options() -> kauri_ldap_client::ConnectOptions {
    kauri_ldap_client::ConnectOptions::default().with_timeout(Some(Duration::from_secs(120)))
}

/// A connection bound as the domain's Administrator.
pub async fn connect(url: &str) -> kauri_ldap_client::LdapClient {
    let mut c = kauri_ldap_client::LdapClient::connect(url, &client_options())
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    let r = c
        .simple_bind("SAMDOM\\Administrator", PASSWORD)
        .await
        .expect("bind");
    assert_eq!(
        r.code,
        kauri_ldap_client::proto::ResultCode::SUCCESS,
        "bind: {r:?}"
    );
    c
}
