//! Finding the object a command names: by DN, or as people name them — an account name
//! (`kiri`, `SAMDOM\kiri`, `kiri@samdom.example.com`), a computer's host name, a group's
//! or contact's common name, an OU relative to the domain (`OU=Sales`).

use anyhow::{bail, Result};

use super::target::{Found, Refused, Scope, Target};

/// The kinds of objects the commands manage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A user account (not a computer).
    User,
    /// A group.
    Group,
    /// A computer account.
    Computer,
    /// A contact.
    Contact,
    /// An organizational unit.
    Ou,
    /// Anything a group may hold: users, computers, groups, contacts.
    Member,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Group => "group",
            Kind::Computer => "computer",
            Kind::Contact => "contact",
            Kind::Ou => "organizational unit",
            Kind::Member => "object",
        }
    }

    /// Whether an entry is of this kind.
    pub fn matches(self, f: &Found) -> bool {
        match self {
            Kind::User => f.is("user") && !f.is("computer"),
            Kind::Group => f.is("group"),
            Kind::Computer => f.is("computer"),
            Kind::Contact => f.is("contact"),
            Kind::Ou => f.is("organizationalUnit"),
            Kind::Member => f.is("user") || f.is("group") || f.is("contact"),
        }
    }

    /// The filter selecting every object of this kind.
    pub fn filter(self) -> &'static str {
        match self {
            Kind::User => "(&(objectClass=user)(!(objectClass=computer)))",
            Kind::Group => "(objectClass=group)",
            Kind::Computer => "(objectClass=computer)",
            Kind::Contact => "(objectClass=contact)",
            Kind::Ou => "(objectClass=organizationalUnit)",
            Kind::Member => "(|(objectClass=user)(objectClass=group)(objectClass=contact))",
        }
    }
}

/// A value escaped for a filter (RFC 4515).
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '*' => out.push_str("\\2a"),
            '(' => out.push_str("\\28"),
            ')' => out.push_str("\\29"),
            '\\' => out.push_str("\\5c"),
            '\0' => out.push_str("\\00"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a name is written as a DN.
fn looks_like_dn(name: &str) -> bool {
    name.contains('=') && kauri_db::Dn::parse(name).is_ok()
}

/// A DN given relative to the domain (`OU=Sales`) made whole; whole DNs stay as they are.
pub fn in_domain(t: &dyn Target, dn: &str) -> String {
    let domain = &t.domain().dn;
    let whole = kauri_db::Dn::parse(dn)
        .ok()
        .zip(kauri_db::Dn::parse(domain).ok())
        .is_some_and(|(d, base)| d == base || d.is_descendant_of(&base));
    if whole || dn.is_empty() {
        dn.to_string()
    } else {
        format!("{dn},{domain}")
    }
}

fn not_found(kind: Kind, name: &str) -> anyhow::Error {
    Refused {
        code: 32,
        message: format!("no {} named {name}", kind.noun()),
    }
    .into()
}

/// The one object of `kind` that `name` names, with the attributes asked for (`objectClass`
/// is always read).
pub fn find(t: &mut dyn Target, kind: Kind, name: &str, attrs: &[&str]) -> Result<Found> {
    let mut wanted: Vec<&str> = attrs.to_vec();
    if !wanted.is_empty() && !wanted.iter().any(|a| a.eq_ignore_ascii_case("objectClass")) {
        wanted.push("objectClass");
    }
    if looks_like_dn(name) || kind == Kind::Ou {
        let dn = in_domain(t, name);
        let found = t.read(&dn, &wanted)?.ok_or_else(|| not_found(kind, name))?;
        if !kind.matches(&found) {
            bail!("{} is not a {}", found.dn, kind.noun());
        }
        return Ok(found);
    }
    // DOMAIN\name names an account of this domain.
    let bare = match name.split_once('\\') {
        Some((domain, n)) if domain.eq_ignore_ascii_case(&t.domain().netbios) => n,
        Some((domain, _)) => bail!(
            "{name}: {domain} is not this domain ({})",
            t.domain().netbios
        ),
        None => name,
    };
    let v = escape(bare);
    let by_name = match kind {
        Kind::User => format!("(|(sAMAccountName={v})(userPrincipalName={v}))"),
        Kind::Computer => {
            let host = v.trim_end_matches('$');
            format!("(|(sAMAccountName={host}$)(dNSHostName={v})(cn={host}))")
        }
        Kind::Group => format!("(|(sAMAccountName={v})(cn={v}))"),
        Kind::Contact => format!("(|(cn={v})(displayName={v}))"),
        Kind::Member => {
            format!("(|(sAMAccountName={v})(sAMAccountName={v}$)(userPrincipalName={v})(cn={v}))")
        }
        Kind::Ou => bail!("organizational units are named by their DN, e.g. OU=Sales"),
    };
    let domain = t.domain().dn.clone();
    let filter = format!("(&{}{by_name})", kind.filter());
    let mut hits = t.search_all(&domain, Scope::Sub, &filter, &wanted)?;
    match hits.len() {
        0 => Err(not_found(kind, name)),
        1 => Ok(hits.remove(0)),
        _ => {
            let dns: Vec<String> = hits.into_iter().map(|f| f.dn).collect();
            bail!(
                "{name} names {} {}s; give the DN of one:\n  {}",
                dns.len(),
                kind.noun(),
                dns.join("\n  ")
            )
        }
    }
}

/// The DN of the container new objects go to: `--ou` (relative to the domain or whole),
/// else the well-known default container.
pub fn container(t: &dyn Target, ou: Option<&str>, default: &str) -> String {
    match ou {
        Some(o) => in_domain(t, o),
        None => format!("{default},{}", t.domain().dn),
    }
}

/// An RDN value escaped for a DN (RFC 4514).
pub fn rdn_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';' | '=')
            || (i == 0 && (c == '#' || c == ' '))
            || (i + 1 == value.chars().count() && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape("a*b(c)\\"), "a\\2ab\\28c\\29\\5c");
        assert_eq!(rdn_value("Smith, Ann"), "Smith\\, Ann");
        assert_eq!(rdn_value(" lead"), "\\ lead");
        assert_eq!(rdn_value("#x"), "\\#x");
    }
}
