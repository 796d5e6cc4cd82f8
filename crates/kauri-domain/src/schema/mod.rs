//! The Active Directory schema: attribute and class definitions, where they
//! come from, and what the database needs to know about them.
//!
//! A [`Schema`] is loaded either from Microsoft's published schema files
//! (the Windows Server 2016 LDIF files shipped by Debian's
//! `samba-ad-provision` package, see [`Schema::load_dir`]) or from Kauri's
//! own built-in subset of the core classes and attributes
//! ([`Schema::builtin`]); [`Schema::load_default`] picks the first that is
//! available. It can be extended at run time ([`Schema::add_attribute`],
//! [`Schema::add_class`]), answers the structural questions the directory
//! asks (superclass chains, mandatory and optional attributes, linked
//! attribute pairs), and produces the database configuration
//! ([`Schema::db_config`]) and the subschema values ([`rfc4512`]). Its
//! definitions become Schema NC entries and back through [`objects`].

pub mod builtin;
pub mod ldif;
pub mod objects;
pub mod rfc4512;
pub mod syntax;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use kauri_db::quick_hash::QuickMap;
use kauri_db::{DbConfig, IndexFlags, SchemaMap, Syntax};

pub use syntax::AdSyntax;

/// Where Debian's `samba-ad-provision` package installs Microsoft's schema files.
pub const DEFAULT_SCHEMA_DIR: &str = "/usr/share/samba/setup/ad-schema";
/// File name of the Windows Server 2016 attribute definitions.
pub const ATTRIBUTES_FILE: &str = "AD_DS_Attributes__Windows_Server_2016.ldf";
/// File name of the Windows Server 2016 class definitions.
pub const CLASSES_FILE: &str = "AD_DS_Classes__Windows_Server_2016.ldf";

/// searchFlags bit fATTINDEX: keep an index on the attribute.
pub const FATTINDEX: u32 = 0x1;
/// searchFlags bit fPDNTATTINDEX: index per container (parent + value).
pub const FPDNTATTINDEX: u32 = 0x2;
/// searchFlags bit fANR: include the attribute in ambiguous name resolution.
pub const FANR: u32 = 0x4;
/// searchFlags bit fPRESERVEONDELETE: keep the value on tombstones.
pub const FPRESERVEONDELETE: u32 = 0x8;
/// searchFlags bit fCOPY: copy the value when an object is copied.
pub const FCOPY: u32 = 0x10;
/// searchFlags bit fTUPLEINDEX: keep a tuple index for medial substring searches.
pub const FTUPLEINDEX: u32 = 0x20;
/// searchFlags bit fCONFIDENTIAL: reading needs the control-access right.
pub const FCONFIDENTIAL: u32 = 0x80;

/// An `attributeSchema` object: everything the directory needs to know about
/// one attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeDef {
    /// The name used over LDAP (`lDAPDisplayName`), e.g. `sAMAccountName`.
    pub ldap_name: String,
    /// The RDN of the schema object (`cn`), e.g. `SAM-Account-Name`.
    pub cn: String,
    /// The attribute's OID (`attributeID`).
    pub attribute_id: String,
    /// The syntax OID (`attributeSyntax`), one of `2.5.5.1` … `2.5.5.17`.
    pub attribute_syntax: String,
    /// The XOM syntax number (`oMSyntax`) refining `attribute_syntax`.
    pub om_syntax: i32,
    /// BER-encoded OID (`oMObjectClass`) refining object syntaxes (oMSyntax 127).
    pub om_object_class: Option<Vec<u8>>,
    /// Whether at most one value is allowed (`isSingleValued`).
    pub single_valued: bool,
    /// `linkID`: even for forward links, odd (forward + 1) for back links.
    pub link_id: Option<i32>,
    /// `searchFlags` bits (indexing, ANR, confidentiality, …).
    pub search_flags: u32,
    /// Whether only the system may write the attribute (`systemOnly`).
    pub system_only: bool,
    /// `systemFlags` bits (constructed, non-replicated, base schema, …).
    pub system_flags: i32,
    /// Lower bound on values or lengths (`rangeLower`).
    pub range_lower: Option<i64>,
    /// Upper bound on values or lengths (`rangeUpper`).
    pub range_upper: Option<i64>,
    /// The GUID access checks use to name the attribute (`schemaIDGUID`).
    pub schema_id_guid: Option<[u8; 16]>,
    /// The property set the attribute belongs to (`attributeSecurityGUID`).
    pub attribute_security_guid: Option<[u8; 16]>,
    /// Whether global catalogs hold the attribute.
    pub is_member_of_partial_attribute_set: bool,
    /// Whether UIs hide the schema object outside advanced views.
    pub show_in_advanced_view_only: bool,
    /// Whether the attribute has been retired (`isDefunct`).
    pub is_defunct: bool,
    /// Free-text description (`adminDescription`).
    pub admin_description: Option<String>,
    /// The attribute id replication and `replPropertyMetaData` know an attribute an
    /// administrator defined by (`msDS-IntId`); base-schema attributes have none.
    pub int_id: Option<i32>,
}

