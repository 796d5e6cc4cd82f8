//! `kauri dns`: the zones and records of AD-integrated DNS, in the spirit of `samba-tool
//! dns`, on a data folder or a server. Records are read and written as the directory
//! holds them (MS-DNSP `dnsRecord` values on `dnsNode` objects), with LDAP's atomic value
//! adds and deletes, so a command never overwrites a change made at the same time.

use anyhow::{anyhow, bail, Context, Result};
use kauri_db::{Modification, ModifyOp};
use kauri_dns_proto::dnsp::{self, Body, DnsProperty, DnsRecord};
use kauri_dns_proto::rdata::{self, rtype};
use kauri_dns_proto::{Name, RData, Soa};
use kauri_domain::directory::now_secs;
use kauri_domain::dns::nodes::{allow_update, default_zone_properties, zone_record, RANK_ZONE};
use kauri_domain::dns::scavenge::is_stale;
use kauri_domain::dns::ZoneInfo;
use serde_json::{json, Value};

use super::output;
use super::target::{is_code, Scope, Target};

/// The default TTL of records added by hand (samba-tool's).
const DEFAULT_TTL: u32 = 900;

/// `kauri dns …`.
#[derive(Debug, clap::Subcommand)]
pub enum DnsCommand {
    /// The zones stored in the directory.
    Zonelist,
    /// A zone's settings and SOA.
    Zoneinfo {
        /// The zone, e.g. samdom.example.com.
        zone: String,
    },
    /// The records of a name (`@` for the zone's apex; ALL for every type).
    Query {
        /// The zone.
        zone: String,
        /// The name, relative to the zone or fully qualified.
        name: String,
        /// The record type: A, AAAA, CNAME, NS, SOA, SRV, PTR, MX, TXT or ALL.
        rtype: String,
    },
    /// Add a (static) record. SRV data is "target port priority weight", MX "host
    /// preference", SOA "mname rname serial refresh retry expire minimum".
    Add {
        /// The zone.
        zone: String,
        /// The name.
        name: String,
        /// The record type.
        rtype: String,
        /// The data.
        data: String,
        /// Time to live in seconds.
        #[arg(long, default_value_t = DEFAULT_TTL)]
        ttl: u32,
    },
    /// Replace a record's data.
    Update {
        /// The zone.
        zone: String,
        /// The name.
        name: String,
        /// The record type.
        rtype: String,
        /// The current data.
        old: String,
        /// The new data.
        new: String,
    },
    /// Delete a record.
    Delete {
        /// The zone.
        zone: String,
        /// The name.
        name: String,
        /// The record type.
        rtype: String,
        /// The data.
        data: String,
    },
    /// Create a zone (primary, secure updates only), with its SOA and NS.
    Zonecreate {
        /// The zone.
        zone: String,
        /// Store it in ForestDnsZones (replicated to the whole forest) instead of
        /// DomainDnsZones.
        #[arg(long)]
        forest: bool,
    },
    /// Delete a zone and all its names.
    Zonedelete {
        /// The zone.
        zone: String,
    },
    /// Show or change a zone's aging and dynamic-update settings.
    Aging {
        /// The zone.
        zone: String,
        /// Turn aging and scavenging on or off.
        #[arg(long, value_parser = ["on", "off"])]
        aging: Option<String>,
        /// Hours after a refresh before a record's timestamp is refreshed again.
        #[arg(long)]
        no_refresh: Option<u32>,
        /// Hours after the no-refresh interval before a record is stale.
        #[arg(long)]
        refresh: Option<u32>,
        /// Dynamic updates: none, nonsecure (unsigned too) or secure.
        #[arg(long, value_parser = ["none", "nonsecure", "secure"])]
        allow_update: Option<String>,
    },
    /// Remove stale dynamic records now (aging zones only), tombstone names left empty and
    /// purge old tombstones.
    Scavenge {
        /// Required: scavenging happens now, not on the server's schedule.
        #[arg(long)]
        now: bool,
        /// Report what would be removed and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Days a tombstone is kept before it is purged.
        #[arg(long, default_value_t = 14)]
        tombstone_days: u32,
    },
}

/// Where the zones are, for a target's domain.
struct Containers {
    domain: String,
    forest: String,
    legacy: String,
}

