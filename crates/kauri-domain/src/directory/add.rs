//! Adding an entry: names checked against the schema, the object class chain completed,
//! what the server assigns filled in, principals given their SID and account type, and
//! the result checked against what its classes allow.

use kauri_db::ascii::with_lower;
use kauri_db::syntax::generalized_time;
use kauri_db::{DbWrite, Dn, Entry, Modification, ModifyOp};
use kauri_kv::Backend;

use super::classes::{ClassSet, SchemaSnapshot};
use super::error::{DirError, DirResult};
use super::principal::{self, group_type, Scope};
use super::store::AddStore;
use super::view::View;
use super::{is_tombstone, may_live_below, new_guid, no_such_object, now_secs, Directory, Request};
use crate::schema::objects::{definition_of, has_class, Definition};
use crate::schema::{AttributeDef, Schema};
use crate::sid::Sid;

/// Attributes only the server writes (beyond those the schema marks systemOnly).
pub(crate) const SERVER_OWNED: &[&str] = &[
    "objectguid",
    "objectsid",
    "whencreated",
    "whenchanged",
    "usncreated",
    "usnchanged",
    "name",
    "samaccounttype",
    "isdeleted",
    "lastknownparent",
    "pwdlastset",
    "badpwdcount",
    "badpasswordtime",
    "lastlogontimestamp",
    "lastlogon",
    "lockouttime",
    "logoncount",
    "objectcategory-none",
];

/// Attributes a client may name on add whose value the server decides or checks.
const ACCEPTED_ON_ADD: &[&str] = &["instancetype", "distinguishedname", "objectclass", "name"];

/// `instanceType` of an ordinary writable object.
const IT_WRITE: &str = "4";

/// Attributes as given, keyed by their schema name. An entry has a few dozen, so they are
/// found by a scan (no hashing, no lowercased copies of names).
pub(crate) struct Attrs {
    pub(crate) list: Vec<(String, Vec<Vec<u8>>)>,
}

impl Attrs {
    pub(crate) fn new() -> Attrs {
        Attrs {
            list: Vec::with_capacity(48),
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.list
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The values of an attribute, `None` when absent or emptied.
    pub(crate) fn get(&self, name: &str) -> Option<&[Vec<u8>]> {
        self.position(name)
            .and_then(|i| self.list.get(i))
            .map(|(_, v)| v.as_slice())
            .filter(|v| !v.is_empty())
    }

    fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(|v| v.first())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    pub(crate) fn set(&mut self, name: &str, values: Vec<Vec<u8>>) {
        match self.position(name).and_then(|i| self.list.get_mut(i)) {
            Some(slot) => slot.1 = values,
            None => self.list.push((name.to_string(), values)),
        }
    }

    fn set_text(&mut self, name: &str, value: &str) {
        self.set(name, vec![value.as_bytes().to_vec()]);
    }

    fn push(&mut self, name: &str, values: Vec<Vec<u8>>) {
        match self.position(name).and_then(|i| self.list.get_mut(i)) {
            Some(slot) => slot.1.extend(values),
            None => self.list.push((name.to_string(), values)),
        }
    }

    /// Takes the values out, leaving the attribute empty (a later `set` fills the same
    /// slot).
    fn take(&mut self, name: &str) -> Option<Vec<Vec<u8>>> {
        let i = self.position(name)?;
        let values = std::mem::take(&mut self.list.get_mut(i)?.1);
        Some(values).filter(|v| !v.is_empty())
    }

    fn into_entry(self, dn: Dn) -> Entry {
        let mut e = Entry::new(dn);
        e.attrs = self
            .list
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        e
    }
}

/// The schema definition of an attribute description (name or OID; `;binary` allowed).
/// An attribute the schema does not know is noSuchAttribute on add and modify, as in AD.
pub(crate) fn attribute_def<'s>(schema: &'s Schema, name: &str) -> DirResult<&'s AttributeDef> {
    let base = name.split(';').next().unwrap_or(name);
    schema
        .attribute(base)
        .or_else(|| schema.attribute_by_oid(base))
        .ok_or_else(|| {
            DirError::NoSuchAttribute(format!(
                "00000057: LdapErr: DSID-0C090D8A, comment: Error in attribute conversion \
                 operation, data 0, v4563: {name} is not in the schema"
            ))
        })
}

/// Whether the server alone writes an attribute, whatever the object.
fn is_server_owned(def: &AttributeDef) -> bool {
    SERVER_OWNED
        .iter()
        .any(|n| n.eq_ignore_ascii_case(&def.ldap_name))
}

/// Whether an administrator may give this attribute on an add: what an export meant to be
/// imported elsewhere keeps (no server-owned, system-only, constructed or secret
/// attributes, no back links; forward links are writable).
pub fn writable_on_add(schema: &Schema, name: &str) -> bool {
    let Ok(def) = attribute_def(schema, name) else {
        return false;
    };
    let back_link = def.link_id.is_some_and(|l| l % 2 == 1);
    !back_link
        && def.system_flags & FLAG_ATTR_IS_CONSTRUCTED == 0
        && !super::access::is_secret(&def.ldap_name)
        && check_writable(def, false, true).is_ok()
}

/// The systemFlags AD sets on new topology objects (MS-ADTS 3.1.1.5.2.3): sites, server
/// containers and NTDS settings stay in place when deleted; servers also may be renamed
/// and moved between sites; site links and connections may be renamed.
fn topology_flags(set: &ClassSet) -> Option<u32> {
    use super::delete::{
        FLAG_CONFIG_ALLOW_LIMITED_MOVE, FLAG_CONFIG_ALLOW_RENAME, FLAG_DISALLOW_MOVE_ON_DELETE,
    };
    with_lower(&set.structural, |c| match c {
        "server" => Some(
            FLAG_DISALLOW_MOVE_ON_DELETE
                | FLAG_CONFIG_ALLOW_RENAME
                | FLAG_CONFIG_ALLOW_LIMITED_MOVE,
        ),
        "site" | "serverscontainer" | "ntdsdsa" => Some(FLAG_DISALLOW_MOVE_ON_DELETE),
        "sitelink" | "sitelinkbridge" | "ntdsconnection" => Some(FLAG_CONFIG_ALLOW_RENAME),
        _ => None,
    })
}

