//! The domain `kauri traffic populate` builds, fixed by a seed: OUs (departments with city
//! OUs below them), users spread unevenly over the city OUs with managers above them,
//! computers with SPNs and a DNS name, and groups whose sizes follow a power law — one
//! holding every user, a few huge ones, many small ones — some nested in bigger ones.
//!
//! Every object is drawn from a generator of its own (the seed, its kind and its index),
//! and a group's members by skipping through the users with a fixed chance per group, so
//! user 41 looks the same and belongs to the same groups whatever the other counts: a run
//! with more users extends a run with fewer, and a rerun meets exactly what it made.

use kauri_domain::directory::principal::{group_type, may_nest, Scope};
use kauri_traffic::random::Rng;

use crate::admin::target::{Attrs, DomainNames};
use crate::populate::{DEPARTMENTS, FIRST, LAST, TITLES};

/// How many of each kind of object to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// User accounts.
    pub users: usize,
    /// Computer accounts.
    pub computers: usize,
    /// Groups.
    pub groups: usize,
    /// Organizational units.
    pub ous: usize,
}

/// Where a city OU sits, and the cities they are named after.
const CITIES: &[&str] = &[
    "Auckland",
    "Wellington",
    "Christchurch",
    "Dunedin",
    "Hamilton",
    "Tauranga",
    "Sydney",
    "Melbourne",
    "Brisbane",
    "Singapore",
    "London",
    "Toronto",
];

const STREETS: &[&str] = &[
    "Queen Street",
    "Lambton Quay",
    "Colombo Street",
    "George Street",
    "Victoria Street",
    "Karangahape Road",
    "Cuba Street",
    "Dominion Road",
];

/// What groups are for, in their names.
const GROUP_ROLES: &[&str] = &[
    "Readers",
    "Editors",
    "Project",
    "Team",
    "Contractors",
    "Managers",
    "VPN Users",
    "Share Access",
    "App Users",
    "Printers",
];

/// The chance a user belongs to group `g` (g ≥ 1) is `MEMBERSHIP_SCALE / g^MEMBERSHIP_POWER`.
const MEMBERSHIP_SCALE: f64 = 0.25;
/// See [`MEMBERSHIP_SCALE`].
const MEMBERSHIP_POWER: f64 = 1.0;
/// The chance a group (past the first two) is nested in a bigger one.
const NESTING: f64 = 0.3;
/// Groups' managers are drawn from this many first users.
const GROUP_OWNERS: u64 = 100;
/// The chance a user (past the first) has a manager.
const MANAGED: f64 = 0.9;

/// Generator streams, one per kind of draw.
mod stream {
    pub const USER: u64 = 1;
    pub const COMPUTER: u64 = 2;
    pub const GROUP: u64 = 3;
    pub const MEMBERS: u64 = 4;
}

/// An organizational unit.
#[derive(Debug, Clone)]
pub struct Ou {
    /// Its DN.
    pub dn: String,
    /// Its name (the RDN value).
    pub name: String,
    /// The department it belongs to.
    pub department: &'static str,
    /// The city of a city OU.
    pub city: Option<&'static str>,
}

/// A user account.
#[derive(Debug, Clone)]
pub struct User {
    /// Its DN.
    pub dn: String,
    /// `sAMAccountName`.
    pub sam: String,
    /// `userPrincipalName`.
    pub upn: String,
    /// Whether it gets the known password.
    pub password: bool,
    /// The index of its manager.
    pub manager: Option<usize>,
    attrs: Attrs,
}

/// A computer account.
#[derive(Debug, Clone)]
pub struct Computer {
    /// Its DN.
    pub dn: String,
    /// Its host name (`WS000042`).
    pub name: String,
    /// Its address, for its DNS record.
    pub address: std::net::Ipv4Addr,
    attrs: Attrs,
}

/// A group.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its DN.
    pub dn: String,
    attrs: Attrs,
}

/// One member of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Member {
    /// A user, by index.
    User(usize),
    /// A computer, by index.
    Computer(usize),
    /// A group, by index.
    Group(usize),
}

