//! The three NTLM messages (MS-NLMP 2.2.1) and the AV pairs of target information
//! (2.2.2.1): parsed with every field checked against the message's bounds, built in the
//! layout Windows servers send.

use super::{flags, SIGNATURE};
use crate::error::AuthError;

/// AV pair ids (MS-NLMP 2.2.2.1).
pub(crate) mod av {
    pub const EOL: u16 = 0;
    pub const NB_COMPUTER_NAME: u16 = 1;
    pub const NB_DOMAIN_NAME: u16 = 2;
    pub const DNS_COMPUTER_NAME: u16 = 3;
    pub const DNS_DOMAIN_NAME: u16 = 4;
    pub const DNS_TREE_NAME: u16 = 5;
    pub const FLAGS: u16 = 6;
    pub const TIMESTAMP: u16 = 7;
    pub const TARGET_NAME: u16 = 9;
    pub const CHANNEL_BINDINGS: u16 = 10;
}

/// `MsvAvFlags` bit: the AUTHENTICATE message carries a MIC.
pub(crate) const AV_FLAG_MIC: u32 = 0x2;

/// The version structure this server sends: Windows Server 2016 (10.0 build 14393),
/// NTLM revision 15.
const VERSION: [u8; 8] = [10, 0, 0x39, 0x38, 0, 0, 0, 15];

/// The names a server announces in its CHALLENGE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerNames {
    /// The domain's NetBIOS name (`SAMDOM`), also the target name.
    pub netbios_domain: String,
    /// The server's NetBIOS name (`DC1`).
    pub netbios_computer: String,
    /// The domain's DNS name.
    pub dns_domain: String,
    /// The server's DNS name.
    pub dns_computer: String,
    /// The forest's DNS name.
    pub dns_tree: String,
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn from_utf16(b: &[u8], what: &'static str) -> Result<String, AuthError> {
    if !b.len().is_multiple_of(2) {
        return Err(AuthError::malformed(what, "odd-length UTF-16 string"));
    }
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).map_err(|_| AuthError::malformed(what, "invalid UTF-16"))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The payload a field header (length, allocated length, offset) at `at` points to.
fn field<'a>(b: &'a [u8], at: usize, what: &'static str) -> Result<&'a [u8], AuthError> {
    let (Some(len), Some(offset)) = (u16_at(b, at), u32_at(b, at + 4)) else {
        return Err(AuthError::malformed(what, "truncated header"));
    };
    if len == 0 {
        return Ok(&[]);
    }
    let start = offset as usize;
    b.get(start..start + usize::from(len))
        .ok_or_else(|| AuthError::malformed(what, "a field points past the end"))
}

fn check_header(b: &[u8], kind: u32, what: &'static str) -> Result<(), AuthError> {
    if b.len() < 12 || &b[..8] != SIGNATURE {
        return Err(AuthError::malformed(what, "no NTLMSSP signature"));
    }
    if u32_at(b, 8) != Some(kind) {
        return Err(AuthError::malformed(what, "wrong message type"));
    }
    Ok(())
}

/// The flags of a NEGOTIATE message.
pub(crate) fn parse_negotiate(b: &[u8]) -> Result<u32, AuthError> {
    const WHAT: &str = "NTLM NEGOTIATE";
    check_header(b, 1, WHAT)?;
    u32_at(b, 12).ok_or_else(|| AuthError::malformed(WHAT, "truncated flags"))
}

/// Target information: AV pairs in order, the terminator left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AvPairs(pub Vec<(u16, Vec<u8>)>);

impl AvPairs {
    /// Parses a run of AV pairs up to `MsvAvEOL` (bytes after it are ignored).
    pub fn parse(b: &[u8]) -> Result<AvPairs, AuthError> {
        const WHAT: &str = "NTLM target information";
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let (Some(id), Some(len)) = (u16_at(b, at), u16_at(b, at + 2)) else {
                return Err(AuthError::malformed(WHAT, "no terminating AV pair"));
            };
            at += 4;
            if id == av::EOL {
                return Ok(AvPairs(out));
            }
            let value = b
                .get(at..at + usize::from(len))
                .ok_or_else(|| AuthError::malformed(WHAT, "an AV pair runs past the end"))?;
            out.push((id, value.to_vec()));
            at += usize::from(len);
        }
    }

    /// The value of the first pair with `id`.
    pub fn get(&self, id: u16) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| v.as_slice())
    }

    /// The encoded pairs with the terminator.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (id, v) in &self.0 {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&(v.len() as u16).to_le_bytes());
            out.extend_from_slice(v);
        }
        out.extend_from_slice(&[0; 4]);
        out
    }
}

