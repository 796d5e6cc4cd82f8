//! Owned entries and modifications: what callers hand to the write operations.

use crate::dn::Dn;

/// An entry to add: its DN and its attributes with raw values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Where the entry goes.
    pub dn: Dn,
    /// Attribute descriptions with their values, in the caller's order.
    pub attrs: Vec<(String, Vec<Vec<u8>>)>,
}

impl Entry {
    /// An entry with no attributes yet.
    pub fn new(dn: Dn) -> Entry {
        Entry {
            dn,
            attrs: Vec::new(),
        }
    }

    /// Adds values to an attribute (builder style).
    pub fn with(mut self, attr: &str, values: &[&str]) -> Entry {
        self.push(attr, values.iter().map(|v| v.as_bytes().to_vec()).collect());
        self
    }

    /// Adds values to an attribute, merging with values already given for it.
    pub fn push(&mut self, attr: &str, values: Vec<Vec<u8>>) {
        if let Some((_, vals)) = self
            .attrs
            .iter_mut()
            .find(|(a, _)| a.eq_ignore_ascii_case(attr))
        {
            vals.extend(values);
        } else {
            self.attrs.push((attr.to_string(), values));
        }
    }

    /// The values of an attribute, if present.
    pub fn get(&self, attr: &str) -> Option<&[Vec<u8>]> {
        self.attrs
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(attr))
            .map(|(_, v)| v.as_slice())
    }
}

/// The kind of one modification (RFC 4511 section 4.6, and RFC 4525 increment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModifyOp {
    /// Add values; adding a value that exists is an error.
    Add,
    /// Delete the given values (all of them when none are given); deleting an absent value
    /// is an error.
    Delete,
    /// Replace all values (no values: remove the attribute, absent or not).
    Replace,
    /// Add the given integer to the single integer value.
    Increment,
}

/// One modification of one attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modification {
    /// What to do.
    pub op: ModifyOp,
    /// The attribute description.
    pub attr: String,
    /// The values involved.
    pub values: Vec<Vec<u8>>,
}

impl Modification {
    /// A modification built from string values.
    pub fn new(op: ModifyOp, attr: &str, values: &[&str]) -> Modification {
        Modification {
            op,
            attr: attr.to_string(),
            values: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
        }
    }
}
