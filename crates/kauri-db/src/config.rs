//! What the caller tells the database about its data: the syntax of each attribute, which
//! attributes are indexed and how, the USN attributes, and a few limits.

use crate::quick_hash::QuickMap;

use crate::syntax::Syntax;

/// Bit flags describing the indexes kept for one attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IndexFlags(u8);

impl IndexFlags {
    /// No index.
    pub const NONE: IndexFlags = IndexFlags(0);
    /// Equality (and approximate) matches look up the value.
    pub const EQUALITY: IndexFlags = IndexFlags(1);
    /// Presence (`(attr=*)`) matches read a list of holders.
    pub const PRESENCE: IndexFlags = IndexFlags(2);
    /// Substring filters with an initial part (`(attr=abc*)`) scan a prefix.
    pub const SUBSTRING_INITIAL: IndexFlags = IndexFlags(4);
    /// `>=` and `<=` filters scan a range (integers and times are stored in order).
    pub const ORDERED: IndexFlags = IndexFlags(8);
    /// At most one record may hold a given value (checked on every write).
    pub const UNIQUE: IndexFlags = IndexFlags(16);

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: IndexFlags) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// Whether value keys (shared by equality, substring-initial, ordering and
    /// uniqueness) are written for this attribute.
    pub fn has_value_keys(self) -> bool {
        self.0 & (Self::EQUALITY.0 | Self::SUBSTRING_INITIAL.0 | Self::ORDERED.0 | Self::UNIQUE.0)
            != 0
    }

    /// The raw bits, for fingerprints.
    pub fn bits(self) -> u8 {
        self.0
    }
}

impl std::ops::BitOr for IndexFlags {
    type Output = IndexFlags;
    fn bitor(self, rhs: IndexFlags) -> IndexFlags {
        IndexFlags(self.0 | rhs.0)
    }
}

/// Attribute name → syntax, case-insensitively, with a default for names not listed.
#[derive(Debug, Clone)]
pub struct SchemaMap {
    syntaxes: QuickMap<String, Syntax>,
    default: Syntax,
}

impl Default for SchemaMap {
    fn default() -> Self {
        SchemaMap {
            syntaxes: QuickMap::default(),
            default: Syntax::DirectoryString,
        }
    }
}

impl SchemaMap {
    /// A map whose unlisted attributes get `default`.
    pub fn with_default(default: Syntax) -> SchemaMap {
        SchemaMap {
            syntaxes: QuickMap::default(),
            default,
        }
    }

    /// Declares the syntax of an attribute.
    pub fn set(&mut self, attr: &str, syntax: Syntax) -> &mut Self {
        self.syntaxes.insert(attr.to_ascii_lowercase(), syntax);
        self
    }

    /// The syntax of an attribute (by lowercased name).
    pub fn syntax_of_lower(&self, lower: &str) -> Syntax {
        self.syntaxes.get(lower).copied().unwrap_or(self.default)
    }

    /// The syntax of an attribute.
    pub fn syntax_of(&self, attr: &str) -> Syntax {
        crate::ascii::with_lower(attr, |l| self.syntax_of_lower(l))
    }

    /// A stable fingerprint of every declared syntax and the default. Stored normalized
    /// values depend on it, so a change makes the database normalize its records again.
    pub fn fingerprint(&self) -> Vec<u8> {
        let mut names: Vec<(&String, &Syntax)> = self.syntaxes.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        // v2: integers and times normalize to 1 to 9 bytes instead of 8.
        let mut out = format!("v2;default={};", self.default.name()).into_bytes();
        for (n, s) in names {
            out.extend_from_slice(format!("{n}:{};", s.name()).as_bytes());
        }
        out
    }
}

/// Everything the database needs from its caller.
#[derive(Debug, Clone)]
pub struct DbConfig {
    /// Attribute syntaxes.
    pub schema: SchemaMap,
    /// Indexes by lowercased attribute name.
    pub indexes: QuickMap<String, IndexFlags>,
    /// Names of the attributes that carry the creating and the last changing USN, or `None`
    /// to not write them into records.
    pub usn_attributes: Option<(String, String)>,
    /// The longest index/tree key written. Equals the backend's limit in production; tests
    /// shrink it so the truncation and hashing paths run on ordinary data.
    pub max_index_key_len: usize,
    /// How many unindexed searches to warn about in the log before going quiet
    /// (the counter keeps counting).
    pub unindexed_warn_limit: u64,
    /// Memory budget of the sort buffer used by re-index and bulk load, in bytes.
    pub sort_budget: usize,
    /// Linked attributes by lowercased name (both directions of each pair); their values
    /// live in the `links` table, not in records.
    pub links: QuickMap<String, LinkRole>,
    /// Lowercased names under which an entry's own DN can be asserted in filters (AD's
    /// `distinguishedName`): computed from the hierarchy, never stored, so renames keep
    /// them right for free.
    pub dn_attributes: Vec<String>,
    /// The most values one entry may hold, all attributes together, links not counted
    /// (0 for no limit). Every change rewrites its entry's record, so this bounds what any
    /// change costs the single writer. AD's own limit, from its database's record size, is
    /// about 1,200 to 3,900 values, also links not counted.
    pub max_entry_values: usize,
    /// The most values of one linked attribute one operation may add, delete or replace
    /// (0 for no limit): a group of any size is built in steps of this many members, and
    /// no single step holds the writer for long.
    pub max_link_changes: usize,
    /// The attribute whose values are stored once each in the `descriptors` table and
    /// referred to by id from records (AD's `nTSecurityDescriptor`), if any.
    pub descriptor_attribute: Option<String>,
}

