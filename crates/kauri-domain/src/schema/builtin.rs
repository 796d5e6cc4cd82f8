//! Kauri's built-in schema: the core classes and attributes of Active
//! Directory (MS-ADSC, MS-ADA1–3), so that a machine without Microsoft's
//! published schema files can still provision and serve a domain.
//!
//! The set covers the classes needed to provision a domain and its
//! configuration and schema partitions — `top`, `person`,
//! `organizationalPerson`, `user`, `inetOrgPerson`, `computer`, `group`,
//! `contact`, `organizationalUnit`, `container`, `domain`, `domainDNS`,
//! `builtinDomain`, `foreignSecurityPrincipal`, `msDS-PasswordSettings`,
//! `msDS-PasswordSettingsContainer`, `attributeSchema`, `classSchema`,
//! `dMD`, `subSchema`, `configuration`, `crossRef`, `crossRefContainer`,
//! `site`, `sitesContainer`, `serversContainer`, `server`, `nTDSDSA`,
//! `nTDSDSARO`, `nTDSConnection`, `nTDSSiteSettings`, `subnet`,
//! `subnetContainer`, `siteLink`, `interSiteTransport`,
//! `interSiteTransportContainer`, `rIDManager`, `rIDSet`, `lostAndFound`,
//! `infrastructureUpdate`, `groupPolicyContainer`, `trustedDomain`,
//! `secret`, `nTDSService`, `queryPolicy`, `displaySpecifier`,
//! `controlAccessRight`, `physicalLocation`, `msDS-QuotaContainer`,
//! `msDS-OptionalFeature`, `leaf`, and the AD-integrated DNS classes
//! `dnsZone`, `dnsNode`, `dnsZoneScope` and `dnsZoneScopeContainer` —
//! together with every superclass and auxiliary class they use
//! (`securityPrincipal`, `mailRecipient`, `samDomain`, `samDomainBase`,
//! `posixAccount`, …). Class definitions are complete (all must/may lists,
//! possible superiors, default security descriptors). Attributes cover
//! everything those classes require, the account, password-policy, RID,
//! replication-topology and schema-object attributes a domain controller
//! manipulates itself, and both halves of every linked pair among them,
//! every attribute [`crate::provision`] sets, the DNS attributes
//! [`crate::dns`] writes and zones carry (`dnsRecord`, `dNSProperty`,
//! `dNSTombstoned`, `dnsAllowDynamic`, `dnsAllowXFR`,
//! `dnsNotifySecondaries`, `dnsSecureSecondaries`), and the user attributes
//! `kauri traffic populate` writes (`employeeID`, `employeeType`, …).
//! Optional attributes outside that set (e.g. the DNSSEC `msDNS-*`
//! attributes of `dnsZone`) are named by the classes but left undefined;
//! the directory refuses values for them until the schema is extended.
//!
//! The definitions are kept as a compact table, one record per line with
//! `|`-separated fields:
//!
//! ```text
//! A|lDAPDisplayName|cn|attributeID|attributeSyntax|oMSyntax|oMObjectClass (hex)|flags|linkID|searchFlags|systemFlags|rangeLower|rangeUpper|schemaIDGUID|attributeSecurityGUID
//! C|lDAPDisplayName|cn|governsID|subClassOf|objectClassCategory|flags|systemFlags|schemaIDGUID|rDNAttID|defaultObjectCategory (cn)|mustContain|mayContain|systemMustContain|systemMayContain|auxiliaryClass|systemAuxiliaryClass|possSuperiors|systemPossSuperiors|defaultSecurityDescriptor
//! ```
//!
//! Lists are space-separated, empty fields mean absent, GUIDs use the
//! usual text form. Attribute flags: `S` single-valued, `Y` system-only,
//! `P` member of the partial attribute set, `H` shown in advanced view
//! only. Class flags: `Y` system-only, `D` hidden by default.

use super::{AttributeDef, ClassDef, Schema, SchemaError};

/// The suffix of `defaultObjectCategory` DNs in schema sources.
pub const SCHEMA_DN_SUFFIX: &str = ",CN=Schema,CN=Configuration,DC=X";

/// The file name used in errors about the built-in table.
const SOURCE: &str = "<builtin>";

/// Parses the built-in table into a schema.
pub fn schema() -> Result<Schema, SchemaError> {
    let mut schema = Schema::new();
    for (idx, line) in DATA.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let located = |e: SchemaError| SchemaError::Malformed {
            file: SOURCE.to_string(),
            line: idx + 1,
            reason: e.to_string(),
        };
        let fields: Vec<&str> = line.split('|').collect();
        match fields.first() {
            Some(&"A") => {
                let def = parse_attribute(&fields).map_err(located)?;
                schema.insert_attribute(def).map_err(located)?;
            }
            Some(&"C") => {
                let def = parse_class(&fields).map_err(located)?;
                schema.insert_class(def).map_err(located)?;
            }
            _ => {
                return Err(located(SchemaError::Invalid {
                    name: line.chars().take(20).collect(),
                    reason: "record must start with 'A|' or 'C|'".into(),
                }))
            }
        }
    }
    schema.check_class_references()?;
    Ok(schema)
}

/// A table error about record `name`.
fn bad(name: &str, reason: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        name: name.to_string(),
        reason: reason.into(),
    }
}

/// An optional number field.
fn opt_num<T: std::str::FromStr>(name: &str, field: &str) -> Result<Option<T>, SchemaError> {
    if field.is_empty() {
        return Ok(None);
    }
    field
        .parse()
        .map(Some)
        .map_err(|_| bad(name, format!("'{field}' is not a number")))
}

/// A number field that defaults to zero.
fn num<T: std::str::FromStr + Default>(name: &str, field: &str) -> Result<T, SchemaError> {
    Ok(opt_num(name, field)?.unwrap_or_default())
}

/// An optional text field.
fn opt_text(field: &str) -> Option<String> {
    (!field.is_empty()).then(|| field.to_string())
}

/// A space-separated list field.
fn list(field: &str) -> Vec<String> {
    field.split_whitespace().map(str::to_string).collect()
}

/// Decodes hexadecimal text.
fn hex(name: &str, field: &str) -> Result<Vec<u8>, SchemaError> {
    let b = field.as_bytes();
    if !b.len().is_multiple_of(2) {
        return Err(bad(name, "odd number of hex digits"));
    }
    b.chunks(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
                .ok_or_else(|| bad(name, format!("bad hex '{field}'")))
        })
        .collect()
}

/// Parses a GUID in its text form (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`)
/// into the Windows byte layout (first three groups little-endian), which
/// is how `schemaIDGUID` values are stored.
pub fn parse_guid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split('-').collect();
    if groups.iter().map(|g| g.len()).collect::<Vec<_>>() != [8, 4, 4, 4, 12] {
        return None;
    }
    let mut out = [0u8; 16];
    let mut pos = 0;
    for (i, g) in groups.iter().enumerate() {
        let mut bytes = Vec::with_capacity(g.len() / 2);
        for p in g.as_bytes().chunks(2) {
            let s = std::str::from_utf8(p).ok()?;
            bytes.push(u8::from_str_radix(s, 16).ok()?);
        }
        if i < 3 {
            bytes.reverse();
        }
        for b in bytes {
            *out.get_mut(pos)? = b;
            pos += 1;
        }
    }
    Some(out)
}

/// Formats a GUID stored in the Windows byte layout as text.
pub fn format_guid(g: &[u8; 16]) -> String {
    kauri_db::syntax::guid_to_string(g)
}

/// An optional GUID field.
fn opt_guid(name: &str, field: &str) -> Result<Option<[u8; 16]>, SchemaError> {
    if field.is_empty() {
        return Ok(None);
    }
    parse_guid(field)
        .map(Some)
        .ok_or_else(|| bad(name, format!("bad GUID '{field}'")))
}

/// Parses an `A|…` record.
fn parse_attribute(f: &[&str]) -> Result<AttributeDef, SchemaError> {
    let [_, name, cn, oid, syntax, om, omc, flags, link, search, sysflags, rl, ru, guid, secguid] =
        f
    else {
        return Err(bad(
            f.get(1).copied().unwrap_or_default(),
            format!("attribute record needs 15 fields, has {}", f.len()),
        ));
    };
    Ok(AttributeDef {
        ldap_name: name.to_string(),
        cn: cn.to_string(),
        attribute_id: oid.to_string(),
        attribute_syntax: syntax.to_string(),
        om_syntax: num(name, om)?,
        om_object_class: if omc.is_empty() {
            None
        } else {
            Some(hex(name, omc)?)
        },
        single_valued: flags.contains('S'),
        link_id: opt_num(name, link)?,
        search_flags: num(name, search)?,
        system_only: flags.contains('Y'),
        system_flags: num(name, sysflags)?,
        range_lower: opt_num(name, rl)?,
        range_upper: opt_num(name, ru)?,
        schema_id_guid: opt_guid(name, guid)?,
        attribute_security_guid: opt_guid(name, secguid)?,
        is_member_of_partial_attribute_set: flags.contains('P'),
        show_in_advanced_view_only: flags.contains('H'),
        is_defunct: false,
        admin_description: None,
        int_id: None,
    })
}

/// Parses a `C|…` record.
fn parse_class(f: &[&str]) -> Result<ClassDef, SchemaError> {
    let [_, name, cn, oid, sup, cat, flags, sysflags, guid, rdn, defcat, must, may, smust, smay, aux, saux, poss, sposs, sd] =
        f
    else {
        return Err(bad(
            f.get(1).copied().unwrap_or_default(),
            format!("class record needs 20 fields, has {}", f.len()),
        ));
    };
    Ok(ClassDef {
        ldap_name: name.to_string(),
        cn: cn.to_string(),
        governs_id: oid.to_string(),
        sub_class_of: sup.to_string(),
        object_class_category: num(name, cat)?,
        rdn_att_id: opt_text(rdn),
        must_contain: list(must),
        may_contain: list(may),
        system_must_contain: list(smust),
        system_may_contain: list(smay),
        auxiliary_class: list(aux),
        system_auxiliary_class: list(saux),
        poss_superiors: list(poss),
        system_poss_superiors: list(sposs),
        default_object_category: opt_text(defcat).map(|c| format!("CN={c}{SCHEMA_DN_SUFFIX}")),
        default_security_descriptor: opt_text(sd),
        system_only: flags.contains('Y'),
        schema_id_guid: opt_guid(name, guid)?,
        default_hiding_value: flags.contains('D'),
        system_flags: num(name, sysflags)?,
    })
}

