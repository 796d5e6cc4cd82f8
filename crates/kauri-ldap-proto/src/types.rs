//! The LDAPv3 message types (RFC 4511 section 4), as values.
//!
//! DNs, attribute descriptions and OIDs are `String`s (LDAP requires UTF-8 for them; the
//! decoder refuses invalid UTF-8 with an error that keeps the message id). Attribute values,
//! assertion values, passwords and control values are bytes.

use kauri_db::Filter;

/// Message ids are 0..=2^31-1 (RFC 4511 section 4.1.1.1).
pub type MessageId = i32;

/// One LDAP message: id, operation, controls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdapMessage {
    /// The message id (0 only for unsolicited notifications).
    pub id: MessageId,
    /// The operation.
    pub op: ProtocolOp,
    /// Controls, in the order sent.
    pub controls: Vec<Control>,
}

/// Every protocol operation of RFC 4511.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolOp {
    /// [APPLICATION 0]
    BindRequest(BindRequest),
    /// [APPLICATION 1]
    BindResponse(BindResponse),
    /// [APPLICATION 2]
    UnbindRequest,
    /// [APPLICATION 3]
    SearchRequest(SearchRequest),
    /// [APPLICATION 4]
    SearchResultEntry(SearchResultEntry),
    /// [APPLICATION 5]
    SearchResultDone(LdapResult),
    /// [APPLICATION 19]
    SearchResultReference(Vec<String>),
    /// [APPLICATION 6]
    ModifyRequest(ModifyRequest),
    /// [APPLICATION 7]
    ModifyResponse(LdapResult),
    /// [APPLICATION 8]
    AddRequest(AddRequest),
    /// [APPLICATION 9]
    AddResponse(LdapResult),
    /// [APPLICATION 10] — the DN to delete.
    DelRequest(String),
    /// [APPLICATION 11]
    DelResponse(LdapResult),
    /// [APPLICATION 12]
    ModifyDnRequest(ModifyDnRequest),
    /// [APPLICATION 13]
    ModifyDnResponse(LdapResult),
    /// [APPLICATION 14]
    CompareRequest(CompareRequest),
    /// [APPLICATION 15]
    CompareResponse(LdapResult),
    /// [APPLICATION 16] — the id of the operation to abandon.
    AbandonRequest(MessageId),
    /// [APPLICATION 23]
    ExtendedRequest(ExtendedRequest),
    /// [APPLICATION 24]
    ExtendedResponse(ExtendedResponse),
    /// [APPLICATION 25]
    IntermediateResponse(IntermediateResponse),
}

/// LDAP result codes (RFC 4511 appendix A), as numbers with names for the common ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResultCode(pub u32);

