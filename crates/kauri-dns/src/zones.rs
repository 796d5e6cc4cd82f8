//! The zones the server is authoritative for, found in the directory and kept in memory
//! between changes: the zone list is re-read when the database's highest USN moves, and
//! each zone's index of names (to tell an empty non-terminal from a missing name, and to
//! find a wildcard's closest encloser) is rebuilt when the zone's SOA serial moves.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kauri_db::Dn;
use kauri_dns_proto::dnsp::Body;
use kauri_dns_proto::Name;
use kauri_dns_proto::RData;
use kauri_domain::directory::view::View;
use kauri_domain::directory::DirResult;
use kauri_domain::dns::layout::{DnsLayout, APEX};
use kauri_domain::dns::nodes::{self, ZoneInfo};
use parking_lot::{Mutex, RwLock};

/// A served zone.
#[derive(Debug, Clone)]
pub struct Zone {
    /// The zone's name.
    pub name: Name,
    /// Where and how it is stored.
    pub info: ZoneInfo,
}

impl Zone {
    /// The zone's `dnsZone` DN.
    pub fn dn(&self) -> &Dn {
        &self.info.dn
    }
}

/// The names of a zone's live nodes, as keys with their labels reversed
/// (`_ldap._tcp.dc` → `dc._tcp._ldap`), so the names below one form a range.
#[derive(Debug, Default, Clone)]
pub struct NameIndex {
    keys: BTreeSet<String>,
}

/// The index key of a relative name.
pub fn reversed_key(relative: &str) -> String {
    let mut labels: Vec<&str> = relative.split('.').collect();
    labels.reverse();
    labels.join(".").to_ascii_lowercase()
}

impl NameIndex {
    /// Whether the relative name holds live records.
    pub fn contains(&self, relative: &str) -> bool {
        self.keys.contains(&reversed_key(relative))
    }

    /// Whether some live name lies below `relative` (`@` for the apex).
    pub fn has_below(&self, relative: &str) -> bool {
        let prefix = if relative == APEX {
            String::new()
        } else {
            format!("{}.", reversed_key(relative))
        };
        self.keys
            .range(prefix.clone()..)
            .next()
            .is_some_and(|k| k.starts_with(&prefix) && k.len() > prefix.len())
    }

    /// Whether the name exists: it holds records or names exist below it.
    pub fn exists(&self, relative: &str) -> bool {
        relative == APEX || self.contains(relative) || self.has_below(relative)
    }

    /// How many names the index holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The zones and their name indexes.
pub struct Catalog {
    layout: DnsLayout,
    zones: RwLock<(u64, Arc<Vec<Zone>>)>,
    indexes: Mutex<HashMap<u64, (u32, Arc<NameIndex>)>>,
}

impl Catalog {
    /// A catalog of the zones under `layout`'s containers, read on first use.
    pub fn new(layout: DnsLayout) -> Catalog {
        Catalog {
            layout,
            zones: RwLock::new((u64::MAX, Arc::new(Vec::new()))),
            indexes: Mutex::new(HashMap::new()),
        }
    }

    /// Where the zones are stored.
    pub fn layout(&self) -> &DnsLayout {
        &self.layout
    }

    /// The zones, as of the database state `usn` (re-read when it moved).
    pub fn zones<V: View>(&self, v: &V, usn: u64) -> DirResult<Arc<Vec<Zone>>> {
        {
            let z = self.zones.read();
            if z.0 == usn {
                return Ok(z.1.clone());
            }
        }
        let mut list = Vec::new();
        for info in nodes::zones(v, &self.layout)? {
            if let Ok(name) = Name::parse(&info.name) {
                list.push(Zone { name, info });
            }
        }
        // Longest names first, so the first zone a name falls in is the closest.
        list.sort_by_key(|z| std::cmp::Reverse(z.name.labels().len()));
        let list = Arc::new(list);
        *self.zones.write() = (usn, list.clone());
        Ok(list)
    }

    /// Forgets everything read (after the server itself changed zones).
    pub fn invalidate(&self) {
        self.zones.write().0 = u64::MAX;
        self.indexes.lock().clear();
    }