/// The lDAPDisplayName AD derives from a schema object's cn when none is given:
/// hyphens dropped, the letter after each one capitalized, the first letter lowercased
/// (`Test-Attr-name` becomes `testAttrName`).
fn display_name_from_cn(cn: &str) -> String {
    let mut out = String::with_capacity(cn.len());
    let mut upper_next = false;
    for c in cn.chars() {
        if c == '-' {
            upper_next = true;
            continue;
        }
        if out.is_empty() {
            out.extend(c.to_lowercase());
        } else if upper_next {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        upper_next = false;
    }
    out
}

/// What a server-maintained attribute given on an add means.
enum Initial {
    /// Not one AD accepts on add: the usual write checks apply.
    Checked,
    /// Accepted and replaced by the server's own value.
    Ignored,
    /// Accepted, stored as this value.
    Value(String),
}

/// The server-maintained attributes AD accepts on an add, with the initial value it
/// would set anyway: the change stamps (replaced by the server's), `isDeleted` FALSE,
/// and `pwdLastSet` 0 (must change) or -1 (now); any other `pwdLastSet` is refused.
fn initial_value(name: &str, values: &[Vec<u8>]) -> DirResult<Initial> {
    let text = |v: &Vec<u8>| String::from_utf8_lossy(v).trim().to_string();
    with_lower(name, |lower| match lower {
        "usncreated" | "usnchanged" | "whencreated" | "whenchanged" => Ok(Initial::Ignored),
        "isdeleted" if values.iter().all(|v| text(v).eq_ignore_ascii_case("FALSE")) => {
            Ok(Initial::Ignored)
        }
        "pwdlastset" => match values.first().map(text).as_deref() {
            Some("0") if values.len() == 1 => Ok(Initial::Ignored),
            Some("-1") if values.len() == 1 => {
                Ok(Initial::Value(crate::password::ad_time_now().to_string()))
            }
            _ => Err(DirError::Other(
                "00000057: SvcErr: problem 5003 (WILL_NOT_PERFORM): pwdLastSet may only be \
                 set to 0 (change at next logon) or -1 (now)"
                    .into(),
            )),
        },
        // A client may grant a configuration object renames and moves, nothing else.
        "systemflags" => match values {
            [one] => {
                let given: i64 = text(one).parse().map_err(|_| {
                    DirError::InvalidAttributeSyntax("systemFlags: not an integer".into())
                })?;
                let kept = (given as i32 as u32) & CLIENT_SYSTEM_FLAGS;
                Ok(Initial::Value((kept as i32).to_string()))
            }
            _ => Err(DirError::ConstraintViolation(
                "systemFlags is single-valued".into(),
            )),
        },
        // A client creates ordinary writable objects only: no naming context heads, no
        // replicas.
        "instancetype" if values.len() == 1 && text(&values[0]) == IT_WRITE => Ok(Initial::Ignored),
        "instancetype" => Err(DirError::UnwillingToPerform(
            "00002037: instanceType of a new object can only be 4 (writable)".into(),
        )),
        _ => Ok(Initial::Checked),
    })
}

/// The `systemFlags` bits a client may set when it creates an object: config-NC rename,
/// move and limited move.
const CLIENT_SYSTEM_FLAGS: u32 = 0x7000_0000;

/// `systemFlags` bit of an attribute the server computes when read.
const FLAG_ATTR_IS_CONSTRUCTED: i32 = 0x4;

/// Refuses attributes the caller may not write. A constructed attribute does not exist to
/// be stored: undefinedAttributeType on add, constraintViolation on modify, as in AD.
pub(crate) fn check_writable(def: &AttributeDef, system: bool, on_add: bool) -> DirResult<()> {
    with_lower(&def.ldap_name, |lower| {
        check_writable_as(def, lower, system, on_add)
    })
}

/// [`check_writable`] with the attribute's lowercased name.
fn check_writable_as(def: &AttributeDef, lower: &str, system: bool, on_add: bool) -> DirResult<()> {
    if system || (on_add && ACCEPTED_ON_ADD.contains(&lower)) {
        return Ok(());
    }
    if def.system_flags & FLAG_ATTR_IS_CONSTRUCTED != 0 {
        let what = format!("{} is constructed by the server when read", def.ldap_name);
        return Err(if on_add {
            DirError::UndefinedAttributeType(format!("00002083: {what}"))
        } else {
            DirError::ConstraintViolation(format!("00002083: {what}"))
        });
    }
    // Password material is written through unicodePwd/userPassword only.
    let password_input = lower == "unicodepwd" || lower == "userpassword";
    if super::access::is_secret(lower) && !password_input {
        return Err(DirError::UnwillingToPerform(format!(
            "0000001F: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM): {} holds \
             password material and is written by password changes only",
            def.ldap_name
        )));
    }
    // What the server maintains (stamps, SIDs, account types, back links) is refused as
    // unwillingToPerform; other system-only attributes (a schema object's identity) as
    // a constraint violation, as AD answers each.
    let back_link = def.link_id.is_some_and(|l| l % 2 == 1);
    if !on_add && lower == "objectguid" {
        return Err(DirError::ConstraintViolation(
            "00002037: objectGUID is fixed when the object is created".into(),
        ));
    }
    if SERVER_OWNED.contains(&lower) || back_link {
        return Err(DirError::UnwillingToPerform(format!(
            "{} is maintained by the server and cannot be written",
            def.ldap_name
        )));
    }
    if def.system_only {
        return Err(DirError::ConstraintViolation(format!(
            "{} is a system-only attribute and cannot be written",
            def.ldap_name
        )));
    }
    Ok(())
}

/// A new entry's DN with its RDN's attribute types spelled as AD writes them.
fn canonical_rdn_names(schema: &Schema, dn: Dn) -> Dn {
    let Some(rdn) = dn.rdn() else {
        return dn;
    };
    let canonical = canonical_rdn(schema, rdn);
    let same = canonical
        .avas()
        .iter()
        .zip(rdn.avas())
        .all(|(a, b)| a.attr == b.attr);
    if same {
        return dn;
    }
    match dn.parent() {
        Some(parent) => parent.child(canonical),
        None => dn,
    }
}

/// An RDN with its attribute types spelled as AD writes them: the X.500 short names in
/// capitals (`CN=`, `OU=`, `DC=`), others by their lDAPDisplayName.
pub(crate) fn canonical_rdn(schema: &Schema, rdn: &kauri_db::Rdn) -> kauri_db::Rdn {
    const CAPITALS: &[&str] = &["cn", "ou", "dc", "o", "c", "l", "st"];
    let avas: Vec<kauri_db::dn::Ava> = rdn
        .avas()
        .iter()
        .map(|a| {
            let name = match schema.attribute(&a.attr) {
                Some(d) if CAPITALS.contains(&d.ldap_name.to_ascii_lowercase().as_str()) => {
                    d.ldap_name.to_ascii_uppercase()
                }
                Some(d) => d.ldap_name.clone(),
                None => a.attr.clone(),
            };
            kauri_db::dn::Ava {
                attr: name,
                value: a.value.clone(),
            }
        })
        .collect();
    kauri_db::Rdn::from_avas(avas).unwrap_or_else(|_| rdn.clone())
}

/// An SPN names one account in the forest: one held by another object (not a tombstone)
/// is a constraint violation, as AD answers.
pub(crate) fn check_unique_spns<V: View>(
    w: &V,
    values: &[Vec<u8>],
    me: Option<u64>,
) -> DirResult<()> {
    for v in values {
        let taken = w
            .find("servicePrincipalName", v)?
            .into_iter()
            .any(|id| Some(id) != me && !is_tombstone(w, id));
        if taken {
            return Err(DirError::ConstraintViolation(format!(
                "00002083: the service principal name {} is already in use",
                String::from_utf8_lossy(v)
            )));
        }
    }
    Ok(())
}

/// A subnet's name as AD accepts it: `address/prefix`, IPv4 with a prefix of 1–32 or IPv6
/// (lower case) with one of 1–128, and no bits set past the prefix. Anything else is
/// invalidDNSyntax.
pub(crate) fn check_subnet_name(name: &str) -> DirResult<()> {
    let bad = || {
        Err(DirError::InvalidDnSyntax(format!(
            "0000208F: {name} is not a subnet (address/prefix length, no host bits set)"
        )))
    };
    let Some((addr, bits_text)) = name.split_once('/') else {
        return bad();
    };
    let Ok(bits) = bits_text.parse::<u32>() else {
        return bad();
    };
    if bits.to_string() != bits_text {
        // Leading zeros or signs in the prefix length.
        return bad();
    }
    match addr.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) if (1..=32).contains(&bits) => {
            let host = u32::MAX.checked_shr(bits).unwrap_or(0);
            if u32::from(a) & host != 0 || a.is_unspecified() {
                return bad();
            }
        }
        Ok(std::net::IpAddr::V6(a)) if (1..=128).contains(&bits) => {
            let host = u128::MAX.checked_shr(bits).unwrap_or(0);
            let upper = addr.chars().any(|c| c.is_ascii_uppercase());
            if u128::from(a) & host != 0 || a.is_unspecified() || upper {
                return bad();
            }
        }
        _ => return bad(),
    }
    Ok(())
}

