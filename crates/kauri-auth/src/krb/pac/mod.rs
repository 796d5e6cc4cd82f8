//! The Privilege Attribute Certificate (MS-PAC): the authorization data
//! Kauri's KDC puts in every ticket (inside AD-IF-RELEVANT, ad-type 1, as an
//! AD-WIN2K-PAC element, ad-type 128) and that the GSS acceptor reads to
//! learn who the client is and which groups it has.
//!
//! * [`Pac`] is the PACTYPE container: parse, encode, get/set buffers.
//! * [`KerbValidationInfo`] (type 1), [`ClientInfo`] (10), [`UpnDnsInfo`]
//!   (12), [`PacAttributes`] (17), [`PacRequestor`] (18) and
//!   [`PacSignatureData`] (6, 7, 16, 19) encode and decode the buffers.
//! * [`PacSigner`], [`Pac::sign`] and [`Pac::verify`] implement the
//!   signature rules of MS-PAC 2.8 without doing any cryptography
//!   themselves; see [`sign`] for the exact rules.
//!
//! All decoders are total: they return [`PacError`] on any malformed input
//! and never panic, and they never allocate more than the input could hold.

//! # How the KDC uses it (sketch)
//!
//! ```ignore
//! // AS-REQ: a TGT. Server and KDC signatures both use the krbtgt key.
//! let mut pac = Pac::from_contents(&contents)?;       // 1, 10, 12, 17, 18
//! pac.sign(&krbtgt_signer, &krbtgt_signer, None)?;   // adds 6, 7
//! let ad_win2k_pac = pac.encode();                    // ad-type 128 payload
//!
//! // TGS-REQ: verify the TGT's PAC, then reissue it for the service.
//! let tgt_pac = Pac::parse(&pac_bytes_from_tgt)?;
//! tgt_pac.verify(Some(&krbtgt_signer), Some(&krbtgt_signer), None)?;
//! let mut st_pac = tgt_pac.reissue(TicketKind::Service); // drops 6, 7, 16, 17, 18, 19
//! // EncTicketPart DER with the PAC's ad-data replaced by the byte 0x00:
//! let ticket_input = encode_enc_ticket_part_with_dummy_pac(&enc_part);
//! st_pac.sign(&service_signer, &krbtgt_signer, Some(&ticket_input))?;
//!
//! // Acceptor: verify with its own key, then check the client binding.
//! let pac = Pac::parse(&pac_bytes)?;
//! pac.verify(Some(&my_key_signer), None, None)?;
//! let ok = pac.client_info()?.is_some_and(|c| c.matches_ticket(authtime, "alice"));
//! let info = pac.logon_info()?;
//! ```
//!
//! (The example is not compiled: it names KDC functions that live
//! elsewhere, and the module's crate path changes when it moves.)

#![deny(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod buffers;
pub mod logon_info;
mod ndr;
pub mod sid;
pub mod sign;

pub use self::buffers::{
    checksum_len, ClientInfo, PacAttributes, PacRequestor, PacSignatureData, UpnDnsExtension,
    UpnDnsInfo, HMAC_SHA1_96_AES128, HMAC_SHA1_96_AES256, HMAC_SHA256_128_AES128,
    HMAC_SHA384_192_AES256, KERB_CHECKSUM_HMAC_MD5, PAC_WAS_GIVEN_IMPLICITLY, PAC_WAS_REQUESTED,
    UPN_DNS_FLAG_CONSTRUCTED, UPN_DNS_FLAG_EXTENDED,
};
pub use self::logon_info::{
    filetime_from_unix, filetime_to_unix, GroupMembership, KerbValidationInfo, SidAndAttributes,
    FILETIME_NEVER, LOGON_EXTRA_SIDS, LOGON_RESOURCE_GROUPS, SE_GROUP_DEFAULT, SE_GROUP_ENABLED,
    SE_GROUP_ENABLED_BY_DEFAULT, SE_GROUP_MANDATORY,
};
pub use self::sid::{sid_from_string, sid_to_string, sid_with_rid, validate_sid};
pub use self::sign::{PacSigner, TicketKind, DUMMY_PAC_AD_ELEMENT};