    /// Brings a zone's index along with a change the server made itself (the zone's serial
    /// went from `before` to `after`; `names` were written, holding records or not), so a
    /// large zone is not read again after each update. An index of another serial is
    /// dropped, to be rebuilt when next needed.
    pub fn patch(&self, zone_id: u64, before: u32, after: u32, names: &[(String, bool)]) {
        let mut indexes = self.indexes.lock();
        let Some((serial, index)) = indexes.get_mut(&zone_id) else {
            return;
        };
        if *serial == after {
            return;
        }
        if *serial != before {
            indexes.remove(&zone_id);
            return;
        }
        let index = Arc::make_mut(index);
        for (name, live) in names {
            let key = reversed_key(name);
            if *live {
                index.keys.insert(key);
            } else {
                index.keys.remove(&key);
            }
        }
        *serial = after;
    }

    /// The index of a zone's names, rebuilt when its serial moved.
    pub fn index<V: View>(&self, v: &V, zone: &Zone) -> DirResult<Arc<NameIndex>> {
        let serial = apex_serial(v, zone.info.id)?;
        if let Some((s, idx)) = self.indexes.lock().get(&zone.info.id) {
            if *s == serial {
                return Ok(idx.clone());
            }
        }
        let mut keys = BTreeSet::new();
        for (name, id) in nodes::node_names(v, &zone.info)? {
            let tombstoned = v
                .text(id, "dNSTombstoned")?
                .is_some_and(|t| t.eq_ignore_ascii_case("TRUE"));
            if !tombstoned {
                keys.insert(reversed_key(&name));
            }
        }
        let idx = Arc::new(NameIndex { keys });
        self.indexes
            .lock()
            .insert(zone.info.id, (serial, idx.clone()));
        Ok(idx)
    }
}

/// The serial of a zone's SOA record (0 without one).
pub fn apex_serial<V: View>(v: &V, zone_id: u64) -> DirResult<u32> {
    let Some((records, _)) = nodes::records_in(v, zone_id, APEX)? else {
        return Ok(0);
    };
    let serial = records
        .iter()
        .find_map(|r| match &r.body {
            Body::Record(RData::Soa(s)) => Some(s.serial),
            _ => None,
        })
        .unwrap_or(0);
    Ok(serial)
}

/// The closest zone holding `name`, from a list sorted longest first.
pub fn zone_of<'a>(zones: &'a [Zone], name: &Name) -> Option<&'a Zone> {
    zones.iter().find(|z| name.is_subdomain_of(&z.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let dn = |t: &str| Dn::parse(t).unwrap();
        Catalog::new(DnsLayout {
            domain_nc: dn("DC=DomainDnsZones,DC=x"),
            forest_nc: dn("DC=ForestDnsZones,DC=x"),
            domain_container: dn("CN=MicrosoftDNS,DC=DomainDnsZones,DC=x"),
            forest_container: dn("CN=MicrosoftDNS,DC=ForestDnsZones,DC=x"),
            legacy_container: dn("CN=MicrosoftDNS,CN=System,DC=x"),
            domain_zone: "x".into(),
            msdcs_zone: "_msdcs.x".into(),
        })
    }

    #[test]
    fn an_update_patches_the_index_of_the_serial_it_started_from() {
        let c = catalog();
        let mut idx = NameIndex::default();
        idx.keys.insert(reversed_key("old"));
        c.indexes.lock().insert(7, (10, Arc::new(idx)));
        c.patch(
            7,
            10,
            11,
            &[("new.sub".into(), true), ("old".into(), false)],
        );
        {
            let indexes = c.indexes.lock();
            let (serial, idx) = indexes.get(&7).unwrap();
            assert_eq!(*serial, 11);
            assert!(idx.contains("new.sub") && idx.has_below("sub") && !idx.contains("old"));
        }
        // A change it did not see (another serial): the index goes, to be rebuilt.
        c.patch(7, 20, 21, &[("x".into(), true)]);
        assert!(c.indexes.lock().get(&7).is_none());
    }

    #[test]
    fn empty_non_terminals_and_ranges() {
        let mut idx = NameIndex::default();
        for n in ["_ldap._tcp.dc", "dc1", "_kerberos._tcp"] {
            idx.keys.insert(reversed_key(n));
        }
        assert!(idx.contains("DC1"));
        assert!(idx.has_below("_tcp.dc"));
        assert!(idx.has_below("dc"));
        assert!(idx.exists("_tcp"));
        assert!(!idx.contains("_tcp"));
        assert!(!idx.exists("_udp"));
        assert!(!idx.has_below("dc1"));
        assert!(idx.has_below(APEX));
        // `dc1` is not below `dc`.
        let mut only = NameIndex::default();
        only.keys.insert(reversed_key("dc1"));
        assert!(!only.has_below("dc"));
    }
}
