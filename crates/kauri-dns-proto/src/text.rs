//! Record data as `samba-tool dns add|update|delete` takes it, so Kauri's tool and
//! management interface accept what Samba administrators type, and print it back the same
//! way.
//!
//! The forms (Samba's `python/samba/dnsserver.py`, `*Record.from_string`):
//!
//! | type | text |
//! |------|------|
//! | A, AAAA | the address |
//! | PTR, CNAME, NS | the name |
//! | MX | `exchange preference` |
//! | SRV | `target port priority weight` |
//! | SOA | `mname rname serial refresh retry expire minimum` |
//! | TXT | one or more strings split as POSIX `shlex.split` does |
//!
//! Any type also takes RFC 3597's generic `\# length hex`.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{ProtoError, Result};
use crate::name::Name;
use crate::rdata::{hex, rtype, RData, Soa};

fn bad(msg: String) -> ProtoError {
    ProtoError::BadText(msg)
}

fn number<T: std::str::FromStr>(what: &str, s: &str) -> Result<T> {
    s.parse()
        .map_err(|_| bad(format!("{what} {s:?} is not a number in range")))
}

fn fields<'a, const N: usize>(text: &'a str, form: &str) -> Result<[&'a str; N]> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    <[&str; N]>::try_from(parts).map_err(|_| {
        bad(format!(
            "expected {N} space-separated fields ({form}), got {text:?}"
        ))
    })
}

/// Splits like Python's `shlex.split` in POSIX mode (what samba-tool uses for TXT):
/// whitespace separates words; `'…'` keeps everything literally; inside `"…"` a
/// backslash escapes only `"` and `\`; outside quotes a backslash escapes any character;
/// adjacent pieces join into one word; `""` is an empty word.
pub fn shlex_split(text: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(bad(format!("no closing quotation in {text:?}"))),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\')) => word.push(e),
                            Some(e) => {
                                word.push('\\');
                                word.push(e);
                            }
                            None => return Err(bad(format!("no closing quotation in {text:?}"))),
                        },
                        Some(c) => word.push(c),
                        None => return Err(bad(format!("no closing quotation in {text:?}"))),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(e) => word.push(e),
                    None => return Err(bad(format!("no escaped character in {text:?}"))),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Quotes `s` so [`shlex_split`] gives it back as one word.
fn shlex_quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// Reads RFC 3597's `\# length hex…` (hex may be split by spaces).
fn generic(rtype: u16, text: &str) -> Result<RData> {
    let mut parts = text.split_whitespace();
    let _marker = parts.next();
    let len: usize = number("length", parts.next().unwrap_or_default())?;
    let digits: String = parts.collect();
    if !digits.len().is_multiple_of(2) {
        return Err(bad(format!("odd number of hex digits in {text:?}")));
    }
    let data = (0..digits.len() / 2)
        .map(|i| {
            digits
                .get(2 * i..2 * i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| bad(format!("bad hex in {text:?}")))
        })
        .collect::<Result<Vec<u8>>>()?;
    if data.len() != len {
        return Err(bad(format!(
            "{text:?}: length {len} but {} bytes",
            data.len()
        )));
    }
    match rtype {
        rtype::A
        | rtype::AAAA
        | rtype::NS
        | rtype::CNAME
        | rtype::PTR
        | rtype::SOA
        | rtype::MX
        | rtype::TXT
        | rtype::SRV => RData::decode_wire(rtype, &data, 0, data.len()),
        _ => Ok(RData::Unknown { rtype, data }),
    }
}