#[allow(missing_docs)]
impl ResultCode {
    pub const SUCCESS: ResultCode = ResultCode(0);
    pub const OPERATIONS_ERROR: ResultCode = ResultCode(1);
    pub const PROTOCOL_ERROR: ResultCode = ResultCode(2);
    pub const TIME_LIMIT_EXCEEDED: ResultCode = ResultCode(3);
    pub const SIZE_LIMIT_EXCEEDED: ResultCode = ResultCode(4);
    pub const COMPARE_FALSE: ResultCode = ResultCode(5);
    pub const COMPARE_TRUE: ResultCode = ResultCode(6);
    pub const AUTH_METHOD_NOT_SUPPORTED: ResultCode = ResultCode(7);
    pub const STRONGER_AUTH_REQUIRED: ResultCode = ResultCode(8);
    pub const ADMIN_LIMIT_EXCEEDED: ResultCode = ResultCode(11);
    pub const UNAVAILABLE_CRITICAL_EXTENSION: ResultCode = ResultCode(12);
    pub const CONFIDENTIALITY_REQUIRED: ResultCode = ResultCode(13);
    pub const SASL_BIND_IN_PROGRESS: ResultCode = ResultCode(14);
    pub const NO_SUCH_ATTRIBUTE: ResultCode = ResultCode(16);
    pub const UNDEFINED_ATTRIBUTE_TYPE: ResultCode = ResultCode(17);
    pub const INAPPROPRIATE_MATCHING: ResultCode = ResultCode(18);
    pub const CONSTRAINT_VIOLATION: ResultCode = ResultCode(19);
    pub const ATTRIBUTE_OR_VALUE_EXISTS: ResultCode = ResultCode(20);
    pub const INVALID_ATTRIBUTE_SYNTAX: ResultCode = ResultCode(21);
    pub const NO_SUCH_OBJECT: ResultCode = ResultCode(32);
    pub const INVALID_DN_SYNTAX: ResultCode = ResultCode(34);
    pub const INAPPROPRIATE_AUTHENTICATION: ResultCode = ResultCode(48);
    pub const INVALID_CREDENTIALS: ResultCode = ResultCode(49);
    pub const INSUFFICIENT_ACCESS_RIGHTS: ResultCode = ResultCode(50);
    pub const BUSY: ResultCode = ResultCode(51);
    pub const UNAVAILABLE: ResultCode = ResultCode(52);
    pub const UNWILLING_TO_PERFORM: ResultCode = ResultCode(53);
    pub const NAMING_VIOLATION: ResultCode = ResultCode(64);
    pub const OBJECT_CLASS_VIOLATION: ResultCode = ResultCode(65);
    pub const NOT_ALLOWED_ON_NON_LEAF: ResultCode = ResultCode(66);
    pub const NOT_ALLOWED_ON_RDN: ResultCode = ResultCode(67);
    pub const ENTRY_ALREADY_EXISTS: ResultCode = ResultCode(68);
    pub const OTHER: ResultCode = ResultCode(80);
    pub const CANCELED: ResultCode = ResultCode(118);
    pub const FILTER_ERROR: ResultCode = ResultCode(87);
}

/// The result part of every response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdapResult {
    /// Result code.
    pub code: ResultCode,
    /// The matched DN (usually empty).
    pub matched_dn: String,
    /// Diagnostic message.
    pub message: String,
    /// Referral URLs (Kauri sends none; decoded for completeness).
    pub referral: Vec<String>,
}

impl LdapResult {
    /// A result with a code and a message.
    pub fn new(code: ResultCode, message: impl Into<String>) -> LdapResult {
        LdapResult {
            code,
            matched_dn: String::new(),
            message: message.into(),
            referral: Vec::new(),
        }
    }

    /// Success with no message.
    pub fn success() -> LdapResult {
        LdapResult::new(ResultCode::SUCCESS, "")
    }
}

/// A bind request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindRequest {
    /// Protocol version (Kauri serves 3).
    pub version: i32,
    /// The name to bind as (a DN, or for AD also a UPN or DOMAIN\\user).
    pub name: String,
    /// Credentials.
    pub auth: BindAuth,
}

/// Bind credentials.
#[derive(Clone, PartialEq, Eq)]
pub enum BindAuth {
    /// `[0]` simple password (empty = anonymous or unauthenticated).
    Simple(Vec<u8>),
    /// `[3]` SASL.
    Sasl {
        /// Mechanism name, e.g. `PLAIN`, `EXTERNAL`.
        mechanism: String,
        /// Mechanism data.
        credentials: Option<Vec<u8>>,
    },
    /// `[9]` Sicily package discovery (MS-ADTS 5.1.1.1.3): which packages the server has.
    SicilyDiscovery,
    /// `[10]` Sicily negotiate: an NTLM NEGOTIATE message.
    SicilyNegotiate(Vec<u8>),
    /// `[11]` Sicily response: an NTLM AUTHENTICATE message.
    SicilyResponse(Vec<u8>),
}

impl std::fmt::Debug for BindAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindAuth::Simple(p) => write!(f, "Simple(<{} bytes redacted>)", p.len()),
            BindAuth::Sasl {
                mechanism,
                credentials,
            } => write!(
                f,
                "Sasl {{ mechanism: {mechanism:?}, credentials: {} }}",
                if credentials.is_some() {
                    "<redacted>"
                } else {
                    "None"
                }
            ),
            BindAuth::SicilyDiscovery => write!(f, "SicilyDiscovery"),
            BindAuth::SicilyNegotiate(m) => write!(f, "SicilyNegotiate(<{} bytes>)", m.len()),
            BindAuth::SicilyResponse(m) => {
                write!(f, "SicilyResponse(<{} bytes redacted>)", m.len())
            }
        }
    }
}