/// Buffer type 1: KERB_VALIDATION_INFO (logon information).
pub const PAC_LOGON_INFO: u32 = 1;
/// Buffer type 2: PAC_CREDENTIAL_INFO (encrypted credentials, PKINIT only).
pub const PAC_CREDENTIALS_INFO: u32 = 2;
/// Buffer type 6: server signature (PAC_SIGNATURE_DATA).
pub const PAC_SERVER_CHECKSUM: u32 = 6;
/// Buffer type 7: KDC (privilege server) signature (PAC_SIGNATURE_DATA).
pub const PAC_PRIVSVR_CHECKSUM: u32 = 7;
/// Buffer type 10: PAC_CLIENT_INFO (client name and authtime).
pub const PAC_CLIENT_INFO: u32 = 10;
/// Buffer type 11: S4U_DELEGATION_INFO (constrained delegation).
pub const PAC_DELEGATION_INFO: u32 = 11;
/// Buffer type 12: UPN_DNS_INFO.
pub const PAC_UPN_DNS_INFO: u32 = 12;
/// Buffer type 13: PAC_CLIENT_CLAIMS_INFO.
pub const PAC_CLIENT_CLAIMS_INFO: u32 = 13;
/// Buffer type 14: PAC_DEVICE_INFO.
pub const PAC_DEVICE_INFO: u32 = 14;
/// Buffer type 15: PAC_DEVICE_CLAIMS_INFO.
pub const PAC_DEVICE_CLAIMS_INFO: u32 = 15;
/// Buffer type 16: ticket signature (PAC_SIGNATURE_DATA).
pub const PAC_TICKET_CHECKSUM: u32 = 16;
/// Buffer type 17: PAC_ATTRIBUTES_INFO.
pub const PAC_ATTRIBUTES_INFO: u32 = 17;
/// Buffer type 18: PAC_REQUESTOR.
pub const PAC_REQUESTOR: u32 = 18;
/// Buffer type 19: extended KDC (full PAC) signature (PAC_SIGNATURE_DATA).
pub const PAC_FULL_CHECKSUM: u32 = 19;

/// The buffer types that hold PAC_SIGNATURE_DATA.
pub const SIGNATURE_BUFFER_TYPES: [u32; 4] = [
    PAC_SERVER_CHECKSUM,
    PAC_PRIVSVR_CHECKSUM,
    PAC_TICKET_CHECKSUM,
    PAC_FULL_CHECKSUM,
];

/// Largest cBuffers accepted by [`Pac::parse`]; real PACs have fewer than 20
/// buffers, and the limit bounds the work an attacker can cause.
pub const MAX_BUFFERS: u32 = 1024;

/// Size of the PACTYPE header before the PAC_INFO_BUFFER array.
const PACTYPE_HEADER_LEN: usize = 8;
/// Size of one PAC_INFO_BUFFER.
const PAC_INFO_BUFFER_LEN: usize = 16;
/// PAC buffers start on 8-byte boundaries (MS-PAC 2.3).
const PAC_ALIGNMENT: usize = 8;