/// The whole domain to build, and the names of every object in it.
pub struct Plan {
    /// The counts.
    pub shape: Shape,
    /// The seed.
    pub seed: u64,
    /// The domain it goes into.
    pub domain: DomainNames,
    /// Users with index below this get the known password.
    pub password_users: usize,
    ous: Vec<Ou>,
    /// Indices (into `ous`) of the OUs users and computers go to.
    leaves: Vec<usize>,
    /// Indices of the department OUs.
    tops: Vec<usize>,
    /// The DNS zone of the domain.
    zone: String,
    user_dns: Vec<String>,
    computer_dns: Vec<String>,
    group_dns: Vec<String>,
    /// The groups nested in each group (always ones with higher numbers).
    nested: Vec<Vec<usize>>,
    root: Rng,
}

/// The DNS zone of a domain, where its computers' names go: AD-integrated, in the
/// DomainDnsZones partition.
pub fn zone_dn(domain: &DomainNames) -> String {
    format!(
        "DC={},CN=MicrosoftDNS,DC=DomainDnsZones,{}",
        rdn_value(&domain.dns_name),
        domain.dn
    )
}

/// An LDAP DN's RDN value with its special characters escaped.
fn rdn_value(v: &str) -> String {
    kauri_db::Rdn::new("CN", v)
        .map(|r| r.to_string()["CN=".len()..].to_string())
        .unwrap_or_else(|_| v.to_string())
}

fn pick<'a>(rng: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs.get(rng.below(xs.len() as u64) as usize)
        .copied()
        .unwrap_or_default()
}

fn text(name: &str, value: &str) -> (String, Vec<Vec<u8>>) {
    (name.to_string(), vec![value.as_bytes().to_vec()])
}

/// An `objectClass` attribute with these classes.
fn classes(names: &[&str]) -> (String, Vec<Vec<u8>>) {
    (
        "objectClass".to_string(),
        names.iter().map(|n| n.as_bytes().to_vec()).collect(),
    )
}

/// `groupType` of group `g`, by its place in a cycle of ten: mostly global security
/// groups, some universal and domain-local ones, a few distribution lists.
fn group_bits(g: usize) -> u32 {
    use group_type::{DOMAIN_LOCAL, GLOBAL, SECURITY, UNIVERSAL};
    if g == 0 {
        return SECURITY | GLOBAL;
    }
    match g % 10 {
        6 => SECURITY | UNIVERSAL,
        7 => SECURITY | DOMAIN_LOCAL,
        8 => GLOBAL,
        _ => SECURITY | GLOBAL,
    }
}

fn scope_of(bits: u32) -> Scope {
    if bits & group_type::UNIVERSAL != 0 {
        Scope::Universal
    } else if bits & group_type::DOMAIN_LOCAL != 0 {
        Scope::DomainLocal
    } else {
        Scope::Global
    }
}

/// Whether group `g` holds computers rather than users.
fn holds_computers(g: usize) -> bool {
    g % 10 == 9
}

/// Indices below `n` drawn each with chance `p`, in order: geometric gaps from `rng`, so
/// the indices below any `m < n` are the same whatever `n` is.
fn sample(rng: &mut Rng, p: f64, n: usize) -> Vec<usize> {
    if p >= 1.0 {
        return (0..n).collect();
    }
    if p <= 0.0 {
        return Vec::new();
    }
    let log_q = (1.0 - p).ln();
    let mut out = Vec::with_capacity((n as f64 * p * 1.1) as usize + 4);
    let mut i = 0usize;
    loop {
        let gap = ((1.0 - rng.unit()).ln() / log_q).floor();
        if !gap.is_finite() || gap >= n as f64 {
            break;
        }
        i = i.saturating_add(gap as usize);
        if i >= n {
            break;
        }
        out.push(i);
        i += 1;
    }
    out
}

