//! `kauri dsacl show|set|delete DN`: an object's security descriptor, in the spirit of
//! `samba-tool dsacl`, on a data folder or a server. `show` prints the owner, the group
//! and each ACE as a row people can read (trustees by name, rights in words, object types
//! by their schema or extended-right names, what the ACE applies to), or the SDDL alone,
//! or what one principal may do on the object (its effective rights, from its token);
//! `set` and `delete` change the DACL's explicit ACEs (or the owner) and write only the
//! parts they change, with the SD flags control, so the directory re-inherits below the
//! object and nothing else of the descriptor is touched.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use kauri_domain::schema::builtin::{format_guid, parse_guid};
use kauri_domain::security::descriptor::{ace_flags, control, sd_flags};
use kauri_domain::security::effective::{
    self, right_codes, right_words, AttributeInfo, Catalog, EffectiveRights, RightKind,
};
use kauri_domain::security::rights::{
    map_generic, DS_ALL_RIGHTS, RIGHT_DS_CONTROL_ACCESS, RIGHT_DS_CREATE_CHILD,
    RIGHT_DS_DELETE_CHILD, RIGHT_DS_READ_PROPERTY, RIGHT_DS_SELF, RIGHT_DS_WRITE_PROPERTY,
};
use kauri_domain::security::{
    sddl, well_known, Ace, AceKind, Acl, Guid, SdError, SecurityDescriptor, Token,
};
use kauri_domain::sid::Sid;
use serde_json::{json, Value};

use super::names::{find, in_domain, Kind};
use super::output::{print_json, table};
use super::target::{Found, Scope, Target};

/// `kauri dsacl …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum DsaclCommand {
    /// An object's owner, group and ACEs as a table, its SDDL (--sddl), or what one
    /// principal may do on it (--effective-for).
    #[command(alias = "get")]
    Show {
        /// The object's DN, relative to the domain (OU=Sales) or whole.
        dn: String,
        /// Print the descriptor as SDDL alone (domain SIDs as aliases, as samba-tool
        /// prints them).
        #[arg(long, conflicts_with = "effective_for")]
        sddl: bool,
        /// Read the SACL too (the server returns it to administrators only).
        #[arg(long)]
        sacl: bool,
        /// Print the effective rights on the object of this user, computer or group (an
        /// account name, a UPN or a DN) instead: what its token is granted.
        #[arg(long, value_name = "PRINCIPAL")]
        effective_for: Option<String>,
    },
    /// Add explicit ACEs to an object's DACL, replace its explicit ACEs, or give it a
    /// new owner; prints the descriptor before and after.
    Set {
        /// The object's DN, relative to the domain or whole.
        dn: String,
        /// The ACEs to add, e.g. '(A;;RP;;;AU)(OA;;CR;<right GUID>;;<SID>)'; ones already
        /// present are skipped, the others go first among the explicit ACEs (a new allow
        /// ACE after the explicit deny ones).
        #[arg(long, value_name = "ACES")]
        sddl: Option<String>,
        /// Replace the DACL's explicit ACEs (and its protected flag) with these, e.g.
        /// 'D:P(A;;RPLCLORC;;;AU)'; given alone, --sddl's ACEs are the replacement.
        #[arg(long, value_name = "DACL", num_args = 0..=1, default_missing_value = "")]
        sddl_replace: Option<String>,
        /// The new owner: a SID, an SDDL alias (DA, BA, …) or an account or group name.
        #[arg(long, value_name = "SID|NAME")]
        owner: Option<String>,
    },
    /// Remove explicit ACEs from an object's DACL (compared after parsing, generic rights
    /// mapped to directory rights); prints the descriptor before and after.
    Delete {
        /// The object's DN, relative to the domain or whole.
        dn: String,
        /// The ACEs to remove, e.g. '(A;;RP;;;AU)'.
        #[arg(long, value_name = "ACES")]
        sddl: String,
    },
}

/// Runs a dsacl command.
pub fn run(t: &mut dyn Target, cmd: &DsaclCommand, json_out: bool) -> Result<()> {
    let mut ctx = Ctx::new(t)?;
    match cmd {
        DsaclCommand::Show {
            dn,
            sddl,
            sacl,
            effective_for,
        } => {
            let dn = in_domain(t, dn);
            if let Some(who) = effective_for {
                return show_effective(t, &mut ctx, &dn, who, json_out);
            }
            let flags = if *sacl { sd_flags::ALL } else { READ_FLAGS };
            let sd = read_sd(t, &dn, flags)?;
            let text = sd
                .to_sddl(&ctx.domain_sid)
                .with_context(|| format!("printing the descriptor of {dn} as SDDL"))?;
            if *sddl {
                if json_out {
                    print_json(&json!({"dn": dn, "sddl": text}));
                } else {
                    println!("{text}");
                }
                return Ok(());
            }
            ctx.load_schema(t);
            if json_out {
                print_json(&descriptor_json(t, &mut ctx, &dn, &sd, &text));
            } else {
                print_descriptor(t, &mut ctx, &dn, &sd);
            }
        }
        DsaclCommand::Set {
            dn,
            sddl,
            sddl_replace,
            owner,
        } => {
            let dn = in_domain(t, dn);
            set(
                t,
                &mut ctx,
                &dn,
                sddl.as_deref(),
                sddl_replace.as_deref(),
                owner.as_deref(),
                json_out,
            )?;
        }
        DsaclCommand::Delete { dn, sddl } => {
            let dn = in_domain(t, dn);
            delete(t, &mut ctx, &dn, sddl, json_out)?;
        }
    }
    Ok(())
}

/// What `show`, `set` and `delete` read: owner, group and DACL.
const READ_FLAGS: u32 = sd_flags::OWNER | sd_flags::GROUP | sd_flags::DACL;

/// The object's descriptor, the parts `flags` names.
fn read_sd(t: &mut dyn Target, dn: &str, flags: u32) -> Result<SecurityDescriptor> {
    let bytes = t
        .read_descriptor(dn, flags)
        .with_context(|| format!("reading the security descriptor of {dn}"))?
        .with_context(|| format!("{dn} has no security descriptor"))?;
    SecurityDescriptor::from_bytes(&bytes)
        .with_context(|| format!("the security descriptor of {dn} is malformed"))
}

/// What the commands share: the domain's SID (for SDDL aliases and names), names found
/// for SIDs, and the schema when a command needs it.
struct Ctx {
    domain_sid: Sid,
    netbios: String,
    names: HashMap<Sid, Option<String>>,
    schema: Option<SchemaInfo>,
}

