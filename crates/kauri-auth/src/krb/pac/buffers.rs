//! The small, non-NDR PAC buffers: client info (type 10), UPN and DNS info
//! (12), attributes (17), requestor (18), and the signature buffers (6, 7,
//! 16, 19). Each has `encode` (the exact bytes of the PAC buffer) and
//! `decode` (strict, bounds-checked, never panics).

use super::ndr::{string_to_utf16le, utf16le_to_string};
use super::sid::{sid_from_prefix, validate_sid};
use super::PacError;

fn u16_at(data: &[u8], at: usize, what: &'static str) -> Result<u16, PacError> {
    let end = at.checked_add(2).ok_or(PacError::Truncated(what))?;
    let b = data.get(at..end).ok_or(PacError::Truncated(what))?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

fn u32_at(data: &[u8], at: usize, what: &'static str) -> Result<u32, PacError> {
    let end = at.checked_add(4).ok_or(PacError::Truncated(what))?;
    let b = data.get(at..end).ok_or(PacError::Truncated(what))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(data: &[u8], at: usize, what: &'static str) -> Result<u64, PacError> {
    let end = at.checked_add(8).ok_or(PacError::Truncated(what))?;
    let b = data.get(at..end).ok_or(PacError::Truncated(what))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_le_bytes(a))
}

/// PAC_CLIENT_INFO (MS-PAC 2.7, buffer type 10): binds the PAC to the
/// ticket's client. The acceptor MUST check that `client_id` equals the
/// ticket's authtime and `name` the ticket's client name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    /// The ticket's authtime as a FILETIME (see
    /// [`super::logon_info::filetime_from_unix`]); Kerberos times have whole
    /// seconds, so this is a multiple of 10,000,000 plus the 1601 offset.
    pub client_id: u64,
    /// The client principal name without realm (e.g. "alice", or for an
    /// enterprise name "alice@corp.example"), as in the ticket's cname.
    pub name: String,
}

impl ClientInfo {
    /// Encodes ClientId (FILETIME), NameLength (bytes) and the UTF-16LE name.
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        let name = string_to_utf16le(&self.name);
        let len = u16::try_from(name.len()).map_err(|_| PacError::TooLarge("client name"))?;
        let mut out = Vec::with_capacity(10 + name.len());
        out.extend_from_slice(&self.client_id.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&name);
        Ok(out)
    }

    /// Checks the binding between the PAC and its ticket, as an acceptor
    /// must (MS-PAC 2.7; MIT `k5_pac_validate_client`): ClientId, in whole
    /// seconds, equals the ticket's `authtime` (Unix seconds) and Name equals
    /// `client_name` exactly (the ticket's cname unparsed without realm,
    /// e.g. "alice", or "host/pc1.example.com").
    pub fn matches_ticket(&self, authtime_unix: i64, client_name: &str) -> bool {
        super::logon_info::filetime_to_unix(self.client_id) == authtime_unix
            && self.name == client_name
    }

    /// Decodes a type-10 buffer. Bytes after the name are ignored.
    pub fn decode(data: &[u8]) -> Result<Self, PacError> {
        let client_id = u64_at(data, 0, "PAC_CLIENT_INFO.ClientId")?;
        let len = usize::from(u16_at(data, 8, "PAC_CLIENT_INFO.NameLength")?);
        let raw = data
            .get(10..10 + len)
            .ok_or(PacError::Truncated("PAC_CLIENT_INFO.Name"))?;
        Ok(ClientInfo {
            client_id,
            name: utf16le_to_string(raw, "PAC_CLIENT_INFO.Name")?,
        })
    }
}

/// UPN_DNS_INFO flag U: the user has no userPrincipalName attribute and the
/// UPN was constructed as `sAMAccountName@dnsDomain`.
pub const UPN_DNS_FLAG_CONSTRUCTED: u32 = 0x0000_0001;
/// UPN_DNS_INFO flag S: the extended form (SamName and Sid) is present.
pub const UPN_DNS_FLAG_EXTENDED: u32 = 0x0000_0002;

/// The extension of UPN_DNS_INFO present when flag S is set (MS-PAC 2.10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpnDnsExtension {
    /// The account's sAMAccountName.
    pub sam_name: String,
    /// The account's SID (binary).
    pub sid: Vec<u8>,
}

