//! The client's side of NTLM: NEGOTIATE, then an NTLMv2 AUTHENTICATE with a MIC and an
//! exchanged session key for the server's CHALLENGE. Kauri's own tools bind with it
//! (benchmarks, tests); servers never need it.

use std::time::{SystemTime, UNIX_EPOCH};

use super::flags::*;
use super::messages::{av, u32_at, AvPairs, AV_FLAG_MIC, MIC_AT};
use super::session::NtlmSession;
use super::SIGNATURE;
use crate::crypto::{hmac_md5, nt_hash, rc4_once};
use crate::error::AuthError;

/// What the client asks for: Unicode, NTLMv2 session security, 128-bit keys, key exchange,
/// signing and sealing.
const CLIENT_FLAGS: u32 = UNICODE
    | REQUEST_TARGET
    | SIGN
    | SEAL
    | NTLM
    | ALWAYS_SIGN
    | EXTENDED_SESSIONSECURITY
    | VERSION
    | N128
    | KEY_EXCH
    | N56;

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn random<const N: usize>() -> Result<[u8; N], AuthError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| AuthError::Unsupported(format!("no randomness: {e}")))?;
    Ok(b)
}

/// One client exchange for an account.
pub struct NtlmClient {
    user: String,
    domain: String,
    nt_hash: [u8; 16],
    flags: u32,
    negotiate: Vec<u8>,
    target: Option<String>,
}

impl NtlmClient {
    /// An exchange for `domain\user` with `password`; `seal` asks for confidentiality
    /// (else signing only).
    pub fn new(user: &str, domain: &str, password: &str, seal: bool) -> NtlmClient {
        let flags = if seal {
            CLIENT_FLAGS
        } else {
            CLIENT_FLAGS & !SEAL
        };
        NtlmClient {
            user: user.to_string(),
            domain: domain.to_string(),
            nt_hash: nt_hash(password),
            flags,
            negotiate: Vec::new(),
            target: None,
        }
    }

    /// Names the service the logon is meant for (`MsvAvTargetName`, e.g. `ldap/dc1.example`).
    pub fn target(mut self, spn: &str) -> NtlmClient {
        self.target = Some(spn.to_string());
        self
    }

