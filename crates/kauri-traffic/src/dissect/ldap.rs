//! LDAP (RFC 4511) over TCP, optionally inside a SASL security layer, and CLDAP over UDP.
//!
//! Columns after the protocol: the operation number (the `[APPLICATION n]` tag of
//! `protocolOp`) and its name, then the search scope (empty for base, 0), the search
//! base's DN signature, the filter without its values, the attribute names (a search's
//! requested attributes, a modify's or add's attribute types, comma-joined), then for a
//! modify the last change's operation number and name, for a bind the authentication
//! choice number and name, and last the GSS-API mechanism OID of a bind's SASL token.
//!
//! After a SASL bind the messages may be wrapped: a Kerberos wrap token that is signed
//! but not sealed is unwrapped and its messages summarised; an NTLM-signed message too. A
//! sealed message cannot be read: its line says `*** Unknown ***`. TLS records (after
//! StartTLS) are not summarised.

use super::ber::{self, Ber, Tlv, APPLICATION, CONTEXT, UNIVERSAL};
use super::rules::{dn_signature, push_attribute, strip_filter};
use super::{text, Framing, Outcome, Record, RecordKind, UNKNOWN};

/// Largest SASL buffer or LDAP message accepted as a frame start.
const MAX_MESSAGE: usize = 64 << 20;
/// Deepest filter nesting followed.
const MAX_FILTER_DEPTH: usize = 64;

/// The name of an operation number.
pub fn op_name(op: u32) -> Option<&'static str> {
    Some(match op {
        0 => "bindRequest",
        1 => "bindResponse",
        2 => "unbindRequest",
        3 => "searchRequest",
        4 => "searchResEntry",
        5 => "searchResDone",
        6 => "modifyRequest",
        7 => "modifyResponse",
        8 => "addRequest",
        9 => "addResponse",
        10 => "delRequest",
        11 => "delResponse",
        12 => "modDNRequest",
        13 => "modDNResponse",
        14 => "compareRequest",
        15 => "compareResponse",
        16 => "abandonRequest",
        19 => "searchResRef",
        23 => "extendedReq",
        24 => "extendedResp",
        25 => "intermediateResponse",
        _ => return None,
    })
}

fn change_name(op: i64) -> &'static str {
    match op {
        0 => "add",
        1 => "delete",
        2 => "replace",
        3 => "increment",
        _ => "Unknown",
    }
}

fn auth_name(choice: u32) -> &'static str {
    match choice {
        0 => "simple",
        3 => "sasl",
        10 => "ntlmsspNegotiate",
        11 => "ntlmsspAuth",
        _ => "Unknown",
    }
}

/// Where the first LDAP message, SASL buffer or TLS record in a stream buffer ends.
pub fn framing(buf: &[u8]) -> Framing {
    match buf.first() {
        None => Framing::NeedMore,
        Some(0x30) => match ber::header(buf) {
            Ok((_, _, _, hdr, len)) if len <= MAX_MESSAGE => Framing::Pdu(hdr + len),
            Ok(_) | Err(ber::BerError::Invalid) => Framing::NotAStart,
            Err(ber::BerError::Short) => Framing::NeedMore,
        },
        Some(0x00) => match buf.get(..4) {
            None => Framing::NeedMore,
            Some(l) => {
                let len = u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize;
                if len == 0 || len > MAX_MESSAGE {
                    Framing::NotAStart
                } else {
                    Framing::Pdu(4 + len)
                }
            }
        },
        Some(0x14..=0x17) => match buf.get(..5) {
            None => Framing::NeedMore,
            Some(h) if h[1] == 3 => Framing::Pdu(5 + usize::from(u16::from_be_bytes([h[3], h[4]]))),
            Some(_) => Framing::NotAStart,
        },
        Some(_) => Framing::NotAStart,
    }
}

/// The outcomes of one frame of an LDAP stream.
pub fn stream_pdu(pdu: &[u8], cut: bool) -> Vec<Outcome> {
    match pdu.first() {
        Some(0x30) => vec![message("ldap", pdu, cut)],
        Some(0x00) => sasl(pdu.get(4..).unwrap_or(&[]), cut),
        Some(0x14..=0x17) => vec![Outcome::Ignored("tls")],
        _ => vec![Outcome::Record(Record::malformed("ldap"))],
    }
}