impl Ctx {
    fn new(t: &mut dyn Target) -> Result<Ctx> {
        let domain = t.domain().dn.clone();
        let head = t
            .read(&domain, &["objectSid"])
            .with_context(|| format!("reading the domain's SID from {domain}"))?
            .with_context(|| format!("the domain object {domain} is missing"))?;
        let domain_sid = head
            .bytes("objectSid")
            .first()
            .and_then(|b| Sid::from_bytes(b).ok())
            .with_context(|| format!("{domain} has no objectSid"))?;
        Ok(Ctx {
            domain_sid,
            netbios: t.domain().netbios.clone(),
            names: HashMap::new(),
            schema: None,
        })
    }

    /// Reads the schema once (names for GUIDs); a directory whose schema cannot be read
    /// still shows its descriptors, with GUIDs as they are.
    fn load_schema(&mut self, t: &mut dyn Target) {
        if self.schema.is_none() {
            self.schema = Some(SchemaInfo::load(t).unwrap_or_default());
        }
    }

    /// A SID as people know it: a well-known name, `DOMAIN\name` or `BUILTIN\name` of the
    /// object that has it, else `None`.
    fn name_of(&mut self, t: &mut dyn Target, sid: &Sid) -> Option<String> {
        if let Some(n) = self.names.get(sid) {
            return n.clone();
        }
        let name = well_known_name(sid).map(str::to_string).or_else(|| {
            let filter = format!("(objectSid={})", escape_bytes(&sid.to_bytes()));
            let domain = t.domain().dn.clone();
            let hits = t
                .search_all(&domain, Scope::Sub, &filter, &["sAMAccountName", "cn"])
                .ok()?;
            let f = hits.first()?;
            let n = f.text("sAMAccountName").or_else(|| f.text("cn"))?;
            let builtin = sid.authority == 5 && sid.subs.first() == Some(&32);
            Some(if builtin {
                format!("BUILTIN\\{n}")
            } else {
                format!("{}\\{n}", self.netbios)
            })
        });
        self.names.insert(sid.clone(), name.clone());
        name
    }

    /// A SID as a table cell: its name, else its text.
    fn trustee(&mut self, t: &mut dyn Target, sid: &Sid) -> String {
        self.name_of(t, sid).unwrap_or_else(|| sid.to_string())
    }

    /// A SID as JSON: its text and name.
    fn sid_json(&mut self, t: &mut dyn Target, sid: &Sid) -> Value {
        json!({"sid": sid.to_string(), "name": self.name_of(t, sid)})
    }
}

/// Names of the well-known SIDs that are not objects of the directory (MS-DTYP 2.4.2.4).
fn well_known_name(sid: &Sid) -> Option<&'static str> {
    const NAMES: &[(u64, &[u32], &str)] = &[
        (0, &[0], "NULL SID"),
        (1, &[0], "Everyone"),
        (2, &[0], "LOCAL"),
        (3, &[0], "CREATOR OWNER"),
        (3, &[1], "CREATOR GROUP"),
        (3, &[4], "OWNER RIGHTS"),
        (5, &[1], "NT AUTHORITY\\DIALUP"),
        (5, &[2], "NT AUTHORITY\\NETWORK"),
        (5, &[3], "NT AUTHORITY\\BATCH"),
        (5, &[4], "NT AUTHORITY\\INTERACTIVE"),
        (5, &[6], "NT AUTHORITY\\SERVICE"),
        (5, &[7], "NT AUTHORITY\\ANONYMOUS LOGON"),
        (5, &[9], "NT AUTHORITY\\ENTERPRISE DOMAIN CONTROLLERS"),
        (5, &[10], "NT AUTHORITY\\SELF"),
        (5, &[11], "NT AUTHORITY\\Authenticated Users"),
        (5, &[12], "NT AUTHORITY\\RESTRICTED"),
        (5, &[13], "NT AUTHORITY\\TERMINAL SERVER USER"),
        (5, &[14], "NT AUTHORITY\\REMOTE INTERACTIVE LOGON"),
        (5, &[15], "NT AUTHORITY\\This Organization"),
        (5, &[18], "NT AUTHORITY\\SYSTEM"),
        (5, &[19], "NT AUTHORITY\\LOCAL SERVICE"),
        (5, &[20], "NT AUTHORITY\\NETWORK SERVICE"),
    ];
    NAMES
        .iter()
        .find(|(a, subs, _)| sid.authority == *a && sid.subs == *subs)
        .map(|(_, _, n)| *n)
}

/// Bytes escaped for a filter value (`\01\05…`).
fn escape_bytes(b: &[u8]) -> String {
    b.iter().map(|x| format!("\\{x:02x}")).collect()
}