    /// The NEGOTIATE message.
    pub fn negotiate(&mut self) -> Vec<u8> {
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&1u32.to_le_bytes());
        m.extend_from_slice(&self.flags.to_le_bytes());
        // Empty domain and workstation fields, pointing at the end of the header.
        for _ in 0..2 {
            m.extend_from_slice(&[0, 0, 0, 0]);
            m.extend_from_slice(&40u32.to_le_bytes());
        }
        m.extend_from_slice(&[10, 0, 0x39, 0x38, 0, 0, 0, 15]);
        self.negotiate = m.clone();
        m
    }

    /// The AUTHENTICATE answering `challenge`, and the session it establishes (as the
    /// client sees it).
    pub fn authenticate(&mut self, challenge: &[u8]) -> Result<(Vec<u8>, NtlmSession), AuthError> {
        const WHAT: &str = "NTLM CHALLENGE";
        if challenge.len() < 48 || &challenge[..8] != SIGNATURE || u32_at(challenge, 8) != Some(2) {
            return Err(AuthError::malformed(WHAT, "not a CHALLENGE message"));
        }
        let server_flags = u32_at(challenge, 20).unwrap_or(0);
        let server_challenge = &challenge[24..32];
        let info_len = usize::from(u16::from_le_bytes([challenge[40], challenge[41]]));
        let info_at = u32_at(challenge, 44).unwrap_or(0) as usize;
        let info = challenge
            .get(info_at..info_at + info_len)
            .ok_or_else(|| AuthError::malformed(WHAT, "target information past the end"))?;
        let mut pairs = AvPairs::parse(info)?;
        let time: [u8; 8] = match pairs.get(av::TIMESTAMP) {
            Some(t) if t.len() == 8 => t.try_into().unwrap_or([0; 8]),
            _ => {
                let secs = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or_default();
                ((secs + 11_644_473_600) * 10_000_000).to_le_bytes()
            }
        };
        pairs
            .0
            .push((av::FLAGS, AV_FLAG_MIC.to_le_bytes().to_vec()));
        if let Some(spn) = &self.target {
            pairs.0.push((av::TARGET_NAME, utf16(spn)));
        }
        let mut blob = vec![1, 1, 0, 0, 0, 0, 0, 0];
        blob.extend_from_slice(&time);
        blob.extend_from_slice(&random::<8>()?);
        blob.extend_from_slice(&[0; 4]);
        blob.extend_from_slice(&pairs.encode());
        blob.extend_from_slice(&[0; 4]);
        let identity = utf16(&format!("{}{}", self.user.to_uppercase(), self.domain));
        let key = hmac_md5(&self.nt_hash, &[&identity]);
        let proof = hmac_md5(&key, &[server_challenge, &blob]);
        let base_key = hmac_md5(&key, &[&proof]);
        let flags = self.flags & server_flags;
        let (exported, encrypted_key) = if flags & KEY_EXCH != 0 {
            let exported = random::<16>()?;
            (exported, rc4_once(&base_key, &exported))
        } else {
            (base_key, Vec::new())
        };
        let mut nt = proof.to_vec();
        nt.extend_from_slice(&blob);
        let fields: [Vec<u8>; 6] = [
            vec![0; 24],
            nt,
            utf16(&self.domain),
            utf16(&self.user),
            utf16("KAURI"),
            encrypted_key,
        ];
        const HEADER: usize = 88;
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        let mut payload = Vec::new();
        for f in &fields {
            let at = HEADER + payload.len();
            m.extend_from_slice(&(f.len() as u16).to_le_bytes());
            m.extend_from_slice(&(f.len() as u16).to_le_bytes());
            m.extend_from_slice(&(at as u32).to_le_bytes());
            payload.extend_from_slice(f);
        }
        m.extend_from_slice(&flags.to_le_bytes());
        m.extend_from_slice(&[10, 0, 0x39, 0x38, 0, 0, 0, 15]);
        m.resize(HEADER, 0);
        m.extend(payload);
        let mic = hmac_md5(&exported, &[&self.negotiate, challenge, &m]);
        m[MIC_AT..MIC_AT + 16].copy_from_slice(&mic);
        Ok((m, NtlmSession::client(&exported, flags)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::SecurityLayer;
    use crate::ntlm::{NtlmServer, NtlmSettings, ServerNames};

    fn names() -> ServerNames {
        ServerNames {
            netbios_domain: "SAMDOM".into(),
            netbios_computer: "DC1".into(),
            dns_domain: "samdom.example.com".into(),
            dns_computer: "dc1.samdom.example.com".into(),
            dns_tree: "samdom.example.com".into(),
        }
    }

    #[test]
    fn a_logon_meant_for_another_server_is_refused() {
        let settings = NtlmSettings {
            channel_binding: None,
            target_hosts: vec!["dc1.samdom.example.com".into(), "DC1".into()],
        };
        for (spn, accepted) in [
            ("ldap/dc1.samdom.example.com", true),
            ("ldap/DC1", true),
            ("ldap/127.0.0.1", true),
            ("ldap/localhost:389", true),
            ("cifs/fileserver.samdom.example.com", false),
        ] {
            let mut client = NtlmClient::new("alice", "SAMDOM", "pw", true).target(spn);
            let mut server = NtlmServer::new(names(), settings.clone()).unwrap();
            let challenge = server.challenge(&client.negotiate()).unwrap();
            let (auth, _) = client.authenticate(&challenge).unwrap();
            let parsed = server.parse_authenticate(&auth).unwrap();
            assert_eq!(
                server.verify(&parsed, &nt_hash("pw")).is_ok(),
                accepted,
                "{spn}"
            );
        }
    }

    #[test]
    fn a_whole_exchange_then_sealed_messages_both_ways() {
        for seal in [true, false] {
            let mut client = NtlmClient::new("alice", "SAMDOM", "S3cret.pass", seal);
            let mut server = NtlmServer::new(names(), NtlmSettings::default()).unwrap();
            let challenge = server.challenge(&client.negotiate()).unwrap();
            let (auth, mut c) = client.authenticate(&challenge).unwrap();
            let parsed = server.parse_authenticate(&auth).unwrap();
            assert_eq!(parsed.user, "alice");
            assert!(server.verify(&parsed, &nt_hash("wrong")).is_err());
            let mut s = server
                .verify(&parsed, &nt_hash("S3cret.pass"))
                .unwrap()
                .session;
            assert_eq!(s.sealed(), seal);
            for msg in [&b"search"[..], b"entry", b"done"] {
                assert_eq!(s.unwrap(&c.wrap(msg)).unwrap(), msg);
                assert_eq!(c.unwrap(&s.wrap(msg)).unwrap(), msg);
            }
            // A MIC that does not match the messages is refused.
            let mut tampered = auth.clone();
            tampered[MIC_AT] ^= 1;
            let t = server.parse_authenticate(&tampered).unwrap();
            assert!(server.verify(&t, &nt_hash("S3cret.pass")).is_err());
        }
    }
}
