//! The security descriptor a new object receives (MS-ADTS 6.1.3, MS-DTYP 2.5.3.4):
//! the creator's descriptor — on an add without `nTSecurityDescriptor`, the class's
//! `defaultSecurityDescriptor` (MS-ADTS 6.1.3.6) — merged with what the parent's ACLs
//! pass down. The rules, as Windows and Samba (`libcli/security/create_descriptor.c`)
//! apply them:
//!
//! - Owner and group come from the creator's descriptor when it names them, else from
//!   the caller ([`default_owner_and_group`] computes AD's defaults: the default
//!   administrators group of MS-ADTS 6.1.3.8 when the creator belongs to it, else the
//!   creator).
//! - Creator ACEs: ones marked inherited (ID) are dropped, unless the ACL is protected
//!   (then the mark is cleared); inherit-only ACEs that nothing can inherit are dropped;
//!   an effective ACE naming CREATOR OWNER, CREATOR GROUP or generic rights is made
//!   concrete (owner/group SID, directory rights) — in place when it is not inherited by
//!   child containers, otherwise it stays as an inherit-only template and the concrete
//!   copy follows it.
//! - Parent ACEs reach a container child through CONTAINER_INHERIT and a non-container
//!   child through OBJECT_INHERIT (AD treats every object as a container); a container
//!   keeps OBJECT_INHERIT-only ACEs as inherit-only, for its own children. An object ACE
//!   whose inherited object type is not one of the new object's classes (its structural
//!   class and auxiliary classes: exactly these GUIDs, superclasses do not count) does
//!   not apply, but is kept inherit-only for descendants. NO_PROPAGATE_INHERIT gives the
//!   child an effective copy only, without inheritance flags. An applying ACE with
//!   CREATOR OWNER/GROUP or generic rights splits into a concrete effective ACE (without
//!   inherited object type; an object ACE left without any object type becomes a plain
//!   one) and the original kept inherit-only. Every copy is marked INHERITED.
//! - A protected ACL (SDDL `P`) inherits nothing and stays protected. Explicit ACEs
//!   come before inherited ones. An ACL is marked auto-inherited (`AI`) when the object
//!   has a parent and the ACL is not protected, or when the creator's ACL is so marked.
//! - Created ACLs have revision 4 (ACL_REVISION_DS), as AD stores them.
//!
//! One deviation from Samba: the audit flags (SA, FA) of an ACE survive when it is made
//! concrete (Samba clears every flag there).
//!
//! When neither the creator nor the parent supplies a DACL, the result has none (which
//! grants everyone everything); Windows would fall back to the creator token's default
//! DACL, which a directory token does not carry — every AD class has a default DACL.

use crate::sid::{rid, Sid};

use super::descriptor::{
    ace_flags::{
        self, CONTAINER_INHERIT, INHERITED, INHERIT_ONLY, NO_PROPAGATE_INHERIT, OBJECT_INHERIT,
    },
    control, Ace, AceKind, Acl, Guid, SecurityDescriptor, ACL_REVISION_DS,
};
use super::rights::{map_generic, GENERIC_ALL, GENERIC_EXECUTE, GENERIC_READ, GENERIC_WRITE};
use super::token::{well_known, Token};
use super::{sddl, SdError};

/// The naming context a new object is created in: it decides the default
/// administrators group (MS-ADTS 6.1.3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamingContext {
    /// A domain NC.
    Domain,
    /// The configuration NC.
    Configuration,
    /// The schema NC.
    Schema,
    /// An application NC; pass its sdReferenceDomain as the domain.
    Application,
}

/// The default administrators group (MS-ADTS 6.1.3.8) of a creator in `nc`: the
/// first of these groups the token holds — domain NC: Domain Admins, Enterprise
/// Admins; configuration NC: Enterprise Admins, Domain Admins; schema NC: Schema
/// Admins, Enterprise Admins, Domain Admins; application NC: the sdReferenceDomain's
/// Domain Admins, Enterprise Admins. `None` when the creator is in none of them.
pub fn default_admin_group(
    token: &Token,
    nc: NamingContext,
    domain: &Sid,
    root_domain: &Sid,
) -> Option<Sid> {
    let da = domain.with_rid(rid::DOMAIN_ADMINS);
    let ea = root_domain.with_rid(rid::ENTERPRISE_ADMINS);
    let sa = root_domain.with_rid(rid::SCHEMA_ADMINS);
    let order: Vec<Sid> = match nc {
        NamingContext::Domain | NamingContext::Application => vec![da, ea],
        NamingContext::Configuration => vec![ea, da],
        NamingContext::Schema => vec![sa, ea, da],
    };
    order.into_iter().find(|g| token.contains(g))
}

