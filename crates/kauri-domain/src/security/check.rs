//! The access check: what a descriptor's DACL grants a token, for the object as a
//! whole and for each class, property set, property or extended right in an object
//! type list (MS-DTYP 2.5.3.2, as MS-ADTS 5.1.3.3 applies it to the directory).
//!
//! The rules:
//!
//! - No DACL (absent, or NULL) grants everything asked for; an empty DACL grants
//!   nothing but the owner's implicit rights. The DACL is the descriptor's `dacl`
//!   field: the SE_DACL_PRESENT bit is not consulted.
//! - The owner (a descriptor owner the token holds) is granted READ_CONTROL and
//!   WRITE_DAC before any ACE is looked at, so no deny ACE removes them — unless the
//!   DACL holds an effective ACE for OWNER RIGHTS (S-1-3-4), in which case those ACEs,
//!   applied to the owner, replace the implicit grant. [`OwnerRights::ReadControl`]
//!   gives the owner READ_CONTROL alone: AD's rule when dSHeuristics blocks implicit
//!   owner rights (MS-ADTS 6.1.3.4; Samba's `IMPLICIT_OWNER_READ_CONTROL_RIGHTS`).
//! - ACEs are read in the order they appear (putting deny ACEs first — canonical
//!   order — is the writer's job); inherit-only ACEs are skipped, as are audit ACEs
//!   and types the directory does not evaluate. A bit is granted where the first
//!   applicable ACE naming it allows it, and denied where that ACE denies it.
//! - An ACE applies when the token holds its SID; PRINCIPAL SELF (S-1-5-10) stands
//!   for the object's own SID when one is given ([`AccessCheck::with_self`]).
//! - A plain ACE, or an object ACE without an object type, applies to every node of
//!   the list. An object ACE with an object type applies to the node with that GUID and
//!   everything below it, and to nothing if the list has no such node. Grants do not
//!   flow upwards: Windows' AccessCheckByTypeResultList also grants a node what all of
//!   its listed children hold, but a list built for one read names only some of a
//!   set's properties, so that rule would grant the set (or the object) more than its
//!   ACEs do; like Samba's `sec_access_check_ds`, this check leaves parents alone.
//! - Generic bits in ACE masks and in the requested mask are mapped to directory
//!   rights first ([`super::rights::map_generic`]); MAXIMUM_ALLOWED asks for every
//!   directory right.
//!
//! Out of scope, for the caller: privileges (SeSecurityPrivilege for
//! ACCESS_SYSTEM_SECURITY, which this check never grants; SeTakeOwnershipPrivilege for
//! WRITE_OWNER), the SACL (auditing), conditional and callback ACEs (skipped), and
//! AD's special cases built on top of the check (list-object mode, the confidential
//! attribute bit, validated writes).
//!
//! The whole-object checks ([`AccessCheck::granted`], [`AccessCheck::granted_for_class`])
//! allocate nothing; a list check allocates only its per-node state and result.

use crate::sid::Sid;

use super::descriptor::{AceKind, Guid, SecurityDescriptor};
use super::rights::{
    map_generic, ACCESS_SYSTEM_SECURITY, DS_GENERIC_ALL, MAXIMUM_ALLOWED, RIGHT_READ_CONTROL,
    RIGHT_WRITE_DAC,
};
use super::token::{well_known, Token};
use super::SdError;

/// What the owner of an object may do without any ACE granting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OwnerRights {
    /// READ_CONTROL and WRITE_DAC (MS-DTYP 2.5.3.2; the default).
    #[default]
    ReadControlAndWriteDac,
    /// READ_CONTROL only: AD's rule when implicit owner rights are blocked.
    ReadControl,
}

impl OwnerRights {
    /// The implicit mask.
    fn mask(self) -> u32 {
        match self {
            OwnerRights::ReadControlAndWriteDac => RIGHT_READ_CONTROL | RIGHT_WRITE_DAC,
            OwnerRights::ReadControl => RIGHT_READ_CONTROL,
        }
    }
}

/// One node of an object type list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Node {
    guid: Option<Guid>,
    level: u16,
}

