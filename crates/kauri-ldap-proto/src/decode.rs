//! LDAP messages from BER (RFC 4511 section 4), with errors that keep the message id and
//! operation so the server can still answer a message it cannot decode.
//!
//! Filters are decoded with the depth limit of [`kauri_db::filter::MAX_FILTER_DEPTH`]
//! enforced before anything deeper is built; assertion values stay bytes.

use std::fmt;

use kauri_db::filter::{ExtensibleMatch, Filter, SubstringFilter, MAX_FILTER_DEPTH};

use crate::ber::{parse_boolean, parse_integer, BerError, Class, Reader, Tag};
use crate::types::*;

/// Why a message could not be decoded, with what could be read of its envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The message id, when it was readable and in range.
    pub id: Option<MessageId>,
    /// The APPLICATION tag number of the operation, when readable, so the server can pick
    /// the matching response type.
    pub op: Option<u32>,
    /// The result code to answer with: `protocolError`, or `invalidDNSyntax` when the
    /// message was well formed except for a DN that is not UTF-8.
    pub code: ResultCode,
    /// What was wrong, for the diagnostic message and logs.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "undecodable LDAP message")?;
        if let Some(id) = self.id {
            write!(f, " (id {id}")?;
            if let Some(op) = self.op {
                write!(f, ", operation {op}")?;
            }
            write!(f, ")")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// An error before the envelope is attached.
struct Why {
    code: ResultCode,
    reason: String,
}

impl From<BerError> for Why {
    fn from(e: BerError) -> Why {
        bad(e.to_string())
    }
}

fn bad(reason: impl Into<String>) -> Why {
    Why {
        code: ResultCode::PROTOCOL_ERROR,
        reason: reason.into(),
    }
}

type R<T> = Result<T, Why>;

const BIND_REQUEST: Tag = Tag::app(0);
const BIND_RESPONSE: Tag = Tag::app(1);
const UNBIND_REQUEST: Tag = Tag::app_primitive(2);
const SEARCH_REQUEST: Tag = Tag::app(3);
const SEARCH_RESULT_ENTRY: Tag = Tag::app(4);
const SEARCH_RESULT_DONE: Tag = Tag::app(5);
const MODIFY_REQUEST: Tag = Tag::app(6);
const MODIFY_RESPONSE: Tag = Tag::app(7);
const ADD_REQUEST: Tag = Tag::app(8);
const ADD_RESPONSE: Tag = Tag::app(9);
const DEL_REQUEST: Tag = Tag::app_primitive(10);
const DEL_RESPONSE: Tag = Tag::app(11);
const MODIFY_DN_REQUEST: Tag = Tag::app(12);
const MODIFY_DN_RESPONSE: Tag = Tag::app(13);
const COMPARE_REQUEST: Tag = Tag::app(14);
const COMPARE_RESPONSE: Tag = Tag::app(15);
const ABANDON_REQUEST: Tag = Tag::app_primitive(16);
const SEARCH_RESULT_REFERENCE: Tag = Tag::app(19);
const EXTENDED_REQUEST: Tag = Tag::app(23);
const EXTENDED_RESPONSE: Tag = Tag::app(24);
const INTERMEDIATE_RESPONSE: Tag = Tag::app(25);

const CONTROLS: Tag = Tag::context(0);
const REFERRAL: Tag = Tag::context(3);

const F_AND: Tag = Tag::context(0);
const F_OR: Tag = Tag::context(1);
const F_NOT: Tag = Tag::context(2);
const F_EQUALITY: Tag = Tag::context(3);
const F_SUBSTRINGS: Tag = Tag::context(4);
const F_GE: Tag = Tag::context(5);
const F_LE: Tag = Tag::context(6);
const F_PRESENT: Tag = Tag::context_primitive(7);
const F_APPROX: Tag = Tag::context(8);
const F_EXTENSIBLE: Tag = Tag::context(9);

/// Decodes one complete LDAPMessage (a frame as split by [`crate::codec`]).
///
/// The frame must hold exactly one message: bytes after it are an error.
pub fn decode_message(frame: &[u8]) -> Result<LdapMessage, DecodeError> {
    let mut id = None;
    let mut op = None;
    match decode_inner(frame, &mut id, &mut op) {
        Ok(m) => Ok(m),
        Err(w) => Err(DecodeError {
            id,
            op,
            code: w.code,
            reason: w.reason,
        }),
    }
}

fn decode_inner(frame: &[u8], id: &mut Option<MessageId>, op: &mut Option<u32>) -> R<LdapMessage> {
    let mut outer = Reader::new(frame);
    let mut msg = outer.sequence()?;
    let raw = msg.integer()?;
    let mid = non_negative(raw, "message id")?;
    *id = Some(mid);
    // The operation is known from its tag alone, so a request whose length does not hold
    // is still answered by its own kind of response.
    if let Some(tag) = msg.peek_tag().filter(|t| t.class == Class::Application) {
        *op = Some(tag.number);
    }
    let (tag, content) = msg.read_any()?;
    let operation = decode_op(tag, content)?;
    let controls = match msg.read_optional(CONTROLS)? {
        Some(c) => decode_controls(c)?,
        None => Vec::new(),
    };
    msg.finish()?;
    outer
        .finish()
        .map_err(|e| bad(format!("after the message: {e}")))?;
    Ok(LdapMessage {
        id: mid,
        op: operation,
        controls,
    })
}

fn decode_op(tag: Tag, content: &[u8]) -> R<ProtocolOp> {
    let mut r = Reader::new(content);
    let op = match tag {
        BIND_REQUEST => ProtocolOp::BindRequest(bind_request(&mut r)?),
        BIND_RESPONSE => {
            let result = ldap_result(&mut r)?;
            let server_sasl_creds = r
                .read_optional(Tag::context_primitive(7))?
                .map(<[u8]>::to_vec);
            ProtocolOp::BindResponse(BindResponse {
                result,
                server_sasl_creds,
                sicily: None,
            })
        }
        UNBIND_REQUEST => {
            if !content.is_empty() {
                return Err(bad("UnbindRequest must be empty"));
            }
            ProtocolOp::UnbindRequest
        }
        SEARCH_REQUEST => ProtocolOp::SearchRequest(search_request(&mut r)?),
        SEARCH_RESULT_ENTRY => {
            let dn = dn(r.octet_string()?)?;
            let attributes = attribute_list(&mut r)?;
            ProtocolOp::SearchResultEntry(SearchResultEntry { dn, attributes })
        }
        SEARCH_RESULT_DONE => ProtocolOp::SearchResultDone(ldap_result(&mut r)?),
        SEARCH_RESULT_REFERENCE => {
            let mut uris = Vec::new();
            while !r.is_empty() {
                uris.push(string(r.octet_string()?, "URI")?);
            }
            ProtocolOp::SearchResultReference(uris)
        }
        MODIFY_REQUEST => {
            let dn = dn(r.octet_string()?)?;
            let mut list = r.sequence()?;
            let mut changes = Vec::new();
            while !list.is_empty() {
                let mut c = list.sequence()?;
                let op = match c.enumerated()? {
                    0 => ModOp::Add,
                    1 => ModOp::Delete,
                    2 => ModOp::Replace,
                    3 => ModOp::Increment,
                    n => return Err(bad(format!("unknown modify operation {n}"))),
                };
                let attribute = attribute(&mut c)?;
                c.finish()?;
                changes.push(Change { op, attribute });
            }
            ProtocolOp::ModifyRequest(ModifyRequest { dn, changes })
        }
        MODIFY_RESPONSE => ProtocolOp::ModifyResponse(ldap_result(&mut r)?),
        ADD_REQUEST => {
            let dn = dn(r.octet_string()?)?;
            let attributes = attribute_list(&mut r)?;
            ProtocolOp::AddRequest(AddRequest { dn, attributes })
        }
        ADD_RESPONSE => ProtocolOp::AddResponse(ldap_result(&mut r)?),
        DEL_REQUEST => {
            r = Reader::new(&[]);
            ProtocolOp::DelRequest(dn(content)?)
        }
        DEL_RESPONSE => ProtocolOp::DelResponse(ldap_result(&mut r)?),
        MODIFY_DN_REQUEST => {
            let entry = dn(r.octet_string()?)?;
            let new_rdn = dn(r.octet_string()?)?;
            let delete_old_rdn = r.boolean()?;
            let new_superior = match r.read_optional(Tag::context_primitive(0))? {
                Some(s) => Some(dn(s)?),
                None => None,
            };
            ProtocolOp::ModifyDnRequest(ModifyDnRequest {
                dn: entry,
                new_rdn,
                delete_old_rdn,
                new_superior,
            })
        }
        MODIFY_DN_RESPONSE => ProtocolOp::ModifyDnResponse(ldap_result(&mut r)?),
        COMPARE_REQUEST => {
            let entry = dn(r.octet_string()?)?;
            let mut ava = r.sequence()?;
            let attribute = attr_desc(ava.octet_string()?)?;
            let value = ava.octet_string()?.to_vec();
            ava.finish()?;
            ProtocolOp::CompareRequest(CompareRequest {
                dn: entry,
                attribute,
                value,
            })
        }
        COMPARE_RESPONSE => ProtocolOp::CompareResponse(ldap_result(&mut r)?),
        ABANDON_REQUEST => {
            r = Reader::new(&[]);
            ProtocolOp::AbandonRequest(non_negative(parse_integer(content)?, "message id")?)
        }
        EXTENDED_REQUEST => {
            let name = string(r.read_tagged(Tag::context_primitive(0))?, "request name")?;
            let value = r
                .read_optional(Tag::context_primitive(1))?
                .map(<[u8]>::to_vec);
            ProtocolOp::ExtendedRequest(ExtendedRequest { name, value })
        }
        EXTENDED_RESPONSE => {
            let result = ldap_result(&mut r)?;
            let name = match r.read_optional(Tag::context_primitive(10))? {
                Some(n) => Some(string(n, "response name")?),
                None => None,
            };
            let value = r
                .read_optional(Tag::context_primitive(11))?
                .map(<[u8]>::to_vec);
            ProtocolOp::ExtendedResponse(ExtendedResponse {
                result,
                name,
                value,
            })
        }
        INTERMEDIATE_RESPONSE => {
            let name = match r.read_optional(Tag::context_primitive(0))? {
                Some(n) => Some(string(n, "response name")?),
                None => None,
            };
            let value = r
                .read_optional(Tag::context_primitive(1))?
                .map(<[u8]>::to_vec);
            ProtocolOp::IntermediateResponse(IntermediateResponse { name, value })
        }
        other => return Err(bad(format!("unknown protocol operation {other}"))),
    };
    r.finish()?;
    Ok(op)
}

fn bind_request(r: &mut Reader<'_>) -> R<BindRequest> {
    let raw = r.integer()?;
    let version =
        i32::try_from(raw).map_err(|_| bad(format!("bind version {raw} out of range")))?;
    let name = dn(r.octet_string()?)?;
    let (tag, content) = r.read_any()?;
    let auth = match tag {
        t if t == Tag::context_primitive(0) => BindAuth::Simple(content.to_vec()),
        t if t == Tag::context(3) => {
            let mut s = Reader::new(content);
            let mechanism = string(s.octet_string()?, "SASL mechanism")?;
            let credentials = s.read_optional(Tag::OCTET_STRING)?.map(<[u8]>::to_vec);
            s.finish()?;
            BindAuth::Sasl {
                mechanism,
                credentials,
            }
        }
        t if t == Tag::context_primitive(9) => BindAuth::SicilyDiscovery,
        t if t == Tag::context_primitive(10) => BindAuth::SicilyNegotiate(content.to_vec()),
        t if t == Tag::context_primitive(11) => BindAuth::SicilyResponse(content.to_vec()),
        other => return Err(bad(format!("unsupported authentication choice {other}"))),
    };
    Ok(BindRequest {
        version,
        name,
        auth,
    })
}

fn search_request(r: &mut Reader<'_>) -> R<SearchRequest> {
    let base = dn(r.octet_string()?)?;
    let scope = match r.enumerated()? {
        0 => SearchScope::Base,
        1 => SearchScope::OneLevel,
        2 => SearchScope::Subtree,
        3 => SearchScope::Children,
        n => return Err(bad(format!("unknown search scope {n}"))),
    };
    let deref = match r.enumerated()? {
        0 => DerefAliases::Never,
        1 => DerefAliases::InSearching,
        2 => DerefAliases::FindingBase,
        3 => DerefAliases::Always,
        n => return Err(bad(format!("unknown derefAliases {n}"))),
    };
    let size_limit = non_negative(r.integer()?, "size limit")?;
    let time_limit = non_negative(r.integer()?, "time limit")?;
    let types_only = r.boolean()?;
    let (tag, content) = r.read_any()?;
    let filter = filter_at(tag, content, 1)?;
    let mut list = r.sequence()?;
    let mut attributes = Vec::new();
    while !list.is_empty() {
        attributes.push(string(list.octet_string()?, "attribute selector")?);
    }
    Ok(SearchRequest {
        base,
        scope,
        deref,
        size_limit,
        time_limit,
        types_only,
        filter,
        attributes,
    })
}

fn non_negative(raw: i64, what: &str) -> R<i32> {
    i32::try_from(raw)
        .ok()
        .filter(|v| *v >= 0)
        .ok_or_else(|| bad(format!("{what} {raw} out of range")))
}

fn ldap_result(r: &mut Reader<'_>) -> R<LdapResult> {
    let raw = r.enumerated()?;
    let code = u32::try_from(raw).map_err(|_| bad(format!("result code {raw} out of range")))?;
    let matched_dn = dn(r.octet_string()?)?;
    let message = String::from_utf8_lossy(r.octet_string()?).into_owned();
    let mut referral = Vec::new();
    if let Some(content) = r.read_optional(REFERRAL)? {
        let mut list = Reader::new(content);
        while !list.is_empty() {
            referral.push(string(list.octet_string()?, "referral URI")?);
        }
    }
    Ok(LdapResult {
        code: ResultCode(code),
        matched_dn,
        message,
        referral,
    })
}

fn attribute_list(r: &mut Reader<'_>) -> R<Vec<Attribute>> {
    let mut list = r.sequence()?;
    let mut out = Vec::new();
    while !list.is_empty() {
        out.push(attribute(&mut list)?);
    }
    Ok(out)
}

fn attribute(r: &mut Reader<'_>) -> R<Attribute> {
    let mut a = r.sequence()?;
    let name = attr_desc(a.octet_string()?)?;
    let mut set = a.constructed(Tag::SET)?;
    a.finish()?;
    let mut values = Vec::new();
    while !set.is_empty() {
        values.push(set.octet_string()?.to_vec());
    }
    Ok(Attribute { name, values })
}

fn decode_controls(content: &[u8]) -> R<Vec<Control>> {
    let mut list = Reader::new(content);
    let mut out = Vec::new();
    while !list.is_empty() {
        let mut c = list.sequence()?;
        let oid = string(c.octet_string()?, "control type")?;
        let critical = if c.peek_tag() == Some(Tag::BOOLEAN) {
            c.boolean()?
        } else {
            false
        };
        let value = c.read_optional(Tag::OCTET_STRING)?.map(<[u8]>::to_vec);
        c.finish().map_err(|e| bad(format!("control {oid}: {e}")))?;
        out.push(Control {
            oid,
            critical,
            value,
        });
    }
    Ok(out)
}

/// Decodes a BER-encoded Filter (one element, nothing after it), the counterpart of
/// [`crate::encode::encode_filter`]; the error has no id or operation.
pub fn decode_filter(bytes: &[u8]) -> Result<Filter, DecodeError> {
    let inner = || -> R<Filter> {
        let mut r = Reader::new(bytes);
        let (tag, content) = r.read_any()?;
        let f = filter_at(tag, content, 1)?;
        r.finish()?;
        Ok(f)
    };
    inner().map_err(|w| DecodeError {
        id: None,
        op: None,
        code: w.code,
        reason: w.reason,
    })
}

/// Decodes a filter whose nesting level (as [`Filter::depth`] counts) is `depth`.
/// Recursion is bounded by the check below, so at most `MAX_FILTER_DEPTH` frames.
fn filter_at(tag: Tag, content: &[u8], depth: usize) -> R<Filter> {
    if depth > MAX_FILTER_DEPTH {
        return Err(bad(format!(
            "filter nested deeper than {MAX_FILTER_DEPTH} levels"
        )));
    }
    let mut r = Reader::new(content);
    let f = match tag {
        F_AND | F_OR => {
            let mut children = Vec::new();
            while !r.is_empty() {
                let (t, c) = r.read_any()?;
                children.push(filter_at(t, c, depth + 1)?);
            }
            if tag == F_AND {
                Filter::And(children)
            } else {
                Filter::Or(children)
            }
        }
        F_NOT => {
            let (t, c) = r.read_any()?;
            Filter::Not(Box::new(filter_at(t, c, depth + 1)?))
        }
        F_EQUALITY | F_GE | F_LE | F_APPROX => {
            let attr = attr_desc(r.octet_string()?)?;
            let value = r.octet_string()?.to_vec();
            match tag {
                F_EQUALITY => Filter::Equality(attr, value),
                F_GE => Filter::GreaterOrEqual(attr, value),
                F_LE => Filter::LessOrEqual(attr, value),
                _ => Filter::Approx(attr, value),
            }
        }
        F_PRESENT => {
            r = Reader::new(&[]);
            Filter::Present(attr_desc(content)?)
        }
        F_SUBSTRINGS => match substrings(&mut r)? {
            // A substring assertion without components (RFC 4511 wants one at least)
            // matches nothing, as AD answers it (an empty search, not an error); Samba's
            // torture suite sends one.
            s if s.initial.is_none() && s.any.is_empty() && s.final_.is_none() => {
                Filter::Or(Vec::new())
            }
            s => Filter::Substrings(s),
        },
        F_EXTENSIBLE => {
            let rule = match r.read_optional(Tag::context_primitive(1))? {
                Some(v) => Some(string(v, "matching rule")?),
                None => None,
            };
            let attr = match r.read_optional(Tag::context_primitive(2))? {
                Some(v) => Some(attr_desc(v)?),
                None => None,
            };
            let value = r.read_tagged(Tag::context_primitive(3))?.to_vec();
            let dn_attributes = match r.read_optional(Tag::context_primitive(4))? {
                Some(v) => parse_boolean(v)?,
                None => false,
            };
            if rule.is_none() && attr.is_none() {
                return Err(bad("extensible match needs a matching rule or a type"));
            }
            Filter::Extensible(ExtensibleMatch {
                rule,
                attr,
                value,
                dn_attributes,
            })
        }
        other => return Err(bad(format!("unknown filter choice {other}"))),
    };
    r.finish()?;
    Ok(f)
}

fn substrings(r: &mut Reader<'_>) -> R<SubstringFilter> {
    let attr = attr_desc(r.octet_string()?)?;
    let mut list = r.sequence()?;
    let mut initial = None;
    let mut any = Vec::new();
    let mut final_ = None;
    let mut count = 0usize;
    while !list.is_empty() {
        let (t, c) = list.read_any()?;
        if final_.is_some() {
            return Err(bad("substring 'final' must be the last component"));
        }
        match t {
            t if t == Tag::context_primitive(0) => {
                if count > 0 {
                    return Err(bad("substring 'initial' must be the first component"));
                }
                initial = Some(c.to_vec());
            }
            t if t == Tag::context_primitive(1) => any.push(c.to_vec()),
            t if t == Tag::context_primitive(2) => final_ = Some(c.to_vec()),
            other => return Err(bad(format!("unknown substring component {other}"))),
        }
        count += 1;
    }
    Ok(SubstringFilter {
        attr,
        initial,
        any,
        final_,
    })
}

fn string(bytes: &[u8], what: &str) -> R<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| bad(format!("{what} is not valid UTF-8")))
}

fn attr_desc(bytes: &[u8]) -> R<String> {
    string(bytes, "attribute description")
}

fn dn(bytes: &[u8]) -> R<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Why {
        code: ResultCode::INVALID_DN_SYNTAX,
        reason: "DN is not valid UTF-8".into(),
    })
}
