//! SDDL, the text form of security descriptors (MS-DTYP 2.5.1): what the schema's
//! `defaultSecurityDescriptor` values are written in, and what administrators read.
//!
//! # Parsing
//!
//! `O:owner G:group D:flags(ace)(ace)… S:flags(ace)…`, sections in any order, each at
//! most once. ACEs are `(type;flags;rights;object-guid;inherit-object-guid;sid)` with
//! types `A D OA OD AU OU`; conditional, callback, alarm, mandatory-label and
//! resource-attribute ACEs are refused. Rights are two-letter aliases (directory
//! `CC DC LC SW RP WP DT LO CR`, standard `SD RC WD WO`, generic `GA GR GW GX`, file
//! `FA FR FW FX`, registry `KA KR KW KX`) or a number (`0x` hex, leading-`0` octal,
//! decimal; over 32 bits, or negative, is an error where Windows saturates or wraps).
//! `D:NO_ACCESS_CONTROL` is a NULL DACL. As Windows does, ACE types, flags, rights and
//! SID aliases are case-insensitive (section letters are not), and white space is
//! accepted where Windows accepts it: between sections, around ACL flags, around the
//! ACE type and flags, before the rights and between rights aliases, as a whole GUID
//! field, before the SID, and after an alias SID (not after a numeric one). Errors
//! carry the byte offset where they were found.
//!
//! SID aliases come from MS-DTYP 2.5.1.1 (the table with the RIDs is Samba's
//! `libcli/security/sddl.c`, checked against the Win32 "SID Strings" page): fixed SIDs
//! such as `WD` (S-1-1-0) or `BA` (S-1-5-32-544), RIDs of the domain the descriptor
//! belongs to (`DA` 512, `DU` 513, `DG` 514, `DC` 515 Domain Computers, `DD` 516 Domain
//! Controllers, `CA` 517 Cert Publishers, `PA` 520, `CN` 522, `AP` 525, `KA` 526, `RS`
//! 553, and — the DC's own machine SID being the domain's — `LA` 500 and `LG` 501), and
//! RIDs of the forest root domain (`RO` 498, `SA` 518, `EA` 519, `EK` 527).
//!
//! # Printing
//!
//! The output matches what Windows' ConvertSecurityDescriptorToStringSecurityDescriptor
//! produces, as recorded in Samba's `libcli/security/tests/windows/*.txt`: sections in
//! the order O, G, D, S; ACL flags as `P`, `AR`, `AI`; ACE flags in bit order (`OI CI
//! NP IO ID SA FA`); a SID as its alias when it has one in `domain` (else `S-1-…`); a
//! mask of 0 as nothing, a mask made only of bits that have aliases as those aliases
//! in bit order (`CCDCLCSWRPWPDTLOCRSDRCWDWO`, then `GA GX GW GR`), the exact masks
//! `FA FR FW FX` by name, and anything else as lower-case hex (`0x1200a9`). The
//! registry aliases `KA KR KW KX` are read but never printed: their masks consist of
//! directory bits, which is how this module prints them (as Samba does).

use crate::schema::builtin::{format_guid, parse_guid};
use crate::sid::Sid;

use super::descriptor::{ace_flags, control, Ace, AceKind, Acl, Guid, SecurityDescriptor};
use super::rights::*;
use super::SdError;

/// Where a SID alias points.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A fixed SID: authority and sub-authorities.
    Fixed(u64, &'static [u32]),
    /// A RID of the descriptor's domain.
    Domain(u32),
    /// A RID of the forest root domain.
    Root(u32),
}