/// Whether a DN value names an existing object of `class`.
fn names_object_of_class<V: View + ?Sized>(w: &V, value: &[u8], class: &str) -> bool {
    std::str::from_utf8(value)
        .ok()
        .and_then(|t| Dn::parse(t).ok())
        .and_then(|d| w.id_of(&d).ok().flatten())
        .and_then(|id| w.values(id, "objectClass").ok())
        .is_some_and(|ocs| ocs.iter().any(|c| c.eq_ignore_ascii_case(class.as_bytes())))
}

/// A role owner (`fSMORoleOwner`) is a domain controller's NTDS Settings object
/// (nTDSDSA); anything else is unwillingToPerform, as AD answers.
pub(crate) fn check_role_owner<V: View>(w: &V, values: &[Vec<u8>]) -> DirResult<()> {
    for v in values {
        if !names_object_of_class(w, v, "nTDSDSA") {
            return Err(DirError::UnwillingToPerform(
                "00002084: fSMORoleOwner must name a domain controller's NTDS Settings".into(),
            ));
        }
    }
    Ok(())
}

/// GeneralizedTime values in the form AD stores (`YYYYMMDDHHMMSS.0Z`): AD also takes a
/// two-digit year (`YYMMDDHHMMSSZ`, 20YY below 50) and ignores whatever stands between a
/// `.` and the closing `Z`. Values in other forms are left for the syntax check.
pub(crate) fn canonical_times(def: &AttributeDef, values: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    if def.om_syntax != 24 {
        return values;
    }
    values
        .into_iter()
        .map(|v| canonical_time(&v).unwrap_or(v))
        .collect()
}

fn canonical_time(raw: &[u8]) -> Option<Vec<u8>> {
    let digits = raw.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = &raw[digits..];
    let plain = rest == b"Z" || (matches!(rest.first(), Some(b'.' | b',')) && rest.ends_with(b"Z"));
    if !plain {
        return None;
    }
    let text = std::str::from_utf8(&raw[..digits]).ok()?;
    let full = match digits {
        14 => text.to_string(),
        12 => {
            let yy: u32 = text[..2].parse().ok()?;
            format!("{}{text}", if yy < 50 { "20" } else { "19" })
        }
        _ => return None,
    };
    Some(format!("{full}.0Z").into_bytes())
}

/// Checks the values of one attribute against its definition: count, ranges.
pub(crate) fn check_values(def: &AttributeDef, values: &[Vec<u8>]) -> DirResult<()> {
    if def.single_valued && values.len() > 1 {
        return Err(DirError::ConstraintViolation(format!(
            "{} is single-valued; {} values given",
            def.ldap_name,
            values.len()
        )));
    }
    let (lo, hi) = (def.range_lower, def.range_upper);
    if lo.is_none() && hi.is_none() {
        return Ok(());
    }
    for v in values {
        let measure: Option<i64> = match def.attribute_syntax.as_str() {
            "2.5.5.9" | "2.5.5.16" => std::str::from_utf8(v)
                .ok()
                .and_then(|t| t.trim().parse().ok()),
            "2.5.5.12" | "2.5.5.4" | "2.5.5.5" | "2.5.5.6" => {
                Some(String::from_utf8_lossy(v).chars().count() as i64)
            }
            "2.5.5.10" | "2.5.5.15" => Some(v.len() as i64),
            _ => None,
        };
        if let Some(m) = measure {
            if lo.is_some_and(|l| m < l) || hi.is_some_and(|h| m > h) {
                return Err(DirError::ConstraintViolation(format!(
                    "{}: value out of range ({}..{})",
                    def.ldap_name,
                    lo.map(|x| x.to_string()).unwrap_or_default(),
                    hi.map(|x| x.to_string()).unwrap_or_default()
                )));
            }
        }
    }
    Ok(())
}

/// A new object's name must fall in a naming context this DC holds: the root DSE is none
/// (namingViolation, as AD's ROOT_MUST_BE_NC), and a name whose parent lies above every
/// held context gets AD's referral to where that name lives.
fn check_held(domain: &super::DomainInfo, dn: &Dn) -> DirResult<()> {
    if dn.is_root() {
        return Err(DirError::NamingViolation(
            "0000206D: NameErr: DSID-0305109C, problem 2005 (NAMING_VIOLATION), data 0, best \
             match of:\n\t''\n"
                .into(),
        ));
    }
    if domain.holds_parent_of(dn) {
        return Ok(());
    }
    let host = super::info::dc_host(dn).unwrap_or_else(|| domain.dns_name.clone());
    Err(DirError::Referral {
        message: format!(
            "0000202B: RefErr: DSID-0310082F, data 0, 1 access points\n\tref 1: '{host}'\n"
        ),
        url: format!("ldap://{host}/{dn}"),
    })
}

impl<B: Backend> Directory<B> {
    /// Adds an entry for a request (see the module docs); returns its id.
    pub(crate) fn add<S: AddStore<B>>(
        &self,
        w: &mut S,
        req: &Request,
        snap: &SchemaSnapshot,
        entry: Entry,
    ) -> DirResult<u64> {
        if let Some(domain) = self.domain() {
            check_held(&domain, &entry.dn)?;
        }
        self.add_entry(w, req, snap, entry, false)
    }

