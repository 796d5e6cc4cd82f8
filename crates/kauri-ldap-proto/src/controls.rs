//! The controls and extended operations Kauri understands: their OIDs, and typed values
//! decoded from and encoded to a [`Control`]'s raw value.
//!
//! A malformed value gives a [`ControlError`]; the server answers `protocolError` when
//! such a control is critical (RFC 4511 section 4.1.11) and may ignore it otherwise.

use crate::ber::{BerError, Reader, Tag, Writer};
use crate::types::{Control, ExtendedResponse, LdapMessage, LdapResult, ProtocolOp, ResultCode};

/// Simple paged results (RFC 2696).
pub const PAGED_RESULTS: &str = "1.2.840.113556.1.4.319";
/// Server-side sort request (RFC 2891).
pub const SORT_REQUEST: &str = "1.2.840.113556.1.4.473";
/// Server-side sort response (RFC 2891).
pub const SORT_RESPONSE: &str = "1.2.840.113556.1.4.474";
/// Virtual list view request (draft-ietf-ldapext-ldapv3-vlv-09).
pub const VLV_REQUEST: &str = "2.16.840.1.113730.3.4.9";
/// Virtual list view response.
pub const VLV_RESPONSE: &str = "2.16.840.1.113730.3.4.10";
/// AD tree delete: delete an entry with its subtree.
pub const TREE_DELETE: &str = "1.2.840.113556.1.4.805";
/// AD tree delete with a limit: at most so many objects per request, adminLimitExceeded
/// (ERROR_DS_TREE_DELETE_NOT_FINISHED) while objects remain.
pub const TREE_DELETE_EX: &str = "1.2.840.113556.1.4.2204";
/// AD permissive modify: adding a present value or deleting an absent one succeeds.
pub const PERMISSIVE_MODIFY: &str = "1.2.840.113556.1.4.1413";
/// AD domain scope: no referrals to other domains.
pub const DOMAIN_SCOPE: &str = "1.2.840.113556.1.4.1339";
/// AD search options (`SEARCH_OPTIONS_*` flags). Not `.1338`, which is verify name.
pub const SEARCH_OPTIONS: &str = "1.2.840.113556.1.4.1340";
/// AD extended DN: return `<GUID=…>;<SID=…>;dn` forms.
pub const EXTENDED_DN: &str = "1.2.840.113556.1.4.529";
/// AD show deleted objects.
pub const SHOW_DELETED: &str = "1.2.840.113556.1.4.417";
/// AD show recycled objects.
pub const SHOW_RECYCLED: &str = "1.2.840.113556.1.4.2064";
/// AD show deactivated links.
pub const SHOW_DEACTIVATED_LINK: &str = "1.2.840.113556.1.4.2065";
/// AD security descriptor flags: which parts of `nTSecurityDescriptor` to read or write.
pub const SD_FLAGS: &str = "1.2.840.113556.1.4.801";
/// AD lazy commit: the write need not be flushed before answering.
pub const LAZY_COMMIT: &str = "1.2.840.113556.1.4.619";
/// AD change notification (persistent search).
pub const NOTIFICATION: &str = "1.2.840.113556.1.4.528";
/// AD attribute scoped query.
pub const ASQ: &str = "1.2.840.113556.1.4.1504";
/// AD ranged retrieval without errors (`LDAP_SERVER_RANGE_RETRIEVAL_NOERR_OID`).
pub const RANGE_RETRIEVAL_NOERR: &str = "1.2.840.113556.1.4.802";
/// ManageDsaIT (RFC 3296): treat referral objects as ordinary entries.
pub const MANAGE_DSA_IT: &str = "2.16.840.1.113730.3.4.2";

