//! AD-integrated DNS in a provisioned domain (in memory): the partitions, zones and DC
//! records `ensure_dns` creates and keeps in line with the DC's addresses and sites, and
//! aging and scavenging on a clock the test moves: records age, are scavenged, names are
//! tombstoned and purged exactly on the schedule, and static records never are.

mod common;

use common::{provisioned, DOMAIN};

use std::net::IpAddr;

use kauri_db::{Dn, Entry, Modification, ModifyOp};
use kauri_dns_proto::dnsp::{self, hours_since_1601, Body, DnsProperty};
use kauri_dns_proto::RData;
use kauri_domain::directory::{view::View, Caller, Change, Directory, Request};
use kauri_domain::dns::layout::{DnsLayout, APEX};
use kauri_domain::dns::nodes::{self, zone_record};
use kauri_kv::mem::MemBackend;

/// The test's "now": 2026-11-01 00:00 UTC.
const T0: u64 = 1_793_491_200;
const HOUR: u64 = 3600;

fn ensure(dir: &Directory<MemBackend>, addrs: &[&str], now: u64) -> kauri_domain::dns::DnsEnsured {
    let addrs: Vec<IpAddr> = addrs.iter().map(|a| a.parse().unwrap()).collect();
    let mut w = dir.db().write().unwrap();
    let done = dir.ensure_dns(&mut w, &addrs, now).unwrap();
    w.commit().unwrap();
    dir.rediscover().unwrap();
    done
}

fn layout(dir: &Directory<MemBackend>) -> DnsLayout {
    DnsLayout::of(&dir.domain().unwrap()).unwrap()
}

fn domain_zone(dir: &Directory<MemBackend>) -> Dn {
    DnsLayout::zone_dn(&layout(dir).domain_container, "samdom.example.com").unwrap()
}

fn datas(dir: &Directory<MemBackend>, zone: &Dn, name: &str) -> Option<Vec<RData>> {
    let r = dir.db().read().unwrap();
    nodes::node(&r, zone, name)
        .unwrap()
        .filter(|n| !n.tombstoned)
        .map(|n| {
            n.live()
                .filter_map(|x| match &x.body {
                    Body::Record(d) => Some(d.clone()),
                    Body::Tombstone { .. } => None,
                })
                .collect()
        })
}

fn a(ip: &str) -> RData {
    RData::A(ip.parse().unwrap())
}

fn serial(dir: &Directory<MemBackend>, zone: &Dn) -> u32 {
    datas(dir, zone, APEX)
        .unwrap()
        .into_iter()
        .find_map(|d| match d {
            RData::Soa(s) => Some(s.serial),
            _ => None,
        })
        .unwrap()
}

#[test]
fn the_partitions_zones_and_dc_records() {
    let dir = provisioned();
    let done = ensure(&dir, &["10.0.0.1"], T0);
    assert!(done.partitions_created);
    assert_eq!(
        done.zones_created,
        vec!["samdom.example.com", "_msdcs.samdom.example.com"]
    );
    let info = dir.domain().unwrap();
    let app: Vec<String> = info.app_ncs.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        app,
        vec![
            format!("DC=DomainDnsZones,{DOMAIN}"),
            format!("DC=ForestDnsZones,{DOMAIN}")
        ]
    );
    // Each partition has its crossRef, and objects deleted there go to its own Deleted
    // Objects.
    let r = dir.db().read().unwrap();
    let deleted = Dn::parse(&format!("CN=Deleted Objects,DC=DomainDnsZones,{DOMAIN}")).unwrap();
    assert!(View::id_of(&r, &deleted).unwrap().is_some());
    assert_eq!(
        info.deleted_objects_of(&domain_zone(&dir)).unwrap(),
        deleted
    );
    drop(r);
    let zone = domain_zone(&dir);
    assert_eq!(datas(&dir, &zone, "dc1").unwrap(), vec![a("10.0.0.1")]);
    assert!(datas(&dir, &zone, "_ldap._tcp").is_some());
    let msdcs =
        DnsLayout::zone_dn(&layout(&dir).forest_container, "_msdcs.samdom.example.com").unwrap();
    assert!(datas(&dir, &msdcs, "_ldap._tcp.dc").is_some());
    // The DC's account answers for DNS/<host>, the name GSS-TSIG clients ask for.
    let r = dir.db().read().unwrap();
    let dc = Dn::parse(&format!("CN=DC1,OU=Domain Controllers,{DOMAIN}")).unwrap();
    let id = View::id_of(&r, &dc).unwrap().unwrap();
    let spns = r.values(id, "servicePrincipalName").unwrap();
    assert!(
        spns.iter().any(|s| s == b"DNS/dc1.samdom.example.com"),
        "{spns:?}"
    );
    drop(r);

    // Again: nothing to do.
    let before = serial(&dir, &zone);
    assert_eq!(ensure(&dir, &["10.0.0.1"], T0 + HOUR), Default::default());
    assert_eq!(serial(&dir, &zone), before);
    // A new address replaces the old one on every name of the DC, and moves the serial.
    let done = ensure(&dir, &["10.0.0.2", "fd00::2"], T0 + 2 * HOUR);
    assert!(done.nodes_changed >= 4, "{done:?}");
    assert_eq!(
        datas(&dir, &zone, "dc1").unwrap(),
        vec![a("10.0.0.2"), RData::Aaaa("fd00::2".parse().unwrap())]
    );
    let apex = datas(&dir, &zone, APEX).unwrap();
    assert!(
        apex.contains(&a("10.0.0.2")) && !apex.contains(&a("10.0.0.1")),
        "{apex:?}"
    );
    assert!(serial(&dir, &zone) > before);
}

