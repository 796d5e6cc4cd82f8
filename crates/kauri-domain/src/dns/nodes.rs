//! Reading and writing DNS data in the directory: zones with their settings, and the
//! record set of one name (a `dnsNode`), written in one modification of that node so a
//! change is whole or absent.

use kauri_db::{Dn, Entry, Modification, ModifyOp};
use kauri_dns_proto::dnsp::{self, Body, DnsProperty, DnsRecord};
use kauri_kv::Backend;

use super::layout::{DnsLayout, APEX};
use crate::directory::view::View;
use crate::directory::{Caller, Change, DirResult, Directory, Request};
use crate::sid::Sid;

/// AD's default no-refresh and refresh intervals, in hours (7 days each).
pub const DEFAULT_INTERVAL_HOURS: u32 = 168;

/// `fAllowUpdate` values (MS-DNSP 2.2.6.1.1 ZONE_UPDATE).
pub mod allow_update {
    /// No dynamic updates.
    pub const NONE: u8 = 0;
    /// Unsigned and secure updates.
    pub const UNSECURE: u8 = 1;
    /// Secure (GSS-TSIG) updates only: AD's default for integrated zones.
    pub const SECURE: u8 = 2;
}

/// A zone stored in the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneInfo {
    /// The zone's DNS name, lowercase (`samdom.example.com`).
    pub name: String,
    /// The `dnsZone` object.
    pub dn: Dn,
    /// Its record id.
    pub id: u64,
    /// Its `dnsProperty` values.
    pub properties: Vec<DnsProperty>,
}

impl ZoneInfo {
    fn property(&self, id: u32) -> Option<&DnsProperty> {
        self.properties.iter().find(|p| p.id == id)
    }

    fn u32_property(&self, id: u32, default: u32) -> u32 {
        self.property(id)
            .and_then(|p| p.u32_value())
            .unwrap_or(default)
    }

    /// Which dynamic updates the zone takes ([`allow_update`]).
    pub fn allow_update(&self) -> u8 {
        self.property(dnsp::ALLOW_UPDATE)
            .and_then(|p| p.u8_value())
            .unwrap_or(allow_update::SECURE)
    }

    /// Whether aging and scavenging are on.
    pub fn aging(&self) -> bool {
        self.u32_property(dnsp::AGING_STATE, 0) != 0
    }

    /// Hours after a refresh during which a record's timestamp is not refreshed again.
    pub fn no_refresh_hours(&self) -> u32 {
        self.u32_property(dnsp::NOREFRESH_INTERVAL, DEFAULT_INTERVAL_HOURS)
    }

    /// Hours after the no-refresh interval during which a record may be refreshed before
    /// it becomes stale.
    pub fn refresh_hours(&self) -> u32 {
        self.u32_property(dnsp::REFRESH_INTERVAL, DEFAULT_INTERVAL_HOURS)
    }

    /// When aging was turned on (hours since 1601), 0 when never: records may not be
    /// scavenged until a refresh interval has passed from then.
    pub fn aging_enabled_hours(&self) -> u32 {
        self.u32_property(dnsp::AGING_ENABLED_TIME, 0)
    }
}

/// The records of one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRecords {
    /// The `dnsNode` object.
    pub dn: Dn,
    /// Its record id.
    pub id: u64,
    /// Its records; a tombstoned node holds one [`Body::Tombstone`].
    pub records: Vec<DnsRecord>,
    /// `dNSTombstoned`: the name was deleted and waits to be purged.
    pub tombstoned: bool,
    /// Who owns the name: its creator through a secure update (or `None`: created by the
    /// server or an administrator, changeable by administrators only).
    pub owner: Option<Sid>,
}

impl NodeRecords {
    /// The live records (none for a tombstone).
    pub fn live(&self) -> impl Iterator<Item = &DnsRecord> {
        self.records
            .iter()
            .filter(|r| matches!(r.body, Body::Record(_)))
    }
}