/// The table itself (format in the module documentation).
const DATA: &str = r#"
A|accountExpires|Account-Expires|1.2.840.113556.1.4.159|2.5.5.16|65||SH||16|16|||bf967915-0de6-11d0-a285-00aa003049e2|4c164200-20c0-11d0-a768-00aa006e0529
A|adminCount|Admin-Count|1.2.840.113556.1.4.150|2.5.5.9|2||SH||0|16|||bf967918-0de6-11d0-a285-00aa003049e2|
A|adminDescription|Admin-Description|1.2.840.113556.1.2.226|2.5.5.12|64||SH||0|16|0|1024|bf967919-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|adminDisplayName|Admin-Display-Name|1.2.840.113556.1.2.194|2.5.5.12|64||SH||0|16|1|256|bf96791a-0de6-11d0-a285-00aa003049e2|
A|attributeID|Attribute-ID|1.2.840.113556.1.2.30|2.5.5.2|6||SYH||8|16|||bf967922-0de6-11d0-a285-00aa003049e2|
A|attributeSecurityGUID|Attribute-Security-GUID|1.2.840.113556.1.4.149|2.5.5.10|4||SH||0|16|16|16|bf967924-0de6-11d0-a285-00aa003049e2|
A|attributeSyntax|Attribute-Syntax|1.2.840.113556.1.2.32|2.5.5.2|6||SYH||8|16|||bf967925-0de6-11d0-a285-00aa003049e2|
A|attributeTypes|Attribute-Types|2.5.21.5|2.5.5.12|64||YH||0|134217748|||9a7ad944-ca53-11d1-bbd0-0080c76670c0|
A|auxiliaryClass|Auxiliary-Class|1.2.840.113556.1.2.351|2.5.5.2|6||H||0|16|||bf96792c-0de6-11d0-a285-00aa003049e2|
A|badPasswordTime|Bad-Password-Time|1.2.840.113556.1.4.49|2.5.5.16|65||SH||0|17|||bf96792d-0de6-11d0-a285-00aa003049e2|
A|badPwdCount|Bad-Pwd-Count|1.2.840.113556.1.4.12|2.5.5.9|2||SH||0|17|||bf96792e-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|builtinCreationTime|Builtin-Creation-Time|1.2.840.113556.1.4.13|2.5.5.16|65||SH||0|16|||bf96792f-0de6-11d0-a285-00aa003049e2|
A|builtinModifiedCount|Builtin-Modified-Count|1.2.840.113556.1.4.14|2.5.5.16|65||SH||0|16|||bf967930-0de6-11d0-a285-00aa003049e2|
A|c|Country-Name|2.5.4.6|2.5.5.12|64||SPH||16|18|1|3|bf967945-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|cn|Common-Name|2.5.4.3|2.5.5.12|64||SPH||1|18|1|64|bf96793f-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|co|Text-Country|1.2.840.113556.1.2.131|2.5.5.12|64||SH||16|16|1|128|f0f8ffa7-1191-11d0-a060-00aa006c33ed|e48d0154-bcf8-11d1-8702-00c04fb96050
A|comment|User-Comment|1.2.840.113556.1.4.156|2.5.5.12|64||SH||0|16|||bf967a6a-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|company|Company|1.2.840.113556.1.2.146|2.5.5.12|64||SH||16|16|1|64|f0f8ff88-1191-11d0-a060-00aa006c33ed|e48d0154-bcf8-11d1-8702-00c04fb96050
A|cost|Cost|1.2.840.113556.1.2.135|2.5.5.9|2||SH||0||||bf967944-0de6-11d0-a285-00aa003049e2|
A|createTimeStamp|Create-Time-Stamp|2.5.18.1|2.5.5.11|24||SYH||0|134217748|||2df90d73-009f-11d2-aa4c-00c04fd7d83a|
A|creationTime|Creation-Time|1.2.840.113556.1.4.26|2.5.5.16|65||SH||0|16|||bf967946-0de6-11d0-a285-00aa003049e2|
A|dBCSPwd|DBCS-Pwd|1.2.840.113556.1.4.55|2.5.5.10|4||SH||0|16|||bf96799c-0de6-11d0-a285-00aa003049e2|
A|dc|Domain-Component|0.9.2342.19200300.100.1.25|2.5.5.12|64||SPH||0|18|1|255|19195a55-6da0-11d0-afd3-00c04fd930c9|
A|defaultHidingValue|Default-Hiding-Value|1.2.840.113556.1.4.518|2.5.5.8|1||SH||0|16|||b7b13116-b82e-11d0-afee-0000f80367c1|
A|defaultObjectCategory|Default-Object-Category|1.2.840.113556.1.4.783|2.5.5.1|127|2b0c0287731c00854a|SH||0|16|||26d97367-6070-11d1-a9c6-0000f80367c1|
A|defaultSecurityDescriptor|Default-Security-Descriptor|1.2.840.113556.1.4.224|2.5.5.12|64||SH||0|16|0|32767|807a6d30-1669-11d0-a064-00aa006c33ed|
A|department|Department|1.2.840.113556.1.2.141|2.5.5.12|64||SH||16|16|1|64|bf96794f-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|description|Description|2.5.4.13|2.5.5.12|64||PH||0|16|0|1024|bf967950-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|directReports|Reports|1.2.840.113556.1.2.436|2.5.5.1|127|2b0c0287731c00854a|YH|43|0|17|||bf967a1c-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|displayName|Display-Name|1.2.840.113556.1.2.13|2.5.5.12|64||SPH||5|16|0|256|bf967953-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|distinguishedName|Obj-Dist-Name|2.5.4.49|2.5.5.1|127|2b0c0287731c00854a|SYPH||8|19|||bf9679e4-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|dITContentRules|DIT-Content-Rules|2.5.21.2|2.5.5.12|64||YH||0|134217748|||9a7ad946-ca53-11d1-bbd0-0080c76670c0|
A|dMDLocation|DMD-Location|1.2.840.113556.1.2.36|2.5.5.1|127|2b0c0287731c00854a|SYH||0|16|||f0f8ff8b-1191-11d0-a060-00aa006c33ed|
A|dnsAllowDynamic|Dns-Allow-Dynamic|1.2.840.113556.1.4.378|2.5.5.8|1||SH||0|16|||e0fa1e65-9b45-11d0-afdd-00c04fd930c9|
A|dnsAllowXFR|Dns-Allow-XFR|1.2.840.113556.1.4.379|2.5.5.8|1||SH||0|16|||e0fa1e66-9b45-11d0-afdd-00c04fd930c9|
A|dNSHostName|DNS-Host-Name|1.2.840.113556.1.4.619|2.5.5.12|64||SPH||0|16|0|2048|72e39547-7b18-11d1-adef-00c04fd8d5cd|72e39547-7b18-11d1-adef-00c04fd8d5cd
A|dnsNotifySecondaries|Dns-Notify-Secondaries|1.2.840.113556.1.4.381|2.5.5.9|2||H||0|16|||e0fa1e68-9b45-11d0-afdd-00c04fd930c9|
A|dNSProperty|DNS-Property|1.2.840.113556.1.4.1306|2.5.5.10|4||H||0|16|||675a15fe-3b70-11d2-90cc-00c04fd91ab1|
A|dnsRecord|Dns-Record|1.2.840.113556.1.4.382|2.5.5.10|4||H||0|16|||e0fa1e69-9b45-11d0-afdd-00c04fd930c9|
A|dnsRoot|Dns-Root|1.2.840.113556.1.4.28|2.5.5.12|64||H||1|16|1|255|bf967959-0de6-11d0-a285-00aa003049e2|
A|dnsSecureSecondaries|Dns-Secure-Secondaries|1.2.840.113556.1.4.380|2.5.5.9|2||H||0|16|||e0fa1e67-9b45-11d0-afdd-00c04fd930c9|
A|dNSTombstoned|DNS-Tombstoned|1.2.840.113556.1.4.1414|2.5.5.8|1||SH||1|16|||d5eb2eb7-be4e-463b-a214-634a44d7392e|
A|domainReplica|Domain-Replica|1.2.840.113556.1.4.158|2.5.5.12|64||SH||0|16|0|32767|bf96795e-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|dSHeuristics|DS-Heuristics|1.2.840.113556.1.2.212|2.5.5.12|64||SH||0|16|||f0f8ff86-1191-11d0-a060-00aa006c33ed|
A|employeeID|Employee-ID|1.2.840.113556.1.4.35|2.5.5.12|64||SH||0|16|0|16|bf967962-0de6-11d0-a285-00aa003049e2|
A|employeeType|Employee-Type|1.2.840.113556.1.2.613|2.5.5.12|64||SH||16|0|1|256|a8df73f0-c5ea-11d1-bbcb-0080c76670c0|
A|enabledConnection|Enabled-Connection|1.2.840.113556.1.4.36|2.5.5.8|1||SH||0|16|||bf967963-0de6-11d0-a285-00aa003049e2|
A|extendedAttributeInfo|Extended-Attribute-Info|1.2.840.113556.1.4.909|2.5.5.12|64||YH||0|134217748|||9a7ad947-ca53-11d1-bbd0-0080c76670c0|
A|extendedClassInfo|Extended-Class-Info|1.2.840.113556.1.4.908|2.5.5.12|64||YH||0|134217748|||9a7ad948-ca53-11d1-bbd0-0080c76670c0|
A|flags|Flags|1.2.840.113556.1.4.38|2.5.5.9|2||SPH||0|16|||bf967976-0de6-11d0-a285-00aa003049e2|
A|flatName|Flat-Name|1.2.840.113556.1.4.511|2.5.5.12|64||SH||1|16|||b7b13117-b82e-11d0-afee-0000f80367c1|
A|forceLogoff|Force-Logoff|1.2.840.113556.1.4.39|2.5.5.16|65||SH||0|16|||bf967977-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|fromServer|From-Server|1.2.840.113556.1.4.40|2.5.5.1|127|2b0c0287731c00854a|SH||1|16|||bf967979-0de6-11d0-a285-00aa003049e2|
A|fSMORoleOwner|FSMO-Role-Owner|1.2.840.113556.1.4.369|2.5.5.1|127|2b0c0287731c00854a|SH||1|16|||66171887-8f3c-11d0-afda-00c04fd930c9|
A|gidNumber|GidNumber|1.3.6.1.1.1.1.1|2.5.5.9|2||SH||1||||c5b95f0c-ec9e-41c4-849c-b46597ed6696|
A|givenName|Given-Name|2.5.4.42|2.5.5.12|64||SPH||5|16|1|64|f0f8ff8e-1191-11d0-a060-00aa006c33ed|e48d0154-bcf8-11d1-8702-00c04fb96050
A|governsID|Governs-ID|1.2.840.113556.1.2.22|2.5.5.2|6||SYH||8|16|||bf96797d-0de6-11d0-a285-00aa003049e2|
A|gPCFileSysPath|GPC-File-Sys-Path|1.2.840.113556.1.4.894|2.5.5.12|64||SH||0|16|||f30e3bc1-9ff0-11d1-b603-0000f80367c1|
A|gPCFunctionalityVersion|GPC-Functionality-Version|1.2.840.113556.1.4.893|2.5.5.9|2||SH||0|16|||f30e3bc0-9ff0-11d1-b603-0000f80367c1|
A|gPCMachineExtensionNames|GPC-Machine-Extension-Names|1.2.840.113556.1.4.1348|2.5.5.12|64||SH||0|16|||32ff8ecc-783f-11d2-9916-0000f87a57d4|
A|gPCUserExtensionNames|GPC-User-Extension-Names|1.2.840.113556.1.4.1349|2.5.5.12|64||SH||0|16|||42a75fc6-783f-11d2-9916-0000f87a57d4|
A|gPLink|GP-Link|1.2.840.113556.1.4.891|2.5.5.12|64||SPH||0|16|||f30e3bbe-9ff0-11d1-b603-0000f80367c1|
A|gPOptions|GP-Options|1.2.840.113556.1.4.892|2.5.5.9|2||SH||0|16|||f30e3bbf-9ff0-11d1-b603-0000f80367c1|
A|groupType|Group-Type|1.2.840.113556.1.4.750|2.5.5.9|2||SPH||9|18|||9a9a021e-4a5b-11d1-a9c3-0000f80367c1|
A|hasMasterNCs|Has-Master-NCs|1.2.840.113556.1.2.14|2.5.5.1|127|2b0c0287731c00854a|YH|76|0|16|||bf967982-0de6-11d0-a285-00aa003049e2|
A|hasPartialReplicaNCs|Has-Partial-Replica-NCs|1.2.840.113556.1.2.15|2.5.5.1|127|2b0c0287731c00854a|YH|74|0|16|||bf967981-0de6-11d0-a285-00aa003049e2|
A|homeDirectory|Home-Directory|1.2.840.113556.1.4.44|2.5.5.12|64||SH||16|16|||bf967985-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|homeDrive|Home-Drive|1.2.840.113556.1.4.45|2.5.5.12|64||SH||16|16|||bf967986-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|homePhone|Phone-Home-Primary|0.9.2342.19200300.100.1.20|2.5.5.12|64||SPH||0|16|1|64|f0f8ffa1-1191-11d0-a060-00aa006c33ed|77b5b886-944a-11d1-aebd-0000f80367c1
A|info|Comment|1.2.840.113556.1.2.81|2.5.5.12|64||SH||0|16|1|1024|bf96793e-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|initials|Initials|2.5.4.43|2.5.5.12|64||SH||0|16|1|6|f0f8ff90-1191-11d0-a060-00aa006c33ed|e48d0154-bcf8-11d1-8702-00c04fb96050
A|instanceType|Instance-Type|1.2.840.113556.1.2.1|2.5.5.9|2||SYPH||8|18|||bf96798c-0de6-11d0-a285-00aa003049e2|
A|interSiteTopologyGenerator|Inter-Site-Topology-Generator|1.2.840.113556.1.4.1246|2.5.5.1|127|2b0c0287731c00854a|SH||0|16|||b7c69e5e-2cc7-11d2-854e-00a0c983f608|
A|invocationId|Invocation-Id|1.2.840.113556.1.2.115|2.5.5.10|4||SYH||1|16|||bf96798e-0de6-11d0-a285-00aa003049e2|
A|isCriticalSystemObject|Is-Critical-System-Object|1.2.840.113556.1.4.868|2.5.5.8|1||SH||0|16|||00fbf30d-91fe-11d1-aebc-0000f80367c1|
A|isDefunct|Is-Defunct|1.2.840.113556.1.4.661|2.5.5.8|1||SH||0|16|||28630ebe-41d5-11d1-a9c1-0000f80367c1|
A|isDeleted|Is-Deleted|1.2.840.113556.1.2.48|2.5.5.8|1||SYPH||0|18|||bf96798f-0de6-11d0-a285-00aa003049e2|
A|isMemberOfPartialAttributeSet|Is-Member-Of-Partial-Attribute-Set|1.2.840.113556.1.4.639|2.5.5.8|1||SH||0|16|||19405b9d-3cfa-11d1-a9c0-0000f80367c1|
A|isRecycled|Is-Recycled|1.2.840.113556.1.4.2058|2.5.5.8|1||SYPH||8|18|||8fb59256-55f1-444b-aacb-f5b482fe3459|
A|isSingleValued|Is-Single-Valued|1.2.840.113556.1.2.33|2.5.5.8|1||SYH||0|16|||bf967992-0de6-11d0-a285-00aa003049e2|
A|jpegPhoto|jpegPhoto|0.9.2342.19200300.100.1.60|2.5.5.10|4||||0|0|||bac80572-09c4-4fa9-9ae6-7628d7adbe0e|
A|l|Locality-Name|2.5.4.7|2.5.5.12|64||SPH||17|18|1|128|bf9679a2-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|lastKnownParent|Last-Known-Parent|1.2.840.113556.1.4.781|2.5.5.1|127|2b0c0287731c00854a|SH||0|16|||52ab8670-5709-11d1-a9c6-0000f80367c1|
A|lastLogon|Last-Logon|1.2.840.113556.1.4.52|2.5.5.16|65||SH||0|17|||bf967997-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|lastLogonTimestamp|Last-Logon-Timestamp|1.2.840.113556.1.4.1696|2.5.5.16|65||SPH||1|16|||c0e20a04-0e5a-4ff3-9482-5efeaecd7060|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|lDAPAdminLimits|LDAP-Admin-Limits|1.2.840.113556.1.4.843|2.5.5.12|64||H||0|16|||7359a352-90f7-11d1-aebc-0000f80367c1|
A|lDAPDisplayName|LDAP-Display-Name|1.2.840.113556.1.2.460|2.5.5.12|64||SPH||9|16|1|256|bf96799a-0de6-11d0-a285-00aa003049e2|
A|lDAPIPDenyList|LDAP-IPDeny-List|1.2.840.113556.1.4.844|2.5.5.10|4||H||0|16|||7359a353-90f7-11d1-aebc-0000f80367c1|
A|linkID|Link-ID|1.2.840.113556.1.2.50|2.5.5.9|2||SYH||0|16|||bf96799b-0de6-11d0-a285-00aa003049e2|
A|lmPwdHistory|Lm-Pwd-History|1.2.840.113556.1.4.160|2.5.5.10|4||H||0|16|||bf96799d-0de6-11d0-a285-00aa003049e2|
A|lockoutDuration|Lockout-Duration|1.2.840.113556.1.4.60|2.5.5.16|65||SH||0|16|||bf9679a5-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|lockOutObservationWindow|Lock-Out-Observation-Window|1.2.840.113556.1.4.61|2.5.5.16|65||SH||0|16|||bf9679a4-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|lockoutThreshold|Lockout-Threshold|1.2.840.113556.1.4.73|2.5.5.9|2||SH||0|16||65535|bf9679a6-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|lockoutTime|Lockout-Time|1.2.840.113556.1.4.662|2.5.5.16|65||SH||0|16|||28630ebf-41d5-11d1-a9c1-0000f80367c1|
A|loginShell|LoginShell|1.3.6.1.1.1.1.4|2.5.5.5|22||SH||0|||1024|a553d12c-3231-4c5e-8adf-8d189697721e|
A|logonCount|Logon-Count|1.2.840.113556.1.4.169|2.5.5.9|2||SH||0|17|||bf9679aa-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|logonHours|Logon-Hours|1.2.840.113556.1.4.64|2.5.5.10|4||SH||16|16|||bf9679ab-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|mail|E-mail-Addresses|0.9.2342.19200300.100.1.3|2.5.5.12|64||SPH||1|16|0|256|bf967961-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|managedBy|Managed-By|1.2.840.113556.1.4.653|2.5.5.1|127|2b0c0287731c00854a|SH|72|0|16|||0296c120-40da-11d1-a9c0-0000f80367c1|
A|managedObjects|Managed-Objects|1.2.840.113556.1.4.654|2.5.5.1|127|2b0c0287731c00854a|YH|73|0|17|||0296c124-40da-11d1-a9c0-0000f80367c1|
A|manager|Manager|0.9.2342.19200300.100.1.10|2.5.5.1|127|2b0c0287731c00854a|SPH|42|16|16|||bf9679b5-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|masteredBy|Mastered-By|1.2.840.113556.1.4.1409|2.5.5.1|127|2b0c0287731c00854a|YH|77|0|17|||e48e64e0-12c9-11d3-9102-00c04fd91ab1|
A|maxPwdAge|Max-Pwd-Age|1.2.840.113556.1.4.74|2.5.5.16|65||SH||0|16|||bf9679bb-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|mayContain|May-Contain|1.2.840.113556.1.2.25|2.5.5.2|6||H||0|16|||bf9679bf-0de6-11d0-a285-00aa003049e2|
A|member|Member|2.5.4.31|2.5.5.1|127|2b0c0287731c00854a|PH|2|0|18|||bf9679c0-0de6-11d0-a285-00aa003049e2|bc0ac240-79a9-11d0-9020-00c04fc2d4cf
A|memberOf|Is-Member-Of-DL|1.2.840.113556.1.2.102|2.5.5.1|127|2b0c0287731c00854a|YH|3|16|17|||bf967991-0de6-11d0-a285-00aa003049e2|bc0ac240-79a9-11d0-9020-00c04fc2d4cf
A|middleName|Other-Name|2.16.840.1.113730.3.1.34|2.5.5.12|64||SH||0|16|0|64|bf9679f2-0de6-11d0-a285-00aa003049e2|
A|minPwdAge|Min-Pwd-Age|1.2.840.113556.1.4.78|2.5.5.16|65||SH||0|16|||bf9679c2-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|minPwdLength|Min-Pwd-Length|1.2.840.113556.1.4.79|2.5.5.9|2||SH||0|16|||bf9679c3-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|mobile|Phone-Mobile-Primary|0.9.2342.19200300.100.1.41|2.5.5.12|64||SH||0|16|1|64|f0f8ffa3-1191-11d0-a060-00aa006c33ed|77b5b886-944a-11d1-aebd-0000f80367c1
A|modifiedCount|Modified-Count|1.2.840.113556.1.4.168|2.5.5.16|65||SH||0|17|||bf9679c5-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|modifyTimeStamp|Modify-Time-Stamp|2.5.18.2|2.5.5.11|24||SYH||0|134217748|||9a7ad94a-ca53-11d1-bbd0-0080c76670c0|
A|mS-DS-CreatorSID|MS-DS-Creator-SID|1.2.840.113556.1.4.1410|2.5.5.17|4||SYH||1|16|||c5e60132-1480-11d3-91c1-0000f87a57d4|
A|ms-DS-MachineAccountQuota|MS-DS-Machine-Account-Quota|1.2.840.113556.1.4.1411|2.5.5.9|2||SH||0|16|||d064fb68-1480-11d3-91c1-0000f87a57d4|
A|msDS-AllowedToActOnBehalfOfOtherIdentity|ms-DS-Allowed-To-Act-On-Behalf-Of-Other-Identity|1.2.840.113556.1.4.2182|2.5.5.15|66||SYH||0|16|0|132096|3f78c3e5-f79a-46bd-a0b8-9d18116ddc79|4c164200-20c0-11d0-a768-00aa006e0529
A|msDS-AllowedToDelegateTo|ms-DS-Allowed-To-Delegate-To|1.2.840.113556.1.4.1787|2.5.5.12|64||H||0|16|||800d94d7-b7a1-42a1-b14d-7cae1423d07f|e48d0154-bcf8-11d1-8702-00c04fb96050
A|msDS-Approx-Immed-Subordinates|ms-DS-Approx-Immed-Subordinates|1.2.840.113556.1.4.1669|2.5.5.9|2||SYH||0|20|||e185d243-f6ce-4adb-b496-b0c005d7823c|e48d0154-bcf8-11d1-8702-00c04fb96050
A|msDS-Behavior-Version|ms-DS-Behavior-Version|1.2.840.113556.1.4.1459|2.5.5.9|2||SYH||0|16|0||d31a8757-2447-4545-8081-3bb610cacbf2|
A|msDS-DefaultQuota|ms-DS-Default-Quota|1.2.840.113556.1.4.1846|2.5.5.9|2||SH||0|16|||6818f726-674b-441b-8a3a-f40596374cea|
A|msDS-EnabledFeature|ms-DS-Enabled-Feature|1.2.840.113556.1.4.2061|2.5.5.1|127|2b0c0287731c00854a|YPH|2168|0|16|||5706aeaf-b940-4fb2-bcfc-5268683ad9fe|
A|msDS-EnabledFeatureBL|ms-DS-Enabled-Feature-BL|1.2.840.113556.1.4.2069|2.5.5.1|127|2b0c0287731c00854a|YH|2169|0|17|||ce5b01bc-17c6-44b8-9dc1-a9668b00901b|
A|msDS-HasDomainNCs|ms-DS-Has-Domain-NCs|1.2.840.113556.1.4.1820|2.5.5.1|127|2b0c0287731c00854a|YH|2026|0|16|4|4|6f17e347-a842-4498-b8b3-15e007da4fed|
A|msDS-hasMasterNCs|ms-DS-Has-Master-NCs|1.2.840.113556.1.4.1836|2.5.5.1|127|2b0c0287731c00854a|YH|2036|0|16|||ae2de0e2-59d7-4d47-8d47-ed4dfe4357ad|
A|msDS-IsDomainFor|ms-DS-Is-Domain-For|1.2.840.113556.1.4.1933|2.5.5.1|127|2b0c0287731c00854a|YH|2027|0|17|||ff155a2a-44e5-4de0-8318-13a58988de4f|
A|msDS-isGC|ms-DS-isGC|1.2.840.113556.1.4.1959|2.5.5.8|1||SH||0|20|||1df5cf33-0fe5-499e-90e1-e94b42718a46|
A|msDS-IsPartialReplicaFor|ms-DS-Is-Partial-Replica-For|1.2.840.113556.1.4.1934|2.5.5.1|127|2b0c0287731c00854a|YH|75|0|17|||37c94ff6-c6d4-498f-b2f9-c6f7f8647809|
A|msDS-isRODC|ms-DS-isRODC|1.2.840.113556.1.4.1960|2.5.5.8|1||SH||0|20|||a8e8aa23-3e67-4af1-9d7a-2f1a1d633ac9|
A|msDS-KeyVersionNumber|ms-DS-KeyVersionNumber|1.2.840.113556.1.4.1782|2.5.5.9|2||SY||0|20|||c523e9c0-33b5-4ac8-8923-b57b927f42f6|
A|msDS-LastKnownRDN|ms-DS-Last-Known-RDN|1.2.840.113556.1.4.2067|2.5.5.12|64||SYH||0|16|1|255|8ab15858-683e-466d-877f-d640e1f9a611|
A|msDS-LockoutDuration|ms-DS-Lockout-Duration|1.2.840.113556.1.4.2018|2.5.5.16|65||SH||0|16||0|421f889a-472e-4fe4-8eb9-e1d0bc6071b2|
A|msDS-LockoutObservationWindow|ms-DS-Lockout-Observation-Window|1.2.840.113556.1.4.2017|2.5.5.16|65||SH||0|16||0|b05bda89-76af-468a-b892-1be55558ecc8|
A|msDS-LockoutThreshold|ms-DS-Lockout-Threshold|1.2.840.113556.1.4.2019|2.5.5.9|2||SH||0|16|0|65535|b8c8c35e-4a19-4a95-99d0-69fe4446286f|
A|msDs-masteredBy|ms-DS-Mastered-By|1.2.840.113556.1.4.1837|2.5.5.1|127|2b0c0287731c00854a|YH|2037|0|17|||60234769-4819-4615-a1b2-49d2f119acb5|
A|msDS-MaximumPasswordAge|ms-DS-Maximum-Password-Age|1.2.840.113556.1.4.2011|2.5.5.16|65||SH||0|16||0|fdd337f5-4999-4fce-b252-8ff9c9b43875|
A|msDS-MinimumPasswordAge|ms-DS-Minimum-Password-Age|1.2.840.113556.1.4.2012|2.5.5.16|65||SH||0|16||0|2a74f878-4d9c-49f9-97b3-6767d1cbd9a3|
A|msDS-MinimumPasswordLength|ms-DS-Minimum-Password-Length|1.2.840.113556.1.4.2013|2.5.5.9|2||SH||0|16|0|255|b21b3439-4c3a-441c-bb5f-08f20e9b315e|
A|msDS-NC-Replica-Locations|ms-DS-NC-Replica-Locations|1.2.840.113556.1.4.1661|2.5.5.1|127|2b0c0287731c00854a|H|1044|0|16|||97de9615-b537-46bc-ac0f-10720f3909f3|
A|msDS-NcType|ms-DS-NC-Type|1.2.840.113556.1.4.2024|2.5.5.9|2||SYH||0|17|||5a2eacd7-cc2b-48cf-9d9a-b6f1a0024de9|
A|msDS-OptionalFeatureFlags|ms-DS-Optional-Feature-Flags|1.2.840.113556.1.4.2063|2.5.5.9|2||SYH||0|16|||8a0560c1-97b9-4811-9db7-dc061598965b|
A|msDS-OptionalFeatureGUID|ms-DS-Optional-Feature-GUID|1.2.840.113556.1.4.2062|2.5.5.10|4||SYH||0|16|16|16|9b88bda8-dd82-4998-a91d-5f2d2baf1927|
A|msDS-Other-Settings|ms-DS-Other-Settings|1.2.840.113556.1.4.1621|2.5.5.12|64||H||0|16|||79d2f34c-9d7d-42bb-838f-866b3e4400e2|
A|msDS-PasswordComplexityEnabled|ms-DS-Password-Complexity-Enabled|1.2.840.113556.1.4.2015|2.5.5.8|1||SH||0|16|||db68054b-c9c3-4bf0-b15b-0fb52552a610|
A|msDS-PasswordHistoryLength|ms-DS-Password-History-Length|1.2.840.113556.1.4.2014|2.5.5.9|2||SH||0|16|0|65535|fed81bb7-768c-4c2f-9641-2245de34794d|
A|msDS-PasswordReversibleEncryptionEnabled|ms-DS-Password-Reversible-Encryption-Enabled|1.2.840.113556.1.4.2016|2.5.5.8|1||SH||0|16|||75ccdd8f-af6c-4487-bb4b-69e4d38a959c|
A|msDS-PasswordSettingsPrecedence|ms-DS-Password-Settings-Precedence|1.2.840.113556.1.4.2023|2.5.5.9|2||SH||0|16|1||456374ac-1f0a-4617-93cf-bc55a7c9d341|
A|msDS-PrincipalName|ms-DS-Principal-Name|1.2.840.113556.1.4.1865|2.5.5.12|64||SH||0|20|||564e9325-d057-c143-9e3b-4f9e5ef46f93|
A|msDS-PSOApplied|ms-DS-PSO-Applied|1.2.840.113556.1.4.2021|2.5.5.1|127|2b0c0287731c00854a|YH|2119|0|17|||5e6cf031-bda8-43c8-aca4-8fee4127005b|
A|msDS-PSOAppliesTo|ms-DS-PSO-Applies-To|1.2.840.113556.1.4.2020|2.5.5.1|127|2b0c0287731c00854a|H|2118|0|16|||64c80f48-cdd2-4881-a86d-4e97b6f561fc|
A|msDS-ReplicationEpoch|ms-DS-ReplicationEpoch|1.2.840.113556.1.4.1720|2.5.5.9|2||SH||0|17|||08e3aa79-eb1c-45b5-af7b-8f94246c8e41|
A|msDS-RequiredDomainBehaviorVersion|ms-DS-Required-Domain-Behavior-Version|1.2.840.113556.1.4.2066|2.5.5.9|2||SYH||0|16|||eadd3dfe-ae0e-4cc2-b9b9-5fe5b6ed2dd2|
A|msDS-RequiredForestBehaviorVersion|ms-DS-Required-Forest-Behavior-Version|1.2.840.113556.1.4.2079|2.5.5.9|2||SYH||0|16|||4beca2e8-a653-41b2-8fee-721575474bec|
A|msDS-ResultantPSO|ms-DS-Resultant-PSO|1.2.840.113556.1.4.2022|2.5.5.1|127|2b0c0287731c00854a|SYH||0|20|||b77ea093-88d0-4780-9a98-911f8e8b1dca|
A|msDS-SiteName|ms-DS-SiteName|1.2.840.113556.1.4.1961|2.5.5.12|64||SH||0|20|||98a7f36d-3595-448a-9e6f-6b8965baed9c|
A|msDS-SupportedEncryptionTypes|ms-DS-Supported-Encryption-Types|1.2.840.113556.1.4.1963|2.5.5.9|2||SH||0|16|||20119867-1d04-4ab7-9371-cfc3d5df0afd|77b5b886-944a-11d1-aebd-0000f80367c1
A|msDS-TombstoneQuotaFactor|ms-DS-Tombstone-Quota-Factor|1.2.840.113556.1.4.1847|2.5.5.9|2||SH||0|16|0|100|461744d7-f3b6-45ba-8753-fb9552a5df32|
A|msDS-User-Account-Control-Computed|ms-DS-User-Account-Control-Computed|1.2.840.113556.1.4.1460|2.5.5.9|2||SH||0|20|||2cc4b836-b63f-4940-8d23-ea7acf06af56|4c164200-20c0-11d0-a768-00aa006e0529
A|msDS-UserPasswordExpiryTimeComputed|ms-DS-User-Password-Expiry-Time-Computed|1.2.840.113556.1.4.1996|2.5.5.16|65||SH||0|20|||add5cf10-7b09-4449-9ae6-2534148f8a72|4c164200-20c0-11d0-a768-00aa006e0529
A|mustContain|Must-Contain|1.2.840.113556.1.2.24|2.5.5.2|6||H||0|16|||bf9679d3-0de6-11d0-a285-00aa003049e2|
A|name|RDN|1.2.840.113556.1.4.1|2.5.5.12|64||SYPH||13|18|1|255|bf967a0e-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|nCName|NC-Name|1.2.840.113556.1.2.16|2.5.5.1|127|2b0c0287731c00854a|SYH||8|16|||bf9679d6-0de6-11d0-a285-00aa003049e2|
A|nETBIOSName|NETBIOS-Name|1.2.840.113556.1.4.87|2.5.5.12|64||SH||1|16|1|16|bf9679d8-0de6-11d0-a285-00aa003049e2|
A|nextRid|Next-Rid|1.2.840.113556.1.4.88|2.5.5.9|2||SH||0|16|||bf9679db-0de6-11d0-a285-00aa003049e2|
A|nTMixedDomain|NT-Mixed-Domain|1.2.840.113556.1.4.357|2.5.5.9|2||SH||0|16|||3e97891f-8c01-11d0-afda-00c04fd930c9|
A|ntPwdHistory|Nt-Pwd-History|1.2.840.113556.1.4.94|2.5.5.10|4||H||0|16|||bf9679e2-0de6-11d0-a285-00aa003049e2|
A|nTSecurityDescriptor|NT-Security-Descriptor|1.2.840.113556.1.2.281|2.5.5.15|66||SPH||8|26|0|132096|bf9679e3-0de6-11d0-a285-00aa003049e2|
A|objectCategory|Object-Category|1.2.840.113556.1.4.782|2.5.5.1|127|2b0c0287731c00854a|SPH||1|18|||26d97369-6070-11d1-a9c6-0000f80367c1|e48d0154-bcf8-11d1-8702-00c04fb96050
A|objectClass|Object-Class|2.5.4.0|2.5.5.2|6||YPH||9|18|||bf9679e5-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|objectClassCategory|Object-Class-Category|1.2.840.113556.1.2.370|2.5.5.9|10||SYH||0|16|0|3|bf9679e6-0de6-11d0-a285-00aa003049e2|
A|objectClasses|Object-Classes|2.5.21.6|2.5.5.12|64||YH||0|134217748|||9a7ad94b-ca53-11d1-bbd0-0080c76670c0|
A|objectGUID|Object-Guid|1.2.840.113556.1.4.2|2.5.5.10|4||SYPH||9|19|16|16|bf9679e7-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|objectSid|Object-Sid|1.2.840.113556.1.4.146|2.5.5.17|4||SYPH||9|18|0|28|bf9679e8-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|objectVersion|Object-Version|1.2.840.113556.1.2.76|2.5.5.9|2||SH||0|16|||16775848-47f3-11d1-a9c3-0000f80367c1|
A|oEMInformation|OEM-Information|1.2.840.113556.1.4.151|2.5.5.12|64||SH||0|16|0|32767|bf9679ea-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|oMObjectClass|OM-Object-Class|1.2.840.113556.1.2.218|2.5.5.10|4||SYH||0|16|||bf9679ec-0de6-11d0-a285-00aa003049e2|
A|oMSyntax|OM-Syntax|1.2.840.113556.1.2.231|2.5.5.9|2||SYH||8|16|||bf9679ed-0de6-11d0-a285-00aa003049e2|
A|operatingSystem|Operating-System|1.2.840.113556.1.4.363|2.5.5.12|64||SH||0|16|||3e978925-8c01-11d0-afda-00c04fd930c9|
A|operatingSystemVersion|Operating-System-Version|1.2.840.113556.1.4.364|2.5.5.12|64||SH||0|16|||3e978926-8c01-11d0-afda-00c04fd930c9|
A|options|Options|1.2.840.113556.1.4.307|2.5.5.9|2||SH||0|16|||19195a53-6da0-11d0-afd3-00c04fd930c9|
A|otherWellKnownObjects|Other-Well-Known-Objects|1.2.840.113556.1.4.1359|2.5.5.7|127|2a864886f7140101010b|H||0|16|16|16|1ea64e5d-ac0f-11d2-90df-00c04fd91ab1|
A|ou|Organizational-Unit-Name|2.5.4.11|2.5.5.12|64||PH||1|18|1|64|bf9679f0-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|parentGUID|Parent-GUID|1.2.840.113556.1.4.1224|2.5.5.10|4||SYH||0|134217748|||2df90d74-009f-11d2-aa4c-00c04fd7d83a|
A|physicalDeliveryOfficeName|Physical-Delivery-Office-Name|2.5.4.19|2.5.5.12|64||SH||5|16|1|128|bf9679f7-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|possSuperiors|Poss-Superiors|1.2.840.113556.1.2.8|2.5.5.2|6||PH||0|16|||bf9679fa-0de6-11d0-a285-00aa003049e2|
A|postalCode|Postal-Code|2.5.4.17|2.5.5.12|64||SH||16|16|1|40|bf9679fd-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|prefixMap|Prefix-Map|1.2.840.113556.1.4.538|2.5.5.10|4||SYH||0|17|||52458022-ca6a-11d0-afff-0000f80367c1|
A|primaryGroupID|Primary-Group-ID|1.2.840.113556.1.4.98|2.5.5.9|2||SPH||17|18|||bf967a00-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|profilePath|Profile-Path|1.2.840.113556.1.4.139|2.5.5.12|64||SH||16|16|||bf967a05-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|pwdHistoryLength|Pwd-History-Length|1.2.840.113556.1.4.95|2.5.5.9|2||SH||0|16|0|65535|bf967a09-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|pwdLastSet|Pwd-Last-Set|1.2.840.113556.1.4.96|2.5.5.16|65||SH||0|16|||bf967a0a-0de6-11d0-a285-00aa003049e2|4c164200-20c0-11d0-a768-00aa006e0529
A|pwdProperties|Pwd-Properties|1.2.840.113556.1.4.93|2.5.5.9|2||SH||0|16|||bf967a0b-0de6-11d0-a285-00aa003049e2|c7407360-20bf-11d0-a768-00aa006e0529
A|rangeLower|Range-Lower|1.2.840.113556.1.2.34|2.5.5.9|2||SPH||0|16|||bf967a0c-0de6-11d0-a285-00aa003049e2|
A|rangeUpper|Range-Upper|1.2.840.113556.1.2.35|2.5.5.9|2||SPH||0|16|||bf967a0d-0de6-11d0-a285-00aa003049e2|
A|rDNAttID|RDN-Att-ID|1.2.840.113556.1.2.26|2.5.5.2|6||SYH||0|16|||bf967a0f-0de6-11d0-a285-00aa003049e2|
A|replInterval|Repl-Interval|1.2.840.113556.1.4.1336|2.5.5.9|2||SH||0|16|||45ba9d1a-56fa-11d2-90d0-00c04fd91ab1|
A|replPropertyMetaData|Repl-Property-Meta-Data|1.2.840.113556.1.4.3|2.5.5.10|4||SYPH||8|27|||281416c0-1968-11d0-a28f-00aa003049e2|
A|retiredReplDSASignatures|Retired-Repl-DSA-Signatures|1.2.840.113556.1.4.673|2.5.5.10|4||SYH||0|16|||7bfdcb7f-4807-11d1-a9c3-0000f80367c1|
A|rIDAllocationPool|RID-Allocation-Pool|1.2.840.113556.1.4.371|2.5.5.16|65||SYH||0|16|||66171889-8f3c-11d0-afda-00c04fd930c9|
A|rIDAvailablePool|RID-Available-Pool|1.2.840.113556.1.4.370|2.5.5.16|65||SH||0|16|||66171888-8f3c-11d0-afda-00c04fd930c9|
A|rIDManagerReference|RID-Manager-Reference|1.2.840.113556.1.4.368|2.5.5.1|127|2b0c0287731c00854a|SYH||0|16|||66171886-8f3c-11d0-afda-00c04fd930c9|
A|rIDNextRID|RID-Next-RID|1.2.840.113556.1.4.374|2.5.5.9|2||SYH||0|17|||6617188c-8f3c-11d0-afda-00c04fd930c9|
A|rIDPreviousAllocationPool|RID-Previous-Allocation-Pool|1.2.840.113556.1.4.372|2.5.5.16|65||SYH||0|17|||6617188a-8f3c-11d0-afda-00c04fd930c9|
A|rIDSetReferences|RID-Set-References|1.2.840.113556.1.4.669|2.5.5.1|127|2b0c0287731c00854a|YH||8|16|||7bfdcb7b-4807-11d1-a9c3-0000f80367c1|
A|rIDUsedPool|RID-Used-Pool|1.2.840.113556.1.4.373|2.5.5.16|65||SYH||0|16|||6617188b-8f3c-11d0-afda-00c04fd930c9|
A|sAMAccountName|SAM-Account-Name|1.2.840.113556.1.4.221|2.5.5.12|64||SPH||13|18|0|256|3e0abfd0-126a-11d0-a060-00aa006c33ed|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|sAMAccountType|SAM-Account-Type|1.2.840.113556.1.4.302|2.5.5.9|2||SPH||1|18|||6e7b626c-64f2-11d0-afd2-00c04fd930c9|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|schedule|Schedule|1.2.840.113556.1.4.211|2.5.5.10|4||SH||0|16|||dd712224-10e4-11d0-a05f-00aa006c33ed|
A|schemaIDGUID|Schema-ID-GUID|1.2.840.113556.1.4.148|2.5.5.10|4||SYH||0|16|16|16|bf967923-0de6-11d0-a285-00aa003049e2|
A|schemaInfo|Schema-Info|1.2.840.113556.1.4.1358|2.5.5.10|4||YH||0|16|||f9fb64ae-93b4-11d2-9945-0000f87a57d4|
A|scriptPath|Script-Path|1.2.840.113556.1.4.62|2.5.5.12|64||SH||16|16|||bf9679a8-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|searchFlags|Search-Flags|1.2.840.113556.1.2.334|2.5.5.9|10||SH||0|16|0||bf967a2d-0de6-11d0-a285-00aa003049e2|
A|securityIdentifier|Security-Identifier|1.2.840.113556.1.4.121|2.5.5.17|4||SPH||0|16|||bf967a2f-0de6-11d0-a285-00aa003049e2|
A|serverReference|Server-Reference|1.2.840.113556.1.4.515|2.5.5.1|127|2b0c0287731c00854a|SH|94|0|16|||26d9736d-6070-11d1-a9c6-0000f80367c1|
A|serverReferenceBL|Server-Reference-BL|1.2.840.113556.1.4.516|2.5.5.1|127|2b0c0287731c00854a|YH|95|0|17|||26d9736e-6070-11d1-a9c6-0000f80367c1|
A|serverState|Server-State|1.2.840.113556.1.4.154|2.5.5.9|2||SH||0|17|||bf967a34-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|servicePrincipalName|Service-Principal-Name|1.2.840.113556.1.4.771|2.5.5.12|64||PH||1|18|||f3a64788-5306-11d1-a9c5-0000f80367c1|e48d0154-bcf8-11d1-8702-00c04fb96050
A|showInAdvancedViewOnly|Show-In-Advanced-View-Only|1.2.840.113556.1.2.169|2.5.5.8|1||SH||17|16|||bf967984-0de6-11d0-a285-00aa003049e2|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|sIDHistory|SID-History|1.2.840.113556.1.4.609|2.5.5.17|4||PH||1|18|||17eb4278-d167-11d0-b002-0000f80367c1|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|siteList|Site-List|1.2.840.113556.1.4.821|2.5.5.1|127|2b0c0287731c00854a|H|144|0|16|||d50c2cdc-8951-11d1-aebc-0000f80367c1|
A|siteObject|Site-Object|1.2.840.113556.1.4.512|2.5.5.1|127|2b0c0287731c00854a|SH|46|0|16|||3e10944c-c354-11d0-aff8-0000f80367c1|
A|siteObjectBL|Site-Object-BL|1.2.840.113556.1.4.513|2.5.5.1|127|2b0c0287731c00854a|YH|47|0|17|||3e10944d-c354-11d0-aff8-0000f80367c1|
A|sn|Surname|2.5.4.4|2.5.5.12|64||SPH||5|16|1|64|bf967a41-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|st|State-Or-Province-Name|2.5.4.8|2.5.5.12|64||SPH||16|18|1|128|bf967a39-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|streetAddress|Address|1.2.840.113556.1.2.256|2.5.5.12|64||SH||0|16|1|1024|f0f8ff84-1191-11d0-a060-00aa006c33ed|77b5b886-944a-11d1-aebd-0000f80367c1
A|structuralObjectClass|Structural-Object-Class|2.5.21.9|2.5.5.2|6||H||0|20|||3860949f-f6a8-4b38-9950-81ecb6bc2982|
A|subClassOf|Sub-Class-Of|1.2.840.113556.1.2.21|2.5.5.2|6||SYH||8|16|||bf967a3b-0de6-11d0-a285-00aa003049e2|
A|subRefs|Sub-Refs|1.2.840.113556.1.2.7|2.5.5.1|127|2b0c0287731c00854a|YPH||0|19|||bf967a3c-0de6-11d0-a285-00aa003049e2|
A|subSchemaSubEntry|SubSchemaSubEntry|2.5.18.10|2.5.5.1|127|2b0c0287731c00854a|YH||0|134217748|||9a7ad94d-ca53-11d1-bbd0-0080c76670c0|
A|supplementalCredentials|Supplemental-Credentials|1.2.840.113556.1.4.125|2.5.5.10|4||H||0|16|||bf967a3f-0de6-11d0-a285-00aa003049e2|
A|systemAuxiliaryClass|System-Auxiliary-Class|1.2.840.113556.1.4.198|2.5.5.2|6||YH||0|16|||bf967a43-0de6-11d0-a285-00aa003049e2|
A|systemFlags|System-Flags|1.2.840.113556.1.4.375|2.5.5.9|2||SYH||8|16|||e0fa1e62-9b45-11d0-afdd-00c04fd930c9|e48d0154-bcf8-11d1-8702-00c04fb96050
A|systemMayContain|System-May-Contain|1.2.840.113556.1.4.196|2.5.5.2|6||YH||0|16|||bf967a44-0de6-11d0-a285-00aa003049e2|
A|systemMustContain|System-Must-Contain|1.2.840.113556.1.4.197|2.5.5.2|6||YH||0|16|||bf967a45-0de6-11d0-a285-00aa003049e2|
A|systemOnly|System-Only|1.2.840.113556.1.4.170|2.5.5.8|1||SYH||0|16|||bf967a46-0de6-11d0-a285-00aa003049e2|
A|systemPossSuperiors|System-Poss-Superiors|1.2.840.113556.1.4.195|2.5.5.2|6||YPH||0|18|||bf967a47-0de6-11d0-a285-00aa003049e2|
A|telephoneNumber|Telephone-Number|2.5.4.20|2.5.5.12|64||SPH||0|16|1|64|bf967a49-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|thumbnailPhoto|Picture|2.16.840.1.113730.3.1.35|2.5.5.10|4||SH||0|16|0|102400|8d3bca50-1d7e-11d0-a081-00aa006c33ed|77b5b886-944a-11d1-aebd-0000f80367c1
A|title|Title|2.5.4.12|2.5.5.12|64||SH||0|16|1|128|bf967a55-0de6-11d0-a285-00aa003049e2|e48d0154-bcf8-11d1-8702-00c04fb96050
A|tokenGroups|Token-Groups|1.2.840.113556.1.4.1301|2.5.5.17|4||H||0|134217748|||b7c69e6d-2cc7-11d2-854e-00a0c983f608|037088f8-0ae1-11d2-b422-00a0c968f939
A|tombstoneLifetime|Tombstone-Lifetime|1.2.840.113556.1.2.54|2.5.5.9|2||SH||0|16|||16c3a860-1273-11d0-a060-00aa006c33ed|
A|transportAddressAttribute|Transport-Address-Attribute|1.2.840.113556.1.4.895|2.5.5.2|6||SH||0|16|||c1dc867c-a261-11d1-b606-0000f80367c1|
A|transportDLLName|Transport-DLL-Name|1.2.840.113556.1.4.789|2.5.5.12|64||SH||0|16|0|1024|26d97372-6070-11d1-a9c6-0000f80367c1|
A|transportType|Transport-Type|1.2.840.113556.1.4.791|2.5.5.1|127|2b0c0287731c00854a|SH||0|16|||26d97374-6070-11d1-a9c6-0000f80367c1|
A|trustAttributes|Trust-Attributes|1.2.840.113556.1.4.470|2.5.5.9|2||SPH||0|16|||80a67e5a-9f22-11d0-afdd-00c04fd930c9|
A|trustDirection|Trust-Direction|1.2.840.113556.1.4.132|2.5.5.9|2||SPH||0|16|||bf967a5c-0de6-11d0-a285-00aa003049e2|
A|trustPartner|Trust-Partner|1.2.840.113556.1.4.133|2.5.5.12|64||SPH||1|16|1|1024|bf967a5d-0de6-11d0-a285-00aa003049e2|
A|trustType|Trust-Type|1.2.840.113556.1.4.136|2.5.5.9|2||SPH||0|16|||bf967a60-0de6-11d0-a285-00aa003049e2|
A|uASCompat|UAS-Compat|1.2.840.113556.1.4.155|2.5.5.9|2||SH||0|16|||bf967a61-0de6-11d0-a285-00aa003049e2|b8119fd0-04f6-4762-ab7a-4986c76b3f9a
A|uid|uid|0.9.2342.19200300.100.1.1|2.5.5.12|64||||8|0|||0bb0fca0-1e89-429f-901a-1413894d9f59|59ba2f42-79a2-11d0-9020-00c04fc2d3cf
A|uidNumber|UidNumber|1.3.6.1.1.1.1.0|2.5.5.9|2||SH||1||||850fcc8f-9c6b-47e1-b671-7c654be4d5b3|
A|unicodePwd|Unicode-Pwd|1.2.840.113556.1.4.90|2.5.5.10|4||SH||0|16|||bf9679e1-0de6-11d0-a285-00aa003049e2|
A|unixHomeDirectory|UnixHomeDirectory|1.3.6.1.1.1.1.3|2.5.5.5|22||SH||0|||2048|bc2dba12-000f-464d-bf1d-0808465d8843|
A|userAccountControl|User-Account-Control|1.2.840.113556.1.4.8|2.5.5.9|2||SPH||25|18|||bf967a68-0de6-11d0-a285-00aa003049e2|4c164200-20c0-11d0-a768-00aa006e0529
A|userCertificate|X509-Cert|2.5.4.36|2.5.5.10|4||PH||0|16||32768|bf967a7f-0de6-11d0-a285-00aa003049e2|77b5b886-944a-11d1-aebd-0000f80367c1
A|userPassword|User-Password|2.5.4.35|2.5.5.10|4||H||0|16|1|128|bf967a6e-0de6-11d0-a285-00aa003049e2|
A|userPrincipalName|User-Principal-Name|1.2.840.113556.1.4.656|2.5.5.12|64||SPH||1|18||1024|28630ebb-41d5-11d1-a9c1-0000f80367c1|e48d0154-bcf8-11d1-8702-00c04fb96050
A|userWorkstations|User-Workstations|1.2.840.113556.1.4.86|2.5.5.12|64||SH||16|16|0|1024|bf9679d7-0de6-11d0-a285-00aa003049e2|5f202010-79a5-11d0-9020-00c04fc2d4cf
A|uSNChanged|USN-Changed|1.2.840.113556.1.2.120|2.5.5.16|65||SYPH||9|19|||bf967a6f-0de6-11d0-a285-00aa003049e2|
A|uSNCreated|USN-Created|1.2.840.113556.1.2.19|2.5.5.16|65||SYPH||9|19|||bf967a70-0de6-11d0-a285-00aa003049e2|
A|versionNumber|Version-Number|1.2.840.113556.1.4.141|2.5.5.9|2||SPH||0|16|||bf967a76-0de6-11d0-a285-00aa003049e2|
A|wellKnownObjects|Well-Known-Objects|1.2.840.113556.1.4.618|2.5.5.7|127|2a864886f7140101010b|YPH||0|18|16|16|05308983-7688-11d1-aded-00c04fd8d5cd|
A|whenChanged|When-Changed|1.2.840.113556.1.2.3|2.5.5.11|24||SYPH||0|19|||bf967a77-0de6-11d0-a285-00aa003049e2|
A|whenCreated|When-Created|1.2.840.113556.1.2.2|2.5.5.11|24||SYPH||0|18|||bf967a78-0de6-11d0-a285-00aa003049e2|
A|wWWHomePage|WWW-Home-Page|1.2.840.113556.1.2.464|2.5.5.12|64||SH||0|16|1|2048|bf967a7a-0de6-11d0-a285-00aa003049e2|e45795b3-9455-11d1-aebd-0000f80367c1
C|applicationSettings|Application-Settings|1.2.840.113556.1.5.7000.49|top|2|D|16|f780acc1-56f0-11d1-a9c6-0000f80367c1|cn|Application-Settings||||notificationList msDS-Settings applicationName||||server|
C|applicationSiteSettings|Application-Site-Settings|1.2.840.113556.1.5.68|top|2|D|16|19195a5c-6da0-11d0-afd3-00c04fd930c9|cn|Application-Site-Settings||||notificationList applicationName||||site|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|attributeSchema|Attribute-Schema|1.2.840.113556.1.3.14|top|1|D|134217744|bf967a80-0de6-11d0-a285-00aa003049e2|cn|Attribute-Schema|||schemaIDGUID oMSyntax lDAPDisplayName isSingleValued cn attributeSyntax attributeID|systemOnly searchFlags schemaFlagsEx rangeUpper rangeLower oMObjectClass msDs-Schema-Extensions msDS-IntId mAPIID linkID isMemberOfPartialAttributeSet isEphemeral isDefunct extendedCharsAllowed classDisplayName attributeSecurityGUID||||dMD|D:S:
C|builtinDomain|Builtin-Domain|1.2.840.113556.1.5.4|top|1|D|16|bf967a81-0de6-11d0-a285-00aa003049e2|cn|Builtin-Domain||||||samDomainBase||domainDNS|D:(A;;RPLCLORC;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|classSchema|Class-Schema|1.2.840.113556.1.3.13|top|1|D|134217744|bf967a83-0de6-11d0-a285-00aa003049e2|cn|Class-Schema|||subClassOf schemaIDGUID objectClassCategory governsID defaultObjectCategory cn|systemPossSuperiors systemOnly systemMustContain systemMayContain systemAuxiliaryClass schemaFlagsEx rDNAttID possSuperiors mustContain msDs-Schema-Extensions msDS-IntId mayContain lDAPDisplayName isDefunct defaultSecurityDescriptor defaultHidingValue classDisplayName auxiliaryClass||||dMD|D:S:
C|computer|Computer|1.2.840.113556.1.3.30|user|1||16|bf967a86-0de6-11d0-a285-00aa003049e2|cn|Computer||msSFU30Name nisMapName msSFU30NisDomain msSFU30Aliases||msImaging-HashAlgorithm msImaging-ThumbprintHash msDS-GenerationId msTPM-TpmInformationForComputer msTSSecondaryDesktopBL msTSPrimaryDesktopBL msTSEndpointPlugin msTSEndpointType msTSEndpointData msDS-HostServiceAccount msDS-IsUserCachableAtRodc msTSProperty02 msTSProperty01 msTPM-OwnerInformation msDS-RevealOnDemandGroup msDS-NeverRevealGroup msDS-PromotionSettings msDS-SiteName msDS-isRODC msDS-isGC msDS-AuthenticatedAtDC msDS-ExecuteScriptPassword msDS-RevealedList msDS-RevealedUsers msDS-KrbTgtLink volumeCount siteGUID rIDSetReferences policyReplicationFlags physicalLocationObject operatingSystemVersion operatingSystemServicePack operatingSystemHotfix operatingSystem networkAddress netbootSIFFile netbootMirrorDataFile netbootMachineFilePath netbootInitialization netbootDUID netbootGUID msDS-AdditionalSamAccountName msDS-AdditionalDnsHostName managedBy machineRole location localPolicyFlags dNSHostName defaultLocalPolicyObject cn catalogs|ipHost|||container organizationalUnit domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;AO)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPCRLCLORCSDDT;;;CO)(OA;;WP;4c164200-20c0-11d0-a768-00aa006e0529;;CO)(A;;RPLCLORC;;;AU)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;WD)(A;;CCDC;;;PS)(OA;;CCDC;bf967aa8-0de6-11d0-a285-00aa003049e2;;PO)(OA;;RPWP;bf967a7f-0de6-11d0-a285-00aa003049e2;;CA)(OA;;SW;f3a64788-5306-11d1-a9c5-0000f80367c1;;PS)(OA;;RPWP;77B5B886-944A-11d1-AEBD-0000F80367C1;;PS)(OA;;SW;72e39547-7b18-11d1-adef-00c04fd8d5cd;;PS)(OA;;SW;72e39547-7b18-11d1-adef-00c04fd8d5cd;;CO)(OA;;SW;f3a64788-5306-11d1-a9c5-0000f80367c1;;CO)(OA;;WP;3e0abfd0-126a-11d0-a060-00aa006c33ed;bf967a86-0de6-11d0-a285-00aa003049e2;CO)(OA;;WP;5f202010-79a5-11d0-9020-00c04fc2d4cf;bf967a86-0de6-11d0-a285-00aa003049e2;CO)(OA;;WP;bf967950-0de6-11d0-a285-00aa003049e2;bf967a86-0de6-11d0-a285-00aa003049e2;CO)(OA;;WP;bf967953-0de6-11d0-a285-00aa003049e2;bf967a86-0de6-11d0-a285-00aa003049e2;CO)(OA;;RP;46a9b11d-60ae-405a-b7e8-ff8a58d456d2;;S-1-5-32-560)
C|configuration|Configuration|1.2.840.113556.1.5.12|top|1|YD|16|bf967a87-0de6-11d0-a285-00aa003049e2|cn|Configuration|||cn|msDS-USNLastSyncSuccess gPOptions gPLink||||domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|contact|Contact|1.2.840.113556.1.5.15|organizationalPerson|1||16|5cb41ed0-0e4c-11d0-a286-00aa003049e2|cn|Person||msDS-SourceObjectDN|cn|notes||mailRecipient||organizationalUnit domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|container|Container|1.2.840.113556.1.3.23|top|1|D|16|bf967a8b-0de6-11d0-a285-00aa003049e2|cn|Container||msDS-ObjectReference|cn|schemaVersion defaultClassStore||||msDS-AzScope msDS-AzApplication msDS-AzAdminManager subnet server nTDSService domainDNS organization configuration container organizationalUnit|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|controlAccessRight|Control-Access-Right|1.2.840.113556.1.5.77|top|1|D|16|8297931e-86d3-11d0-afda-00c04fd930c9|cn|Control-Access-Right||||validAccesses rightsGuid localizationDisplayId appliesTo||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|crossRef|Cross-Ref|1.2.840.113556.1.3.11|top|1|D|16|bf967a8d-0de6-11d0-a285-00aa003049e2|cn|Cross-Ref|||nCName dnsRoot cn|trustParent superiorDNSRoot rootTrust nTMixedDomain nETBIOSName Enabled msDS-SDReferenceDomain msDS-Replication-Notify-Subsequent-DSA-Delay msDS-Replication-Notify-First-DSA-Delay msDS-NC-RO-Replica-Locations msDS-NC-Replica-Locations msDS-DnsRootAlias msDS-Behavior-Version||||crossRefContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|crossRefContainer|Cross-Ref-Container|1.2.840.113556.1.5.7000.53|top|1|Y|16|ef9e60e0-56f7-11d1-a9c6-0000f80367c1|cn|Cross-Ref-Container||||msDS-EnabledFeature msDS-SPNSuffixes uPNSuffixes msDS-UpdateScript msDS-ExecuteScriptPassword msDS-Behavior-Version||||configuration|D:(A;;GA;;;SY)
C|displaySpecifier|Display-Specifier|1.2.840.113556.1.5.84|top|1|D|16|e0fa1e8a-9b45-11d0-afdd-00c04fd930c9|cn|Display-Specifier||||treatAsLeaf shellPropertyPages shellContextMenu scopeFlags queryFilter iconPath extraColumns creationWizard createWizardExt createDialog contextMenu classDisplayName attributeDisplayNames adminPropertyPages adminMultiselectPropertyPages adminContextMenu||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|dMD|DMD|1.2.840.113556.1.3.9|top|1|YD|16|bf967a8f-0de6-11d0-a285-00aa003049e2|cn|DMD|||cn|msDS-USNLastSyncSuccess schemaUpdate schemaInfo prefixMap msDs-Schema-Extensions msDS-IntId dmdName||||configuration|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|dnsNode|Dns-Node|1.2.840.113556.1.5.86|top|1|D|16|e0fa1e8c-9b45-11d0-afdd-00c04fd930c9|dc|Dns-Node|||dc|dNSTombstoned dnsRecord dNSProperty||||dnsZoneScope dnsZone|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;ED)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;CO)(A;;RPLCLORC;;;WD)
C|dnsZone|Dns-Zone|1.2.840.113556.1.5.85|top|1|D|16|e0fa1e8b-9b45-11d0-afdd-00c04fd930c9|dc|Dns-Zone|||dc|msDNS-NSEC3CurrentSalt msDNS-NSEC3UserSalt msDNS-PropagationTime msDNS-ParentHasSecureDelegation msDNS-DNSKEYRecords msDNS-SigningKeys msDNS-SigningKeyDescriptors msDNS-SecureDelegationPollingPeriod msDNS-SignatureInceptionOffset msDNS-DSRecordSetTTL msDNS-DNSKEYRecordSetTTL msDNS-NSEC3Iterations msDNS-NSEC3RandomSaltLength msDNS-NSEC3HashAlgorithm msDNS-RFC5011KeyRollovers msDNS-DSRecordAlgorithms msDNS-MaintainTrustAnchor msDNS-NSEC3OptOut msDNS-SignWithNSEC3 msDNS-IsSigned managedBy dnsSecureSecondaries dNSProperty dnsNotifySecondaries dnsAllowXFR dnsAllowDynamic||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;ED)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;CC;;;AU)(A;;RPLCLORC;;;WD)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;CO)
C|dnsZoneScope|Dns-Zone-Scope|1.2.840.113556.1.5.301|top|1|D|16|696f8a61-2d3f-40ce-a4b3-e275dfcc49c5|cn|Dns-Zone-Scope|||dc|managedBy dNSProperty||||dnsZoneScopeContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;ED)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;CC;;;AU)(A;;RPLCLORC;;;WD)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;CO)
C|dnsZoneScopeContainer|Dns-Zone-Scope-Container|1.2.840.113556.1.5.300|top|1|D|16|f2699093-f25a-4220-9deb-03df4cc4a9c5|cn|Dns-Zone-Scope-Container||||||||dnsZone|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;ED)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;CC;;;AU)(A;;RPLCLORC;;;WD)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;CO)
C|domain|Domain|1.2.840.113556.1.5.66|top|2|D|16|19195a5a-6da0-11d0-afd3-00c04fd930c9|dc|Domain-DNS|||dc|||||domain organization|
C|domainDNS|Domain-DNS|1.2.840.113556.1.5.67|domain|1||16|19195a5b-6da0-11d0-afd3-00c04fd930c9|dc|Domain-DNS||||msDS-ExpirePasswordsOnSmartCardOnlyAccounts msDS-EnabledFeature msDS-USNLastSyncSuccess msDS-Behavior-Version msDS-AllowedDNSSuffixes managedBy||samDomain||domainDNS|D:(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;S-1-5-21-2063560558-3296776465-833389195-498)(A;;RP;;;WD)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)(A;;RPLCLORC;;;AU)(A;;RPWPCRLCLOCCRCWDWOSW;;;DA)(A;CI;RPWPCRLCLOCCRCWDWOSDSW;;;BA)(A;;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;SY)(A;CI;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;EA)(A;CI;LC;;;RU)(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;;RP;c7407360-20bf-11d0-a768-00aa006e0529;;RU)(OA;CIIO;RPLCLORC;;bf967a9c-0de6-11d0-a285-00aa003049e2;RU)(A;;RPRC;;;RU)(OA;CIIO;RPLCLORC;;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(A;;LCRPLORC;;;ED)(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RPLCLORC;;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;RU)(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;AU)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967aba-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a9c-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a86-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;WP;ea1b7b93-5e48-46d5-bc6c-4df4fda78a35;bf967a86-0de6-11d0-a285-00aa003049e2;PS)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;DD)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)(OA;;CR;e2a36dc9-ae17-47c3-b58b-be34c55ba633;;S-1-5-32-557)(OA;;CR;280f369c-67c7-438e-ae98-1d46f3c6f541;;AU)(OA;;CR;ccc2dc7d-a6ad-4a7a-8846-c04e3cc53501;;AU)(OA;;CR;05c74c5e-4deb-43b4-bd9f-86664c2a7fd5;;AU)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;CIIO;CRRPWP;91e647de-d96f-4b70-9557-d63ff4f3ccd8;;PS)(OA;CIOI;RPWP;3f78c3e5-f79a-46bd-a0b8-9d18116ddc79;;PS)(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;PS)(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;CO)S:(AU;SA;WDWOWP;;;WD)(AU;SA;CR;;;BA)(AU;SA;CR;;;DU)(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)(OU;CISA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)
C|foreignSecurityPrincipal|Foreign-Security-Principal|1.2.840.113556.1.5.76|top|1|D|16|89e31c12-8530-11d0-afda-00c04fd930c9|cn|Foreign-Security-Principal|||objectSid|foreignIdentifier||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;AO)(A;;RPLCLORC;;;PS)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a54-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a56-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;RPWP;77B5B886-944A-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B2-9455-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B3-9455-11d1-AEBD-0000F80367C1;;PS)(A;;RC;;;AU)(OA;;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;;AU)(OA;;RP;77B5B886-944A-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;E45795B3-9455-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;e48d0154-bcf8-11d1-8702-00c04fb96050;;AU)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;WD)
C|group|Group|1.2.840.113556.1.5.8|top|1||16|bf967a9c-0de6-11d0-a285-00aa003049e2|cn|Group||msSFU30PosixMember msSFU30NisDomain msSFU30Name|groupType|msDS-PrimaryComputer msDS-AzApplicationData msDS-AzLastImportedBizRulePath msDS-AzBizRuleLanguage msDS-AzBizRule msDS-AzObjectGuid msDS-AzGenericData primaryGroupToken operatorCount nTGroupMembers nonSecurityMember msDS-NonMembers msDS-AzLDAPQuery member managedBy groupMembershipSAM groupAttributes mail desktopProfile controlAccessRights adminCount|posixGroup|mailRecipient securityPrincipal||msDS-AzScope msDS-AzApplication msDS-AzAdminManager container builtinDomain organizationalUnit domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;AO)(A;;RPLCLORC;;;PS)(OA;;CR;ab721a55-1e2f-11d0-9819-00aa0040529b;;AU)(OA;;RP;46a9b11d-60ae-405a-b7e8-ff8a58d456d2;;S-1-5-32-560)
C|groupPolicyContainer|Group-Policy-Container|1.2.840.113556.1.5.157|container|1|D|16|f30e3bc2-9ff0-11d1-b603-0000f80367c1|cn|Group-Policy-Container||||versionNumber gPCWQLFilter gPCUserExtensionNames gPCMachineExtensionNames gPCFunctionalityVersion gPCFileSysPath flags|||||D:P(A;CI;RPWPCCDCLCLOLORCWOWDSDDTSW;;;DA)(A;CI;RPWPCCDCLCLOLORCWOWDSDDTSW;;;EA)(A;CI;RPWPCCDCLCLOLORCWOWDSDDTSW;;;CO)(A;CI;RPWPCCDCLCLORCWOWDSDDTSW;;;SY)(A;CI;RPLCLORC;;;AU)(OA;CI;CR;edacfd8f-ffb3-11d1-b41d-00a0c968f939;;AU)(A;CI;LCRPLORC;;;ED)
C|inetOrgPerson|inetOrgPerson|2.16.840.1.113730.3.2.2|user|1||0|4828cc14-1437-45bc-9b07-ad6f015e5f28|cn|Person||x500uniqueIdentifier userSMIMECertificate userPKCS12 userCertificate uid secretary roomNumber preferredLanguage photo pager o mobile manager mail labeledURI jpegPhoto initials homePostalAddress homePhone givenName employeeType employeeNumber displayName departmentNumber carLicense businessCategory audio|||||domainDNS organizationalUnit container||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;AO)(A;;RPLCLORC;;;PS)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a54-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a56-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;RPWP;77B5B886-944A-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B2-9455-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B3-9455-11d1-AEBD-0000F80367C1;;PS)(OA;;RP;037088f8-0ae1-11d2-b422-00a0c968f939;;RS)(OA;;RP;4c164200-20c0-11d0-a768-00aa006e0529;;RS)(OA;;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;;RS)(A;;RC;;;AU)(OA;;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;;AU)(OA;;RP;77B5B886-944A-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;E45795B3-9455-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;e48d0154-bcf8-11d1-8702-00c04fb96050;;AU)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;WD)(OA;;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;;RS)(OA;;RPWP;bf967a7f-0de6-11d0-a285-00aa003049e2;;CA)(OA;;RP;46a9b11d-60ae-405a-b7e8-ff8a58d456d2;;S-1-5-32-560)(OA;;WPRP;6db69a1c-9422-11d1-aebd-0000f80367c1;;S-1-5-32-561)(OA;;WPRP;5805bc62-bdc9-4428-a5e2-856a0f4c185e;;S-1-5-32-561)
C|infrastructureUpdate|Infrastructure-Update|1.2.840.113556.1.5.175|top|1|YD|16|2df90d89-009f-11d2-aa4c-00c04fd7d83a|cn|Infrastructure-Update||||dNReferenceUpdate||||infrastructureUpdate domain|D:(A;;GA;;;SY)
C|interSiteTransport|Inter-Site-Transport|1.2.840.113556.1.5.141|top|1|D|16|26d97376-6070-11d1-a9c6-0000f80367c1|cn|Inter-Site-Transport|||transportDLLName transportAddressAttribute|replInterval options||||interSiteTransportContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|interSiteTransportContainer|Inter-Site-Transport-Container|1.2.840.113556.1.5.140|top|1|D|16|26d97375-6070-11d1-a9c6-0000f80367c1|cn|Inter-Site-Transport-Container||||||||sitesContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|ipHost|IpHost|1.3.6.1.1.1.2.6|top|3|D||ab911646-8827-4f95-8780-5a8f008eb68f|cn|IpHost||manager l uid ipHostNumber description cn|||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|leaf|Leaf|1.2.840.113556.1.5.20|top|2|D|16|bf967a9e-0de6-11d0-a285-00aa003049e2|cn|Leaf|||||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|locality|Locality|2.5.6.3|top|1||16|bf967aa0-0de6-11d0-a285-00aa003049e2|l|Locality|||l|street st seeAlso searchGuide||||domainDNS country organizationalUnit organization locality|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|lostAndFound|Lost-And-Found|1.2.840.113556.1.5.139|top|1|D|16|52ab8671-5709-11d1-a9c6-0000f80367c1|cn|Lost-And-Found||||moveTreeState||||configuration domainDNS dMD|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|mailRecipient|Mail-Recipient|1.2.840.113556.1.3.46|top|3|D|16|bf967aa1-0de6-11d0-a285-00aa003049e2|cn|Mail-Recipient||msDS-ExternalDirectoryObjectId msDS-GeoCoordinatesLongitude msDS-GeoCoordinatesLatitude msDS-GeoCoordinatesAltitude msDS-PhoneticDisplayName userSMIMECertificate secretary msExchLabeledURI msExchAssistantName labeledURI|cn|userCertificate userCert textEncodedORAddress telephoneNumber showInAddressBook legacyExchangeDN garbageCollPeriod info||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|msDS-CloudExtensions|ms-DS-Cloud-Extensions|1.2.840.113556.1.5.283|top|3|D|16|641e87a4-8326-4771-ba2d-c706df35e35a|cn|ms-DS-Cloud-Extensions||msDS-cloudExtensionAttribute20 msDS-cloudExtensionAttribute19 msDS-cloudExtensionAttribute18 msDS-cloudExtensionAttribute17 msDS-cloudExtensionAttribute16 msDS-cloudExtensionAttribute15 msDS-cloudExtensionAttribute14 msDS-cloudExtensionAttribute13 msDS-cloudExtensionAttribute12 msDS-cloudExtensionAttribute11 msDS-cloudExtensionAttribute10 msDS-cloudExtensionAttribute9 msDS-cloudExtensionAttribute8 msDS-cloudExtensionAttribute7 msDS-cloudExtensionAttribute6 msDS-cloudExtensionAttribute5 msDS-cloudExtensionAttribute4 msDS-cloudExtensionAttribute3 msDS-cloudExtensionAttribute2 msDS-cloudExtensionAttribute1|||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|msDS-OptionalFeature|ms-DS-Optional-Feature|1.2.840.113556.1.5.265|top|1|YD|16|44f00041-35af-468b-b20a-6ce8737c580b|cn|ms-DS-Optional-Feature|||msDS-OptionalFeatureFlags msDS-OptionalFeatureGUID|msDS-RequiredForestBehaviorVersion msDS-RequiredDomainBehaviorVersion||||container|D:(A;;RPLCLORC;;;AU)(A;;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;EA)(A;;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;CO)(A;;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;SY)
C|msDS-PasswordSettings|ms-DS-Password-Settings|1.2.840.113556.1.5.255|top|1||16|3bcd9db8-f84b-451c-952f-6c52b81f9ec6|cn|ms-DS-Password-Settings|||msDS-PasswordHistoryLength msDS-PasswordSettingsPrecedence msDS-PasswordReversibleEncryptionEnabled msDS-LockoutThreshold msDS-LockoutDuration msDS-LockoutObservationWindow msDS-PasswordComplexityEnabled msDS-MinimumPasswordLength msDS-MinimumPasswordAge msDS-MaximumPasswordAge|msDS-PSOAppliesTo||||msDS-PasswordSettingsContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)
C|msDS-PasswordSettingsContainer|ms-DS-Password-Settings-Container|1.2.840.113556.1.5.256|top|1||16|5b06b06a-4cf3-44c0-bd16-43bc10a987da|cn|ms-DS-Password-Settings-Container||||||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)
C|msDS-QuotaContainer|ms-DS-Quota-Container|1.2.840.113556.1.5.242|top|1|D|16|da83fc4f-076f-4aea-b4dc-8f4dab9b5993|cn|ms-DS-Quota-Container|||cn|msDS-TopQuotaUsage msDS-QuotaUsed msDS-QuotaEffective msDS-TombstoneQuotaFactor msDS-DefaultQuota||||configuration domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPLCLORC;;;BA)(OA;;CR;4ecc03fe-ffc0-4947-b630-eb672a8a9dbc;;WD)
C|nTDSConnection|NTDS-Connection|1.2.840.113556.1.5.71|leaf|1|D|16|19195a60-6da0-11d0-afd3-00c04fd930c9|cn|NTDS-Connection|||options fromServer enabledConnection|transportType schedule mS-DS-ReplicatesNCReason generatedConnection||||nTFRSMember nTFRSReplicaSet nTDSDSA|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|nTDSDSA|NTDS-DSA|1.2.840.113556.1.5.7000.47|applicationSettings|1|YD|16|f0f8ffab-1191-11d0-a060-00aa006c33ed|cn|NTDS-DSA||||msDS-EnabledFeature msDS-IsUserCachableAtRodc msDS-SiteName msDS-isRODC msDS-isGC msDS-RevealedUsers msDS-RevealOnDemandGroup msDS-NeverRevealGroup msDS-hasFullReplicaNCs serverReference msDS-RetiredReplNCSignatures retiredReplDSASignatures queryPolicyObject options networkAddress msDS-ReplicationEpoch msDS-HasInstantiatedNCs msDS-hasMasterNCs msDS-HasDomainNCs msDS-Behavior-Version managedBy lastBackupRestorationTime invocationId hasPartialReplicaNCs hasMasterNCs fRSRootPath dMDLocation||||organization server|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|nTDSDSARO|NTDS-DSA-RO|1.2.840.113556.1.5.254|nTDSDSA|1|YD|16|85d16ec1-0791-4bc8-8ab3-70980602ff8c|cn|NTDS-DSA-RO||||||||organization server|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|nTDSService|NTDS-Service|1.2.840.113556.1.5.72|top|1|D|16|19195a5f-6da0-11d0-afd3-00c04fd930c9|cn|NTDS-Service||||msDS-DeletedObjectLifetime tombstoneLifetime sPNMappings replTopologyStayOfExecution msDS-Other-Settings garbageCollPeriod dSHeuristics||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|nTDSSiteSettings|NTDS-Site-Settings|1.2.840.113556.1.5.69|applicationSiteSettings|1|D|16|19195a5d-6da0-11d0-afd3-00c04fd930c9|cn|NTDS-Site-Settings||||schedule queryPolicyObject options msDS-Preferred-GC-Site managedBy interSiteTopologyRenew interSiteTopologyGenerator interSiteTopologyFailover||||site|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|organizationalPerson|Organizational-Person|2.5.6.7|person|0|D|16|bf967aa4-0de6-11d0-a285-00aa003049e2|cn|Person||msDS-HABSeniorityIndex msDS-PhoneticDisplayName msDS-PhoneticCompanyName msDS-PhoneticDepartment msDS-PhoneticLastName msDS-PhoneticFirstName houseIdentifier msExchHouseIdentifier homePostalAddress||msDS-AllowedToActOnBehalfOfOtherIdentity x121Address comment title co primaryTelexNumber telexNumber teletexTerminalIdentifier street st registeredAddress preferredDeliveryMethod postalCode postalAddress postOfficeBox thumbnailPhoto physicalDeliveryOfficeName pager otherPager otherTelephone mobile otherMobile primaryInternationalISDNNumber ipPhone otherIpPhone otherHomePhone homePhone otherFacsimileTelephoneNumber personalTitle middleName otherMailbox ou o mhsORAddress msDS-AllowedToDelegateTo manager thumbnailLogo l internationalISDNNumber initials givenName generationQualifier facsimileTelephoneNumber employeeID mail division destinationIndicator department c countryCode company assistant streetAddress||||organizationalUnit organization container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|organizationalUnit|Organizational-Unit|2.5.6.5|top|1||16|bf967aa5-0de6-11d0-a285-00aa003049e2|ou|Organizational-Unit|||ou|x121Address userPassword uPNSuffixes co telexNumber teletexTerminalIdentifier telephoneNumber street st seeAlso searchGuide registeredAddress preferredDeliveryMethod postalCode postalAddress postOfficeBox physicalDeliveryOfficeName msCOM-UserPartitionSetLink managedBy thumbnailLogo l internationalISDNNumber gPOptions gPLink facsimileTelephoneNumber destinationIndicator desktopProfile defaultGroup countryCode c businessCategory||||country organization organizationalUnit domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(OA;;CCDC;bf967a86-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967aba-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967a9c-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967aa8-0de6-11d0-a285-00aa003049e2;;PO)(A;;RPLCLORC;;;AU)(A;;LCRPLORC;;;ED)(OA;;CCDC;4828CC14-1437-45bc-9B07-AD6F015E5F28;;AO)
C|person|Person|2.5.6.6|top|0|D|16|bf967aa7-0de6-11d0-a285-00aa003049e2|cn|Person||attributeCertificateAttribute|cn|userPassword telephoneNumber sn serialNumber seeAlso||||organizationalUnit container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|physicalLocation|Physical-Location|1.2.840.113556.1.5.97|locality|1|D|16|b7b13122-b82e-11d0-afee-0000f80367c1|cn|Physical-Location||||managedBy||||physicalLocation configuration|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|posixAccount|PosixAccount|1.3.6.1.1.1.2.0|top|3|D||ad44bb41-67d5-4d88-b575-7b20674e76d8|uid|PosixAccount||description gecos loginShell unixUserPassword userPassword homeDirectory unixHomeDirectory gidNumber uidNumber cn uid|||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|posixGroup|PosixGroup|1.3.6.1.1.1.2.2|top|3|D||2a9350b8-062c-4ed0-9903-dde10d06deba|cn|PosixGroup||memberUid gidNumber description unixUserPassword userPassword cn|||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|queryPolicy|Query-Policy|1.2.840.113556.1.5.106|top|1|D|16|83cc7075-cca7-11d0-afff-0000f80367c1|cn|Query-Policy||||lDAPIPDenyList lDAPAdminLimits||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|rIDManager|RID-Manager|1.2.840.113556.1.5.83|top|1|YD|16|6617188d-8f3c-11d0-afda-00c04fd930c9|cn|RID-Manager|||rIDAvailablePool|msDS-RIDPoolAllocationEnabled||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)S:(AU;SA;CRWP;;;WD)
C|rIDSet|RID-Set|1.2.840.113556.1.5.129|top|1|YD|16|7bfdcb89-4807-11d1-a9c3-0000f80367c1|cn|RID-Set|||rIDUsedPool rIDPreviousAllocationPool rIDNextRID rIDAllocationPool|||||user container computer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|samDomain|Sam-Domain|1.2.840.113556.1.5.3|top|3|D|16|bf967a90-0de6-11d0-a285-00aa003049e2|cn|Sam-Domain||||treeName rIDManagerReference replicaSource pwdProperties pwdHistoryLength privateKey pekList pekKeyChangeInterval nTMixedDomain nextRid nETBIOSName msDS-PerUserTrustTombstonesQuota msDS-PerUserTrustQuota ms-DS-MachineAccountQuota msDS-LogonTimeSyncInterval msDS-AllUsersTrustQuota modifiedCountAtLastProm minPwdLength minPwdAge maxPwdAge lSAModifiedCount lSACreationTime lockoutThreshold lockoutDuration lockOutObservationWindow gPOptions gPLink eFSPolicy domainPolicyObject desktopProfile description defaultLocalPolicyObject creationTime controlAccessRights cACertificate builtinModifiedCount builtinCreationTime auditingPolicy||samDomainBase|||D:(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;S-1-5-21-2063560558-3296776465-833389195-498)(A;;RP;;;WD)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)(A;;RPLCLORC;;;AU)(A;;RPWPCRLCLOCCRCWDWOSW;;;DA)(A;CI;RPWPCRLCLOCCRCWDWOSDSW;;;BA)(A;;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;SY)(A;CI;RPWPCRLCLOCCDCRCWDWOSDDTSW;;;EA)(A;CI;LC;;;RU)(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(OA;;RP;c7407360-20bf-11d0-a768-00aa006e0529;;RU)(OA;CIIO;RPLCLORC;;bf967a9c-0de6-11d0-a285-00aa003049e2;RU)(A;;RPRC;;;RU)(OA;CIIO;RPLCLORC;;bf967aba-0de6-11d0-a285-00aa003049e2;RU)(A;;LCRPLORC;;;ED)(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;CIIO;RPLCLORC;;4828CC14-1437-45bc-9B07-AD6F015E5F28;RU)(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;RU)(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;AU)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967aba-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a9c-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a86-0de6-11d0-a285-00aa003049e2;ED)(OA;CIIO;WP;ea1b7b93-5e48-46d5-bc6c-4df4fda78a35;bf967a86-0de6-11d0-a285-00aa003049e2;PS)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;DD)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)(OA;;CR;e2a36dc9-ae17-47c3-b58b-be34c55ba633;;S-1-5-32-557)(OA;;CR;280f369c-67c7-438e-ae98-1d46f3c6f541;;AU)(OA;;CR;ccc2dc7d-a6ad-4a7a-8846-c04e3cc53501;;AU)(OA;;CR;05c74c5e-4deb-43b4-bd9f-86664c2a7fd5;;AU)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;CIIO;CRRPWP;91e647de-d96f-4b70-9557-d63ff4f3ccd8;;PS)(OA;CIOI;RPWP;3f78c3e5-f79a-46bd-a0b8-9d18116ddc79;;PS)(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;PS)(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;CO)S:(AU;SA;WDWOWP;;;WD)(AU;SA;CR;;;BA)(AU;SA;CR;;;DU)(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)(OU;CISA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)
C|samDomainBase|Sam-Domain-Base|1.2.840.113556.1.5.2|top|3|D|16|bf967a91-0de6-11d0-a285-00aa003049e2|cn|Sam-Domain-Base||||uASCompat serverState serverRole revision pwdProperties pwdHistoryLength oEMInformation objectSid nTSecurityDescriptor nextRid modifiedCountAtLastProm modifiedCount minPwdLength minPwdAge maxPwdAge lockoutThreshold lockoutDuration lockOutObservationWindow forceLogoff domainReplica creationTime|||||
C|secret|Secret|1.2.840.113556.1.5.28|leaf|1|D|16|bf967aae-0de6-11d0-a285-00aa003049e2|cn|Secret||||priorValue priorSetTime lastSetTime currentValue||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)
C|securityPrincipal|Security-Principal|1.2.840.113556.1.5.6|top|3|D|16|bf967ab0-0de6-11d0-a285-00aa003049e2|cn|Security-Principal|||sAMAccountName objectSid|supplementalCredentials sIDHistory securityIdentifier sAMAccountType rid msds-tokenGroupNamesNoGCAcceptable msds-tokenGroupNamesGlobalAndUniversal msds-tokenGroupNames tokenGroupsNoGCAcceptable tokenGroupsGlobalAndUniversal tokenGroups nTSecurityDescriptor msDS-KeyVersionNumber altSecurityIdentities accountNameHistory|||||
C|server|Server|1.2.840.113556.1.5.17|top|1|D|16|bf967a92-0de6-11d0-a285-00aa003049e2|cn|Server||||msDS-IsUserCachableAtRodc msDS-SiteName msDS-isRODC msDS-isGC mailAddress serverReference serialNumber managedBy dNSHostName bridgeheadTransportList||||serversContainer|D:(A;CI;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|serversContainer|Servers-Container|1.2.840.113556.1.5.7000.48|top|1|D|16|f780acc0-56f0-11d1-a9c6-0000f80367c1|cn|Servers-Container||||||||site|D:(A;;CC;;;BA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|shadowAccount|ShadowAccount|1.3.6.1.1.1.2.1|top|3|D||5b6d8467-1a18-4174-b350-9cc6e7b4ac8d|uid|ShadowAccount||shadowFlag shadowExpire shadowInactive shadowWarning shadowMax shadowMin shadowLastChange description userPassword uid|||||||D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|site|Site|1.2.840.113556.1.5.31|top|1|D|16|bf967ab3-0de6-11d0-a285-00aa003049e2|cn|Site||||msDS-BridgeHeadServersUsed notificationList mSMQSiteID mSMQSiteForeign mSMQNt4Stub mSMQInterval2 mSMQInterval1 managedBy location gPOptions gPLink||||sitesContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)(A;;LCRPLORC;;;ED)
C|siteLink|Site-Link|1.2.840.113556.1.5.147|top|1||16|d50c2cde-8951-11d1-aebc-0000f80367c1|cn|Site-Link|||siteList|schedule replInterval options cost||||interSiteTransport|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|sitesContainer|Sites-Container|1.2.840.113556.1.5.107|top|1|D|16|7a4117da-cd67-11d0-afff-0000f80367c1|cn|Sites-Container||||||||configuration|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|subnet|Subnet|1.2.840.113556.1.5.96|top|1|D|16|b7b13124-b82e-11d0-afee-0000f80367c1|cn|Subnet||||siteObject physicalLocationObject location||||subnetContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|subnetContainer|Subnet-Container|1.2.840.113556.1.5.95|top|1|D|16|b7b13125-b82e-11d0-afee-0000f80367c1|cn|Subnet-Container||||||||sitesContainer|D:(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|subSchema|SubSchema|2.5.20.1|top|1|YD|134217744|5a8b3261-c38d-11d1-bbc9-0080c76670c0|cn|SubSchema||||objectClasses modifyTimeStamp extendedClassInfo extendedAttributeInfo dITContentRules attributeTypes||||dMD|D:S:
C|top|Top|2.5.6.0|top|2|YD|16|bf967ab7-0de6-11d0-a285-00aa003049e2|cn|Top||msSFU30PosixMemberOf msDFSR-ComputerReferenceBL msDFSR-MemberReferenceBL msDS-ObjectReferenceBL|objectClass objectCategory nTSecurityDescriptor instanceType|msDS-ObjectSoa msDS-SourceAnchor msDS-CloudAnchor msDS-ReplValueMetaDataExt msDS-parentdistname msds-memberTransitive msds-memberOfTransitive msDS-TDOEgressBL msDS-TDOIngressBL msDS-ValueTypeReferenceBL msDS-IsPrimaryComputerFor msDS-ClaimSharesPossibleValuesWithBL msDS-MembersOfResourcePropertyListBL msDS-EnabledFeatureBL msDS-LastKnownRDN msDS-HostServiceAccountBL msDS-OIDToGroupLinkBl msDS-LocalEffectiveRecycleTime msDS-LocalEffectiveDeletionTime msDS-PSOApplied msDS-NcType msDS-PrincipalName msDS-RevealedListBL msDS-NC-RO-Replica-Locations-BL msDS-AuthenticatedToAccountlist msDS-IsPartialReplicaFor msDS-IsDomainFor msDS-IsFullReplicaFor msDS-RevealedDSAs msDS-KrbTgtLinkBl url wWWHomePage whenCreated whenChanged wellKnownObjects wbemPath uSNSource uSNLastObjRem USNIntersite uSNDSALastObjRemoved uSNCreated uSNChanged systemFlags subSchemaSubEntry subRefs structuralObjectClass siteObjectBL serverReferenceBL sDRightsEffective revision repsTo repsFrom directReports replUpToDateVector replPropertyMetaData name queryPolicyBL proxyAddresses proxiedObjectName possibleInferiors partialAttributeSet partialAttributeDeletionList otherWellKnownObjects objectVersion objectGUID distinguishedName nonSecurityMemberBL netbootSCPBL ownerBL msDS-ReplValueMetaData msDS-ReplAttributeMetaData msDS-NonMembersBL msDS-NCReplOutboundNeighbors msDS-NCReplInboundNeighbors msDS-NCReplCursors msDS-TasksForAzRoleBL msDS-TasksForAzTaskBL msDS-OperationsForAzRoleBL msDS-OperationsForAzTaskBL msDS-MembersForAzRoleBL msDs-masteredBy mS-DS-ConsistencyGuid mS-DS-ConsistencyChildCount msDS-Approx-Immed-Subordinates msCOM-PartitionSetLink msCOM-UserLink modifyTimeStamp masteredBy managedObjects lastKnownParent isPrivilegeHolder memberOf isRecycled isDeleted isCriticalSystemObject showInAdvancedViewOnly fSMORoleOwner fRSMemberReferenceBL frsComputerReferenceBL fromEntry flags extensionName dSASignature dSCorePropagationData displayNamePrintable displayName description createTimeStamp cn canonicalName bridgeheadServerListBL allowedChildClassesEffective allowedChildClasses allowedAttributesEffective allowedAttributes adminDisplayName adminDescription||||lostAndFound|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)
C|trustedDomain|Trusted-Domain|1.2.840.113556.1.5.34|leaf|1|D|16|bf967ab8-0de6-11d0-a285-00aa003049e2|cn|Trusted-Domain||||msDS-EgressClaimsTransformationPolicy msDS-IngressClaimsTransformationPolicy trustType trustPosixOffset trustPartner trustDirection trustAuthOutgoing trustAuthIncoming trustAttributes securityIdentifier msDS-SupportedEncryptionTypes msDS-TrustForestTrustInfo mS-DS-CreatorSID initialAuthOutgoing initialAuthIncoming flatName domainIdentifier domainCrossRef additionalTrustedServiceNames||||container|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)(OA;;WP;736e4812-af31-11d2-b7df-00805f48caeb;bf967ab8-0de6-11d0-a285-00aa003049e2;CO)(A;;SD;;;CO)
C|user|User|1.2.840.113556.1.5.9|organizationalPerson|1||16|bf967aba-0de6-11d0-a285-00aa003049e2|cn|Person||msDS-SourceObjectDN msSFU30NisDomain msSFU30Name x500uniqueIdentifier userSMIMECertificate userPKCS12 uid secretary roomNumber preferredLanguage photo labeledURI jpegPhoto homePostalAddress givenName employeeType employeeNumber displayName departmentNumber carLicense audio||msDS-KeyCredentialLink msDS-KeyPrincipalBL msDS-AuthNPolicySiloMembersBL msDS-AssignedAuthNPolicySilo msDS-AssignedAuthNPolicy msDS-SyncServerUrl msDS-PrimaryComputer msTSSecondaryDesktops msTSPrimaryDesktop msPKI-CredentialRoamingTokens msDS-ResultantPSO msDS-AuthenticatedAtDC msTSInitialProgram msTSWorkDirectory msTSDefaultToMainPrinter msTSConnectPrinterDrives msTSConnectClientDrives msTSBrokenConnectionAction msTSReconnectionAction msTSMaxIdleTime msTSMaxConnectionTime msTSMaxDisconnectionTime msTSRemoteControl msTSAllowLogon msTSHomeDrive msTSHomeDirectory msTSProfilePath msTSLSProperty02 msTSLSProperty01 msTSProperty02 msTSProperty01 msTSManagingLS4 msTSManagingLS3 msTSManagingLS2 msTSManagingLS msTSLicenseVersion4 msTSLicenseVersion3 msTSLicenseVersion2 msTSLicenseVersion msTSExpireDate4 msTSExpireDate3 msTSExpireDate2 msTSExpireDate msDS-FailedInteractiveLogonCountAtLastSuccessfulLogon msDS-FailedInteractiveLogonCount msDS-LastFailedInteractiveLogonTime msDS-LastSuccessfulInteractiveLogonTime msRADIUS-SavedFramedIpv6Route msRADIUS-FramedIpv6Route msRADIUS-SavedFramedIpv6Prefix msRADIUS-FramedIpv6Prefix msRADIUS-SavedFramedInterfaceId msRADIUS-FramedInterfaceId msPKIAccountCredentials msPKIDPAPIMasterKeys msPKIRoamingTimeStamp msDS-SupportedEncryptionTypes msDS-SecondaryKrbTgtNumber pager o mobile manager mail initials homePhone businessCategory userCertificate userWorkstations userSharedFolderOther userSharedFolder userPrincipalName userParameters userAccountControl unicodePwd terminalServer servicePrincipalName scriptPath pwdLastSet profilePath primaryGroupID preferredOU otherLoginWorkstations operatorCount ntPwdHistory networkAddress msRASSavedFramedRoute msRASSavedFramedIPAddress msRASSavedCallbackNumber msRADIUSServiceType msRADIUSFramedRoute msRADIUSFramedIPAddress msRADIUSCallbackNumber msNPSavedCallingStationID msNPCallingStationID msNPAllowDialin mSMQSignCertificatesMig mSMQSignCertificates mSMQDigestsMig mSMQDigests msIIS-FTPRoot msIIS-FTPDir msDS-UserPasswordExpiryTimeComputed msDS-User-Account-Control-Computed msDS-Site-Affinity mS-DS-CreatorSID msDS-Cached-Membership-Time-Stamp msDS-Cached-Membership msDRM-IdentityCertificate msCOM-UserPartitionSetLink maxStorage logonWorkstation logonHours logonCount lockoutTime localeID lmPwdHistory lastLogonTimestamp lastLogon lastLogoff homeDrive homeDirectory groupsToIgnore groupPriority groupMembershipSAM dynamicLDAPServer desktopProfile defaultClassStore dBCSPwd controlAccessRights codePage badPwdCount badPasswordTime adminCount aCSPolicyName accountExpires|shadowAccount posixAccount|msDS-CloudExtensions securityPrincipal mailRecipient||builtinDomain organizationalUnit domainDNS|D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;AO)(A;;RPLCLORC;;;PS)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a54-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;CR;ab721a56-1e2f-11d0-9819-00aa0040529b;;PS)(OA;;RPWP;77B5B886-944A-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B2-9455-11d1-AEBD-0000F80367C1;;PS)(OA;;RPWP;E45795B3-9455-11d1-AEBD-0000F80367C1;;PS)(OA;;RP;037088f8-0ae1-11d2-b422-00a0c968f939;;RS)(OA;;RP;4c164200-20c0-11d0-a768-00aa006e0529;;RS)(OA;;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;;RS)(A;;RC;;;AU)(OA;;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;;AU)(OA;;RP;77B5B886-944A-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;E45795B3-9455-11d1-AEBD-0000F80367C1;;AU)(OA;;RP;e48d0154-bcf8-11d1-8702-00c04fb96050;;AU)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;WD)(OA;;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;;RS)(OA;;RPWP;bf967a7f-0de6-11d0-a285-00aa003049e2;;CA)(OA;;RP;46a9b11d-60ae-405a-b7e8-ff8a58d456d2;;S-1-5-32-560)(OA;;WPRP;6db69a1c-9422-11d1-aebd-0000f80367c1;;S-1-5-32-561)(OA;;WPRP;5805bc62-bdc9-4428-a5e2-856a0f4c185e;;S-1-5-32-561)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses() {
        let s = schema().unwrap();
        assert!(s.attributes().len() >= 200);
        assert!(s.classes().len() >= 50);
    }

    #[test]
    fn guid_text_round_trip() {
        let g = parse_guid("bf967aba-0de6-11d0-a285-00aa003049e2").unwrap();
        assert_eq!(&g[..4], &[0xba, 0x7a, 0x96, 0xbf]);
        assert_eq!(format_guid(&g), "bf967aba-0de6-11d0-a285-00aa003049e2");
        assert!(parse_guid("bf967aba-0de6-11d0-a285").is_none());
        assert!(parse_guid("zf967aba-0de6-11d0-a285-00aa003049e2").is_none());
    }
}