impl RData {
    /// Reads record data of type `rtype` in samba-tool's form (see the module
    /// documentation), or RFC 3597's `\# length hex` for any type. Names may be written
    /// with or without the trailing dot.
    pub fn parse_text(rtype: u16, text: &str) -> Result<RData> {
        let text = text.trim();
        if text.starts_with("\\#") {
            return generic(rtype, text);
        }
        let name = |s: &str| Name::parse(s);
        Ok(match rtype {
            rtype::A => RData::A(
                text.parse::<Ipv4Addr>()
                    .map_err(|_| bad(format!("{text:?} is not an IPv4 address")))?,
            ),
            rtype::AAAA => RData::Aaaa(
                text.parse::<Ipv6Addr>()
                    .map_err(|_| bad(format!("{text:?} is not an IPv6 address")))?,
            ),
            rtype::PTR => RData::Ptr(name(text)?),
            rtype::CNAME => RData::Cname(name(text)?),
            rtype::NS => RData::Ns(name(text)?),
            rtype::MX => {
                let [exchange, preference] = fields::<2>(text, "mail server, preference")?;
                RData::Mx {
                    preference: number("preference", preference)?,
                    exchange: name(exchange)?,
                }
            }
            rtype::SRV => {
                let [target, port, priority, weight] =
                    fields::<4>(text, "target, port, priority, weight")?;
                RData::Srv {
                    priority: number("priority", priority)?,
                    weight: number("weight", weight)?,
                    port: number("port", port)?,
                    target: name(target)?,
                }
            }
            rtype::SOA => {
                let [mname, rname, serial, refresh, retry, expire, minimum] = fields::<7>(
                    text,
                    "nameserver, email, serial, refresh, retry, expire, minimum",
                )?;
                RData::Soa(Soa {
                    mname: name(mname)?,
                    rname: name(rname)?,
                    serial: number("serial", serial)?,
                    refresh: number("refresh", refresh)?,
                    retry: number("retry", retry)?,
                    expire: number("expire", expire)?,
                    minimum: number("minimum", minimum)?,
                })
            }
            rtype::TXT => {
                let words = shlex_split(text)?;
                if words.is_empty() {
                    return Err(bad("TXT needs at least one string".to_string()));
                }
                if words.iter().any(|w| w.len() > 255) {
                    return Err(bad("a TXT string is longer than 255 bytes".to_string()));
                }
                RData::Txt(words.into_iter().map(String::into_bytes).collect())
            }
            t => {
                return Err(bad(format!(
                    "no text form for {} data other than \\# length hex",
                    crate::rdata::type_name(t)
                )))
            }
        })
    }

