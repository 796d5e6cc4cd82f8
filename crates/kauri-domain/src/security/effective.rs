//! Effective rights: everything a security descriptor grants one principal on one
//! object, at each level an administrator asks about — the object as a whole, each
//! property set, each attribute, each control access right and validated write. What
//! `kauri dsacl show --effective-for` prints, and what the server's own answers to
//! "what may this caller do here" can be checked against.
//!
//! One [`AccessCheck::evaluate`] runs over an object type list built from a
//! [`Catalog`]: the object's structural class at level 0, each property set at level 1
//! with its attributes at level 2, attributes outside any set and the extended rights
//! at level 1 (MS-ADTS 5.1.3.3; see [`super::check`] for the rules, among them that
//! grants flow down the tree and never up). Nothing here reads the directory: the caller
//! builds the [`Token`] and the [`Catalog`] (from the schema, [`Catalog::from_schema`],
//! or from `attributeSchema` entries read over LDAP).
//!
//! Not covered, as in [`super::check`]: privileges (an administrator's
//! SeSecurityPrivilege or SeTakeOwnershipPrivilege), list-object mode, confidential
//! attributes, and whatever built-in policy the server applies on top of the descriptor.

use crate::schema::builtin::parse_guid;
use crate::schema::Schema;

use super::check::{AccessCheck, ObjectTypeList};
use super::descriptor::{Guid, SecurityDescriptor};
use super::rights::*;
use super::token::Token;

/// How an extended right is exercised: which access bit an ACE naming it must grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RightKind {
    /// A control access right (validAccesses 256): granted by CR.
    ControlAccess,
    /// A validated write (validAccesses 8): granted by SW.
    ValidatedWrite,
}

impl RightKind {
    /// The access bit that grants it.
    pub fn mask(self) -> u32 {
        match self {
            RightKind::ControlAccess => RIGHT_DS_CONTROL_ACCESS,
            RightKind::ValidatedWrite => RIGHT_DS_SELF,
        }
    }

    /// A short word for people and JSON.
    pub fn word(self) -> &'static str {
        match self {
            RightKind::ControlAccess => "control access",
            RightKind::ValidatedWrite => "validated write",
        }
    }
}

/// The extended rights an administrator most often grants or checks, by their
/// `CN=Extended-Rights` name and `rightsGuid` (MS-ADTS 5.1.3.2.1 and Samba's
/// `extended-rights.ldif`). Kauri provisions no `controlAccessRight` objects, so tools
/// name these from this table.
pub const EXTENDED_RIGHTS: &[(&str, &str, RightKind)] = &[
    (
        "User-Change-Password",
        "ab721a53-1e2f-11d0-9819-00aa0040529b",
        RightKind::ControlAccess,
    ),
    (
        "User-Force-Change-Password",
        "00299570-246d-11d0-a768-00aa006e0529",
        RightKind::ControlAccess,
    ),
    (
        "Validated-SPN",
        "f3a64788-5306-11d1-a9c5-0000f80367c1",
        RightKind::ValidatedWrite,
    ),
    (
        "Validated-DNS-Host-Name",
        "72e39547-7b18-11d1-adef-00c04fd8d5cd",
        RightKind::ValidatedWrite,
    ),
    (
        "Self-Membership",
        "bf9679c0-0de6-11d0-a285-00aa003049e2",
        RightKind::ValidatedWrite,
    ),
    (
        "Send-As",
        "ab721a54-1e2f-11d0-9819-00aa0040529b",
        RightKind::ControlAccess,
    ),
    (
        "Receive-As",
        "ab721a56-1e2f-11d0-9819-00aa0040529b",
        RightKind::ControlAccess,
    ),
    (
        "DS-Replication-Get-Changes",
        "1131f6aa-9c07-11d1-f79f-00c04fc2dcd2",
        RightKind::ControlAccess,
    ),
    (
        "DS-Replication-Get-Changes-All",
        "1131f6ad-9c07-11d1-f79f-00c04fc2dcd2",
        RightKind::ControlAccess,
    ),
    (
        "Reanimate-Tombstones",
        "45ec5156-db7e-47bb-b53f-dbeb2d03c40f",
        RightKind::ControlAccess,
    ),
    (
        "Unexpire-Password",
        "ccc2dc7d-a6ad-4a7a-8846-c04e3cc53501",
        RightKind::ControlAccess,
    ),
    (
        "Enable-Per-User-Reversibly-Encrypted-Password",
        "05c74c5e-4deb-43b4-bd9f-86664c2a7fd5",
        RightKind::ControlAccess,
    ),
];

