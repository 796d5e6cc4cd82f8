//! Active Directory attribute syntaxes and how they map onto Kauri's storage
//! syntaxes and onto the LDAP syntax OIDs published in the subschema.
//!
//! An AD syntax is identified by the triple (`attributeSyntax`, `oMSyntax`,
//! `oMObjectClass`) of an `attributeSchema` object; MS-ADTS section
//! 3.1.1.2.2.2 lists the 23 valid combinations, which are the variants of
//! [`AdSyntax`]. Each one maps to a [`kauri_db::Syntax`] that decides how
//! values are validated, compared and indexed.
//!
//! # Storage syntax mapping
//!
//! | attributeSyntax | oMSyntax | AD name                      | Kauri syntax        |
//! |-----------------|----------|------------------------------|---------------------|
//! | 2.5.5.1         | 127      | Object(DS-DN)                | `Dn`                |
//! | 2.5.5.2         | 6        | String(Object-Identifier)    | `Oid`               |
//! | 2.5.5.3         | 27       | String(Case)                 | `CaseExactString`   |
//! | 2.5.5.4         | 20       | String(Teletex)              | `DirectoryString`   |
//! | 2.5.5.5         | 19       | String(Printable)            | `PrintableString`   |
//! | 2.5.5.5         | 22       | String(IA5)                  | `Ia5String`         |
//! | 2.5.5.6         | 18       | String(Numeric)              | `NumericString`     |
//! | 2.5.5.7         | 127      | Object(DN-Binary)            | `DirectoryString`   |
//! | 2.5.5.7         | 127      | Object(OR-Name)              | `OctetString`       |
//! | 2.5.5.8         | 1        | Boolean                      | `Boolean`           |
//! | 2.5.5.9         | 2, 10    | Integer, Enumeration         | `Integer`           |
//! | 2.5.5.10        | 4        | String(Octet)                | `OctetString` or `Guid` (see below) |
//! | 2.5.5.10        | 127      | Object(Replica-Link)         | `OctetString`       |
//! | 2.5.5.11        | 23       | String(UTC-Time)             | `UtcTime`           |
//! | 2.5.5.11        | 24       | String(Generalized-Time)     | `GeneralizedTime`   |
//! | 2.5.5.12        | 64       | String(Unicode)              | `DirectoryString`   |
//! | 2.5.5.13        | 127      | Object(Presentation-Address) | `DirectoryString`   |
//! | 2.5.5.14        | 127      | Object(DN-String)            | `DirectoryString`   |
//! | 2.5.5.14        | 127      | Object(Access-Point)         | `OctetString`       |
//! | 2.5.5.15        | 66       | String(NT-Sec-Desc)          | `OctetString`       |
//! | 2.5.5.16        | 65       | LargeInteger                 | `Integer`           |
//! | 2.5.5.17        | 4        | String(Sid)                  | `Sid`               |
//!
//! DN-Binary (`B:len:hex:dn`) and DN-String (`S:len:text:dn`) values match as whole
//! values, case-insensitively (as AD matches `wellKnownObjects=B:32:…:CN=Users,…`).
//!
//! # Which octet strings are GUIDs
//!
//! AD has no GUID syntax; GUIDs are String(Octet) values. An attribute is
//! stored with [`Syntax::Guid`] when it is a String(Octet) (2.5.5.10 / 4)
//! attribute and either
//!
//! * its lDAPDisplayName contains `guid` (any case) **and** its schema fixes
//!   the length at exactly 16 bytes (`rangeLower` = `rangeUpper` = 16), or
//! * it is one of [`GUID_ATTRIBUTES_BY_NAME`]: GUIDs per MS-ADA whose name or
//!   range does not say so (`invocationId`, a DSA's invocation GUID, and
//!   `parentGUID`, a constructed attribute without a range).
//!
//! In the Windows Server 2016 schema the first rule selects `objectGUID`,
//! `schemaIDGUID`, `attributeSecurityGUID`, `siteGUID`, `netbootGUID`,
//! `pKTGuid`, `fRSReplicaSetGUID`, `fRSVersionGUID`, `msDS-AzObjectGuid`,
//! `msDS-OptionalFeatureGUID`, `msDFSR-ContentSetGuid`,
//! `msDFSR-ReplicationGroupGuid`, `msDFS-GenerationGUIDv2`,
//! `msDFS-LinkIdentityGUIDv2` and `msDFS-NamespaceIdentityGUIDv2`. Fixed
//! 16-byte values that are not named as GUIDs (such as `mSMQDigests`, which
//! holds MD5 digests) stay octet strings, and so do `*Guid` attributes
//! without a fixed length (e.g. `mS-DS-ConsistencyGuid`, which may hold any
//! bytes).

