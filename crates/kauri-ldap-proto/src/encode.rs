//! LDAP messages to BER (RFC 4511 section 4).
//!
//! Everything is written into one caller-supplied `Vec<u8>` with no per-value allocation,
//! because a search encodes one message per entry. Filters are written with an explicit
//! stack, so even a filter value nested deeper than the decoder accepts is encoded without
//! recursion.

use kauri_db::filter::{Filter, SubstringFilter};

use crate::ber::{Mark, Tag, Writer};
use crate::types::*;

/// Encodes `msg` into a new buffer.
pub fn encode_message(msg: &LdapMessage) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_into(msg, &mut buf);
    buf
}

/// Appends the encoding of `msg` to `buf` (reuse one buffer across messages to avoid
/// allocations).
pub fn encode_into(msg: &LdapMessage, buf: &mut Vec<u8>) {
    let mut w = Writer::new(buf);
    w.sequence(|w| {
        w.integer(i64::from(msg.id));
        write_op(w, &msg.op);
        if !msg.controls.is_empty() {
            w.constructed(Tag::context(0), |w| {
                for c in &msg.controls {
                    write_control(w, c);
                }
            });
        }
    });
}

/// Encodes a filter on its own (the `Filter` element of a SearchRequest).
pub fn encode_filter(filter: &Filter) -> Vec<u8> {
    let mut buf = Vec::new();
    write_filter(&mut Writer::new(&mut buf), filter);
    buf
}

fn write_control(w: &mut Writer<'_>, c: &Control) {
    w.sequence(|w| {
        w.octet_string(c.oid.as_bytes());
        if c.critical {
            w.boolean(true);
        }
        if let Some(v) = &c.value {
            w.octet_string(v);
        }
    });
}