impl Plan {
    /// The plan for `shape` in `domain` from `seed`; the first `password_users` users get
    /// the known password.
    pub fn new(shape: Shape, seed: u64, domain: DomainNames, password_users: usize) -> Plan {
        let root = Rng::new(seed);
        let mut plan = Plan {
            shape,
            seed,
            password_users: password_users.min(shape.users),
            ous: Vec::new(),
            leaves: Vec::new(),
            tops: Vec::new(),
            user_dns: Vec::with_capacity(shape.users),
            computer_dns: Vec::with_capacity(shape.computers),
            group_dns: Vec::with_capacity(shape.groups),
            nested: vec![Vec::new(); shape.groups],
            zone: zone_dn(&domain),
            domain,
            root,
        };
        plan.lay_out_ous();
        for i in 0..shape.users {
            let dn = plan.user(i).dn;
            plan.user_dns.push(dn);
        }
        for c in 0..shape.computers {
            let dn = plan.computer(c).dn;
            plan.computer_dns.push(dn);
        }
        for g in 0..shape.groups {
            let dn = plan.group(g).dn;
            plan.group_dns.push(dn);
            if g >= 2 {
                let mut rng = plan.stream(stream::GROUP, g).fork(1);
                if rng.unit() < NESTING {
                    let parent = 1 + rng.below(g as u64 - 1) as usize;
                    let outer = scope_of(group_bits(parent));
                    let inner = scope_of(group_bits(g));
                    if may_nest(outer, inner) {
                        if let Some(list) = plan.nested.get_mut(parent) {
                            list.push(g);
                        }
                    }
                }
            }
        }
        plan
    }

    fn stream(&self, kind: u64, index: usize) -> Rng {
        self.root.fork(kind).fork(index as u64)
    }

    /// Departments first (as many as there are department names, or OUs), then city OUs
    /// below them in turn.
    fn lay_out_ous(&mut self) {
        let domain = self.domain.dn.clone();
        let tops = self.shape.ous.min(DEPARTMENTS.len());
        for d in DEPARTMENTS.iter().take(tops) {
            self.tops.push(self.ous.len());
            self.ous.push(Ou {
                dn: format!("OU={},{domain}", rdn_value(d)),
                name: (*d).to_string(),
                department: d,
                city: None,
            });
        }
        for k in 0..self.shape.ous - tops {
            let Some(&parent) = self.tops.get(k % tops.max(1)) else {
                break;
            };
            let round = k / tops.max(1);
            let city = CITIES
                .get(round % CITIES.len())
                .copied()
                .unwrap_or("Office");
            let name = match round / CITIES.len() {
                0 => city.to_string(),
                n => format!("{city} {}", n + 1),
            };
            let (parent_dn, department) = match self.ous.get(parent) {
                Some(p) => (p.dn.clone(), p.department),
                None => break,
            };
            self.leaves.push(self.ous.len());
            self.ous.push(Ou {
                dn: format!("OU={},{parent_dn}", rdn_value(&name)),
                name,
                department,
                city: Some(city),
            });
        }
        if self.leaves.is_empty() {
            self.leaves = self.tops.clone();
        }
    }

    /// The OUs, parents before children.
    pub fn ous(&self) -> &[Ou] {
        &self.ous
    }

    /// The attributes of an OU.
    pub fn ou_attrs(&self, ou: &Ou) -> Attrs {
        let mut a = vec![
            classes(&["top", "organizationalUnit"]),
            text("ou", &ou.name),
        ];
        let what = match ou.city {
            Some(city) => format!("{} in {city}", ou.department),
            None => format!("The {} department", ou.department),
        };
        a.push(text("description", &what));
        a
    }

    /// Where user or computer number `i` of `kind` lives: a leaf OU drawn unevenly (the
    /// first OUs hold more), or the default container when there are no OUs.
    fn place(&self, u: f64) -> Option<&Ou> {
        if self.leaves.is_empty() {
            return None;
        }
        let k = ((self.leaves.len() as f64) * u.powf(1.5)) as usize;
        self.leaves
            .get(k.min(self.leaves.len() - 1))
            .and_then(|&o| self.ous.get(o))
    }