impl AttributeDef {
    /// Whether the attribute's values are stored as references to their targets: AD keeps
    /// every DN value as the target's row, so it follows renames and names the tombstone
    /// after a delete. `objectCategory` and `defaultObjectCategory` stay plain values:
    /// filters use them everywhere through their index, and a class names itself before
    /// it exists.
    pub fn is_reference(&self) -> bool {
        const FLAG_ATTR_IS_CONSTRUCTED: i32 = 0x4;
        self.link_id.is_none()
            && self.attribute_syntax == "2.5.5.1"
            && self.om_syntax == 127
            && self.system_flags & FLAG_ATTR_IS_CONSTRUCTED == 0
            && ![
                "objectCategory",
                "defaultObjectCategory",
                "distinguishedName",
            ]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&self.ldap_name))
    }
}

/// A `classSchema` object: the definition of one object class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDef {
    /// The name used over LDAP (`lDAPDisplayName`), e.g. `user`.
    pub ldap_name: String,
    /// The RDN of the schema object (`cn`), e.g. `User`.
    pub cn: String,
    /// The class's OID (`governsID`).
    pub governs_id: String,
    /// The direct superclass (`subClassOf`); `top` is its own superclass.
    pub sub_class_of: String,
    /// 0 = 88-class, 1 = structural, 2 = abstract, 3 = auxiliary.
    pub object_class_category: u8,
    /// The naming attribute of instances (`rDNAttID`), e.g. `cn`.
    pub rdn_att_id: Option<String>,
    /// Mandatory attributes added by administrators (`mustContain`).
    pub must_contain: Vec<String>,
    /// Optional attributes added by administrators (`mayContain`).
    pub may_contain: Vec<String>,
    /// Mandatory attributes of the base schema (`systemMustContain`).
    pub system_must_contain: Vec<String>,
    /// Optional attributes of the base schema (`systemMayContain`).
    pub system_may_contain: Vec<String>,
    /// Auxiliary classes added by administrators (`auxiliaryClass`).
    pub auxiliary_class: Vec<String>,
    /// Auxiliary classes of the base schema (`systemAuxiliaryClass`).
    pub system_auxiliary_class: Vec<String>,
    /// Classes instances may be created under (`possSuperiors`).
    pub poss_superiors: Vec<String>,
    /// Base-schema classes instances may be created under (`systemPossSuperiors`).
    pub system_poss_superiors: Vec<String>,
    /// DN of the class whose objects this class's instances are categorized
    /// as (`defaultObjectCategory`), as written in the schema source
    /// (`…,CN=Schema,CN=Configuration,DC=X`).
    pub default_object_category: Option<String>,
    /// SDDL security descriptor given to new instances.
    pub default_security_descriptor: Option<String>,
    /// Whether only the system may create instances (`systemOnly`).
    pub system_only: bool,
    /// The GUID access checks use to name the class (`schemaIDGUID`).
    pub schema_id_guid: Option<[u8; 16]>,
    /// Whether new instances are hidden from UIs by default.
    pub default_hiding_value: bool,
    /// `systemFlags` bits.
    pub system_flags: i32,
}

impl ClassDef {
    /// The category as an enum.
    pub fn category(&self) -> ClassCategory {
        match self.object_class_category {
            1 => ClassCategory::Structural,
            2 => ClassCategory::Abstract,
            3 => ClassCategory::Auxiliary,
            _ => ClassCategory::Class88,
        }
    }

    /// Every attribute named by the class itself (must, then may; system lists first).
    pub fn own_attributes(&self) -> impl Iterator<Item = &str> {
        self.system_must_contain
            .iter()
            .chain(&self.must_contain)
            .chain(&self.system_may_contain)
            .chain(&self.may_contain)
            .map(String::as_str)
    }
}

/// `objectClassCategory` values (MS-ADTS 3.1.1.2.4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassCategory {
    /// Defined before X.500 1993 categories; treated as structural.
    Class88,
    /// Can be instantiated.
    Structural,
    /// Only a template for subclasses.
    Abstract,
    /// Adds attributes to instances of other classes.
    Auxiliary,
}