/// StartTLS extended operation (RFC 4511 section 4.14).
pub const START_TLS: &str = "1.3.6.1.4.1.1466.20037";
/// "Who am I?" extended operation (RFC 4532).
pub const WHO_AM_I: &str = "1.3.6.1.4.1.4203.1.11.3";
/// Password modify extended operation (RFC 3062).
pub const PASSWORD_MODIFY: &str = "1.3.6.1.4.1.4203.1.11.1";
/// Kauri's backup extended operation: the database of a domain as a dump stream, from one
/// snapshot, for an administrator on an encrypted connection. Its OID is under `2.25`,
/// the arc of OIDs made from a UUID (ITU-T X.667), which needs no registration.
///
/// The request value is one byte: `01` to include the key that seals password hashes,
/// `00` to leave it out (absent means `01`). The server answers with intermediate
/// responses (RFC 4511 section 4.13) named by this OID: the first carries the dump's size
/// as an 8-byte big-endian integer, the following ones the dump (`kauri_kv::dump`) in
/// order, in pieces of at most 1 MiB; the final extended response carries the sealing key
/// (or nothing).
pub const KAURI_BACKUP: &str = "2.25.315632926265558504500563800393542490202";
/// Kauri's status extended operation, for `kauri status -H`: a running server's version,
/// listeners, load, database and last backup, for an administrator. The request has no
/// value; the response value is the metrics endpoint's text (Prometheus' text format,
/// UTF-8), so a remote caller reads the same facts as a local scraper. Its OID, like the
/// backup's, is under `2.25` (a UUID).
pub const KAURI_STATUS: &str = "2.25.48839189134519854563207079623768972249";
/// Notice of disconnection, an unsolicited notification (RFC 4511 section 4.4.1).
pub const NOTICE_OF_DISCONNECTION: &str = "1.3.6.1.4.1.1466.20036";

/// Every control OID [`decode_known`] recognises, for `supportedControl`.
pub const KNOWN_CONTROLS: &[&str] = &[
    PAGED_RESULTS,
    SORT_REQUEST,
    SORT_RESPONSE,
    VLV_REQUEST,
    VLV_RESPONSE,
    TREE_DELETE,
    TREE_DELETE_EX,
    PERMISSIVE_MODIFY,
    DOMAIN_SCOPE,
    SEARCH_OPTIONS,
    EXTENDED_DN,
    SHOW_DELETED,
    SHOW_RECYCLED,
    SHOW_DEACTIVATED_LINK,
    SD_FLAGS,
    LAZY_COMMIT,
    NOTIFICATION,
    ASQ,
    RANGE_RETRIEVAL_NOERR,
    MANAGE_DSA_IT,
];

/// Every extended operation OID defined here, for `supportedExtension`.
pub const KNOWN_EXTENSIONS: &[&str] = &[
    START_TLS,
    WHO_AM_I,
    PASSWORD_MODIFY,
    KAURI_BACKUP,
    KAURI_STATUS,
];

/// Why a control or extended operation value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The control requires a value and none was sent.
    #[error("control {oid}: value missing")]
    MissingValue {
        /// The control's OID.
        oid: &'static str,
    },
    /// The value is not the BER structure the control defines.
    #[error("control {oid}: malformed value: {reason}")]
    Malformed {
        /// The control's OID.
        oid: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// A typed control value: decoded from and encoded to a [`Control`]'s raw value.
pub trait ControlValue: Sized {
    /// The control type OID.
    const OID: &'static str;

    /// The raw control value (`None` for controls sent without one).
    fn encode_value(&self) -> Option<Vec<u8>>;

    /// Decodes from a raw control value.
    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError>;

    /// A complete control with this value.
    fn to_control(&self, critical: bool) -> Control {
        Control {
            oid: Self::OID.to_owned(),
            critical,
            value: self.encode_value(),
        }
    }

    /// Decodes the value of `c` (whose OID the caller has matched).
    fn from_control(c: &Control) -> Result<Self, ControlError> {
        Self::decode_value(c.value.as_deref())
    }
}

fn required<'v>(oid: &'static str, value: Option<&'v [u8]>) -> Result<&'v [u8], ControlError> {
    value.ok_or(ControlError::MissingValue { oid })
}

fn malformed(oid: &'static str) -> impl Fn(BerError) -> ControlError {
    move |e| ControlError::Malformed {
        oid,
        reason: e.to_string(),
    }
}

fn out_of_range(oid: &'static str, what: &str, v: i64) -> ControlError {
    ControlError::Malformed {
        oid,
        reason: format!("{what} {v} out of range"),
    }
}

fn to_i32(oid: &'static str, what: &str, v: i64) -> Result<i32, ControlError> {
    i32::try_from(v).map_err(|_| out_of_range(oid, what, v))
}

/// Flag words may be sent as unsigned 32-bit values; keep their bits.
fn flags_i32(oid: &'static str, v: i64) -> Result<i32, ControlError> {
    if let Ok(x) = i32::try_from(v) {
        return Ok(x);
    }
    u32::try_from(v)
        .map(|x| x as i32)
        .map_err(|_| out_of_range(oid, "flags", v))
}

fn utf8(oid: &'static str, bytes: &[u8]) -> Result<String, ControlError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ControlError::Malformed {
        oid,
        reason: "string is not valid UTF-8".into(),
    })
}

