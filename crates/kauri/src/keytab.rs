//! MIT's keytab file format (version 0x0502), written by `kauri domain exportkeytab` and
//! read back when it adds to an existing keytab: what services outside the DC (a web
//! server, an NFS server, a Samba member, `kinit -k`) need to accept or obtain Kerberos
//! tickets as an account without knowing its password.
//!
//! The file is the bytes `05 02`, then records, each a signed big-endian 32-bit length
//! and that many bytes: a positive length holds an entry (which may be followed by unused
//! bytes), a negative one a zero-filled hole of that size left by a removed entry, and a
//! zero length (or the end of the file) ends the list. An entry, every integer
//! big-endian:
//!
//! | field | form |
//! |---|---|
//! | component count | u16 (the realm not counted) |
//! | realm, then each component | u16 length and the bytes |
//! | name type | u32 |
//! | timestamp | u32, seconds since 1970 |
//! | key version | u8 (the low 8 bits) |
//! | key type | u16 (the Kerberos enctype number) |
//! | key | u16 length and the bytes |
//! | key version | u32, when 4 or more bytes remain in the record; supersedes the u8 one unless 0 |
//!
//! Version 0x0501 (native byte order, the realm counted among the components) is older
//! than every MIT and Heimdal release still in use, and is refused.

use std::fmt;

use anyhow::{bail, Result};

/// The two bytes every keytab of the version written here starts with.
pub const MAGIC: [u8; 2] = [0x05, 0x02];

/// `KRB5_NT_PRINCIPAL`: the name type written for every entry (what MIT's `ktutil` and
/// Samba write; tools compare names without their types).
pub const NT_PRINCIPAL: u32 = 1;

/// aes256-cts-hmac-sha1-96 (RFC 3962).
pub const AES256_CTS_HMAC_SHA1_96: u16 = 18;
/// aes128-cts-hmac-sha1-96 (RFC 3962).
pub const AES128_CTS_HMAC_SHA1_96: u16 = 17;
/// arcfour-hmac, whose key is the NT hash (RFC 4757).
pub const ARCFOUR_HMAC: u16 = 23;

/// The name MIT's tools give a key type (`klist -e`), or its number.
pub fn enctype_name(enctype: u16) -> String {
    match enctype {
        AES256_CTS_HMAC_SHA1_96 => "aes256-cts-hmac-sha1-96".into(),
        AES128_CTS_HMAC_SHA1_96 => "aes128-cts-hmac-sha1-96".into(),
        ARCFOUR_HMAC => "arcfour-hmac".into(),
        n => format!("enctype-{n}"),
    }
}

/// One key of one principal.
#[derive(Clone, PartialEq, Eq)]
pub struct Entry {
    /// The realm, e.g. `SAMDOM.EXAMPLE.COM`.
    pub realm: String,
    /// The name's components: `["alice"]`, `["HOST", "dc1.samdom.example.com"]`.
    pub components: Vec<String>,
    /// The name type ([`NT_PRINCIPAL`] for what Kauri writes).
    pub name_type: u32,
    /// When the key was written, seconds since 1970.
    pub timestamp: u32,
    /// The key version number.
    pub kvno: u32,
    /// The key type (the Kerberos enctype number).
    pub enctype: u16,
    /// The key itself.
    pub key: Vec<u8>,
}

