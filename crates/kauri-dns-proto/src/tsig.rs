//! Transaction signatures (TSIG, RFC 8945) and key negotiation (TKEY, RFC 2930), as
//! GSS-TSIG (RFC 3645) uses them for Active Directory's secure dynamic updates: the
//! records, and the exact bytes a MAC (or GSS-API MIC) covers.

use crate::error::{ProtoError, Result};
use crate::name::Name;
use crate::rdata::{class, rtype};
use crate::wire::reader::{Reader, HEADER_LEN};
use crate::wire::writer::Writer;

/// RFC 3645's algorithm name for GSS-TSIG.
pub const GSS_TSIG: &str = "gss-tsig";
/// The algorithm name older Windows clients use for GSS-TSIG.
pub const GSS_MICROSOFT: &str = "gss.microsoft.com";

/// TKEY mode: Diffie-Hellman exchange.
pub const TKEY_MODE_DH: u16 = 2;
/// TKEY mode: GSS-API negotiation (RFC 3645).
pub const TKEY_MODE_GSSAPI: u16 = 3;
/// TKEY mode: delete the key.
pub const TKEY_MODE_DELETE: u16 = 5;

/// A TSIG record's data (RFC 8945 §4.2); the key name is the record's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tsig {
    /// MAC algorithm (`gss-tsig`, `hmac-sha256`, …).
    pub algorithm: Name,
    /// Seconds since 1970, 48 bits on the wire.
    pub time_signed: u64,
    /// Allowed clock difference, seconds.
    pub fudge: u16,
    /// The MAC (for GSS-TSIG, the GSS-API MIC).
    pub mac: Vec<u8>,
    /// The message id when it was signed.
    pub original_id: u16,
    /// TSIG error (BADSIG, BADKEY, BADTIME…), 0 when none.
    pub error: u16,
    /// Other data (the server's time with BADTIME).
    pub other: Vec<u8>,
}

/// A TKEY record's data (RFC 2930 §2); for GSS-TSIG, `key` carries the GSS-API tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tkey {
    /// Algorithm (`gss-tsig`, `gss.microsoft.com`).
    pub algorithm: Name,
    /// Start of the key's validity, seconds since 1970.
    pub inception: u32,
    /// End of the key's validity, seconds since 1970.
    pub expiration: u32,
    /// Key agreement mode (3: GSS-API).
    pub mode: u16,
    /// Error, 0 when none.
    pub error: u16,
    /// Key exchange data (a GSS-API token).
    pub key: Vec<u8>,
    /// Other data.
    pub other: Vec<u8>,
}

fn sized(r: &mut Reader<'_>, rtype: u16) -> Result<Vec<u8>> {
    let n = r.u16()?;
    r.take(usize::from(n))
        .map(<[u8]>::to_vec)
        .map_err(|_| ProtoError::BadRdata {
            rtype,
            reason: "field longer than the record",
        })
}

fn finish<T>(r: &Reader<'_>, rtype: u16, v: T) -> Result<T> {
    if r.at_end() {
        Ok(v)
    } else {
        Err(ProtoError::BadRdata {
            rtype,
            reason: "data longer than its content",
        })
    }
}

/// Writes a 16-bit length and the bytes (cut at 65535: a caller's error, as no MAC, token
/// or other data is that long).
fn write_sized(w: &mut Writer, b: &[u8]) {
    let b = b.get(..usize::from(u16::MAX)).unwrap_or(b);
    w.u16(b.len() as u16);
    w.bytes(b);
}

impl Tsig {
    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Tsig> {
        let t = Tsig {
            algorithm: r.name()?,
            time_signed: r.u48()?,
            fudge: r.u16()?,
            mac: sized(r, rtype::TSIG)?,
            original_id: r.u16()?,
            error: r.u16()?,
            other: sized(r, rtype::TSIG)?,
        };
        finish(r, rtype::TSIG, t)
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.name(&self.algorithm, false);
        w.u48(self.time_signed);
        w.u16(self.fudge);
        write_sized(w, &self.mac);
        w.u16(self.original_id);
        w.u16(self.error);
        write_sized(w, &self.other);
    }