/// A bind response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindResponse {
    /// The result.
    pub result: LdapResult,
    /// `[7]` server SASL credentials.
    pub server_sasl_creds: Option<Vec<u8>>,
    /// Sicily binds (MS-ADTS 5.1.1.1.3) answer in the matchedDN field with bytes that are
    /// not a DN (the package list, the NTLM CHALLENGE); when set, they are written there in
    /// place of the result's matched DN.
    pub sicily: Option<Vec<u8>>,
}

/// Search scope (RFC 4511, plus `children` = 3 from RFC 4512 drafts, sent by OpenLDAP tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchScope {
    /// 0
    Base,
    /// 1
    OneLevel,
    /// 2
    Subtree,
    /// 3
    Children,
}

/// Alias dereferencing (decoded and ignored: the directory holds no aliases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerefAliases {
    /// 0
    Never,
    /// 1
    InSearching,
    /// 2
    FindingBase,
    /// 3
    Always,
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// Base DN.
    pub base: String,
    /// Scope.
    pub scope: SearchScope,
    /// Alias dereferencing.
    pub deref: DerefAliases,
    /// Size limit (0 = none).
    pub size_limit: i32,
    /// Time limit in seconds (0 = none).
    pub time_limit: i32,
    /// Return attribute names only.
    pub types_only: bool,
    /// The filter, with binary-safe assertion values.
    pub filter: Filter,
    /// Requested attributes (`*`, `+`, `1.1`, names, `name;range=0-*` …).
    pub attributes: Vec<String>,
}

/// An attribute with its values (PartialAttribute; values may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// Attribute description.
    pub name: String,
    /// Values.
    pub values: Vec<Vec<u8>>,
}

/// One search result entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResultEntry {
    /// The entry's DN.
    pub dn: String,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
}

/// Modification operation codes (RFC 4511 and RFC 4525 increment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModOp {
    /// 0
    Add,
    /// 1
    Delete,
    /// 2
    Replace,
    /// 3
    Increment,
}

/// One change of a modify request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What to do.
    pub op: ModOp,
    /// With which attribute and values.
    pub attribute: Attribute,
}

/// A modify request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModifyRequest {
    /// The entry.
    pub dn: String,
    /// The changes, applied in order, all or nothing.
    pub changes: Vec<Change>,
}

/// An add request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddRequest {
    /// The new entry's DN.
    pub dn: String,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
}

/// A modify DN request (rename and/or move).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModifyDnRequest {
    /// The entry.
    pub dn: String,
    /// Its new RDN.
    pub new_rdn: String,
    /// Whether the old RDN values are removed.
    pub delete_old_rdn: bool,
    /// `[0]` the new parent, for a move.
    pub new_superior: Option<String>,
}

/// A compare request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareRequest {
    /// The entry.
    pub dn: String,
    /// The attribute description.
    pub attribute: String,
    /// The assertion value.
    pub value: Vec<u8>,
}

/// An extended request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtendedRequest {
    /// `[0]` the request OID.
    pub name: String,
    /// `[1]` the request value.
    pub value: Option<Vec<u8>>,
}

/// An extended response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtendedResponse {
    /// The result.
    pub result: LdapResult,
    /// `[10]` the response OID.
    pub name: Option<String>,
    /// `[11]` the response value.
    pub value: Option<Vec<u8>>,
}

/// An intermediate response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntermediateResponse {
    /// `[0]` OID.
    pub name: Option<String>,
    /// `[1]` value.
    pub value: Option<Vec<u8>>,
}

/// A control as sent: OID, criticality and raw value. [`crate::controls`] decodes the
/// ones Kauri understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// The control type OID.
    pub oid: String,
    /// Whether the operation must fail if the control is not supported.
    pub critical: bool,
    /// The control value (BER of the control's own structure, or absent).
    pub value: Option<Vec<u8>>,
}