/// UPN_DNS_INFO (MS-PAC 2.10, buffer type 12): the client's UPN and DNS
/// domain, and (extended form) its sAMAccountName and SID, which the KDC
/// uses to match a PAC to the account (CVE-2021-42287 hardening).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpnDnsInfo {
    /// The user principal name.
    pub upn: String,
    /// The DNS name of the account's domain.
    pub dns_domain_name: String,
    /// Flags; [`UPN_DNS_FLAG_CONSTRUCTED`] is kept as given, while
    /// [`UPN_DNS_FLAG_EXTENDED`] is set on encode iff `extension` is `Some`.
    pub flags: u32,
    /// SamName and Sid, present in the extended form.
    pub extension: Option<UpnDnsExtension>,
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// Appends `data` at the next 8-byte boundary and returns (length, offset).
fn put_field(out: &mut Vec<u8>, data: &[u8], what: &'static str) -> Result<(u16, u16), PacError> {
    pad8(out);
    let off = u16::try_from(out.len()).map_err(|_| PacError::TooLarge(what))?;
    let len = u16::try_from(data.len()).map_err(|_| PacError::TooLarge(what))?;
    out.extend_from_slice(data);
    u16::try_from(out.len()).map_err(|_| PacError::TooLarge(what))?;
    Ok((len, off))
}

fn get_field<'a>(
    data: &'a [u8],
    len: u16,
    off: u16,
    what: &'static str,
) -> Result<&'a [u8], PacError> {
    let start = usize::from(off);
    let end = start + usize::from(len);
    data.get(start..end).ok_or(PacError::Truncated(what))
}

impl UpnDnsInfo {
    /// Encodes the buffer the way Windows lays it out: the fixed header
    /// (12 bytes, or 20 in the extended form), then each string/SID starting
    /// on an 8-byte boundary relative to the buffer start, no terminators.
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        let extended = self.extension.is_some();
        let header_len = if extended { 20 } else { 12 };
        let mut out = vec![0u8; header_len];
        let upn = string_to_utf16le(&self.upn);
        let dns = string_to_utf16le(&self.dns_domain_name);
        let (upn_len, upn_off) = put_field(&mut out, &upn, "UPN_DNS_INFO too large")?;
        let (dns_len, dns_off) = put_field(&mut out, &dns, "UPN_DNS_INFO too large")?;
        let mut flags = self.flags & !UPN_DNS_FLAG_EXTENDED;
        let mut ext_fields = None;
        if let Some(ext) = &self.extension {
            validate_sid(&ext.sid)?;
            flags |= UPN_DNS_FLAG_EXTENDED;
            let sam = string_to_utf16le(&ext.sam_name);
            let sam_f = put_field(&mut out, &sam, "UPN_DNS_INFO too large")?;
            let sid_f = put_field(&mut out, &ext.sid, "UPN_DNS_INFO too large")?;
            ext_fields = Some((sam_f, sid_f));
        }
        out[0..2].copy_from_slice(&upn_len.to_le_bytes());
        out[2..4].copy_from_slice(&upn_off.to_le_bytes());
        out[4..6].copy_from_slice(&dns_len.to_le_bytes());
        out[6..8].copy_from_slice(&dns_off.to_le_bytes());
        out[8..12].copy_from_slice(&flags.to_le_bytes());
        if let Some(((sam_len, sam_off), (sid_len, sid_off))) = ext_fields {
            out[12..14].copy_from_slice(&sam_len.to_le_bytes());
            out[14..16].copy_from_slice(&sam_off.to_le_bytes());
            out[16..18].copy_from_slice(&sid_len.to_le_bytes());
            out[18..20].copy_from_slice(&sid_off.to_le_bytes());
        }
        Ok(out)
    }

    /// Decodes a type-12 buffer, plain or extended (flag S).
    pub fn decode(data: &[u8]) -> Result<Self, PacError> {
        const W: &str = "UPN_DNS_INFO";
        let upn_len = u16_at(data, 0, W)?;
        let upn_off = u16_at(data, 2, W)?;
        let dns_len = u16_at(data, 4, W)?;
        let dns_off = u16_at(data, 6, W)?;
        let flags = u32_at(data, 8, W)?;
        let upn = utf16le_to_string(get_field(data, upn_len, upn_off, "UPN_DNS_INFO.Upn")?, W)?;
        let dns_domain_name = utf16le_to_string(
            get_field(data, dns_len, dns_off, "UPN_DNS_INFO.DnsDomainName")?,
            W,
        )?;
        let extension = if flags & UPN_DNS_FLAG_EXTENDED != 0 {
            let sam_len = u16_at(data, 12, W)?;
            let sam_off = u16_at(data, 14, W)?;
            let sid_len = u16_at(data, 16, W)?;
            let sid_off = u16_at(data, 18, W)?;
            let sam_name = utf16le_to_string(
                get_field(data, sam_len, sam_off, "UPN_DNS_INFO.SamName")?,
                W,
            )?;
            let sid = get_field(data, sid_len, sid_off, "UPN_DNS_INFO.Sid")?.to_vec();
            validate_sid(&sid)?;
            Some(UpnDnsExtension { sam_name, sid })
        } else {
            None
        };
        Ok(UpnDnsInfo {
            upn,
            dns_domain_name,
            flags,
            extension,
        })
    }
}