impl Entry {
    /// The principal as people and MIT's tools write it: components joined by `/`, then
    /// `@` and the realm, with `/`, `@` and `\` inside a name escaped by `\`.
    pub fn principal(&self) -> String {
        let escape = |s: &str| {
            let mut out = String::with_capacity(s.len());
            for c in s.chars() {
                if matches!(c, '/' | '@' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        };
        let name: Vec<String> = self.components.iter().map(|c| escape(c)).collect();
        format!("{}@{}", name.join("/"), escape(&self.realm))
    }

    /// Whether `other` is a key of the same principal, version and type (what an added
    /// key replaces). Names compare exactly, as Kerberos compares them.
    pub fn same_slot(&self, other: &Entry) -> bool {
        self.realm == other.realm
            && self.components == other.components
            && self.kvno == other.kvno
            && self.enctype == other.enctype
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("principal", &self.principal())
            .field("kvno", &self.kvno)
            .field("enctype", &self.enctype)
            .finish_non_exhaustive()
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        // A key is a password equivalent: leave no copy behind in freed memory (the
        // black box keeps the compiler from dropping the writes as dead).
        self.key.fill(0);
        std::hint::black_box(&self.key);
    }
}

/// Appends a 16-bit length and the bytes.
fn put_data(out: &mut Vec<u8>, what: &str, bytes: &[u8]) -> Result<()> {
    let Ok(len) = u16::try_from(bytes.len()) else {
        bail!("{what} is too long for a keytab ({} bytes)", bytes.len());
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// One entry's record body (without its length).
fn encode_entry(e: &Entry) -> Result<Vec<u8>> {
    let Ok(count) = u16::try_from(e.components.len()) else {
        bail!("a principal has too many components");
    };
    if count == 0 {
        bail!("a principal needs at least one name component");
    }
    let mut out = Vec::with_capacity(64 + e.key.len());
    out.extend_from_slice(&count.to_be_bytes());
    put_data(&mut out, "the realm", e.realm.as_bytes())?;
    for c in &e.components {
        put_data(&mut out, "a name component", c.as_bytes())?;
    }
    out.extend_from_slice(&e.name_type.to_be_bytes());
    out.extend_from_slice(&e.timestamp.to_be_bytes());
    // The 8-bit field keeps the low bits; the 32-bit one after the key holds it whole.
    out.push((e.kvno & 0xff) as u8);
    out.extend_from_slice(&e.enctype.to_be_bytes());
    put_data(&mut out, "a key", &e.key)?;
    out.extend_from_slice(&e.kvno.to_be_bytes());
    Ok(out)
}

/// A whole keytab file holding `entries`, in order.
pub fn encode(entries: &[Entry]) -> Result<Vec<u8>> {
    let mut out = MAGIC.to_vec();
    for e in entries {
        let body = encode_entry(e)?;
        let len = i32::try_from(body.len())?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&body);
    }
    Ok(out)
}

/// A cursor over a record that fails instead of reading past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            bail!("an entry ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn data(&mut self) -> Result<&'a [u8]> {
        let len = self.u16()?;
        self.take(usize::from(len))
    }

    fn text(&mut self, what: &str) -> Result<String> {
        let bytes = self.data()?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => bail!("{what} is not UTF-8"),
        }
    }
}

fn decode_entry(record: &[u8]) -> Result<Entry> {
    let mut r = Reader(record);
    let count = r.u16()?;
    let realm = r.text("a realm")?;
    let mut components = Vec::with_capacity(usize::from(count).min(16));
    for _ in 0..count {
        components.push(r.text("a name component")?);
    }
    let name_type = r.u32()?;
    let timestamp = r.u32()?;
    let kvno8 = r.u8()?;
    let enctype = r.u16()?;
    let key = r.data()?.to_vec();
    let kvno = match r.0.len() {
        n if n >= 4 => match r.u32()? {
            0 => u32::from(kvno8),
            v => v,
        },
        _ => u32::from(kvno8),
    };
    Ok(Entry {
        realm,
        components,
        name_type,
        timestamp,
        kvno,
        enctype,
        key,
    })
}