fn containers(t: &dyn Target) -> Containers {
    let d = &t.domain().dn;
    Containers {
        domain: format!("CN=MicrosoftDNS,DC=DomainDnsZones,{d}"),
        forest: format!("CN=MicrosoftDNS,DC=ForestDnsZones,{d}"),
        legacy: format!("CN=MicrosoftDNS,CN=System,{d}"),
    }
}

/// A zone found: its name, DN, partition and settings.
struct FoundZone {
    info: ZoneInfo,
    partition: &'static str,
}

fn zones(t: &mut dyn Target) -> Result<Vec<FoundZone>> {
    let c = containers(t);
    let mut out: Vec<FoundZone> = Vec::new();
    for (base, partition) in [
        (c.domain, "DomainDnsZones"),
        (c.forest, "ForestDnsZones"),
        (c.legacy, "Legacy"),
    ] {
        let found = match t.search_all(
            &base,
            Scope::One,
            "(objectClass=dnsZone)",
            &["dc", "dnsProperty"],
        ) {
            Ok(f) => f,
            Err(e) if is_code(&e, 32) => continue,
            Err(e) => return Err(e),
        };
        for f in found {
            let Some(name) = f.text("dc") else { continue };
            if name.starts_with("..") || name.eq_ignore_ascii_case("RootDNSServers") {
                continue;
            }
            if out.iter().any(|z| z.info.name.eq_ignore_ascii_case(&name)) {
                continue;
            }
            let properties = f
                .bytes("dnsProperty")
                .iter()
                .filter_map(|b| DnsProperty::decode(b).ok())
                .collect();
            let dn = kauri_db::Dn::parse(&f.dn).map_err(|e| anyhow!("{}: {e}", f.dn))?;
            out.push(FoundZone {
                info: ZoneInfo {
                    name: name.to_ascii_lowercase(),
                    dn,
                    id: 0,
                    properties,
                },
                partition,
            });
        }
    }
    out.sort_by(|a, b| a.info.name.cmp(&b.info.name));
    Ok(out)
}

fn zone(t: &mut dyn Target, name: &str) -> Result<FoundZone> {
    let want = name.trim_end_matches('.').to_ascii_lowercase();
    zones(t)?
        .into_iter()
        .find(|z| z.info.name == want)
        .ok_or_else(|| anyhow!("there is no zone {want} (kauri dns zonelist lists them)"))
}

/// A name relative to its zone: `@`, a relative name, or a fully qualified one.
fn relative(zone: &str, name: &str) -> Result<String> {
    let n = name.trim_end_matches('.');
    if n == "@" || n.eq_ignore_ascii_case(zone) {
        return Ok("@".into());
    }
    let suffix = format!(".{zone}");
    let rel = if n.len() > suffix.len() && n.to_ascii_lowercase().ends_with(&suffix) {
        &n[..n.len() - suffix.len()]
    } else {
        n
    };
    if rel.is_empty() || Name::parse(&format!("{rel}.{zone}")).is_err() {
        bail!("'{name}' is not a name in {zone}");
    }
    Ok(rel.to_string())
}

fn node_dn(zone: &FoundZone, rel: &str) -> String {
    let value = kauri_db::Rdn::new("DC", rel)
        .map(|r| r.to_string())
        .unwrap_or_else(|_| format!("DC={rel}"));
    format!("{value},{}", zone.info.dn)
}

/// A node's records, each with the stored value it was decoded from.
type Stored = Vec<(Vec<u8>, DnsRecord)>;

/// The node's records and whether it is a tombstone, if it exists.
fn read_node(t: &mut dyn Target, dn: &str) -> Result<Option<(Stored, bool)>> {
    let Some(f) = t.read(dn, &["dnsRecord", "dNSTombstoned"])? else {
        return Ok(None);
    };
    let records = f
        .bytes("dnsRecord")
        .into_iter()
        .filter_map(|b| DnsRecord::decode(&b).ok().map(|r| (b, r)))
        .collect();
    let tomb = f
        .text("dNSTombstoned")
        .is_some_and(|v| v.eq_ignore_ascii_case("TRUE"));
    Ok(Some((records, tomb)))
}