use kauri_db::Syntax;

use super::AttributeDef;

/// BER encoding of the `oMObjectClass` of Object(DS-DN), 1.3.12.2.1011.28.0.714.
pub const OM_CLASS_DS_DN: &[u8] = &[0x2B, 0x0C, 0x02, 0x87, 0x73, 0x1C, 0x00, 0x85, 0x4A];
/// BER encoding of the `oMObjectClass` of Object(DN-Binary), 1.2.840.113556.1.1.1.11.
pub const OM_CLASS_DN_BINARY: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x14, 0x01, 0x01, 0x01, 0x0B];
/// BER encoding of the `oMObjectClass` of Object(OR-Name), 2.6.6.1.2.5.11.29.
pub const OM_CLASS_OR_NAME: &[u8] = &[0x56, 0x06, 0x01, 0x02, 0x05, 0x0B, 0x1D];
/// BER encoding of the `oMObjectClass` of Object(DN-String), 1.2.840.113556.1.1.1.12.
pub const OM_CLASS_DN_STRING: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x14, 0x01, 0x01, 0x01, 0x0C];
/// BER encoding of the `oMObjectClass` of Object(Access-Point), 1.3.12.2.1011.28.0.702.
pub const OM_CLASS_ACCESS_POINT: &[u8] = &[0x2B, 0x0C, 0x02, 0x87, 0x73, 0x1C, 0x00, 0x85, 0x3E];
/// BER encoding of the `oMObjectClass` of Object(Presentation-Address), 1.3.12.2.1011.28.0.732.
pub const OM_CLASS_PRESENTATION_ADDRESS: &[u8] =
    &[0x2B, 0x0C, 0x02, 0x87, 0x73, 0x1C, 0x00, 0x85, 0x5C];
/// BER encoding of the `oMObjectClass` of Object(Replica-Link), 1.2.840.113556.1.1.1.6.
pub const OM_CLASS_REPLICA_LINK: &[u8] =
    &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x14, 0x01, 0x01, 0x01, 0x06];

/// String(Octet) attributes stored as GUIDs although their name or range
/// does not identify them as such (see the module documentation).
pub const GUID_ATTRIBUTES_BY_NAME: &[&str] = &["invocationId", "parentGUID"];

