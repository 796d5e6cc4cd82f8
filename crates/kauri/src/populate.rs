//! A realistic AD-shaped directory generated from a seed: users with the ~25 attributes AD
//! gives them, groups with members, computers, contacts, and an OU tree with teams of 50
//! and departments of 500 entries, so benchmarks see the shapes real searches meet.

use kauri_db::{Dn, Entry};

/// How many of each kind of object to generate.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Shape {
    /// Users in total.
    pub users: usize,
    /// Groups (each with `members_per_group` members).
    pub groups: usize,
    /// Members of each group.
    pub members_per_group: usize,
    /// Computers.
    pub computers: usize,
    /// Contacts.
    pub contacts: usize,
}

impl Shape {
    /// The proportions the Samba team measured at: 100,000 users and about 130,000 other
    /// records at `users = 100_000`, scaled linearly.
    pub fn for_users(users: usize) -> Shape {
        Shape {
            users,
            groups: users / 4,
            members_per_group: 10,
            computers: users / 5,
            contacts: users * 82 / 100,
        }
    }
}

/// DNs of the places benchmarks look at.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    /// The domain's naming context.
    pub domain: String,
    /// An OU with half the users (the move benchmark's subject).
    pub big_ou: String,
    /// An empty OU to move things to.
    pub target_ou: String,
    /// Department OUs: 500 entries each in their subtree.
    pub departments: Vec<String>,
    /// Team OUs: 50 users each, directly below.
    pub teams: Vec<String>,
}

/// Users per team OU.
pub const TEAM_SIZE: usize = 50;
/// Teams per department.
pub const TEAMS_PER_DEPT: usize = 9;
/// Users directly in a department OU (so the subtree holds 1 + 9 + 450 + 40 = 500).
pub const DEPT_DIRECT: usize = 40;

pub(crate) const FIRST: &[&str] = &[
    "James",
    "Mary",
    "Wiremu",
    "Aroha",
    "Liam",
    "Olivia",
    "Noah",
    "Amelia",
    "Hemi",
    "Mere",
    "Jack",
    "Isla",
    "Oliver",
    "Charlotte",
    "Leo",
    "Ava",
    "Mateo",
    "Mia",
    "Arjun",
    "Priya",
    "Chen",
    "Mei",
    "Sione",
    "Lupe",
];
pub(crate) const LAST: &[&str] = &[
    "Smith", "Williams", "Brown", "Wilson", "Taylor", "Ngata", "Parata", "Anderson", "Thompson",
    "Walker", "Harris", "Patel", "Singh", "Wang", "Li", "Kim", "Tui", "Faleolo", "Martin",
    "Clarke", "Cooper", "King",
];
pub(crate) const TITLES: &[&str] = &[
    "Engineer",
    "Analyst",
    "Manager",
    "Director",
    "Technician",
    "Consultant",
    "Officer",
];
pub(crate) const DEPARTMENTS: &[&str] = &[
    "Finance",
    "Engineering",
    "Sales",
    "Support",
    "Legal",
    "Operations",
    "Research",
];

/// A small deterministic generator (xorshift64*), so runs are repeatable without a
/// dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs.get(self.below(xs.len())).copied().unwrap_or("")
    }
}

fn domain_sid_bytes(rid: u32) -> Vec<u8> {
    let mut v = vec![1u8, 5, 0, 0, 0, 0, 0, 5];
    for sub in [21u32, 1_234_567_890, 987_654_321, 555_555_555, rid] {
        v.extend_from_slice(&sub.to_le_bytes());
    }
    v
}

fn guid(rng: &mut Rng) -> Vec<u8> {
    let mut g = rng.next_u64().to_le_bytes().to_vec();
    g.extend_from_slice(&rng.next_u64().to_le_bytes());
    g
}

fn gentime(i: usize) -> String {
    // Spread over a few years, one second apart.
    kauri_db::syntax::generalized_time(1_600_000_000 + i as u64)
}