fn write_op(w: &mut Writer<'_>, op: &ProtocolOp) {
    match op {
        ProtocolOp::BindRequest(b) => w.constructed(Tag::app(0), |w| {
            w.integer(i64::from(b.version));
            w.octet_string(b.name.as_bytes());
            match &b.auth {
                BindAuth::Simple(p) => w.primitive(Tag::context_primitive(0), p),
                BindAuth::Sasl {
                    mechanism,
                    credentials,
                } => w.constructed(Tag::context(3), |w| {
                    w.octet_string(mechanism.as_bytes());
                    if let Some(c) = credentials {
                        w.octet_string(c);
                    }
                }),
                BindAuth::SicilyDiscovery => w.primitive(Tag::context_primitive(9), &[]),
                BindAuth::SicilyNegotiate(m) => w.primitive(Tag::context_primitive(10), m),
                BindAuth::SicilyResponse(m) => w.primitive(Tag::context_primitive(11), m),
            }
        }),
        ProtocolOp::BindResponse(b) => w.constructed(Tag::app(1), |w| {
            let matched = b
                .sicily
                .as_deref()
                .unwrap_or(b.result.matched_dn.as_bytes());
            write_result_with_matched(w, &b.result, matched);
            if let Some(c) = &b.server_sasl_creds {
                w.primitive(Tag::context_primitive(7), c);
            }
        }),
        ProtocolOp::UnbindRequest => w.primitive(Tag::app_primitive(2), &[]),
        ProtocolOp::SearchRequest(s) => w.constructed(Tag::app(3), |w| {
            w.octet_string(s.base.as_bytes());
            w.enumerated(match s.scope {
                SearchScope::Base => 0,
                SearchScope::OneLevel => 1,
                SearchScope::Subtree => 2,
                SearchScope::Children => 3,
            });
            w.enumerated(match s.deref {
                DerefAliases::Never => 0,
                DerefAliases::InSearching => 1,
                DerefAliases::FindingBase => 2,
                DerefAliases::Always => 3,
            });
            w.integer(i64::from(s.size_limit));
            w.integer(i64::from(s.time_limit));
            w.boolean(s.types_only);
            write_filter(w, &s.filter);
            w.sequence(|w| {
                for a in &s.attributes {
                    w.octet_string(a.as_bytes());
                }
            });
        }),
        ProtocolOp::SearchResultEntry(e) => w.constructed(Tag::app(4), |w| {
            w.octet_string(e.dn.as_bytes());
            write_attributes(w, &e.attributes);
        }),
        ProtocolOp::SearchResultDone(r) => write_result_op(w, 5, r),
        ProtocolOp::SearchResultReference(uris) => w.constructed(Tag::app(19), |w| {
            for u in uris {
                w.octet_string(u.as_bytes());
            }
        }),
        ProtocolOp::ModifyRequest(m) => w.constructed(Tag::app(6), |w| {
            w.octet_string(m.dn.as_bytes());
            w.sequence(|w| {
                for c in &m.changes {
                    w.sequence(|w| {
                        w.enumerated(match c.op {
                            ModOp::Add => 0,
                            ModOp::Delete => 1,
                            ModOp::Replace => 2,
                            ModOp::Increment => 3,
                        });
                        write_attribute(w, &c.attribute);
                    });
                }
            });
        }),
        ProtocolOp::ModifyResponse(r) => write_result_op(w, 7, r),
        ProtocolOp::AddRequest(a) => w.constructed(Tag::app(8), |w| {
            w.octet_string(a.dn.as_bytes());
            write_attributes(w, &a.attributes);
        }),
        ProtocolOp::AddResponse(r) => write_result_op(w, 9, r),
        ProtocolOp::DelRequest(dn) => w.primitive(Tag::app_primitive(10), dn.as_bytes()),
        ProtocolOp::DelResponse(r) => write_result_op(w, 11, r),
        ProtocolOp::ModifyDnRequest(m) => w.constructed(Tag::app(12), |w| {
            w.octet_string(m.dn.as_bytes());
            w.octet_string(m.new_rdn.as_bytes());
            w.boolean(m.delete_old_rdn);
            if let Some(s) = &m.new_superior {
                w.primitive(Tag::context_primitive(0), s.as_bytes());
            }
        }),
        ProtocolOp::ModifyDnResponse(r) => write_result_op(w, 13, r),
        ProtocolOp::CompareRequest(c) => w.constructed(Tag::app(14), |w| {
            w.octet_string(c.dn.as_bytes());
            w.sequence(|w| {
                w.octet_string(c.attribute.as_bytes());
                w.octet_string(&c.value);
            });
        }),
        ProtocolOp::CompareResponse(r) => write_result_op(w, 15, r),
        ProtocolOp::AbandonRequest(id) => {
            w.integer_tagged(Tag::app_primitive(16), i64::from(*id));
        }
        ProtocolOp::ExtendedRequest(e) => w.constructed(Tag::app(23), |w| {
            w.primitive(Tag::context_primitive(0), e.name.as_bytes());
            if let Some(v) = &e.value {
                w.primitive(Tag::context_primitive(1), v);
            }
        }),
        ProtocolOp::ExtendedResponse(e) => w.constructed(Tag::app(24), |w| {
            write_result(w, &e.result);
            if let Some(n) = &e.name {
                w.primitive(Tag::context_primitive(10), n.as_bytes());
            }
            if let Some(v) = &e.value {
                w.primitive(Tag::context_primitive(11), v);
            }
        }),
        ProtocolOp::IntermediateResponse(i) => w.constructed(Tag::app(25), |w| {
            if let Some(n) = &i.name {
                w.primitive(Tag::context_primitive(0), n.as_bytes());
            }
            if let Some(v) = &i.value {
                w.primitive(Tag::context_primitive(1), v);
            }
        }),
    }
}

fn write_result_op(w: &mut Writer<'_>, app: u32, r: &LdapResult) {
    w.constructed(Tag::app(app), |w| write_result(w, r));
}

fn write_result(w: &mut Writer<'_>, r: &LdapResult) {
    write_result_with_matched(w, r, r.matched_dn.as_bytes());
}