/// PAC_ATTRIBUTES_INFO flag: the client asked for a PAC (PA-PAC-REQUEST
/// include-pac TRUE).
pub const PAC_WAS_REQUESTED: u32 = 0x0000_0001;
/// PAC_ATTRIBUTES_INFO flag: the PAC was included without being asked for
/// (e.g. no PA-PAC-REQUEST, or S4U).
pub const PAC_WAS_GIVEN_IMPLICITLY: u32 = 0x0000_0002;

/// PAC_ATTRIBUTES_INFO (MS-PAC 2.14, buffer type 17): whether the client
/// asked for the PAC. MS-KILE 3.3.5.6.4.7: only in TGTs; a TGS that finds
/// neither bit set issues service tickets without a PAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacAttributes {
    /// The first (and, today, only) 32-bit word of flags.
    pub flags: u32,
}

impl PacAttributes {
    /// Encodes FlagsLength (2 bits, the ones MS-PAC defines, or as many as the highest
    /// bit set needs, so a decoder keeps every flag) and one 32-bit Flags word.
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        let mut out = Vec::with_capacity(8);
        let bits = (32 - self.flags.leading_zeros()).max(2);
        out.extend_from_slice(&bits.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        Ok(out)
    }

    /// Decodes a type-17 buffer. FlagsLength may be any bit count as long as
    /// the Flags words it implies are present; bits beyond FlagsLength in the
    /// first word are cleared; words after the first are ignored.
    pub fn decode(data: &[u8]) -> Result<Self, PacError> {
        let bits = u32_at(data, 0, "PAC_ATTRIBUTES_INFO.FlagsLength")?;
        let words = (bits as usize).div_ceil(32);
        let need = words
            .checked_mul(4)
            .and_then(|n| n.checked_add(4))
            .ok_or(PacError::Truncated("PAC_ATTRIBUTES_INFO.Flags"))?;
        if data.len() < need {
            return Err(PacError::Truncated("PAC_ATTRIBUTES_INFO.Flags"));
        }
        let mut flags = if words == 0 {
            0
        } else {
            u32_at(data, 4, "PAC_ATTRIBUTES_INFO.Flags")?
        };
        if bits < 32 {
            flags &= (1u32 << bits) - 1;
        }
        Ok(PacAttributes { flags })
    }
}

/// PAC_REQUESTOR (MS-PAC 2.15, buffer type 18): the SID of the account that
/// requested the ticket. MS-KILE 3.3.5.6.4.8: only in TGTs; the TGS checks
/// that it matches the account the client name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacRequestor {
    /// Binary SID of the requesting account.
    pub sid: Vec<u8>,
}

impl PacRequestor {
    /// Encodes the SID in its binary form (no NDR conformance prefix).
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        validate_sid(&self.sid)?;
        Ok(self.sid.clone())
    }

    /// Decodes a type-18 buffer; bytes after the SID are ignored.
    pub fn decode(data: &[u8]) -> Result<Self, PacError> {
        let (sid, _) = sid_from_prefix(data)?;
        Ok(PacRequestor { sid })
    }
}