/// The attribute syntaxes a DC supports (MS-ADTS 3.1.1.2.2.2); the set is
/// fixed, so schema extensions are checked against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdSyntax {
    /// Boolean (2.5.5.8 / 1).
    Boolean,
    /// Enumeration (2.5.5.9 / 10).
    Enumeration,
    /// Integer (2.5.5.9 / 2).
    Integer,
    /// LargeInteger (2.5.5.16 / 65).
    LargeInteger,
    /// Object(Access-Point) (2.5.5.14 / 127).
    AccessPoint,
    /// Object(DN-String) (2.5.5.14 / 127).
    DnString,
    /// Object(OR-Name) (2.5.5.7 / 127).
    OrName,
    /// Object(DN-Binary) (2.5.5.7 / 127).
    DnBinary,
    /// Object(DS-DN) (2.5.5.1 / 127).
    DsDn,
    /// Object(Presentation-Address) (2.5.5.13 / 127).
    PresentationAddress,
    /// Object(Replica-Link) (2.5.5.10 / 127).
    ReplicaLink,
    /// String(Case) (2.5.5.3 / 27).
    CaseString,
    /// String(IA5) (2.5.5.5 / 22).
    Ia5String,
    /// String(NT-Sec-Desc) (2.5.5.15 / 66).
    NtSecurityDescriptor,
    /// String(Numeric) (2.5.5.6 / 18).
    NumericString,
    /// String(Object-Identifier) (2.5.5.2 / 6).
    ObjectIdentifier,
    /// String(Octet) (2.5.5.10 / 4).
    OctetString,
    /// String(Printable) (2.5.5.5 / 19).
    PrintableString,
    /// String(Sid) (2.5.5.17 / 4).
    Sid,
    /// String(Teletex) (2.5.5.4 / 20).
    TeletexString,
    /// String(Unicode) (2.5.5.12 / 64).
    UnicodeString,
    /// String(UTC-Time) (2.5.5.11 / 23).
    UtcTime,
    /// String(Generalized-Time) (2.5.5.11 / 24).
    GeneralizedTime,
}

impl AdSyntax {
    /// Identifies the syntax of an `attributeSchema` object. For oMSyntax 127
    /// the `oMObjectClass` picks between the two syntaxes sharing an
    /// `attributeSyntax`; when it is absent the DN-carrying variant is assumed.
    /// Returns `None` for combinations MS-ADTS does not list.
    pub fn identify(
        attribute_syntax: &str,
        om_syntax: i32,
        om_object_class: Option<&[u8]>,
    ) -> Option<AdSyntax> {
        use AdSyntax::*;
        let s = match (attribute_syntax, om_syntax) {
            ("2.5.5.1", 127) => DsDn,
            ("2.5.5.2", 6) => ObjectIdentifier,
            ("2.5.5.3", 27) => CaseString,
            ("2.5.5.4", 20) => TeletexString,
            ("2.5.5.5", 19) => PrintableString,
            ("2.5.5.5", 22) => Ia5String,
            ("2.5.5.6", 18) => NumericString,
            ("2.5.5.7", 127) => match om_object_class {
                Some(c) if c == OM_CLASS_OR_NAME => OrName,
                _ => DnBinary,
            },
            ("2.5.5.8", 1) => Boolean,
            ("2.5.5.9", 2) => Integer,
            ("2.5.5.9", 10) => Enumeration,
            ("2.5.5.10", 4) => OctetString,
            ("2.5.5.10", 127) => ReplicaLink,
            ("2.5.5.11", 23) => UtcTime,
            ("2.5.5.11", 24) => GeneralizedTime,
            ("2.5.5.12", 64) => UnicodeString,
            ("2.5.5.13", 127) => PresentationAddress,
            ("2.5.5.14", 127) => match om_object_class {
                Some(c) if c == OM_CLASS_ACCESS_POINT => AccessPoint,
                _ => DnString,
            },
            ("2.5.5.15", 66) => NtSecurityDescriptor,
            ("2.5.5.16", 65) => LargeInteger,
            ("2.5.5.17", 4) => Sid,
            _ => return None,
        };
        Some(s)
    }

    /// The syntax of a definition, if its combination is valid.
    pub fn of(attr: &AttributeDef) -> Option<AdSyntax> {
        AdSyntax::identify(
            &attr.attribute_syntax,
            attr.om_syntax,
            attr.om_object_class.as_deref(),
        )
    }