/// Extended rights AD's descriptors name besides those of [`effective::EXTENDED_RIGHTS`]
/// (Samba's `extended-rights.ldif` and rights later Windows versions added), for naming
/// ACE object types only: `CR` (control access right) or `SW` (validated write), the
/// right's name and its `rightsGuid`, one a line.
const MORE_RIGHTS: &str = "\
CR Add-GUID 440820ad-65b4-11d1-a3da-0000f875ae0d
CR Allocate-Rids 1abd7cf8-0a99-11d1-adbb-00c04fd8d5cd
CR Allowed-To-Authenticate 68b1d179-0d15-4d4f-ab71-46152e79a7bc
CR Apply-Group-Policy edacfd8f-ffb3-11d1-b41d-00a0c968f939
CR Certificate-Enrollment 0e10c968-78fb-11d2-90d4-00c04f79dc55
CR Change-Domain-Master 014bf69c-7b3b-11d1-85f6-08002be74fab
CR Change-Infrastructure-Master cc17b1fb-33d9-11d2-97d4-00c04fd8d5cd
CR Change-PDC bae50096-4752-11d1-9052-00c04fc2d4cf
CR Change-Rid-Master d58d5f36-0a98-11d1-adbb-00c04fd8d5cd
CR Change-Schema-Master e12b56b6-0a95-11d1-adbb-00c04fd8d5cd
CR Create-Inbound-Forest-Trust e2a36dc9-ae17-47c3-b58b-be34c55ba633
CR Do-Garbage-Collection fec364e0-0a98-11d1-adbb-00c04fd8d5cd
CR Domain-Administer-Server ab721a52-1e2f-11d0-9819-00aa0040529b
CR DS-Bypass-Quota 88a9933e-e5c8-4f2a-9dd7-2527416b8092
CR DS-Check-Stale-Phantoms 69ae6200-7f46-11d2-b9ad-00c04f79f805
CR DS-Clone-Domain-Controller 3e0f7e18-2c7a-4c10-ba82-4d926db99a3e
CR DS-Execute-Intentions-Script 2f16c4a5-b98e-432c-952a-cb388ba33f2e
CR DS-Install-Replica 9923a32a-3607-11d2-b9be-0000f87a36b2
CR DS-Query-Self-Quota 4ecc03fe-ffc0-4947-b630-eb672a8a9dbc
CR DS-Read-Partition-Secrets 084c93a2-620d-4879-a836-f0ae47de0e89
CR DS-Replication-Get-Changes-In-Filtered-Set 89e95b76-444d-4c62-991a-0facbeda640c
CR DS-Replication-Manage-Topology 1131f6ac-9c07-11d1-f79f-00c04fc2dcd2
CR DS-Replication-Monitor-Topology f98340fb-7c5b-4cdb-a00b-2ebdfa115a96
CR DS-Replication-Synchronize 1131f6ab-9c07-11d1-f79f-00c04fc2dcd2
CR DS-Set-Owner 4125c71f-7fac-4ff0-bcb7-f09a41325286
CR DS-Write-Partition-Secrets 94825a8d-b171-4116-8146-1e34d8f54401
CR Generate-RSoP-Logging b7b1b3de-ab09-4242-9e30-9980e5d322f7
CR Generate-RSoP-Planning b7b1b3dd-ab09-4242-9e30-9980e5d322f7
CR Manage-Optional-Features 7c0e2a7c-a419-48e4-a995-10180aad54dd
CR Migrate-SID-History ba33815a-4f93-4c76-87f3-57574bff8109
CR Open-Address-Book a1990816-4298-11d1-ade2-00c04fd8d5cd
CR Read-Only-Replication-Secret-Synchronization 1131f6ae-9c07-11d1-f79f-00c04fc2dcd2
CR Recalculate-Hierarchy 0bc1554e-0a99-11d1-adbb-00c04fd8d5cd
CR Recalculate-Security-Inheritance 62dd28a8-7f46-11d2-b9ad-00c04f79f805
CR Refresh-Group-Cache 9432c620-033c-4db7-8b58-14ef6d0bf477
CR Reload-SSL-Certificate 1a60ea8d-58a6-4b20-bcdc-fb71eb8a9ff8
CR Run-Protect-Admin-Groups-Task 7726b9d5-a4b4-4288-a6b2-dce952e80a7f
CR SAM-Enumerate-Entire-Domain 91d67418-0135-4acc-8d79-c08e857cfbec
CR Send-To ab721a55-1e2f-11d0-9819-00aa0040529b
CR Update-Password-Not-Required-Bit 280f369c-67c7-438e-ae98-1d46f3c6f541
CR Update-Schema-Cache be2bb760-7f46-11d2-b9ad-00c04f79f805
SW DS-Validated-Write-Computer 9b026da6-0d3c-465c-8bee-5199d7165cba
SW Validated-MS-DS-Additional-DNS-Host-Name 80863791-dbe9-4eb8-837e-7f0ab55d9ac7
SW Validated-MS-DS-Behavior-Version d31a8757-2447-4545-8081-3bb610cacbf2";

/// The rights of [`MORE_RIGHTS`].
fn more_rights() -> impl Iterator<Item = (String, Guid, GuidKind)> {
    MORE_RIGHTS.lines().filter_map(|l| {
        let mut w = l.split_whitespace();
        let kind = match w.next()? {
            "SW" => GuidKind::ValidatedWrite,
            _ => GuidKind::ControlAccess,
        };
        let name = w.next()?.to_string();
        let guid = parse_guid(w.next()?)?;
        Some((name, guid, kind))
    })
}

/// What a GUID in an ACE can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GuidKind {
    Class,
    Attribute,
    PropertySet,
    ValidatedWrite,
    ControlAccess,
}

impl GuidKind {
    fn word(self) -> &'static str {
        match self {
            GuidKind::Class => "class",
            GuidKind::Attribute => "attribute",
            GuidKind::PropertySet => "property set",
            GuidKind::ValidatedWrite => "validated write",
            GuidKind::ControlAccess => "extended right",
        }
    }
}

/// A class as the commands need it.
#[derive(Debug, Clone, Default)]
struct ClassInfo {
    guid: Option<Guid>,
    sub_class_of: Option<String>,
    auxiliary: Vec<String>,
    attributes: Vec<String>,
}

/// The schema read from the directory: classes with what they may hold, attributes with
/// their GUIDs and property sets, and a name for every GUID an ACE may carry.
#[derive(Debug, Clone, Default)]
struct SchemaInfo {
    classes: HashMap<String, ClassInfo>,
    attributes: HashMap<String, AttributeInfo>,
    by_guid: HashMap<Guid, Vec<(String, GuidKind)>>,
}

impl SchemaInfo {
    fn load(t: &mut dyn Target) -> Result<SchemaInfo> {
        let domain = t.domain().dn.clone();
        let root = t
            .read("", &["schemaNamingContext", "configurationNamingContext"])
            .ok()
            .flatten();
        let config = root
            .as_ref()
            .and_then(|r| r.text("configurationNamingContext"))
            .unwrap_or_else(|| format!("CN=Configuration,{domain}"));
        let schema_nc = root
            .as_ref()
            .and_then(|r| r.text("schemaNamingContext"))
            .unwrap_or_else(|| format!("CN=Schema,{config}"));
        let mut out = SchemaInfo::default();
        let entries = t.search_all(
            &schema_nc,
            Scope::One,
            "(|(objectClass=attributeSchema)(objectClass=classSchema))",
            &[
                "objectClass",
                "lDAPDisplayName",
                "schemaIDGUID",
                "attributeSecurityGUID",
                "subClassOf",
                "auxiliaryClass",
                "systemAuxiliaryClass",
                "mustContain",
                "mayContain",
                "systemMustContain",
                "systemMayContain",
            ],
        )?;
        for e in entries {
            let Some(name) = e.text("lDAPDisplayName") else {
                continue;
            };
            let guid = guid_value(&e, "schemaIDGUID");
            if e.is("classSchema") {
                if let Some(g) = guid {
                    out.by_guid
                        .entry(g)
                        .or_default()
                        .push((name.clone(), GuidKind::Class));
                }
                let mut attributes = Vec::new();
                for a in [
                    "mustContain",
                    "mayContain",
                    "systemMustContain",
                    "systemMayContain",
                ] {
                    attributes.extend(e.texts(a));
                }
                let mut auxiliary = e.texts("auxiliaryClass");
                auxiliary.extend(e.texts("systemAuxiliaryClass"));
                out.classes.insert(
                    name.to_ascii_lowercase(),
                    ClassInfo {
                        guid,
                        sub_class_of: e.text("subClassOf"),
                        auxiliary,
                        attributes,
                    },
                );
            } else if let Some(g) = guid {
                out.by_guid
                    .entry(g)
                    .or_default()
                    .push((name.clone(), GuidKind::Attribute));
                out.attributes.insert(
                    name.to_ascii_lowercase(),
                    AttributeInfo {
                        name,
                        guid: g,
                        property_set: guid_value(&e, "attributeSecurityGUID"),
                    },
                );
            }
        }
        let known = Catalog::well_known();
        for s in &known.property_sets {
            out.by_guid
                .entry(s.guid)
                .or_default()
                .push((s.name.clone(), GuidKind::PropertySet));
        }
        for r in &known.extended_rights {
            let kind = match r.kind {
                RightKind::ControlAccess => GuidKind::ControlAccess,
                RightKind::ValidatedWrite => GuidKind::ValidatedWrite,
            };
            out.by_guid
                .entry(r.right.guid)
                .or_default()
                .push((r.right.name.clone(), kind));
        }
        for (name, g, kind) in more_rights() {
            out.by_guid.entry(g).or_default().push((name, kind));
        }
        // Rights the directory defines (a database provisioned with them, or added).
        let rights = t
            .search_all(
                &format!("CN=Extended-Rights,{config}"),
                Scope::One,
                "(objectClass=controlAccessRight)",
                &["cn", "rightsGuid", "validAccesses"],
            )
            .unwrap_or_default();
        for r in rights {
            let (Some(name), Some(g)) = (
                r.text("cn"),
                r.text("rightsGuid")
                    .and_then(|g| parse_guid(g.trim_matches(|c| c == '{' || c == '}'))),
            ) else {
                continue;
            };
            let kind = match r.int("validAccesses") {
                Some(48) => GuidKind::PropertySet,
                Some(8) => GuidKind::ValidatedWrite,
                _ => GuidKind::ControlAccess,
            };
            let names = out.by_guid.entry(g).or_default();
            if !names
                .iter()
                .any(|(n, k)| *k == kind && n.eq_ignore_ascii_case(&name))
            {
                names.push((name, kind));
            }
        }
        Ok(out)
    }