/// SignatureType KERB_CHECKSUM_HMAC_MD5 (-138): RC4-HMAC keys, 16 bytes.
pub const KERB_CHECKSUM_HMAC_MD5: i32 = -138;
/// SignatureType HMAC_SHA1_96_AES128 (15): AES128 keys, 12 bytes.
pub const HMAC_SHA1_96_AES128: i32 = 15;
/// SignatureType HMAC_SHA1_96_AES256 (16): AES256 keys, 12 bytes.
pub const HMAC_SHA1_96_AES256: i32 = 16;
/// RFC 8009 hmac-sha256-128-aes128 (19), 16 bytes; not used by Windows.
pub const HMAC_SHA256_128_AES128: i32 = 19;
/// RFC 8009 hmac-sha384-192-aes256 (20), 24 bytes; not used by Windows.
pub const HMAC_SHA384_192_AES256: i32 = 20;

/// Length in bytes of the Signature field for a SignatureType, or `None` if
/// the type is not one a PAC may use. Knowing it lets the decoder separate
/// the signature from an RODCIdentifier trailer and lets placeholders be
/// sized before signing.
pub fn checksum_len(signature_type: i32) -> Option<usize> {
    match signature_type {
        KERB_CHECKSUM_HMAC_MD5 => Some(16),
        HMAC_SHA1_96_AES128 | HMAC_SHA1_96_AES256 => Some(12),
        HMAC_SHA256_128_AES128 => Some(16),
        HMAC_SHA384_192_AES256 => Some(24),
        _ => None,
    }
}

/// PAC_SIGNATURE_DATA (MS-PAC 2.8): the body of the server (6), KDC (7),
/// ticket (16) and full-PAC / extended KDC (19) signature buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacSignatureData {
    /// Checksum type (e.g. [`HMAC_SHA1_96_AES256`], [`KERB_CHECKSUM_HMAC_MD5`]).
    pub signature_type: i32,
    /// The checksum bytes (all zero in a placeholder).
    pub signature: Vec<u8>,
    /// Two-byte RODC key version trailer, only in KDC signatures made by a
    /// read-only DC. Kauri never writes one; decode keeps it if present.
    pub rodc_identifier: Option<u16>,
}

impl PacSignatureData {
    /// A zero-filled signature of the right size for `signature_type`, as
    /// placed in a PAC before signing.
    pub fn placeholder(signature_type: i32) -> Result<Self, PacError> {
        let len =
            checksum_len(signature_type).ok_or(PacError::UnsupportedChecksum(signature_type))?;
        Ok(PacSignatureData {
            signature_type,
            signature: vec![0; len],
            rodc_identifier: None,
        })
    }

    /// Encodes SignatureType (i32 LE), Signature, then RODCIdentifier if any.
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        let mut out = Vec::with_capacity(6 + self.signature.len());
        out.extend_from_slice(&self.signature_type.to_le_bytes());
        out.extend_from_slice(&self.signature);
        if let Some(id) = self.rodc_identifier {
            out.extend_from_slice(&id.to_le_bytes());
        }
        Ok(out)
    }

    /// Decodes a signature buffer. For known types the signature has the
    /// type's length and exactly 0 or 2 trailing bytes (RODCIdentifier) are
    /// allowed; for unknown types all remaining bytes are the signature.
    pub fn decode(data: &[u8]) -> Result<Self, PacError> {
        let signature_type = u32_at(data, 0, "PAC_SIGNATURE_DATA.SignatureType")? as i32;
        let rest = data.get(4..).unwrap_or_default();
        let Some(len) = checksum_len(signature_type) else {
            return Ok(PacSignatureData {
                signature_type,
                signature: rest.to_vec(),
                rodc_identifier: None,
            });
        };
        let signature = rest
            .get(..len)
            .ok_or(PacError::Truncated("PAC_SIGNATURE_DATA.Signature"))?
            .to_vec();
        let rodc_identifier = match rest.len() - len {
            0 => None,
            2 => Some(u16_at(rest, len, "PAC_SIGNATURE_DATA.RODCIdentifier")?),
            _ => return Err(PacError::Malformed("PAC_SIGNATURE_DATA has trailing bytes")),
        };
        Ok(PacSignatureData {
            signature_type,
            signature,
            rodc_identifier,
        })
    }
}