    /// The syntax name MS-ADTS uses, for messages and listings.
    pub fn name(self) -> &'static str {
        use AdSyntax::*;
        match self {
            Boolean => "Boolean",
            Enumeration => "Enumeration",
            Integer => "Integer",
            LargeInteger => "LargeInteger",
            AccessPoint => "Object(Access-Point)",
            DnString => "Object(DN-String)",
            OrName => "Object(OR-Name)",
            DnBinary => "Object(DN-Binary)",
            DsDn => "Object(DS-DN)",
            PresentationAddress => "Object(Presentation-Address)",
            ReplicaLink => "Object(Replica-Link)",
            CaseString => "String(Case)",
            Ia5String => "String(IA5)",
            NtSecurityDescriptor => "String(NT-Sec-Desc)",
            NumericString => "String(Numeric)",
            ObjectIdentifier => "String(Object-Identifier)",
            OctetString => "String(Octet)",
            PrintableString => "String(Printable)",
            Sid => "String(Sid)",
            TeletexString => "String(Teletex)",
            UnicodeString => "String(Unicode)",
            UtcTime => "String(UTC-Time)",
            GeneralizedTime => "String(Generalized-Time)",
        }
    }

    /// The LDAP syntax OID that AD's aggregate subschema publishes in the
    /// `SYNTAX` field of `attributeTypes` for this syntax. Standard syntaxes
    /// use their RFC 4517 OIDs; AD's own (large integer, security
    /// descriptor, DN-Binary, DN-String, OR-Name, case-sensitive and teletex
    /// strings) use Microsoft OIDs; SIDs and replica links are published as
    /// octet strings.
    pub fn ldap_syntax_oid(self) -> &'static str {
        use AdSyntax::*;
        match self {
            Boolean => "1.3.6.1.4.1.1466.115.121.1.7",
            Enumeration | Integer => "1.3.6.1.4.1.1466.115.121.1.27",
            LargeInteger => "1.2.840.113556.1.4.906",
            AccessPoint => "1.3.6.1.4.1.1466.115.121.1.2",
            DnString => "1.2.840.113556.1.4.904",
            OrName => "1.2.840.113556.1.4.1221",
            DnBinary => "1.2.840.113556.1.4.903",
            DsDn => "1.3.6.1.4.1.1466.115.121.1.12",
            PresentationAddress => "1.3.6.1.4.1.1466.115.121.1.43",
            ReplicaLink | OctetString | Sid => "1.3.6.1.4.1.1466.115.121.1.40",
            CaseString => "1.2.840.113556.1.4.1362",
            Ia5String => "1.3.6.1.4.1.1466.115.121.1.26",
            NtSecurityDescriptor => "1.2.840.113556.1.4.907",
            NumericString => "1.3.6.1.4.1.1466.115.121.1.36",
            ObjectIdentifier => "1.3.6.1.4.1.1466.115.121.1.38",
            PrintableString => "1.3.6.1.4.1.1466.115.121.1.44",
            TeletexString => "1.2.840.113556.1.4.905",
            UnicodeString => "1.3.6.1.4.1.1466.115.121.1.15",
            UtcTime => "1.3.6.1.4.1.1466.115.121.1.53",
            GeneralizedTime => "1.3.6.1.4.1.1466.115.121.1.24",
        }
    }

    /// The storage syntax for values of this AD syntax (before the GUID
    /// refinement of [`kauri_syntax`]).
    pub fn storage_syntax(self) -> Syntax {
        use AdSyntax::*;
        match self {
            DsDn => Syntax::Dn,
            ObjectIdentifier => Syntax::Oid,
            CaseString => Syntax::CaseExactString,
            // DN-Binary and DN-String match without regard to case (the hex digits, the DN).
            TeletexString | UnicodeString | PresentationAddress | DnBinary | DnString => {
                Syntax::DirectoryString
            }
            PrintableString => Syntax::PrintableString,
            Ia5String => Syntax::Ia5String,
            NumericString => Syntax::NumericString,
            OrName | AccessPoint | ReplicaLink | OctetString | NtSecurityDescriptor => {
                Syntax::OctetString
            }
            Boolean => Syntax::Boolean,
            Integer | Enumeration | LargeInteger => Syntax::Integer,
            UtcTime => Syntax::UtcTime,
            GeneralizedTime => Syntax::GeneralizedTime,
            Sid => Syntax::Sid,
        }
    }
}

