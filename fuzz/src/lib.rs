//! What several fuzz targets share: the server names an NTLM exchange announces, a
//! security layer that needs no key, and a way to cut one input into several; and the
//! nested decoding of Kerberos messages ([`krb`]).

pub mod krb;

use kauri_auth::error::AuthError;
use kauri_auth::ntlm::ServerNames;
use kauri_auth::SecurityLayer;

/// The names of the test domain every NTLM and SPNEGO target serves.
pub fn names() -> ServerNames {
    ServerNames {
        netbios_domain: "SAMDOM".into(),
        netbios_computer: "DC1".into(),
        dns_domain: "samdom.example.com".into(),
        dns_computer: "dc1.samdom.example.com".into(),
        dns_tree: "samdom.example.com".into(),
    }
}

/// A SASL security layer that protects nothing: a token is its message, and a token
/// starting with `0xff` fails its check. It lets the fuzzer reach the LDAP framing under
/// SASL framing without forging signatures.
pub struct PlainLayer;

impl SecurityLayer for PlainLayer {
    fn wrap(&mut self, plain: &[u8]) -> Vec<u8> {
        plain.to_vec()
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, AuthError> {
        match token.first() {
            Some(0xff) => Err(AuthError::BadSignature),
            _ => Ok(token.to_vec()),
        }
    }

    fn sealed(&self) -> bool {
        false
    }
}

/// Cuts `data` into at most `n` parts, each preceded by a 2-byte big-endian length (the
/// last part takes the rest), so one input can carry the several tokens of an exchange.
pub fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(n);
    let mut rest = data;
    while out.len() + 1 < n && rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        let body = &rest[2..];
        let len = len.min(body.len());
        out.push(&body[..len]);
        rest = &body[len..];
    }
    out.push(rest);
    out
}

/// Joins parts the way [`parts`] cuts them (for building seeds).
pub fn join(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some((last, init)) = parts.split_last() {
        for p in init {
            let len = u16::try_from(p.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&p[..usize::from(len)]);
        }
        out.extend_from_slice(last);
    }
    out
}

/// The server challenge of the NTLM target's exchanges, fixed so that a seed made with it
/// verifies.
pub const CHALLENGE: [u8; 8] = *b"kauri-fz";

/// The password of the account the NTLM target verifies logons against.
pub const PASSWORD: &str = "Koru.Passw0rd!";

/// The host names the NTLM target's server answers to.
pub fn settings(channel_binding: bool) -> kauri_auth::ntlm::NtlmSettings {
    kauri_auth::ntlm::NtlmSettings {
        channel_binding: channel_binding.then_some([0x5a; 16]),
        target_hosts: vec!["dc1.samdom.example.com".into(), "DC1".into()],
    }
}