/// The outcomes of one CLDAP datagram (normally one message).
pub fn cldap(data: &[u8], cut: bool) -> Vec<Outcome> {
    messages("cldap", data, cut).unwrap_or_else(|| vec![Outcome::Record(Record::bad("cldap", cut))])
}

/// Every message in a byte string, or `None` when it is not a sequence of messages.
fn messages(protocol: &'static str, data: &[u8], cut: bool) -> Option<Vec<Outcome>> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (_, _, _, hdr, len) = match ber::header(rest) {
            Ok(h) => h,
            Err(_) if cut && !out.is_empty() => break,
            Err(_) => return None,
        };
        if rest[0] != 0x30 {
            return None;
        }
        let end = (hdr + len).min(rest.len());
        out.push(message(protocol, &rest[..end], cut));
        rest = &rest[end..];
    }
    if out.is_empty() {
        return None;
    }
    Some(out)
}

/// A SASL buffer: unwrapped when its messages can be read, else `*** Unknown ***`.
fn sasl(buf: &[u8], cut: bool) -> Vec<Outcome> {
    if let Some(plain) = unwrap_signed(buf) {
        if let Some(found) = messages("ldap", &plain, cut) {
            if found
                .iter()
                .all(|o| !matches!(o, Outcome::Record(r) if r.kind == RecordKind::Malformed))
            {
                return found;
            }
        }
    }
    vec![Outcome::Record(Record {
        protocol: "ldap",
        opcode: String::new(),
        desc: UNKNOWN.to_string(),
        extra: Vec::new(),
        kind: RecordKind::Unreadable,
    })]
}

/// The plaintext of a signed-only security-layer token: a Kerberos (RFC 4121) wrap token
/// without the sealed flag, or an NTLM signature followed by the message.
fn unwrap_signed(buf: &[u8]) -> Option<Vec<u8>> {
    if buf.len() >= 16 && buf[0] == 0x05 && buf[1] == 0x04 {
        if buf[2] & 0x02 != 0 {
            return None;
        }
        let ec = usize::from(u16::from_be_bytes([buf[4], buf[5]]));
        let body = &buf[16..];
        if body.is_empty() || ec > body.len() {
            return None;
        }
        let rrc = usize::from(u16::from_be_bytes([buf[6], buf[7]])) % body.len();
        let mut plain = Vec::with_capacity(body.len());
        plain.extend_from_slice(&body[rrc..]);
        plain.extend_from_slice(&body[..rrc]);
        plain.truncate(body.len() - ec);
        return Some(plain);
    }
    if buf.len() > 16 && buf[..4] == [1, 0, 0, 0] && buf[16] == 0x30 {
        return Some(buf[16..].to_vec());
    }
    None
}

/// What one message shows.
#[derive(Debug, Default)]
struct Fields {
    op: Option<u32>,
    scope: Option<i64>,
    base: Option<String>,
    filter: Option<String>,
    attributes: String,
    change: Option<i64>,
    auth: Option<u32>,
    oid: Option<String>,
    /// Some element runs past the bytes at hand.
    cut: bool,
}

/// A structural error in a message (not a cut).
#[derive(Debug)]
struct Bad;

type Res<T> = Result<T, Bad>;

impl Fields {
    /// The next element of a sequence, which must exist; notes whether it was cut.
    fn next<'a>(&mut self, r: &mut Ber<'a>) -> Res<Tlv<'a>> {
        match r.next_tlv() {
            Some(Ok(t)) => {
                self.cut |= t.cut;
                Ok(t)
            }
            _ => Err(Bad),
        }
    }
}

