//! An object's replication metadata as AD shows it (`replPropertyMetaData`): per
//! attribute, how often it changed, when, where and at which USN. The database keeps a
//! stamp per stored attribute; this module names attributes by AD's attribute ids
//! (ATTRTYP) and encodes the NDR blob AD's tools read.
//!
//! The password attributes (`unicodePwd`, `dBCSPwd`, `ntPwdHistory`, `lmPwdHistory`)
//! are not stored as such: an account's sealed secrets live in `supplementalCredentials`
//! and its key version in `msDS-KeyVersionNumber`, whose stamp stands for all four.

use kauri_db::DbRead;
use kauri_kv::Backend;

use super::error::DirResult;
use crate::schema::Schema;

/// AD's default OID prefix table (MS-DRSR 5.16.4): an attribute id is the index of its
/// OID's prefix in the high 16 bits and its last arc in the low 16.
const PREFIXES: &[&str] = &[
    "2.5.4",
    "2.5.6",
    "1.2.840.113556.1.2",
    "1.2.840.113556.1.3",
    "2.16.840.1.101.2.2.1",
    "2.16.840.1.101.2.2.3",
    "2.16.840.1.101.2.1.5",
    "2.16.840.1.101.2.1.4",
    "2.5.5",
    "1.2.840.113556.1.4",
    "1.2.840.113556.1.5",
    "1.2.840.113556.1.4.260",
    "1.2.840.113556.1.5.56",
    "1.2.840.113556.1.4.262",
    "1.2.840.113556.1.5.57",
    "1.2.840.113556.1.4.263",
    "1.2.840.113556.1.5.58",
    "1.2.840.113556.1.5.73",
    "1.2.840.113556.1.4.305",
    "0.9.2342.19200300.100",
    "2.16.840.1.113730.3",
    "0.9.2342.19200300.100.1",
    "2.16.840.1.113730.3.1",
    "1.2.840.113556.1.5.7000",
    "2.5.21",
    "2.5.18",
    "2.5.20",
    "1.3.6.1.4.1.1466.101.119",
    "2.16.840.1.113730.3.2",
    "1.3.6.1.4.1.250.1",
    "1.2.840.113549.1.9",
    "0.9.2342.19200300.100.4",
    "1.2.840.113556.1.6.23",
    "1.2.840.113556.1.6.18.1",
    "1.2.840.113556.1.6.18.2",
    "1.2.840.113556.1.6.13.3",
    "1.2.840.113556.1.6.13.4",
    "1.3.6.1.1.1.1",
    "1.3.6.1.1.1.2",
];

/// Seconds from 1601-01-01 (AD's epoch) to 1970-01-01.
const NT_EPOCH_TO_UNIX_SECS: u64 = 11_644_473_600;

/// `systemFlags` bit of an attribute that does not replicate.
const FLAG_ATTR_NOT_REPLICATED: i32 = 0x1;
/// `systemFlags` bit of an attribute computed when read.
const FLAG_ATTR_IS_CONSTRUCTED: i32 = 0x4;

/// The password attributes the key version stands for: OID and name.
const PASSWORD_ATTRIBUTES: &[(&str, &str)] = &[
    ("1.2.840.113556.1.4.90", "unicodePwd"),
    ("1.2.840.113556.1.4.55", "dBCSPwd"),
    ("1.2.840.113556.1.4.94", "ntPwdHistory"),
    ("1.2.840.113556.1.4.160", "lmPwdHistory"),
];

/// The attribute id of an OID in AD's default prefix table, when it has one there.
/// (Arcs of 16384 and more take AD's longer encoding and are not mapped.)
pub fn attid(oid: &str) -> Option<u32> {
    let (prefix, last) = oid.rsplit_once('.')?;
    let last: u32 = last.parse().ok()?;
    if last >= 16_384 {
        return None;
    }
    let index = PREFIXES.iter().position(|p| *p == prefix)?;
    Some(((index as u32) << 16) | last)
}