fn parse_type(t: &str) -> Result<u16> {
    if t.eq_ignore_ascii_case("ALL") {
        return Ok(rtype::ANY);
    }
    rdata::type_from_name(t).ok_or_else(|| anyhow!("unknown record type {t}"))
}

fn parse_data(t: u16, data: &str) -> Result<RData> {
    RData::parse_text(t, data).map_err(|e| anyhow!("{} data '{data}': {e}", rdata::type_name(t)))
}

fn record_json(r: &DnsRecord) -> Value {
    match &r.body {
        Body::Record(d) => json!({
            "type": rdata::type_name(d.rtype()),
            "data": d.samba_text(),
            "ttl": r.ttl,
            "serial": r.serial,
            "timestamp": r.timestamp,
            "aging": if r.timestamp == 0 { "static" } else { "dynamic" },
        }),
        Body::Tombstone { entombed } => json!({ "type": "TOMBSTONE", "entombed": entombed }),
    }
}

/// Moves the zone's SOA serial after a change.
fn bump_serial(t: &mut dyn Target, zone: &FoundZone) -> Result<()> {
    let dn = node_dn(zone, "@");
    let Some((records, _)) = read_node(t, &dn)? else {
        return Ok(());
    };
    for (raw, r) in records {
        if let Body::Record(RData::Soa(s)) = &r.body {
            let mut new = r.clone();
            let mut soa = s.clone();
            soa.serial = soa.serial.wrapping_add(1).max(1);
            new.serial = soa.serial;
            new.body = Body::Record(RData::Soa(soa));
            swap_record(t, &dn, raw, &new)?;
        }
    }
    Ok(())
}

/// A change to a node's `dnsRecord` values.
fn records_mod(op: ModifyOp, values: Vec<Vec<u8>>) -> Modification {
    Modification {
        op,
        attr: "dnsRecord".into(),
        values,
    }
}

/// Sets whether a node is a tombstone.
fn tombstoned_mod(yes: bool) -> Modification {
    Modification {
        op: ModifyOp::Replace,
        attr: "dNSTombstoned".into(),
        values: vec![if yes {
            b"TRUE".to_vec()
        } else {
            b"FALSE".to_vec()
        }],
    }
}

/// Replaces one stored record with another, atomically: the delete fails when the old
/// value changed meanwhile.
fn swap_record(t: &mut dyn Target, dn: &str, old: Vec<u8>, new: &DnsRecord) -> Result<()> {
    t.modify(
        dn,
        vec![
            records_mod(ModifyOp::Delete, vec![old]),
            records_mod(ModifyOp::Add, vec![new.encode()]),
        ],
    )
}

/// Adds `record` to a name, creating (or reviving) its node.
fn add_record(t: &mut dyn Target, zone: &FoundZone, rel: &str, record: DnsRecord) -> Result<()> {
    let dn = node_dn(zone, rel);
    match read_node(t, &dn)? {
        None => {
            t.add(
                &dn,
                vec![
                    (
                        "objectClass".into(),
                        vec![b"top".to_vec(), b"dnsNode".to_vec()],
                    ),
                    ("dnsRecord".into(), vec![record.encode()]),
                    ("dNSTombstoned".into(), vec![b"FALSE".to_vec()]),
                ],
            )?;
        }
        Some((_, true)) => {
            t.modify(
                &dn,
                vec![
                    records_mod(ModifyOp::Replace, vec![record.encode()]),
                    tombstoned_mod(false),
                ],
            )?;
        }
        Some((records, false)) => {
            let Body::Record(new) = &record.body else {
                bail!("only records can be added");
            };
            if records
                .iter()
                .any(|(_, r)| matches!(&r.body, Body::Record(d) if d == new))
            {
                bail!("the record already exists");
            }
            let cname = |d: &RData| matches!(d, RData::Cname(_));
            let others = records
                .iter()
                .any(|(_, r)| matches!(&r.body, Body::Record(d) if cname(d) != cname(new)));
            if others
                || (cname(new)
                    && records
                        .iter()
                        .any(|(_, r)| matches!(&r.body, Body::Record(d) if cname(d))))
            {
                bail!("a CNAME cannot share its name with other records");
            }
            t.modify(&dn, vec![records_mod(ModifyOp::Add, vec![record.encode()])])?;
        }
    }
    bump_serial(t, zone)
}