    /// RFC 8945 §4.3.3's "TSIG variables": key name and algorithm in canonical
    /// (lowercase, uncompressed) form, class ANY, TTL 0, time, fudge, error, other data.
    fn write_variables(&self, key_name: &Name, out: &mut Vec<u8>) {
        out.extend_from_slice(&key_name.to_canonical_wire());
        out.extend_from_slice(&class::ANY.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&self.algorithm.to_canonical_wire());
        out.extend_from_slice(&self.time_signed.to_be_bytes()[2..]);
        out.extend_from_slice(&self.fudge.to_be_bytes());
        out.extend_from_slice(&self.error.to_be_bytes());
        let other = self
            .other
            .get(..usize::from(u16::MAX))
            .unwrap_or(&self.other);
        out.extend_from_slice(&(other.len() as u16).to_be_bytes());
        out.extend_from_slice(other);
    }
}

impl Tkey {
    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Tkey> {
        let t = Tkey {
            algorithm: r.name()?,
            inception: r.u32()?,
            expiration: r.u32()?,
            mode: r.u16()?,
            error: r.u16()?,
            key: sized(r, rtype::TKEY)?,
            other: sized(r, rtype::TKEY)?,
        };
        finish(r, rtype::TKEY, t)
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.name(&self.algorithm, false);
        w.u32(self.inception);
        w.u32(self.expiration);
        w.u16(self.mode);
        w.u16(self.error);
        write_sized(w, &self.key);
        write_sized(w, &self.other);
    }
}

/// The bytes a request's MAC covers (RFC 8945 §4.3.3, RFC 3645 §3.1): the request as
/// received up to its TSIG record (`tsig_start`, from [`crate::wire::Decoded`]), with
/// ARCOUNT one less and the id set back to `original_id`, then the TSIG variables.
pub fn request_digest_input(
    raw: &[u8],
    tsig_start: usize,
    key_name: &Name,
    tsig: &Tsig,
) -> Result<Vec<u8>> {
    if tsig_start < HEADER_LEN {
        return Err(ProtoError::BadMessage("TSIG record inside the header"));
    }
    let signed = raw
        .get(..tsig_start)
        .ok_or(ProtoError::BadMessage("TSIG start past the message"))?;
    let mut out = Vec::with_capacity(signed.len() + 64);
    out.extend_from_slice(signed);
    let ar = u16::from_be_bytes([
        *out.get(10).ok_or(ProtoError::Truncated)?,
        *out.get(11).ok_or(ProtoError::Truncated)?,
    ]);
    let ar = ar
        .checked_sub(1)
        .ok_or(ProtoError::BadMessage("ARCOUNT is zero"))?;
    if let Some(slot) = out.get_mut(10..12) {
        slot.copy_from_slice(&ar.to_be_bytes());
    }
    if let Some(slot) = out.get_mut(0..2) {
        slot.copy_from_slice(&tsig.original_id.to_be_bytes());
    }
    tsig.write_variables(key_name, &mut out);
    Ok(out)
}

/// The bytes a response's MAC covers (RFC 8945 §4.3.3): the request's MAC with its 16-bit
/// length, the response as it will be sent but without its TSIG record, then the TSIG
/// variables.
pub fn response_digest_input(
    request_mac: &[u8],
    response_without_tsig: &[u8],
    key_name: &Name,
    tsig: &Tsig,
) -> Vec<u8> {
    let mac = request_mac
        .get(..usize::from(u16::MAX))
        .unwrap_or(request_mac);
    let mut out = Vec::with_capacity(2 + mac.len() + response_without_tsig.len() + 64);
    out.extend_from_slice(&(mac.len() as u16).to_be_bytes());
    out.extend_from_slice(mac);
    out.extend_from_slice(response_without_tsig);
    tsig.write_variables(key_name, &mut out);
    out
}

