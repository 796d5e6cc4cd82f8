//! Schema definitions as directory objects: the `attributeSchema` and
//! `classSchema` entries of the Schema NC, in the encodings AD uses on the
//! wire, and the way back from those entries to a [`Schema`].
//!
//! Encodings: booleans `TRUE`/`FALSE`, integers as decimal text, OIDs
//! (`attributeID`, `governsID`, `attributeSyntax`) as dotted text, class and
//! attribute references (`subClassOf`, `mustContain`, …) by lDAPDisplayName,
//! GUIDs and `oMObjectClass` as raw bytes. `defaultObjectCategory` is a DN in
//! the Schema NC: definitions hold it below [`SOURCE_SCHEMA_DN`], the way the
//! schema sources write it, and entries hold it below the real schema DN.
//!
//! Entries are decoded by the same record conversion and checks as LDIF files
//! ([`super::ldif`]), so a schema read back from the directory obeys the same
//! rules as one loaded from Microsoft's files.

use kauri_db::{Dn, Entry, Rdn};

use super::ldif::{self, LdifRecord};
use super::{AttributeDef, ClassDef, Schema, SchemaError};

/// The Schema NC DN the schema sources (Microsoft's LDIF files and the
/// built-in table) use in `defaultObjectCategory` values.
pub const SOURCE_SCHEMA_DN: &str = "CN=Schema,CN=Configuration,DC=X";

/// A definition-level error about `name`.
fn invalid(name: &str, reason: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        name: name.to_string(),
        reason: reason.into(),
    }
}

/// The placeholder schema DN as a [`Dn`].
fn source_schema_dn() -> Result<Dn, SchemaError> {
    Dn::parse(SOURCE_SCHEMA_DN).map_err(|e| invalid(SOURCE_SCHEMA_DN, e.to_string()))
}

/// `CN=<cn>,<schema_dn>`: where a definition's object lives.
pub fn object_dn(cn: &str, schema_dn: &Dn) -> Result<Dn, SchemaError> {
    Rdn::new("CN", cn)
        .map(|rdn| schema_dn.child(rdn))
        .map_err(|e| invalid(cn, e.to_string()))
}

/// Accumulates the attributes of one schema object.
struct Values(Entry);

impl Values {
    fn text(&mut self, attr: &str, v: &str) {
        if !v.is_empty() {
            self.0.push(attr, vec![v.as_bytes().to_vec()]);
        }
    }

    fn list(&mut self, attr: &str, vs: &[String]) {
        let vals: Vec<Vec<u8>> = vs
            .iter()
            .filter(|v| !v.is_empty())
            .map(|v| v.as_bytes().to_vec())
            .collect();
        if !vals.is_empty() {
            self.0.push(attr, vals);
        }
    }

    fn int(&mut self, attr: &str, v: impl ToString) {
        self.text(attr, &v.to_string());
    }

    fn boolean(&mut self, attr: &str, v: bool) {
        self.text(attr, if v { "TRUE" } else { "FALSE" });
    }

    fn bytes(&mut self, attr: &str, v: &[u8]) {
        self.0.push(attr, vec![v.to_vec()]);
    }
}

/// A class's `defaultObjectCategory` as a DN in the Schema NC named
/// `schema_dn` (definitions write it below [`SOURCE_SCHEMA_DN`]): the
/// `objectCategory` new instances of the class get.
pub fn default_object_category(def: &ClassDef, schema_dn: &Dn) -> Result<Option<Dn>, SchemaError> {
    let Some(category) = &def.default_object_category else {
        return Ok(None);
    };
    let dn = Dn::parse(category).map_err(|err| {
        invalid(
            &def.ldap_name,
            format!("defaultObjectCategory '{category}' is not a DN: {err}"),
        )
    })?;
    Ok(Some(
        dn.rebase(&source_schema_dn()?, schema_dn).unwrap_or(dn),
    ))
}