/// The object type list of MS-DTYP 2.5.3.2 (OBJECT_TYPE_LIST, 2.3.7): the object's
/// class at level 0, then property sets (level 1) with their properties (level 2), or
/// properties and extended rights straight under the class — in tree pre-order, as
/// MS-ADTS 5.1.3.3.3 builds it for a property read or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTypeList {
    nodes: Vec<Node>,
}

impl ObjectTypeList {
    /// A list holding the object's class GUID alone.
    pub fn new(class: Guid) -> ObjectTypeList {
        ObjectTypeList {
            nodes: vec![Node {
                guid: Some(class),
                level: 0,
            }],
        }
    }

    /// Appends a node at `level` (1 or more, at most one deeper than the node before);
    /// returns its index.
    pub fn push(&mut self, level: u16, guid: Guid) -> Result<usize, SdError> {
        let last = self.nodes.last().map_or(0, |n| n.level);
        if level == 0 {
            return Err(SdError::ObjectTypeList("only the first node is at level 0"));
        }
        if level > last.saturating_add(1) {
            return Err(SdError::ObjectTypeList(
                "a node is more than one level below the one before",
            ));
        }
        if !self.nodes.iter().any(|n| n.level == level - 1) {
            return Err(SdError::ObjectTypeList("a node has no parent"));
        }
        self.nodes.push(Node {
            guid: Some(guid),
            level,
        });
        Ok(self.nodes.len() - 1)
    }

    /// Appends a property, extended right or validated write directly under the class.
    pub fn add(&mut self, guid: Guid) -> usize {
        self.nodes.push(Node {
            guid: Some(guid),
            level: 1,
        });
        self.nodes.len() - 1
    }

    /// Appends a property set (`attributeSecurityGUID`) with the properties in it.
    pub fn add_property_set(&mut self, set: Guid, properties: &[Guid]) -> usize {
        let at = self.add(set);
        for p in properties {
            self.nodes.push(Node {
                guid: Some(*p),
                level: 2,
            });
        }
        at
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the list is empty (never: the class is always there).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The index of the first node with `guid`.
    pub fn position(&self, guid: &Guid) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.guid.as_ref() == Some(guid))
    }
}

/// The result of a list check: the granted mask of each node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access<'l> {
    list: &'l ObjectTypeList,
    granted: Vec<u32>,
}

impl Access<'_> {
    /// What is granted on the object as a whole (the class node).
    pub fn granted(&self) -> u32 {
        self.granted.first().copied().unwrap_or(0)
    }

    /// What is granted on the node with `guid` (its first occurrence).
    pub fn granted_for(&self, guid: &Guid) -> Option<u32> {
        self.list
            .position(guid)
            .and_then(|i| self.granted.get(i).copied())
    }

    /// What is granted on each node, in list order.
    pub fn granted_list(&self) -> &[u32] {
        &self.granted
    }

    /// Whether every bit of `mask` is granted on the node with `guid`.
    pub fn allows(&self, guid: &Guid, mask: u32) -> bool {
        self.granted_for(guid).is_some_and(|g| g & mask == mask)
    }
}

/// An access check for one caller: the token, the object's own SID for PRINCIPAL
/// SELF, and the owner rule. Cheap to build; reuse it across objects.
#[derive(Debug, Clone, Copy)]
pub struct AccessCheck<'a> {
    token: &'a Token,
    self_sid: Option<&'a Sid>,
    owner_rights: OwnerRights,
}