fn build(f: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut Writer::new(&mut v));
    v
}

/// Runs `f` over the single SEQUENCE making up `value`, refusing trailing bytes.
fn in_sequence<T>(
    oid: &'static str,
    value: &[u8],
    f: impl FnOnce(&mut Reader<'_>) -> Result<T, ControlError>,
) -> Result<T, ControlError> {
    let err = malformed(oid);
    let mut outer = Reader::new(value);
    let mut seq = outer.sequence().map_err(&err)?;
    let out = f(&mut seq)?;
    seq.finish().map_err(&err)?;
    outer.finish().map_err(&err)?;
    Ok(out)
}

/// Paged results value (RFC 2696); the same shape for request and response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagedResults {
    /// Requested page size, or in a response the estimated total (0 = unknown).
    pub size: i32,
    /// Opaque cookie; empty on the first request and on the last response.
    pub cookie: Vec<u8>,
}

impl ControlValue for PagedResults {
    const OID: &'static str = PAGED_RESULTS;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| {
                w.integer(i64::from(self.size));
                w.octet_string(&self.cookie);
            })
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let err = malformed(oid);
            let size = to_i32(oid, "size", r.integer().map_err(&err)?)?;
            let cookie = r.octet_string().map_err(&err)?.to_vec();
            Ok(PagedResults { size, cookie })
        })
    }
}

/// The tree delete control with a limit (LDAP_SERVER_TREE_DELETE_EX_OID):
/// `SEQUENCE { countOfObjectsToDelete INTEGER }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeDeleteEx {
    /// The most objects one request deletes, as the client sent it.
    pub count: i32,
}

impl TreeDeleteEx {
    /// The most objects one request deletes: the client's count between 2 and 16,384,
    /// as AD applies it.
    pub fn limit(&self) -> usize {
        usize::try_from(self.count.clamp(2, 16_384)).unwrap_or(2)
    }
}

impl ControlValue for TreeDeleteEx {
    const OID: &'static str = TREE_DELETE_EX;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| w.sequence(|w| w.integer(i64::from(self.count)))))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let count = to_i32(
                oid,
                "countOfObjectsToDelete",
                r.integer().map_err(malformed(oid))?,
            )?;
            Ok(TreeDeleteEx { count })
        })
    }
}

/// One key of a server-side sort request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// Attribute description to sort by.
    pub attribute: String,
    /// `[0]` ordering rule, if not the attribute's default.
    pub ordering_rule: Option<String>,
    /// `[1]` descending order.
    pub reverse: bool,
}

/// Server-side sort request (RFC 2891).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortRequest {
    /// Keys, most significant first.
    pub keys: Vec<SortKey>,
}