/// Removes the record holding `data` from a name (tombstoning the name when it was the
/// last); returns the record removed.
fn remove_record(
    t: &mut dyn Target,
    zone: &FoundZone,
    rel: &str,
    data: &RData,
) -> Result<DnsRecord> {
    let dn = node_dn(zone, rel);
    let Some((records, false)) = read_node(t, &dn)? else {
        bail!("{rel} has no records in {}", zone.info.name);
    };
    let Some((raw, found)) = records
        .iter()
        .find(|(_, r)| matches!(&r.body, Body::Record(d) if d == data))
        .cloned()
    else {
        bail!(
            "{rel} has no such {} record",
            rdata::type_name(data.rtype())
        );
    };
    if records.len() == 1 {
        let tomb = kauri_domain::dns::nodes::tombstone_record(now_secs());
        t.modify(
            &dn,
            vec![
                records_mod(ModifyOp::Delete, vec![raw]),
                records_mod(ModifyOp::Add, vec![tomb.encode()]),
                tombstoned_mod(true),
            ],
        )?;
    } else {
        t.modify(&dn, vec![records_mod(ModifyOp::Delete, vec![raw])])?;
    }
    Ok(found)
}

fn property_u32(z: &ZoneInfo, id: u32) -> Option<u32> {
    z.properties
        .iter()
        .find(|p| p.id == id)
        .and_then(|p| p.u32_value())
}

fn update_name(v: u8) -> &'static str {
    match v {
        allow_update::NONE => "none",
        allow_update::UNSECURE => "nonsecure",
        _ => "secure",
    }
}