/// Appends a TSIG record (owner `key_name`, class ANY, TTL 0, names uncompressed) to an
/// encoded message and counts it in ARCOUNT.
pub fn append_tsig(message: &mut Vec<u8>, key_name: &Name, tsig: &Tsig) -> Result<()> {
    let ar = u16::from_be_bytes([
        *message
            .get(10)
            .ok_or(ProtoError::BadMessage("shorter than a header"))?,
        *message
            .get(11)
            .ok_or(ProtoError::BadMessage("shorter than a header"))?,
    ]);
    let ar = ar
        .checked_add(1)
        .ok_or(ProtoError::BadMessage("ARCOUNT is full"))?;
    if tsig.mac.len() > usize::from(u16::MAX) || tsig.other.len() > usize::from(u16::MAX) {
        return Err(ProtoError::BadRdata {
            rtype: rtype::TSIG,
            reason: "field longer than 65535 bytes",
        });
    }
    let mut w = Writer::new(false);
    w.name(key_name, false);
    w.u16(rtype::TSIG);
    w.u16(class::ANY);
    w.u32(0);
    let len_at = w.len();
    w.u16(0);
    tsig.write(&mut w);
    let n = u16::try_from(w.len() - len_at - 2).map_err(|_| ProtoError::BadRdata {
        rtype: rtype::TSIG,
        reason: "data longer than 65535 bytes",
    })?;
    w.patch_u16(len_at, n);
    if let Some(slot) = message.get_mut(10..12) {
        slot.copy_from_slice(&ar.to_be_bytes());
    }
    message.extend_from_slice(&w.into_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::*;
    use crate::wire::{Message, RecordData};

    fn tsig_of(m: &Message) -> (Name, Tsig) {
        let last = m.additional.last().unwrap();
        let RecordData::Tsig(t) = &last.data else {
            panic!("no TSIG")
        };
        (last.name.clone(), t.clone())
    }

    #[test]
    fn request_digest_matches_dnspython() {
        let raw = unhex(NSUPDATE_SIGNED);
        let d = Message::decode_with_offsets(&raw).unwrap();
        let (key, tsig) = tsig_of(&d.message);
        let start = d.tsig_start.unwrap();
        let input = request_digest_input(&raw, start, &key, &tsig).unwrap();
        assert_eq!(input, unhex(NSUPDATE_SIGNED_DIGEST));
        // The key and algorithm names go in lowercase whatever case the record used.
        let upper = Name::parse("KAURI-Key").unwrap();
        assert_eq!(
            request_digest_input(&raw, start, &upper, &tsig).unwrap(),
            input
        );
    }

    #[test]
    fn response_digest_and_record_match_dnspython() {
        let raw = unhex(NSUPDATE_SIGNED);
        let req = Message::decode(&raw).unwrap();
        let (key, req_tsig) = tsig_of(&req);
        let expected = unhex(SIGNED_RESPONSE);
        let (_, resp_tsig) = tsig_of(&Message::decode(&expected).unwrap());

        let mut response = Message::response_to(&req).encode();
        let input = response_digest_input(&req_tsig.mac, &response, &key, &resp_tsig);
        assert_eq!(input, unhex(SIGNED_RESPONSE_DIGEST));
        append_tsig(&mut response, &key, &resp_tsig).unwrap();
        assert_eq!(response, expected);
        let d = Message::decode_with_offsets(&response).unwrap();
        // Header, then the zone question (a 20-byte name, type, class).
        assert_eq!(d.tsig_start, Some(12 + 20 + 4));
    }

    #[test]
    fn rejects_bad_positions() {
        let raw = unhex(NSUPDATE_SIGNED);
        let d = Message::decode_with_offsets(&raw).unwrap();
        let (key, tsig) = tsig_of(&d.message);
        assert!(request_digest_input(&raw, 5, &key, &tsig).is_err());
        assert!(request_digest_input(&raw, raw.len() + 1, &key, &tsig).is_err());
        let mut zero = raw.clone();
        zero[11] = 0;
        assert!(request_digest_input(&zero, 147, &key, &tsig).is_err());
        let mut short = vec![0u8; 11];
        assert!(append_tsig(&mut short, &key, &tsig).is_err());
        let mut full = vec![0u8; 12];
        full[10] = 0xff;
        full[11] = 0xff;
        assert!(append_tsig(&mut full, &key, &tsig).is_err());
        assert_eq!(full.len(), 12);
        let mut huge = tsig.clone();
        huge.mac = vec![0; 70_000];
        let mut msg = vec![0u8; 12];
        assert!(append_tsig(&mut msg, &key, &huge).is_err());
    }

    #[test]
    fn algorithm_names() {
        assert_eq!(
            Name::parse(GSS_TSIG).unwrap().to_wire(),
            b"\x08gss-tsig\x00"
        );
        assert_eq!(Name::parse(GSS_MICROSOFT).unwrap().len_labels(), 3);
    }

    #[test]
    fn tkey_round_trips_through_a_message() {
        let raw = unhex(TKEY_QUERY);
        let m = Message::decode(&raw).unwrap();
        assert_eq!(m.encode(), raw);
    }
}