/// The `attributeSchema` entry of a definition, named below `schema_dn`.
pub fn attribute_entry(def: &AttributeDef, schema_dn: &Dn) -> Result<Entry, SchemaError> {
    let mut e = Values(Entry::new(object_dn(&def.cn, schema_dn)?));
    e.list("objectClass", &["top".into(), "attributeSchema".into()]);
    e.text("cn", &def.cn);
    e.text("lDAPDisplayName", &def.ldap_name);
    e.text("attributeID", &def.attribute_id);
    e.text("attributeSyntax", &def.attribute_syntax);
    e.int("oMSyntax", def.om_syntax);
    if let Some(c) = &def.om_object_class {
        e.bytes("oMObjectClass", c);
    }
    e.boolean("isSingleValued", def.single_valued);
    if let Some(l) = def.link_id {
        e.int("linkID", l);
    }
    e.int("searchFlags", def.search_flags);
    e.boolean("systemOnly", def.system_only);
    if def.system_flags != 0 {
        e.int("systemFlags", def.system_flags);
    }
    if let Some(v) = def.range_lower {
        e.int("rangeLower", v);
    }
    if let Some(v) = def.range_upper {
        e.int("rangeUpper", v);
    }
    if let Some(g) = &def.schema_id_guid {
        e.bytes("schemaIDGUID", g);
    }
    if let Some(g) = &def.attribute_security_guid {
        e.bytes("attributeSecurityGUID", g);
    }
    if def.is_member_of_partial_attribute_set {
        e.boolean("isMemberOfPartialAttributeSet", true);
    }
    e.boolean("showInAdvancedViewOnly", def.show_in_advanced_view_only);
    if def.is_defunct {
        e.boolean("isDefunct", true);
    }
    if let Some(d) = &def.admin_description {
        e.text("adminDescription", d);
    }
    Ok(e.0)
}

/// The `classSchema` entry of a definition, named below `schema_dn`; its
/// `defaultObjectCategory` is moved from [`SOURCE_SCHEMA_DN`] to `schema_dn`.
pub fn class_entry(def: &ClassDef, schema_dn: &Dn) -> Result<Entry, SchemaError> {
    let mut e = Values(Entry::new(object_dn(&def.cn, schema_dn)?));
    e.list("objectClass", &["top".into(), "classSchema".into()]);
    e.text("cn", &def.cn);
    e.text("lDAPDisplayName", &def.ldap_name);
    e.text("governsID", &def.governs_id);
    e.text("subClassOf", &def.sub_class_of);
    e.int("objectClassCategory", def.object_class_category);
    if let Some(r) = &def.rdn_att_id {
        e.text("rDNAttID", r);
    }
    e.list("mustContain", &def.must_contain);
    e.list("mayContain", &def.may_contain);
    e.list("systemMustContain", &def.system_must_contain);
    e.list("systemMayContain", &def.system_may_contain);
    e.list("auxiliaryClass", &def.auxiliary_class);
    e.list("systemAuxiliaryClass", &def.system_auxiliary_class);
    e.list("possSuperiors", &def.poss_superiors);
    e.list("systemPossSuperiors", &def.system_poss_superiors);
    if let Some(category) = default_object_category(def, schema_dn)? {
        e.text("defaultObjectCategory", &category.to_string());
    }
    if let Some(sd) = &def.default_security_descriptor {
        e.text("defaultSecurityDescriptor", sd);
    }
    e.boolean("systemOnly", def.system_only);
    if let Some(g) = &def.schema_id_guid {
        e.bytes("schemaIDGUID", g);
    }
    e.boolean("defaultHidingValue", def.default_hiding_value);
    if def.system_flags != 0 {
        e.int("systemFlags", def.system_flags);
    }
    Ok(e.0)
}

/// Whether an entry's `objectClass` includes `class`.
pub(crate) fn has_class(entry: &Entry, class: &str) -> bool {
    entry
        .get("objectClass")
        .is_some_and(|vs| vs.iter().any(|v| v.eq_ignore_ascii_case(class.as_bytes())))
}

/// The entry as an LDIF record, with `defaultObjectCategory` moved from the
/// entry's own container back to [`SOURCE_SCHEMA_DN`].
fn record(entry: &Entry, source: &Dn) -> LdifRecord {
    let container = entry.dn.parent();
    let mut values = Vec::new();
    for (attr, vals) in &entry.attrs {
        for v in vals {
            let mut v = v.clone();
            if attr.eq_ignore_ascii_case("defaultObjectCategory") {
                let moved = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| Dn::parse(s).ok())
                    .and_then(|dn| dn.rebase(container.as_ref()?, source));
                if let Some(dn) = moved {
                    v = dn.to_string().into_bytes();
                }
            }
            values.push((attr.clone(), v, 0));
        }
    }
    LdifRecord {
        dn: entry.dn.to_string(),
        line: 0,
        values,
    }
}

/// Names the object in conversion errors instead of a file and line.
fn located(dn: &str) -> impl Fn(SchemaError) -> SchemaError + '_ {
    move |e| match e {
        SchemaError::Malformed { reason, .. } => invalid(dn, reason),
        other => other,
    }
}

/// One schema definition read from a schema object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Definition {
    /// From an `attributeSchema` object.
    Attribute(AttributeDef),
    /// From a `classSchema` object.
    Class(ClassDef),
}