    /// The name of an ACE's object type, chosen by what the mask does with it: a class
    /// for CC/DC, a validated write for SW, an extended right for CR, an attribute or
    /// property set for RP/WP.
    fn object_name(&self, g: &Guid, mask: u32) -> Option<(String, GuidKind)> {
        let names = self.by_guid.get(g)?;
        let mask = map_generic(mask);
        let preferred: &[GuidKind] = if mask & RIGHT_DS_SELF != 0 {
            &[GuidKind::ValidatedWrite]
        } else if mask & RIGHT_DS_CONTROL_ACCESS != 0 {
            &[GuidKind::ControlAccess]
        } else if mask & (RIGHT_DS_READ_PROPERTY | RIGHT_DS_WRITE_PROPERTY) != 0 {
            &[GuidKind::PropertySet, GuidKind::Attribute]
        } else if mask & (RIGHT_DS_CREATE_CHILD | RIGHT_DS_DELETE_CHILD) != 0 {
            &[GuidKind::Class]
        } else {
            &[]
        };
        preferred
            .iter()
            .find_map(|k| names.iter().find(|(_, nk)| nk == k))
            .or_else(|| names.first())
            .cloned()
    }

    /// The name of a class by its GUID (an inherited object type).
    fn class_name(&self, g: &Guid) -> Option<String> {
        self.by_guid.get(g).and_then(|names| {
            names
                .iter()
                .find(|(_, k)| *k == GuidKind::Class)
                .or_else(|| names.first())
                .map(|(n, _)| n.clone())
        })
    }

    /// Every attribute an object of these classes may hold (with their superclasses
    /// and auxiliary classes).
    fn attributes_of(&self, classes: &[String]) -> Vec<AttributeInfo> {
        let mut seen: Vec<String> = Vec::new();
        let mut todo: Vec<String> = classes.iter().map(|c| c.to_ascii_lowercase()).collect();
        let mut names: Vec<String> = Vec::new();
        while let Some(c) = todo.pop() {
            if seen.contains(&c) {
                continue;
            }
            seen.push(c.clone());
            let Some(info) = self.classes.get(&c) else {
                continue;
            };
            names.extend(info.attributes.iter().map(|a| a.to_ascii_lowercase()));
            todo.extend(info.auxiliary.iter().map(|a| a.to_ascii_lowercase()));
            todo.extend(info.sub_class_of.iter().map(|a| a.to_ascii_lowercase()));
        }
        names.sort();
        names.dedup();
        names
            .iter()
            .filter_map(|n| self.attributes.get(n).cloned())
            .collect()
    }
}

/// The GUID value of an attribute (16 bytes as stored).
fn guid_value(f: &Found, attr: &str) -> Option<Guid> {
    f.bytes(attr)
        .into_iter()
        .next()
        .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok())
}

/// An ACE's type as a word.
fn ace_type(ace: &Ace) -> String {
    match &ace.kind {
        AceKind::AccessAllowed | AceKind::AccessAllowedObject => "allow".into(),
        AceKind::AccessDenied | AceKind::AccessDeniedObject => "deny".into(),
        AceKind::SystemAudit | AceKind::SystemAuditObject => {
            let mut on = Vec::new();
            if ace.flags & ace_flags::SUCCESSFUL_ACCESS != 0 {
                on.push("success");
            }
            if ace.flags & ace_flags::FAILED_ACCESS != 0 {
                on.push("failure");
            }
            if on.is_empty() {
                "audit".into()
            } else {
                format!("audit {}", on.join("+"))
            }
        }
        AceKind::Unknown { ace_type, .. } => format!("type {ace_type:#04x}"),
    }
}

/// A mask in words; every directory right at once is "full control", nearly every one
/// "full control except …".
fn rights_text(mask: u32) -> String {
    let mapped = map_generic(mask);
    let missing = DS_ALL_RIGHTS & !mapped;
    if mapped & !DS_ALL_RIGHTS == 0 && missing.count_ones() <= 3 {
        if missing == 0 {
            return "full control".into();
        }
        return format!("full control except {}", right_words(missing).join(", "));
    }
    right_words(mask).join(", ")
}

/// What an ACE applies to: this object, its descendants (or children), of one class.
fn applies_to(ace: &Ace, class: Option<&str>) -> String {
    let inherits = ace.flags & (ace_flags::CONTAINER_INHERIT | ace_flags::OBJECT_INHERIT) != 0;
    let io = ace.flags & ace_flags::INHERIT_ONLY != 0;
    let np = ace.flags & ace_flags::NO_PROPAGATE_INHERIT != 0;
    let below = match (np, class) {
        (false, None) => "all descendants".to_string(),
        (false, Some(c)) => format!("descendant {c} objects"),
        (true, None) => "children".to_string(),
        (true, Some(c)) => format!("child {c} objects"),
    };
    match (inherits, io) {
        (false, false) => "this object".into(),
        (false, true) => "nothing (inherit-only, not inheritable)".into(),
        (true, false) => format!("this object and {below}"),
        (true, true) => below,
    }
}