/// The entries of a keytab file, in order (holes skipped).
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>> {
    match bytes {
        [0x05, 0x02, ..] => {}
        [0x05, 0x01, ..] => bail!("a version 0x0501 keytab (too old to add to)"),
        _ => bail!("not a keytab file (it does not start with 05 02)"),
    }
    let mut rest = &bytes[2..];
    let mut out = Vec::new();
    while rest.len() >= 4 {
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        rest = &rest[4..];
        if len == 0 {
            break;
        }
        let size = usize::try_from(len.unsigned_abs())?;
        if rest.len() < size {
            bail!(
                "a record of {size} bytes runs past the end of the file (entry {})",
                out.len() + 1
            );
        }
        let (record, after) = rest.split_at(size);
        rest = after;
        if len > 0 {
            let e = decode_entry(record)
                .map_err(|e| e.context(format!("entry {} of the keytab", out.len() + 1)))?;
            out.push(e);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(components: &[&str], kvno: u32, enctype: u16, key: &[u8]) -> Entry {
        Entry {
            realm: "SAMDOM.EXAMPLE.COM".into(),
            components: components.iter().map(|c| c.to_string()).collect(),
            name_type: NT_PRINCIPAL,
            timestamp: 0x5f00_0001,
            kvno,
            enctype,
            key: key.to_vec(),
        }
    }

    #[test]
    fn one_entry_byte_for_byte() {
        let e = entry(&["HOST", "dc1"], 2, ARCFOUR_HMAC, &[0xaa; 16]);
        let bytes = encode(std::slice::from_ref(&e)).unwrap();
        let mut want = vec![0x05, 0x02];
        let body_len: i32 = 2 + (2 + 18) + (2 + 4) + (2 + 3) + 4 + 4 + 1 + 2 + (2 + 16) + 4;
        want.extend_from_slice(&body_len.to_be_bytes());
        want.extend_from_slice(&[0, 2, 0, 18]);
        want.extend_from_slice(b"SAMDOM.EXAMPLE.COM");
        want.extend_from_slice(&[0, 4]);
        want.extend_from_slice(b"HOST");
        want.extend_from_slice(&[0, 3]);
        want.extend_from_slice(b"dc1");
        want.extend_from_slice(&[0, 0, 0, 1, 0x5f, 0, 0, 1, 2, 0, 23, 0, 16]);
        want.extend_from_slice(&[0xaa; 16]);
        want.extend_from_slice(&[0, 0, 0, 2]);
        assert_eq!(bytes, want);
    }

    #[test]
    fn round_trip_with_large_kvno_and_holes() {
        let a = entry(&["alice"], 300, AES256_CTS_HMAC_SHA1_96, &[1; 32]);
        let b = entry(
            &["HOST", "dc1.samdom.example.com"],
            7,
            AES128_CTS_HMAC_SHA1_96,
            &[2; 16],
        );
        let mut bytes = encode(std::slice::from_ref(&a)).unwrap();
        // A hole of 10 bytes, then the second entry, then the end marker and junk.
        bytes.extend_from_slice(&(-10i32).to_be_bytes());
        bytes.extend_from_slice(&[0; 10]);
        bytes.extend_from_slice(&encode(std::slice::from_ref(&b)).unwrap()[2..]);
        bytes.extend_from_slice(&[0, 0, 0, 0, 9, 9]);
        let back = decode(&bytes).unwrap();
        assert_eq!(back, vec![a, b]);
        assert_eq!(back[0].kvno, 300);
        assert_eq!(
            back[1].principal(),
            "HOST/dc1.samdom.example.com@SAMDOM.EXAMPLE.COM"
        );
    }

    #[test]
    fn without_the_32_bit_kvno_the_8_bit_one_counts() {
        let e = entry(&["bob"], 5, ARCFOUR_HMAC, &[3; 16]);
        let mut bytes = encode(&[e]).unwrap();
        // Drop the trailing 32-bit kvno and shorten the record to match.
        bytes.truncate(bytes.len() - 4);
        let len = i32::from_be_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]) - 4;
        bytes[2..6].copy_from_slice(&len.to_be_bytes());
        assert_eq!(decode(&bytes).unwrap()[0].kvno, 5);
    }

    #[test]
    fn refuses_what_is_no_keytab() {
        assert!(decode(b"").is_err());
        assert!(decode(&[0x05, 0x01, 0, 0, 0, 0]).is_err());
        assert!(decode(b"hello").is_err());
        // A record longer than the file.
        assert!(decode(&[0x05, 0x02, 0, 0, 0, 40, 0, 1]).is_err());
        // A record whose key runs past its own end.
        let mut bytes = encode(&[entry(&["x"], 1, ARCFOUR_HMAC, &[0; 16])]).unwrap();
        let len = i32::from_be_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]) - 10;
        bytes[2..6].copy_from_slice(&len.to_be_bytes());
        assert!(decode(&bytes).is_err());
        // Just the version: an empty keytab.
        assert!(decode(&MAGIC).unwrap().is_empty());
    }

    #[test]
    fn principals_escape_separators() {
        let e = entry(&["a/b@c"], 1, ARCFOUR_HMAC, &[0; 16]);
        assert_eq!(e.principal(), "a\\/b\\@c@SAMDOM.EXAMPLE.COM");
    }
}
