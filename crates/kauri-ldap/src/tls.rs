//! TLS for LDAPS and StartTLS: a certificate and key from files, or a self-signed pair
//! generated on first start (kept in `data/tls/` so clients can pin it).

use std::path::Path;
use std::sync::Arc;

use rustls::ServerConfig as TlsConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::ServerConfig;

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("TLS file {path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Generating the self-signed pair failed.
    #[error("generating a self-signed certificate: {0}")]
    Generate(String),
    /// rustls refused the pair.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

fn file_err(path: &Path, message: impl std::fmt::Display) -> TlsError {
    TlsError::File {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// The certificate and key files in use: the configured ones, or a generated pair in
/// `data/tls/` (created on first use, with `ca.pem`, the authority clients should trust).
pub fn cert_paths(
    cfg: &ServerConfig,
) -> Result<(std::path::PathBuf, std::path::PathBuf), TlsError> {
    if !cfg.tls_cert.as_os_str().is_empty() {
        return Ok((cfg.tls_cert.clone(), cfg.tls_key.clone()));
    }
    let dir = cfg.data.join("tls");
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    if !cert.exists() || !key.exists() {
        std::fs::create_dir_all(&dir).map_err(|e| file_err(&dir, e))?;
        let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        if !cfg.dns_host_name.is_empty() && cfg.dns_host_name != "localhost" {
            names.push(cfg.dns_host_name.clone());
            // A DC's full name also gives its short name and its domain's name, which
            // clients use too (`ldaps://dc1`, `ldaps://samdom.example.com`).
            if let Some((host, domain)) = cfg.dns_host_name.split_once('.') {
                for n in [host, domain] {
                    if !n.is_empty() && !names.iter().any(|x| x == n) {
                        names.push(n.to_string());
                    }
                }
            }
        }
        // Clients may canonicalize "localhost" to the machine's own name.
        if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            let host = host.trim().to_string();
            if !host.is_empty() && !names.contains(&host) {
                names.push(host);
            }
        }
        let (ca_pem, cert_pem, key_pem) = generate_pair(names)?;
        std::fs::write(dir.join("ca.pem"), &ca_pem)
            .map_err(|e| file_err(&dir.join("ca.pem"), e))?;
        std::fs::write(&cert, format!("{cert_pem}{ca_pem}")).map_err(|e| file_err(&cert, e))?;
        write_private(&key, key_pem.as_bytes())?;
        tracing::info!(ca = %dir.join("ca.pem").display(), "generated a TLS certificate and the authority that signed it");
    }
    Ok((cert, key))
}

/// A private authority and a server certificate it signs (clients trust `ca.pem`): PEM of
/// the authority, of the server certificate and of the server key.
fn generate_pair(names: Vec<String>) -> Result<(String, String, String), TlsError> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let g = |e: rcgen::Error| TlsError::Generate(e.to_string());
    let ca_key = KeyPair::generate().map_err(g)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(g)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "Kauri local authority");
    let ca_cert = ca_params.self_signed(&ca_key).map_err(g)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().map_err(g)?;
    let mut params = CertificateParams::new(names).map_err(g)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "Kauri LDAP server");
    let cert = params.signed_by(&key, &issuer).map_err(g)?;
    Ok((ca_cert.pem(), cert.pem(), key.serialize_pem()))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), TlsError> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| file_err(path, e))?;
    f.write_all(bytes).map_err(|e| file_err(path, e))
}

/// The server's certificate as its settings name it, read once: the rustls configuration
/// handshakes use, the channel binding of the certificate it presents, and its file.
pub struct Certificate {
    /// The rustls server configuration for LDAPS and StartTLS.
    pub config: Arc<TlsConfig>,
    /// The `tls-server-end-point` channel binding of the server's certificate (the first
    /// of its chain), which NTLM clients bind their logons to on TLS connections.
    pub channel_binding: Option<[u8; 16]>,
    /// The certificate file.
    pub path: std::path::PathBuf,
}

/// Reads the certificate chain and key the settings name (or the generated pair).
pub fn load(cfg: &ServerConfig) -> Result<Certificate, TlsError> {
    let (cert_path, key_path) = cert_paths(cfg)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .map_err(|e| file_err(&cert_path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| file_err(&cert_path, e))?;
    let Some(first) = certs.first() else {
        return Err(file_err(&cert_path, "no certificate found"));
    };
    let channel_binding = kauri_auth::binding::tls_server_end_point(first.as_ref());
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| file_err(&key_path, e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = TlsConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    // No TLS 1.3 session tickets: LDAP connections are long-lived, and Samba's client
    // stalls on tickets that arrive after the handshake.
    config.send_tls13_tickets = 0;
    Ok(Certificate {
        config: Arc::new(config),
        channel_binding,
        path: cert_path,
    })
}

/// The channel binding of the server's certificate (see [`Certificate::channel_binding`]).
pub fn channel_binding(cfg: &ServerConfig) -> Option<[u8; 16]> {
    load(cfg).ok()?.channel_binding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_certificates_have_a_channel_binding() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ServerConfig {
            data: dir.path().to_path_buf(),
            ..ServerConfig::default()
        };
        let first = channel_binding(&cfg).expect("a binding for the generated certificate");
        // The same certificate, the same binding; another folder, another certificate.
        assert_eq!(channel_binding(&cfg), Some(first));
        let other = tempfile::tempdir().unwrap();
        let cfg2 = ServerConfig {
            data: other.path().to_path_buf(),
            ..ServerConfig::default()
        };
        assert_ne!(channel_binding(&cfg2), Some(first));
    }
}
