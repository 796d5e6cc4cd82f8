//! Building provisioned entries: an object under construction ([`Obj`]) and
//! the growing tree ([`Tree`]) that gives each object its class chain and
//! naming attribute and checks it against the schema.

use kauri_db::{Dn, Entry};

use super::{ProvisionEntry, ProvisionError};
use crate::schema::Schema;
use crate::sid::Sid;

/// `systemFlags` of objects that can be neither deleted, renamed nor moved:
/// FLAG_DISALLOW_DELETE | FLAG_DOMAIN_DISALLOW_RENAME | FLAG_DOMAIN_DISALLOW_MOVE.
pub const PROTECTED: i64 = -1946157056;
/// `systemFlags` FLAG_DISALLOW_DELETE alone (configuration NC containers).
pub const DISALLOW_DELETE: i64 = -2147483648;
/// `systemFlags` FLAG_DISALLOW_MOVE_ON_DELETE.
pub const DISALLOW_MOVE_ON_DELETE: i64 = 0x0200_0000;
/// `systemFlags` FLAG_CONFIG_ALLOW_RENAME.
pub const CONFIG_ALLOW_RENAME: i64 = 0x4000_0000;
/// `systemFlags` FLAG_CONFIG_ALLOW_LIMITED_MOVE.
pub const CONFIG_ALLOW_LIMITED_MOVE: i64 = 0x1000_0000;

/// One object being described: its DN, structural class and attributes.
pub struct Obj {
    dn: Dn,
    class: String,
    attrs: Vec<(String, Vec<Vec<u8>>)>,
}

impl Obj {
    /// An object of structural class `class` named `dn`.
    pub fn new(dn: Dn, class: &str) -> Obj {
        Obj {
            dn,
            class: class.to_string(),
            attrs: Vec::new(),
        }
    }

    /// Adds raw values to an attribute.
    pub fn raw(mut self, attr: &str, values: Vec<Vec<u8>>) -> Obj {
        if let Some((_, vals)) = self.attrs.iter_mut().find(|(a, _)| a == attr) {
            vals.extend(values);
        } else {
            self.attrs.push((attr.to_string(), values));
        }
        self
    }

    /// Adds a string value.
    pub fn text(self, attr: &str, value: &str) -> Obj {
        self.raw(attr, vec![value.as_bytes().to_vec()])
    }

    /// Adds string values.
    pub fn texts<S: AsRef<str>>(self, attr: &str, values: &[S]) -> Obj {
        let vals = values.iter().map(|v| v.as_ref().as_bytes().to_vec());
        self.raw(attr, vals.collect())
    }

    /// Adds an integer value (decimal text).
    pub fn int(self, attr: &str, value: i64) -> Obj {
        self.text(attr, &value.to_string())
    }

    /// Adds a boolean value (`TRUE` or `FALSE`).
    pub fn boolean(self, attr: &str, value: bool) -> Obj {
        self.text(attr, if value { "TRUE" } else { "FALSE" })
    }

    /// Adds DN values.
    pub fn dns(self, attr: &str, values: &[&Dn]) -> Obj {
        let vals = values.iter().map(|d| d.to_string().into_bytes());
        self.raw(attr, vals.collect())
    }

    /// Adds one DN value.
    pub fn dn(self, attr: &str, value: &Dn) -> Obj {
        self.dns(attr, &[value])
    }

    /// Sets `objectSid` (binary form).
    pub fn sid(self, sid: &Sid) -> Obj {
        self.raw("objectSid", vec![sid.to_bytes()])
    }

    /// Marks a system object AD protects from deletion, renaming and moves.
    pub fn critical(self, system_flags: i64) -> Obj {
        self.int("systemFlags", system_flags)
            .boolean("isCriticalSystemObject", true)
    }

    /// Sets `description`.
    pub fn describe(self, description: &str) -> Obj {
        self.text("description", description)
    }

    /// Sets `showInAdvancedViewOnly`.
    pub fn advanced(self, hidden: bool) -> Obj {
        self.boolean("showInAdvancedViewOnly", hidden)
    }
}

/// The entries produced so far, checked against the schema as they come.
pub struct Tree<'s> {
    schema: &'s Schema,
    out: Vec<ProvisionEntry>,
}

impl<'s> Tree<'s> {
    /// An empty tree checked against `schema`.
    pub fn new(schema: &'s Schema) -> Tree<'s> {
        Tree {
            schema,
            out: Vec::new(),
        }
    }

    /// Adds an object below an entry added earlier.
    pub fn add(&mut self, obj: Obj) -> Result<(), ProvisionError> {
        self.add_object(obj, false)
    }

    /// Adds an object that heads a naming context.
    pub fn add_head(&mut self, obj: Obj) -> Result<(), ProvisionError> {
        self.add_object(obj, true)
    }

    /// Gives the object `objectClass` (its class and every superclass, `top`
    /// first) and its naming attribute, then adds it.
    fn add_object(&mut self, obj: Obj, naming_context: bool) -> Result<(), ProvisionError> {
        let chain = self.schema.superclass_chain(&obj.class);
        if chain.is_empty() {
            return Err(ProvisionError::UnknownClass(obj.class));
        }
        let classes = chain.iter().rev().map(|c| c.ldap_name.as_bytes().to_vec());
        let mut entry = Entry::new(obj.dn);
        entry.push("objectClass", classes.collect());
        let rdn: Vec<(String, Vec<u8>)> = entry
            .dn
            .rdn()
            .map(|r| r.avas())
            .unwrap_or_default()
            .iter()
            .map(|ava| {
                let name = self
                    .schema
                    .attribute(&ava.attr)
                    .map_or(ava.attr.as_str(), |a| a.ldap_name.as_str());
                (name.to_string(), ava.value.as_bytes().to_vec())
            })
            .collect();
        for (attr, value) in rdn {
            entry.push(&attr, vec![value]);
        }
        for (attr, values) in obj.attrs {
            entry.push(&attr, values);
        }
        self.push(entry, naming_context)
    }

    /// Adds a finished entry after checking that the schema defines each of
    /// its attributes.
    pub fn push(&mut self, entry: Entry, naming_context: bool) -> Result<(), ProvisionError> {
        if let Some((attr, _)) = entry
            .attrs
            .iter()
            .find(|(a, _)| self.schema.attribute(a).is_none())
        {
            return Err(ProvisionError::UnknownAttribute {
                dn: entry.dn.to_string(),
                attr: attr.clone(),
            });
        }
        self.out.push(ProvisionEntry {
            entry,
            naming_context,
        });
        Ok(())
    }

    /// The entries in the order they were added.
    pub fn finish(self) -> Vec<ProvisionEntry> {
        self.out
    }
}
