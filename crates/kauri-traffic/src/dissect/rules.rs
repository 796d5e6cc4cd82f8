//! The text rules of the summary format, shared by the PDML reader and the dissectors so
//! both paths write the same columns: how a dissector's field label becomes a description,
//! how a DN becomes its signature, how a filter loses its values, how attribute names are
//! joined, and which values count as "empty".
//!
//! A pattern such as "from `=` up to the next `,`" never crosses a line break, as in the
//! reference summarizer; the helpers below keep that.

/// Whether a column value counts as present: not empty and not `"0"` (so a base-object
/// scope of 0 is written as an empty column, as the reference output has it).
pub fn truthy(s: &str) -> bool {
    !s.is_empty() && s != "0"
}

/// A field label such as `protocolOp: searchRequest (3)` made into a description
/// (`searchRequest`): the text up to the first colon (and one space) goes, a trailing
/// decimal number in parentheses goes, trailing white space goes. With `message_prefix`, a
/// leading `Message is a ` goes too (`Response: Message is a query` → `query`).
pub fn tidy_label(label: &str, message_prefix: bool) -> String {
    let mut s = match label.find(':') {
        Some(i) => {
            let rest = &label[i + 1..];
            rest.strip_prefix(' ').unwrap_or(rest)
        }
        None => label,
    };
    if message_prefix {
        s = s.strip_prefix("Message is a ").unwrap_or(s);
    }
    let mut s = s.to_string();
    let trimmed = s.trim_end();
    if let Some(body) = trimmed.strip_suffix(')') {
        let digits = body.len() - body.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && body[..body.len() - digits].ends_with('(') {
            s.truncate(body.len() - digits - 1);
        }
    }
    s.truncate(s.trim_end().len());
    s
}

/// The first `end` after byte `from` that no line break precedes.
fn find_on_line(s: &str, from: usize, end: u8) -> Option<usize> {
    for (i, b) in s.bytes().enumerate().skip(from) {
        if b == end {
            return Some(i);
        }
        if b == b'\n' {
            return None;
        }
    }
    None
}

/// Replaces every "`=` up to the next `end`" with `end` alone, left to right.
fn drop_values_before(s: &str, end: u8) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    while let Some(rel) = s[pos..].find('=') {
        let eq = pos + rel;
        match find_on_line(s, eq + 1, end) {
            Some(stop) => {
                out.push_str(&s[pos..eq]);
                out.push(char::from(end));
                pos = stop + 1;
            }
            None => {
                out.push_str(&s[pos..=eq]);
                pos = eq + 1;
            }
        }
    }
    out.push_str(&s[pos..]);
    out
}

/// A DN (as a dissector shows it) reduced to its signature, the sequence of its attribute
/// types: `CN=x,DC=example,DC=com` → `CN,DC,DC`. Angle brackets around an extended DN go
/// (`<WKGUID=…,DC=x>` → `WKGUID,DC`). An empty or `"0"` DN stays empty.
pub fn dn_signature(dn: &str) -> String {
    if !truthy(dn) {
        return String::new();
    }
    let mut s = dn.strip_prefix('<').unwrap_or(dn).to_string();
    if s.ends_with(">\n") {
        s.remove(s.len() - 2);
    } else if s.ends_with('>') {
        s.pop();
    }
    let mut s = drop_values_before(&s, b',');
    // The last value: from the first `=` whose rest holds no line break (but a final one).
    let mut from = 0;
    while let Some(rel) = s[from..].find('=') {
        let eq = from + rel;
        let rest = &s[eq..];
        match rest.find('\n') {
            None => {
                s.truncate(eq);
                break;
            }
            Some(nl) if nl == rest.len() - 1 => {
                s.replace_range(eq..s.len() - 1, "");
                break;
            }
            Some(_) => from = eq + 1,
        }
    }
    s
}

