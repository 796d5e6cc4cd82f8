//! Channel bindings (RFC 5929 `tls-server-end-point`, RFC 5056): a hash of the server's
//! TLS certificate that an NTLM client puts in its AUTHENTICATE, tying the logon to the
//! TLS channel it was made in, so a man in the middle cannot relay it into another.

use sha2::{Digest, Sha256, Sha384, Sha512};

use crate::crypto::md5;
use crate::der;

/// Signature algorithm OIDs (DER contents) hashed with SHA-384 and SHA-512; every other
/// algorithm (SHA-256, and SHA-1 and MD5 as RFC 5929 says) takes SHA-256.
const SHA384_SIGS: [&[u8]; 2] = [
    &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c], // sha384WithRSAEncryption
    &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03],       // ecdsa-with-SHA384
];
const SHA512_SIGS: [&[u8]; 2] = [
    &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d], // sha512WithRSAEncryption
    &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04],       // ecdsa-with-SHA512
];

/// The certificate's signature algorithm OID (contents), if the DER parses.
fn signature_algorithm(cert: &[u8]) -> Option<&[u8]> {
    const WHAT: &str = "certificate";
    let outer = der::expect(cert, 0x30, WHAT).ok()?;
    let tbs = der::expect(outer.body, 0x30, WHAT).ok()?;
    let alg = der::expect(tbs.rest, 0x30, WHAT).ok()?;
    let oid = der::expect(alg.body, 0x06, WHAT).ok()?;
    Some(oid.body)
}

/// The `tls-server-end-point` channel binding of a server certificate (DER), as the MD5
/// of the `gss_channel_bindings_struct` NTLM carries in `MsvAvChannelBindings`; `None`
/// when the certificate does not parse.
pub fn tls_server_end_point(cert: &[u8]) -> Option<[u8; 16]> {
    let alg = signature_algorithm(cert)?;
    let hash: Vec<u8> = if SHA384_SIGS.contains(&alg) {
        Sha384::digest(cert).to_vec()
    } else if SHA512_SIGS.contains(&alg) {
        Sha512::digest(cert).to_vec()
    } else {
        Sha256::digest(cert).to_vec()
    };
    let mut application = b"tls-server-end-point:".to_vec();
    application.extend_from_slice(&hash);
    // Initiator and acceptor address types and lengths are zero; then the application
    // data's length and the data.
    let mut bindings = vec![0u8; 16];
    bindings.extend_from_slice(&(application.len() as u32).to_le_bytes());
    bindings.extend_from_slice(&application);
    Some(md5(&[&bindings]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_has_no_binding() {
        assert!(tls_server_end_point(b"not a certificate").is_none());
        assert!(tls_server_end_point(&[]).is_none());
    }
}