/// One LDAP message's line.
fn message(protocol: &'static str, bytes: &[u8], cut: bool) -> Outcome {
    let mut f = Fields::default();
    let result = read_message(bytes, &mut f);
    if f.op.is_none() && f.oid.is_none() {
        return Outcome::Record(Record::bad(protocol, cut));
    }
    if (result.is_err() || f.cut) && !cut {
        return Outcome::Record(Record::malformed(protocol));
    }
    let opcode = f.op.map(|o| o.to_string()).unwrap_or_default();
    let desc = f.op.and_then(op_name).unwrap_or("").to_string();
    let scope = f
        .scope
        .filter(|s| *s != 0)
        .map(|s| s.to_string())
        .unwrap_or_default();
    let base = dn_signature(f.base.as_deref().unwrap_or(""));
    let filter = f.filter.as_deref().map(strip_filter).unwrap_or_default();
    let (extra, extra_desc) = match (f.op, f.change, f.auth) {
        (Some(6), Some(c), _) => (c.to_string(), change_name(c).to_string()),
        (Some(0), _, Some(a)) => (a.to_string(), auth_name(a).to_string()),
        _ => (String::new(), String::new()),
    };
    Outcome::Record(Record {
        protocol,
        opcode,
        desc,
        extra: vec![
            scope,
            base,
            filter,
            f.attributes,
            extra,
            extra_desc,
            f.oid.unwrap_or_default(),
        ],
        kind: RecordKind::Decoded,
    })
}

fn read_message(bytes: &[u8], f: &mut Fields) -> Res<()> {
    let msg = f.next(&mut Ber::new(bytes))?;
    if !msg.is(UNIVERSAL, 16) {
        return Err(Bad);
    }
    let mut r = Ber::new(msg.content);
    let id = f.next(&mut r)?;
    if !id.is(UNIVERSAL, 2) {
        return Err(Bad);
    }
    let op = f.next(&mut r)?;
    if op.class != APPLICATION || op_name(op.tag).is_none() {
        return Err(Bad);
    }
    f.op = Some(op.tag);
    let body = Ber::new(op.content);
    match op.tag {
        0 => bind_request(body, f),
        1 => bind_response(body, f),
        3 => search_request(body, f),
        6 => modify_request(body, f),
        8 => add_request(body, f),
        _ => Ok(()),
    }
}

fn bind_request(mut r: Ber<'_>, f: &mut Fields) -> Res<()> {
    let _version = f.next(&mut r)?;
    let _name = f.next(&mut r)?;
    let auth = f.next(&mut r)?;
    if auth.class != CONTEXT {
        return Err(Bad);
    }
    f.auth = Some(auth.tag);
    if auth.tag == 3 {
        let mut s = Ber::new(auth.content);
        let _mechanism = f.next(&mut s)?;
        if let Some(Ok(creds)) = s.next_tlv() {
            f.cut |= creds.cut;
            if !creds.cut {
                f.oid = gss_oid(creds.content);
            }
        }
    }
    Ok(())
}

fn bind_response(mut r: Ber<'_>, f: &mut Fields) -> Res<()> {
    while let Some(t) = r.next_tlv() {
        let t = t.map_err(|_| Bad)?;
        f.cut |= t.cut;
        if t.is(CONTEXT, 7) {
            f.oid = gss_oid(t.content);
        }
    }
    Ok(())
}

/// The mechanism OID of a GSS-API initial context token (`[APPLICATION 0]` framing).
fn gss_oid(token: &[u8]) -> Option<String> {
    let outer = Ber::new(token).next_tlv()?.ok()?;
    if !outer.is(APPLICATION, 0) || !outer.constructed {
        return None;
    }
    let mech = Ber::new(outer.content).next_tlv()?.ok()?;
    if !mech.is(UNIVERSAL, 6) || mech.cut {
        return None;
    }
    ber::oid(mech.content)
}