/// [`DbConfig::max_entry_values`]'s default.
pub const MAX_ENTRY_VALUES: usize = 5_000;

/// [`DbConfig::max_link_changes`]'s default.
pub const MAX_LINK_CHANGES: usize = 5_000;

/// The part an attribute plays in a linked pair (AD's linkID pairs: `member` is the
/// forward link, `memberOf` its back link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkRole {
    /// Written by clients; DN values naming existing entries. Carries the back link's
    /// name, if the pair has one.
    Forward {
        /// The back link attribute.
        back: Option<String>,
        /// A DN-valued attribute that AD does not pair as a link (`fSMORoleOwner`,
        /// `nCName`, `lastKnownParent`): stored as a link so that it follows its target's
        /// renames, and kept when the target becomes a tombstone (naming the tombstone
        /// from then on), where a real link goes away with its target.
        reference: bool,
    },
    /// Computed from the forward links that point at the entry; never written.
    Back {
        /// The forward link attribute.
        forward: String,
    },
}

impl Default for DbConfig {
    fn default() -> Self {
        let mut schema = SchemaMap::default();
        schema.set("uSNCreated", Syntax::Integer);
        schema.set("uSNChanged", Syntax::Integer);
        let mut indexes = QuickMap::default();
        indexes.insert(
            "objectclass".to_string(),
            IndexFlags::EQUALITY | IndexFlags::PRESENCE,
        );
        indexes.insert(
            "usnchanged".to_string(),
            IndexFlags::ORDERED | IndexFlags::EQUALITY,
        );
        DbConfig {
            schema,
            indexes,
            usn_attributes: Some(("uSNCreated".to_string(), "uSNChanged".to_string())),
            max_index_key_len: kauri_kv::MAX_KEY_LEN,
            unindexed_warn_limit: 100,
            sort_budget: 256 << 20,
            links: QuickMap::default(),
            dn_attributes: Vec::new(),
            max_entry_values: MAX_ENTRY_VALUES,
            max_link_changes: MAX_LINK_CHANGES,
            descriptor_attribute: None,
        }
    }
}

impl DbConfig {
    /// Declares indexes on an attribute (added to any already declared).
    pub fn index(&mut self, attr: &str, flags: IndexFlags) -> &mut Self {
        let e = self
            .indexes
            .entry(attr.to_ascii_lowercase())
            .or_insert(IndexFlags::NONE);
        *e = *e | flags;
        self
    }

    /// Declares a linked pair: `forward` holds DNs of other entries, `back` (if any) shows
    /// on those entries the entries that point at them.
    pub fn link(&mut self, forward: &str, back: Option<&str>) -> &mut Self {
        self.schema.set(forward, Syntax::Dn);
        self.links.insert(
            forward.to_ascii_lowercase(),
            LinkRole::Forward {
                back: back.map(str::to_string),
                reference: false,
            },
        );
        if let Some(b) = back {
            self.schema.set(b, Syntax::Dn);
            self.links.insert(
                b.to_ascii_lowercase(),
                LinkRole::Back {
                    forward: forward.to_string(),
                },
            );
        }
        self
    }

    /// Declares a DN-valued attribute stored as a one-way reference (see
    /// [`LinkRole::Forward`]'s `reference`).
    pub fn reference(&mut self, attr: &str) -> &mut Self {
        self.schema.set(attr, Syntax::Dn);
        self.links.insert(
            attr.to_ascii_lowercase(),
            LinkRole::Forward {
                back: None,
                reference: true,
            },
        );
        self
    }

    /// The link role of an attribute (by lowercased name).
    pub fn link_of_lower(&self, lower: &str) -> Option<&LinkRole> {
        self.links.get(lower)
    }

    /// The link role of an attribute, by its name in any case.
    pub fn link_of(&self, name: &str) -> Option<&LinkRole> {
        crate::ascii::with_lower(name, |l| self.links.get(l))
    }

    /// Index flags of an attribute (by lowercased name).
    pub fn index_of_lower(&self, lower: &str) -> IndexFlags {
        self.indexes.get(lower).copied().unwrap_or(IndexFlags::NONE)
    }

    /// A stable fingerprint of what decides the content of the indexes: flags, the syntax
    /// of each indexed attribute and the key limit. Stored in `meta`, so that a database
    /// opened with other indexes re-indexes itself (syntax changes are caught by
    /// [`SchemaMap::fingerprint`], which renormalizes the records first).
    pub fn index_fingerprint(&self) -> Vec<u8> {
        let mut names: Vec<&String> = self.indexes.keys().collect();
        names.sort();
        let mut out = format!("v1;key={};", self.max_index_key_len).into_bytes();
        // Links carry presence keys in the index; their set decides those keys.
        let mut links: Vec<&String> = self.links.keys().collect();
        links.sort();
        for l in links {
            let kind = match self.links.get(l) {
                Some(LinkRole::Forward {
                    reference: true, ..
                }) => "ref",
                _ => "link",
            };
            out.extend_from_slice(format!("{kind}:{l};").as_bytes());
        }
        for n in names {
            let flags = self.index_of_lower(n);
            if flags == IndexFlags::NONE {
                continue;
            }
            let syn = self.schema.syntax_of_lower(n);
            out.extend_from_slice(format!("{n}:{}:{};", flags.bits(), syn.name()).as_bytes());
        }
        out
    }
}