/// Runs a `kauri dns` command.
#[allow(clippy::too_many_lines)]
pub fn run(t: &mut dyn Target, what: &DnsCommand, json_out: bool) -> Result<()> {
    match what {
        DnsCommand::Zonelist => {
            let zs = zones(t)?;
            if json_out {
                let v: Vec<Value> = zs
                    .iter()
                    .map(|z| {
                        json!({
                            "zone": z.info.name,
                            "dn": z.info.dn.to_string(),
                            "partition": z.partition,
                            "allow_update": update_name(z.info.allow_update()),
                            "aging": z.info.aging(),
                        })
                    })
                    .collect();
                output::print_json(&json!(v));
            } else {
                let rows: Vec<Vec<String>> = zs
                    .iter()
                    .map(|z| {
                        vec![
                            z.info.name.clone(),
                            z.partition.to_string(),
                            update_name(z.info.allow_update()).to_string(),
                            if z.info.aging() { "on" } else { "off" }.to_string(),
                        ]
                    })
                    .collect();
                output::table(&["ZONE", "PARTITION", "UPDATES", "AGING"], &rows);
            }
        }
        DnsCommand::Zoneinfo { zone: name } => {
            let z = zone(t, name)?;
            let soa = read_node(t, &node_dn(&z, "@"))?
                .map(|(r, _)| r)
                .unwrap_or_default()
                .into_iter()
                .find_map(|(_, r)| match r.body {
                    Body::Record(d @ RData::Soa(_)) => Some(d),
                    _ => None,
                });
            let info = json!({
                "zone": z.info.name,
                "dn": z.info.dn.to_string(),
                "partition": z.partition,
                "zone_type": property_u32(&z.info, dnsp::ZONE_TYPE).unwrap_or(1),
                "allow_update": update_name(z.info.allow_update()),
                "aging": z.info.aging(),
                "no_refresh_hours": z.info.no_refresh_hours(),
                "refresh_hours": z.info.refresh_hours(),
                "aging_enabled_time": z.info.aging_enabled_hours(),
                "soa": soa.map(|s| s.samba_text()),
            });
            if json_out {
                output::print_json(&info);
            } else if let Value::Object(m) = &info {
                for (k, v) in m {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => "-".into(),
                        other => other.to_string(),
                    };
                    println!("{k}: {text}");
                }
            }
        }
        DnsCommand::Query {
            zone: zname,
            name,
            rtype: ty,
        } => {
            let z = zone(t, zname)?;
            let rel = relative(&z.info.name, name)?;
            let want = parse_type(ty)?;
            let records: Vec<DnsRecord> = match read_node(t, &node_dn(&z, &rel))? {
                Some((r, false)) => r.into_iter().map(|(_, r)| r).collect(),
                _ => Vec::new(),
            };
            let matching: Vec<&DnsRecord> = records
                .iter()
                .filter(|r| matches!(&r.body, Body::Record(d) if want == rtype::ANY || d.rtype() == want))
                .collect();
            if matching.is_empty() {
                bail!(
                    "no {} records for {rel} in {}",
                    ty.to_ascii_uppercase(),
                    z.info.name
                );
            }
            if json_out {
                output::print_json(&json!({
                    "zone": z.info.name,
                    "name": rel,
                    "records": matching.iter().map(|r| record_json(r)).collect::<Vec<_>>(),
                }));
            } else {
                let rows: Vec<Vec<String>> = matching
                    .iter()
                    .filter_map(|r| match &r.body {
                        Body::Record(d) => Some(vec![
                            rel.clone(),
                            rdata::type_name(d.rtype()),
                            r.ttl.to_string(),
                            if r.timestamp == 0 {
                                "static".into()
                            } else {
                                format!("dynamic ({})", r.timestamp)
                            },
                            d.samba_text(),
                        ]),
                        Body::Tombstone { .. } => None,
                    })
                    .collect();
                output::table(&["NAME", "TYPE", "TTL", "AGING", "DATA"], &rows);
            }
        }
        DnsCommand::Add {
            zone: zname,
            name,
            rtype: ty,
            data,
            ttl,
        } => {
            let z = zone(t, zname)?;
            let rel = relative(&z.info.name, name)?;
            let d = parse_data(parse_type(ty)?, data)?;
            add_record(t, &z, &rel, zone_record(d, *ttl, 0, 0))?;
            output::done(
                json_out,
                "Record added successfully",
                json!({"zone": z.info.name, "name": rel}),
            );
        }
        DnsCommand::Update {
            zone: zname,
            name,
            rtype: ty,
            old,
            new,
        } => {
            let z = zone(t, zname)?;
            let rel = relative(&z.info.name, name)?;
            let t_code = parse_type(ty)?;
            let (old_d, new_d) = (parse_data(t_code, old)?, parse_data(t_code, new)?);
            let dn = node_dn(&z, &rel);
            let Some((records, false)) = read_node(t, &dn)? else {
                bail!("{rel} has no records in {}", z.info.name);
            };
            let Some((raw, found)) = records
                .into_iter()
                .find(|(_, r)| matches!(&r.body, Body::Record(d) if *d == old_d))
            else {
                bail!("{rel} has no such {} record", ty.to_ascii_uppercase());
            };
            let mut replaced = found.clone();
            replaced.body = Body::Record(new_d);
            replaced.rank = RANK_ZONE;
            swap_record(t, &dn, raw, &replaced)?;
            bump_serial(t, &z)?;
            output::done(
                json_out,
                "Record updated successfully",
                json!({"zone": z.info.name, "name": rel}),
            );
        }
        DnsCommand::Delete {
            zone: zname,
            name,
            rtype: ty,
            data,
        } => {
            let z = zone(t, zname)?;
            let rel = relative(&z.info.name, name)?;
            let d = parse_data(parse_type(ty)?, data)?;
            remove_record(t, &z, &rel, &d)?;
            bump_serial(t, &z)?;
            output::done(
                json_out,
                "Record deleted successfully",
                json!({"zone": z.info.name, "name": rel}),
            );
        }
        DnsCommand::Zonecreate {
            zone: zname,
            forest,
        } => {
            let name = zname.trim_end_matches('.').to_ascii_lowercase();
            Name::parse(&name).map_err(|e| anyhow!("'{zname}' is not a zone name: {e}"))?;
            if zones(t)?.iter().any(|z| z.info.name == name) {
                bail!("the zone {name} already exists");
            }
            // The new zone's primary is the server the domain zone names.
            let domain_zone = t.domain().dns_name.clone();
            let primary = zone(t, &domain_zone)
                .ok()
                .and_then(|dz| read_node(t, &node_dn(&dz, "@")).ok().flatten())
                .and_then(|(r, _)| {
                    r.into_iter().find_map(|(_, r)| match r.body {
                        Body::Record(RData::Soa(s)) => Some(s.mname),
                        _ => None,
                    })
                })
                .context("the domain zone has no SOA to take the primary server from")?;
            let c = containers(t);
            let container = if *forest { c.forest } else { c.domain };
            let dn = format!(
                "{},{container}",
                kauri_db::Rdn::new("DC", &name).map_err(|e| anyhow!("{e}"))?
            );
            t.add(
                &dn,
                vec![
                    (
                        "objectClass".into(),
                        vec![b"top".to_vec(), b"dnsZone".to_vec()],
                    ),
                    (
                        "dnsProperty".into(),
                        default_zone_properties()
                            .iter()
                            .map(DnsProperty::encode)
                            .collect(),
                    ),
                ],
            )?;
            let z = zone(t, &name)?;
            let soa = RData::Soa(Soa {
                mname: primary.clone(),
                rname: Name::parse(&format!("hostmaster.{name}")).map_err(|e| anyhow!("{e}"))?,
                serial: 1,
                refresh: 900,
                retry: 600,
                expire: 86400,
                minimum: 3600,
            });
            let apex = node_dn(&z, "@");
            t.add(
                &apex,
                vec![
                    (
                        "objectClass".into(),
                        vec![b"top".to_vec(), b"dnsNode".to_vec()],
                    ),
                    (
                        "dnsRecord".into(),
                        vec![
                            zone_record(soa, 3600, 1, 0).encode(),
                            zone_record(RData::Ns(primary), 3600, 1, 0).encode(),
                        ],
                    ),
                    ("dNSTombstoned".into(), vec![b"FALSE".to_vec()]),
                ],
            )?;
            output::done(
                json_out,
                &format!("Zone {name} created successfully"),
                json!({"zone": name, "dn": dn}),
            );
        }
        DnsCommand::Zonedelete { zone: zname } => {
            let z = zone(t, zname)?;
            t.delete(&z.info.dn.to_string(), true)?;
            output::done(
                json_out,
                &format!("Zone {} deleted successfully", z.info.name),
                json!({"zone": z.info.name}),
            );
        }
        DnsCommand::Aging {
            zone: zname,
            aging,
            no_refresh,
            refresh,
            allow_update: upd,
        } => {
            let z = zone(t, zname)?;
            let mut props = z.info.properties.clone();
            let mut set = |p: DnsProperty| {
                props.retain(|x| x.id != p.id);
                props.push(p);
            };
            if let Some(a) = aging {
                let on = a == "on";
                set(DnsProperty::with_u32(dnsp::AGING_STATE, u32::from(on)));
                if on && !z.info.aging() {
                    set(DnsProperty::with_u32(
                        dnsp::AGING_ENABLED_TIME,
                        dnsp::hours_since_1601(now_secs()),
                    ));
                }
            }
            if let Some(h) = no_refresh {
                set(DnsProperty::with_u32(dnsp::NOREFRESH_INTERVAL, *h));
            }
            if let Some(h) = refresh {
                set(DnsProperty::with_u32(dnsp::REFRESH_INTERVAL, *h));
            }
            if let Some(u) = upd {
                let v = match u.as_str() {
                    "none" => allow_update::NONE,
                    "nonsecure" => allow_update::UNSECURE,
                    _ => allow_update::SECURE,
                };
                set(DnsProperty::with_u8(dnsp::ALLOW_UPDATE, v));
            }
            let changed =
                aging.is_some() || no_refresh.is_some() || refresh.is_some() || upd.is_some();
            if changed {
                props.sort_by_key(|p| p.id);
                t.modify(
                    &z.info.dn.to_string(),
                    vec![Modification {
                        op: ModifyOp::Replace,
                        attr: "dnsProperty".into(),
                        values: props.iter().map(DnsProperty::encode).collect(),
                    }],
                )?;
            }
            let z = zone(t, zname)?;
            let info = json!({
                "zone": z.info.name,
                "aging": z.info.aging(),
                "no_refresh_hours": z.info.no_refresh_hours(),
                "refresh_hours": z.info.refresh_hours(),
                "allow_update": update_name(z.info.allow_update()),
            });
            if json_out {
                output::print_json(&info);
            } else {
                println!(
                    "{}: aging {}, no-refresh {} h, refresh {} h, updates {}",
                    z.info.name,
                    if z.info.aging() { "on" } else { "off" },
                    z.info.no_refresh_hours(),
                    z.info.refresh_hours(),
                    update_name(z.info.allow_update())
                );
            }
        }
        DnsCommand::Scavenge {
            now,
            dry_run,
            tombstone_days,
        } => {
            if !now {
                bail!("scavenging runs on the server's schedule; pass --now to run it here");
            }
            scavenge(t, *dry_run, *tombstone_days, json_out)?;
        }
    }
    Ok(())
}