/// The owner and group a new object gets when its descriptor names none (MS-ADTS
/// 6.1.3.7): the default administrators group as both when the creator belongs to it
/// (functional level 2008 and later), else the creator's SID and `primary_group` (the
/// creator's primary group; the creator's SID when `None`).
pub fn default_owner_and_group(
    token: &Token,
    nc: NamingContext,
    domain: &Sid,
    root_domain: &Sid,
    primary_group: Option<&Sid>,
) -> (Sid, Sid) {
    match default_admin_group(token, nc, domain, root_domain) {
        Some(dag) => (dag.clone(), dag),
        None => (
            token.user().clone(),
            primary_group.unwrap_or(token.user()).clone(),
        ),
    }
}

/// The descriptor of a new object created under `parent` (`None` for a naming
/// context head) from its class's `defaultSecurityDescriptor` (`None`: the class has
/// none), with `creator_owner`/`creator_group` as owner and group unless the default
/// names its own; `domain` resolves the SDDL's domain aliases and stands for the forest
/// root too.
pub fn create_descriptor(
    parent: Option<&SecurityDescriptor>,
    default_sddl: Option<&str>,
    domain: &Sid,
    creator_owner: &Sid,
    creator_group: &Sid,
    object_class_guid: [u8; 16],
    is_container: bool,
) -> Result<SecurityDescriptor, SdError> {
    let creator = default_sddl.map(|t| sddl::parse(t, domain)).transpose()?;
    Ok(create_descriptor_with(
        parent,
        creator.as_ref(),
        creator_owner,
        creator_group,
        &[object_class_guid],
        is_container,
    ))
}

/// The general form of [`create_descriptor`]: `creator` is the descriptor the client
/// supplied or the class default, `object_types` the GUIDs of the object's structural
/// and auxiliary classes.
pub fn create_descriptor_with(
    parent: Option<&SecurityDescriptor>,
    creator: Option<&SecurityDescriptor>,
    owner: &Sid,
    group: &Sid,
    object_types: &[Guid],
    is_container: bool,
) -> SecurityDescriptor {
    let owner = creator
        .and_then(|c| c.owner.clone())
        .unwrap_or_else(|| owner.clone());
    let group = creator
        .and_then(|c| c.group.clone())
        .unwrap_or_else(|| group.clone());
    let cc = creator.map_or(0, |c| c.control);
    let subst = Subst {
        owner: &owner,
        group: &group,
    };
    let mut sd = SecurityDescriptor {
        control: control::SE_SELF_RELATIVE,
        owner: None,
        group: None,
        sacl: None,
        dacl: None,
    };
    for dacl in [true, false] {
        let (protected, present, auto_inherited) = if dacl {
            (
                control::SE_DACL_PROTECTED,
                control::SE_DACL_PRESENT,
                control::SE_DACL_AUTO_INHERITED,
            )
        } else {
            (
                control::SE_SACL_PROTECTED,
                control::SE_SACL_PRESENT,
                control::SE_SACL_AUTO_INHERITED,
            )
        };
        let pick = |s: &SecurityDescriptor| if dacl { s.dacl.clone() } else { s.sacl.clone() };
        let is_protected = cc & protected != 0;
        let explicit = creator
            .and_then(|c| {
                if dacl {
                    c.dacl.as_ref()
                } else {
                    c.sacl.as_ref()
                }
            })
            .map(|a| explicit_aces(a, is_protected, subst));
        let inherited = match parent.and_then(pick) {
            Some(p) if !is_protected => inherited_aces(&p, is_container, object_types, subst),
            _ => Vec::new(),
        };
        if explicit.is_none() && inherited.is_empty() {
            continue;
        }
        let mut aces = explicit.unwrap_or_default();
        aces.extend(inherited);
        sd.control |= present | (cc & protected);
        if (parent.is_some() && !is_protected) || cc & auto_inherited != 0 {
            sd.control |= auto_inherited;
        }
        let acl = Some(Acl {
            revision: ACL_REVISION_DS,
            aces,
        });
        if dacl {
            sd.dacl = acl;
        } else {
            sd.sacl = acl;
        }
    }
    sd.owner = Some(owner);
    sd.group = Some(group);
    sd
}

/// What CREATOR OWNER and CREATOR GROUP become.
#[derive(Clone, Copy)]
struct Subst<'a> {
    owner: &'a Sid,
    group: &'a Sid,
}

/// The ACE flags that survive an ACE being made concrete.
const AUDIT_FLAGS: u8 = ace_flags::SUCCESSFUL_ACCESS | ace_flags::FAILED_ACCESS;

/// Whether an ACE names something to make concrete (CO, CG, generic rights).
fn is_template(ace: &Ace) -> bool {
    !matches!(ace.kind, AceKind::Unknown { .. })
        && (ace.mask & (GENERIC_ALL | GENERIC_EXECUTE | GENERIC_WRITE | GENERIC_READ) != 0
            || well_known::is_creator_owner(&ace.sid)
            || well_known::is_creator_group(&ace.sid))
}