/// The property sets of AD's schema (the `controlAccessRight` objects with
/// validAccesses 48, from Samba's `extended-rights.ldif`): the `attributeSecurityGUID`
/// values attributes carry and the object types ACEs grant RP/WP on.
pub const PROPERTY_SETS: &[(&str, &str)] = &[
    (
        "DNS-Host-Name-Attributes",
        "72e39547-7b18-11d1-adef-00c04fd8d5cd",
    ),
    (
        "Domain-Other-Parameters",
        "b8119fd0-04f6-4762-ab7a-4986c76b3f9a",
    ),
    ("Domain-Password", "c7407360-20bf-11d0-a768-00aa006e0529"),
    ("Email-Information", "e45795b2-9455-11d1-aebd-0000f80367c1"),
    (
        "General-Information",
        "59ba2f42-79a2-11d0-9020-00c04fc2d3cf",
    ),
    (
        "MS-TS-GatewayAccess",
        "ffa6f046-ca4b-4feb-b40d-04dfee722543",
    ),
    ("Membership", "bc0ac240-79a9-11d0-9020-00c04fc2d4cf"),
    (
        "Personal-Information",
        "77b5b886-944a-11d1-aebd-0000f80367c1",
    ),
    (
        "Private-Information",
        "91e647de-d96f-4b70-9557-d63ff4f3ccd8",
    ),
    ("Public-Information", "e48d0154-bcf8-11d1-8702-00c04fb96050"),
    ("RAS-Information", "037088f8-0ae1-11d2-b422-00a0c968f939"),
    (
        "Terminal-Server-License-Server",
        "5805bc62-bdc9-4428-a5e2-856a0f4c185e",
    ),
    (
        "User-Account-Restrictions",
        "4c164200-20c0-11d0-a768-00aa006e0529",
    ),
    ("User-Logon", "5f202010-79a5-11d0-9020-00c04fc2d4cf"),
    ("Web-Information", "e45795b3-9455-11d1-aebd-0000f80367c1"),
];

/// The rights an ACE can grant on a directory object, in SDDL's printing order: the
/// bit, its SDDL letters and what it means in words.
pub const DS_RIGHTS: &[(u32, &str, &str)] = &[
    (RIGHT_DS_CREATE_CHILD, "CC", "create child"),
    (RIGHT_DS_DELETE_CHILD, "DC", "delete child"),
    (RIGHT_DS_LIST_CONTENTS, "LC", "list contents"),
    (RIGHT_DS_SELF, "SW", "validated write"),
    (RIGHT_DS_READ_PROPERTY, "RP", "read property"),
    (RIGHT_DS_WRITE_PROPERTY, "WP", "write property"),
    (RIGHT_DS_DELETE_TREE, "DT", "delete tree"),
    (RIGHT_DS_LIST_OBJECT, "LO", "list object"),
    (RIGHT_DS_CONTROL_ACCESS, "CR", "control access"),
    (RIGHT_DELETE, "SD", "delete"),
    (RIGHT_READ_CONTROL, "RC", "read permissions"),
    (RIGHT_WRITE_DAC, "WD", "write permissions"),
    (RIGHT_WRITE_OWNER, "WO", "take ownership"),
];