fn search_request(mut r: Ber<'_>, f: &mut Fields) -> Res<()> {
    // Fields the capture cut short are left out, as a protocol analyser leaves them.
    let base = f.next(&mut r)?;
    if !base.cut {
        f.base = Some(text(base.content));
    }
    f.scope = f.next(&mut r)?.integer();
    let _deref = f.next(&mut r)?;
    let _size = f.next(&mut r)?;
    let _time = f.next(&mut r)?;
    let _types_only = f.next(&mut r)?;
    let filter = f.next(&mut r)?;
    let mut rendered = String::new();
    let cut_before = f.cut;
    let filter_ok = render_filter(&filter, 0, &mut rendered, f);
    if filter_ok.is_ok() && !filter.cut && f.cut == cut_before {
        f.filter = Some(rendered);
    }
    filter_ok?;
    let attrs = f.next(&mut r)?;
    let mut a = Ber::new(attrs.content);
    while let Some(t) = a.next_tlv() {
        let t = t.map_err(|_| Bad)?;
        f.cut |= t.cut;
        if !t.cut {
            push_attribute(&mut f.attributes, &text(t.content));
        }
    }
    Ok(())
}

fn modify_request(mut r: Ber<'_>, f: &mut Fields) -> Res<()> {
    let _object = f.next(&mut r)?;
    let changes = f.next(&mut r)?;
    let mut c = Ber::new(changes.content);
    while let Some(change) = c.next_tlv() {
        let change = change.map_err(|_| Bad)?;
        f.cut |= change.cut;
        let mut parts = Ber::new(change.content);
        f.change = f.next(&mut parts)?.integer();
        let modification = f.next(&mut parts)?;
        let ty = f.next(&mut Ber::new(modification.content))?;
        if !ty.cut {
            push_attribute(&mut f.attributes, &text(ty.content));
        }
    }
    Ok(())
}

fn add_request(mut r: Ber<'_>, f: &mut Fields) -> Res<()> {
    let _entry = f.next(&mut r)?;
    let attrs = f.next(&mut r)?;
    let mut a = Ber::new(attrs.content);
    while let Some(attr) = a.next_tlv() {
        let attr = attr.map_err(|_| Bad)?;
        f.cut |= attr.cut;
        let ty = f.next(&mut Ber::new(attr.content))?;
        if !ty.cut {
            push_attribute(&mut f.attributes, &text(ty.content));
        }
    }
    Ok(())
}