/// An LDAPResult whose matchedDN field holds `matched` (Sicily's binary answers).
fn write_result_with_matched(w: &mut Writer<'_>, r: &LdapResult, matched: &[u8]) {
    w.enumerated(i64::from(r.code.0));
    w.octet_string(matched);
    w.octet_string(r.message.as_bytes());
    if !r.referral.is_empty() {
        w.constructed(Tag::context(3), |w| {
            for u in &r.referral {
                w.octet_string(u.as_bytes());
            }
        });
    }
}

fn write_attributes(w: &mut Writer<'_>, attrs: &[Attribute]) {
    w.sequence(|w| {
        for a in attrs {
            write_attribute(w, a);
        }
    });
}

fn write_attribute(w: &mut Writer<'_>, a: &Attribute) {
    w.sequence(|w| {
        w.octet_string(a.name.as_bytes());
        w.constructed(Tag::SET, |w| {
            for v in &a.values {
                w.octet_string(v);
            }
        });
    });
}

/// Writes a filter element; iterative, so any nesting depth is safe.
pub(crate) fn write_filter(w: &mut Writer<'_>, filter: &Filter) {
    enum Step<'f> {
        Node(&'f Filter),
        End(Mark),
    }
    let mut stack = vec![Step::Node(filter)];
    while let Some(step) = stack.pop() {
        match step {
            Step::End(mark) => w.end(mark),
            Step::Node(Filter::And(children)) | Step::Node(Filter::Or(children)) => {
                let tag = if matches!(step, Step::Node(Filter::And(_))) {
                    Tag::context(0)
                } else {
                    Tag::context(1)
                };
                let mark = w.start(tag);
                stack.push(Step::End(mark));
                stack.extend(children.iter().rev().map(Step::Node));
            }
            Step::Node(Filter::Not(inner)) => {
                let mark = w.start(Tag::context(2));
                stack.push(Step::End(mark));
                stack.push(Step::Node(inner));
            }
            Step::Node(Filter::Equality(a, v)) => write_ava(w, 3, a, v),
            Step::Node(Filter::GreaterOrEqual(a, v)) => write_ava(w, 5, a, v),
            Step::Node(Filter::LessOrEqual(a, v)) => write_ava(w, 6, a, v),
            Step::Node(Filter::Approx(a, v)) => write_ava(w, 8, a, v),
            Step::Node(Filter::Present(a)) => w.primitive(Tag::context_primitive(7), a.as_bytes()),
            Step::Node(Filter::Substrings(s)) => write_substrings(w, s),
            Step::Node(Filter::Extensible(x)) => w.constructed(Tag::context(9), |w| {
                if let Some(r) = &x.rule {
                    w.primitive(Tag::context_primitive(1), r.as_bytes());
                }
                if let Some(a) = &x.attr {
                    w.primitive(Tag::context_primitive(2), a.as_bytes());
                }
                w.primitive(Tag::context_primitive(3), &x.value);
                if x.dn_attributes {
                    w.boolean_tagged(Tag::context_primitive(4), true);
                }
            }),
        }
    }
}

fn write_ava(w: &mut Writer<'_>, choice: u32, attr: &str, value: &[u8]) {
    w.constructed(Tag::context(choice), |w| {
        w.octet_string(attr.as_bytes());
        w.octet_string(value);
    });
}

fn write_substrings(w: &mut Writer<'_>, s: &SubstringFilter) {
    w.constructed(Tag::context(4), |w| {
        w.octet_string(s.attr.as_bytes());
        w.sequence(|w| {
            if let Some(i) = &s.initial {
                w.primitive(Tag::context_primitive(0), i);
            }
            for a in &s.any {
                w.primitive(Tag::context_primitive(1), a);
            }
            if let Some(f) = &s.final_ {
                w.primitive(Tag::context_primitive(2), f);
            }
        });
    });
}