/// One attribute's line of the metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaEntry {
    /// The attribute id.
    pub attid: u32,
    /// Originating changes so far.
    pub version: u32,
    /// When the last originating change was made, seconds since 1601.
    pub change_time: u64,
    /// The database (invocation id) that made it.
    pub invocation: [u8; 16],
    /// Its USN there.
    pub originating_usn: u64,
    /// The USN of the local write.
    pub local_usn: u64,
}

/// The `replPropertyMetaDataBlob` (version 1) of the entries, sorted by attribute id as
/// AD keeps them: NDR, little-endian, 48 bytes per entry.
pub fn encode(entries: &mut [MetaEntry]) -> Vec<u8> {
    entries.sort_by_key(|e| e.attid);
    let mut out = Vec::with_capacity(16 + entries.len() * 48);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for e in entries.iter() {
        out.extend_from_slice(&e.attid.to_le_bytes());
        out.extend_from_slice(&e.version.to_le_bytes());
        out.extend_from_slice(&e.change_time.to_le_bytes());
        out.extend_from_slice(&e.invocation);
        out.extend_from_slice(&e.originating_usn.to_le_bytes());
        out.extend_from_slice(&e.local_usn.to_le_bytes());
    }
    out
}

/// A GUID's text form as AD stores it in binary (the first three groups little-endian).
#[cfg(test)]
fn guid_bytes(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut b = [0u8; 16];
    for (i, slot) in b.iter_mut().enumerate() {
        *slot = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    Some(b)
}

/// The replication metadata of object `id`, from its stamps: replicated attributes only,
/// each with its lDAPDisplayName and its attribute id (`msDS-IntId` for attributes that
/// have one; attributes with neither an id nor a mapped OID are left out).
pub fn attribute_metadata<B: Backend>(
    r: &DbRead<'_, B>,
    schema: &Schema,
    invocation: [u8; 16],
    id: u64,
) -> DirResult<Vec<(String, MetaEntry)>> {
    let Some(rec) = r.record(id)? else {
        return Ok(Vec::new());
    };
    let stamps = rec.stamps()?;
    let line = |attid: u32, version: u64, s: &kauri_db::record::Stamp| MetaEntry {
        attid,
        version: u32::try_from(version).unwrap_or(u32::MAX),
        change_time: s.orig_time.saturating_add(NT_EPOCH_TO_UNIX_SECS),
        invocation: if s.orig_invocation == 0 {
            invocation
        } else {
            // Other databases' invocation ids are not kept yet.
            [0; 16]
        },
        originating_usn: s.orig_usn,
        local_usn: s.local_usn,
    };
    let mut entries = Vec::new();
    // DN values kept as references live beside the record; AD shows them like any value.
    let references = r.reference_stamps(id)?;
    let stored = rec
        .attrs()
        .map(|a| (a.id, a.values().next().map(|v| v.raw)))
        .zip(stamps.iter().copied())
        .chain(references.into_iter().map(|(a, s)| ((a, None), s)));
    for ((aid, first), stamp) in stored {
        let stamp = &stamp;
        let Some(name) = r.attr_name(aid) else {
            continue;
        };
        let Some(def) = schema.attribute(&name[..]) else {
            continue;
        };
        if def.ldap_name.eq_ignore_ascii_case("msDS-KeyVersionNumber") {
            let kvno = first
                .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok())
                .unwrap_or(stamp.version);
            for (oid, pw_name) in PASSWORD_ATTRIBUTES {
                if let Some(at) = attid(oid) {
                    entries.push(((*pw_name).to_string(), line(at, kvno, stamp)));
                }
            }
            continue;
        }
        if def.system_flags & (FLAG_ATTR_NOT_REPLICATED | FLAG_ATTR_IS_CONSTRUCTED) != 0 {
            continue;
        }
        // Attributes defined after the base schema are known by their msDS-IntId.
        let at = match def.int_id {
            Some(v) => Some(v as u32),
            None => attid(&def.attribute_id),
        };
        if let Some(at) = at {
            entries.push((def.ldap_name.clone(), line(at, stamp.version, stamp)));
        }
    }
    entries.sort_by_key(|(_, e)| e.attid);
    Ok(entries)
}