/// The definition an `attributeSchema` or `classSchema` entry holds (`None` for other
/// entries): how a schema extension added over LDAP reaches the running schema.
pub fn definition_of(entry: &Entry) -> Result<Option<Definition>, SchemaError> {
    let source = source_schema_dn()?;
    let is_attr = has_class(entry, "attributeSchema");
    if !is_attr && !has_class(entry, "classSchema") {
        return Ok(None);
    }
    let rec = record(entry, &source);
    let at = located(&rec.dn);
    Ok(Some(if is_attr {
        Definition::Attribute(ldif::attribute_from_record(&rec, &rec.dn).map_err(&at)?)
    } else {
        Definition::Class(ldif::class_from_record(&rec, &rec.dn).map_err(&at)?)
    }))
}

impl Schema {
    /// Builds a schema from the `attributeSchema` and `classSchema` entries
    /// among `entries` (others are ignored), with the checks of
    /// [`Schema::load_ldif`] and [`Schema::check_class_references`]; this is
    /// how a server reads its schema back from the Schema NC.
    pub fn load_entries<'a>(
        entries: impl IntoIterator<Item = &'a Entry>,
    ) -> Result<Schema, SchemaError> {
        let source = source_schema_dn()?;
        let mut schema = Schema::new();
        for entry in entries {
            let is_attr = has_class(entry, "attributeSchema");
            if !is_attr && !has_class(entry, "classSchema") {
                continue;
            }
            let rec = record(entry, &source);
            let at = located(&rec.dn);
            if is_attr {
                let def = ldif::attribute_from_record(&rec, &rec.dn).map_err(&at)?;
                schema.insert_attribute(def).map_err(&at)?;
            } else {
                let def = ldif::class_from_record(&rec, &rec.dn).map_err(&at)?;
                schema.insert_class(def).map_err(&at)?;
            }
        }
        schema.check_class_references()?;
        Ok(schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_dn() -> Dn {
        Dn::parse("CN=Schema,CN=Configuration,DC=samdom,DC=example,DC=com").unwrap()
    }

    #[test]
    fn builtin_round_trips() {
        let s = Schema::builtin();
        let dn = schema_dn();
        let mut entries = Vec::new();
        for a in s.attributes() {
            entries.push(attribute_entry(a, &dn).unwrap());
        }
        for c in s.classes() {
            entries.push(class_entry(c, &dn).unwrap());
        }
        let back = Schema::load_entries(&entries).unwrap();
        assert!(back.attributes().eq(s.attributes()));
        assert!(back.classes().eq(s.classes()));
    }

    #[test]
    fn wire_encodings() {
        let s = Schema::builtin();
        let dn = schema_dn();
        let user = class_entry(s.class("user").unwrap(), &dn).unwrap();
        assert_eq!(
            user.dn.to_string(),
            "CN=User,CN=Schema,CN=Configuration,DC=samdom,DC=example,DC=com"
        );
        assert_eq!(
            user.get("defaultObjectCategory").unwrap()[0],
            b"CN=Person,CN=Schema,CN=Configuration,DC=samdom,DC=example,DC=com"
        );
        assert_eq!(user.get("subClassOf").unwrap()[0], b"organizationalPerson");
        assert_eq!(user.get("schemaIDGUID").unwrap()[0].len(), 16);
        let member = attribute_entry(s.attribute("member").unwrap(), &dn).unwrap();
        assert_eq!(member.get("linkID").unwrap()[0], b"2");
        assert_eq!(member.get("isSingleValued").unwrap()[0], b"FALSE");
        assert_eq!(member.get("attributeID").unwrap()[0], b"2.5.4.31");
        assert_eq!(member.get("oMObjectClass").unwrap()[0].len(), 9);
    }

    #[test]
    fn bad_entries_name_the_object() {
        let dn = schema_dn();
        let mut e = attribute_entry(Schema::builtin().attribute("cn").unwrap(), &dn).unwrap();
        e.attrs.retain(|(a, _)| a != "oMSyntax");
        let err = Schema::load_entries([&e]).unwrap_err().to_string();
        assert!(
            err.contains("CN=Common-Name") && err.contains("oMSyntax"),
            "{err}"
        );
        let mut e = class_entry(Schema::builtin().class("user").unwrap(), &dn).unwrap();
        e.attrs.retain(|(a, _)| a != "objectClass");
        e.push("objectClass", vec![b"classSchema".to_vec()]);
        let err = Schema::load_entries([&e]).unwrap_err().to_string();
        assert!(err.contains("organizationalPerson"), "{err}");
    }
}