/// The SDDL letters of an ACE's flags.
fn flag_codes(flags: u8) -> Vec<&'static str> {
    [
        (ace_flags::OBJECT_INHERIT, "OI"),
        (ace_flags::CONTAINER_INHERIT, "CI"),
        (ace_flags::NO_PROPAGATE_INHERIT, "NP"),
        (ace_flags::INHERIT_ONLY, "IO"),
        (ace_flags::INHERITED, "ID"),
        (ace_flags::SUCCESSFUL_ACCESS, "SA"),
        (ace_flags::FAILED_ACCESS, "FA"),
    ]
    .iter()
    .filter(|(b, _)| flags & b != 0)
    .map(|(_, c)| *c)
    .collect()
}

/// An ACL's control flags in words.
fn acl_flags(c: u16, dacl: bool) -> Vec<&'static str> {
    let (p, ai, ar) = if dacl {
        (
            control::SE_DACL_PROTECTED,
            control::SE_DACL_AUTO_INHERITED,
            control::SE_DACL_AUTO_INHERIT_REQ,
        )
    } else {
        (
            control::SE_SACL_PROTECTED,
            control::SE_SACL_AUTO_INHERITED,
            control::SE_SACL_AUTO_INHERIT_REQ,
        )
    };
    let mut out = Vec::new();
    if c & p != 0 {
        out.push("protected");
    }
    if c & ai != 0 {
        out.push("auto-inherited");
    }
    if c & ar != 0 {
        out.push("auto-inherit requested");
    }
    out
}

/// An ACE's object type (or inherited object type) named through the schema.
fn object_text(ctx: &Ctx, g: Option<&Guid>, mask: u32) -> String {
    let Some(g) = g else {
        return String::new();
    };
    match ctx.schema.as_ref().and_then(|s| s.object_name(g, mask)) {
        Some((name, kind)) => format!("{name} ({})", kind.word()),
        None => format_guid(g),
    }
}

/// The name of an ACE's inherited object type (a class).
fn class_text(ctx: &Ctx, g: Option<&Guid>) -> Option<String> {
    let g = g?;
    Some(
        ctx.schema
            .as_ref()
            .and_then(|s| s.class_name(g))
            .unwrap_or_else(|| format_guid(g)),
    )
}

/// One table row per ACE.
fn ace_rows(t: &mut dyn Target, ctx: &mut Ctx, acl: &Acl) -> Vec<Vec<String>> {
    acl.aces
        .iter()
        .map(|ace| {
            let class = class_text(ctx, ace.inherited_object_type.as_ref());
            vec![
                ace_type(ace),
                if ace.is_inherited() {
                    "inherited".into()
                } else {
                    "explicit".into()
                },
                ctx.trustee(t, &ace.sid),
                rights_text(ace.mask),
                object_text(ctx, ace.object_type.as_ref(), ace.mask),
                applies_to(ace, class.as_deref()),
            ]
        })
        .collect()
}

/// Prints the descriptor for people.
fn print_descriptor(t: &mut dyn Target, ctx: &mut Ctx, dn: &str, sd: &SecurityDescriptor) {
    println!("Descriptor of {dn}");
    if let Some(o) = &sd.owner {
        println!("Owner: {} ({o})", ctx.trustee(t, o));
    }
    if let Some(g) = &sd.group {
        println!("Group: {} ({g})", ctx.trustee(t, g));
    }
    const HEADERS: [&str; 6] = [
        "TYPE",
        "ORIGIN",
        "TRUSTEE",
        "RIGHTS",
        "OBJECT TYPE",
        "APPLIES TO",
    ];
    for (label, acl, dacl) in [("DACL", &sd.dacl, true), ("SACL", &sd.sacl, false)] {
        let present = if dacl {
            control::SE_DACL_PRESENT
        } else {
            control::SE_SACL_PRESENT
        };
        if acl.is_none() && sd.control & present == 0 {
            continue;
        }
        println!();
        let flags = acl_flags(sd.control, dacl);
        let Some(acl) = acl else {
            println!("{label}: none (NULL: grants everyone everything)");
            continue;
        };
        if flags.is_empty() {
            println!("{label}: {} ACEs", acl.aces.len());
        } else {
            println!("{label}: {} ACEs, {}", acl.aces.len(), flags.join(", "));
        }
        if !acl.aces.is_empty() {
            let rows = ace_rows(t, ctx, acl);
            table(&HEADERS, &rows);
        }
    }
}

/// An ACL as JSON.
fn acl_json(t: &mut dyn Target, ctx: &mut Ctx, acl: &Acl, c: u16, dacl: bool) -> Value {
    let aces: Vec<Value> = acl
        .aces
        .iter()
        .map(|ace| {
            let guid = |g: Option<&Guid>, name: String| match g {
                Some(g) => json!({"guid": format_guid(g), "name": name}),
                None => Value::Null,
            };
            let class = class_text(ctx, ace.inherited_object_type.as_ref());
            json!({
                "type": ace_type(ace),
                "inherited": ace.is_inherited(),
                "trustee": ctx.sid_json(t, &ace.sid),
                "mask": ace.mask,
                "rights": right_codes(map_generic(ace.mask)),
                "rights_words": right_words(ace.mask),
                "object_type": guid(
                    ace.object_type.as_ref(),
                    object_text(ctx, ace.object_type.as_ref(), ace.mask)
                ),
                "inherited_object_type": guid(
                    ace.inherited_object_type.as_ref(),
                    class.clone().unwrap_or_default()
                ),
                "flags": flag_codes(ace.flags),
                "applies_to": applies_to(ace, class.as_deref()),
                "sddl": sddl::format_ace(ace, &ctx.domain_sid).ok(),
            })
        })
        .collect();
    json!({"flags": acl_flags(c, dacl), "aces": aces})
}

/// The descriptor as JSON.
fn descriptor_json(
    t: &mut dyn Target,
    ctx: &mut Ctx,
    dn: &str,
    sd: &SecurityDescriptor,
    text: &str,
) -> Value {
    let owner = sd.owner.as_ref().map(|o| ctx.sid_json(t, o));
    let group = sd.group.as_ref().map(|g| ctx.sid_json(t, g));
    let dacl = sd
        .dacl
        .as_ref()
        .map(|a| acl_json(t, ctx, a, sd.control, true));
    let sacl = sd
        .sacl
        .as_ref()
        .map(|a| acl_json(t, ctx, a, sd.control, false));
    json!({
        "dn": dn,
        "sddl": text,
        "owner": owner,
        "group": group,
        "dacl": dacl,
        "sacl": sacl,
    })
}