/// The SID aliases (MS-DTYP 2.5.1.1).
const SID_ALIASES: &[(&str, Target)] = &[
    ("WD", Target::Fixed(1, &[0])),
    ("CO", Target::Fixed(3, &[0])),
    ("CG", Target::Fixed(3, &[1])),
    ("OW", Target::Fixed(3, &[4])),
    ("NU", Target::Fixed(5, &[2])),
    ("IU", Target::Fixed(5, &[4])),
    ("SU", Target::Fixed(5, &[6])),
    ("AN", Target::Fixed(5, &[7])),
    ("ED", Target::Fixed(5, &[9])),
    ("PS", Target::Fixed(5, &[10])),
    ("AU", Target::Fixed(5, &[11])),
    ("RC", Target::Fixed(5, &[12])),
    ("SY", Target::Fixed(5, &[18])),
    ("LS", Target::Fixed(5, &[19])),
    ("NS", Target::Fixed(5, &[20])),
    ("WR", Target::Fixed(5, &[33])),
    ("BA", Target::Fixed(5, &[32, 544])),
    ("BU", Target::Fixed(5, &[32, 545])),
    ("BG", Target::Fixed(5, &[32, 546])),
    ("PU", Target::Fixed(5, &[32, 547])),
    ("AO", Target::Fixed(5, &[32, 548])),
    ("SO", Target::Fixed(5, &[32, 549])),
    ("PO", Target::Fixed(5, &[32, 550])),
    ("BO", Target::Fixed(5, &[32, 551])),
    ("RE", Target::Fixed(5, &[32, 552])),
    ("RU", Target::Fixed(5, &[32, 554])),
    ("RD", Target::Fixed(5, &[32, 555])),
    ("NO", Target::Fixed(5, &[32, 556])),
    ("MU", Target::Fixed(5, &[32, 558])),
    ("LU", Target::Fixed(5, &[32, 559])),
    ("IS", Target::Fixed(5, &[32, 568])),
    ("CY", Target::Fixed(5, &[32, 569])),
    ("ER", Target::Fixed(5, &[32, 573])),
    ("CD", Target::Fixed(5, &[32, 574])),
    ("RA", Target::Fixed(5, &[32, 575])),
    ("ES", Target::Fixed(5, &[32, 576])),
    ("MS", Target::Fixed(5, &[32, 577])),
    ("HA", Target::Fixed(5, &[32, 578])),
    ("AA", Target::Fixed(5, &[32, 579])),
    ("RM", Target::Fixed(5, &[32, 580])),
    ("UD", Target::Fixed(5, &[84, 0, 0, 0, 0, 0])),
    ("AC", Target::Fixed(15, &[2, 1])),
    ("LW", Target::Fixed(16, &[4096])),
    ("ME", Target::Fixed(16, &[8192])),
    ("MP", Target::Fixed(16, &[8448])),
    ("HI", Target::Fixed(16, &[12288])),
    ("SI", Target::Fixed(16, &[16384])),
    ("AS", Target::Fixed(18, &[1])),
    ("SS", Target::Fixed(18, &[2])),
    ("RO", Target::Root(498)),
    ("LA", Target::Domain(500)),
    ("LG", Target::Domain(501)),
    ("DA", Target::Domain(512)),
    ("DU", Target::Domain(513)),
    ("DG", Target::Domain(514)),
    ("DC", Target::Domain(515)),
    ("DD", Target::Domain(516)),
    ("CA", Target::Domain(517)),
    ("SA", Target::Root(518)),
    ("EA", Target::Root(519)),
    ("PA", Target::Domain(520)),
    ("CN", Target::Domain(522)),
    ("AP", Target::Domain(525)),
    ("KA", Target::Domain(526)),
    ("EK", Target::Root(527)),
    ("RS", Target::Domain(553)),
];

/// Rights aliases that stand for one bit, in the order Windows prints them.
const RIGHT_BITS: &[(&str, u32)] = &[
    ("CC", RIGHT_DS_CREATE_CHILD),
    ("DC", RIGHT_DS_DELETE_CHILD),
    ("LC", RIGHT_DS_LIST_CONTENTS),
    ("SW", RIGHT_DS_SELF),
    ("RP", RIGHT_DS_READ_PROPERTY),
    ("WP", RIGHT_DS_WRITE_PROPERTY),
    ("DT", RIGHT_DS_DELETE_TREE),
    ("LO", RIGHT_DS_LIST_OBJECT),
    ("CR", RIGHT_DS_CONTROL_ACCESS),
    ("SD", RIGHT_DELETE),
    ("RC", RIGHT_READ_CONTROL),
    ("WD", RIGHT_WRITE_DAC),
    ("WO", RIGHT_WRITE_OWNER),
    ("GA", GENERIC_ALL),
    ("GX", GENERIC_EXECUTE),
    ("GW", GENERIC_WRITE),
    ("GR", GENERIC_READ),
];

/// Rights aliases that stand for a whole mask: printed only on an exact match.
const RIGHT_MASKS: &[(&str, u32)] = &[
    ("FA", FILE_ALL_ACCESS),
    ("FR", FILE_GENERIC_READ),
    ("FW", FILE_GENERIC_WRITE),
    ("FX", FILE_GENERIC_EXECUTE),
];

/// Registry rights aliases: read, never printed.
const RIGHT_KEYS: &[(&str, u32)] = &[
    ("KA", KEY_ALL_ACCESS),
    ("KR", KEY_READ),
    ("KW", KEY_WRITE),
    ("KX", KEY_EXECUTE),
];

/// ACE flag aliases, in bit (and printing) order.
const ACE_FLAGS: &[(&str, u8)] = &[
    ("OI", ace_flags::OBJECT_INHERIT),
    ("CI", ace_flags::CONTAINER_INHERIT),
    ("NP", ace_flags::NO_PROPAGATE_INHERIT),
    ("IO", ace_flags::INHERIT_ONLY),
    ("ID", ace_flags::INHERITED),
    ("SA", ace_flags::SUCCESSFUL_ACCESS),
    ("FA", ace_flags::FAILED_ACCESS),
];

/// ACE type letters this module reads and writes.
const ACE_TYPES: &[(&str, AceKind)] = &[
    ("A", AceKind::AccessAllowed),
    ("D", AceKind::AccessDenied),
    ("AU", AceKind::SystemAudit),
    ("OA", AceKind::AccessAllowedObject),
    ("OD", AceKind::AccessDeniedObject),
    ("OU", AceKind::SystemAuditObject),
];

/// ACE type letters SDDL defines that this module refuses.
const UNSUPPORTED_ACE_TYPES: &[&str] = &["AL", "OL", "ML", "XA", "XD", "XU", "ZA", "RA", "SP"];

/// The domains domain-relative aliases resolve against.
#[derive(Debug, Clone, Copy)]
struct Domains<'a> {
    domain: &'a Sid,
    root: &'a Sid,
}