    /// Adds an entry; `naming_context` places it as the head of a naming context (the
    /// server's own provisioning only).
    pub(crate) fn add_entry<S: AddStore<B>>(
        &self,
        w: &mut S,
        req: &Request,
        snap: &SchemaSnapshot,
        entry: Entry,
        naming_context: bool,
    ) -> DirResult<u64> {
        let system = req.caller.is_system();
        let schema = &snap.schema;
        let mut entry = entry;
        let dn = canonical_rdn_names(schema, std::mem::replace(&mut entry.dn, Dn::root()));
        // AD looks for the name before anything else: an existing entry is
        // entryAlreadyExists whatever the rest of the request says.
        if w.id_of(&dn)?.is_some() {
            return Err(DirError::EntryAlreadyExists(format!(
                "00002071: UpdErr: DSID-030503FA, problem 6005 (ENTRY_EXISTS), data 0: {dn}"
            )));
        }
        // A new class's defaultObjectCategory names an existing object (or the class).
        let new_class = has_class(&entry, "classSchema");
        if let (true, false, Some(cat)) = (new_class, system, entry.get("defaultObjectCategory")) {
            let target = cat
                .first()
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|t| Dn::parse(t).ok());
            let exists = match &target {
                Some(t) if *t == dn => true,
                Some(t) => w.id_of(t)?.is_some(),
                None => false,
            };
            if !exists {
                return Err(DirError::ConstraintViolation(
                    "0000200B: defaultObjectCategory must name an existing object".into(),
                ));
            }
        }
        // A subnet is named by the network it stands for.
        if has_class(&entry, "subnet") && !system {
            let name = dn
                .rdn()
                .and_then(|r| r.avas().first())
                .map(|a| a.value.as_str());
            check_subnet_name(name.unwrap_or_default())?;
        }
        let new_attribute = has_class(&entry, "attributeSchema");
        if new_attribute && !system {
            self.prepare_new_attribute(w, schema, &mut entry)?;
        }
        let rdn = dn
            .rdn()
            .cloned()
            .ok_or_else(|| DirError::UnwillingToPerform("cannot add the root DSE".into()))?;
        // Schema objects are made of system-only attributes (attributeID, governsID, …):
        // AD accepts them when such an object is created.
        let schema_object = new_attribute || new_class;
        let mut attrs = Attrs::new();
        for (name, values) in entry.attrs {
            let def = attribute_def(schema, &name)?;
            // A schema object states its own systemFlags (the schema's, not the tree's).
            let schema_flags = schema_object && def.ldap_name.eq_ignore_ascii_case("systemFlags");
            if !system && !schema_flags {
                match initial_value(&def.ldap_name, &values)? {
                    Initial::Ignored => continue,
                    Initial::Value(v) => {
                        attrs.push(&def.ldap_name, vec![v.into_bytes()]);
                        continue;
                    }
                    Initial::Checked => {}
                }
            }
            // An empty password attribute is a malformed add before it is a refused one.
            if values.is_empty() && super::access::is_secret(&def.ldap_name) {
                return Err(DirError::ConstraintViolation(format!(
                    "{name}: an attribute needs at least one value"
                )));
            }
            check_writable(
                def,
                system || (schema_object && !is_server_owned(def)),
                true,
            )?;
            if values.is_empty() {
                return Err(DirError::ConstraintViolation(format!(
                    "{name}: an attribute needs at least one value"
                )));
            }
            if def.ldap_name.eq_ignore_ascii_case("servicePrincipalName") {
                check_unique_spns(w, &values, None)?;
            }
            if !system && def.ldap_name.eq_ignore_ascii_case("fSMORoleOwner") {
                check_role_owner(w, &values)?;
            }
            attrs.push(&def.ldap_name, canonical_times(def, values));
        }
        // AD takes distinguishedName and name from the entry's DN, whatever a client
        // states for them.
        attrs.take("distinguishedName");
        attrs.take("name");
        // Object classes: the structural chain, completed.
        let oc = attrs.take("objectClass").unwrap_or_default();
        let names: Vec<String> = oc
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let set = snap.class_set(&name_refs)?;
        attrs.set(
            "objectClass",
            set.object_classes
                .iter()
                .map(|c| c.as_bytes().to_vec())
                .collect(),
        );
        // Naming: the class's naming attribute, and a parent it may live below.
        let rdn_def = rdn
            .avas()
            .first()
            .map(|a| attribute_def(schema, &a.attr))
            .transpose()?;
        if !rdn_def.is_some_and(|d| d.ldap_name.eq_ignore_ascii_case(&set.rdn_attr)) && !system {
            return Err(DirError::NamingViolation(format!(
                "00002073: NameErr: DSID-03050F42, problem 2005 (NAMING_VIOLATION): \
                 objects of class {} are named by {}",
                set.structural, set.rdn_attr
            )));
        }
        for ava in rdn.avas() {
            let def = attribute_def(schema, &ava.attr)?;
            // A naming attribute stated beside the DN must say what the DN says.
            let stated = attrs.get(&def.ldap_name).map(|v| {
                v.iter()
                    .any(|x| String::from_utf8_lossy(x).to_lowercase() == ava.value.to_lowercase())
            });
            if stated == Some(false) && !system {
                return Err(DirError::InvalidDnSyntax(format!(
                    "00002081: NameErr: DSID-03050F42, problem 2003 (BAD_ATT_SYNTAX): {} \
                     differs from the value in the DN",
                    def.ldap_name
                )));
            }
            // The value is the DN's, in the DN's spelling.
            attrs.set_text(&def.ldap_name, &ava.value);
        }
        let parent = if naming_context {
            None
        } else {
            w.parent_of(&dn)?
        };
        if !naming_context {
            self.check_superior(w, &dn, parent, &set, system)?;
            if let Some(p) = self.principal(w, &req.caller)? {
                if let Some(parent) = parent {
                    self.check_create(w, snap, &p, parent, &set.structural)?;
                }
                self.check_supplied_descriptor(&p, attrs.get("nTSecurityDescriptor"))?;
            }
        }
        // What the server assigns.
        let now = now_secs();
        let guid = new_guid()?;
        attrs.set("objectGUID", vec![guid.to_vec()]);
        let when = generalized_time(now);
        attrs.set_text("whenCreated", &when);
        attrs.set_text("whenChanged", &when);
        attrs.set_text(
            "name",
            &rdn.avas()
                .first()
                .map(|a| a.value.clone())
                .unwrap_or_default(),
        );
        let instance = if naming_context {
            match self.domain() {
                Some(d) if dn != d.domain_dn => "13",
                _ => "5",
            }
        } else {
            IT_WRITE
        };
        attrs.set_text("instanceType", instance);
        // A stated category names a class of the schema.
        if let (Some(cat), false) = (attrs.get("objectCategory"), system) {
            let is_class = cat
                .first()
                .is_some_and(|v| names_object_of_class(w, v, "classSchema"));
            if !is_class {
                return Err(DirError::ObjectClassViolation(
                    "00002014: objectCategory must name a classSchema object".into(),
                ));
            }
        }
        if attrs.get("objectCategory").is_none() {
            if let Some(cat) = self.default_category(&set, &dn) {
                attrs.set_text("objectCategory", &cat);
            }
        }
        if (set.is("attributeSchema") || set.is("classSchema"))
            && attrs.get("lDAPDisplayName").is_none()
        {
            if let Some(cn) = attrs.text("cn") {
                attrs.set_text("lDAPDisplayName", &display_name_from_cn(&cn));
            }
        }
        if (set.is("attributeSchema") || set.is("classSchema"))
            && attrs.get("schemaIDGUID").is_none()
        {
            attrs.set("schemaIDGUID", vec![new_guid()?.to_vec()]);
        }
        if set.is("classSchema") && attrs.get("defaultObjectCategory").is_none() {
            attrs.set_text("defaultObjectCategory", &dn.to_string());
        }
        // The systemFlags AD gives new topology objects of the configuration.
        if let Some(flags) = topology_flags(&set) {
            let given = attrs
                .text("systemFlags")
                .and_then(|t| t.trim().parse::<i64>().ok())
                .unwrap_or(0) as u32;
            attrs.set_text("systemFlags", &((given | flags) as i32).to_string());
        }
        // Security principals.
        if let Some(domain) = self.domain() {
            if set.is("user") || set.is("group") {
                self.principal_defaults(w, &mut attrs, &set, &domain.sid, system, None)?;
            }
        }
        // Passwords become stored secrets.
        self.take_new_password(w, req, &mut attrs, &guid)?;
        // What the classes allow.
        for m in &set.must {
            if m == "ntsecuritydescriptor" {
                continue;
            }
            if attrs.get(m).is_none_or(|v| v.is_empty()) {
                return Err(DirError::ObjectClassViolation(format!(
                    "00002014: objectclass_attrs: attribute '{m}' is mandatory for an \
                     object of class {}",
                    set.structural
                )));
            }
        }
        for (name, values) in &attrs.list {
            let def = attribute_def(schema, name)?;
            if !values.is_empty() && !with_lower(name, |l| set.allowed.contains(l)) {
                return Err(DirError::ObjectClassViolation(format!(
                    "0000207D: objectclass_attrs: attribute '{name}' is not allowed on an \
                     object of class {}",
                    set.structural
                )));
            }
            check_values(def, values)?;
        }
        for (name, values) in &attrs.list {
            if self.db.config().link_of(name).is_some() {
                check_link_targets(w, values, system)?;
            }
        }
        if set.is("group") {
            if let Some(members) = attrs.get("member") {
                let scope = attrs
                    .get("groupType")
                    .and_then(|v| v.first())
                    .and_then(|v| principal::parse_u32_bits(v))
                    .map(|g| principal::group_scope(g, true))
                    .transpose()?;
                if let Some(scope) = scope {
                    check_nesting(w, scope, members)?;
                }
            }
        }
        if self.domain().is_some() {
            let supplied = attrs
                .take("nTSecurityDescriptor")
                .and_then(|v| v.into_iter().next())
                .map(|v| supplied_descriptor(&v, system, self.domain().as_deref()))
                .transpose()?;
            let sd = self.new_descriptor(
                w,
                snap,
                &req.caller,
                &dn,
                &set.structural,
                parent,
                supplied.as_ref(),
            )?;
            attrs.set("nTSecurityDescriptor", vec![sd]);
        }
        let schema_object = self.schema_object(&dn, &set, &attrs)?;
        let entry = attrs.into_entry(dn);
        let id = w.put_entry(entry, naming_context)?;
        if let Some(o) = schema_object {
            w.schema_extended(self, o)?;
        }
        Ok(id)
    }

    /// The parent (`parent`, its id if it exists) exists, is not deleted, and is a
    /// possible superior of the new object.
    fn check_superior<V: View>(
        &self,
        w: &V,
        dn: &Dn,
        parent_id: Option<u64>,
        set: &ClassSet,
        system: bool,
    ) -> DirResult<()> {
        let parent = || dn.parent().unwrap_or_else(Dn::root);
        let Some(pid) = parent_id else {
            return Err(no_such_object(&format_args!("parent {}", parent())));
        };
        if system || self.domain().is_none() {
            return Ok(());
        }
        // Nothing lives below a tombstone.
        if is_tombstone(w, pid) {
            return Err(no_such_object(&format_args!("parent {}", parent())));
        }
        if !may_live_below(w, pid, set)? {
            return Err(DirError::NamingViolation(format!(
                "00002099: NameErr: DSID-0305109C, problem 2005 (NAMING_VIOLATION): an object \
                 of class {} cannot be created below {}",
                set.structural,
                parent()
            )));
        }
        Ok(())
    }

    /// `objectCategory` of a new object: its structural class's `defaultObjectCategory`,
    /// placed in this directory's schema naming context.
    fn default_category(&self, set: &ClassSet, dn: &Dn) -> Option<String> {
        let cat = set.default_object_category.as_deref()?;
        let first = cat.split(',').next()?;
        let schema_dn = match self.domain() {
            Some(d) => d.schema_dn.to_string(),
            // Without a domain, the schema NC is named after the entry's top naming
            // context when the entry lives in it.
            None => {
                let top = dn.rdns().last()?.to_string();
                format!("CN=Schema,CN=Configuration,{top}")
            }
        };
        Some(format!("{first},{schema_dn}"))
    }

    /// Completes a user, computer or group: SID, account name, account type, primary
    /// group, account control, group type. `existing` is the entry's id on a modify
    /// (which keeps what it has).
    pub(crate) fn principal_defaults<S: AddStore<B>>(
        &self,
        w: &mut S,
        attrs: &mut Attrs,
        set: &ClassSet,
        domain_sid: &Sid,
        system: bool,
        existing: Option<u64>,
    ) -> DirResult<()> {
        if existing.is_none() && attrs.get("objectSid").is_none() {
            let rid = w.new_rid(self)?;
            attrs.set("objectSid", vec![domain_sid.with_rid(rid).to_bytes()]);
        }
        match attrs.text("sAMAccountName") {
            Some(name) => {
                principal::check_sam_account_name(&name)?;
                unique_account_name(w, &name, existing)?;
            }
            None if existing.is_none() => {
                let g = new_guid()?;
                let hex: String = g.iter().map(|b| format!("{b:02X}")).collect();
                let name = format!("${}-{}", &hex[..6], &hex[6..18]);
                attrs.set_text("sAMAccountName", &name);
            }
            None => {}
        }
        if let Some(upn) = attrs.text("userPrincipalName") {
            let taken = w
                .find("userPrincipalName", upn.as_bytes())?
                .into_iter()
                .any(|id| Some(id) != existing && !is_tombstone(w, id));
            if taken {
                return Err(DirError::ConstraintViolation(format!(
                    "0000200B: AtrErr: DSID-03152492, userPrincipalName {upn} is already in \
                     use in the forest"
                )));
            }
        }
        if set.is("group") {
            let bits = match attrs
                .get("groupType")
                .and_then(|v| v.first())
                .map(|v| principal::parse_u32_bits(v))
            {
                Some(Some(b)) => b,
                Some(None) => {
                    return Err(DirError::InvalidAttributeSyntax(
                        "groupType must be an integer".into(),
                    ))
                }
                None => group_type::DEFAULT,
            };
            principal::group_scope(bits, system)?;
            attrs.set_text("groupType", &principal::bits_text(bits));
            attrs.set_text(
                "sAMAccountType",
                &principal::group_account_type(bits).to_string(),
            );
        } else {
            let given = attrs
                .get("userAccountControl")
                .and_then(|v| v.first())
                .map(|v| {
                    principal::parse_u32_bits(v).ok_or_else(|| {
                        DirError::InvalidAttributeSyntax(
                            "userAccountControl must be an integer".into(),
                        )
                    })
                })
                .transpose()?;
            let computer = set.is("computer");
            let account = if computer {
                principal::uac::WORKSTATION_TRUST_ACCOUNT
            } else {
                principal::uac::NORMAL_ACCOUNT
            };
            let default = account | principal::uac::ACCOUNTDISABLE | principal::uac::PASSWD_NOTREQD;
            let bits = principal::normalize_uac(
                given.unwrap_or(default),
                computer,
                system,
                existing.is_none(),
            )?;
            attrs.set_text("userAccountControl", &bits.to_string());
            if let Some(critical) = principal::critical_for_uac(bits) {
                if given.is_some() || existing.is_none() {
                    attrs.set_text("isCriticalSystemObject", critical);
                }
            }
            attrs.set_text(
                "sAMAccountType",
                &principal::user_account_type(bits).to_string(),
            );
            if existing.is_none() {
                let default_group = principal::default_primary_group(bits).to_string();
                match attrs.text("primaryGroupID") {
                    // A new account is a member of no group but its default one.
                    Some(given) if !system && given.trim() != default_group => {
                        return Err(DirError::UnwillingToPerform(format!(
                            "0000052C: SvcErr: problem 5003 (WILL_NOT_PERFORM): primaryGroupID \
                             {given}: a new account can only have its default primary group \
                             ({default_group})"
                        )))
                    }
                    Some(_) => {}
                    None => attrs.set_text("primaryGroupID", &default_group),
                }
            } else if let (Some(id), Some(_)) = (existing, given) {
                // A new account type moves the account from its old type's default
                // primary group to the new one's.
                let before = w.int(id, "userAccountControl")?.map(|v| v as u32);
                let group = w.int(id, "primaryGroupID")?;
                if let (Some(before), Some(group)) = (before, group) {
                    let old_default = principal::default_primary_group(before);
                    let new_default = principal::default_primary_group(bits);
                    if group == i64::from(old_default) && new_default != old_default {
                        attrs.set_text("primaryGroupID", &new_default.to_string());
                    }
                }
            }
            if existing.is_none() {
                // Every account starts at key version 1, with a password or without.
                if set.is("user") {
                    attrs.set_text(super::credentials::KEY_VERSION_ATTR, "1");
                }
                // The account attributes AD gives every new user and computer.
                let current = self.working_schema();
                for (a, v) in [
                    ("pwdLastSet", "0"),
                    ("badPwdCount", "0"),
                    ("badPasswordTime", "0"),
                    ("lastLogon", "0"),
                    ("lastLogoff", "0"),
                    ("logonCount", "0"),
                    ("codePage", "0"),
                    ("countryCode", "0"),
                    ("accountExpires", "9223372036854775807"),
                ] {
                    let known = with_lower(a, |l| set.allowed.contains(l))
                        && current.schema.attribute(a).is_some();
                    if attrs.get(a).is_none() && known {
                        attrs.set_text(a, v);
                    }
                }
            }
        }
        Ok(())
    }

    /// Hands out the next RID of this DC, persisting the counter in the same transaction:
    /// a RID is never handed out twice, crash or not (a rolled-back add gives its RID back
    /// with everything else it wrote).
    pub(crate) fn next_rid(&self, w: &mut DbWrite<'_, B>) -> DirResult<u32> {
        self.take_rids(w, 1)?
            .first()
            .map(|r| *r.start())
            .ok_or_else(|| DirError::UnwillingToPerform("the RID pool is exhausted".into()))
    }

    /// Hands out the next `n` RIDs of this DC at once (for a bulk load), as ranges in the
    /// order [`Directory::next_rid`] would have handed them out one by one, with one update
    /// of the counter, in this transaction.
    pub fn take_rids(
        &self,
        w: &mut DbWrite<'_, B>,
        n: u32,
    ) -> DirResult<Vec<std::ops::RangeInclusive<u32>>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let exhausted = || DirError::UnwillingToPerform("the RID pool is exhausted".into());
        let domain = self
            .domain()
            .ok_or_else(|| DirError::UnwillingToPerform("no domain to allocate a RID in".into()))?;
        let (holder, attr) = &domain.rid_counter;
        let id = w.id_of(holder)?.ok_or_else(|| {
            DirError::UnwillingToPerform(format!("RID counter {holder} is missing"))
        })?;
        let current = w.int(id, attr)?.unwrap_or(0);
        let mut rid = u32::try_from(current.max(i64::from(crate::sid::rid::FIRST_ALLOCATED)))
            .map_err(|_| exhausted())?;
        // A RID Set hands out its pool (first RID in the low 32 bits, last in the high
        // ones); past its end the DC takes the next block from the RID Manager.
        let mut last = w
            .int(id, "rIDAllocationPool")?
            .map(|pool| (pool as u64 >> 32) as u32);
        let mut new_pool = None;
        let mut out = Vec::new();
        let mut left = n;
        while left > 0 {
            if last.is_some_and(|l| rid > l) {
                let (first, block_last) = self.take_rid_block(w, &domain)?;
                rid = first;
                last = Some(block_last);
                new_pool = Some((u64::from(block_last) << 32) | u64::from(first));
            }
            let wanted = rid.checked_add(left - 1).ok_or_else(exhausted)?;
            let end = last.map_or(wanted, |l| wanted.min(l));
            out.push(rid..=end);
            left -= end - rid + 1;
            rid = end.checked_add(1).ok_or_else(exhausted)?;
        }
        let mut mods = Vec::new();
        if let Some(pool) = new_pool {
            mods.push(Modification::new(
                ModifyOp::Replace,
                "rIDAllocationPool",
                &[&(pool as i64).to_string()],
            ));
        }
        mods.push(Modification::new(
            ModifyOp::Replace,
            attr,
            &[&rid.to_string()],
        ));
        w.modify(holder, &mods)?;
        Ok(out)
    }

    /// Takes the next block of RIDs from the RID Manager's available pool (first free RID
    /// in the low 32 bits, the highest in the high ones), in this transaction.
    pub(super) fn take_rid_block(
        &self,
        w: &mut DbWrite<'_, B>,
        domain: &super::DomainInfo,
    ) -> DirResult<(u32, u32)> {
        const BLOCK: u32 = 500;
        let exhausted =
            || DirError::UnwillingToPerform("the domain's RID space is exhausted".into());
        let manager = w
            .text(domain.domain_id, "rIDManagerReference")?
            .and_then(|t| Dn::parse(&t).ok())
            .ok_or_else(exhausted)?;
        let mid = w.id_of(&manager)?.ok_or_else(exhausted)?;
        let available = w.int(mid, "rIDAvailablePool")?.ok_or_else(exhausted)? as u64;
        let first = available as u32;
        let max = (available >> 32) as u32;
        let last = first.checked_add(BLOCK - 1).ok_or_else(exhausted)?;
        if last > max {
            return Err(exhausted());
        }
        let rest = (u64::from(max) << 32) | u64::from(last + 1);
        w.modify(
            &manager,
            &[Modification::new(
                ModifyOp::Replace,
                "rIDAvailablePool",
                &[&(rest as i64).to_string()],
            )],
        )?;
        Ok((first, last))
    }
}