/// The zone settings of a new zone: primary, secure updates only, aging off with AD's
/// default intervals.
pub fn default_zone_properties() -> Vec<DnsProperty> {
    vec![
        DnsProperty::with_u32(dnsp::ZONE_TYPE, 1),
        DnsProperty::with_u8(dnsp::ALLOW_UPDATE, allow_update::SECURE),
        DnsProperty::with_u32(dnsp::NOREFRESH_INTERVAL, DEFAULT_INTERVAL_HOURS),
        DnsProperty::with_u32(dnsp::REFRESH_INTERVAL, DEFAULT_INTERVAL_HOURS),
        DnsProperty::with_u32(dnsp::AGING_STATE, 0),
        DnsProperty::with_u32(dnsp::AGING_ENABLED_TIME, 0),
    ]
}

/// A self-relative SECURITY_DESCRIPTOR (MS-DTYP 2.4.6) naming only an owner and group:
/// how a node records who created it until descriptors carry full access rules.
pub fn owner_descriptor(owner: &Sid) -> Vec<u8> {
    let sid = owner.to_bytes();
    let mut sd = Vec::with_capacity(20 + 2 * sid.len());
    sd.push(1); // revision
    sd.push(0); // Sbz1
    sd.extend_from_slice(&0x8000u16.to_le_bytes()); // SE_SELF_RELATIVE
    let owner_at = 20u32;
    let group_at = owner_at + sid.len() as u32;
    sd.extend_from_slice(&owner_at.to_le_bytes());
    sd.extend_from_slice(&group_at.to_le_bytes());
    sd.extend_from_slice(&0u32.to_le_bytes()); // no SACL
    sd.extend_from_slice(&0u32.to_le_bytes()); // no DACL
    sd.extend_from_slice(&sid);
    sd.extend_from_slice(&sid);
    sd
}

/// The owner named by a self-relative descriptor.
pub fn descriptor_owner(sd: &[u8]) -> Option<Sid> {
    let at = u32::from_le_bytes(sd.get(4..8)?.try_into().ok()?) as usize;
    if at == 0 {
        return None;
    }
    Sid::from_bytes(sd.get(at..)?).ok()
}

/// Every zone under the DNS containers of `layout`, in container then name order.
pub fn zones<V: View>(v: &V, layout: &DnsLayout) -> DirResult<Vec<ZoneInfo>> {
    let mut out = Vec::new();
    for container in layout.containers() {
        let Some(cid) = v.id_of(container)? else {
            continue;
        };
        let mut here = Vec::new();
        for id in v.children(cid)? {
            let classes = v.values(id, "objectClass")?;
            if !classes.iter().any(|c| c.eq_ignore_ascii_case(b"dnsZone")) {
                continue;
            }
            let Ok(dn) = Dn::parse(&v.dn_of(id)?) else {
                continue;
            };
            let Some(name) = dn
                .rdn()
                .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            else {
                continue;
            };
            // RootDNSServers and ..TrustAnchors are not served zones.
            if name.starts_with("..") || name.eq_ignore_ascii_case("RootDNSServers") {
                continue;
            }
            let properties = v
                .values(id, "dnsProperty")?
                .iter()
                .filter_map(|b| DnsProperty::decode(b).ok())
                .collect();
            here.push(ZoneInfo {
                name: name.to_ascii_lowercase(),
                dn,
                id,
                properties,
            });
        }
        here.sort_by(|a, b| a.name.cmp(&b.name));
        for z in here {
            if !out.iter().any(|o: &ZoneInfo| o.name == z.name) {
                out.push(z);
            }
        }
    }
    Ok(out)
}

/// The records of the node `relative` of a zone, if it exists. Values that do not decode
/// are left out (and reported by dbcheck), never fatal for the rest.
pub fn node<V: View>(v: &V, zone_dn: &Dn, relative: &str) -> DirResult<Option<NodeRecords>> {
    let dn = DnsLayout::node_dn(zone_dn, relative)?;
    let Some(id) = v.id_of(&dn)? else {
        return Ok(None);
    };
    node_by_id(v, id, dn).map(Some)
}