/// `show --effective-for`: the principal's token and what it is granted.
fn show_effective(
    t: &mut dyn Target,
    ctx: &mut Ctx,
    dn: &str,
    who: &str,
    json_out: bool,
) -> Result<()> {
    let principal = find(t, Kind::Member, who, &["objectSid", "objectClass"])
        .with_context(|| format!("finding the principal {who}"))?;
    let sid = principal
        .bytes("objectSid")
        .first()
        .and_then(|b| Sid::from_bytes(b).ok())
        .with_context(|| {
            format!(
                "{} has no objectSid: not a security principal",
                principal.dn
            )
        })?;
    let groups = t
        .token_groups(&principal.dn)
        .with_context(|| format!("reading the tokenGroups of {}", principal.dn))?;
    let mut sids: Vec<Sid> = groups
        .iter()
        .filter_map(|b| Sid::from_bytes(b).ok())
        .collect();
    // The well-known groups a network logon of a domain account adds: Everyone,
    // Authenticated Users, Network, This Organization.
    sids.extend([
        well_known::world(),
        well_known::authenticated_users(),
        Sid {
            authority: 5,
            subs: vec![2],
        },
        Sid {
            authority: 5,
            subs: vec![15],
        },
    ]);
    let token = Token::new(sid.clone(), sids);

    let object = t
        .read(dn, &["objectClass", "objectSid"])
        .with_context(|| format!("reading {dn}"))?
        .with_context(|| format!("no such object: {dn}"))?;
    let is_self = same_dn(&object.dn, &principal.dn)
        || object
            .bytes("objectSid")
            .first()
            .and_then(|b| Sid::from_bytes(b).ok())
            .is_some_and(|s| s == sid);
    let sd = read_sd(t, dn, READ_FLAGS)?;
    ctx.load_schema(t);
    let schema = ctx.schema.clone().unwrap_or_default();
    let classes = object.texts("objectClass");
    let structural = classes
        .last()
        .cloned()
        .with_context(|| format!("{dn} has no objectClass"))?;
    let class_guid = schema
        .classes
        .get(&structural.to_ascii_lowercase())
        .and_then(|c| c.guid)
        .with_context(|| format!("the schema has no schemaIDGUID for class {structural}"))?;
    let catalog = Catalog::well_known().with_attributes(schema.attributes_of(&classes));
    let rights = effective::effective_rights(&sd, &token, &class_guid, is_self, &catalog);

    let principal_name = ctx.trustee(t, &sid);
    let token_names: Vec<(Sid, String)> = token
        .sids()
        .iter()
        .map(|s| (s.clone(), ctx.trustee(t, s)))
        .collect();
    if json_out {
        print_json(&effective_json(
            dn,
            &principal.dn,
            &principal_name,
            &sid,
            is_self,
            &token_names,
            &structural,
            &rights,
        ));
    } else {
        print_effective(
            dn,
            &principal.dn,
            &principal_name,
            is_self,
            &token_names,
            &structural,
            &rights,
        );
    }
    Ok(())
}