/// Bits an ACE mask may carry besides [`DS_RIGHTS`], with their words.
const OTHER_RIGHTS: &[(u32, &str, &str)] = &[
    (RIGHT_SYNCHRONIZE, "", "synchronize"),
    (ACCESS_SYSTEM_SECURITY, "", "access SACL"),
    (MAXIMUM_ALLOWED, "", "maximum allowed"),
    (GENERIC_ALL, "GA", "generic all"),
    (GENERIC_EXECUTE, "GX", "generic execute"),
    (GENERIC_WRITE, "GW", "generic write"),
    (GENERIC_READ, "GR", "generic read"),
];

/// The SDDL letters of each directory right in `mask` ([`DS_RIGHTS`] order).
pub fn right_codes(mask: u32) -> Vec<&'static str> {
    DS_RIGHTS
        .iter()
        .filter(|(b, _, _)| mask & b != 0)
        .map(|(_, c, _)| *c)
        .collect()
}

/// The words for each right in an ACE mask: directory rights, then the generic and
/// other standard bits; bits nothing names come last as one hex value.
pub fn right_words(mask: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = mask;
    for (bit, _, word) in DS_RIGHTS.iter().chain(OTHER_RIGHTS) {
        if mask & bit != 0 {
            out.push((*word).to_string());
            rest &= !bit;
        }
    }
    if rest != 0 {
        out.push(format!("{rest:#x}"));
    }
    out
}

/// An attribute as the check sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeInfo {
    /// Its `lDAPDisplayName`.
    pub name: String,
    /// Its `schemaIDGUID`.
    pub guid: Guid,
    /// Its `attributeSecurityGUID`: the property set it belongs to.
    pub property_set: Option<Guid>,
}

/// A property set or extended right: a name for a GUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedGuid {
    /// The right's `CN` (`Personal-Information`, `User-Change-Password`, …).
    pub name: String,
    /// Its `rightsGuid`.
    pub guid: Guid,
}

/// An extended right and how it is exercised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtendedRight {
    /// Its name and GUID.
    pub right: NamedGuid,
    /// Control access right or validated write.
    pub kind: RightKind,
}

/// What effective rights are computed over: the schema's attributes, its property sets
/// and the extended rights to report on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// Attributes, in the order results list them.
    pub attributes: Vec<AttributeInfo>,
    /// Property sets, in the order results list them.
    pub property_sets: Vec<NamedGuid>,
    /// Extended rights, in the order results list them.
    pub extended_rights: Vec<ExtendedRight>,
}

impl Catalog {
    /// The property sets of [`PROPERTY_SETS`] and the extended rights of
    /// [`EXTENDED_RIGHTS`], without attributes.
    pub fn well_known() -> Catalog {
        let named = |name: &str, guid: &str| {
            parse_guid(guid).map(|guid| NamedGuid {
                name: name.to_string(),
                guid,
            })
        };
        Catalog {
            attributes: Vec::new(),
            property_sets: PROPERTY_SETS
                .iter()
                .filter_map(|(n, g)| named(n, g))
                .collect(),
            extended_rights: EXTENDED_RIGHTS
                .iter()
                .filter_map(|(n, g, kind)| {
                    named(n, g).map(|right| ExtendedRight { right, kind: *kind })
                })
                .collect(),
        }
    }

    /// [`Catalog::well_known`] with every attribute of `schema` that has a
    /// `schemaIDGUID`.
    pub fn from_schema(schema: &Schema) -> Catalog {
        Catalog::well_known().with_attributes(schema.attributes().filter_map(|a| {
            a.schema_id_guid.map(|guid| AttributeInfo {
                name: a.ldap_name.clone(),
                guid,
                property_set: a.attribute_security_guid,
            })
        }))
    }

    /// The catalog with these attributes added.
    pub fn with_attributes(mut self, attrs: impl IntoIterator<Item = AttributeInfo>) -> Catalog {
        self.attributes.extend(attrs);
        self
    }