impl<'a> Domains<'a> {
    /// A domain that is its own forest root.
    fn single(domain: &'a Sid) -> Domains<'a> {
        Domains {
            domain,
            root: domain,
        }
    }
}

/// Parses an SDDL security descriptor; `domain` resolves the domain-relative aliases
/// and also stands for the forest root domain (true of a single-domain forest).
pub fn parse(text: &str, domain: &Sid) -> Result<SecurityDescriptor, SdError> {
    parse_in_forest(text, domain, domain)
}

/// Parses an SDDL security descriptor of a domain whose forest root domain is `root`
/// (which resolves `EA`, `SA`, `RO` and `EK`).
pub fn parse_in_forest(
    text: &str,
    domain: &Sid,
    root: &Sid,
) -> Result<SecurityDescriptor, SdError> {
    Parser::new(text, Domains { domain, root }).descriptor()
}

/// Prints a security descriptor as SDDL, using the aliases of `domain` (which also
/// stands for the forest root domain).
pub fn print(sd: &SecurityDescriptor, domain: &Sid) -> Result<String, SdError> {
    print_in_forest(sd, domain, domain)
}

/// Prints a security descriptor as SDDL for a domain whose forest root is `root`.
pub fn print_in_forest(
    sd: &SecurityDescriptor,
    domain: &Sid,
    root: &Sid,
) -> Result<String, SdError> {
    let d = Domains { domain, root };
    let mut out = String::new();
    if let Some(o) = &sd.owner {
        out.push_str("O:");
        push_sid(&mut out, o, d);
    }
    if let Some(g) = &sd.group {
        out.push_str("G:");
        push_sid(&mut out, g, d);
    }
    if sd.dacl.is_some() || sd.control & control::SE_DACL_PRESENT != 0 {
        out.push_str("D:");
        push_acl_flags(
            &mut out,
            sd.control,
            control::SE_DACL_PROTECTED,
            control::SE_DACL_AUTO_INHERIT_REQ,
            control::SE_DACL_AUTO_INHERITED,
        );
        push_acl(&mut out, sd.dacl.as_ref(), d)?;
    }
    if sd.sacl.is_some() || sd.control & control::SE_SACL_PRESENT != 0 {
        out.push_str("S:");
        push_acl_flags(
            &mut out,
            sd.control,
            control::SE_SACL_PROTECTED,
            control::SE_SACL_AUTO_INHERIT_REQ,
            control::SE_SACL_AUTO_INHERITED,
        );
        push_acl(&mut out, sd.sacl.as_ref(), d)?;
    }
    Ok(out)
}

/// Parses one SID: an alias of `domain` or `S-1-…` text.
pub fn parse_sid(text: &str, domain: &Sid) -> Result<Sid, SdError> {
    let mut p = Parser::new(text, Domains::single(domain));
    p.skip_ws();
    let sid = p.sid()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err(p.pos, "unexpected text after the SID"));
    }
    Ok(sid)
}

/// The SDDL alias of a SID in `domain`, if it has one.
pub fn sid_alias(sid: &Sid, domain: &Sid) -> Option<&'static str> {
    alias_of(sid, Domains::single(domain))
}

/// A SID as SDDL prints it: its alias in `domain`, else `S-1-…`.
pub fn format_sid(sid: &Sid, domain: &Sid) -> String {
    let mut s = String::new();
    push_sid(&mut s, sid, Domains::single(domain));
    s
}

/// Parses an ACE's rights field: aliases or a number.
pub fn parse_rights(text: &str) -> Result<u32, SdError> {
    rights(text.as_bytes()).map_err(|(offset, what)| SdError::Sddl { offset, what })
}

/// An access mask as Windows prints it in SDDL (see the module documentation).
pub fn format_rights(mask: u32) -> String {
    if mask == 0 {
        return String::new();
    }
    let named = RIGHT_BITS.iter().fold(0, |m, (_, b)| m | b);
    if mask & !named == 0 {
        return RIGHT_BITS
            .iter()
            .filter(|(_, b)| mask & b != 0)
            .map(|(n, _)| *n)
            .collect();
    }
    if let Some((n, _)) = RIGHT_MASKS.iter().find(|(_, m)| *m == mask) {
        return (*n).to_string();
    }
    format!("0x{mask:x}")
}

/// Parses one ACE string, parentheses included.
pub fn parse_ace(text: &str, domain: &Sid) -> Result<Ace, SdError> {
    let mut p = Parser::new(text, Domains::single(domain));
    p.skip_ws();
    let ace = p.ace()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err(p.pos, "unexpected text after the ACE"));
    }
    Ok(ace)
}

/// One ACE as SDDL, parentheses included.
pub fn format_ace(ace: &Ace, domain: &Sid) -> Result<String, SdError> {
    let mut s = String::new();
    push_ace(&mut s, ace, Domains::single(domain))?;
    Ok(s)
}

