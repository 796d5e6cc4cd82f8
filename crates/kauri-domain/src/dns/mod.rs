//! AD-integrated DNS as the directory holds it (MS-DNSP §2.3, MS-ADTS 6.1.1.5): the
//! DomainDnsZones and ForestDnsZones application partitions, their `CN=MicrosoftDNS`
//! containers, one `dnsZone` per zone and one `dnsNode` per name, whose `dnsRecord`
//! values are MS-DNSP's binary records. [`layout`] names those objects, [`dc_records`]
//! lists the records a DC registers, [`ensure`] creates what a domain lacks and
//! [`nodes`] reads and writes record sets for the DNS server and the tools.

pub mod coverage;
pub mod dc_records;
pub mod ensure;
pub mod forget;
pub mod layout;
pub mod nodes;
pub mod rename;
pub mod scavenge;

pub use dc_records::{DcIdentity, DcRecord, ZoneKind};
pub use ensure::DnsEnsured;
pub use layout::DnsLayout;
pub use nodes::{NodeRecords, ZoneInfo};