    /// The data in samba-tool's form, the inverse of [`RData::parse_text`]: names without
    /// the trailing dot, TXT strings double-quoted (bytes that are not UTF-8 are replaced),
    /// other types as `\# length hex`.
    pub fn samba_text(&self) -> String {
        match self {
            RData::A(ip) => ip.to_string(),
            RData::Aaaa(ip) => ip.to_string(),
            RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => n.to_string(),
            RData::Mx {
                preference,
                exchange,
            } => format!("{exchange} {preference}"),
            RData::Srv {
                priority,
                weight,
                port,
                target,
            } => {
                format!("{target} {port} {priority} {weight}")
            }
            RData::Soa(s) => format!(
                "{} {} {} {} {} {} {}",
                s.mname, s.rname, s.serial, s.refresh, s.retry, s.expire, s.minimum
            ),
            RData::Txt(strings) => {
                let mut out = String::new();
                for (i, s) in strings.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    shlex_quote(&mut out, &String::from_utf8_lossy(s));
                }
                out
            }
            RData::Unknown { data, .. } => {
                if data.is_empty() {
                    "\\# 0".to_string()
                } else {
                    format!("\\# {} {}", data.len(), hex(data))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    #[test]
    fn samba_tool_forms() {
        assert_eq!(
            RData::parse_text(rtype::A, "10.0.0.1").unwrap(),
            RData::A("10.0.0.1".parse().unwrap())
        );
        assert_eq!(
            RData::parse_text(rtype::AAAA, "fd00::1").unwrap(),
            RData::Aaaa("fd00::1".parse().unwrap())
        );
        assert_eq!(
            RData::parse_text(rtype::CNAME, "dc1.samdom.example.com.").unwrap(),
            RData::Cname(n("dc1.samdom.example.com"))
        );
        let mx = RData::parse_text(rtype::MX, "mail.samdom.example.com 10").unwrap();
        assert_eq!(
            mx,
            RData::Mx {
                preference: 10,
                exchange: n("mail.samdom.example.com")
            }
        );
        assert_eq!(mx.samba_text(), "mail.samdom.example.com 10");
        let srv = RData::parse_text(rtype::SRV, "dc1.samdom.example.com 389 0 100").unwrap();
        assert_eq!(
            srv,
            RData::Srv {
                priority: 0,
                weight: 100,
                port: 389,
                target: n("dc1.samdom.example.com")
            }
        );
        assert_eq!(srv.samba_text(), "dc1.samdom.example.com 389 0 100");
        let soa = RData::parse_text(
            rtype::SOA,
            "dc1.samdom.example.com hostmaster.samdom.example.com 1 900 600 86400 3600",
        )
        .unwrap();
        assert_eq!(
            soa.samba_text(),
            "dc1.samdom.example.com hostmaster.samdom.example.com 1 900 600 86400 3600"
        );
        let txt = RData::parse_text(rtype::TXT, r#"'string one' "two \"x\" \\ \n" three"#).unwrap();
        assert_eq!(
            txt,
            RData::Txt(vec![
                b"string one".to_vec(),
                b"two \"x\" \\ \\n".to_vec(),
                b"three".to_vec()
            ])
        );
        assert_eq!(
            RData::parse_text(rtype::TXT, &txt.samba_text()).unwrap(),
            txt
        );
        assert_eq!(
            RData::parse_text(rtype::TXT, r#""""#).unwrap(),
            RData::Txt(vec![Vec::new()])
        );
        assert_eq!(
            RData::parse_text(rtype::TXT, r#"a"b c"d e\ f"#).unwrap(),
            RData::Txt(vec![b"ab cd".to_vec(), b"e f".to_vec()])
        );
    }

    #[test]
    fn bad_forms() {
        assert!(RData::parse_text(rtype::A, "10.0.0").is_err());
        assert!(RData::parse_text(rtype::MX, "mail.example").is_err());
        assert!(RData::parse_text(rtype::MX, "mail.example 70000").is_err());
        assert!(RData::parse_text(rtype::SRV, "t 389 0").is_err());
        assert!(RData::parse_text(rtype::SOA, "a b 1 2 3 4").is_err());
        assert!(RData::parse_text(rtype::TXT, "").is_err());
        assert!(RData::parse_text(rtype::TXT, "'open").is_err());
        assert!(RData::parse_text(rtype::TXT, "\"open").is_err());
        assert!(RData::parse_text(rtype::TXT, "end\\").is_err());
        assert!(RData::parse_text(rtype::HINFO, "x y").is_err());
        assert!(RData::parse_text(99, "\\# 2 0a").is_err());
        assert!(RData::parse_text(99, "\\# 1 zz").is_err());
        assert!(RData::parse_text(99, "\\# x").is_err());
    }

    #[test]
    fn generic_form() {
        assert_eq!(
            RData::parse_text(99, "\\# 4 0a00 0001").unwrap(),
            RData::Unknown {
                rtype: 99,
                data: vec![10, 0, 0, 1]
            }
        );
        assert_eq!(
            RData::parse_text(rtype::A, "\\# 4 0a000001").unwrap(),
            RData::A("10.0.0.1".parse().unwrap())
        );
        assert_eq!(
            RData::parse_text(99, "\\# 0").unwrap(),
            RData::Unknown {
                rtype: 99,
                data: vec![]
            }
        );
        let u = RData::Unknown {
            rtype: 99,
            data: vec![1, 2],
        };
        assert_eq!(RData::parse_text(99, &u.samba_text()).unwrap(), u);
        assert!(RData::parse_text(rtype::A, "\\# 0").is_err());
        assert!(RData::parse_text(rtype::NS, "\\# 1 00").is_ok());
    }

    fn name_strategy() -> impl Strategy<Value = Name> {
        prop::collection::vec("[a-zA-Z0-9_-]{1,12}", 0..5).prop_map(|ls| {
            Name::from_labels(ls.into_iter().map(String::into_bytes).collect()).unwrap()
        })
    }

    proptest! {
        #[test]
        fn samba_text_round_trips(
            target in name_strategy(),
            a in any::<[u8; 4]>(),
            b in any::<[u8; 16]>(),
            nums in any::<(u16, u16, u16)>(),
            serials in any::<[u32; 5]>(),
            strings in prop::collection::vec(".{0,40}", 1..4),
        ) {
            let strings: Vec<Vec<u8>> = strings.into_iter().map(String::into_bytes)
                .filter(|s| s.len() <= 255).collect();
            prop_assume!(!strings.is_empty());
            let cases = vec![
                RData::A(Ipv4Addr::from(a)),
                RData::Aaaa(Ipv6Addr::from(b)),
                RData::Ns(target.clone()),
                RData::Cname(target.clone()),
                RData::Ptr(target.clone()),
                RData::Mx { preference: nums.0, exchange: target.clone() },
                RData::Srv { priority: nums.0, weight: nums.1, port: nums.2, target: target.clone() },
                RData::Soa(Soa { mname: target.clone(), rname: target.clone(), serial: serials[0],
                    refresh: serials[1], retry: serials[2], expire: serials[3], minimum: serials[4] }),
                RData::Txt(strings),
            ];
            for rd in cases {
                let text = rd.samba_text();
                prop_assert_eq!(RData::parse_text(rd.rtype(), &text).unwrap(), rd);
            }
        }

        #[test]
        fn parse_text_never_panics(t in 0u16..300, text in ".{0,60}") {
            let _ = RData::parse_text(t, &text);
        }
    }
}