/// The alias of a SID, if any.
fn alias_of(sid: &Sid, d: Domains<'_>) -> Option<&'static str> {
    let (prefix, rid) = match sid.subs.split_last() {
        Some((rid, prefix)) => (prefix, Some(*rid)),
        None => (&[][..], None),
    };
    let in_dom = |dom: &Sid| dom.authority == sid.authority && dom.subs == prefix;
    SID_ALIASES.iter().find_map(|(code, t)| {
        let hit = match *t {
            Target::Fixed(a, subs) => sid.authority == a && sid.subs == subs,
            Target::Domain(r) => rid == Some(r) && in_dom(d.domain),
            Target::Root(r) => rid == Some(r) && in_dom(d.root),
        };
        hit.then_some(*code)
    })
}

/// Appends a SID's alias or text.
fn push_sid(out: &mut String, sid: &Sid, d: Domains<'_>) {
    match alias_of(sid, d) {
        Some(a) => out.push_str(a),
        None => push_sid_text(out, sid),
    }
}

/// Appends `S-1-…`; an authority of 2^32 or more in upper-case hex without padding,
/// as Windows prints it in SDDL (`S-1-0x500000000-…`).
fn push_sid_text(out: &mut String, sid: &Sid) {
    use std::fmt::Write as _;
    if sid.authority >= 1 << 32 {
        let _ = write!(out, "S-1-0x{:X}", sid.authority);
    } else {
        let _ = write!(out, "S-1-{}", sid.authority);
    }
    for s in &sid.subs {
        let _ = write!(out, "-{s}");
    }
}

/// Appends an ACL's flags.
fn push_acl_flags(out: &mut String, c: u16, protected: u16, req: u16, inherited: u16) {
    if c & protected != 0 {
        out.push('P');
    }
    if c & req != 0 {
        out.push_str("AR");
    }
    if c & inherited != 0 {
        out.push_str("AI");
    }
}

/// Appends an ACL's ACEs, or `NO_ACCESS_CONTROL` for a NULL ACL.
fn push_acl(out: &mut String, acl: Option<&Acl>, d: Domains<'_>) -> Result<(), SdError> {
    let Some(acl) = acl else {
        out.push_str("NO_ACCESS_CONTROL");
        return Ok(());
    };
    for ace in &acl.aces {
        push_ace(out, ace, d)?;
    }
    Ok(())
}

/// Appends one ACE.
fn push_ace(out: &mut String, ace: &Ace, d: Domains<'_>) -> Result<(), SdError> {
    let Some((letters, _)) = ACE_TYPES.iter().find(|(_, k)| *k == ace.kind) else {
        return Err(SdError::Encode(format!(
            "ACE type {:#x} has no SDDL form here",
            ace.kind.ace_type()
        )));
    };
    if !ace.application_data.is_empty() {
        return Err(SdError::Encode(
            "an ACE with application data has no SDDL form".into(),
        ));
    }
    let mut rest = ace.flags;
    let mut flags = String::new();
    for (n, f) in ACE_FLAGS {
        if rest & f != 0 {
            flags.push_str(n);
            rest &= !f;
        }
    }
    if rest != 0 {
        return Err(SdError::Encode(format!(
            "ACE flag {rest:#x} has no SDDL form"
        )));
    }
    let guid = |g: &Option<Guid>| match g {
        Some(g) if ace.kind.is_object() => format_guid(g),
        _ => String::new(),
    };
    out.push('(');
    out.push_str(letters);
    out.push(';');
    out.push_str(&flags);
    out.push(';');
    out.push_str(&format_rights(ace.mask));
    out.push(';');
    out.push_str(&guid(&ace.object_type));
    out.push(';');
    out.push_str(&guid(&ace.inherited_object_type));
    out.push(';');
    push_sid(out, &ace.sid, d);
    out.push(')');
    Ok(())
}

/// Whether a byte is white space SDDL tolerates.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Parses a rights field (already trimmed); errors carry an offset into the field.
fn rights(field: &[u8]) -> Result<u32, (usize, String)> {
    let lead = field.iter().take_while(|&&b| is_ws(b)).count();
    let f = field.get(lead..).unwrap_or(&[]);
    let Some(&first) = f.first() else {
        return Ok(0);
    };
    if first.is_ascii_digit() {
        let text = std::str::from_utf8(f).map_err(|_| (lead, "bad number".to_string()))?;
        let (digits, radix) = if let Some(h) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
            (h, 16)
        } else if text.len() > 1 && first == b'0' {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err((lead, format!("bad number '{text}'")));
        }
        return u32::from_str_radix(digits, radix)
            .map_err(|_| (lead, format!("number '{text}' does not fit in 32 bits")));
    }
    let mut mask = 0;
    let mut i = lead;
    let f = field;
    while i < f.len() {
        if f.get(i) == Some(&b' ') {
            i += 1;
            if i == f.len() {
                return Err((i, "white space after the rights".to_string()));
            }
            continue;
        }
        let tok = f
            .get(i..i + 2)
            .ok_or((i, "incomplete right alias".to_string()))?;
        let bits = RIGHT_BITS
            .iter()
            .chain(RIGHT_MASKS)
            .chain(RIGHT_KEYS)
            .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(tok))
            .map(|(_, b)| *b)
            .ok_or_else(|| {
                (
                    i,
                    format!("unknown right '{}'", String::from_utf8_lossy(tok)),
                )
            })?;
        mask |= bits;
        i += 2;
    }
    Ok(mask)
}

