//! One NTLM exchange on the server: NEGOTIATE in, CHALLENGE out, AUTHENTICATE verified.

use std::time::{SystemTime, UNIX_EPOCH};

use subtle::ConstantTimeEq;

use super::flags::*;
use super::messages::{self, av, Authenticate, ServerNames, AV_FLAG_MIC, MIC_AT};
use super::session::NtlmSession;
use crate::crypto::{hmac_md5, rc4_once};
use crate::error::AuthError;

/// Seconds between 1601-01-01 (Windows FILETIME) and 1970-01-01.
const FILETIME_UNIX_OFFSET: u64 = 11_644_473_600;

/// Server policy for NTLM exchanges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NtlmSettings {
    /// The channel binding hash (MD5 of `gss_channel_bindings_struct`) of the TLS channel
    /// the exchange runs in, checked against the one a client sends.
    pub channel_binding: Option<[u8; 16]>,
    /// The host names this server answers to. A client that names its target
    /// (`MsvAvTargetName`, `service/host`) must name one of them, or an address, or
    /// `localhost`: a logon meant for another server and relayed here is refused. Empty:
    /// no check.
    pub target_hosts: Vec<String>,
}

/// A successful verification.
pub struct Verified {
    /// The session security the exchange negotiated.
    pub session: NtlmSession,
}

/// One NTLM exchange.
pub struct NtlmServer {
    names: ServerNames,
    settings: NtlmSettings,
    challenge: [u8; 8],
    negotiate: Option<Vec<u8>>,
    challenge_msg: Option<Vec<u8>>,
    flags: u32,
}

impl NtlmServer {
    /// A new exchange announcing `names`, with a fresh random server challenge.
    pub fn new(names: ServerNames, settings: NtlmSettings) -> Result<NtlmServer, AuthError> {
        let mut challenge = [0u8; 8];
        getrandom::fill(&mut challenge)
            .map_err(|e| AuthError::Unsupported(format!("no randomness: {e}")))?;
        Ok(NtlmServer::with_challenge(names, settings, challenge))
    }

    /// A new exchange with a given server challenge (for tests with published vectors).
    pub fn with_challenge(
        names: ServerNames,
        settings: NtlmSettings,
        challenge: [u8; 8],
    ) -> NtlmServer {
        NtlmServer {
            names,
            settings,
            challenge,
            negotiate: None,
            challenge_msg: None,
            flags: 0,
        }
    }

    /// Answers a NEGOTIATE message with a CHALLENGE.
    pub fn challenge(&mut self, negotiate: &[u8]) -> Result<Vec<u8>, AuthError> {
        if self.negotiate.is_some() {
            return Err(AuthError::OutOfSequence("NTLM NEGOTIATE"));
        }
        let client = messages::parse_negotiate(negotiate)?;
        if client & (SIGN | SEAL) != 0 && client & EXTENDED_SESSIONSECURITY == 0 {
            return Err(AuthError::Unsupported(
                "signing and sealing need NTLM extended session security".into(),
            ));
        }
        let mut f = NTLM | REQUEST_TARGET | TARGET_TYPE_DOMAIN | TARGET_INFO | VERSION;
        f |= if client & UNICODE != 0 { UNICODE } else { OEM };
        for bit in [
            SIGN,
            SEAL,
            ALWAYS_SIGN,
            EXTENDED_SESSIONSECURITY,
            IDENTIFY,
            N128,
            N56,
            KEY_EXCH,
        ] {
            f |= client & bit;
        }
        self.flags = f;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let filetime = (now + FILETIME_UNIX_OFFSET) * 10_000_000;
        let msg = messages::build_challenge(f, &self.challenge, &self.names, filetime);
        self.negotiate = Some(negotiate.to_vec());
        self.challenge_msg = Some(msg.clone());
        Ok(msg)
    }