/// The CHALLENGE message for `flags` (already chosen), with the server's names and time
/// (Windows FILETIME) as target information.
pub(crate) fn build_challenge(
    flags: u32,
    challenge: &[u8; 8],
    names: &ServerNames,
    filetime: u64,
) -> Vec<u8> {
    let target_name = utf16(&names.netbios_domain);
    let info = AvPairs(vec![
        (av::NB_DOMAIN_NAME, utf16(&names.netbios_domain)),
        (av::NB_COMPUTER_NAME, utf16(&names.netbios_computer)),
        (av::DNS_DOMAIN_NAME, utf16(&names.dns_domain)),
        (av::DNS_COMPUTER_NAME, utf16(&names.dns_computer)),
        (av::DNS_TREE_NAME, utf16(&names.dns_tree)),
        (av::TIMESTAMP, filetime.to_le_bytes().to_vec()),
    ])
    .encode();
    const HEADER: usize = 56;
    let mut b = Vec::with_capacity(HEADER + target_name.len() + info.len());
    b.extend_from_slice(SIGNATURE);
    b.extend_from_slice(&2u32.to_le_bytes());
    let name_at = HEADER;
    let info_at = HEADER + target_name.len();
    b.extend_from_slice(&(target_name.len() as u16).to_le_bytes());
    b.extend_from_slice(&(target_name.len() as u16).to_le_bytes());
    b.extend_from_slice(&(name_at as u32).to_le_bytes());
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(challenge);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&(info.len() as u16).to_le_bytes());
    b.extend_from_slice(&(info.len() as u16).to_le_bytes());
    b.extend_from_slice(&(info_at as u32).to_le_bytes());
    b.extend_from_slice(&VERSION);
    b.extend_from_slice(&target_name);
    b.extend_from_slice(&info);
    b
}

/// A parsed AUTHENTICATE message.
#[derive(Clone, PartialEq, Eq)]
pub struct Authenticate {
    /// The LM (or LMv2) response.
    pub lm_response: Vec<u8>,
    /// The NT response: NTProofStr and the client's blob for NTLMv2, 24 bytes for NTLMv1.
    pub nt_response: Vec<u8>,
    /// The domain the user named.
    pub domain: String,
    /// The user name.
    pub user: String,
    /// The client's workstation name.
    pub workstation: String,
    /// The session key, encrypted with the key exchange key.
    pub encrypted_session_key: Vec<u8>,
    /// The flags the client settled on.
    pub flags: u32,
    /// The whole message as received (the MIC covers it).
    pub raw: Vec<u8>,
}

impl std::fmt::Debug for Authenticate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticate")
            .field("domain", &self.domain)
            .field("user", &self.user)
            .field("workstation", &self.workstation)
            .field("flags", &format_args!("{:#010x}", self.flags))
            .finish_non_exhaustive()
    }
}

/// Where the MIC sits in an AUTHENTICATE message (after the version structure).
pub(crate) const MIC_AT: usize = 72;

impl Authenticate {
    /// Parses an AUTHENTICATE message.
    pub fn parse(b: &[u8]) -> Result<Authenticate, AuthError> {
        const WHAT: &str = "NTLM AUTHENTICATE";
        check_header(b, 3, WHAT)?;
        let flags = u32_at(b, 60).ok_or_else(|| AuthError::malformed(WHAT, "truncated flags"))?;
        let text = |at: usize| -> Result<String, AuthError> {
            let raw = field(b, at, WHAT)?;
            if flags & flags::UNICODE != 0 {
                from_utf16(raw, WHAT)
            } else {
                Ok(raw.iter().map(|&c| char::from(c)).collect())
            }
        };
        Ok(Authenticate {
            lm_response: field(b, 12, WHAT)?.to_vec(),
            nt_response: field(b, 20, WHAT)?.to_vec(),
            domain: text(28)?,
            user: text(36)?,
            workstation: text(44)?,
            encrypted_session_key: field(b, 52, WHAT)?.to_vec(),
            flags,
            raw: b.to_vec(),
        })
    }

    /// Whether this is an anonymous logon (no user, no NT response).
    pub fn is_anonymous(&self) -> bool {
        self.user.is_empty()
            && self.nt_response.is_empty()
            && (self.lm_response.is_empty() || self.lm_response == [0])
    }

    /// The target information of an NTLMv2 response's blob.
    pub fn client_av_pairs(&self) -> Result<AvPairs, AuthError> {
        // NTProofStr (16), then the blob: versions (2), reserved (6), time (8), client
        // challenge (8), reserved (4), AV pairs.
        match self.nt_response.get(16 + 28..) {
            Some(pairs) => AvPairs::parse(pairs),
            None => Err(AuthError::malformed("NTLMv2 response", "too short")),
        }
    }

    /// The message with its MIC zeroed, as the MIC is computed over it.
    pub(crate) fn without_mic(&self) -> Option<Vec<u8>> {
        let mut b = self.raw.clone();
        b.get_mut(MIC_AT..MIC_AT + 16)?.fill(0);
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn av_pairs_round_trip_and_refuse_overruns() {
        let p = AvPairs(vec![
            (av::NB_DOMAIN_NAME, utf16("D")),
            (av::FLAGS, vec![2, 0, 0, 0]),
        ]);
        let enc = p.encode();
        assert_eq!(AvPairs::parse(&enc).unwrap(), p);
        assert!(AvPairs::parse(&enc[..enc.len() - 4]).is_err());
        assert!(AvPairs::parse(&[2, 0, 200, 0, 1]).is_err());
    }

    #[test]
    fn fields_outside_the_message_are_refused() {
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        m.resize(88, 0);
        m[60] = 1;
        // The user name claims 10 bytes at offset 200.
        m[36] = 10;
        m[40] = 200;
        assert!(Authenticate::parse(&m).is_err());
        m[36] = 0;
        let a = Authenticate::parse(&m).unwrap();
        assert!(a.is_anonymous());
    }
}