/// The concrete copy of an ACE: generic rights mapped, CO/CG replaced, only the audit
/// flags kept.
fn concrete(ace: &Ace, s: Subst<'_>) -> Ace {
    let mut out = ace.clone();
    if matches!(out.kind, AceKind::Unknown { .. }) {
        return out;
    }
    out.mask = map_generic(ace.mask);
    if well_known::is_creator_owner(&ace.sid) {
        out.sid = s.owner.clone();
    } else if well_known::is_creator_group(&ace.sid) {
        out.sid = s.group.clone();
    }
    out.flags = ace.flags & AUDIT_FLAGS;
    out
}

/// The creator's ACEs as the new object keeps them.
fn explicit_aces(acl: &Acl, protected: bool, s: Subst<'_>) -> Vec<Ace> {
    let mut out = Vec::with_capacity(acl.aces.len());
    for ace in &acl.aces {
        let mut ace = ace.clone();
        if ace.is_inherited() {
            if !protected {
                continue;
            }
            ace.flags &= !INHERITED;
        }
        let inheritable = ace.flags & (CONTAINER_INHERIT | OBJECT_INHERIT) != 0;
        if ace.is_inherit_only() {
            if inheritable {
                out.push(ace);
            }
            continue;
        }
        if !is_template(&ace) {
            out.push(ace);
        } else if ace.flags & CONTAINER_INHERIT == 0 {
            out.push(concrete(&ace, s));
        } else {
            let effective = concrete(&ace, s);
            ace.flags |= INHERIT_ONLY;
            out.push(ace);
            out.push(effective);
        }
    }
    out
}

/// The parent's ACEs as the new object inherits them.
fn inherited_aces(acl: &Acl, is_container: bool, object_types: &[Guid], s: Subst<'_>) -> Vec<Ace> {
    let mut out = Vec::new();
    for ace in &acl.aces {
        let f = ace.flags;
        let mut applies = if is_container {
            f & CONTAINER_INHERIT != 0
        } else {
            f & OBJECT_INHERIT != 0
        };
        if !applies && f & OBJECT_INHERIT == 0 {
            continue;
        }
        if ace.kind.is_object() {
            if let Some(t) = &ace.inherited_object_type {
                if !object_types.contains(t) {
                    applies = false;
                }
            }
        }
        if f & NO_PROPAGATE_INHERIT != 0 {
            if applies {
                out.push(effective_inherited(ace, s));
            }
            continue;
        }
        if !applies {
            let mut copy = ace.clone();
            copy.flags |= INHERITED | INHERIT_ONLY;
            out.push(copy);
        } else if is_template(ace) {
            out.push(effective_inherited(ace, s));
            let mut copy = ace.clone();
            copy.flags |= INHERITED | INHERIT_ONLY;
            out.push(copy);
        } else {
            let mut copy = ace.clone();
            copy.flags = (f | INHERITED) & !INHERIT_ONLY;
            out.push(copy);
        }
    }
    out
}

/// The effective (non-inheritable) copy a child gets of an applying parent ACE.
fn effective_inherited(ace: &Ace, s: Subst<'_>) -> Ace {
    let mut out = concrete(ace, s);
    out.flags |= INHERITED;
    out.inherited_object_type = None;
    if out.kind.is_object() && out.object_type.is_none() {
        if let Some(k) = out.kind.with_object(false) {
            out.kind = k;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom() -> Sid {
        Sid::parse("S-1-5-21-1-2-3").unwrap()
    }

    #[test]
    fn admin_group_order_depends_on_the_naming_context() {
        let d = dom();
        let both = Token::new(
            d.with_rid(500),
            [d.with_rid(512), d.with_rid(519), d.with_rid(518)],
        );
        let dag = |nc| default_admin_group(&both, nc, &d, &d).unwrap().rid();
        assert_eq!(dag(NamingContext::Domain), Some(512));
        assert_eq!(dag(NamingContext::Configuration), Some(519));
        assert_eq!(dag(NamingContext::Schema), Some(518));
        assert_eq!(dag(NamingContext::Application), Some(512));
        let plain = Token::new(d.with_rid(1105), [d.with_rid(513)]);
        assert_eq!(
            default_admin_group(&plain, NamingContext::Domain, &d, &d),
            None
        );
        assert_eq!(
            default_owner_and_group(
                &plain,
                NamingContext::Domain,
                &d,
                &d,
                Some(&d.with_rid(513))
            ),
            (d.with_rid(1105), d.with_rid(513))
        );
        assert_eq!(
            default_owner_and_group(&both, NamingContext::Domain, &d, &d, None),
            (d.with_rid(512), d.with_rid(512))
        );
    }
}