impl<B: Backend> Directory<B> {
    /// The schema extended by a new `attributeSchema` or `classSchema` object in the
    /// Schema NC (checked before the object is written), or `None` for other entries.
    fn schema_object(&self, dn: &Dn, set: &ClassSet, attrs: &Attrs) -> DirResult<Option<Schema>> {
        if !(set.is("attributeSchema") || set.is("classSchema")) {
            return Ok(None);
        }
        let in_schema_nc = self
            .domain()
            .is_some_and(|d| dn.parent().as_ref() == Some(&d.schema_dn));
        if !in_schema_nc {
            return Err(DirError::NamingViolation(format!(
                "schema objects live directly below the Schema naming context, not at {dn}"
            )));
        }
        let mut e = Entry::new(dn.clone());
        e.attrs = attrs
            .list
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .cloned()
            .collect();
        let invalid = |err: crate::schema::SchemaError| {
            DirError::UnwillingToPerform(format!("schema object {dn} refused: {err}"))
        };
        let Some(def) = definition_of(&e).map_err(invalid)? else {
            return Ok(None);
        };
        let current = self.working_schema();
        let known = match &def {
            Definition::Attribute(a) => current
                .schema
                .attribute(&a.ldap_name)
                .is_some_and(|x| x.attribute_id == a.attribute_id),
            Definition::Class(c) => current
                .schema
                .class(&c.ldap_name)
                .is_some_and(|x| x.governs_id == c.governs_id),
        };
        if known {
            // Provisioning writes the schema it validates with: nothing new.
            return Ok(None);
        }
        let mut schema = current.schema.clone();
        match def {
            Definition::Attribute(a) => schema.add_attribute(a).map_err(invalid)?,
            Definition::Class(c) => schema.add_class(c).map_err(invalid)?,
        }
        Ok(Some(schema))
    }