/// Every match of `open` followed by the shortest run up to `end` on the same line; for
/// each, the byte range from `open` to `end` inclusive.
fn lazy_matches(s: &str, open: &str, ends: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(rel) = s[pos..].find(open) {
        let start = pos + rel;
        let after = start + open.len();
        match ends.iter().find_map(|e| find_on_line(s, after, *e)) {
            Some(stop) => {
                found.push((start, stop));
                pos = stop + 1;
            }
            None => pos = start + 1,
        }
    }
    found
}

/// A filter as a dissector shows it (`(&(objectClass=user)(sAMAccountName=bob))`, with or
/// without a leading `Filter:`) with its assertion values removed (`(&(objectClass=user)
/// (sAMAccountName))`). `objectClass` values are kept, and so is an `objectCategory`
/// value up to its first comma.
pub fn strip_filter(text: &str) -> String {
    let classes: Vec<String> = lazy_matches(text, "(objectClass=", b")")
        .into_iter()
        .map(|(a, b)| format!("({})", &text[a + 1..b]))
        .collect();
    let categories: Vec<String> = lazy_matches(text, "(objectCategory=", b",)")
        .into_iter()
        .map(|(a, b)| text[a..=b].to_string())
        .collect();
    let body = match text.strip_prefix("Filter:") {
        Some(rest) => rest.trim_start(),
        None => text,
    };
    let mut filter = drop_values_before(body, b')');
    for cat in &categories {
        if let Some(i) = filter.find("(objectCategory)") {
            filter.replace_range(i..i + "(objectCategory)".len(), cat);
        }
    }
    for class in &classes {
        if let Some(i) = filter.find("(objectClass)") {
            filter.replace_range(i..i + "(objectClass)".len(), class);
        }
    }
    filter
}

/// Appends an attribute name to a comma-joined list.
pub fn push_attribute(list: &mut String, name: &str) {
    if truthy(list) {
        list.push(',');
    }
    list.push_str(name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_descriptions() {
        assert_eq!(
            tidy_label("protocolOp: searchRequest (3)", false),
            "searchRequest"
        );
        assert_eq!(tidy_label("Response: Message is a query", true), "query");
        assert_eq!(
            tidy_label("AndXCommand: No further commands (0xff)", false),
            "No further commands (0xff)"
        );
        assert_eq!(
            tidy_label("Operation: lsa_SetInformationTrustedDomain (27)", false),
            "lsa_SetInformationTrustedDomain"
        );
        assert_eq!(tidy_label("no colon (12)  ", false), "no colon");
        assert_eq!(tidy_label("", false), "");
    }

    #[test]
    fn dns_become_signatures() {
        assert_eq!(dn_signature("DC=samba,DC=example,DC=com"), "DC,DC,DC");
        assert_eq!(
            dn_signature("<WKGUID=2FBAC1870ADE11D297C400C04FD8D5CD,DC=samba,DC=example>"),
            "WKGUID,DC,DC"
        );
        assert_eq!(dn_signature("CN=a\\,b,DC=x"), "CN,b,DC");
        assert_eq!(dn_signature("CN=a=b,DC=x"), "CN,DC");
        assert_eq!(dn_signature("rootless"), "rootless");
        assert_eq!(dn_signature(""), "");
        assert_eq!(dn_signature("0"), "");
    }

    #[test]
    fn filters_lose_values() {
        assert_eq!(strip_filter("Filter: (objectClass=*)"), "(objectClass=*)");
        assert_eq!(
            strip_filter("Filter: (&(&(NtVer=0x00000006)(DnsDomain=x.y))(AAC=00:00:00:00))"),
            "(&(&(NtVer)(DnsDomain))(AAC))"
        );
        assert_eq!(
            strip_filter("(&(objectCategory=CN=Person,CN=Schema)(cn>=b)(objectClass=user))"),
            "(&(objectCategory=CN=Person,(cn>)(objectClass=user))"
        );
        assert_eq!(strip_filter("(objectSid=a)b)"), "(objectSid)b)");
    }

    #[test]
    fn attributes_join() {
        let mut l = String::new();
        push_attribute(&mut l, "cn");
        push_attribute(&mut l, "");
        push_attribute(&mut l, "sn");
        assert_eq!(l, "cn,,sn");
    }
}