/// Everything that can go wrong encoding, decoding, signing or verifying a
/// PAC. Decoding errors carry a static description of the field involved.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum PacError {
    /// The input ended before the named field.
    #[error("PAC data truncated: {0}")]
    Truncated(&'static str),
    /// The named structure is inconsistent or violates MS-PAC/NDR rules.
    #[error("malformed PAC data: {0}")]
    Malformed(&'static str),
    /// Valid but unsupported input (e.g. big-endian NDR).
    #[error("unsupported PAC data: {0}")]
    Unsupported(&'static str),
    /// A string is not valid UTF-16.
    #[error("invalid UTF-16 in {0}")]
    InvalidUtf16(&'static str),
    /// A SID is not a well-formed binary SID.
    #[error("invalid SID: {0}")]
    InvalidSid(&'static str),
    /// A value is too large for its wire field.
    #[error("value too large: {0}")]
    TooLarge(&'static str),
    /// The PAC has no buffer of the given type but the operation needs one.
    #[error("PAC has no buffer of type {0}")]
    MissingBuffer(u32),
    /// The PAC has two buffers of the given type (refused: a verifier and a
    /// consumer could otherwise look at different copies).
    #[error("PAC has more than one buffer of type {0}")]
    DuplicateBuffer(u32),
    /// A signature type with no known checksum length.
    #[error("unsupported PAC checksum type {0}")]
    UnsupportedChecksum(i32),
    /// Signature verification failed for the given buffer type (6, 7, 16
    /// or 19).
    #[error("PAC signature in buffer type {buffer} does not verify: {reason}")]
    BadSignature {
        /// The signature buffer type.
        buffer: u32,
        /// What the signer reported (or a type mismatch).
        reason: String,
    },
    /// Returned by a [`PacSigner`] whose checksum does not match; the PAC
    /// code wraps it in [`PacError::BadSignature`].
    #[error("checksum mismatch")]
    ChecksumMismatch,
    /// A [`PacSigner`] failed for its own reasons (key unavailable, wrong
    /// checksum length, ...).
    #[error("PAC signer failed: {0}")]
    Signer(String),
    /// The caller passed arguments that do not make sense together.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
}

/// One PAC_INFO_BUFFER and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacBuffer {
    /// The ulType (see the `PAC_*` constants).
    pub kind: u32,
    /// The buffer's bytes (cbBufferSize of them, without alignment padding).
    pub data: Vec<u8>,
}

/// The bytes a PAC was parsed from, with each buffer's offset, kept so that
/// signatures are verified over exactly what was received even if the
/// sender's layout (padding bytes, gaps, order of data) differs from ours.
#[derive(Clone, Debug)]
struct Received {
    bytes: Vec<u8>,
    offsets: Vec<usize>,
}

/// PACTYPE (MS-PAC 2.3): an ordered list of typed buffers, version 0.
///
/// Buffer types are unique within a PAC (parse refuses duplicates,
/// [`Pac::set_buffer`] replaces). A parsed PAC remembers its exact bytes for
/// [`Pac::verify`] until it is modified.
#[derive(Clone, Debug, Default)]
pub struct Pac {
    buffers: Vec<PacBuffer>,
    received: Option<Received>,
}

impl PartialEq for Pac {
    /// Two PACs are equal when they have the same buffers in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.buffers == other.buffers
    }
}

impl Eq for Pac {}

/// What the KDC knows about a client, to build a fresh PAC with
/// [`Pac::from_contents`] / [`Pac::new_unsigned`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacContents {
    /// Logon information (buffer 1).
    pub logon_info: KerbValidationInfo,
    /// Client name and authtime (buffer 10).
    pub client_info: ClientInfo,
    /// UPN and DNS information (buffer 12); Windows always sends it.
    pub upn_dns_info: Option<UpnDnsInfo>,
    /// PAC attributes (buffer 17): TGTs only (MS-KILE 3.3.5.6.4.7).
    pub attributes: Option<PacAttributes>,
    /// Requestor SID (buffer 18): TGTs only (MS-KILE 3.3.5.6.4.8).
    pub requestor: Option<PacRequestor>,
    /// Further buffers already encoded (claims, delegation info, ...),
    /// placed after the ones above. Must not be signature buffers.
    pub extra_buffers: Vec<PacBuffer>,
}

fn align8(n: usize) -> Option<usize> {
    n.checked_add(PAC_ALIGNMENT - 1)
        .map(|v| v & !(PAC_ALIGNMENT - 1))
}

fn read_u32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u64(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

impl Pac {
    /// An empty PAC, to which buffers are added with [`Pac::set_buffer`].
    pub fn new() -> Self {
        Pac::default()
    }

    /// Parses a PACTYPE. Checks: Version 0; 0 < cBuffers <= [`MAX_BUFFERS`]
    /// and the PAC_INFO_BUFFER array fits; every buffer lies after the array
    /// and within the data, starts on an 8-byte boundary, and overlaps no
    /// other buffer; no buffer type appears twice. Never panics.
    pub fn parse(data: &[u8]) -> Result<Pac, PacError> {
        let count = read_u32(data, 0).ok_or(PacError::Truncated("PACTYPE.cBuffers"))?;
        let version = read_u32(data, 4).ok_or(PacError::Truncated("PACTYPE.Version"))?;
        if version != 0 {
            return Err(PacError::Malformed("PACTYPE.Version is not 0"));
        }
        if count == 0 || count > MAX_BUFFERS {
            return Err(PacError::Malformed("PACTYPE.cBuffers out of range"));
        }
        let count = count as usize;
        let header_len = PACTYPE_HEADER_LEN + count * PAC_INFO_BUFFER_LEN;
        if header_len > data.len() {
            return Err(PacError::Truncated("PAC_INFO_BUFFER array"));
        }
        let mut entries: Vec<(u32, usize, usize)> = Vec::with_capacity(count);
        for i in 0..count {
            let at = PACTYPE_HEADER_LEN + i * PAC_INFO_BUFFER_LEN;
            let kind = read_u32(data, at).ok_or(PacError::Truncated("PAC_INFO_BUFFER"))?;
            let size = read_u32(data, at + 4).ok_or(PacError::Truncated("PAC_INFO_BUFFER"))?;
            let offset = read_u64(data, at + 8).ok_or(PacError::Truncated("PAC_INFO_BUFFER"))?;
            let offset = usize::try_from(offset)
                .map_err(|_| PacError::Malformed("buffer offset out of range"))?;
            let size = size as usize;
            if offset % PAC_ALIGNMENT != 0 {
                return Err(PacError::Malformed("buffer offset not 8-byte aligned"));
            }
            if offset < header_len {
                return Err(PacError::Malformed("buffer overlaps the PAC header"));
            }
            match offset.checked_add(size) {
                Some(end) if end <= data.len() => {}
                _ => {
                    return Err(PacError::Malformed(
                        "buffer extends past the end of the PAC",
                    ));
                }
            }
            entries.push((kind, offset, size));
        }
        // Duplicate types and overlaps, in O(n log n).
        let mut kinds: Vec<u32> = entries.iter().map(|e| e.0).collect();
        kinds.sort_unstable();
        if let Some(w) = kinds.windows(2).find(|w| w[0] == w[1]) {
            return Err(PacError::DuplicateBuffer(w[0]));
        }
        let mut ranges: Vec<(usize, usize)> = entries.iter().map(|e| (e.1, e.1 + e.2)).collect();
        ranges.sort_unstable();
        if ranges.windows(2).any(|w| w[1].0 < w[0].1) {
            return Err(PacError::Malformed("PAC buffers overlap"));
        }
        let mut buffers = Vec::with_capacity(count);
        let mut offsets = Vec::with_capacity(count);
        for (kind, offset, size) in entries {
            buffers.push(PacBuffer {
                kind,
                data: data[offset..offset + size].to_vec(),
            });
            offsets.push(offset);
        }
        Ok(Pac {
            buffers,
            received: Some(Received {
                bytes: data.to_vec(),
                offsets,
            }),
        })
    }

    /// Encodes the PAC: header, PAC_INFO_BUFFER array, then each buffer in
    /// order starting on an 8-byte boundary, zero padding after each buffer
    /// (including the last, as Windows does). Always the canonical layout,
    /// even for a parsed PAC.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with_offsets().0
    }

    /// Encodes canonically and returns each buffer's offset.
    fn encode_with_offsets(&self) -> (Vec<u8>, Vec<usize>) {
        let header_len = PACTYPE_HEADER_LEN + self.buffers.len() * PAC_INFO_BUFFER_LEN;
        let total: usize = header_len
            + self
                .buffers
                .iter()
                .map(|b| align8(b.data.len()).unwrap_or(b.data.len()))
                .sum::<usize>();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&(self.buffers.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        let mut offsets = Vec::with_capacity(self.buffers.len());
        let mut offset = header_len;
        for b in &self.buffers {
            out.extend_from_slice(&b.kind.to_le_bytes());
            out.extend_from_slice(&(b.data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            offsets.push(offset);
            offset += align8(b.data.len()).unwrap_or(b.data.len());
        }
        for b in &self.buffers {
            out.extend_from_slice(&b.data);
            out.resize(align8(out.len()).unwrap_or(out.len()), 0);
        }
        (out, offsets)
    }

    /// The exact bytes this PAC was parsed from, if it has not been modified
    /// since. These are the bytes [`Pac::verify`] checks.
    pub fn received_bytes(&self) -> Option<&[u8]> {
        self.received.as_ref().map(|r| r.bytes.as_slice())
    }

    /// All buffers, in order.
    pub fn buffers(&self) -> &[PacBuffer] {
        &self.buffers
    }

    /// The contents of the buffer of type `kind`, if present.
    pub fn buffer(&self, kind: u32) -> Option<&[u8]> {
        self.buffers
            .iter()
            .find(|b| b.kind == kind)
            .map(|b| b.data.as_slice())
    }

    /// Replaces the contents of the buffer of type `kind`, or appends a new
    /// buffer if there is none. Forgets the received bytes.
    pub fn set_buffer(&mut self, kind: u32, data: Vec<u8>) {
        self.received = None;
        match self.buffers.iter_mut().find(|b| b.kind == kind) {
            Some(b) => b.data = data,
            None => self.buffers.push(PacBuffer { kind, data }),
        }
    }

    /// Removes the buffer of type `kind` and returns its contents. Forgets
    /// the received bytes if something was removed.
    pub fn remove_buffer(&mut self, kind: u32) -> Option<Vec<u8>> {
        let i = self.buffers.iter().position(|b| b.kind == kind)?;
        self.received = None;
        Some(self.buffers.remove(i).data)
    }

    /// Builds an unsigned PAC (no signature buffers) in the order Windows
    /// uses: 1, 10, 12, 17, 18, then `extra_buffers`.
    pub fn from_contents(contents: &PacContents) -> Result<Pac, PacError> {
        let mut pac = Pac::new();
        pac.set_buffer(PAC_LOGON_INFO, contents.logon_info.encode()?);
        pac.set_buffer(PAC_CLIENT_INFO, contents.client_info.encode()?);
        if let Some(upn) = &contents.upn_dns_info {
            pac.set_buffer(PAC_UPN_DNS_INFO, upn.encode()?);
        }
        if let Some(attributes) = &contents.attributes {
            pac.set_buffer(PAC_ATTRIBUTES_INFO, attributes.encode()?);
        }
        if let Some(requestor) = &contents.requestor {
            pac.set_buffer(PAC_REQUESTOR, requestor.encode()?);
        }
        for b in &contents.extra_buffers {
            if SIGNATURE_BUFFER_TYPES.contains(&b.kind) {
                return Err(PacError::InvalidArgument(
                    "extra_buffers must not contain signature buffers",
                ));
            }
            if pac.buffer(b.kind).is_some() {
                return Err(PacError::DuplicateBuffer(b.kind));
            }
            pac.set_buffer(b.kind, b.data.clone());
        }
        Ok(pac)
    }

    /// Decodes buffer 1, if present.
    pub fn logon_info(&self) -> Result<Option<KerbValidationInfo>, PacError> {
        self.buffer(PAC_LOGON_INFO)
            .map(KerbValidationInfo::decode)
            .transpose()
    }

    /// Decodes buffer 10, if present.
    pub fn client_info(&self) -> Result<Option<ClientInfo>, PacError> {
        self.buffer(PAC_CLIENT_INFO)
            .map(ClientInfo::decode)
            .transpose()
    }

    /// Decodes buffer 12, if present.
    pub fn upn_dns_info(&self) -> Result<Option<UpnDnsInfo>, PacError> {
        self.buffer(PAC_UPN_DNS_INFO)
            .map(UpnDnsInfo::decode)
            .transpose()
    }

    /// Decodes buffer 17, if present.
    pub fn attributes_info(&self) -> Result<Option<PacAttributes>, PacError> {
        self.buffer(PAC_ATTRIBUTES_INFO)
            .map(PacAttributes::decode)
            .transpose()
    }

    /// Decodes buffer 18, if present.
    pub fn requestor(&self) -> Result<Option<PacRequestor>, PacError> {
        self.buffer(PAC_REQUESTOR)
            .map(PacRequestor::decode)
            .transpose()
    }

    /// Decodes a signature buffer (6, 7, 16 or 19), if present.
    pub fn signature(&self, kind: u32) -> Result<Option<PacSignatureData>, PacError> {
        self.buffer(kind).map(PacSignatureData::decode).transpose()
    }
}