    /// The name of a property set or extended right with this GUID (property sets
    /// first: `DNS-Host-Name-Attributes` and `Validated-DNS-Host-Name` share one).
    pub fn right_name(&self, guid: &Guid) -> Option<&str> {
        self.property_sets
            .iter()
            .find(|s| s.guid == *guid)
            .or_else(|| {
                self.extended_rights
                    .iter()
                    .map(|r| &r.right)
                    .find(|r| r.guid == *guid)
            })
            .map(|n| n.name.as_str())
    }
}

/// Read and write access to a property set or an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadWrite {
    /// RP granted.
    pub read: bool,
    /// WP granted.
    pub write: bool,
}

impl ReadWrite {
    /// From a granted mask.
    fn of(mask: u32) -> ReadWrite {
        ReadWrite {
            read: mask & RIGHT_DS_READ_PROPERTY != 0,
            write: mask & RIGHT_DS_WRITE_PROPERTY != 0,
        }
    }
}

/// One property set's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRights {
    /// The set's name and GUID.
    pub set: NamedGuid,
    /// What is granted on it (and so on every attribute in it an ACE does not name).
    pub access: ReadWrite,
}

/// One attribute's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeRights {
    /// The attribute's name.
    pub name: String,
    /// Its `schemaIDGUID`.
    pub guid: Guid,
    /// The property set it belongs to (its name, or its GUID's text when the catalog
    /// does not name it).
    pub property_set: Option<String>,
    /// What is granted on it.
    pub access: ReadWrite,
}

/// One extended right's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RightResult {
    /// The right.
    pub right: ExtendedRight,
    /// Whether it is granted.
    pub granted: bool,
}

/// What a descriptor grants one principal on one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveRights {
    /// The directory rights granted on the object as a whole ([`DS_RIGHTS`] bits; RP
    /// and WP here hold for every attribute, CR for every control access right, SW for
    /// every validated write).
    pub object: u32,
    /// Every property set of the catalog.
    pub property_sets: Vec<SetRights>,
    /// Only the attributes whose access differs from their property set's (or, outside
    /// any set, from the object's RP/WP): the ones ACEs name.
    pub attributes: Vec<AttributeRights>,
    /// Every extended right of the catalog.
    pub extended_rights: Vec<RightResult>,
}

impl EffectiveRights {
    /// Whether the extended right named `name` is granted (`None`: not in the catalog).
    pub fn right(&self, name: &str) -> Option<bool> {
        self.extended_rights
            .iter()
            .find(|r| r.right.right.name.eq_ignore_ascii_case(name))
            .map(|r| r.granted)
    }

    /// The access to the property set named `name` (`None`: not in the catalog).
    pub fn property_set(&self, name: &str) -> Option<ReadWrite> {
        self.property_sets
            .iter()
            .find(|s| s.set.name.eq_ignore_ascii_case(name))
            .map(|s| s.access)
    }
}

/// A property set's place in the object type list.
struct SetNode {
    /// Its name (or its GUID's text).
    name: String,
    /// Its GUID.
    guid: Guid,
    /// Its node.
    node: usize,
    /// Its attributes: (index in the catalog, node).
    members: Vec<(usize, usize)>,
}