/// Kauri's built-in core schema, explicitly (the machine may have the published files, and
/// [`provisioned`] would prefer them): a domain provisioned on it gets its DNS partitions,
/// zones with their properties and the DC's records, as on a machine without
/// samba-ad-provision.
#[test]
fn the_builtin_schema_provisions_the_dns_zones() {
    let schema = kauri_domain::schema::builtin::schema().expect("built-in table parses");
    let dir = common::provisioned_with(schema);
    let done = ensure(&dir, &["10.0.0.1"], T0);
    assert!(done.partitions_created);
    assert_eq!(
        done.zones_created,
        vec!["samdom.example.com", "_msdcs.samdom.example.com"]
    );
    // The zones, found by class, keep the properties they were created with.
    let r = dir.db().read().unwrap();
    let zones = nodes::zones(&r, &layout(&dir)).unwrap();
    let mut names: Vec<&str> = zones.iter().map(|z| z.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["_msdcs.samdom.example.com", "samdom.example.com"]);
    for z in &zones {
        assert_eq!(z.properties, nodes::default_zone_properties(), "{}", z.name);
    }
    drop(r);
    let zone = domain_zone(&dir);
    let apex = datas(&dir, &zone, APEX).unwrap();
    assert!(apex.iter().any(|d| matches!(d, RData::Soa(_))), "{apex:?}");
    assert!(apex.iter().any(|d| matches!(d, RData::Ns(_))), "{apex:?}");
    assert_eq!(datas(&dir, &zone, "dc1").unwrap(), vec![a("10.0.0.1")]);
    assert!(datas(&dir, &zone, "_ldap._tcp").is_some());
    assert!(datas(&dir, &zone, "_kerberos._tcp").is_some());
    assert!(datas(&dir, &zone, "_msdcs").is_some());
    let msdcs =
        DnsLayout::zone_dn(&layout(&dir).forest_container, "_msdcs.samdom.example.com").unwrap();
    assert!(datas(&dir, &msdcs, "_ldap._tcp.dc").is_some());
    // A name added later (as dynamic updates and `kauri traffic populate` add them), then
    // deleted: the node is tombstoned, not removed.
    let mut w = dir.db().write().unwrap();
    let host = vec![zone_record(a("10.0.1.7"), 3600, 1, 0)];
    dir.write_dns_node(&mut w, &zone, "ws000007", host, None, T0)
        .unwrap();
    w.commit().unwrap();
    assert_eq!(datas(&dir, &zone, "ws000007").unwrap(), vec![a("10.0.1.7")]);
    let mut w = dir.db().write().unwrap();
    dir.write_dns_node(&mut w, &zone, "ws000007", Vec::new(), None, T0 + HOUR)
        .unwrap();
    w.commit().unwrap();
    let r = dir.db().read().unwrap();
    assert!(
        nodes::node(&r, &zone, "ws000007")
            .unwrap()
            .unwrap()
            .tombstoned
    );
}