    /// What AD fills in or refuses when a client defines an attribute: a linkID given as
    /// the OID 1.2.840.113556.1.2.50 becomes a new forward link's even number, one given
    /// as a forward link's name or OID becomes its back link's; a mAPIID given as
    /// 1.2.840.113556.1.2.49 becomes the next free one; taken numbers are refused; the
    /// server assigns msDS-IntId (a client may not); an omSyntax the attributeSyntax
    /// implies is supplied; the base-schema flag is not a client's to set.
    fn prepare_new_attribute<V: View>(
        &self,
        w: &V,
        schema: &Schema,
        entry: &mut Entry,
    ) -> DirResult<()> {
        const GENERATE_LINK_ID: &str = "1.2.840.113556.1.2.50";
        const GENERATE_MAPI_ID: &str = "1.2.840.113556.1.2.49";
        let text = |e: &Entry, name: &str| {
            e.get(name)
                .and_then(|v| v.first())
                .map(|v| String::from_utf8_lossy(v).trim().to_string())
        };
        fn set(e: &mut Entry, name: &str, value: String) {
            e.attrs.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            e.push(name, vec![value.into_bytes()]);
        }
        let refuse = |why: String| Err(DirError::UnwillingToPerform(format!("0000209A: {why}")));
        if entry.get("msDS-IntId").is_some() {
            return refuse("msDS-IntId is assigned by the server".into());
        }
        if let Some(given) = text(entry, "linkID") {
            let used = |n: i32| schema.attribute_by_link_id(n).is_some();
            let link = if given == GENERATE_LINK_ID {
                let top = schema
                    .attributes()
                    .filter_map(|a| a.link_id)
                    .max()
                    .unwrap_or(0);
                let mut n = (top.max(0) / 2 + 1) * 2;
                while used(n) || used(n + 1) {
                    n += 2;
                }
                n
            } else if let Ok(n) = given.parse::<i32>() {
                if used(n) {
                    return refuse(format!("linkID {n} is already in use"));
                }
                n
            } else {
                let forward = schema
                    .attribute(&given)
                    .or_else(|| schema.attribute_by_oid(&given));
                match forward.and_then(|f| f.link_id) {
                    Some(n) if n % 2 == 0 && !used(n + 1) => n + 1,
                    Some(_) => {
                        return refuse(format!("{given} is not a forward link without a back link"))
                    }
                    None => return refuse(format!("linkID {given} names no linked attribute")),
                }
            };
            set(entry, "linkID", link.to_string());
        }
        let mapi = text(entry, "mAPIID");
        // Only the base schema is marked as such; a client's attribute is not.
        if let Some(flags) = text(entry, "systemFlags").and_then(|t| t.parse::<i64>().ok()) {
            set(entry, "systemFlags", (flags & !0x10).to_string());
        }
        if let Some(given) = mapi {
            // The mAPIIDs the schema objects already hold (asked for rarely: read them).
            let mut mapi_ids = Vec::new();
            if let Some(domain) = self.domain() {
                if let Some(sid) = w.id_of(&domain.schema_dn)? {
                    for child in w.children(sid)? {
                        mapi_ids.extend(w.int(child, "mAPIID")?);
                    }
                }
            }
            let id = if given == GENERATE_MAPI_ID {
                // Generated numbers come from AD's range for them (from 0x8000).
                mapi_ids
                    .iter()
                    .copied()
                    .filter(|n| *n >= 0x8000)
                    .max()
                    .unwrap_or(0x7fff)
                    + 1
            } else {
                let n: i64 = given.parse().map_err(|_| {
                    DirError::InvalidAttributeSyntax(format!("mAPIID {given} is not a number"))
                })?;
                if mapi_ids.contains(&n) {
                    return refuse(format!("mAPIID {n} is already in use"));
                }
                n
            };
            set(entry, "mAPIID", id.to_string());
        }
        // AD draws msDS-IntId from 0x80000000–0xBFFFFFFF (stored as a signed int), unique
        // among the schema's.
        let taken: Vec<i32> = schema.attributes().filter_map(|a| a.int_id).collect();
        let int_id = loop {
            let mut r = [0u8; 4];
            getrandom::fill(&mut r)
                .map_err(|e| DirError::UnwillingToPerform(format!("random: {e}")))?;
            let v = ((u32::from_le_bytes(r) & 0x3fff_ffff) | 0x8000_0000) as i32;
            if !taken.contains(&v) {
                break v;
            }
        };
        set(entry, "msDS-IntId", int_id.to_string());
        if entry.get("oMSyntax").is_none() {
            let om = match text(entry, "attributeSyntax").as_deref() {
                Some("2.5.5.1") => Some(("127", Some("2b0c0287731c00854a"))),
                Some("2.5.5.2") => Some(("6", None)),
                Some("2.5.5.3") => Some(("27", None)),
                Some("2.5.5.4") => Some(("20", None)),
                Some("2.5.5.6") => Some(("18", None)),
                Some("2.5.5.8") => Some(("1", None)),
                Some("2.5.5.9") => Some(("2", None)),
                Some("2.5.5.10") => Some(("4", None)),
                Some("2.5.5.11") => Some(("24", None)),
                Some("2.5.5.12") => Some(("64", None)),
                Some("2.5.5.15") => Some(("66", None)),
                Some("2.5.5.16") => Some(("65", None)),
                Some("2.5.5.17") => Some(("4", None)),
                _ => None,
            };
            if let Some((om, class)) = om {
                set(entry, "oMSyntax", om.to_string());
                if let (Some(c), None) = (class, entry.get("oMObjectClass")) {
                    let bytes: Vec<u8> = (0..c.len())
                        .step_by(2)
                        .filter_map(|i| u8::from_str_radix(&c[i..i + 2], 16).ok())
                        .collect();
                    entry.attrs.push(("oMObjectClass".into(), vec![bytes]));
                }
            }
        }
        Ok(())
    }