/// What `sd` grants `token` on an object of structural class `class` (its
/// `schemaIDGUID`). `is_self`: the principal is the object itself, so ACEs for
/// PRINCIPAL SELF (S-1-5-10) apply to it.
pub fn effective_rights(
    sd: &SecurityDescriptor,
    token: &Token,
    class: &Guid,
    is_self: bool,
    catalog: &Catalog,
) -> EffectiveRights {
    let mut list = ObjectTypeList::new(*class);

    // Property sets with their attributes; sets that attributes name but the catalog
    // does not get a node of their own too, named by their GUID.
    let mut sets: Vec<(String, Guid)> = catalog
        .property_sets
        .iter()
        .map(|s| (s.name.clone(), s.guid))
        .collect();
    for a in &catalog.attributes {
        if let Some(g) = a.property_set {
            if !sets.iter().any(|(_, s)| *s == g) {
                sets.push((crate::schema::builtin::format_guid(&g), g));
            }
        }
    }
    let mut set_nodes: Vec<SetNode> = Vec::new();
    for (name, guid) in &sets {
        let members: Vec<usize> = catalog
            .attributes
            .iter()
            .enumerate()
            .filter(|(_, a)| a.property_set == Some(*guid))
            .map(|(i, _)| i)
            .collect();
        let guids: Vec<Guid> = members
            .iter()
            .filter_map(|&i| catalog.attributes.get(i).map(|a| a.guid))
            .collect();
        let at = list.add_property_set(*guid, &guids);
        let nodes = members
            .into_iter()
            .enumerate()
            .map(|(k, i)| (i, at + 1 + k))
            .collect();
        set_nodes.push(SetNode {
            name: name.clone(),
            guid: *guid,
            node: at,
            members: nodes,
        });
    }
    let loose: Vec<(usize, usize)> = catalog
        .attributes
        .iter()
        .enumerate()
        .filter(|(_, a)| a.property_set.is_none())
        .map(|(i, a)| (i, list.add(a.guid)))
        .collect();
    let right_nodes: Vec<usize> = catalog
        .extended_rights
        .iter()
        .map(|r| list.add(r.right.guid))
        .collect();

    let check = AccessCheck::new(token).with_self(is_self.then(|| token.user()));
    let access = check.evaluate(sd, MAXIMUM_ALLOWED, &list);
    let granted = access.granted_list();
    let at = |i: usize| granted.get(i).copied().unwrap_or(0);

    let object = access.granted() & DS_ALL_RIGHTS;
    let object_rw = ReadWrite::of(object);
    let mut attributes = Vec::new();
    let mut property_sets = Vec::new();
    for SetNode {
        name,
        guid,
        node,
        members,
    } in &set_nodes
    {
        let set_rw = ReadWrite::of(at(*node));
        for (i, n) in members {
            let rw = ReadWrite::of(at(*n));
            if rw != set_rw {
                if let Some(a) = catalog.attributes.get(*i) {
                    attributes.push(AttributeRights {
                        name: a.name.clone(),
                        guid: a.guid,
                        property_set: Some(name.clone()),
                        access: rw,
                    });
                }
            }
        }
        if catalog.property_sets.iter().any(|s| s.guid == *guid) {
            property_sets.push(SetRights {
                set: NamedGuid {
                    name: name.clone(),
                    guid: *guid,
                },
                access: set_rw,
            });
        }
    }
    for (i, n) in &loose {
        let rw = ReadWrite::of(at(*n));
        if rw != object_rw {
            if let Some(a) = catalog.attributes.get(*i) {
                attributes.push(AttributeRights {
                    name: a.name.clone(),
                    guid: a.guid,
                    property_set: None,
                    access: rw,
                });
            }
        }
    }
    attributes.sort_by_key(|a| a.name.to_ascii_lowercase());
    let extended_rights = catalog
        .extended_rights
        .iter()
        .zip(&right_nodes)
        .map(|(r, n)| RightResult {
            right: r.clone(),
            granted: at(*n) & r.kind.mask() != 0,
        })
        .collect();
    EffectiveRights {
        object,
        property_sets,
        attributes,
        extended_rights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::sddl;
    use crate::security::token::well_known;
    use crate::sid::Sid;

    const USER_CLASS: &str = "bf967aba-0de6-11d0-a285-00aa003049e2";
    const TELEPHONE: &str = "bf967a49-0de6-11d0-a285-00aa003049e2";
    const STREET: &str = "f0f8ff84-1191-11d0-a060-00aa006c33ed";
    const DESCRIPTION: &str = "bf967950-0de6-11d0-a285-00aa003049e2";
    const PERSONAL: &str = "77b5b886-944a-11d1-aebd-0000f80367c1";

    fn dom() -> Sid {
        Sid::parse("S-1-5-21-1-2-3").unwrap()
    }

    fn g(text: &str) -> Guid {
        parse_guid(text).unwrap()
    }

    fn sd(text: &str) -> SecurityDescriptor {
        sddl::parse(text, &dom()).unwrap()
    }

    fn catalog() -> Catalog {
        Catalog::well_known().with_attributes([
            AttributeInfo {
                name: "telephoneNumber".into(),
                guid: g(TELEPHONE),
                property_set: Some(g(PERSONAL)),
            },
            AttributeInfo {
                name: "streetAddress".into(),
                guid: g(STREET),
                property_set: Some(g(PERSONAL)),
            },
            AttributeInfo {
                name: "description".into(),
                guid: g(DESCRIPTION),
                property_set: None,
            },
        ])
    }

    fn token(rid: u32, groups: &[u32]) -> Token {
        Token::new(
            dom().with_rid(rid),
            groups
                .iter()
                .map(|r| dom().with_rid(*r))
                .chain([well_known::world(), well_known::authenticated_users()]),
        )
    }

    #[test]
    fn tables_parse() {
        let c = Catalog::well_known();
        assert_eq!(c.property_sets.len(), PROPERTY_SETS.len());
        assert_eq!(c.extended_rights.len(), EXTENDED_RIGHTS.len());
        assert_eq!(c.right_name(&g(PERSONAL)), Some("Personal-Information"));
        assert_eq!(
            c.right_name(&g("00299570-246d-11d0-a768-00aa006e0529")),
            Some("User-Force-Change-Password")
        );
    }

    #[test]
    fn helpdesk_may_reset_but_not_change_passwords() {
        let helpdesk = dom().with_rid(1200);
        let text = format!(
            "O:DAG:DAD:(OA;;CR;00299570-246d-11d0-a768-00aa006e0529;;{helpdesk})(A;;RPLCLORC;;;AU)"
        );
        let t = token(1105, &[513, 1200]);
        let r = effective_rights(&sd(&text), &t, &g(USER_CLASS), false, &catalog());
        assert_eq!(r.right("User-Force-Change-Password"), Some(true));
        assert_eq!(r.right("User-Change-Password"), Some(false));
        assert_eq!(
            right_codes(r.object),
            ["LC", "RP", "LO", "RC"],
            "object-level rights"
        );
        // Someone outside the group gets neither.
        let other = token(1106, &[513]);
        let r = effective_rights(&sd(&text), &other, &g(USER_CLASS), false, &catalog());
        assert_eq!(r.right("User-Force-Change-Password"), Some(false));
    }

    #[test]
    fn principal_self_counts_only_on_the_own_object() {
        let text = format!("O:DAG:DAD:(OA;;RPWP;{PERSONAL};;PS)(A;;RC;;;AU)");
        let t = token(1105, &[513]);
        let own = effective_rights(&sd(&text), &t, &g(USER_CLASS), true, &catalog());
        assert_eq!(
            own.property_set("Personal-Information"),
            Some(ReadWrite {
                read: true,
                write: true
            })
        );
        // Every attribute of the set follows it: none is listed on its own.
        assert!(own.attributes.is_empty(), "{:?}", own.attributes);
        let other = effective_rights(&sd(&text), &t, &g(USER_CLASS), false, &catalog());
        assert_eq!(
            other.property_set("Personal-Information"),
            Some(ReadWrite::default())
        );
    }

    #[test]
    fn a_deny_before_an_allow_wins() {
        let text = format!("D:(OD;;WP;{TELEPHONE};;AU)(A;;RPWP;;;AU)");
        let t = token(1105, &[513]);
        let r = effective_rights(&sd(&text), &t, &g(USER_CLASS), false, &catalog());
        assert_eq!(right_codes(r.object), ["RP", "WP"]);
        assert_eq!(
            r.property_set("Personal-Information"),
            Some(ReadWrite {
                read: true,
                write: true
            })
        );
        assert_eq!(r.attributes.len(), 1);
        let phone = &r.attributes[0];
        assert_eq!(phone.name, "telephoneNumber");
        assert_eq!(phone.property_set.as_deref(), Some("Personal-Information"));
        assert_eq!(
            phone.access,
            ReadWrite {
                read: true,
                write: false
            }
        );
        // The same ACEs the other way round: the allow comes first and wins.
        let text = format!("D:(A;;RPWP;;;AU)(OD;;WP;{TELEPHONE};;AU)");
        let r = effective_rights(&sd(&text), &t, &g(USER_CLASS), false, &catalog());
        assert!(r.attributes.is_empty());
    }

    #[test]
    fn attributes_outside_sets_compare_with_the_object() {
        let text = format!("D:(OA;;WP;{DESCRIPTION};;AU)(A;;RP;;;AU)");
        let t = token(1105, &[513]);
        let r = effective_rights(&sd(&text), &t, &g(USER_CLASS), false, &catalog());
        assert_eq!(r.attributes.len(), 1);
        assert_eq!(r.attributes[0].name, "description");
        assert_eq!(r.attributes[0].property_set, None);
        assert!(r.attributes[0].access.write);
    }

    #[test]
    fn full_control_grants_every_right_and_owner_gets_its_implicit_ones() {
        let t = token(500, &[512, 513]);
        let r = effective_rights(
            &sd("O:DAG:DAD:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)"),
            &t,
            &g(USER_CLASS),
            false,
            &catalog(),
        );
        assert_eq!(r.object, DS_ALL_RIGHTS);
        assert!(r.extended_rights.iter().all(|x| x.granted));
        // The owner reads and rewrites the DACL whatever the ACEs say.
        let owner = token(1105, &[513]);
        let text = format!("O:{}D:(D;;RCWD;;;AU)", dom().with_rid(1105));
        let r = effective_rights(&sd(&text), &owner, &g(USER_CLASS), false, &catalog());
        assert_eq!(right_codes(r.object), ["RC", "WD"]);
    }

    #[test]
    fn validated_writes_need_sw_not_cr() {
        let text = "D:(OA;;CR;f3a64788-5306-11d1-a9c5-0000f80367c1;;AU)\
                    (OA;;SW;72e39547-7b18-11d1-adef-00c04fd8d5cd;;AU)";
        let t = token(1105, &[513]);
        let r = effective_rights(&sd(text), &t, &g(USER_CLASS), false, &catalog());
        assert_eq!(r.right("Validated-SPN"), Some(false));
        assert_eq!(r.right("Validated-DNS-Host-Name"), Some(true));
        // The property set sharing that GUID gets no read or write from SW.
        assert_eq!(
            r.property_set("DNS-Host-Name-Attributes"),
            Some(ReadWrite::default())
        );
    }

    #[test]
    fn a_catalog_from_the_schema() {
        let c = Catalog::from_schema(&Schema::builtin());
        let phone = c
            .attributes
            .iter()
            .find(|a| a.name == "telephoneNumber")
            .unwrap();
        assert_eq!(phone.guid, g(TELEPHONE));
        assert_eq!(phone.property_set, Some(g(PERSONAL)));
        // Reading a user's SELF grant of Personal-Information over the whole schema.
        let text = format!("O:DAG:DAD:(OA;;RPWP;{PERSONAL};;PS)(A;;RP;;;AU)");
        let t = token(1105, &[513]);
        let r = effective_rights(&sd(&text), &t, &g(USER_CLASS), true, &c);
        assert!(r.property_set("Personal-Information").unwrap().write);
        assert!(r.attributes.is_empty(), "{:?}", r.attributes);
    }

    #[test]
    fn words_for_masks() {
        assert_eq!(right_words(0x10), ["read property"]);
        assert_eq!(
            right_words(GENERIC_ALL | RIGHT_DELETE),
            ["delete", "generic all"]
        );
        assert_eq!(right_words(0x0040_0000), ["0x400000"]);
        assert!(right_codes(0).is_empty());
    }
}