impl<'a> AccessCheck<'a> {
    /// A check for `token` with the default owner rule and no PRINCIPAL SELF.
    pub fn new(token: &'a Token) -> AccessCheck<'a> {
        AccessCheck {
            token,
            self_sid: None,
            owner_rights: OwnerRights::default(),
        }
    }

    /// The SID PRINCIPAL SELF stands for: the object's `objectSid`, for objects that
    /// are security principals.
    pub fn with_self(self, self_sid: Option<&'a Sid>) -> AccessCheck<'a> {
        AccessCheck { self_sid, ..self }
    }

    /// The owner's implicit rights.
    pub fn with_owner_rights(self, owner_rights: OwnerRights) -> AccessCheck<'a> {
        AccessCheck {
            owner_rights,
            ..self
        }
    }

    /// What `sd` grants of `desired` on the object as a whole; object ACEs with an
    /// object type are not considered.
    pub fn granted(&self, sd: &SecurityDescriptor, desired: u32) -> u32 {
        let nodes = [Node {
            guid: None,
            level: 0,
        }];
        let mut st = [(0u32, 0u32)];
        self.run(sd, desired, &nodes, &mut st)
    }

    /// What `sd` grants of `desired` on an object of class `class`: object ACEs about
    /// that class count too.
    pub fn granted_for_class(&self, sd: &SecurityDescriptor, desired: u32, class: &Guid) -> u32 {
        let nodes = [Node {
            guid: Some(*class),
            level: 0,
        }];
        let mut st = [(0u32, 0u32)];
        self.run(sd, desired, &nodes, &mut st)
    }

    /// What `sd` grants of `desired` on each node of `list`.
    pub fn evaluate<'l>(
        &self,
        sd: &SecurityDescriptor,
        desired: u32,
        list: &'l ObjectTypeList,
    ) -> Access<'l> {
        let mut st = vec![(0u32, 0u32); list.nodes.len()];
        self.run(sd, desired, &list.nodes, &mut st);
        Access {
            list,
            granted: st.into_iter().map(|(g, _)| g).collect(),
        }
    }

    /// Whether an ACE's SID applies to this caller.
    fn applies(&self, sid: &Sid, is_owner: bool) -> bool {
        if well_known::is_principal_self(sid) {
            if let Some(s) = self.self_sid {
                return self.token.contains(s);
            }
        }
        if well_known::is_owner_rights(sid) {
            return is_owner;
        }
        self.token.contains(sid)
    }

    /// Runs the check over `nodes`, leaving each node's (granted, denied) masks,
    /// granted already cut to what was asked, in `st`; returns the root's grant.
    fn run(
        &self,
        sd: &SecurityDescriptor,
        desired: u32,
        nodes: &[Node],
        st: &mut [(u32, u32)],
    ) -> u32 {
        let mut want = map_generic(desired & !MAXIMUM_ALLOWED);
        if desired & MAXIMUM_ALLOWED != 0 {
            want |= DS_GENERIC_ALL;
        }
        want &= !ACCESS_SYSTEM_SECURITY;

        let Some(dacl) = &sd.dacl else {
            for s in st.iter_mut() {
                s.0 = want;
            }
            return st.first().map_or(0, |s| s.0);
        };

        let is_owner = sd.owner.as_ref().is_some_and(|o| self.token.contains(o));
        if is_owner {
            let owner_rights_ace = dacl.aces.iter().any(|a| {
                !a.is_inherit_only()
                    && !matches!(a.kind, AceKind::Unknown { .. })
                    && well_known::is_owner_rights(&a.sid)
            });
            if !owner_rights_ace {
                let implicit = self.owner_rights.mask();
                for s in st.iter_mut() {
                    s.0 |= implicit;
                }
            }
        }

        let single = nodes.len() == 1;
        for ace in &dacl.aces {
            if ace.is_inherit_only() {
                continue;
            }
            let (allow, typed) = match ace.kind {
                AceKind::AccessAllowed => (true, None),
                AceKind::AccessDenied => (false, None),
                AceKind::AccessAllowedObject => (true, ace.object_type.as_ref()),
                AceKind::AccessDeniedObject => (false, ace.object_type.as_ref()),
                _ => continue,
            };
            if !self.applies(&ace.sid, is_owner) {
                continue;
            }
            let mask = map_generic(ace.mask);
            match typed {
                None => apply_subtree(nodes, st, 0, mask, allow),
                Some(g) => {
                    for i in 0..nodes.len() {
                        if nodes.get(i).and_then(|n| n.guid.as_ref()) == Some(g) {
                            apply_subtree(nodes, st, i, mask, allow);
                        }
                    }
                }
            }
            if single && st.first().is_some_and(|s| (s.0 | s.1) & want == want) {
                break;
            }
        }
        for s in st.iter_mut() {
            s.0 &= want;
        }
        st.first().map_or(0, |s| s.0)
    }
}