    /// Makes an extended schema the working copy of this transaction (published after
    /// the commit), storing the fingerprints of its database configuration in the same
    /// transaction.
    pub(crate) fn extend_schema(&self, w: &mut DbWrite<'_, B>, schema: Schema) -> DirResult<()> {
        let config = schema.db_config();
        w.store_config_fingerprints(&config)?;
        *self.pending.lock() = Some(super::Pending {
            snap: std::sync::Arc::new(SchemaSnapshot::new(schema)),
            config: std::sync::Arc::new(config),
        });
        Ok(())
    }
}

/// `sAMAccountName` is unique in the domain (tombstones aside).
fn unique_account_name<V: View>(w: &V, name: &str, existing: Option<u64>) -> DirResult<()> {
    let taken = w
        .find("sAMAccountName", name.as_bytes())?
        .into_iter()
        .any(|id| Some(id) != existing && !is_tombstone(w, id));
    if taken {
        return Err(DirError::EntryAlreadyExists(format!(
            "00002071: samldb: account name (sAMAccountName) '{name}' already in use"
        )));
    }
    Ok(())
}

/// Links name live objects: a tombstone is no one's member (the server itself excepted,
/// e.g. provisioning).
pub(crate) fn check_link_targets<V: View>(
    w: &V,
    values: &[Vec<u8>],
    system: bool,
) -> DirResult<()> {
    if system {
        return Ok(());
    }
    for v in values {
        if let Some(id) = w.id_of_value(v)? {
            if is_tombstone(w, id) {
                return Err(no_such_object(&String::from_utf8_lossy(v)));
            }
        }
    }
    Ok(())
}

