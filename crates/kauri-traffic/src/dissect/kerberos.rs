//! Kerberos (RFC 4120) over UDP, or over TCP behind a four-byte record mark.
//!
//! Columns after the protocol: the message type number and name (`10`, `krb-as-req`), and
//! for an AS-REQ whether the client name is a machine account (ends in `$`: `machine`)
//! or not (`user`); empty otherwise. As in the reference summarizer, the type written is
//! the last one the message holds: a TGS-REQ carries its authenticating AP-REQ in its
//! pre-authentication data (and a FAST request its armor AP-REQ), so it is written as
//! `14 krb-ap-req`.

use super::ber::{Ber, Tlv, APPLICATION, CONTEXT, UNIVERSAL};
use super::{Framing, Outcome, Record, RecordKind};

/// Largest record accepted as a frame start.
const MAX_RECORD: usize = 16 << 20;
/// PA-TGS-REQ: the AP-REQ authenticating a TGS-REQ.
const PA_TGS_REQ: i64 = 1;
/// PA-FX-FAST: a FAST armored request.
const PA_FX_FAST: i64 = 136;

/// The name of a message type.
pub fn msg_type_name(t: i64) -> &'static str {
    match t {
        10 => "krb-as-req",
        11 => "krb-as-rep",
        12 => "krb-tgs-req",
        13 => "krb-tgs-rep",
        14 => "krb-ap-req",
        15 => "krb-ap-rep",
        16 => "krb-tgt-req",
        17 => "krb-tgt-rep",
        20 => "krb-safe",
        21 => "krb-priv",
        22 => "krb-cred",
        30 => "krb-error",
        _ => "Unknown",
    }
}

/// Where the first record in a TCP stream buffer ends.
pub fn framing(buf: &[u8]) -> Framing {
    match buf.get(..4) {
        None => Framing::NeedMore,
        Some(m) => {
            let len = (u32::from_be_bytes([m[0], m[1], m[2], m[3]]) & 0x7fff_ffff) as usize;
            if len == 0 || len > MAX_RECORD {
                Framing::NotAStart
            } else {
                Framing::Pdu(4 + len)
            }
        }
    }
}

/// The elements of a `[APPLICATION n] SEQUENCE { [k] … }`: (n, the fields).
fn application<'a>(data: &'a [u8], cut: &mut bool) -> Option<(u32, Vec<Tlv<'a>>)> {
    let app = Ber::new(data).next_tlv()?.ok()?;
    if app.class != APPLICATION || !app.constructed {
        return None;
    }
    *cut |= app.cut;
    let seq = Ber::new(app.content).next_tlv()?.ok()?;
    if !seq.is(UNIVERSAL, 16) {
        return None;
    }
    *cut |= seq.cut;
    let mut fields = Vec::new();
    let mut r = Ber::new(seq.content);
    while let Some(t) = r.next_tlv() {
        match t {
            Ok(t) => {
                *cut |= t.cut;
                fields.push(t);
            }
            Err(_) => {
                *cut = true;
                break;
            }
        }
    }
    Some((app.tag, fields))
}

/// The INTEGER inside an explicitly tagged field.
fn tagged_integer(fields: &[Tlv<'_>], tag: u32) -> Option<i64> {
    let f = fields.iter().find(|f| f.is(CONTEXT, tag))?;
    Ber::new(f.content).next_tlv()?.ok()?.integer()
}

/// The inner element of an explicitly tagged field.
fn tagged<'a>(fields: &[Tlv<'a>], tag: u32) -> Option<Tlv<'a>> {
    let f = fields.iter().find(|f| f.is(CONTEXT, tag))?;
    Ber::new(f.content).next_tlv()?.ok()
}

/// The elements of a SEQUENCE.
fn elements<'a>(seq: &Tlv<'a>) -> Vec<Tlv<'a>> {
    let mut out = Vec::new();
    let mut r = Ber::new(seq.content);
    while let Some(Ok(t)) = r.next_tlv() {
        out.push(t);
    }
    out
}

/// The message type of an AP-REQ held in an OCTET STRING's bytes.
fn ap_req_type(bytes: &[u8]) -> Option<i64> {
    let mut cut = false;
    let (tag, fields) = application(bytes, &mut cut)?;
    if tag != 14 {
        return None;
    }
    tagged_integer(&fields, 1)
}