/// Whether two DNs name the same object (compared parsed, else as text).
fn same_dn(a: &str, b: &str) -> bool {
    match (kauri_db::Dn::parse(a), kauri_db::Dn::parse(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// Yes or no, for tables.
fn yn(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// Prints effective rights for people.
fn print_effective(
    dn: &str,
    principal_dn: &str,
    principal: &str,
    is_self: bool,
    token: &[(Sid, String)],
    class: &str,
    r: &EffectiveRights,
) {
    println!("Effective rights of {principal} ({principal_dn})");
    println!("on {dn} ({class}{})", if is_self { ", itself" } else { "" });
    let names: Vec<&str> = token.iter().map(|(_, n)| n.as_str()).collect();
    println!("Token: {}", names.join(", "));
    println!();
    let codes = right_codes(r.object);
    if codes.is_empty() {
        println!("Object: nothing");
    } else {
        println!(
            "Object: {} ({})",
            codes.join(""),
            right_words(r.object).join(", ")
        );
    }
    println!();
    let rows: Vec<Vec<String>> = r
        .property_sets
        .iter()
        .map(|s| vec![s.set.name.clone(), yn(s.access.read), yn(s.access.write)])
        .collect();
    table(&["PROPERTY SET", "READ", "WRITE"], &rows);
    if !r.attributes.is_empty() {
        println!();
        let rows: Vec<Vec<String>> = r
            .attributes
            .iter()
            .map(|a| {
                vec![
                    a.name.clone(),
                    a.property_set.clone().unwrap_or_else(|| "-".into()),
                    yn(a.access.read),
                    yn(a.access.write),
                ]
            })
            .collect();
        table(&["ATTRIBUTE", "PROPERTY SET", "READ", "WRITE"], &rows);
    }
    println!();
    let rows: Vec<Vec<String>> = r
        .extended_rights
        .iter()
        .map(|x| {
            vec![
                x.right.right.name.clone(),
                x.right.kind.word().to_string(),
                yn(x.granted),
            ]
        })
        .collect();
    table(&["EXTENDED RIGHT", "KIND", "GRANTED"], &rows);
}

/// Effective rights as JSON.
#[allow(clippy::too_many_arguments)]
fn effective_json(
    dn: &str,
    principal_dn: &str,
    principal: &str,
    sid: &Sid,
    is_self: bool,
    token: &[(Sid, String)],
    class: &str,
    r: &EffectiveRights,
) -> Value {
    json!({
        "dn": dn,
        "class": class,
        "principal": {"dn": principal_dn, "sid": sid.to_string(), "name": principal},
        "self": is_self,
        "token": token
            .iter()
            .map(|(s, n)| json!({"sid": s.to_string(), "name": n}))
            .collect::<Vec<_>>(),
        "object": {
            "mask": r.object,
            "rights": right_codes(r.object),
            "rights_words": right_words(r.object),
        },
        "property_sets": r.property_sets.iter().map(|s| json!({
            "name": s.set.name,
            "guid": format_guid(&s.set.guid),
            "read": s.access.read,
            "write": s.access.write,
        })).collect::<Vec<_>>(),
        "attributes": r.attributes.iter().map(|a| json!({
            "name": a.name,
            "guid": format_guid(&a.guid),
            "property_set": a.property_set,
            "read": a.access.read,
            "write": a.access.write,
        })).collect::<Vec<_>>(),
        "extended_rights": r.extended_rights.iter().map(|x| json!({
            "name": x.right.right.name,
            "guid": format_guid(&x.right.right.guid),
            "kind": x.right.kind.word(),
            "granted": x.granted,
        })).collect::<Vec<_>>(),
    })
}

/// ACEs given on the command line: `(…)(…)`, or a whole `D:…` DACL; with the DACL's
/// protected flag.
fn parse_aces(text: &str, domain: &Sid) -> Result<(Vec<Ace>, bool)> {
    let trimmed = text.trim();
    let full = if trimmed.starts_with("D:") {
        trimmed.to_string()
    } else {
        format!("D:{trimmed}")
    };
    let sd = SecurityDescriptor::from_sddl(&full, domain)
        .map_err(|e| sddl_error(e, full.len() - trimmed.len()))
        .with_context(|| format!("reading the ACEs {text:?}"))?;
    if sd.owner.is_some() || sd.group.is_some() || sd.sacl.is_some() {
        bail!("{text:?}: give DACL ACEs only (no O:, G: or S: part)");
    }
    let aces = sd.dacl.map(|a| a.aces).unwrap_or_default();
    for ace in &aces {
        if ace.is_inherited() {
            bail!(
                "{}: an inherited ACE (flag ID) cannot be written; the directory puts \
                 inherited ACEs back itself",
                sddl::format_ace(ace, domain).unwrap_or_default()
            );
        }
        if matches!(ace.kind, AceKind::SystemAudit | AceKind::SystemAuditObject) {
            bail!(
                "{}: audit ACEs belong to the SACL, not the DACL",
                sddl::format_ace(ace, domain).unwrap_or_default()
            );
        }
    }
    Ok((aces, sd.control & control::SE_DACL_PROTECTED != 0))
}

/// An SDDL error with its offset into what the user typed.
fn sddl_error(e: SdError, prefix: usize) -> anyhow::Error {
    match e {
        SdError::Sddl { offset, what } => {
            anyhow::anyhow!(
                "bad SDDL at offset {}: {what}",
                offset.saturating_sub(prefix)
            )
        }
        other => other.into(),
    }
}

/// Whether two ACEs are the same once generic rights are mapped.
fn same_ace(a: &Ace, b: &Ace) -> bool {
    a.kind == b.kind
        && a.flags == b.flags
        && map_generic(a.mask) == map_generic(b.mask)
        && a.sid == b.sid
        && a.object_type == b.object_type
        && a.inherited_object_type == b.inherited_object_type
        && a.application_data == b.application_data
}

/// Whether an ACE denies.
fn is_deny(a: &Ace) -> bool {
    matches!(a.kind, AceKind::AccessDenied | AceKind::AccessDeniedObject)
}

/// The explicit ACEs of a DACL.
fn explicit(sd: &SecurityDescriptor) -> Vec<Ace> {
    sd.dacl
        .as_ref()
        .map(|a| {
            a.aces
                .iter()
                .filter(|x| !x.is_inherited())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The owner an argument names: a SID, a principal of the directory, or an SDDL alias.
fn owner_sid(t: &mut dyn Target, ctx: &Ctx, text: &str) -> Result<Sid> {
    if text.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("S-")) {
        return Sid::parse(text).map_err(|e| anyhow::anyhow!("{text}: {e}"));
    }
    match find(t, Kind::Member, text, &["objectSid"]) {
        Ok(f) => f
            .bytes("objectSid")
            .first()
            .and_then(|b| Sid::from_bytes(b).ok())
            .with_context(|| format!("{} has no objectSid", f.dn)),
        Err(e) => sddl::parse_sid(text, &ctx.domain_sid)
            .ok()
            .filter(|_| text.len() == 2)
            .ok_or(e)
            .with_context(|| format!("{text}: not a SID, an SDDL alias or a principal")),
    }
}

/// Writes the parts `flags` names of `sd` (explicit DACL ACEs only: the directory adds
/// the inherited ones).
fn write(t: &mut dyn Target, dn: &str, mut sd: SecurityDescriptor, flags: u32) -> Result<()> {
    if let Some(acl) = sd.dacl.as_mut() {
        acl.aces.retain(|a| !a.is_inherited());
        acl.revision = Acl::revision_for(&acl.aces).max(acl.revision);
    }
    let value = sd
        .only(flags)
        .to_bytes()
        .with_context(|| format!("encoding the new descriptor of {dn}"))?;
    t.write_descriptor(dn, value, flags)
        .with_context(|| format!("writing the security descriptor of {dn}"))
}

/// Prints a change's before and after, as samba-tool does (or JSON).
fn report(
    json_out: bool,
    dn: &str,
    old: &str,
    new: &str,
    mut extra: serde_json::Map<String, Value>,
) {
    if json_out {
        extra.insert("dn".into(), json!(dn));
        extra.insert("old".into(), json!(old));
        extra.insert("new".into(), json!(new));
        print_json(&Value::Object(extra));
    } else {
        println!("old descriptor for {dn}:");
        println!("{old}");
        println!("new descriptor for {dn}:");
        println!("{new}");
    }
}

/// `dsacl set`.
fn set(
    t: &mut dyn Target,
    ctx: &mut Ctx,
    dn: &str,
    add: Option<&str>,
    replace: Option<&str>,
    owner: Option<&str>,
    json_out: bool,
) -> Result<()> {
    if add.is_none() && replace.is_none() && owner.is_none() {
        bail!("nothing to set: give --sddl, --sddl-replace or --owner");
    }
    let dom = ctx.domain_sid.clone();
    let before = read_sd(t, dn, READ_FLAGS)?;
    let old_text = before
        .to_sddl(&dom)
        .context("printing the old descriptor")?;
    let mut after = before.clone();
    let mut flags = 0;
    let mut added = Vec::new();
    let mut skipped = Vec::new();
    let replacement = match replace {
        Some("") => Some(
            add.context("--sddl-replace without a value replaces with --sddl's ACEs: give --sddl")?,
        ),
        Some(text) => Some(text),
        None => None,
    };
    if let Some(text) = replacement {
        let (aces, protected) = parse_aces(text, &dom)?;
        added = aces.clone();
        let inherited: Vec<Ace> = after
            .dacl
            .as_ref()
            .map(|a| {
                a.aces
                    .iter()
                    .filter(|x| x.is_inherited())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut all = aces;
        all.extend(inherited);
        after.dacl = Some(Acl::new(all));
        after.control |= control::SE_DACL_PRESENT;
        if protected {
            after.control |= control::SE_DACL_PROTECTED;
        } else {
            after.control &= !control::SE_DACL_PROTECTED;
        }
        flags |= sd_flags::DACL;
    } else if let Some(text) = add {
        let (aces, _) = parse_aces(text, &dom)?;
        let mut current = explicit(&after);
        let mut deny_at = 0;
        let mut allow_at = current.iter().take_while(|a| is_deny(a)).count();
        for ace in aces {
            if current.iter().any(|c| same_ace(c, &ace)) || added.iter().any(|c| same_ace(c, &ace))
            {
                skipped.push(ace);
                continue;
            }
            if is_deny(&ace) {
                current.insert(deny_at, ace.clone());
                deny_at += 1;
                allow_at += 1;
            } else {
                current.insert(allow_at, ace.clone());
                allow_at += 1;
            }
            added.push(ace);
        }
        if !added.is_empty() {
            after.dacl = Some(Acl::new(current));
            after.control |= control::SE_DACL_PRESENT;
            flags |= sd_flags::DACL;
        }
    }
    if let Some(o) = owner {
        let sid = owner_sid(t, ctx, o)?;
        if before.owner.as_ref() != Some(&sid) {
            after.owner = Some(sid);
            flags |= sd_flags::OWNER;
        }
    }
    let fmt = |aces: &[Ace]| -> Vec<String> {
        aces.iter()
            .filter_map(|a| sddl::format_ace(a, &dom).ok())
            .collect()
    };
    for s in fmt(&skipped) {
        if !json_out {
            eprintln!("kauri: {s} is already in the DACL of {dn}; skipped");
        }
    }
    let new_text = if flags == 0 {
        old_text.clone()
    } else {
        write(t, dn, after, flags)?;
        read_sd(t, dn, READ_FLAGS)?
            .to_sddl(&dom)
            .context("printing the new descriptor")?
    };
    let mut extra = serde_json::Map::new();
    extra.insert("added".into(), json!(fmt(&added)));
    extra.insert("skipped".into(), json!(fmt(&skipped)));
    extra.insert("sd_flags".into(), json!(flags));
    report(json_out, dn, &old_text, &new_text, extra);
    Ok(())
}

/// `dsacl delete`.
fn delete(t: &mut dyn Target, ctx: &mut Ctx, dn: &str, text: &str, json_out: bool) -> Result<()> {
    let dom = ctx.domain_sid.clone();
    let (aces, _) = parse_aces(text, &dom)?;
    let before = read_sd(t, dn, READ_FLAGS)?;
    let old_text = before
        .to_sddl(&dom)
        .context("printing the old descriptor")?;
    let mut current = explicit(&before);
    let mut removed = Vec::new();
    let mut missing = Vec::new();
    for ace in aces {
        let n = current.len();
        current.retain(|c| !same_ace(c, &ace));
        if current.len() < n {
            removed.push(ace);
        } else {
            missing.push(ace);
        }
    }
    let fmt = |aces: &[Ace]| -> Vec<String> {
        aces.iter()
            .filter_map(|a| sddl::format_ace(a, &dom).ok())
            .collect()
    };
    if !json_out {
        for s in fmt(&missing) {
            eprintln!("kauri: {s} is not an explicit ACE of {dn}; nothing to remove");
        }
    }
    let new_text = if removed.is_empty() {
        old_text.clone()
    } else {
        let mut after = before.clone();
        after.dacl = Some(Acl::new(current));
        write(t, dn, after, sd_flags::DACL)?;
        read_sd(t, dn, READ_FLAGS)?
            .to_sddl(&dom)
            .context("printing the new descriptor")?
    };
    let mut extra = serde_json::Map::new();
    extra.insert("removed".into(), json!(fmt(&removed)));
    extra.insert("not_found".into(), json!(fmt(&missing)));
    report(json_out, dn, &old_text, &new_text, extra);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom() -> Sid {
        Sid::parse("S-1-5-21-1-2-3").unwrap()
    }

    #[test]
    fn aces_from_the_command_line() {
        let (aces, protected) = parse_aces("(A;;RP;;;AU)(D;;WP;;;WD)", &dom()).unwrap();
        assert_eq!(aces.len(), 2);
        assert!(!protected);
        let (aces, protected) = parse_aces("D:P(A;;GA;;;DA)", &dom()).unwrap();
        assert_eq!(aces.len(), 1);
        assert!(protected);
        assert!(parse_aces("(A;ID;RP;;;AU)", &dom()).is_err());
        assert!(parse_aces("(AU;SA;RP;;;AU)", &dom()).is_err());
        let e = parse_aces("(A;;QQ;;;AU)", &dom()).unwrap_err();
        assert!(format!("{e:#}").contains("offset 4"), "{e:#}");
    }

    #[test]
    fn generic_rights_compare_mapped() {
        let (a, _) = parse_aces("(A;;GA;;;AU)", &dom()).unwrap();
        let (b, _) = parse_aces("(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;AU)", &dom()).unwrap();
        assert!(same_ace(&a[0], &b[0]));
        let (c, _) = parse_aces("(A;CI;GA;;;AU)", &dom()).unwrap();
        assert!(!same_ace(&a[0], &c[0]));
    }

    #[test]
    fn what_an_ace_applies_to() {
        let (aces, _) = parse_aces(
            "(A;;RP;;;AU)(A;CI;RP;;;AU)(A;CIIO;RP;;;AU)(A;CINP;RP;;;AU)(A;CIIONP;RP;;;AU)",
            &dom(),
        )
        .unwrap();
        let texts: Vec<String> = aces.iter().map(|a| applies_to(a, None)).collect();
        assert_eq!(
            texts,
            [
                "this object",
                "this object and all descendants",
                "all descendants",
                "this object and children",
                "children"
            ]
        );
        assert_eq!(
            applies_to(&aces[2], Some("user")),
            "descendant user objects"
        );
        assert_eq!(rights_text(0xF01FF), "full control");
        assert_eq!(rights_text(0x10000000), "full control");
        assert_eq!(rights_text(0x14), "list contents, read property");
        assert_eq!(
            rights_text(sddl::parse_rights("CCLCSWRPWPLOCRSDRCWDWO").unwrap()),
            "full control except delete child, delete tree"
        );
    }

    #[test]
    fn every_right_name_has_a_guid() {
        assert_eq!(more_rights().count(), MORE_RIGHTS.lines().count());
        assert!(more_rights().any(|(n, _, k)| {
            n == "DS-Validated-Write-Computer" && k == GuidKind::ValidatedWrite
        }));
    }

    #[test]
    fn well_known_names() {
        assert_eq!(
            well_known_name(&well_known::authenticated_users()),
            Some("NT AUTHORITY\\Authenticated Users")
        );
        assert_eq!(well_known_name(&dom()), None);
        assert_eq!(escape_bytes(&[1, 0xab]), "\\01\\ab");
    }
}