/// A group of `scope` may hold these members: groups only of the scopes AD allows.
pub(crate) fn check_nesting<V: View>(w: &V, scope: Scope, members: &[Vec<u8>]) -> DirResult<()> {
    for m in members {
        let Some(id) = w.id_of_value(m)? else {
            continue;
        };
        let Some(bits) = w
            .values(id, "groupType")?
            .first()
            .and_then(|v| principal::parse_u32_bits(v))
        else {
            continue;
        };
        let inner = principal::group_scope(bits, true)?;
        if !principal::may_nest(scope, inner) {
            return Err(DirError::UnwillingToPerform(format!(
                "0000055E: a {scope:?} group cannot contain the {inner:?} group {}",
                String::from_utf8_lossy(m)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::display_name_from_cn;

    #[test]
    fn display_names_follow_ads_rule() {
        assert_eq!(display_name_from_cn("Test-Attr-name"), "testAttrName");
        assert_eq!(display_name_from_cn("test-Attr1795-42"), "testAttr179542");
        assert_eq!(display_name_from_cn("ms-DS-Foo"), "msDSFoo");
    }
}

#[cfg(test)]
mod subnet_tests {
    use super::check_subnet_name;

    #[test]
    fn subnet_names_as_ad_takes_them() {
        for good in [
            "10.0.0.0/8",
            "192.168.1.0/24",
            "10.1.2.3/32",
            "2001:db8::/32",
            "fe80::/10",
        ] {
            assert!(check_subnet_name(good).is_ok(), "{good}");
        }
        for bad in [
            "10.0.0.1/8",
            "10.0.0.0",
            "10.0.0.0/0",
            "10.0.0.0/33",
            "10.0.0.0/08",
            "0.0.0.0/8",
            "300.0.0.0/8",
            "2001:DB8::/32",
            "2001:db8::1/32",
            "::/0",
            "name",
        ] {
            assert_eq!(
                check_subnet_name(bad).map_err(|e| e.ldap_result_code()),
                Err(34),
                "{bad}"
            );
        }
    }
}

/// A descriptor given with an add: the binary form, or (from the server itself, which
/// provisions some objects with AD's fixed descriptors) SDDL text.
fn supplied_descriptor(
    value: &[u8],
    system: bool,
    domain: Option<&super::DomainInfo>,
) -> DirResult<crate::security::SecurityDescriptor> {
    use crate::security::SecurityDescriptor;
    match SecurityDescriptor::from_bytes(value) {
        Ok(sd) => Ok(sd),
        Err(e) => {
            let text = std::str::from_utf8(value).ok().filter(|_| system);
            match (text, domain) {
                (Some(t), Some(d)) => SecurityDescriptor::from_sddl(t, &d.sid)
                    .map_err(|e| DirError::Other(format!("provisioned descriptor: {e}"))),
                _ => Err(DirError::ConstraintViolation(format!(
                    "0000207D: nTSecurityDescriptor: {e}"
                ))),
            }
        }
    }
}