impl ControlValue for SortRequest {
    const OID: &'static str = SORT_REQUEST;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| {
                for k in &self.keys {
                    w.sequence(|w| {
                        w.octet_string(k.attribute.as_bytes());
                        if let Some(r) = &k.ordering_rule {
                            w.primitive(Tag::context_primitive(0), r.as_bytes());
                        }
                        if k.reverse {
                            w.boolean_tagged(Tag::context_primitive(1), true);
                        }
                    });
                }
            })
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |list| {
            let err = malformed(oid);
            let mut keys = Vec::new();
            while !list.is_empty() {
                let mut k = list.sequence().map_err(&err)?;
                let attribute = utf8(oid, k.octet_string().map_err(&err)?)?;
                let ordering_rule =
                    match k.read_optional(Tag::context_primitive(0)).map_err(&err)? {
                        Some(r) => Some(utf8(oid, r)?),
                        None => None,
                    };
                let reverse = match k.read_optional(Tag::context_primitive(1)).map_err(&err)? {
                    Some(b) => crate::ber::parse_boolean(b).map_err(&err)?,
                    None => false,
                };
                k.finish().map_err(&err)?;
                keys.push(SortKey {
                    attribute,
                    ordering_rule,
                    reverse,
                });
            }
            if keys.is_empty() {
                return Err(ControlError::Malformed {
                    oid,
                    reason: "no sort keys".into(),
                });
            }
            Ok(SortRequest { keys })
        })
    }
}

/// Server-side sort response (RFC 2891).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortResult {
    /// Outcome of the sort (success, unwillingToPerform, …).
    pub code: ResultCode,
    /// `[0]` the attribute that caused the failure.
    pub attribute: Option<String>,
}

impl ControlValue for SortResult {
    const OID: &'static str = SORT_RESPONSE;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| {
                w.enumerated(i64::from(self.code.0));
                if let Some(a) = &self.attribute {
                    w.primitive(Tag::context_primitive(0), a.as_bytes());
                }
            })
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let err = malformed(oid);
            let raw = r.enumerated().map_err(&err)?;
            let code = u32::try_from(raw).map_err(|_| out_of_range(oid, "result", raw))?;
            let attribute = match r.read_optional(Tag::context_primitive(0)).map_err(&err)? {
                Some(a) => Some(utf8(oid, a)?),
                None => None,
            };
            Ok(SortResult {
                code: ResultCode(code),
                attribute,
            })
        })
    }
}

/// Where a virtual list view window is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VlvTarget {
    /// `[0]` a 1-based offset in a list the client believes has `content_count` entries.
    ByOffset {
        /// Target offset (1-based).
        offset: i32,
        /// The client's estimate of the list size (0 = unknown).
        content_count: i32,
    },
    /// `[1]` the first entry whose sort key is at least this value.
    GreaterOrEqual(Vec<u8>),
}

/// Virtual list view request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlvRequest {
    /// Entries wanted before the target.
    pub before: i32,
    /// Entries wanted after the target.
    pub after: i32,
    /// The target.
    pub target: VlvTarget,
    /// Context from the previous response.
    pub context_id: Option<Vec<u8>>,
}

impl ControlValue for VlvRequest {
    const OID: &'static str = VLV_REQUEST;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| {
                w.integer(i64::from(self.before));
                w.integer(i64::from(self.after));
                match &self.target {
                    VlvTarget::ByOffset {
                        offset,
                        content_count,
                    } => w.constructed(Tag::context(0), |w| {
                        w.integer(i64::from(*offset));
                        w.integer(i64::from(*content_count));
                    }),
                    VlvTarget::GreaterOrEqual(v) => w.primitive(Tag::context_primitive(1), v),
                }
                if let Some(c) = &self.context_id {
                    w.octet_string(c);
                }
            })
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let err = malformed(oid);
            let before = to_i32(oid, "beforeCount", r.integer().map_err(&err)?)?;
            let after = to_i32(oid, "afterCount", r.integer().map_err(&err)?)?;
            let (tag, content) = r.read_any().map_err(&err)?;
            let target = if tag == Tag::context(0) {
                let mut s = Reader::new(content);
                let offset = to_i32(oid, "offset", s.integer().map_err(&err)?)?;
                let content_count = to_i32(oid, "contentCount", s.integer().map_err(&err)?)?;
                s.finish().map_err(&err)?;
                VlvTarget::ByOffset {
                    offset,
                    content_count,
                }
            } else if tag == Tag::context_primitive(1) {
                VlvTarget::GreaterOrEqual(content.to_vec())
            } else {
                return Err(ControlError::Malformed {
                    oid,
                    reason: format!("unknown target choice {tag}"),
                });
            };
            let context_id = r
                .read_optional(Tag::OCTET_STRING)
                .map_err(&err)?
                .map(<[u8]>::to_vec);
            Ok(VlvRequest {
                before,
                after,
                target,
                context_id,
            })
        })
    }
}