/// A cursor over SDDL text.
struct Parser<'t> {
    s: &'t [u8],
    pos: usize,
    doms: Domains<'t>,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str, doms: Domains<'t>) -> Parser<'t> {
        Parser {
            s: text.as_bytes(),
            pos: 0,
            doms,
        }
    }

    fn err(&self, offset: usize, what: impl Into<String>) -> SdError {
        SdError::Sddl {
            offset,
            what: what.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    fn starts_with(&self, lit: &[u8]) -> bool {
        self.s.get(self.pos..).is_some_and(|r| r.starts_with(lit))
    }

    /// The whole descriptor.
    fn descriptor(&mut self) -> Result<SecurityDescriptor, SdError> {
        let mut sd = SecurityDescriptor::default();
        let (mut o, mut g, mut d, mut s) = (false, false, false, false);
        loop {
            self.skip_ws();
            let at = self.pos;
            let Some(tag) = self.peek() else { break };
            if self.s.get(at + 1) != Some(&b':') {
                return Err(self.err(at, "expected 'O:', 'G:', 'D:' or 'S:'"));
            }
            let seen = match tag {
                b'O' => &mut o,
                b'G' => &mut g,
                b'D' => &mut d,
                b'S' => &mut s,
                _ => return Err(self.err(at, "expected 'O:', 'G:', 'D:' or 'S:'")),
            };
            if *seen {
                return Err(self.err(at, format!("second '{}:' section", char::from(tag))));
            }
            *seen = true;
            self.pos += 2;
            match tag {
                b'O' => {
                    self.skip_ws();
                    sd.owner = Some(self.sid()?);
                }
                b'G' => {
                    self.skip_ws();
                    sd.group = Some(self.sid()?);
                }
                b'D' => {
                    let (flags, acl) = self.acl()?;
                    sd.control |= control::SE_DACL_PRESENT | flags;
                    sd.dacl = acl;
                }
                _ => {
                    // The SACL's control bits sit one place above the DACL's.
                    let (flags, acl) = self.acl()?;
                    sd.control |= control::SE_SACL_PRESENT | (flags << 1);
                    sd.sacl = acl;
                }
            }
        }
        Ok(sd)
    }

    /// An ACL's flags, as DACL control bits (P, AR, AI), and its ACEs; `None` for
    /// `NO_ACCESS_CONTROL`.
    fn acl(&mut self) -> Result<(u16, Option<Acl>), SdError> {
        let mut flags = 0u16;
        loop {
            self.skip_ws();
            if self.starts_with(b"P") {
                flags |= control::SE_DACL_PROTECTED;
                self.pos += 1;
            } else if self.starts_with(b"AR") {
                flags |= control::SE_DACL_AUTO_INHERIT_REQ;
                self.pos += 2;
            } else if self.starts_with(b"AI") {
                flags |= control::SE_DACL_AUTO_INHERITED;
                self.pos += 2;
            } else {
                break;
            }
        }
        if self.starts_with(b"NO_ACCESS_CONTROL") {
            self.pos += "NO_ACCESS_CONTROL".len();
            return Ok((flags, None));
        }
        let mut aces = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() != Some(b'(') {
                break;
            }
            aces.push(self.ace()?);
        }
        Ok((flags, Some(Acl::new(aces))))
    }

    /// One `(…)` ACE.
    fn ace(&mut self) -> Result<Ace, SdError> {
        let open = self.pos;
        if self.peek() != Some(b'(') {
            return Err(self.err(open, "expected '(' to start an ACE"));
        }
        let body_at = open + 1;
        let rest = self.s.get(body_at..).unwrap_or(&[]);
        // The type comes first: refuse conditional and resource ACEs (whose bodies hold
        // parentheses) before looking for the closing one.
        let type_len = rest
            .iter()
            .position(|&b| b == b';' || b == b')')
            .unwrap_or(rest.len());
        let ty = trim(rest.get(..type_len).unwrap_or(&[]));
        let ty_up: Vec<u8> = ty.iter().map(u8::to_ascii_uppercase).collect();
        if UNSUPPORTED_ACE_TYPES.iter().any(|t| t.as_bytes() == ty_up) {
            return Err(self.err(
                body_at,
                format!(
                    "ACE type '{}' is not supported",
                    String::from_utf8_lossy(ty)
                ),
            ));
        }
        let close = rest
            .iter()
            .position(|&b| b == b')')
            .ok_or_else(|| self.err(open, "ACE has no closing ')'"))?;
        let body = rest.get(..close).unwrap_or(&[]);
        if let Some(p) = body.iter().position(|&b| b == b'(') {
            return Err(self.err(body_at + p, "unexpected '(' inside an ACE"));
        }
        let mut fields: Vec<(usize, &[u8])> = Vec::with_capacity(6);
        let mut start = 0;
        for (i, &b) in body.iter().enumerate() {
            if b == b';' {
                fields.push((start, body.get(start..i).unwrap_or(&[])));
                start = i + 1;
            }
        }
        fields.push((start, body.get(start..).unwrap_or(&[])));
        if fields.len() != 6 {
            return Err(self.err(
                open,
                format!(
                    "an ACE has 6 fields separated by ';', this one has {}",
                    fields.len()
                ),
            ));
        }
        // Each field's text, untrimmed, and where it starts. White space is read as
        // Windows reads it: around the type and the flags, a GUID field of nothing but
        // white space, before the SID and after an alias SID; not in or around a rights
        // field (except between aliases), a GUID or after a numeric SID.
        let raw: Vec<(usize, &[u8])> = fields
            .into_iter()
            .map(|(at, f)| (body_at + at, f))
            .collect();
        let trimmed = |i: usize| -> (usize, &[u8]) {
            let (at, f) = raw.get(i).copied().unwrap_or((open, &[][..]));
            let lead = f.iter().take_while(|&&b| is_ws(b)).count();
            (at + lead, trim(f))
        };
        let field = |i: usize| raw.get(i).copied().unwrap_or((open, &[][..]));

        let (at, ty) = trimmed(0);
        let kind = ACE_TYPES
            .iter()
            .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(ty))
            .map(|(_, k)| k.clone())
            .ok_or_else(|| {
                self.err(
                    at,
                    format!("unknown ACE type '{}'", String::from_utf8_lossy(ty)),
                )
            })?;

        let (at, f) = trimmed(1);
        let mut flags = 0u8;
        let mut i = 0;
        while i < f.len() {
            if f.get(i).is_some_and(|&b| is_ws(b)) {
                i += 1;
                continue;
            }
            let tok = f.get(i..i + 2).unwrap_or(f.get(i..).unwrap_or(&[]));
            let bit = ACE_FLAGS
                .iter()
                .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(tok))
                .map(|(_, b)| *b)
                .ok_or_else(|| {
                    self.err(
                        at + i,
                        format!("unknown ACE flag '{}'", String::from_utf8_lossy(tok)),
                    )
                })?;
            flags |= bit;
            i += 2;
        }

        let (at, r) = field(2);
        let mask = rights(r).map_err(|(o, what)| self.err(at + o, what))?;

        let guid = |i: usize| -> Result<Option<Guid>, SdError> {
            let (at, g) = field(i);
            if g.iter().all(|&b| is_ws(b)) {
                return Ok(None);
            }
            if !kind.is_object() {
                return Err(self.err(at, "a GUID on an ACE type that is not an object ACE"));
            }
            let ok = g.len() == 36 && g.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-');
            let text = std::str::from_utf8(g).ok().filter(|_| ok);
            text.and_then(parse_guid)
                .map(Some)
                .ok_or_else(|| self.err(at, format!("bad GUID '{}'", String::from_utf8_lossy(g))))
        };
        let object_type = guid(3)?;
        let inherited_object_type = guid(4)?;

        let (at, sid_text) = field(5);
        let lead = sid_text.iter().take_while(|&&b| is_ws(b)).count();
        let (at, sid_text) = (at + lead, sid_text.get(lead..).unwrap_or(&[]));
        let numeric = sid_text
            .get(..2)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"S-"));
        let mut sp = Parser {
            s: sid_text,
            pos: 0,
            doms: self.doms,
        };
        let sid = sp.sid().map_err(|e| match e {
            SdError::Sddl { offset, what } => SdError::Sddl {
                offset: at + offset,
                what,
            },
            other => other,
        })?;
        let tail = sid_text.get(sp.pos..).unwrap_or(&[]);
        if !tail.is_empty() && (numeric || !tail.iter().all(|&b| is_ws(b))) {
            return Err(self.err(at + sp.pos, "unexpected text after the ACE's SID"));
        }

        self.pos = body_at + close + 1;
        Ok(Ace::object(
            kind,
            flags,
            mask,
            sid,
            object_type,
            inherited_object_type,
        ))
    }

    /// A SID alias or `S-1-…` text at the cursor.
    fn sid(&mut self) -> Result<Sid, SdError> {
        let at = self.pos;
        let is_numeric = self
            .s
            .get(at..at + 2)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"S-"));
        if is_numeric {
            return self.numeric_sid();
        }
        let tok = self.s.get(at..at + 2).unwrap_or(&[]);
        let target = SID_ALIASES
            .iter()
            .find(|(c, _)| c.as_bytes().eq_ignore_ascii_case(tok))
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                self.err(
                    at,
                    format!("unknown SID alias '{}'", String::from_utf8_lossy(tok)),
                )
            })?;
        self.pos += 2;
        Ok(match target {
            Target::Fixed(authority, subs) => Sid {
                authority,
                subs: subs.to_vec(),
            },
            Target::Domain(rid) => self.doms.domain.with_rid(rid),
            Target::Root(rid) => self.doms.root.with_rid(rid),
        })
    }

    /// `S-1-<authority>-<sub>…`; components are decimal or `0x` hex, and the SID ends
    /// at the first character that cannot continue it (so `…-512D:` stops before `D`).
    fn numeric_sid(&mut self) -> Result<Sid, SdError> {
        let at = self.pos;
        self.pos += 2;
        if !self.starts_with(b"1-") {
            return Err(self.err(at, "SID revision is not 1"));
        }
        let mut parts: Vec<u64> = Vec::new();
        loop {
            let start = self.pos;
            let hex = self.starts_with(b"0x") || self.starts_with(b"0X");
            let value = if hex && self.s.get(start + 2).is_some_and(u8::is_ascii_hexdigit) {
                self.pos += 2;
                self.number(16)
            } else {
                self.number(10)
            }
            .ok_or_else(|| self.err(start, "bad SID component"))?;
            parts.push(value);
            let more = self.peek() == Some(b'-')
                && self.s.get(self.pos + 1).is_some_and(u8::is_ascii_digit);
            if !more {
                break;
            }
            self.pos += 1;
        }
        let (rev, rest) = parts
            .split_first()
            .ok_or_else(|| self.err(at, "empty SID"))?;
        if *rev != 1 {
            return Err(self.err(at, "SID revision is not 1"));
        }
        let (authority, subs) = rest
            .split_first()
            .ok_or_else(|| self.err(at, "SID has no identifier authority"))?;
        if *authority >= 1 << 48 {
            return Err(self.err(at, "SID authority exceeds 48 bits"));
        }
        if subs.len() > 15 {
            return Err(self.err(at, "SID has more than 15 sub-authorities"));
        }
        let subs = subs
            .iter()
            .map(|&v| u32::try_from(v))
            .collect::<Result<Vec<u32>, _>>()
            .map_err(|_| self.err(at, "SID sub-authority exceeds 32 bits"))?;
        Ok(Sid {
            authority: *authority,
            subs,
        })
    }

    /// A run of digits in `radix` at the cursor (at least one), saturating far
    /// beyond what any caller accepts. A hex run stops before a `D` followed by `:`,
    /// which starts the DACL section rather than ending the number (as Windows reads
    /// `O:S-1-2-0x200D:`).
    fn number(&mut self, radix: u32) -> Option<u64> {
        let mut v: u64 = 0;
        let start = self.pos;
        while let Some(d) = self.peek().and_then(|b| char::from(b).to_digit(radix)) {
            let dacl_tag = radix == 16
                && matches!(self.peek(), Some(b'D' | b'd'))
                && self.s.get(self.pos + 1) == Some(&b':');
            if dacl_tag {
                break;
            }
            v = v
                .saturating_mul(u64::from(radix))
                .saturating_add(u64::from(d));
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }
}