/// The AP-REQs a KDC request's pre-authentication data carries: their message types.
fn padata_ap_reqs(padata: &Tlv<'_>) -> Option<i64> {
    let mut last = None;
    for pa in elements(padata) {
        let fields = elements(&pa);
        let Some(kind) = tagged_integer(&fields, 1) else {
            continue;
        };
        let Some(value) = tagged(&fields, 2) else {
            continue;
        };
        match kind {
            PA_TGS_REQ => last = ap_req_type(value.content).or(last),
            PA_FX_FAST => {
                // PA-FX-FAST-REQUEST ::= CHOICE { armored-data [0] KrbFastArmoredReq }
                let armored = Ber::new(value.content).next_tlv().and_then(Result::ok);
                let req = armored
                    .filter(|a| a.is(CONTEXT, 0))
                    .and_then(|a| Ber::new(a.content).next_tlv().and_then(Result::ok));
                let armor = req.map(|r| elements(&r)).and_then(|f| tagged(&f, 0));
                let armor_value = armor.map(|a| elements(&a)).and_then(|f| tagged(&f, 1));
                if let Some(v) = armor_value {
                    last = ap_req_type(v.content).or(last);
                }
            }
            _ => {}
        }
    }
    last
}

/// Whether an AS-REQ's client name is a machine account.
fn cname_type(req_body: &Tlv<'_>) -> Option<&'static str> {
    let fields = elements(req_body);
    let cname = tagged(&fields, 1)?;
    let name = elements(&cname);
    let strings = tagged(&name, 1)?;
    let last = elements(&strings).into_iter().last()?;
    Some(if last.content.ends_with(b"$") {
        "machine"
    } else {
        "user"
    })
}

/// One Kerberos message's line.
pub fn dissect(data: &[u8], cut: bool) -> Outcome {
    let mut was_cut = false;
    let Some((tag, fields)) = application(data, &mut was_cut) else {
        return Outcome::Record(Record::bad("kerberos", cut));
    };
    if !matches!(tag, 10..=17 | 20..=22 | 30) || (was_cut && !cut) {
        return Outcome::Record(Record::malformed("kerberos"));
    }
    let request = matches!(tag, 10 | 12);
    let Some(mut msg_type) = tagged_integer(&fields, if request { 2 } else { 1 }) else {
        return Outcome::Record(Record::bad("kerberos", cut));
    };
    let mut client = "";
    if request {
        if let Some(padata) = tagged(&fields, 3) {
            msg_type = padata_ap_reqs(&padata).unwrap_or(msg_type);
        }
        if tag == 10 {
            if let Some(body) = tagged(&fields, 4) {
                client = cname_type(&body).unwrap_or("");
            }
        }
    }
    let opcode = if msg_type == 0 {
        String::new()
    } else {
        msg_type.to_string()
    };
    Outcome::Record(Record {
        protocol: "kerberos",
        opcode,
        desc: msg_type_name(msg_type).to_string(),
        extra: vec![client.to_string()],
        kind: RecordKind::Decoded,
    })
}

/// A Kerberos password-change message (RFC 3244): not a protocol the summary lists.
pub fn kpasswd(_data: &[u8], _cut: bool) -> Outcome {
    Outcome::Ignored("kpasswd")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut v = vec![tag, content.len() as u8];
        v.extend_from_slice(content);
        v
    }

    fn int(v: u8) -> Vec<u8> {
        tlv(2, &[v])
    }

    #[test]
    fn as_req_and_tgs_req() {
        let cname = tlv(
            0x30,
            &[
                tlv(0xa0, &int(1)),
                tlv(0xa1, &tlv(0x30, &tlv(0x1b, b"HOST$"))),
            ]
            .concat(),
        );
        let body = tlv(0x30, &tlv(0xa1, &cname));
        let as_req = tlv(
            0x6a,
            &tlv(
                0x30,
                &[tlv(0xa1, &int(5)), tlv(0xa2, &int(10)), tlv(0xa4, &body)].concat(),
            ),
        );
        let Outcome::Record(r) = dissect(&as_req, false) else {
            panic!()
        };
        assert_eq!((r.opcode.as_str(), r.desc.as_str()), ("10", "krb-as-req"));
        assert_eq!(r.extra, ["machine"]);

        let ap_req = tlv(
            0x6e,
            &tlv(0x30, &[tlv(0xa0, &int(5)), tlv(0xa1, &int(14))].concat()),
        );
        let pa = tlv(
            0x30,
            &[tlv(0xa1, &int(1)), tlv(0xa2, &tlv(4, &ap_req))].concat(),
        );
        let tgs_req = tlv(
            0x6c,
            &tlv(
                0x30,
                &[
                    tlv(0xa1, &int(5)),
                    tlv(0xa2, &int(12)),
                    tlv(0xa3, &tlv(0x30, &pa)),
                ]
                .concat(),
            ),
        );
        let Outcome::Record(r) = dissect(&tgs_req, false) else {
            panic!()
        };
        assert_eq!((r.opcode.as_str(), r.desc.as_str()), ("14", "krb-ap-req"));
        assert_eq!(r.extra, [""]);
        let Outcome::Record(r) = dissect(b"garbage", false) else {
            panic!()
        };
        assert_eq!(r.kind, RecordKind::Malformed);
    }
}