/// One scavenging pass through the target (the server runs the same rules itself).
fn scavenge(t: &mut dyn Target, dry_run: bool, tombstone_days: u32, json_out: bool) -> Result<()> {
    let now = now_secs();
    let now_hours = dnsp::hours_since_1601(now);
    let purge_before =
        dnsp::filetime_from_unix(now.saturating_sub(u64::from(tombstone_days) * 86_400));
    let mut removed = Vec::new();
    let mut tombstoned = Vec::new();
    let mut purged = Vec::new();
    for z in zones(t)? {
        let nodes = t.search_all(
            &z.info.dn.to_string(),
            Scope::One,
            "(objectClass=dnsNode)",
            &["dc", "dnsRecord", "dNSTombstoned"],
        )?;
        let mut changed = false;
        for n in nodes {
            let rel = n.text("dc").unwrap_or_default();
            let fq = if rel == "@" {
                z.info.name.clone()
            } else {
                format!("{rel}.{}", z.info.name)
            };
            let records: Vec<(Vec<u8>, DnsRecord)> = n
                .bytes("dnsRecord")
                .into_iter()
                .filter_map(|b| DnsRecord::decode(&b).ok().map(|r| (b, r)))
                .collect();
            let tomb = n
                .text("dNSTombstoned")
                .is_some_and(|v| v.eq_ignore_ascii_case("TRUE"));
            if tomb {
                let old = records
                    .iter()
                    .any(|(_, r)| matches!(r.body, Body::Tombstone { entombed } if entombed < purge_before));
                if old {
                    purged.push(fq);
                    if !dry_run {
                        t.delete(&n.dn, false)?;
                    }
                }
                continue;
            }
            let stale: Vec<&(Vec<u8>, DnsRecord)> = records
                .iter()
                .filter(|(_, r)| is_stale(r.timestamp, &z.info, now_hours))
                .collect();
            if stale.is_empty() {
                continue;
            }
            for (_, r) in &stale {
                removed.push(json!({"name": fq, "record": record_json(r)}));
            }
            let all = stale.len() == records.len();
            if all {
                tombstoned.push(fq.clone());
            }
            if dry_run {
                continue;
            }
            let mut mods = vec![records_mod(
                ModifyOp::Delete,
                stale.iter().map(|(b, _)| b.clone()).collect(),
            )];
            if all {
                mods.push(records_mod(
                    ModifyOp::Add,
                    vec![kauri_domain::dns::nodes::tombstone_record(now).encode()],
                ));
                mods.push(tombstoned_mod(true));
            }
            t.modify(&n.dn, mods)?;
            changed = true;
        }
        if changed {
            bump_serial(t, &z)?;
        }
    }
    if json_out {
        output::print_json(&json!({
            "dry_run": dry_run,
            "removed": removed,
            "tombstoned": tombstoned,
            "purged": purged,
        }));
    } else {
        let verb = if dry_run { "would remove" } else { "removed" };
        println!(
            "{verb} {} stale records; {} names {}; {} tombstones {}",
            removed.len(),
            tombstoned.len(),
            if dry_run {
                "would be tombstoned"
            } else {
                "tombstoned"
            },
            purged.len(),
            if dry_run { "would be purged" } else { "purged" },
        );
        for r in &removed {
            println!(
                "  {} {}",
                r["name"].as_str().unwrap_or_default(),
                r["record"]["data"].as_str().unwrap_or_default()
            );
        }
    }
    Ok(())
}