/// Virtual list view response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlvResponse {
    /// 1-based position of the target entry.
    pub target_position: i32,
    /// The server's list size.
    pub content_count: i32,
    /// Outcome of the VLV operation.
    pub result: ResultCode,
    /// Context for the next request.
    pub context_id: Option<Vec<u8>>,
}

impl ControlValue for VlvResponse {
    const OID: &'static str = VLV_RESPONSE;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| {
                w.integer(i64::from(self.target_position));
                w.integer(i64::from(self.content_count));
                w.enumerated(i64::from(self.result.0));
                if let Some(c) = &self.context_id {
                    w.octet_string(c);
                }
            })
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let err = malformed(oid);
            let target_position = to_i32(oid, "targetPosition", r.integer().map_err(&err)?)?;
            let content_count = to_i32(oid, "contentCount", r.integer().map_err(&err)?)?;
            let raw = r.enumerated().map_err(&err)?;
            let result = u32::try_from(raw).map_err(|_| out_of_range(oid, "result", raw))?;
            let context_id = r
                .read_optional(Tag::OCTET_STRING)
                .map_err(&err)?
                .map(<[u8]>::to_vec);
            Ok(VlvResponse {
                target_position,
                content_count,
                result: ResultCode(result),
                context_id,
            })
        })
    }
}

/// Decodes `SEQUENCE { INTEGER }`, the value shape of several AD controls.
fn single_integer(oid: &'static str, value: &[u8]) -> Result<i32, ControlError> {
    in_sequence(oid, value, |r| {
        let raw = r.integer().map_err(malformed(oid))?;
        flags_i32(oid, raw)
    })
}

fn encode_single_integer(v: i32) -> Vec<u8> {
    build(|w| w.sequence(|w| w.integer(i64::from(v))))
}

/// AD extended DN control: format 0 = hex GUID/SID, 1 = string forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtendedDn {
    /// The requested format; 0 when the control has no value.
    pub format: i32,
}

impl ControlValue for ExtendedDn {
    const OID: &'static str = EXTENDED_DN;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(encode_single_integer(self.format))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        Ok(ExtendedDn {
            format: match value {
                None => 0,
                Some(v) => single_integer(Self::OID, v)?,
            },
        })
    }
}

/// AD search options control (`SERVER_SEARCH_FLAG_DOMAIN_SCOPE` = 1,
/// `SERVER_SEARCH_FLAG_PHANTOM_ROOT` = 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchOptions {
    /// The flag word.
    pub flags: i32,
}

impl ControlValue for SearchOptions {
    const OID: &'static str = SEARCH_OPTIONS;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(encode_single_integer(self.flags))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let v = required(Self::OID, value)?;
        Ok(SearchOptions {
            flags: single_integer(Self::OID, v)?,
        })
    }
}

/// AD security descriptor flags (owner 1, group 2, DACL 4, SACL 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdFlags {
    /// The flag word.
    pub flags: i32,
}

impl ControlValue for SdFlags {
    const OID: &'static str = SD_FLAGS;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(encode_single_integer(self.flags))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let v = required(Self::OID, value)?;
        Ok(SdFlags {
            flags: single_integer(Self::OID, v)?,
        })
    }
}

/// AD attribute scoped query request: search the entries named by a DN-valued attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asq {
    /// The DN-valued attribute of the base entry.
    pub source_attribute: String,
}

impl ControlValue for Asq {
    const OID: &'static str = ASQ;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| w.octet_string(self.source_attribute.as_bytes()))
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let a = r.octet_string().map_err(malformed(oid))?;
            Ok(Asq {
                source_attribute: utf8(oid, a)?,
            })
        })
    }
}