/// Grants (or denies) `mask` on node `i` and its descendants, bits already decided
/// staying as they are.
fn apply_subtree(nodes: &[Node], st: &mut [(u32, u32)], i: usize, mask: u32, allow: bool) {
    let level = nodes.get(i).map_or(0, |n| n.level);
    for (j, s) in st.iter_mut().enumerate().skip(i) {
        if j > i && nodes.get(j).is_none_or(|n| n.level <= level) {
            break;
        }
        if allow {
            s.0 |= mask & !s.1;
        } else {
            s.1 |= mask & !s.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::rights::*;
    use crate::security::sddl;

    fn dom() -> Sid {
        Sid::parse("S-1-5-21-1-2-3").unwrap()
    }

    fn sd(text: &str) -> SecurityDescriptor {
        sddl::parse(text, &dom()).unwrap()
    }

    fn g(text: &str) -> Guid {
        crate::schema::builtin::parse_guid(text).unwrap()
    }

    fn user() -> Token {
        Token::new(
            dom().with_rid(1105),
            [
                dom().with_rid(513),
                well_known::world(),
                well_known::authenticated_users(),
            ],
        )
    }

    #[test]
    fn deny_before_allow_in_order() {
        let t = user();
        let c = AccessCheck::new(&t);
        let d = sd("D:(D;;WP;;;AU)(A;;RPWP;;;AU)");
        assert_eq!(
            c.granted(&d, RIGHT_DS_READ_PROPERTY | RIGHT_DS_WRITE_PROPERTY),
            RIGHT_DS_READ_PROPERTY
        );
        let d = sd("D:(A;;RPWP;;;AU)(D;;WP;;;AU)");
        assert_eq!(
            c.granted(&d, RIGHT_DS_WRITE_PROPERTY),
            RIGHT_DS_WRITE_PROPERTY
        );
    }

    #[test]
    fn grants_flow_down_the_tree_only() {
        let t = user();
        let c = AccessCheck::new(&t);
        let (class, set, p1, p2) = (
            g("bf967aba-0de6-11d0-a285-00aa003049e2"),
            g("77b5b886-944a-11d1-aebd-0000f80367c1"),
            g("bf967a49-0de6-11d0-a285-00aa003049e2"),
            g("bf967a3a-0de6-11d0-a285-00aa003049e2"),
        );
        let mut list = ObjectTypeList::new(class);
        list.add_property_set(set, &[p1, p2]);
        let text = format!(
            "D:(OA;;RP;{};;AU)",
            crate::schema::builtin::format_guid(&set)
        );
        let a = c.evaluate(&sd(&text), RIGHT_DS_READ_PROPERTY, &list);
        assert_eq!(a.granted_list(), &[0, 0x10, 0x10, 0x10]);
        let text = format!(
            "D:(OA;;RP;{};;AU)",
            crate::schema::builtin::format_guid(&p1)
        );
        let a = c.evaluate(&sd(&text), RIGHT_DS_READ_PROPERTY, &list);
        assert_eq!(a.granted_list(), &[0, 0, 0x10, 0]);
        let text = format!(
            "D:(OA;;RP;{};;AU)(OA;;RP;{};;AU)",
            crate::schema::builtin::format_guid(&p1),
            crate::schema::builtin::format_guid(&p2)
        );
        let a = c.evaluate(&sd(&text), RIGHT_DS_READ_PROPERTY, &list);
        assert_eq!(a.granted_list(), &[0, 0, 0x10, 0x10]);
    }

    #[test]
    fn null_and_empty_dacls() {
        let t = user();
        let c = AccessCheck::new(&t);
        assert_eq!(
            c.granted(&sd("D:NO_ACCESS_CONTROL"), GENERIC_ALL),
            DS_GENERIC_ALL
        );
        assert_eq!(c.granted(&sd("O:DA"), RIGHT_DELETE), RIGHT_DELETE);
        assert_eq!(c.granted(&sd("D:"), RIGHT_READ_CONTROL), 0);
    }
}