/// Which source a schema was loaded from, so that callers can log it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaSource {
    /// Microsoft's published schema files in this folder.
    Files(PathBuf),
    /// Kauri's built-in subset, because no schema files were found (or they
    /// failed to load: the error is kept).
    Builtin {
        /// Why the files were not used, if they were present but unusable.
        load_error: Option<String>,
    },
}

/// Everything that can go wrong when loading or extending a schema.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// A schema file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A schema file is not what it should be.
    #[error("{file}:{line}: {reason}")]
    Malformed {
        /// File name.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A name, OID or linkID is already taken.
    #[error("{what} '{value}' is already used by '{existing}'")]
    Duplicate {
        /// `lDAPDisplayName`, `OID` or `linkID`.
        what: &'static str,
        /// The value in conflict.
        value: String,
        /// The existing definition holding it.
        existing: String,
    },
    /// A definition refers to a class or attribute the schema lacks.
    #[error("'{owner}' refers to unknown {kind} '{name}'")]
    UnknownReference {
        /// The definition holding the reference.
        owner: String,
        /// `class` or `attribute`.
        kind: &'static str,
        /// The missing name.
        name: String,
    },
    /// A definition is invalid on its own.
    #[error("invalid definition of '{name}': {reason}")]
    Invalid {
        /// The definition's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// The schema: attribute and class definitions with case-insensitive
/// lookups by lDAPDisplayName and OID.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    attributes: Vec<AttributeDef>,
    classes: Vec<ClassDef>,
    // Keyed by the schema's own names and OIDs (which only schema administrators add), and
    // looked up for every attribute of every entry: the quick hash.
    attr_by_name: QuickMap<String, usize>,
    attr_by_oid: QuickMap<String, usize>,
    attr_by_link: HashMap<i32, usize>,
    class_by_name: QuickMap<String, usize>,
    class_by_oid: QuickMap<String, usize>,
}

/// Lowercase key for name maps.
fn key(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// Looks a name up case-insensitively in a map keyed by [`key`], without allocating (see
/// [`kauri_db::ascii::with_lower`]): every attribute of every entry read or written goes
/// through here.
fn by_name(map: &QuickMap<String, usize>, name: &str) -> Option<usize> {
    kauri_db::ascii::with_lower(name, |k| map.get(k).copied())
}

/// The checks every schema object's names pass: an RFC 4512 descriptor as its
/// lDAPDisplayName and a numeric OID (`oid_label` names the OID's attribute).
fn check_name_and_oid(name: &str, oid_label: &str, oid: &str) -> Result<(), String> {
    if !kauri_db::syntax::is_descriptor(name) {
        return Err("lDAPDisplayName is not a valid descriptor".into());
    }
    if !is_numeric_oid(oid) {
        return Err(format!("{oid_label} '{oid}' is not a numeric OID"));
    }
    Ok(())
}

/// Whether `s` is a dotted numeric OID.
fn is_numeric_oid(s: &str) -> bool {
    let mut n = 0;
    for part in s.split('.') {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        n += 1;
    }
    n >= 2
}

impl Schema {
    /// An empty schema, the starting point for custom sources.
    pub fn new() -> Schema {
        Schema::default()
    }

    /// Loads the Windows Server 2016 attribute and class files
    /// ([`ATTRIBUTES_FILE`], [`CLASSES_FILE`]) from `dir`. Errors name the
    /// file and line of the offending record.
    pub fn load_dir(dir: &Path) -> Result<Schema, SchemaError> {
        let mut schema = Schema::new();
        for name in [ATTRIBUTES_FILE, CLASSES_FILE] {
            let path = dir.join(name);
            let text = std::fs::read(&path).map_err(|source| SchemaError::Io {
                path: path.clone(),
                source,
            })?;
            schema.load_ldif(&text, name)?;
        }
        schema.check_class_references()?;
        Ok(schema)
    }

    /// Adds every `attributeSchema` and `classSchema` record of an LDIF text
    /// (other records are ignored). `file` names the source in errors. Class
    /// references are not checked, so files may be loaded in any order; call
    /// [`Schema::check_class_references`] afterwards.
    pub fn load_ldif(&mut self, text: &[u8], file: &str) -> Result<(), SchemaError> {
        let located = |line: usize, e: SchemaError| SchemaError::Malformed {
            file: file.to_string(),
            line,
            reason: e.to_string(),
        };
        for rec in ldif::parse_ldif(text, file)? {
            if rec.has_object_class("attributeSchema") {
                let def = ldif::attribute_from_record(&rec, file)?;
                self.insert_attribute(def)
                    .map_err(|e| located(rec.line, e))?;
            } else if rec.has_object_class("classSchema") {
                let def = ldif::class_from_record(&rec, file)?;
                self.insert_class(def).map_err(|e| located(rec.line, e))?;
            }
        }
        Ok(())
    }

    /// Checks that every class's superclass and auxiliary classes are defined.
    pub fn check_class_references(&self) -> Result<(), SchemaError> {
        for c in &self.classes {
            for sup in std::iter::once(&c.sub_class_of)
                .chain(&c.auxiliary_class)
                .chain(&c.system_auxiliary_class)
            {
                if self.class(sup).is_none() {
                    return Err(SchemaError::UnknownReference {
                        owner: c.ldap_name.clone(),
                        kind: "class",
                        name: sup.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Kauri's built-in definitions of the core classes and attributes, for
    /// machines without the schema files (see [`builtin`]). The table is
    /// checked by the test suite; [`builtin::schema`] reports table errors
    /// instead of this function's empty fallback.
    pub fn builtin() -> Schema {
        builtin::schema().unwrap_or_default()
    }

    /// The complete schema from [`DEFAULT_SCHEMA_DIR`] when its files are
    /// present, else the built-in subset; says which was used.
    pub fn load_default() -> (Schema, SchemaSource) {
        let dir = Path::new(DEFAULT_SCHEMA_DIR);
        if !dir.join(ATTRIBUTES_FILE).exists() || !dir.join(CLASSES_FILE).exists() {
            return (
                Schema::builtin(),
                SchemaSource::Builtin { load_error: None },
            );
        }
        match Schema::load_dir(dir) {
            Ok(s) => (s, SchemaSource::Files(dir.to_path_buf())),
            Err(e) => (
                Schema::builtin(),
                SchemaSource::Builtin {
                    load_error: Some(e.to_string()),
                },
            ),
        }
    }

    /// Checks names and OIDs shared by attributes and classes (AD requires
    /// both to be unique across the whole schema).
    fn check_unique(&self, name: &str, oid: &str) -> Result<(), SchemaError> {
        let holder = self
            .attr_by_name
            .get(&key(name))
            .map(|&i| &self.attributes[i].ldap_name)
            .or_else(|| {
                self.class_by_name
                    .get(&key(name))
                    .map(|&i| &self.classes[i].ldap_name)
            });
        if let Some(existing) = holder {
            return Err(SchemaError::Duplicate {
                what: "lDAPDisplayName",
                value: name.to_string(),
                existing: existing.clone(),
            });
        }
        let holder = self
            .attr_by_oid
            .get(oid)
            .map(|&i| &self.attributes[i].ldap_name)
            .or_else(|| {
                self.class_by_oid
                    .get(oid)
                    .map(|&i| &self.classes[i].ldap_name)
            });
        if let Some(existing) = holder {
            return Err(SchemaError::Duplicate {
                what: "OID",
                value: oid.to_string(),
                existing: existing.clone(),
            });
        }
        Ok(())
    }

    /// Adds an attribute after checking the definition and its uniqueness.
    fn insert_attribute(&mut self, def: AttributeDef) -> Result<(), SchemaError> {
        let invalid = |reason: String| SchemaError::Invalid {
            name: def.ldap_name.clone(),
            reason,
        };
        check_name_and_oid(&def.ldap_name, "attributeID", &def.attribute_id).map_err(invalid)?;
        if AdSyntax::of(&def).is_none() {
            return Err(invalid(format!(
                "attributeSyntax {} with oMSyntax {} is not a supported syntax",
                def.attribute_syntax, def.om_syntax
            )));
        }
        self.check_unique(&def.ldap_name, &def.attribute_id)?;
        if let Some(link) = def.link_id {
            if let Some(&i) = self.attr_by_link.get(&link) {
                return Err(SchemaError::Duplicate {
                    what: "linkID",
                    value: link.to_string(),
                    existing: self.attributes[i].ldap_name.clone(),
                });
            }
        }
        let i = self.attributes.len();
        self.attr_by_name.insert(key(&def.ldap_name), i);
        self.attr_by_oid.insert(def.attribute_id.clone(), i);
        if let Some(link) = def.link_id {
            self.attr_by_link.insert(link, i);
        }
        self.attributes.push(def);
        Ok(())
    }

    /// Adds a class after checking the definition and its uniqueness.
    fn insert_class(&mut self, def: ClassDef) -> Result<(), SchemaError> {
        let invalid = |reason: String| SchemaError::Invalid {
            name: def.ldap_name.clone(),
            reason,
        };
        check_name_and_oid(&def.ldap_name, "governsID", &def.governs_id).map_err(invalid)?;
        if def.object_class_category > 3 {
            return Err(invalid("objectClassCategory must be 0 to 3".into()));
        }
        self.check_unique(&def.ldap_name, &def.governs_id)?;
        let i = self.classes.len();
        self.class_by_name.insert(key(&def.ldap_name), i);
        self.class_by_oid.insert(def.governs_id.clone(), i);
        self.classes.push(def);
        Ok(())
    }

    /// Extends the schema with a new attribute at run time. Refuses invalid
    /// definitions, unknown syntaxes, and names, OIDs or linkIDs already in
    /// use; a back link (odd linkID) needs its forward link to exist.
    pub fn add_attribute(&mut self, def: AttributeDef) -> Result<(), SchemaError> {
        if let Some(link) = def.link_id {
            if link < 0 {
                return Err(SchemaError::Invalid {
                    name: def.ldap_name.clone(),
                    reason: "linkID must not be negative".into(),
                });
            }
            if link % 2 == 1 && !self.attr_by_link.contains_key(&(link - 1)) {
                return Err(SchemaError::Invalid {
                    name: def.ldap_name.clone(),
                    reason: format!("back link {link} has no forward link {}", link - 1),
                });
            }
        }
        self.insert_attribute(def)
    }

    /// Extends the schema with a new class at run time. Refuses duplicates
    /// and references to unknown superclasses, auxiliary classes or attributes.
    pub fn add_class(&mut self, def: ClassDef) -> Result<(), SchemaError> {
        self.check_references(&def)?;
        self.insert_class(def)
    }

    /// Every class (superclass, auxiliary classes, possible superiors) and attribute a
    /// class names exists.
    fn check_references(&self, def: &ClassDef) -> Result<(), SchemaError> {
        let unknown = |kind: &'static str, name: &str| SchemaError::UnknownReference {
            owner: def.ldap_name.clone(),
            kind,
            name: name.to_string(),
        };
        for c in std::iter::once(&def.sub_class_of)
            .chain(&def.auxiliary_class)
            .chain(&def.system_auxiliary_class)
            .chain(&def.poss_superiors)
            .chain(&def.system_poss_superiors)
        {
            if self.class(c).is_none() {
                return Err(unknown("class", c));
            }
        }
        for a in def.own_attributes() {
            if self.attribute(a).is_none() {
                return Err(unknown("attribute", a));
            }
        }
        Ok(())
    }

    /// Changes an existing class in place (a schema update adding optional attributes,
    /// auxiliary classes or possible superiors to it). Its name, OID, superclass and
    /// category cannot change, and every class and attribute it names must exist.
    pub fn update_class(&mut self, def: ClassDef) -> Result<(), SchemaError> {
        let i = *self
            .class_by_name
            .get(&key(&def.ldap_name))
            .ok_or_else(|| SchemaError::Invalid {
                name: def.ldap_name.clone(),
                reason: "no such class to change".into(),
            })?;
        let old = &self.classes[i];
        if old.governs_id != def.governs_id
            || !old.sub_class_of.eq_ignore_ascii_case(&def.sub_class_of)
            || old.object_class_category != def.object_class_category
        {
            return Err(SchemaError::Invalid {
                name: def.ldap_name.clone(),
                reason: "governsID, subClassOf and objectClassCategory cannot change".into(),
            });
        }
        self.check_references(&def)?;
        self.classes[i] = def;
        Ok(())
    }

    /// Gives an attribute a new lDAPDisplayName, and the classes that name it the new
    /// name. The name must be a free, valid descriptor.
    pub fn rename_attribute(&mut self, old: &str, new: &str) -> Result<(), SchemaError> {
        let i = *self
            .attr_by_name
            .get(&key(old))
            .ok_or_else(|| SchemaError::Invalid {
                name: old.to_string(),
                reason: "no such attribute to rename".into(),
            })?;
        if !key(old).eq(&key(new)) {
            let invalid = |reason: String| SchemaError::Invalid {
                name: new.to_string(),
                reason,
            };
            if !kauri_db::syntax::is_descriptor(new) {
                return Err(invalid("lDAPDisplayName is not a valid descriptor".into()));
            }
            if self.attr_by_name.contains_key(&key(new))
                || self.class_by_name.contains_key(&key(new))
            {
                return Err(SchemaError::Duplicate {
                    what: "lDAPDisplayName",
                    value: new.to_string(),
                    existing: new.to_string(),
                });
            }
        }
        let old_name = self.attributes[i].ldap_name.clone();
        self.attr_by_name.remove(&key(&old_name));
        self.attr_by_name.insert(key(new), i);
        self.attributes[i].ldap_name = new.to_string();
        let rename = |list: &mut Vec<String>| {
            for n in list.iter_mut() {
                if n.eq_ignore_ascii_case(&old_name) {
                    *n = new.to_string();
                }
            }
        };
        for c in &mut self.classes {
            rename(&mut c.must_contain);
            rename(&mut c.may_contain);
            rename(&mut c.system_must_contain);
            rename(&mut c.system_may_contain);
            if c.rdn_att_id
                .as_deref()
                .is_some_and(|r| r.eq_ignore_ascii_case(&old_name))
            {
                c.rdn_att_id = Some(new.to_string());
            }
        }
        Ok(())
    }

    /// Changes how an existing attribute is indexed and described (its `searchFlags`
    /// and the like); its name, OID, syntax, link and value count cannot change.
    pub fn update_attribute(&mut self, def: AttributeDef) -> Result<(), SchemaError> {
        let i =
            *self
                .attr_by_name
                .get(&key(&def.ldap_name))
                .ok_or_else(|| SchemaError::Invalid {
                    name: def.ldap_name.clone(),
                    reason: "no such attribute to change".into(),
                })?;
        let old = &self.attributes[i];
        if old.attribute_id != def.attribute_id
            || old.attribute_syntax != def.attribute_syntax
            || old.om_syntax != def.om_syntax
            || old.link_id != def.link_id
            || old.single_valued != def.single_valued
        {
            return Err(SchemaError::Invalid {
                name: def.ldap_name.clone(),
                reason: "attributeID, syntax, linkID and isSingleValued cannot change".into(),
            });
        }
        self.attributes[i] = def;
        Ok(())
    }

    /// The attribute with this lDAPDisplayName (case-insensitive); a numeric
    /// OID is also accepted.
    pub fn attribute(&self, name: &str) -> Option<&AttributeDef> {
        by_name(&self.attr_by_name, name)
            .map(|i| &self.attributes[i])
            .or_else(|| self.attribute_by_oid(name))
    }

    /// The attribute with this `attributeID`.
    pub fn attribute_by_oid(&self, oid: &str) -> Option<&AttributeDef> {
        self.attr_by_oid
            .get(oid.trim())
            .map(|&i| &self.attributes[i])
    }

    /// The attribute with this `linkID`.
    pub fn attribute_by_link_id(&self, link_id: i32) -> Option<&AttributeDef> {
        self.attr_by_link
            .get(&link_id)
            .map(|&i| &self.attributes[i])
    }

    /// The class with this lDAPDisplayName (case-insensitive); a numeric OID
    /// is also accepted.
    pub fn class(&self, name: &str) -> Option<&ClassDef> {
        by_name(&self.class_by_name, name)
            .map(|i| &self.classes[i])
            .or_else(|| self.class_by_oid(name))
    }

    /// The class with this `governsID`.
    pub fn class_by_oid(&self, oid: &str) -> Option<&ClassDef> {
        self.class_by_oid.get(oid.trim()).map(|&i| &self.classes[i])
    }

    /// Every attribute, in load order.
    pub fn attributes(&self) -> impl ExactSizeIterator<Item = &AttributeDef> {
        self.attributes.iter()
    }

    /// Every class, in load order.
    pub fn classes(&self) -> impl ExactSizeIterator<Item = &ClassDef> {
        self.classes.iter()
    }

    /// The class and its superclasses, most specific first, ending at `top`.
    /// Empty if the class is unknown; stops at an unknown superclass.
    pub fn superclass_chain(&self, class: &str) -> Vec<&ClassDef> {
        let mut out: Vec<&ClassDef> = Vec::new();
        let mut cur = self.class(class);
        while let Some(c) = cur {
            if out.iter().any(|o| o.governs_id == c.governs_id) {
                break;
            }
            out.push(c);
            if c.sub_class_of.eq_ignore_ascii_case(&c.ldap_name) {
                break;
            }
            cur = self.class(&c.sub_class_of);
        }
        out
    }

    /// The class, its superclasses, and (recursively) the auxiliary classes
    /// of all of them with their own superclasses: every class whose
    /// attributes an instance can carry. Each class appears once.
    pub fn class_closure(&self, class: &str) -> Vec<&ClassDef> {
        let mut out: Vec<&ClassDef> = Vec::new();
        let mut pending: Vec<&str> = vec![class];
        while let Some(name) = pending.pop() {
            for c in self.superclass_chain(name) {
                if out.iter().any(|o| o.governs_id == c.governs_id) {
                    continue;
                }
                out.push(c);
                for aux in c.system_auxiliary_class.iter().chain(&c.auxiliary_class) {
                    pending.push(aux);
                }
            }
        }
        out
    }

    /// Collects attribute names from the classes of the closure, without
    /// duplicates (case-insensitive), in closure order.
    fn collect<'a>(
        &'a self,
        class: &str,
        pick: fn(&'a ClassDef) -> [&'a [String]; 2],
    ) -> Vec<&'a str> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for c in self.class_closure(class) {
            for list in pick(c) {
                for a in list {
                    if seen.insert(key(a)) {
                        out.push(a.as_str());
                    }
                }
            }
        }
        out
    }

    /// Every mandatory attribute of an instance of `class`: system and
    /// non-system `mustContain` of the class, its superclasses and their
    /// auxiliary classes.
    pub fn all_must(&self, class: &str) -> Vec<&str> {
        self.collect(class, |c| [&c.system_must_contain, &c.must_contain])
    }

    /// Every optional attribute of an instance of `class` (system and
    /// non-system `mayContain` over the same classes as [`Schema::all_must`]),
    /// excluding those that are also mandatory.
    pub fn all_may(&self, class: &str) -> Vec<&str> {
        let must: HashSet<String> = self.all_must(class).into_iter().map(key).collect();
        self.collect(class, |c| [&c.system_may_contain, &c.may_contain])
            .into_iter()
            .filter(|a| !must.contains(&key(a)))
            .collect()
    }

    /// The forward and back link of a linked pair, given either member.
    pub fn linked_pair(&self, attr: &str) -> Option<(&AttributeDef, &AttributeDef)> {
        let a = self.attribute(attr)?;
        let link = a.link_id?;
        let forward = link - (link & 1);
        Some((
            self.attribute_by_link_id(forward)?,
            self.attribute_by_link_id(forward + 1)?,
        ))
    }

    /// The back link (linkID + 1) of a forward link attribute.
    pub fn back_link_of(&self, forward: &str) -> Option<&AttributeDef> {
        let link = self.attribute(forward)?.link_id?;
        if link % 2 != 0 {
            return None;
        }
        self.attribute_by_link_id(link + 1)
    }

    /// The forward link (linkID − 1) of a back link attribute.
    pub fn forward_link_of(&self, back: &str) -> Option<&AttributeDef> {
        let link = self.attribute(back)?.link_id?;
        if link % 2 != 1 {
            return None;
        }
        self.attribute_by_link_id(link - 1)
    }

    /// The storage syntax of an attribute (DirectoryString when unknown).
    pub fn syntax_of(&self, attr: &str) -> Syntax {
        self.attribute(attr)
            .map(syntax::kauri_syntax)
            .unwrap_or(Syntax::DirectoryString)
    }

    /// The database configuration for this schema.
    ///
    /// Every attribute's storage syntax goes into the syntax map
    /// (unlisted names default to DirectoryString). Indexes follow
    /// `searchFlags` (MS-ADTS 3.1.1.2.3):
    ///
    /// * fATTINDEX (0x1): equality and presence, plus initial-substring
    ///   (AD answers `(a=x*)` from the same index) where the syntax has
    ///   substring matching, plus ordering for integer and time syntaxes;
    /// * fPDNTATTINDEX (0x2): nothing extra (per-container indexes are
    ///   served by the equality index and the tree);
    /// * fANR (0x4): equality and initial-substring, which is how ambiguous
    ///   name resolution searches;
    /// * fTUPLEINDEX (0x20): initial-substring, the closest index Kauri has
    ///   to a medial-substring index.
    ///
    /// And always, whatever the schema says:
    ///
    /// * `objectClass`: equality and presence (nearly every filter uses it);
    /// * `objectGUID`: equality and unique (GUIDs identify objects);
    /// * `objectSid`: equality (SID lookups during logon and access checks);
    /// * `sAMAccountName`: equality and initial-substring (logon and ANR);
    /// * `userPrincipalName`: equality (logon by UPN);
    /// * `uSNCreated`, `uSNChanged`: equality and ordering (replication and
    ///   change tracking read ranges of USNs);
    /// * every linked attribute (forward and back links) is declared as a link
    ///   pair: its values live in the link table, which answers equality,
    ///   presence and in-chain matches (`(member=<dn>)`, `(memberOf=<dn>)`).
    ///
    /// `whenChanged` is not indexed unless the schema says so, as in AD (its
    /// `searchFlags` are 0): every change moves it, and change tracking reads
    /// `uSNChanged`.
    ///
    /// The USN attributes are `uSNCreated` and `uSNChanged`.
    pub fn db_config(&self) -> DbConfig {
        let mut config = DbConfig::default();
        let mut map = SchemaMap::default();
        for a in &self.attributes {
            map.set(&a.ldap_name, syntax::kauri_syntax(a));
        }
        for (name, fallback) in [
            ("uSNCreated", Syntax::Integer),
            ("uSNChanged", Syntax::Integer),
            ("objectGUID", Syntax::Guid),
            ("objectSid", Syntax::Sid),
            ("whenChanged", Syntax::GeneralizedTime),
            ("whenCreated", Syntax::GeneralizedTime),
            ("objectClass", Syntax::Oid),
        ] {
            if self.attribute(name).is_none() {
                map.set(name, fallback);
            }
        }
        config.schema = map;
        config.dn_attributes = vec!["distinguishedname".to_string()];
        if self.attribute("nTSecurityDescriptor").is_some() {
            config.descriptor_attribute = Some("nTSecurityDescriptor".to_string());
        }
        config.indexes.clear();
        for a in &self.attributes {
            let syn = syntax::kauri_syntax(a);
            let flags = index_flags(a.search_flags, syn);
            if flags != IndexFlags::NONE {
                config.index(&a.ldap_name, flags);
            }
        }
        for a in &self.attributes {
            if let Some(link) = a.link_id.filter(|l| l % 2 == 0) {
                let back = self.attribute_by_link_id(link + 1);
                config.link(&a.ldap_name, back.map(|b| b.ldap_name.as_str()));
            } else if a.is_reference() {
                config.reference(&a.ldap_name);
            }
        }
        for (name, flags) in [
            ("objectClass", IndexFlags::EQUALITY | IndexFlags::PRESENCE),
            ("objectGUID", IndexFlags::EQUALITY | IndexFlags::UNIQUE),
            ("objectSid", IndexFlags::EQUALITY),
            (
                "sAMAccountName",
                IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL,
            ),
            ("userPrincipalName", IndexFlags::EQUALITY),
            ("uSNCreated", IndexFlags::EQUALITY | IndexFlags::ORDERED),
            ("uSNChanged", IndexFlags::EQUALITY | IndexFlags::ORDERED),
        ] {
            config.index(name, flags);
        }
        config
    }
}

/// Index flags implied by `searchFlags` for an attribute of syntax `syn`.
pub fn index_flags(search_flags: u32, syn: Syntax) -> IndexFlags {
    let substr = if syn.supports_substrings() {
        IndexFlags::SUBSTRING_INITIAL
    } else {
        IndexFlags::NONE
    };
    let mut flags = IndexFlags::NONE;
    if search_flags & FATTINDEX != 0 {
        // Presence is answered from the value keys; no separate presence keys.
        flags = flags | IndexFlags::EQUALITY | substr;
        if matches!(
            syn,
            Syntax::Integer | Syntax::GeneralizedTime | Syntax::UtcTime
        ) {
            flags = flags | IndexFlags::ORDERED;
        }
    }
    if search_flags & FANR != 0 {
        flags = flags | IndexFlags::EQUALITY | substr;
    }
    if search_flags & FTUPLEINDEX != 0 {
        flags = flags | substr;
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_flags_follow_search_flags() {
        let f = index_flags(FATTINDEX, Syntax::DirectoryString);
        assert!(f.contains(IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL));
        assert!(!f.contains(IndexFlags::PRESENCE));
        assert!(!f.contains(IndexFlags::ORDERED));
        assert!(index_flags(FATTINDEX, Syntax::Integer).contains(IndexFlags::ORDERED));
        assert_eq!(
            index_flags(FPDNTATTINDEX, Syntax::DirectoryString),
            IndexFlags::NONE
        );
        assert_eq!(
            index_flags(FANR, Syntax::DirectoryString),
            IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL
        );
        assert_eq!(
            index_flags(FTUPLEINDEX, Syntax::DirectoryString),
            IndexFlags::SUBSTRING_INITIAL
        );
        assert_eq!(
            index_flags(FCONFIDENTIAL, Syntax::DirectoryString),
            IndexFlags::NONE
        );
    }
}