/// AD attribute scoped query response (same OID as the request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsqResponse {
    /// Outcome of the query.
    pub result: ResultCode,
}

impl ControlValue for AsqResponse {
    const OID: &'static str = ASQ;

    fn encode_value(&self) -> Option<Vec<u8>> {
        Some(build(|w| {
            w.sequence(|w| w.enumerated(i64::from(self.result.0)))
        }))
    }

    fn decode_value(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = Self::OID;
        in_sequence(oid, required(oid, value)?, |r| {
            let raw = r.enumerated().map_err(malformed(oid))?;
            let code = u32::try_from(raw).map_err(|_| out_of_range(oid, "result", raw))?;
            Ok(AsqResponse {
                result: ResultCode(code),
            })
        })
    }
}

/// A control decoded by [`decode_known`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Paged results.
    PagedResults(PagedResults),
    /// Server-side sort request.
    SortRequest(SortRequest),
    /// Server-side sort response.
    SortResult(SortResult),
    /// Virtual list view request.
    VlvRequest(VlvRequest),
    /// Virtual list view response.
    VlvResponse(VlvResponse),
    /// Extended DN.
    ExtendedDn(ExtendedDn),
    /// Search options.
    SearchOptions(SearchOptions),
    /// Security descriptor flags.
    SdFlags(SdFlags),
    /// Attribute scoped query (request form).
    Asq(Asq),
    /// Tree delete.
    TreeDelete,
    /// Tree delete with a limit.
    TreeDeleteEx(TreeDeleteEx),
    /// Permissive modify.
    PermissiveModify,
    /// Domain scope.
    DomainScope,
    /// Show deleted objects.
    ShowDeleted,
    /// Show recycled objects.
    ShowRecycled,
    /// Show deactivated links.
    ShowDeactivatedLink,
    /// Lazy commit.
    LazyCommit,
    /// Change notification.
    Notification,
    /// Ranged retrieval without errors.
    RangeRetrievalNoErr,
    /// ManageDsaIT.
    ManageDsaIt,
    /// An OID not listed in [`KNOWN_CONTROLS`]; the server refuses it when critical
    /// (`unavailableCriticalExtension`) and ignores it otherwise.
    Unknown,
}

/// Decodes a control Kauri understands into its typed form.
///
/// Value-less controls ignore any value sent with them. A response control sharing its
/// OID with a request (ASQ) decodes as the request.
pub fn decode_known(c: &Control) -> Result<Known, ControlError> {
    Ok(match c.oid.as_str() {
        PAGED_RESULTS => Known::PagedResults(PagedResults::from_control(c)?),
        SORT_REQUEST => Known::SortRequest(SortRequest::from_control(c)?),
        SORT_RESPONSE => Known::SortResult(SortResult::from_control(c)?),
        VLV_REQUEST => Known::VlvRequest(VlvRequest::from_control(c)?),
        VLV_RESPONSE => Known::VlvResponse(VlvResponse::from_control(c)?),
        EXTENDED_DN => Known::ExtendedDn(ExtendedDn::from_control(c)?),
        SEARCH_OPTIONS => Known::SearchOptions(SearchOptions::from_control(c)?),
        SD_FLAGS => Known::SdFlags(SdFlags::from_control(c)?),
        ASQ => Known::Asq(Asq::from_control(c)?),
        TREE_DELETE => Known::TreeDelete,
        TREE_DELETE_EX => Known::TreeDeleteEx(TreeDeleteEx::from_control(c)?),
        PERMISSIVE_MODIFY => Known::PermissiveModify,
        DOMAIN_SCOPE => Known::DomainScope,
        SHOW_DELETED => Known::ShowDeleted,
        SHOW_RECYCLED => Known::ShowRecycled,
        SHOW_DEACTIVATED_LINK => Known::ShowDeactivatedLink,
        LAZY_COMMIT => Known::LazyCommit,
        NOTIFICATION => Known::Notification,
        RANGE_RETRIEVAL_NOERR => Known::RangeRetrievalNoErr,
        MANAGE_DSA_IT => Known::ManageDsaIt,
        _ => Known::Unknown,
    })
}