    /// Whether an SPN (`service/host[:port][/name]`) names this server.
    fn names_us(&self, spn: &str) -> bool {
        let mut parts = spn.split('/');
        let _service = parts.next();
        let Some(host) = parts.next() else {
            return false;
        };
        let host = host.split(':').next().unwrap_or(host);
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok()
            || self
                .settings
                .target_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Reads an AUTHENTICATE message (the caller then finds the account it names).
    pub fn parse_authenticate(&self, msg: &[u8]) -> Result<Authenticate, AuthError> {
        if self.challenge_msg.is_none() {
            return Err(AuthError::OutOfSequence("NTLM AUTHENTICATE"));
        }
        Authenticate::parse(msg)
    }

    /// Verifies an NTLMv2 AUTHENTICATE against the account's NT hash: the NTProofStr for
    /// the user and domain given, the MIC when the client says it sent one, the channel
    /// binding when the client sent one. NTLMv1 and LM responses are refused.
    pub fn verify(&self, auth: &Authenticate, nt_hash: &[u8; 16]) -> Result<Verified, AuthError> {
        let (Some(negotiate), Some(challenge_msg)) = (&self.negotiate, &self.challenge_msg) else {
            return Err(AuthError::OutOfSequence("NTLM AUTHENTICATE"));
        };
        let nt = &auth.nt_response;
        if nt.len() <= 24 {
            return Err(AuthError::LogonFailure(
                "NTLMv1 and LM responses are refused; NTLMv2 is required".into(),
            ));
        }
        if nt.len() < 16 + 28 || nt[16] != 1 || nt[17] != 1 {
            return Err(AuthError::malformed("NTLMv2 response", "bad blob header"));
        }
        let (proof, blob) = nt.split_at(16);
        let user = auth.user.to_uppercase();
        let mut candidates = vec![auth.domain.clone()];
        for d in [auth.domain.to_uppercase(), String::new()] {
            if !candidates.contains(&d) {
                candidates.push(d);
            }
        }
        let mut base_key = None;
        for domain in candidates {
            let identity: Vec<u8> = format!("{user}{domain}")
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect();
            let key = hmac_md5(nt_hash, &[&identity]);
            let expect = hmac_md5(&key, &[&self.challenge, blob]);
            if bool::from(expect.ct_eq(proof)) {
                base_key = Some(hmac_md5(&key, &[proof]));
                break;
            }
        }
        let Some(base_key) = base_key else {
            return Err(AuthError::LogonFailure("wrong password".into()));
        };
        let flags = self.flags & auth.flags;
        let exported: [u8; 16] = if flags & KEY_EXCH != 0 {
            let Ok(enc) = <[u8; 16]>::try_from(auth.encrypted_session_key.as_slice()) else {
                return Err(AuthError::malformed(
                    "NTLM AUTHENTICATE",
                    "key exchange without a 16-byte session key",
                ));
            };
            let plain = rc4_once(&base_key, &enc);
            let mut k = [0u8; 16];
            k.copy_from_slice(&plain);
            k
        } else {
            base_key
        };
        let pairs = auth.client_av_pairs()?;
        let mic_sent = pairs
            .get(av::FLAGS)
            .and_then(|v| messages::u32_at(v, 0))
            .is_some_and(|f| f & AV_FLAG_MIC != 0);
        if mic_sent {
            let zeroed = auth
                .without_mic()
                .ok_or_else(|| AuthError::malformed("NTLM AUTHENTICATE", "no room for a MIC"))?;
            let mic = hmac_md5(&exported, &[negotiate, challenge_msg, &zeroed]);
            let sent = &auth.raw[MIC_AT..MIC_AT + 16];
            if !bool::from(mic.ct_eq(sent)) {
                return Err(AuthError::LogonFailure(
                    "the message integrity code is wrong".into(),
                ));
            }
        }
        if let Some(target) = pairs.get(av::TARGET_NAME) {
            if !self.settings.target_hosts.is_empty() {
                let units: Vec<u16> = target
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                let spn = String::from_utf16_lossy(&units);
                if !spn.is_empty() && !self.names_us(&spn) {
                    return Err(AuthError::LogonFailure(format!(
                        "the logon was meant for {spn}, not this server"
                    )));
                }
            }
        }
        if let Some(cb) = pairs.get(av::CHANNEL_BINDINGS) {
            if cb.iter().any(|b| *b != 0) {
                let matches = self
                    .settings
                    .channel_binding
                    .is_some_and(|want| bool::from(want.ct_eq(cb)));
                if !matches {
                    return Err(AuthError::LogonFailure(
                        "the channel binding does not match this connection".into(),
                    ));
                }
            }
        }
        Ok(Verified {
            session: NtlmSession::new(&exported, flags),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::nt_hash;
    use crate::layer::SecurityLayer;
    use crate::ntlm::SIGNATURE;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    fn names() -> ServerNames {
        ServerNames {
            netbios_domain: "Domain".into(),
            netbios_computer: "Server".into(),
            dns_domain: "domain.test".into(),
            dns_computer: "server.domain.test".into(),
            dns_tree: "domain.test".into(),
        }
    }

    /// An AUTHENTICATE message with the given payload fields, laid out after a header
    /// with room for the MIC.
    fn authenticate(fields: [&[u8]; 6], flags: u32) -> Vec<u8> {
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        let mut payload = Vec::new();
        let header = 88;
        for f in fields {
            let at = header + payload.len();
            m.extend_from_slice(&(f.len() as u16).to_le_bytes());
            m.extend_from_slice(&(f.len() as u16).to_le_bytes());
            m.extend_from_slice(&(at as u32).to_le_bytes());
            payload.extend_from_slice(f);
        }
        m.extend_from_slice(&flags.to_le_bytes());
        m.resize(header, 0);
        m.extend(payload);
        m
    }

    /// MS-NLMP 4.2.4: NTLMv2 with the published user, domain, password, challenges,
    /// time and session key; then the published sealed message and signature.
    #[test]
    fn published_ntlmv2_vectors() {
        let flags: u32 = 0xe28a_8233;
        let mut negotiate = SIGNATURE.to_vec();
        negotiate.extend_from_slice(&1u32.to_le_bytes());
        negotiate.extend_from_slice(&flags.to_le_bytes());
        negotiate.resize(32, 0);
        let challenge: [u8; 8] = unhex("0123456789abcdef").try_into().unwrap();
        let mut server = NtlmServer::with_challenge(names(), NtlmSettings::default(), challenge);
        server.challenge(&negotiate).unwrap();
        let temp = unhex(
            "0101000000000000 0000000000000000 aaaaaaaaaaaaaaaa 00000000
             02000c0044006f006d00610069006e00 01000c005300650072007600650072000000 0000
             00000000",
        );
        let proof = unhex("68cd0ab851e51c96aabc927bebef6a1c");
        let mut nt = proof.clone();
        nt.extend_from_slice(&temp);
        let esk = unhex("c5dad2544fc9799094ce1ce90bc9d03e");
        let msg = authenticate(
            [
                &[0; 24],
                &nt,
                &utf16("Domain"),
                &utf16("User"),
                &utf16("COMPUTER"),
                &esk,
            ],
            flags,
        );
        let auth = server.parse_authenticate(&msg).unwrap();
        assert_eq!(
            (auth.user.as_str(), auth.domain.as_str()),
            ("User", "Domain")
        );
        assert!(matches!(
            server.verify(&auth, &nt_hash("password")),
            Err(AuthError::LogonFailure(_))
        ));
        let verified = server.verify(&auth, &nt_hash("Password")).unwrap();
        let mut session = verified.session;
        assert_eq!(session.session_key(), &[0x55; 16]);
        // 4.2.4.4: the client seals "Plaintext"; the server unwraps it.
        let mut token = unhex("01000000 7fb38ec5c55d4976 00000000");
        token.extend(unhex("54e50165bf1936dc996020c1811b0f06fb5f"));
        assert_eq!(session.unwrap(&token).unwrap(), utf16("Plaintext"));
        // The same AUTHENTICATE replayed into another exchange (another server challenge,
        // as every connection gets) proves nothing.
        let mut other =
            NtlmServer::with_challenge(names(), NtlmSettings::default(), [9, 8, 7, 6, 5, 4, 3, 2]);
        other.challenge(&negotiate).unwrap();
        let replayed = other.parse_authenticate(&msg).unwrap();
        assert!(matches!(
            other.verify(&replayed, &nt_hash("Password")),
            Err(AuthError::LogonFailure(_))
        ));
        // NTLMv1 (a 24-byte NT response) is refused whatever it holds.
        let v1 = authenticate(
            [
                &[0; 24],
                &[1; 24],
                &utf16("Domain"),
                &utf16("User"),
                &utf16("W"),
                &esk,
            ],
            flags,
        );
        let v1 = server.parse_authenticate(&v1).unwrap();
        assert!(matches!(
            server.verify(&v1, &nt_hash("Password")),
            Err(AuthError::LogonFailure(_))
        ));
    }
}