    /// User number `i`.
    pub fn user(&self, i: usize) -> User {
        let mut rng = self.stream(stream::USER, i);
        let first = pick(&mut rng, FIRST);
        let last = pick(&mut rng, LAST);
        let title = pick(&mut rng, TITLES);
        let ou = self.place(rng.unit());
        let manager = if i > 0 && rng.unit() < MANAGED {
            let u = rng.unit();
            Some(((i as f64) * u * u * u) as usize)
        } else {
            None
        };
        let street = pick(&mut rng, STREETS);
        let number = 1 + rng.below(400);
        let phone = rng.below(10_000_000);
        let mobile = rng.below(100_000_000);
        let dns = &self.domain.dns_name;
        let initial = first.chars().next().unwrap_or('x');
        let sam = format!("{initial}{last}{i}").to_lowercase();
        let cn = format!("{first} {last} {i}");
        let parent = match ou {
            Some(o) => o.dn.clone(),
            None => format!("CN=Users,{}", self.domain.dn),
        };
        let dn = format!("CN={},{parent}", rdn_value(&cn));
        let upn = format!("{sam}@{dns}");
        let department = ou.map_or("Operations", |o| o.department);
        let city = ou.and_then(|o| o.city).unwrap_or("Auckland");
        let password = i < self.password_users;
        let attrs = vec![
            classes(&["top", "person", "organizationalPerson", "user"]),
            text("cn", &cn),
            text("givenName", first),
            text("sn", last),
            text("initials", &initial.to_string()),
            text("displayName", &format!("{first} {last}")),
            text("sAMAccountName", &sam),
            text("userPrincipalName", &upn),
            text(
                "mail",
                &format!("{}.{}{i}@{dns}", first.to_lowercase(), last.to_lowercase()),
            ),
            text("title", title),
            text("department", department),
            text("company", "Kauri Populate Ltd"),
            text("physicalDeliveryOfficeName", city),
            text("streetAddress", &format!("{number} {street}")),
            text(
                "telephoneNumber",
                &format!("+64 9 {:03} {:04}", phone / 10_000, phone % 10_000),
            ),
            text(
                "mobile",
                &format!("+64 21 {:04} {:04}", mobile / 10_000, mobile % 10_000),
            ),
            text("employeeID", &format!("E{i:07}")),
            text(
                "employeeType",
                if i.is_multiple_of(11) {
                    "Contractor"
                } else {
                    "Staff"
                },
            ),
            text("description", &format!("{title}, {department}, {city}")),
        ];
        User {
            dn,
            sam,
            upn,
            password,
            manager,
            attrs,
        }
    }

    /// The DN and attributes of a user as an add carries them (its manager included when
    /// `with_manager`; the password as `unicodePwd` when it has one).
    pub fn user_entry(&self, u: User, password: &str, with_manager: bool) -> (String, Attrs) {
        let mut a = u.attrs;
        // AD lets an account without a password be enabled only when it says none is
        // required.
        let uac = if u.password { 0x200 } else { 0x200 | 0x20 };
        a.push(text("userAccountControl", &uac.to_string()));
        if u.password {
            a.push((
                "unicodePwd".to_string(),
                vec![kauri_domain::password::encode_unicode_pwd(password)],
            ));
        }
        if let (true, Some(m)) = (with_manager, u.manager.and_then(|m| self.user_dns.get(m))) {
            a.push(text("manager", m));
        }
        (u.dn, a)
    }