/// Password modify request value (RFC 3062); every field is optional.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PasswordModifyRequest {
    /// `[0]` whose password (absent = the bound user).
    pub user_identity: Option<Vec<u8>>,
    /// `[1]` the current password.
    pub old_password: Option<Vec<u8>>,
    /// `[2]` the new password (absent = the server generates one).
    pub new_password: Option<Vec<u8>>,
}

impl std::fmt::Debug for PasswordModifyRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redact = |p: &Option<Vec<u8>>| if p.is_some() { "<redacted>" } else { "None" };
        f.debug_struct("PasswordModifyRequest")
            .field(
                "user_identity",
                &self
                    .user_identity
                    .as_ref()
                    .map(|u| String::from_utf8_lossy(u).into_owned()),
            )
            .field("old_password", &redact(&self.old_password))
            .field("new_password", &redact(&self.new_password))
            .finish()
    }
}

impl PasswordModifyRequest {
    /// Encodes the request value.
    pub fn encode(&self) -> Vec<u8> {
        build(|w| {
            w.sequence(|w| {
                for (n, v) in [
                    (0, &self.user_identity),
                    (1, &self.old_password),
                    (2, &self.new_password),
                ] {
                    if let Some(v) = v {
                        w.primitive(Tag::context_primitive(n), v);
                    }
                }
            })
        })
    }

    /// Decodes the request value; an absent value means every field is absent.
    pub fn decode(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = PASSWORD_MODIFY;
        let Some(value) = value else {
            return Ok(PasswordModifyRequest::default());
        };
        in_sequence(oid, value, |r| {
            let err = malformed(oid);
            let mut take = |n| {
                r.read_optional(Tag::context_primitive(n))
                    .map(|v| v.map(<[u8]>::to_vec))
                    .map_err(&err)
            };
            Ok(PasswordModifyRequest {
                user_identity: take(0)?,
                old_password: take(1)?,
                new_password: take(2)?,
            })
        })
    }
}

/// Password modify response value (RFC 3062).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PasswordModifyResponse {
    /// `[0]` the password the server generated, if it generated one.
    pub gen_passwd: Option<Vec<u8>>,
}

impl std::fmt::Debug for PasswordModifyResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = if self.gen_passwd.is_some() {
            "<redacted>"
        } else {
            "None"
        };
        f.debug_struct("PasswordModifyResponse")
            .field("gen_passwd", &shown)
            .finish()
    }
}

impl PasswordModifyResponse {
    /// Encodes the response value (`None` when there is nothing to return, since the
    /// response value is then omitted).
    pub fn encode(&self) -> Option<Vec<u8>> {
        let p = self.gen_passwd.as_ref()?;
        Some(build(|w| {
            w.sequence(|w| w.primitive(Tag::context_primitive(0), p))
        }))
    }

    /// Decodes the response value; an absent value means no generated password.
    pub fn decode(value: Option<&[u8]>) -> Result<Self, ControlError> {
        let oid = PASSWORD_MODIFY;
        let Some(value) = value else {
            return Ok(PasswordModifyResponse::default());
        };
        in_sequence(oid, value, |r| {
            let gen_passwd = r
                .read_optional(Tag::context_primitive(0))
                .map_err(malformed(oid))?
                .map(<[u8]>::to_vec);
            Ok(PasswordModifyResponse { gen_passwd })
        })
    }
}

/// The unsolicited notice of disconnection (message id 0) sent before the server closes a
/// connection it cannot continue, e.g. after a framing error.
pub fn notice_of_disconnection(code: ResultCode, message: impl Into<String>) -> LdapMessage {
    LdapMessage {
        id: 0,
        op: ProtocolOp::ExtendedResponse(ExtendedResponse {
            result: LdapResult::new(code, message),
            name: Some(NOTICE_OF_DISCONNECTION.to_owned()),
            value: None,
        }),
        controls: Vec::new(),
    }
}