/// Builds every entry of the directory, parents before children, and hands each to `sink`.
pub fn generate(
    shape: Shape,
    seed: u64,
    mut sink: impl FnMut(Entry, bool) -> anyhow::Result<()>,
) -> anyhow::Result<Layout> {
    let mut rng = Rng::new(seed);
    let domain = "DC=samdom,DC=example,DC=com".to_string();
    let dn = |s: &str| Dn::parse(s).map_err(|e| anyhow::anyhow!("generated DN {s:?}: {e}"));
    let mut rid = 1000u32;
    let mut n = 0usize;
    let category = |c: &str| format!("CN={c},CN=Schema,CN=Configuration,{domain}");

    sink(
        Entry::new(dn(&domain)?)
            .with("objectClass", &["top", "domain", "domainDNS"])
            .with("instanceType", &["5"])
            .with("objectCategory", &[&category("Domain-DNS")]),
        true,
    )?;
    let container = |name: &str, class: &str| -> anyhow::Result<Entry> {
        let (attr, oc): (&str, &[&str]) = if class == "ou" {
            ("OU", &["top", "organizationalUnit"])
        } else {
            ("CN", &["top", "container"])
        };
        let mut e = Entry::new(dn(&format!("{attr}={name},{domain}"))?).with("objectClass", oc);
        e.push("instanceType", vec![b"4".to_vec()]);
        Ok(e)
    };
    for c in [
        "Users",
        "Computers",
        "System",
        "Builtin",
        "ForeignSecurityPrincipals",
    ] {
        sink(container(c, "cn")?, false)?;
    }
    for o in [
        "Domain Controllers",
        "Big",
        "Target",
        "Departments",
        "Groups",
        "Contacts",
    ] {
        sink(container(o, "ou")?, false)?;
    }
    let big_ou = format!("OU=Big,{domain}");
    let target_ou = format!("OU=Target,{domain}");

    let mut user_dns: Vec<String> = Vec::with_capacity(shape.users);
    let mut user = |parent: &str,
                    rng: &mut Rng,
                    sink: &mut dyn FnMut(Entry, bool) -> anyhow::Result<()>|
     -> anyhow::Result<()> {
        let i = user_dns.len();
        let first = rng.pick(FIRST);
        let last = rng.pick(LAST);
        let cn = format!("{first} {last} {i:06}");
        let sam = format!("user{i:06}");
        let this_dn = format!("CN={cn},{parent}");
        rid += 1;
        n += 1;
        let mut e = Entry::new(dn(&this_dn)?)
            .with(
                "objectClass",
                &["top", "person", "organizationalPerson", "user"],
            )
            .with("cn", &[&cn])
            .with("sn", &[last])
            .with("givenName", &[first])
            .with("displayName", &[&format!("{first} {last}")])
            .with("name", &[&cn])
            .with("sAMAccountName", &[&sam])
            .with("userPrincipalName", &[&format!("{sam}@samdom.example.com")])
            .with(
                "mail",
                &[&format!(
                    "{}.{}{i}@example.com",
                    first.to_lowercase(),
                    last.to_lowercase()
                )],
            )
            .with("userAccountControl", &["512"])
            .with("employeeID", &[&format!("E{i:07}")])
            .with(
                "telephoneNumber",
                &[&format!("+64 9 {:03} {:04}", i % 1000, i % 10_000)],
            )
            .with("title", &[rng.pick(TITLES)])
            .with("department", &[rng.pick(DEPARTMENTS)])
            .with("company", &["Samdom Ltd"])
            .with("description", &[&format!("Account of {first} {last}")])
            .with("whenCreated", &[&gentime(n)])
            .with("whenChanged", &[&gentime(n)])
            .with("instanceType", &["4"])
            .with("objectCategory", &[&category("Person")])
            .with("physicalDeliveryOfficeName", &["Auckland"])
            .with("pwdLastSet", &["0"])
            .with("accountExpires", &["9223372036854775807"])
            .with("primaryGroupID", &["513"]);
        e.push("objectGUID", vec![guid(rng)]);
        e.push("objectSid", vec![domain_sid_bytes(rid)]);
        sink(e, false)?;
        user_dns.push(this_dn);
        Ok(())
    };

    let mut sink_dyn = |e: Entry, root: bool| sink(e, root);
    // Half the users in one big OU, 1% in CN=Users, the rest in departments of 500.
    let big = shape.users / 2;
    for _ in 0..big {
        user(&big_ou, &mut rng, &mut sink_dyn)?;
    }
    let per_dept_users = TEAMS_PER_DEPT * TEAM_SIZE + DEPT_DIRECT;
    let dept_count = (shape.users - big - shape.users / 100) / per_dept_users;
    let mut departments = Vec::new();
    let mut teams = Vec::new();
    for d in 0..dept_count {
        let dept = format!("OU=Dept {d:04},OU=Departments,{domain}");
        sink_dyn(
            Entry::new(dn(&dept)?).with("objectClass", &["top", "organizationalUnit"]),
            false,
        )?;
        for t in 0..TEAMS_PER_DEPT {
            let team = format!("OU=Team {t},{dept}");
            sink_dyn(
                Entry::new(dn(&team)?).with("objectClass", &["top", "organizationalUnit"]),
                false,
            )?;
            for _ in 0..TEAM_SIZE {
                user(&team, &mut rng, &mut sink_dyn)?;
            }
            teams.push(team);
        }
        for _ in 0..DEPT_DIRECT {
            user(&dept, &mut rng, &mut sink_dyn)?;
        }
        departments.push(dept);
    }
    let users_container = format!("CN=Users,{domain}");
    for _ in 0..shape
        .users
        .saturating_sub(big + dept_count * per_dept_users)
    {
        user(&users_container, &mut rng, &mut sink_dyn)?;
    }

    for g in 0..shape.groups {
        let name = format!("Group {g:06}");
        let mut e = Entry::new(dn(&format!("CN={name},OU=Groups,{domain}"))?)
            .with("objectClass", &["top", "group"])
            .with("cn", &[&name])
            .with("name", &[&name])
            .with("sAMAccountName", &[&format!("group{g:06}")])
            .with("groupType", &["-2147483646"])
            .with("instanceType", &["4"])
            .with("objectCategory", &[&category("Group")])
            .with("description", &[&format!("Group number {g}")]);
        let mut members: Vec<Vec<u8>> = Vec::with_capacity(shape.members_per_group);
        while members.len() < shape.members_per_group.min(user_dns.len()) {
            let m = user_dns
                .get(rng.below(user_dns.len()))
                .cloned()
                .unwrap_or_default()
                .into_bytes();
            if !members.contains(&m) {
                members.push(m);
            }
        }
        if !members.is_empty() {
            e.push("member", members);
        }
        e.push("objectGUID", vec![guid(&mut rng)]);
        rid += 1;
        e.push("objectSid", vec![domain_sid_bytes(rid)]);
        sink(e, false)?;
    }
    for c in 0..shape.computers {
        let name = format!("WS{c:06}");
        let mut e = Entry::new(dn(&format!("CN={name},CN=Computers,{domain}"))?)
            .with(
                "objectClass",
                &["top", "person", "organizationalPerson", "user", "computer"],
            )
            .with("cn", &[&name])
            .with("name", &[&name])
            .with("sAMAccountName", &[&format!("{name}$")])
            .with(
                "dNSHostName",
                &[&format!("{}.samdom.example.com", name.to_lowercase())],
            )
            .with("userAccountControl", &["4096"])
            .with("operatingSystem", &["Windows 11 Enterprise"])
            .with("instanceType", &["4"])
            .with("objectCategory", &[&category("Computer")])
            .with("primaryGroupID", &["515"]);
        e.push("objectGUID", vec![guid(&mut rng)]);
        rid += 1;
        e.push("objectSid", vec![domain_sid_bytes(rid)]);
        sink(e, false)?;
    }
    let mut contact_ou = String::new();
    for c in 0..shape.contacts {
        if c % 1000 == 0 {
            contact_ou = format!("OU=Contacts {:03},OU=Contacts,{domain}", c / 1000);
            sink(
                Entry::new(dn(&contact_ou)?).with("objectClass", &["top", "organizationalUnit"]),
                false,
            )?;
        }
        let first = rng.pick(FIRST);
        let last = rng.pick(LAST);
        let cn = format!("{first} {last} C{c:06}");
        let mut e = Entry::new(dn(&format!("CN={cn},{contact_ou}"))?)
            .with(
                "objectClass",
                &["top", "person", "organizationalPerson", "contact"],
            )
            .with("cn", &[&cn])
            .with("sn", &[last])
            .with("givenName", &[first])
            .with("displayName", &[&format!("{first} {last}")])
            .with("name", &[&cn])
            .with(
                "mail",
                &[&format!(
                    "{}.{}.c{c}@partner.example.org",
                    first.to_lowercase(),
                    last.to_lowercase()
                )],
            )
            .with(
                "telephoneNumber",
                &[&format!("+61 2 {:04} {:04}", c % 10_000, (c * 7) % 10_000)],
            )
            .with("company", &["Partner Pty"])
            .with("instanceType", &["4"])
            .with("objectCategory", &[&category("Person")]);
        e.push("objectGUID", vec![guid(&mut rng)]);
        sink(e, false)?;
    }
    Ok(Layout {
        domain,
        big_ou,
        target_ou,
        departments,
        teams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_valid_generalized_times() {
        assert_eq!(gentime(0), "20200913122640.0Z");
        assert!(kauri_db::Syntax::GeneralizedTime
            .normalize(gentime(86_400 * 400).as_bytes())
            .is_ok());
    }

    #[test]
    fn small_shape_has_the_promised_layout() {
        let mut count = 0;
        let layout = generate(Shape::for_users(2000), 1, |_, _| {
            count += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(layout.departments.len(), 2);
        assert_eq!(layout.teams.len(), 2 * TEAMS_PER_DEPT);
        let s = Shape::for_users(2000);
        assert!(count >= s.users + s.groups + s.computers + s.contacts);
    }
}