/// Writes a filter as a protocol analyser shows it: `(&(cn=x)(!(sn=*)))`, with the items
/// of an and or an or folded pairwise (`(|(|(a=1)(b=2))(c=3))`).
fn render_filter(t: &Tlv<'_>, depth: usize, out: &mut String, f: &mut Fields) -> Res<()> {
    if depth > MAX_FILTER_DEPTH || t.class != CONTEXT {
        return Err(Bad);
    }
    let mut r = Ber::new(t.content);
    match t.tag {
        0 | 1 => {
            // Items are folded pairwise: (&(&(a)(b))(c)); one item stands alone.
            let op = if t.tag == 0 { "(&" } else { "(|" };
            let mut acc: Option<String> = None;
            let mut result = Ok(());
            while let Some(item) = r.next_tlv() {
                let item = item.map_err(|_| Bad)?;
                f.cut |= item.cut;
                let mut one = String::new();
                result = render_filter(&item, depth + 1, &mut one, f);
                acc = Some(match acc {
                    None => one,
                    Some(a) => format!("{op}{a}{one})"),
                });
                if result.is_err() {
                    break;
                }
            }
            out.push_str(&acc.unwrap_or_else(|| format!("{op})")));
            result?;
        }
        2 => {
            out.push_str("(!");
            let item = f.next(&mut r)?;
            render_filter(&item, depth + 1, out, f)?;
            out.push(')');
        }
        3 | 5 | 6 | 8 => {
            let attr = text(f.next(&mut r)?.content);
            let value = text(f.next(&mut r)?.content);
            let op = match t.tag {
                3 => "=",
                5 => ">=",
                6 => "<=",
                _ => "~=",
            };
            out.push_str(&format!("({attr}{op}{value})"));
        }
        4 => {
            let attr = text(f.next(&mut r)?.content);
            let items = f.next(&mut r)?;
            let (mut initial, mut any, mut last) = (None, String::new(), String::new());
            let mut s = Ber::new(items.content);
            while let Some(item) = s.next_tlv() {
                let item = item.map_err(|_| Bad)?;
                f.cut |= item.cut;
                let v = text(item.content);
                match item.tag {
                    0 => initial = Some(format!("{v}*")),
                    1 => any.push_str(&format!("{v}*")),
                    _ => last = v,
                }
            }
            let initial = initial.unwrap_or_else(|| "*".to_string());
            out.push_str(&format!("({attr}={initial}{any}{last})"));
        }
        7 => out.push_str(&format!("({}=*)", text(t.content))),
        9 => {
            let (mut rule, mut attr, mut value, mut dn) =
                (None, String::new(), String::new(), false);
            while let Some(item) = r.next_tlv() {
                let item = item.map_err(|_| Bad)?;
                f.cut |= item.cut;
                match item.tag {
                    1 => rule = Some(text(item.content)),
                    2 => attr = text(item.content),
                    3 => value = text(item.content),
                    4 => dn = item.content.first().is_some_and(|b| *b != 0),
                    _ => return Err(Bad),
                }
            }
            let dn = if dn { "dn:" } else { "" };
            let (rule, colon) = match &rule {
                Some(r) => (r.as_str(), ":"),
                None => ("", ""),
            };
            out.push_str(&format!("({attr}:{dn}{rule}{colon}={value})"));
        }
        _ => return Err(Bad),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(o: &Outcome) -> &Record {
        match o {
            Outcome::Record(r) => r,
            other => panic!("not a record: {other:?}"),
        }
    }

    /// A BER element with a short or two-byte length.
    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        if content.len() < 0x80 {
            v.push(content.len() as u8);
        } else {
            v.extend_from_slice(&[0x82, (content.len() >> 8) as u8, content.len() as u8]);
        }
        v.extend_from_slice(content);
        v
    }

    #[test]
    fn search_request_columns() {
        let filter = tlv(
            0xa0,
            &[
                tlv(0xa3, &[tlv(4, b"objectClass"), tlv(4, b"user")].concat()),
                tlv(0xa3, &[tlv(4, b"cn"), tlv(4, b"")].concat()),
            ]
            .concat(),
        );
        let search = tlv(
            0x63,
            &[
                tlv(4, b"DC=x,DC=y"),
                tlv(0x0a, &[2]),
                tlv(0x0a, &[0]),
                tlv(2, &[0]),
                tlv(2, &[0]),
                tlv(1, &[0]),
                filter,
                tlv(0x30, &[tlv(4, b"cn"), tlv(4, b"sn")].concat()),
            ]
            .concat(),
        );
        let msg = tlv(0x30, &[tlv(2, &[5]), search].concat());
        let out = stream_pdu(&msg, false);
        let r = record(&out[0]);
        assert_eq!(r.opcode, "3");
        assert_eq!(r.desc, "searchRequest");
        assert_eq!(
            r.extra,
            [
                "2",
                "DC,DC",
                "(&(objectClass=user)(cn))",
                "cn,sn",
                "",
                "",
                ""
            ]
        );
        // Cut short: the leading fields still show.
        let cut = stream_pdu(&msg[..12], true);
        assert_eq!(record(&cut[0]).desc, "searchRequest");
        assert_eq!(record(&cut[0]).extra[1], "");
        let cut = stream_pdu(&msg[..30], true);
        assert_eq!(record(&cut[0]).extra[..3], ["2", "DC,DC", ""]);
        let cut = stream_pdu(&msg[..4], true);
        assert_eq!(record(&cut[0]).desc, UNKNOWN);
        // Broken and complete: malformed.
        let mut bad = msg.clone();
        let at = bad.len() - 9;
        bad[at] = 0x1f;
        assert_eq!(
            record(&stream_pdu(&bad, false)[0]).kind,
            RecordKind::Malformed
        );
    }

    #[test]
    fn sealed_sasl_is_unknown() {
        let mut token = vec![0, 0, 0, 20, 0x05, 0x04, 0x06, 0xff, 0, 0, 0, 0];
        token.extend_from_slice(&[0; 12]);
        let out = stream_pdu(&token, false);
        assert_eq!(record(&out[0]).desc, UNKNOWN);
    }
}