#[test]
fn sites_without_a_dc_are_covered_by_the_cheapest_link() {
    let dir = provisioned();
    ensure(&dir, &["10.0.0.1"], T0);
    let sites = format!("CN=Sites,CN=Configuration,{DOMAIN}");
    let system = |change: Change| Request {
        caller: Caller::System,
        encrypted: true,
        change,
    };
    let mut w = dir.db().write().unwrap();
    for site in ["Branch", "Island"] {
        let mut e = Entry::new(Dn::parse(&format!("CN={site},{sites}")).unwrap());
        e.push("objectClass", vec![b"top".to_vec(), b"site".to_vec()]);
        dir.apply(&mut w, &system(Change::Add(e))).unwrap();
    }
    // Branch is linked to the DC's site; Island to nothing.
    let link = Dn::parse(&format!(
        "CN=DEFAULTIPSITELINK,CN=IP,CN=Inter-Site Transports,{sites}"
    ))
    .unwrap();
    dir.apply(
        &mut w,
        &Request::system_modify(
            link,
            vec![Modification {
                op: ModifyOp::Add,
                attr: "siteList".into(),
                values: vec![format!("CN=Branch,{sites}").into_bytes()],
            }],
            false,
        ),
    )
    .unwrap();
    w.commit().unwrap();
    ensure(&dir, &["10.0.0.1"], T0 + HOUR);
    let zone = domain_zone(&dir);
    assert!(datas(&dir, &zone, "_ldap._tcp.Branch._sites").is_some());
    assert!(datas(&dir, &zone, "_kerberos._tcp.Branch._sites").is_some());
    assert!(datas(&dir, &zone, "_ldap._tcp.Island._sites").is_none());
}

/// Turns aging on for a zone (no-refresh and refresh 168 h each), enabled long ago.
fn age_zone(dir: &Directory<MemBackend>, zone: &Dn) {
    let props = [
        DnsProperty::with_u32(dnsp::ZONE_TYPE, 1),
        DnsProperty::with_u8(dnsp::ALLOW_UPDATE, 2),
        DnsProperty::with_u32(dnsp::NOREFRESH_INTERVAL, 168),
        DnsProperty::with_u32(dnsp::REFRESH_INTERVAL, 168),
        DnsProperty::with_u32(dnsp::AGING_STATE, 1),
        DnsProperty::with_u32(dnsp::AGING_ENABLED_TIME, hours_since_1601(T0) - 10_000),
    ];
    let mut w = dir.db().write().unwrap();
    dir.apply(
        &mut w,
        &Request::system_modify(
            zone.clone(),
            vec![Modification {
                op: ModifyOp::Replace,
                attr: "dnsProperty".into(),
                values: props.iter().map(DnsProperty::encode).collect(),
            }],
            false,
        ),
    )
    .unwrap();
    w.commit().unwrap();
}

fn scavenge(
    dir: &Directory<MemBackend>,
    now: u64,
    dry: bool,
) -> kauri_domain::dns::scavenge::ScavengeReport {
    let mut w = dir.db().write().unwrap();
    let r = dir.scavenge_dns(&mut w, now, 14, dry).unwrap();
    w.commit().unwrap();
    r
}