/// The records of the node `relative` of the zone with record id `zone_id` and whether it
/// is a tombstone: the query path's read (one key read for the name, one for the record).
pub fn records_in<V: View>(
    v: &V,
    zone_id: u64,
    relative: &str,
) -> DirResult<Option<(Vec<DnsRecord>, bool)>> {
    let Ok(rdn) = kauri_db::Rdn::new("DC", relative) else {
        return Ok(None);
    };
    let Some(id) = v.child_of(zone_id, &rdn)? else {
        return Ok(None);
    };
    records_by_id(v, id).map(Some)
}

/// The records of the node with record id `id`, and whether it is a tombstone.
pub fn records_by_id<V: View>(v: &V, id: u64) -> DirResult<(Vec<DnsRecord>, bool)> {
    let [records, tombstoned]: [Vec<Vec<u8>>; 2] = v
        .all_values(id, &["dnsRecord", "dNSTombstoned"])?
        .try_into()
        .unwrap_or_default();
    Ok(decoded(&records, &tombstoned))
}

/// A node's stored `dnsRecord` values decoded (those that do not decode left out, for
/// dbcheck to report) and its `dNSTombstoned` flag.
fn decoded(records: &[Vec<u8>], tombstoned: &[Vec<u8>]) -> (Vec<DnsRecord>, bool) {
    let records = records
        .iter()
        .filter_map(|b| DnsRecord::decode(b).ok())
        .collect();
    let tombstoned = tombstoned
        .first()
        .is_some_and(|t| t.eq_ignore_ascii_case(b"TRUE"));
    (records, tombstoned)
}

/// [`node`] for a record id already found.
pub fn node_by_id<V: View>(v: &V, id: u64, dn: Dn) -> DirResult<NodeRecords> {
    let [records, tombstoned, owner]: [Vec<Vec<u8>>; 3] = v
        .all_values(id, &["dnsRecord", "dNSTombstoned", "nTSecurityDescriptor"])?
        .try_into()
        .unwrap_or_default();
    let (records, tombstoned) = decoded(&records, &tombstoned);
    let owner = owner.first().and_then(|sd| descriptor_owner(sd));
    Ok(NodeRecords {
        dn,
        id,
        records,
        tombstoned,
        owner,
    })
}

/// The relative names of every node of a zone, with their ids.
pub fn node_names<V: View>(v: &V, zone: &ZoneInfo) -> DirResult<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for id in v.children(zone.id)? {
        if let Some(name) = v.rdn_value(id)? {
            out.push((name, id));
        }
    }
    Ok(out)
}

/// A zone-data record (version 5, rank zone) with a TTL, the zone serial it was written
/// at and its aging timestamp (hours since 1601; 0 for a static record).
pub fn zone_record(
    data: kauri_dns_proto::RData,
    ttl: u32,
    serial: u32,
    timestamp: u32,
) -> DnsRecord {
    DnsRecord {
        body: Body::Record(data),
        version: 5,
        rank: RANK_ZONE,
        flags: 0,
        serial,
        ttl,
        timestamp,
    }
}

/// The record a deleted name keeps: type 0 holding when it was deleted.
pub fn tombstone_record(now_unix: u64) -> DnsRecord {
    DnsRecord {
        body: Body::Tombstone {
            entombed: dnsp::filetime_from_unix(now_unix),
        },
        version: 5,
        rank: RANK_ZONE,
        flags: 0,
        serial: 0,
        ttl: 0,
        timestamp: 0,
    }
}

/// DNS_RANK_ZONE: authoritative data of the zone.
pub const RANK_ZONE: u8 = 0xF0;