/// Whether an attribute holds GUIDs, by the rule in the module documentation.
pub fn is_guid_attribute(attr: &AttributeDef) -> bool {
    if attr.attribute_syntax != "2.5.5.10" || attr.om_syntax != 4 {
        return false;
    }
    if GUID_ATTRIBUTES_BY_NAME
        .iter()
        .any(|n| n.eq_ignore_ascii_case(&attr.ldap_name))
    {
        return true;
    }
    attr.ldap_name.to_ascii_lowercase().contains("guid")
        && attr.range_lower == Some(16)
        && attr.range_upper == Some(16)
}

/// The storage syntax of an attribute: its AD syntax's mapping, refined to
/// [`Syntax::Guid`] for GUID attributes; unknown combinations fall back to
/// `DirectoryString`, the database's default.
pub fn kauri_syntax(attr: &AttributeDef) -> Syntax {
    if is_guid_attribute(attr) {
        return Syntax::Guid;
    }
    AdSyntax::of(attr)
        .map(AdSyntax::storage_syntax)
        .unwrap_or(Syntax::DirectoryString)
}

/// The `SYNTAX` OID the subschema publishes for an attribute; unknown
/// combinations are published as Directory String.
pub fn ldap_syntax_oid(attr: &AttributeDef) -> &'static str {
    AdSyntax::of(attr)
        .map(AdSyntax::ldap_syntax_oid)
        .unwrap_or("1.3.6.1.4.1.1466.115.121.1.15")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_combination_is_identified() {
        let table: &[(&str, i32, Option<&[u8]>, AdSyntax)] = &[
            ("2.5.5.1", 127, Some(OM_CLASS_DS_DN), AdSyntax::DsDn),
            ("2.5.5.7", 127, Some(OM_CLASS_DN_BINARY), AdSyntax::DnBinary),
            ("2.5.5.7", 127, Some(OM_CLASS_OR_NAME), AdSyntax::OrName),
            (
                "2.5.5.14",
                127,
                Some(OM_CLASS_DN_STRING),
                AdSyntax::DnString,
            ),
            (
                "2.5.5.14",
                127,
                Some(OM_CLASS_ACCESS_POINT),
                AdSyntax::AccessPoint,
            ),
            (
                "2.5.5.13",
                127,
                Some(OM_CLASS_PRESENTATION_ADDRESS),
                AdSyntax::PresentationAddress,
            ),
            (
                "2.5.5.10",
                127,
                Some(OM_CLASS_REPLICA_LINK),
                AdSyntax::ReplicaLink,
            ),
            ("2.5.5.11", 23, None, AdSyntax::UtcTime),
            ("2.5.5.11", 24, None, AdSyntax::GeneralizedTime),
            ("2.5.5.5", 19, None, AdSyntax::PrintableString),
            ("2.5.5.5", 22, None, AdSyntax::Ia5String),
        ];
        for (a, o, c, want) in table {
            assert_eq!(AdSyntax::identify(a, *o, *c), Some(*want), "{a}/{o}");
        }
        assert_eq!(AdSyntax::identify("2.5.5.12", 4, None), None);
        assert_eq!(AdSyntax::identify("2.5.5.99", 64, None), None);
    }

    #[test]
    fn storage_syntaxes() {
        assert_eq!(AdSyntax::Sid.storage_syntax(), Syntax::Sid);
        assert_eq!(AdSyntax::LargeInteger.storage_syntax(), Syntax::Integer);
        assert_eq!(AdSyntax::DnBinary.storage_syntax(), Syntax::DirectoryString);
        assert_eq!(AdSyntax::OrName.storage_syntax(), Syntax::OctetString);
        assert_eq!(
            AdSyntax::UnicodeString.ldap_syntax_oid(),
            "1.3.6.1.4.1.1466.115.121.1.15"
        );
    }
}