/// A field without surrounding white space.
fn trim(f: &[u8]) -> &[u8] {
    let start = f.iter().position(|&b| !is_ws(b)).unwrap_or(f.len());
    let end = f.iter().rposition(|&b| !is_ws(b)).map_or(start, |e| e + 1);
    f.get(start..end).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom() -> Sid {
        Sid::parse("S-1-5-21-2457507606-2709100691-398136650").unwrap()
    }

    fn canon(text: &str) -> String {
        print(&parse(text, &dom()).unwrap(), &dom()).unwrap()
    }

    #[test]
    fn aliases_resolve_in_the_domain() {
        let d = dom();
        assert_eq!(parse_sid("DA", &d).unwrap(), d.with_rid(512));
        assert_eq!(parse_sid("dd", &d).unwrap(), d.with_rid(516));
        assert_eq!(parse_sid("DC", &d).unwrap(), d.with_rid(515));
        assert_eq!(parse_sid("EA", &d).unwrap(), d.with_rid(519));
        assert_eq!(parse_sid("RO", &d).unwrap(), d.with_rid(498));
        assert_eq!(parse_sid("BA", &d).unwrap(), Sid::builtin(544));
        assert_eq!(parse_sid("WD", &d).unwrap().to_string(), "S-1-1-0");
        assert_eq!(sid_alias(&d.with_rid(500), &d), Some("LA"));
        assert_eq!(sid_alias(&d.with_rid(1105), &d), None);
        let other = Sid::parse("S-1-5-21-1-2-3").unwrap();
        assert_eq!(format_sid(&other.with_rid(512), &d), "S-1-5-21-1-2-3-512");
        let root = Sid::parse("S-1-5-21-9-9-9").unwrap();
        let sd = parse_in_forest("O:EAG:DAD:", &d, &root).unwrap();
        assert_eq!(sd.owner, Some(root.with_rid(519)));
        assert_eq!(sd.group, Some(d.with_rid(512)));
        assert_eq!(print_in_forest(&sd, &d, &root).unwrap(), "O:EAG:DAD:");
    }

    #[test]
    fn every_alias_round_trips() {
        let d = dom();
        for (code, _) in SID_ALIASES {
            let sid = parse_sid(code, &d).unwrap();
            assert_eq!(format_sid(&sid, &d), *code, "{code}");
        }
    }

    #[test]
    fn rights_print_as_windows_does() {
        // Windows' own output, recorded in Samba's
        // libcli/security/tests/windows/non_canonical.txt.
        assert_eq!(
            format_rights(parse_rights("RPWPCRCCDCLCLORCWOWDSDDTSW").unwrap()),
            "CCDCLCSWRPWPDTLOCRSDRCWDWO"
        );
        assert_eq!(format_rights(parse_rights("RPLCLORC").unwrap()), "LCRPLORC");
        assert_eq!(format_rights(123_456_789), "0x75bcd15");
        assert_eq!(format_rights(parse_rights("01234567").unwrap()), "0x53977");
        assert_eq!(format_rights(parse_rights("16").unwrap()), "RP");
        assert_eq!(
            format_rights(parse_rights("0xff").unwrap()),
            "CCDCLCSWRPWPDTLO"
        );
        assert_eq!(format_rights(0xe00f_0000), "SDRCWDWOGXGWGR");
        assert_eq!(format_rights(0x1f01ff), "FA");
        assert_eq!(format_rights(parse_rights("FAGX").unwrap()), "0x201f01ff");
        assert_eq!(format_rights(0x1200a9), "0x1200a9");
        assert_eq!(format_rights(0), "");
        assert_eq!(parse_rights("KA").unwrap(), 0xF003F);
        assert_eq!(parse_rights("CC DC").unwrap(), 3);
        assert!(parse_rights("0x123456789").is_err());
        assert!(parse_rights("XX").is_err());
        assert!(parse_rights("C").is_err());
    }

    #[test]
    fn windows_canonical_forms() {
        // Input and Windows' output, from Samba's libcli/security/tests/windows/*.txt.
        for (input, windows) in [
            ("D:(A;;GA;;;SY)", "D:(A;;GA;;;SY)"),
            ("D:S:", "D:S:"),
            ("S:D:P", "D:PS:"),
            ("D:ARPAI(A;;GA;;;SY)", "D:PARAI(A;;GA;;;SY)"),
            ("D:PPPPPPPPPPPP(A;;GA;;;SY)", "D:P(A;;GA;;;SY)"),
            ("D:(A;;GA;;; LG)", "D:(A;;GA;;;LG)"),
            ("D: (A;;GA;;;LG)", "D:(A;;GA;;;LG)"),
            ("D:(a;;GA;;;LG)", "D:(A;;GA;;;LG)"),
            ("D:(A;;ga;;;lg)", "D:(A;;GA;;;LG)"),
            (
                "D:P(A;;GA;;;LG) (A;;GX;;;AA)",
                "D:P(A;;GA;;;LG)(A;;GX;;;AA)",
            ),
            ("D:(A;;GA;;;WD )", "D:(A;;GA;;;WD)"),
            ("D:(A;;GA;;; S-1-3-4)", "D:(A;;GA;;;OW)"),
            ("  O:AA G:WD  ", "O:AAG:WD"),
            ("O:S-1-2-0x200D:", "O:S-1-2-512D:"),
            (
                "O:LAG:BAD:(A;;0x1ff;;;WD)",
                "O:LAG:BAD:(A;;CCDCLCSWRPWPDTLOCR;;;WD)",
            ),
            (
                "O:LAG:BAD:P(A;OICI;0x1f01ff;;;BA)",
                "O:LAG:BAD:P(A;OICI;FA;;;BA)",
            ),
            (
                "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;AU)(A;;LCRPLORC;;;ED)",
                "D:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;SY)(A;;LCRPLORC;;;AU)(A;;LCRPLORC;;;ED)",
            ),
            (
                "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;BO)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
                 (A;;RPLCLORC;;;AU)S:(AU;SA;CRWP;;;WD)",
                "D:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;BO)(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;SY)\
                 (A;;LCRPLORC;;;AU)S:(AU;SA;WPCR;;;WD)",
            ),
            (
                "S:(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;\
                 bf967aa5-0de6-11d0-a285-00aa003049e2;WD)",
                "S:(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;\
                 bf967aa5-0de6-11d0-a285-00aa003049e2;WD)",
            ),
            ("D:(A;;;;;BO)", "D:(A;;;;;BO)"),
            ("D:NO_ACCESS_CONTROL", "D:NO_ACCESS_CONTROL"),
        ] {
            assert_eq!(canon(input), windows, "{input}");
        }
    }

    #[test]
    fn errors_say_where() {
        let d = dom();
        let at = |t: &str| match parse(t, &d) {
            Err(SdError::Sddl { offset, what }) => (offset, what),
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(at("Z:(A;;GA;;;SY)").0, 0);
        assert_eq!(at("d:(A;;GA;;;LG)").0, 0);
        assert_eq!(at("D:(Antlers;;GA;;;SY)").0, 3);
        assert_eq!(at("D:(A;;GA;;)").0, 2);
        assert_eq!(at("D:(A;;GX;;;QQ)").0, 11);
        assert_eq!(at("D:(A;;GA;;;LG").0, 2);
        assert_eq!(at("D:(A;;GA ZZ;;;LG)").0, 9);
        assert_eq!(at("D:(A;XX;GA;;;LG)").0, 5);
        assert_eq!(
            at("D:(OA;;CR;f30e3bbe-9ff0-11d1-b603-00potato7c1;;WD)").0,
            10
        );
        assert_eq!(
            at("D:(A;;CR;f30e3bbe-9ff0-11d1-b603-0000f80367c1;;WD)").0,
            9
        );
        assert!(at("D:(XA;;FA;;;WD;(Member_of {SID(BA)}))")
            .1
            .contains("not supported"));
        assert!(at("O:BAO:BA").1.contains("second"));
        assert!(at("D:((A;;GA;;;LG))").1.contains("unexpected '('"));
        assert!(at("D:(A;;GA;;;LG;)").1.contains("6 fields"));
        assert!(at("O:S-1-5-21-99999999999").1.contains("32 bits"));
        assert!(at("O:S-2-5").1.contains("revision"));
    }

    #[test]
    fn sids_stop_before_the_next_section() {
        let d = dom();
        let sd = parse("O:S-1-5-21-1-2-3-512G:S-1-5-21-1-2-3-513D:P", &d).unwrap();
        assert_eq!(sd.owner.unwrap().to_string(), "S-1-5-21-1-2-3-512");
        assert_eq!(sd.group.unwrap().to_string(), "S-1-5-21-1-2-3-513");
        assert_eq!(sd.control, 0x9004);
    }

    #[test]
    fn unprintable_parts_are_errors() {
        let d = dom();
        let mut ace = parse_ace("(A;;RP;;;WD)", &d).unwrap();
        ace.flags = 0x20;
        assert!(format_ace(&ace, &d).is_err());
        ace.flags = 0;
        ace.application_data = vec![1, 2, 3, 4];
        assert!(format_ace(&ace, &d).is_err());
    }
}