impl<B: Backend> Directory<B> {
    /// Replaces the records of the node `relative` of a zone, inside the caller's write
    /// transaction: creates the node (owned by `owner`, when given) if it does not exist,
    /// and tombstones it when `records` is empty (AD keeps a deleted name as a tombstone
    /// until the scavenger purges it). Nothing is written when the node would not change.
    #[allow(clippy::too_many_arguments)]
    pub fn write_dns_node(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        zone_dn: &Dn,
        relative: &str,
        records: Vec<DnsRecord>,
        owner: Option<&Sid>,
        now_unix: u64,
    ) -> DirResult<()> {
        let existing = node(w, zone_dn, relative)?;
        let dn = DnsLayout::node_dn(zone_dn, relative)?;
        let tombstone = records.is_empty();
        let records = if tombstone {
            if existing.as_ref().is_none_or(|n| n.tombstoned) {
                return Ok(());
            }
            vec![tombstone_record(now_unix)]
        } else {
            records
        };
        let values: Vec<Vec<u8>> = records.iter().map(DnsRecord::encode).collect();
        let flag = if tombstone { "TRUE" } else { "FALSE" };
        match existing {
            None => {
                let mut entry = Entry::new(dn.clone());
                entry.push("objectClass", vec![b"top".to_vec(), b"dnsNode".to_vec()]);
                entry.push("dc", vec![relative.as_bytes().to_vec()]);
                entry.push("dnsRecord", values);
                entry.push("dNSTombstoned", vec![flag.as_bytes().to_vec()]);
                entry.push("showInAdvancedViewOnly", vec![b"TRUE".to_vec()]);
                if let Some(o) = owner {
                    entry.push("nTSecurityDescriptor", vec![owner_descriptor(o)]);
                }
                let req = Request {
                    caller: Caller::System,
                    encrypted: true,
                    change: Change::Add(entry),
                };
                self.apply(w, &req)
            }
            Some(n) => {
                let same = n.tombstoned == tombstone
                    && n.records.len() == records.len()
                    && n.records.iter().zip(&records).all(|(a, b)| a == b);
                if same {
                    return Ok(());
                }
                let mut mods = vec![
                    Modification {
                        op: ModifyOp::Replace,
                        attr: "dnsRecord".into(),
                        values,
                    },
                    Modification {
                        op: ModifyOp::Replace,
                        attr: "dNSTombstoned".into(),
                        values: vec![flag.as_bytes().to_vec()],
                    },
                ];
                // A tombstoned name re-created by someone becomes theirs.
                if let (true, Some(o)) = (n.tombstoned, owner) {
                    mods.push(Modification {
                        op: ModifyOp::Replace,
                        attr: "nTSecurityDescriptor".into(),
                        values: vec![owner_descriptor(o)],
                    });
                }
                self.apply(w, &Request::system_modify(dn, mods, false))
            }
        }
    }

    /// Removes a node outright (a purged tombstone, or a deleted zone's names).
    pub fn delete_dns_node(&self, w: &mut kauri_db::DbWrite<'_, B>, dn: &Dn) -> DirResult<()> {
        let req = Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Delete {
                dn: dn.clone(),
                tree: false,
            },
        };
        self.apply(w, &req)
    }

    /// The zone's SOA serial, incremented and written back (every change to a zone's
    /// data moves its serial, so secondaries and caches see it): the serial before and
    /// after, `None` for a zone without an SOA.
    pub fn bump_dns_serial(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        zone_dn: &Dn,
        now_unix: u64,
    ) -> DirResult<Option<(u32, u32)>> {
        let Some(apex) = node(w, zone_dn, APEX)? else {
            return Ok(None);
        };
        let mut records = apex.records;
        let mut moved = None;
        for r in &mut records {
            if let Body::Record(kauri_dns_proto::RData::Soa(soa)) = &mut r.body {
                let before = soa.serial;
                soa.serial = soa.serial.wrapping_add(1).max(1);
                r.serial = soa.serial;
                moved = Some((before, soa.serial));
            }
        }
        if moved.is_some() {
            self.write_dns_node(w, zone_dn, APEX, records, None, now_unix)?;
        }
        Ok(moved)
    }
}