#[test]
fn records_age_are_scavenged_tombstoned_and_purged_on_schedule() {
    let dir = provisioned();
    ensure(&dir, &["10.0.0.1"], T0);
    let zone = domain_zone(&dir);
    let stamp = hours_since_1601(T0);
    {
        let mut w = dir.db().write().unwrap();
        dir.write_dns_node(
            &mut w,
            &zone,
            "ws1",
            vec![zone_record(a("10.0.1.1"), 1200, 0, stamp)],
            None,
            T0,
        )
        .unwrap();
        dir.write_dns_node(
            &mut w,
            &zone,
            "ws2",
            vec![
                zone_record(a("10.0.1.2"), 1200, 0, stamp),
                zone_record(a("10.0.1.3"), 1200, 0, stamp + 100),
            ],
            None,
            T0,
        )
        .unwrap();
        dir.write_dns_node(
            &mut w,
            &zone,
            "printer",
            vec![zone_record(a("10.0.1.9"), 1200, 0, 0)],
            None,
            T0,
        )
        .unwrap();
        w.commit().unwrap();
    }
    // Aging off: nothing is ever stale.
    let r = scavenge(&dir, T0 + 1000 * HOUR, false);
    assert_eq!(r.records_removed, 0, "{r:?}");
    age_zone(&dir, &zone);
    // Stale only after no-refresh + refresh (336 h).
    let r = scavenge(&dir, T0 + 336 * HOUR, false);
    assert_eq!(r.records_removed, 0, "{r:?}");
    let dry = scavenge(&dir, T0 + 337 * HOUR, true);
    assert_eq!(dry.records_removed, 2, "{dry:?}");
    assert_eq!(
        datas(&dir, &zone, "ws1").unwrap().len(),
        1,
        "a dry run changes nothing"
    );
    let before = serial(&dir, &zone);
    let r = scavenge(&dir, T0 + 337 * HOUR, false);
    assert_eq!(r.records_removed, 2, "{r:?}");
    assert_eq!(r.tombstoned, vec!["ws1.samdom.example.com"]);
    assert!(serial(&dir, &zone) > before);
    assert_eq!(datas(&dir, &zone, "ws2").unwrap(), vec![a("10.0.1.3")]);
    assert_eq!(
        datas(&dir, &zone, "printer").unwrap(),
        vec![a("10.0.1.9")],
        "static"
    );
    assert!(
        datas(&dir, &zone, "dc1").is_some(),
        "the DC's own records are static"
    );
    let r = dir.db().read().unwrap();
    let ws1 = nodes::node(&r, &zone, "ws1").unwrap().unwrap();
    assert!(ws1.tombstoned && ws1.records.len() == 1 && ws1.records[0].is_tombstone());
    drop(r);
    // The other record of ws2 goes in its turn (100 h later).
    let r = scavenge(&dir, T0 + 436 * HOUR, false);
    assert!(r.tombstoned.is_empty(), "{r:?}");
    let r = scavenge(&dir, T0 + 437 * HOUR, false);
    assert_eq!(r.tombstoned, vec!["ws2.samdom.example.com"]);
    // The tombstone stays 14 days, then goes.
    let r = scavenge(&dir, T0 + 337 * HOUR + 14 * 24 * HOUR - HOUR, false);
    assert!(r.purged.is_empty(), "{r:?}");
    let r = scavenge(&dir, T0 + 337 * HOUR + 14 * 24 * HOUR + HOUR, false);
    assert_eq!(r.purged, vec!["ws1.samdom.example.com"]);
    let rd = dir.db().read().unwrap();
    assert!(nodes::node(&rd, &zone, "ws1").unwrap().is_none());
    drop(rd);
    // Static records never go.
    let r = scavenge(&dir, T0 + 100_000 * HOUR, false);
    assert!(r.tombstoned.is_empty());
    assert_eq!(datas(&dir, &zone, "printer").unwrap(), vec![a("10.0.1.9")]);
}

#[test]
fn a_restored_dc_replaces_the_old_dcs_records() {
    use kauri_domain::directory::RestoreSpec;
    let dir = provisioned();
    ensure(&dir, &["10.0.0.1"], T0);
    let zone = domain_zone(&dir);
    let msdcs =
        DnsLayout::zone_dn(&layout(&dir).forest_container, "_msdcs.samdom.example.com").unwrap();
    let old_guid = {
        let r = dir.db().read().unwrap();
        let zinfo = nodes::zones(&r, &layout(&dir)).unwrap();
        let ms = zinfo.iter().find(|z| z.name.starts_with("_msdcs")).unwrap();
        nodes::node_names(&r, ms)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .find(|n| n.len() == 36)
            .unwrap()
    };
    // Someone else's record stays.
    {
        let mut w = dir.db().write().unwrap();
        dir.write_dns_node(
            &mut w,
            &zone,
            "printer",
            vec![zone_record(a("10.0.0.50"), 900, 0, 0)],
            None,
            T0,
        )
        .unwrap();
        w.commit().unwrap();
    }
    dir.become_restored_dc(&RestoreSpec {
        dc_name: "DC2".into(),
        site: None,
        rid_margin: 1000,
    })
    .unwrap();
    assert!(
        datas(&dir, &zone, "dc1").is_none(),
        "the old DC's name is gone"
    );
    assert!(datas(&dir, &msdcs, &old_guid).is_none(), "its CNAME too");
    ensure(&dir, &["10.0.0.2"], T0 + HOUR);
    let srv = datas(&dir, &zone, "_ldap._tcp").unwrap();
    let target = |d: &RData| match d {
        RData::Srv { target, .. } => target.to_string(),
        _ => String::new(),
    };
    assert_eq!(
        srv.iter().map(target).collect::<Vec<_>>(),
        vec!["dc2.samdom.example.com"]
    );
    assert_eq!(
        datas(&dir, &zone, APEX)
            .unwrap()
            .iter()
            .filter(|d| matches!(d, RData::A(_)))
            .count(),
        1
    );
    assert_eq!(datas(&dir, &zone, "dc2").unwrap(), vec![a("10.0.0.2")]);
    let soa = datas(&dir, &zone, APEX)
        .unwrap()
        .into_iter()
        .find_map(|d| match d {
            RData::Soa(s) => Some(s.mname.to_string()),
            _ => None,
        });
    assert_eq!(soa.as_deref(), Some("dc2.samdom.example.com"));
    assert_eq!(datas(&dir, &zone, "printer").unwrap(), vec![a("10.0.0.50")]);
}
