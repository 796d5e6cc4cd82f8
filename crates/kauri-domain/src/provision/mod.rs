//! Provisioning: the objects a new forest's first domain controller starts
//! with — the domain, configuration and schema naming contexts, the
//! well-known containers, accounts and groups, and this DC's own objects.
//!
//! [`entries`] is a pure function from [`ProvisionParams`] and a [`Schema`]
//! to entries, in an order the validating write path can add them in:
//! parents before children, and targets of linked attributes (`member`,
//! `serverReference`, `hasMasterNCs`, …) before the entries naming them. The
//! write path adds the attributes every new object gets (`objectGUID`,
//! `whenCreated`, `whenChanged`, `uSNCreated`, `uSNChanged`,
//! `instanceType`, `name`, `distinguishedName`, `objectCategory`,
//! `nTSecurityDescriptor`, `sAMAccountType`); everything else is here.
//! [`schema_from_entries`] reads a schema back from the Schema NC.
//!
//! The content follows MS-ADTS section 6.1 (well-known objects, naming
//! contexts, FSMO roles) and the defaults Active Directory gives a new
//! forest at the Windows Server 2016 functional level.

mod build;
mod configuration;
mod dc;
pub mod descriptors;
mod dns;
mod layout;
mod principals;
mod schema_objects;
#[cfg(test)]
mod tests;

pub use dns::{dns_partition_entries, DnsPartitions};

use kauri_db::dn::DnError;
use kauri_db::{Dn, Entry, Rdn};

use crate::schema::{Schema, SchemaError};
use crate::sid::{Sid, SidError};

/// `msDS-Behavior-Version` of the forest, domain and DC: Windows Server 2016.
pub const BEHAVIOR_VERSION: i64 = 7;
/// `objectVersion` of the Schema NC head for the Windows Server 2016 schema.
pub const SCHEMA_OBJECT_VERSION: i64 = 88;
/// RID of the first DC's computer account, the first RID after the
/// well-known range.
pub const DC_RID: u32 = 1000;
/// Last RID of the pool the first DC starts with (first: [`crate::sid::rid::FIRST_ALLOCATED`]).
pub const DC_POOL_LAST: u32 = 1599;
/// Highest RID the RID master hands out (a 30-bit RID space).
pub const MAX_RID: u32 = 0x3FFF_FFFF;

/// What a new forest is named after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionParams {
    /// The DNS name of the domain, e.g. `SAMDOM.EXAMPLE.COM`.
    pub realm: String,
    /// The NetBIOS (pre-Windows 2000) domain name, e.g. `SAMDOM`.
    pub netbios_domain: String,
    /// The DC's host name, e.g. `DC1`.
    pub dc_name: String,
    /// The domain SID, `S-1-5-21-x-y-z`.
    pub domain_sid: Sid,
    /// The site the DC is placed in, e.g. `Default-First-Site-Name`.
    pub site: String,
}

/// What a DC's own objects are numbered with: its account's RID and the RID pool its RID
/// Set starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcSpec {
    /// RID of the DC's computer account.
    pub rid: u32,
    /// First RID of its pool.
    pub pool_first: u32,
    /// Last RID of its pool.
    pub pool_last: u32,
}

impl DcSpec {
    /// The first DC of a new forest: RID 1000 and the pool 1100–1599.
    pub fn first() -> DcSpec {
        DcSpec {
            rid: DC_RID,
            pool_first: crate::sid::rid::FIRST_ALLOCATED,
            pool_last: DC_POOL_LAST,
        }
    }
}

/// One entry to add, and whether it heads a naming context (and so is
/// added as an NC root rather than below an existing entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionEntry {
    /// The entry with its attributes.
    pub entry: Entry,
    /// Whether the entry is the head of a naming context.
    pub naming_context: bool,
}