/// `replPropertyMetaData`: [`attribute_metadata`] as AD's NDR blob; `None` when the object
/// has nothing to show.
pub fn repl_property_meta_data<B: Backend>(
    r: &DbRead<'_, B>,
    schema: &Schema,
    invocation: [u8; 16],
    id: u64,
) -> DirResult<Option<Vec<u8>>> {
    let mut entries: Vec<MetaEntry> = attribute_metadata(r, schema, invocation, id)?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    if entries.is_empty() {
        return Ok(None);
    }
    Ok(Some(encode(&mut entries)))
}

/// `msDS-ReplAttributeMetaData`: [`attribute_metadata`] as the XML documents AD returns,
/// one `DS_REPL_ATTR_META_DATA` per attribute; `dsa_dn` names the DSA that made the
/// changes this database originated.
pub fn repl_attribute_meta_data_xml<B: Backend>(
    r: &DbRead<'_, B>,
    schema: &Schema,
    invocation: [u8; 16],
    dsa_dn: &str,
    id: u64,
) -> DirResult<Vec<String>> {
    Ok(attribute_metadata(r, schema, invocation, id)?
        .into_iter()
        .map(|(name, e)| {
            let unix = e.change_time.saturating_sub(NT_EPOCH_TO_UNIX_SECS);
            let when = kauri_db::syntax::generalized_time(unix);
            // 20240102030405.0Z → 2024-01-02T03:04:05Z
            let iso = format!(
                "{}-{}-{}T{}:{}:{}Z",
                &when[0..4],
                &when[4..6],
                &when[6..8],
                &when[8..10],
                &when[10..12],
                &when[12..14]
            );
            let dsa = if e.invocation == invocation {
                dsa_dn
            } else {
                ""
            };
            format!(
                "<DS_REPL_ATTR_META_DATA>\n\t<pszAttributeName>{name}</pszAttributeName>\n\t\
                 <dwVersion>{}</dwVersion>\n\t<ftimeLastOriginatingChange>{iso}\
                 </ftimeLastOriginatingChange>\n\t<uuidLastOriginatingDsaInvocationID>{}\
                 </uuidLastOriginatingDsaInvocationID>\n\t<usnOriginatingChange>{}\
                 </usnOriginatingChange>\n\t<usnLocalChange>{}</usnLocalChange>\n\t\
                 <pszLastOriginatingDsaDN>{}</pszLastOriginatingDsaDN>\n\
                 </DS_REPL_ATTR_META_DATA>\n",
                e.version,
                kauri_db::syntax::guid_to_string(&e.invocation),
                e.originating_usn,
                e.local_usn,
                xml_text(dsa),
            )
        })
        .collect())
}

/// Text escaped for an XML element.
fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_ids_follow_the_prefix_table() {
        assert_eq!(attid("2.5.4.3"), Some(0x3)); // cn
        assert_eq!(attid("1.2.840.113556.1.4.90"), Some(0x9005a)); // unicodePwd
        assert_eq!(attid("1.2.840.113556.1.4.96"), Some(0x90060)); // pwdLastSet
        assert_eq!(attid("1.2.840.113556.1.2.13"), Some(0x2000d)); // displayName
        assert_eq!(attid("1.9.9"), None);
    }

    #[test]
    fn blob_layout_is_ads() {
        let mut e = vec![MetaEntry {
            attid: 0x1122_3344,
            version: 5,
            change_time: 0x0001_b0df_373b,
            invocation: guid_bytes("00112233-4455-6677-8899-aabbccddeeff").unwrap(),
            originating_usn: 0x1111,
            local_usn: 0x2222,
        }];
        let hex: String = encode(&mut e).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "0100000000000000010000000000000044332211050000003b37dfb00100000033221100554477\
             668899aabbccddeeff11110000000000002222000000000000"
        );
    }
}