    /// Computer number `c`: every tenth a server.
    pub fn computer(&self, c: usize) -> Computer {
        let mut rng = self.stream(stream::COMPUTER, c);
        let server = c.is_multiple_of(10);
        let name = if server {
            format!("SRV{c:06}")
        } else {
            format!("WS{c:06}")
        };
        let ou = self.place(rng.unit());
        let parent = match ou {
            Some(o) => o.dn.clone(),
            None => format!("CN=Computers,{}", self.domain.dn),
        };
        let dn = format!("CN={name},{parent}");
        let fqdn = format!("{}.{}", name.to_lowercase(), self.domain.dns_name);
        let (os, version) = if server {
            ("Windows Server 2022 Standard", "10.0 (20348)")
        } else if rng.unit() < 0.7 {
            ("Windows 11 Enterprise", "10.0 (22631)")
        } else {
            ("Windows 10 Enterprise", "10.0 (19045)")
        };
        let address = std::net::Ipv4Addr::from(0x0a00_0100u32.wrapping_add(c as u32));
        let spns: Vec<Vec<u8>> = [
            format!("HOST/{name}"),
            format!("HOST/{fqdn}"),
            format!("RestrictedKrbHost/{name}"),
            format!("RestrictedKrbHost/{fqdn}"),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        let attrs = vec![
            classes(&["top", "person", "organizationalPerson", "user", "computer"]),
            text("cn", &name),
            text("sAMAccountName", &format!("{name}$")),
            text("dNSHostName", &fqdn),
            ("servicePrincipalName".to_string(), spns),
            text("operatingSystem", os),
            text("operatingSystemVersion", version),
            text("description", if server { "Server" } else { "Workstation" }),
            // A workstation account whose machine has not joined yet: no password.
            text("userAccountControl", &(0x1000 | 0x20).to_string()),
        ];
        Computer {
            dn,
            name,
            address,
            attrs,
        }
    }

    /// The DN and attributes of a computer as an add carries them.
    pub fn computer_entry(&self, c: Computer) -> (String, Attrs) {
        (c.dn, c.attrs)
    }

    /// Group number `g`: group 0 is everyone's.
    pub fn group(&self, g: usize) -> Group {
        let mut rng = self.stream(stream::GROUP, g);
        let bits = group_bits(g);
        let top = if self.tops.is_empty() {
            None
        } else {
            self.tops
                .get(g % self.tops.len())
                .and_then(|&t| self.ous.get(t))
        };
        let department = top.map_or("Operations", |o| o.department);
        let name = if g == 0 {
            "All Staff".to_string()
        } else if holds_computers(g) {
            format!("{department} Workstations {g}")
        } else {
            format!("{department} {} {g}", pick(&mut rng, GROUP_ROLES))
        };
        let parent = match top {
            Some(o) => o.dn.clone(),
            None => format!("CN=Users,{}", self.domain.dn),
        };
        let dn = format!("CN={},{parent}", rdn_value(&name));
        let sam = name.to_lowercase().replace(' ', "-");
        let mut attrs = vec![
            classes(&["top", "group"]),
            text("cn", &name),
            text("sAMAccountName", &sam),
            text("groupType", &(bits as i32).to_string()),
            text(
                "description",
                &if g == 0 {
                    "Every user".to_string()
                } else {
                    format!("{name} ({department})")
                },
            ),
        ];
        if bits & group_type::SECURITY == 0 {
            attrs.push(text("mail", &format!("{sam}@{}", self.domain.dns_name)));
        }
        // Half the groups are managed by one of the first users (the same one whatever
        // the number of users, as long as it exists).
        if g > 0 && rng.unit() < 0.5 {
            let owner = rng.below(GROUP_OWNERS) as usize;
            if let Some(o) = self.user_dns.get(owner) {
                attrs.push(text("managedBy", o));
            }
        }
        Group { dn, attrs }
    }

    /// The DN and attributes of a group as an add carries them (without members).
    pub fn group_entry(&self, g: Group) -> (String, Attrs) {
        (g.dn, g.attrs)
    }

    /// The members of group `g`: users (or computers) drawn with the group's chance, then
    /// the groups nested in it.
    pub fn members(&self, g: usize) -> Vec<Member> {
        let mut out: Vec<Member> = if g == 0 {
            (0..self.shape.users).map(Member::User).collect()
        } else {
            let p = MEMBERSHIP_SCALE / (g as f64).powf(MEMBERSHIP_POWER);
            let mut rng = self.stream(stream::MEMBERS, g);
            if holds_computers(g) {
                sample(&mut rng, p, self.shape.computers)
                    .into_iter()
                    .map(Member::Computer)
                    .collect()
            } else {
                sample(&mut rng, p, self.shape.users)
                    .into_iter()
                    .map(Member::User)
                    .collect()
            }
        };
        if let Some(inner) = self.nested.get(g) {
            out.extend(inner.iter().map(|&k| Member::Group(k)));
        }
        out
    }

    /// The DN of a member.
    pub fn member_dn(&self, m: Member) -> Option<&str> {
        match m {
            Member::User(i) => self.user_dns.get(i),
            Member::Computer(c) => self.computer_dns.get(c),
            Member::Group(g) => self.group_dns.get(g),
        }
        .map(String::as_str)
    }

    /// The DN of user `i`.
    pub fn user_dn(&self, i: usize) -> Option<&str> {
        self.user_dns.get(i).map(String::as_str)
    }

    /// The DN of group `g`.
    pub fn group_dn(&self, g: usize) -> Option<&str> {
        self.group_dns.get(g).map(String::as_str)
    }

    /// The DN of computer `c`.
    pub fn computer_dn(&self, c: usize) -> Option<&str> {
        self.computer_dns.get(c).map(String::as_str)
    }

    /// The DNS zone computers get records in.
    pub fn zone_dn(&self) -> &str {
        &self.zone
    }

    /// The DN and attributes of a computer's DNS name (a `dnsNode` with its A record).
    pub fn dns_node(&self, c: &Computer) -> (String, Attrs) {
        use kauri_dns_proto::RData;
        let host = c.name.to_lowercase();
        let dn = format!("DC={},{}", rdn_value(&host), self.zone);
        let record =
            kauri_domain::dns::nodes::zone_record(RData::A(c.address), 3600, 1, 0).encode();
        let attrs = vec![
            classes(&["top", "dnsNode"]),
            ("dnsRecord".to_string(), vec![record]),
            text("dNSTombstoned", "FALSE"),
        ];
        (dn, attrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> DomainNames {
        DomainNames {
            dn: "DC=samdom,DC=example,DC=com".into(),
            dns_name: "samdom.example.com".into(),
            netbios: "SAMDOM".into(),
        }
    }

    fn shape(users: usize) -> Shape {
        Shape {
            users,
            computers: 50,
            groups: 40,
            ous: 12,
        }
    }

    #[test]
    fn more_users_extend_fewer() {
        let small = Plan::new(shape(200), 7, names(), 10);
        let big = Plan::new(shape(500), 7, names(), 10);
        for i in 0..200 {
            assert_eq!(small.user(i).attrs, big.user(i).attrs);
            assert_eq!(small.user(i).manager, big.user(i).manager);
        }
        for g in 0..40 {
            let s = small.members(g);
            let b: Vec<Member> = big
                .members(g)
                .into_iter()
                .filter(|m| !matches!(m, Member::User(i) if *i >= 200))
                .collect();
            assert_eq!(s, b, "group {g}");
        }
        let other = Plan::new(shape(200), 8, names(), 10);
        assert_ne!(small.user(3).attrs, other.user(3).attrs);
    }

    #[test]
    fn names_are_unique_and_groups_follow_a_power_law() {
        let plan = Plan::new(
            Shape {
                users: 5000,
                computers: 100,
                groups: 200,
                ous: 40,
            },
            1,
            names(),
            10,
        );
        let mut dns = std::collections::HashSet::new();
        let mut sams = std::collections::HashSet::new();
        for i in 0..5000 {
            let u = plan.user(i);
            assert!(dns.insert(u.dn.to_lowercase()));
            assert!(sams.insert(u.sam.clone()) && u.sam.len() <= 20);
            assert!(u.manager.is_none_or(|m| m < i));
        }
        for g in 0..200 {
            assert!(dns.insert(plan.group(g).dn.to_lowercase()));
            assert!(plan.members(g).iter().all(|m| match m {
                Member::Group(k) => *k > g,
                _ => true,
            }));
        }
        let mut sizes: Vec<usize> = (0..200).map(|g| plan.members(g).len()).collect();
        assert_eq!(sizes[0], 5000);
        sizes.sort_unstable();
        let median = sizes[100];
        assert!(sizes[198] > 10 * median.max(1), "{sizes:?}");
        assert!(plan.ous().len() == 40 && plan.leaves.len() == 33);
    }
}