/// Why a forest could not be provisioned, or a schema not read back.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// A parameter is not usable as given.
    #[error("invalid {what}: {reason}")]
    InvalidParam {
        /// The parameter.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The schema lacks a class the provisioned tree needs.
    #[error("the schema has no class '{0}'")]
    UnknownClass(String),
    /// The schema lacks an attribute the provisioned tree sets.
    #[error("{dn}: the schema has no attribute '{attr}'")]
    UnknownAttribute {
        /// The entry carrying the attribute.
        dn: String,
        /// The attribute.
        attr: String,
    },
    /// A name could not be built.
    #[error("cannot build a DN: {0}")]
    Dn(#[from] DnError),
    /// A well-known SID could not be built.
    #[error(transparent)]
    Sid(#[from] SidError),
    /// A schema object could not be encoded or decoded.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

/// The domain NC's DN for a DNS domain name: `SAMDOM.EXAMPLE.COM` gives
/// `DC=samdom,DC=example,DC=com`. Empty labels are skipped.
pub fn domain_dn(realm: &str) -> Dn {
    let rdns = realm
        .split('.')
        .filter(|l| !l.is_empty())
        .filter_map(|l| Rdn::new("DC", &l.to_ascii_lowercase()).ok())
        .collect();
    Dn::from_rdns(rdns)
}

/// Every entry of a new forest, in the order to add them (see the module
/// documentation). Each entry's classes and attributes are checked against
/// `schema`, which also supplies the Schema NC's `attributeSchema` and
/// `classSchema` objects.
pub fn entries(
    params: &ProvisionParams,
    schema: &Schema,
) -> Result<Vec<ProvisionEntry>, ProvisionError> {
    let names = Names::new(params)?;
    let mut tree = build::Tree::new(schema);
    layout::domain(&mut tree, &names, params)?;
    principals::add(&mut tree, &names, params)?;
    dc::account(&mut tree, &names, params, &DcSpec::first())?;
    configuration::heads(&mut tree, &names)?;
    configuration::add(&mut tree, &names)?;
    dc::settings(&mut tree, &names)?;
    configuration::partitions(&mut tree, &names)?;
    schema_objects::add(&mut tree, &names, schema)?;
    let mut out = tree.finish();
    descriptors::attach(&mut out, &domain_dn(&params.realm));
    Ok(out)
}

/// The objects of a DC joining an existing domain (a restored DC is one): its computer
/// account with its RID Set below `OU=Domain Controllers`, then its server object and
/// `CN=NTDS Settings` in its site, in the order to add them. The site and the containers
/// above these objects must exist.
pub fn dc_entries(
    params: &ProvisionParams,
    schema: &Schema,
    spec: &DcSpec,
) -> Result<Vec<ProvisionEntry>, ProvisionError> {
    let names = Names::new(params)?;
    let mut tree = build::Tree::new(schema);
    dc::account(&mut tree, &names, params, spec)?;
    dc::settings(&mut tree, &names)?;
    let mut out = tree.finish();
    descriptors::attach(&mut out, &domain_dn(&params.realm));
    Ok(out)
}

/// Reads a schema back from Schema NC entries (`attributeSchema` and
/// `classSchema` objects; other entries are ignored), with the checks the
/// schema loaders apply, so a server can start from its stored schema.
pub fn schema_from_entries<'a>(
    entries: impl Iterator<Item = &'a Entry>,
) -> Result<Schema, ProvisionError> {
    Ok(Schema::load_entries(entries)?)
}

/// The names the tree is built from, derived once from the parameters.
pub(crate) struct Names {
    /// Lowercase DNS domain name.
    pub dns_domain: String,
    /// Uppercase NetBIOS domain name.
    pub netbios: String,
    /// The DC's host name as given.
    pub dc_name: String,
    /// The DC's fully qualified DNS name, lowercase.
    pub dc_fqdn: String,
    /// The domain NC head.
    pub domain: Dn,
    /// The configuration NC head.
    pub config: Dn,
    /// The schema NC head.
    pub schema: Dn,
    /// `CN=Users` of the domain.
    pub users: Dn,
    /// `CN=System` of the domain.
    pub system: Dn,
    /// `OU=Domain Controllers` of the domain.
    pub dc_ou: Dn,
    /// The DC's computer account.
    pub dc: Dn,
    /// The DC's site.
    pub site: Dn,
    /// The DC's server object in its site.
    pub server: Dn,
    /// The DC's `nTDSDSA` object, which FSMO roles name.
    pub ntds: Dn,
}

/// `CN=<value>,<parent>`.
pub(crate) fn cn(parent: &Dn, value: &str) -> Result<Dn, ProvisionError> {
    Ok(parent.child(Rdn::new("CN", value)?))
}

/// A parameter error.
fn bad(what: &'static str, reason: impl Into<String>) -> ProvisionError {
    ProvisionError::InvalidParam {
        what,
        reason: reason.into(),
    }
}

/// Checks a NetBIOS-style name: 1 to 15 ASCII letters, digits, `-` or `_`.
fn check_netbios(what: &'static str, name: &str) -> Result<(), ProvisionError> {
    if name.is_empty() || name.len() > 15 {
        return Err(bad(what, format!("'{name}' must be 1 to 15 characters")));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(bad(
            what,
            format!("'{name}' may hold only letters, digits, '-' and '_'"),
        ));
    }
    Ok(())
}

/// Checks a DNS realm and a NetBIOS domain name (a new domain's, or a renamed one's).
pub(crate) fn check_names(realm: &str, netbios: &str) -> Result<(), ProvisionError> {
    let labels: Vec<&str> = realm.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if realm.len() > 253 || !labels.iter().all(label_ok) {
        return Err(bad("realm", format!("'{realm}' is not a DNS domain name")));
    }
    check_netbios("NetBIOS domain name", netbios)
}

/// Checks a DC's host name (1 to 15 letters, digits, `-` or `_`).
pub fn check_dc_name(name: &str) -> Result<(), ProvisionError> {
    check_netbios("DC name", name)
}

/// Checks the parameters a [`Names`] is derived from.
fn check(params: &ProvisionParams) -> Result<(), ProvisionError> {
    check_names(&params.realm, &params.netbios_domain)?;
    check_dc_name(&params.dc_name)?;
    if params.site.is_empty()
        || params.site.chars().count() > 63
        || params.site.chars().any(char::is_control)
    {
        return Err(bad(
            "site",
            format!("'{}' must be 1 to 63 printable characters", params.site),
        ));
    }
    let sid = &params.domain_sid;
    if sid.authority != 5 || sid.subs.len() != 4 || sid.subs.first() != Some(&21) {
        return Err(bad(
            "domain SID",
            format!("{sid} is not of the form S-1-5-21-x-y-z"),
        ));
    }
    Ok(())
}

impl Names {
    /// Derives every name from validated parameters.
    fn new(params: &ProvisionParams) -> Result<Names, ProvisionError> {
        check(params)?;
        let dns_domain = params.realm.to_ascii_lowercase();
        let domain = domain_dn(&dns_domain);
        let config = cn(&domain, "Configuration")?;
        let schema = cn(&config, "Schema")?;
        let dc_ou = domain.child(Rdn::new("OU", "Domain Controllers")?);
        let site = cn(&cn(&config, "Sites")?, &params.site)?;
        let server = cn(&cn(&site, "Servers")?, &params.dc_name)?;
        Ok(Names {
            dc_fqdn: format!("{}.{dns_domain}", params.dc_name.to_ascii_lowercase()),
            netbios: params.netbios_domain.to_ascii_uppercase(),
            dc_name: params.dc_name.clone(),
            users: cn(&domain, "Users")?,
            system: cn(&domain, "System")?,
            dc: cn(&dc_ou, &params.dc_name)?,
            ntds: cn(&server, "NTDS Settings")?,
            dns_domain,
            domain,
            config,
            schema,
            dc_ou,
            site,
            server,
        })
    }
}
