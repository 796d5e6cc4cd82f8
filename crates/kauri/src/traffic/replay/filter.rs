//! Summaries keep a filter's shape and attribute names but not its values
//! (`(&(objectClass=user)(sAMAccountName))` becomes `(&(objectClass=*)(sAMAccountName))`
//! or similar); replay gives the value-less leaves values drawn from the target directory,
//! so the server meets lookups that find real entries, as the recorded clients' did.

use std::collections::HashMap;

use kauri_traffic::random::Rng;

/// Values seen in the target directory, per attribute (lower-case name), to fill filters.
#[derive(Debug, Default)]
pub struct ValuePool {
    values: HashMap<String, Vec<Vec<u8>>>,
}

/// Attributes whose values are binary: written as `\xx` escapes in a filter.
const BINARY: &[&str] = &[
    "objectsid",
    "objectguid",
    "tokengroups",
    "ntsecuritydescriptor",
];

impl ValuePool {
    /// Remembers a value of `attribute` (at most `cap` per attribute).
    pub fn add(&mut self, attribute: &str, value: &[u8], cap: usize) {
        let v = self
            .values
            .entry(attribute.to_ascii_lowercase())
            .or_default();
        if v.len() < cap {
            v.push(value.to_vec());
        }
    }

    /// A random value of `attribute`, if any was seen.
    pub fn pick(&self, attribute: &str, rng: &mut Rng) -> Option<&[u8]> {
        let v = self.values.get(&attribute.to_ascii_lowercase())?;
        if v.is_empty() {
            return None;
        }
        Some(&v[rng.below(v.len() as u64) as usize])
    }

    /// Values remembered in all.
    pub fn len(&self) -> usize {
        self.values.values().map(Vec::len).sum()
    }
}

/// Writes `value` as a filter assertion value (RFC 4515 escapes).
fn escape(attribute: &str, value: &[u8], out: &mut String) {
    let binary = BINARY.contains(&attribute.to_ascii_lowercase().as_str());
    for &b in value {
        if binary || matches!(b, b'*' | b'(' | b')' | b'\\' | 0) || !b.is_ascii() {
            out.push_str(&format!("\\{b:02x}"));
        } else {
            out.push(b as char);
        }
    }
}

/// Turns a filter shape from a summary into a filter a server accepts: a leaf without an
/// operator (`(sAMAccountName)`) gets an equality with a value from `pool` (a presence test
/// when none is known); leaves with an operator are kept. `None` when the text is not a
/// filter shape at all (unbalanced parentheses).
pub fn fill(shape: &str, pool: &ValuePool, rng: &mut Rng) -> Option<String> {
    let shape = shape.trim();
    if shape.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(shape.len() + 32);
    let rest = fill_one(shape, pool, rng, &mut out, 0)?;
    rest.trim().is_empty().then_some(out)
}

/// Fills one parenthesised filter at the start of `s`, returning what follows it.
fn fill_one<'a>(
    s: &'a str,
    pool: &ValuePool,
    rng: &mut Rng,
    out: &mut String,
    depth: usize,
) -> Option<&'a str> {
    if depth > 64 {
        return None;
    }
    let s = s.trim_start();
    let inner = s.strip_prefix('(')?;
    let first = inner.chars().next()?;
    if matches!(first, '&' | '|' | '!') {
        out.push('(');
        out.push(first);
        let mut rest = &inner[1..];
        loop {
            let r = rest.trim_start();
            if let Some(after) = r.strip_prefix(')') {
                out.push(')');
                return Some(after);
            }
            rest = fill_one(r, pool, rng, out, depth + 1)?;
        }
    }
    // A leaf: up to the first unescaped ')'.
    let end = inner.find(')')?;
    let leaf = &inner[..end];
    out.push('(');
    if leaf.contains('=') {
        out.push_str(leaf);
    } else {
        let attribute = leaf.trim();
        match pool.pick(attribute, rng) {
            Some(v) => {
                out.push_str(attribute);
                out.push('=');
                escape(attribute, v, out);
            }
            None => {
                out.push_str(attribute);
                out.push_str("=*");
            }
        }
    }
    out.push(')');
    Some(&inner[end + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_get_values() {
        let mut pool = ValuePool::default();
        pool.add("sAMAccountName", b"alice", 10);
        pool.add("objectSid", &[1, 5, 0x2a], 10);
        let mut rng = Rng::new(1);
        assert_eq!(
            fill("(&(objectClass=*)(sAMAccountName))", &pool, &mut rng).unwrap(),
            "(&(objectClass=*)(sAMAccountName=alice))"
        );
        assert_eq!(
            fill("(objectSid)", &pool, &mut rng).unwrap(),
            "(objectSid=\\01\\05\\2a)"
        );
        assert_eq!(
            fill("(&(&(NtVer)(DnsDomain))(AAC))", &pool, &mut rng).unwrap(),
            "(&(&(NtVer=*)(DnsDomain=*))(AAC=*))"
        );
        assert_eq!(fill("(!(cn))", &pool, &mut rng).unwrap(), "(!(cn=*))");
        assert!(fill("(&(cn)", &pool, &mut rng).is_none());
        assert!(fill("", &pool, &mut rng).is_none());
        assert!(fill("(cn))", &pool, &mut rng).is_none());
        let deep = "(&".repeat(100) + &")".repeat(100);
        assert!(fill(&deep, &pool, &mut rng).is_none());
    }
}
