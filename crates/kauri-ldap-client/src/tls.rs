//! TLS settings for `ldaps://` and StartTLS: which authorities to trust, or none.
//!
//! The trust anchors come, in order of preference, from the configured CA file, from the
//! `LDAPTLS_CACERT` environment variable (as OpenLDAP's tools read it), or from the
//! system's store. rustls with the ring provider, TLS 1.2 and 1.3.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use crate::error::ClientError;

/// The environment variable naming a CA file when none is configured.
pub const CA_CERT_ENV: &str = "LDAPTLS_CACERT";

/// How the client checks the server's certificate.
#[derive(Clone, Default)]
pub struct TlsOptions {
    /// A PEM file of the authorities to trust (it may hold several certificates). When
    /// absent, `LDAPTLS_CACERT` names one; without that, the system's roots are trusted.
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate, like `LDAPTLS_REQCERT=never`: the connection is encrypted
    /// but the server is not authenticated. For labs only.
    pub insecure: bool,
    /// A ready rustls configuration, used instead of building one from the fields above:
    /// one made once with [`TlsOptions::client_config`] and shared by many connections
    /// saves reading the trust anchors for each.
    pub config: Option<Arc<ClientConfig>>,
}

impl std::fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsOptions")
            .field("ca_file", &self.ca_file)
            .field("insecure", &self.insecure)
            .field("config", &self.config.as_ref().map(|_| "<prepared>"))
            .finish()
    }
}

impl TlsOptions {
    /// Trust the authorities in `path` (PEM).
    pub fn with_ca_file(mut self, path: impl Into<PathBuf>) -> TlsOptions {
        self.ca_file = Some(path.into());
        self
    }

    /// Skip certificate verification (see [`TlsOptions::insecure`]).
    pub fn with_insecure(mut self, insecure: bool) -> TlsOptions {
        self.insecure = insecure;
        self
    }

    /// The rustls configuration these options describe: the prepared one if set, else one
    /// built now (reading the CA file or the system's store).
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, ClientError> {
        if let Some(c) = &self.config {
            return Ok(c.clone());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::Tls(e.to_string()))?;
        let config = if self.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoCertificateCheck(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(self.roots()?)
                .with_no_client_auth()
        };
        Ok(Arc::new(config))
    }

    /// The trust anchors: the CA file, `LDAPTLS_CACERT`, or the system's roots.
    fn roots(&self) -> Result<RootCertStore, ClientError> {
        let env = std::env::var_os(CA_CERT_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        match self.ca_file.as_ref().or(env.as_ref()) {
            Some(path) => roots_from_file(path),
            None => system_roots(),
        }
    }
}

/// Every certificate of a PEM file, as trust anchors.
fn roots_from_file(path: &Path) -> Result<RootCertStore, ClientError> {
    let fail = |what: String| ClientError::Tls(format!("CA file {}: {what}", path.display()));
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| fail(e.to_string()))?;
    for cert in certs {
        let cert = cert.map_err(|e| fail(e.to_string()))?;
        roots
            .add(cert)
            .map_err(|e| fail(format!("unusable certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(fail("holds no certificate".into()));
    }
    Ok(roots)
}

/// The system's trust store; certificates it cannot use are skipped.
fn system_roots() -> Result<RootCertStore, ClientError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = found
            .errors
            .first()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        return Err(ClientError::Tls(format!(
            "no trusted authorities in the system's store{why}; give a CA file or set \
             {CA_CERT_ENV}"
        )));
    }
    Ok(roots)
}

/// The name the server's certificate must carry: the URL's host, a DNS name or an IP
/// address.
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, ClientError> {
    ServerName::try_from(host.to_string())
        .map_err(|e| ClientError::Tls(format!("{host:?} cannot name a TLS server: {e}")))
}

/// Accepts any certificate chain but still checks that the server holds the key of the
/// certificate it sent (the handshake signatures), with the provider's algorithms.
#[derive(Debug)]
struct NoCertificateCheck(Arc<CryptoProvider>);

impl ServerCertVerifier for NoCertificateCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
