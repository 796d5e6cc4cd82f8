//! PAC signatures (MS-PAC 2.8 and its subsections), without cryptography:
//! the KDC supplies the keyed checksums through [`PacSigner`].
//!
//! # The four signatures
//!
//! All four are keyed checksums with key usage 17
//! (KERB_NON_KERB_CKSUM_SALT, MS-KILE 3.1.5.9). "Zeroed" below means every
//! byte of the buffer after its 4-byte SignatureType is set to 0 (the
//! signature and any RODCIdentifier), in a copy; the SignatureType stays.
//!
//! | buffer | key | checksummed bytes |
//! |---|---|---|
//! | 16 ticket signature | krbtgt | the DER EncTicketPart with the PAC replaced by one zero byte (see below) |
//! | 19 extended KDC (full PAC) signature | krbtgt | the whole encoded PAC with buffers 6, 7 and 19 zeroed (16 filled in) |
//! | 6 server signature | the ticket's server key (krbtgt's for a TGT) | the whole encoded PAC with buffers 6 and 7 zeroed (16 and 19 filled in) |
//! | 7 KDC signature | krbtgt | the Signature bytes of buffer 6 (everything after its SignatureType) |
//!
//! Buffers 16 and 19 use the same checksum type (and key) as buffer 7.
//!
//! # Order (MS-PAC 2.8 "PAC signatures" overview, 2.8.3 "the extended KDC
//! signature MUST be generated BEFORE the Server Signature", 2.8.5 "the KDC
//! signature ... is calculated last"; MIT `krb5_kdc_sign_ticket`)
//!
//! 1. Build the PAC with every signature buffer present, SignatureType set
//!    and Signature zero-filled ([`Pac::add_signature_placeholders`]).
//! 2. Ticket signature (16): it does not cover the PAC, so it comes first.
//! 3. Extended KDC signature (19), with 6, 7 and 19 zero.
//! 4. Server signature (6), with 6 and 7 zero — it covers 16 and 19.
//! 5. KDC signature (7) over the server signature.
//!
//! # Which tickets carry 16 and 19
//!
//! MS-PAC 2.8.2 "Ticket Signature" (2.8.3 in older revisions) and 2.8.3
//! "Extended KDC Signature" both say they "SHOULD be
//! included in tickets that are not encrypted to the krbtgt account
//! (including the change password service) or to a trust account". So:
//! service tickets get them; TGTs (local `krbtgt/REALM`, and referral /
//! cross-realm `krbtgt/OTHER` tickets encrypted with a trust key) and
//! `kadmin/changepw` tickets do not. MIT's
//! `k5_pac_should_have_ticket_signature` implements the same rule (no
//! signature when the server is a TGS principal or kadmin/changepw).
//!
//! # `ticket_input`: the bytes the ticket signature covers
//!
//! MS-PAC 2.8.2 "Ticket Signature" (replace "the ad-data in the PAC's
//! AuthorizationData element ... with a single zero byte" and DER-encode
//! the EncTicketPart), MIT `krb5_kdc_sign_ticket`/`krb5_kdc_verify_ticket`,
//! Heimdal `_krb5_kdc_pac_sign_ticket`/`_krb5_kdc_pac_ticket_parse`: take
//! the ticket's final EncTicketPart (everything decided: flags, key, times,
//! caddr, transited, other authorization data) and, in its
//! `authorization-data`, replace the `ad-data` of the AD-WIN2K-PAC element
//! (ad-type 128) — which sits inside an AD-IF-RELEVANT element (ad-type 1)
//! — by the single byte `0x00`. The AD-WIN2K-PAC element keeps its position
//! and ad-type; the AD-IF-RELEVANT element keeps its position and ad-type
//! and its `ad-data` is re-encoded (the DER `AuthorizationData` sequence,
//! now holding `SEQUENCE { [0] INTEGER 128, [1] OCTET STRING 00 }`).
//! `ticket_input` is the DER encoding of that whole EncTicketPart,
//! including its `[APPLICATION 3]` tag — i.e. exactly the plaintext that
//! would be encrypted into the ticket if the PAC were the byte 0x00.
//!
//! When the AD-IF-RELEVANT element holds only the PAC (as MIT and Heimdal
//! arrange), that whole AuthorizationData element is the 26 bytes of
//! [`DUMMY_PAC_AD_ELEMENT`]:
//! `30 18 a0 03 02 01 01 a1 11 04 0f 30 0d 30 0b a0 04 02 02 00 80 a1 03 04 01 00`.
//!
//! MIT and Heimdal put the AD-IF-RELEVANT element holding the PAC first in
//! the ticket's authorization-data, and the PAC alone inside it; Kauri's
//! KDC should do the same. The result does not depend on the PAC, so the
//! KDC can compute it before signing: build the EncTicketPart with the
//! one-byte dummy PAC, DER-encode it (= `ticket_input`), call
//! [`Pac::sign`], then put [`Pac::encode`]'s output in place of the dummy,
//! re-encode and encrypt. A verifier does the reverse: decrypt, find the
//! PAC, re-encode the EncTicketPart with the PAC's ad-data replaced by
//! `0x00` (same position), and pass that as `ticket_input`.

use super::buffers::{checksum_len, PacSignatureData};
use super::{
    Pac, PacBuffer, PacError, PAC_ATTRIBUTES_INFO, PAC_FULL_CHECKSUM, PAC_PRIVSVR_CHECKSUM,
    PAC_REQUESTOR, PAC_SERVER_CHECKSUM, PAC_TICKET_CHECKSUM, SIGNATURE_BUFFER_TYPES,
};

/// DER of the AuthorizationData element that stands in for the PAC when
/// computing or checking the ticket signature, for the usual layout where
/// the PAC is alone in its AD-IF-RELEVANT element:
/// `AuthorizationDataElement { ad-type 1 (AD-IF-RELEVANT), ad-data =
/// DER(AuthorizationData { { ad-type 128 (AD-WIN2K-PAC), ad-data = 00 } }) }`.
/// The KDC puts it at the PAC's position (first) in the EncTicketPart's
/// authorization-data and DER-encodes the EncTicketPart to get
/// `ticket_input`.
pub const DUMMY_PAC_AD_ELEMENT: [u8; 26] = [
    0x30, 0x18, // SEQUENCE (AuthorizationDataElement)
    0xa0, 0x03, 0x02, 0x01, 0x01, // [0] ad-type INTEGER 1
    0xa1, 0x11, 0x04, 0x0f, // [1] ad-data OCTET STRING (15 bytes)
    0x30, 0x0d, // SEQUENCE OF (AuthorizationData)
    0x30, 0x0b, // SEQUENCE (AuthorizationDataElement)
    0xa0, 0x04, 0x02, 0x02, 0x00, 0x80, // [0] ad-type INTEGER 128
    0xa1, 0x03, 0x04, 0x01, 0x00, // [1] ad-data OCTET STRING { 00 }
];

/// What signs a PAC: the KDC implements it with a service's or krbtgt's
/// long-term key, so this module needs no cryptography.
///
/// A signer computes and checks keyed checksums with key usage 17
/// (KERB_NON_KERB_CKSUM_SALT): for AES keys the RFC 3962 HMAC-SHA1-96
/// checksum (types 15/16), for RC4 keys KERB_CHECKSUM_HMAC_MD5 (-138,
/// RFC 4757 §4).
pub trait PacSigner {
    /// The SignatureType this signer produces: 16 / 15
    /// (hmac-sha1-96-aes256/128, 12 bytes) or -138 (HMAC-MD5, 16 bytes).
    fn checksum_type(&self) -> i32;

    /// Computes the checksum of `data`. Must return exactly
    /// [`checksum_len`]`(self.checksum_type())` bytes.
    fn sign(&self, data: &[u8]) -> Result<Vec<u8>, PacError>;

    /// Checks `signature` over `data` for a signature of type
    /// `checksum_type` as found in the PAC. Must reject types it cannot or
    /// will not check (in particular unkeyed ones), compare in constant
    /// time, and return [`PacError::ChecksumMismatch`] on a mismatch.
    fn verify(&self, checksum_type: i32, data: &[u8], signature: &[u8]) -> Result<(), PacError>;
}

/// What kind of ticket a PAC is reissued into, which decides the buffers
/// that [`Pac::reissue`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketKind {
    /// A ticket-granting ticket (renewal, validation, referral): every
    /// non-signature buffer is kept.
    Tgt,
    /// A service ticket: PAC_ATTRIBUTES_INFO (17) and PAC_REQUESTOR (18)
    /// are dropped too, because MS-KILE 3.3.5.6.4.7/8 puts them only in
    /// TGTs.
    Service,
}

/// Zeroes everything after the SignatureType of the signature buffer at
/// `offset` (of `len` bytes) in `bytes`.
fn zero_signature(bytes: &mut [u8], offset: usize, len: usize) {
    if len <= 4 {
        return;
    }
    if let Some(s) = bytes.get_mut(offset + 4..offset + len) {
        s.fill(0);
    }
}

fn signed_len(signer: &dyn PacSigner) -> Result<usize, PacError> {
    let t = signer.checksum_type();
    checksum_len(t).ok_or(PacError::UnsupportedChecksum(t))
}

/// Runs `signer.sign` and checks the length of what it returned.
fn checked_sign(signer: &dyn PacSigner, data: &[u8]) -> Result<Vec<u8>, PacError> {
    let sig = signer.sign(data)?;
    if sig.len() != signed_len(signer)? {
        return Err(PacError::Signer(format!(
            "signer returned {} bytes for checksum type {}",
            sig.len(),
            signer.checksum_type()
        )));
    }
    Ok(sig)
}

fn check(
    signer: &dyn PacSigner,
    buffer: u32,
    sig: &PacSignatureData,
    data: &[u8],
) -> Result<(), PacError> {
    signer
        .verify(sig.signature_type, data, &sig.signature)
        .map_err(|e| PacError::BadSignature {
            buffer,
            reason: e.to_string(),
        })
}

impl Pac {
    /// Builds a PAC from `contents` with zero-filled signature buffers of the
    /// right sizes for the given checksum types (server: the service's key;
    /// kdc: krbtgt's), so its final size is known before signing.
    /// `service_ticket` adds the ticket (16) and full-PAC (19) placeholders.
    pub fn new_unsigned(
        contents: &super::PacContents,
        server_checksum_type: i32,
        kdc_checksum_type: i32,
        service_ticket: bool,
    ) -> Result<Pac, PacError> {
        let mut pac = Pac::from_contents(contents)?;
        pac.add_signature_placeholders(server_checksum_type, kdc_checksum_type, service_ticket)?;
        Ok(pac)
    }

    /// Makes the signature buffers match what [`Pac::sign`] will fill in:
    /// 6 (server type) and 7 (kdc type), plus 16 and 19 (kdc type) if
    /// `service_ticket`, else 16 and 19 are removed. Existing signature
    /// buffers are reset to zero in place (their position is kept); new ones
    /// are appended in the order 6, 7, 16, 19.
    pub fn add_signature_placeholders(
        &mut self,
        server_checksum_type: i32,
        kdc_checksum_type: i32,
        service_ticket: bool,
    ) -> Result<(), PacError> {
        let server = PacSignatureData::placeholder(server_checksum_type)?.encode()?;
        let kdc = PacSignatureData::placeholder(kdc_checksum_type)?.encode()?;
        self.set_buffer(PAC_SERVER_CHECKSUM, server);
        self.set_buffer(PAC_PRIVSVR_CHECKSUM, kdc.clone());
        if service_ticket {
            self.set_buffer(PAC_TICKET_CHECKSUM, kdc.clone());
            self.set_buffer(PAC_FULL_CHECKSUM, kdc);
        } else {
            self.remove_buffer(PAC_TICKET_CHECKSUM);
            self.remove_buffer(PAC_FULL_CHECKSUM);
        }
        Ok(())
    }

    /// True if the PAC has a ticket signature (16), i.e. a verifier holding
    /// the krbtgt key must supply `ticket_input` to [`Pac::verify`].
    pub fn has_ticket_signature(&self) -> bool {
        self.buffer(PAC_TICKET_CHECKSUM).is_some()
    }

    /// Signs the PAC in the order Windows uses (ticket, extended KDC,
    /// server, KDC; see the [module documentation](self)).
    ///
    /// * `server`: the key of the ticket's service (for a TGT: krbtgt).
    /// * `kdc`: the krbtgt key.
    /// * `ticket_input`: `Some(DER EncTicketPart with the PAC replaced by
    ///   0x00)` for service tickets, which then get buffers 16 and 19;
    ///   `None` for TGTs, referral TGTs and kadmin/changepw tickets, which
    ///   then get neither (stale ones are removed).
    ///
    /// Afterwards put [`Pac::encode`]'s output in the ticket: the signatures
    /// cover exactly that encoding.
    pub fn sign(
        &mut self,
        server: &dyn PacSigner,
        kdc: &dyn PacSigner,
        ticket_input: Option<&[u8]>,
    ) -> Result<(), PacError> {
        self.add_signature_placeholders(
            server.checksum_type(),
            kdc.checksum_type(),
            ticket_input.is_some(),
        )?;
        let (mut bytes, offsets) = self.encode_with_offsets();
        let slot = |kind: u32| -> Result<usize, PacError> {
            let i = self
                .buffers
                .iter()
                .position(|b| b.kind == kind)
                .ok_or(PacError::MissingBuffer(kind))?;
            offsets
                .get(i)
                .map(|o| o + 4)
                .ok_or(PacError::MissingBuffer(kind))
        };
        let put = |bytes: &mut Vec<u8>, at: usize, sig: &[u8]| {
            if let Some(dst) = bytes.get_mut(at..at + sig.len()) {
                dst.copy_from_slice(sig);
            }
        };

        if let Some(ticket) = ticket_input {
            let ticket_sig = checked_sign(kdc, ticket)?;
            put(&mut bytes, slot(PAC_TICKET_CHECKSUM)?, &ticket_sig);
            let full_sig = checked_sign(kdc, &bytes)?;
            put(&mut bytes, slot(PAC_FULL_CHECKSUM)?, &full_sig);
        }
        let server_sig = checked_sign(server, &bytes)?;
        let server_at = slot(PAC_SERVER_CHECKSUM)?;
        put(&mut bytes, server_at, &server_sig);
        let kdc_sig = checked_sign(kdc, &server_sig)?;
        put(&mut bytes, slot(PAC_PRIVSVR_CHECKSUM)?, &kdc_sig);

        // Copy the signed buffers back from the encoding.
        for (b, &off) in self.buffers.iter_mut().zip(&offsets) {
            if !SIGNATURE_BUFFER_TYPES.contains(&b.kind) {
                continue;
            }
            if let Some(src) = bytes.get(off..off + b.data.len()) {
                b.data.copy_from_slice(src);
            }
        }
        self.received = None;
        Ok(())
    }

    /// Verifies the PAC's signatures over the bytes it was parsed from (or
    /// its canonical encoding if it was built or modified locally).
    ///
    /// * `server: Some` — the server signature (6) must be present and
    ///   verify (the GSS acceptor passes its own key; the KDC passes krbtgt
    ///   for a TGT, or the service key for an evidence ticket).
    /// * `kdc: Some` (krbtgt) — the KDC signature (7) must be present and
    ///   verify; the full-PAC signature (19) is verified if present; the
    ///   ticket signature (16), if present, requires `ticket_input`
    ///   ([`PacError::InvalidArgument`] otherwise). 16 and 19 must carry the
    ///   KDC signature's type.
    /// * `ticket_input: Some` — says the ticket is a service ticket: the
    ///   ticket signature (16) must then be present and verify over it, and
    ///   the full-PAC signature (19) must be present too (as MIT's
    ///   `krb5_kdc_verify_ticket` requires). Requires `kdc`. Pass `None`
    ///   for TGTs (local or referral) and kadmin/changepw tickets.
    ///
    /// Buffers 6 and 7 must both be present in any case. Calling with
    /// neither signer is an error, so "verified nothing" cannot pass
    /// silently.
    pub fn verify(
        &self,
        server: Option<&dyn PacSigner>,
        kdc: Option<&dyn PacSigner>,
        ticket_input: Option<&[u8]>,
    ) -> Result<(), PacError> {
        if server.is_none() && kdc.is_none() {
            return Err(PacError::InvalidArgument(
                "verify needs a server or KDC signer",
            ));
        }
        if ticket_input.is_some() && kdc.is_none() {
            return Err(PacError::InvalidArgument(
                "the ticket signature can only be checked with the krbtgt signer",
            ));
        }
        let encoded;
        let (bytes, offsets): (&[u8], &[usize]) = match &self.received {
            Some(r) => (&r.bytes, &r.offsets),
            None => {
                encoded = self.encode_with_offsets();
                (&encoded.0, &encoded.1)
            }
        };
        let locate = |kind: u32| -> Option<(usize, usize)> {
            let i = self.buffers.iter().position(|b| b.kind == kind)?;
            Some((*offsets.get(i)?, self.buffers.get(i)?.data.len()))
        };
        let server_loc =
            locate(PAC_SERVER_CHECKSUM).ok_or(PacError::MissingBuffer(PAC_SERVER_CHECKSUM))?;
        let kdc_loc =
            locate(PAC_PRIVSVR_CHECKSUM).ok_or(PacError::MissingBuffer(PAC_PRIVSVR_CHECKSUM))?;
        let server_sig = self
            .signature(PAC_SERVER_CHECKSUM)?
            .ok_or(PacError::MissingBuffer(PAC_SERVER_CHECKSUM))?;
        let kdc_sig = self
            .signature(PAC_PRIVSVR_CHECKSUM)?
            .ok_or(PacError::MissingBuffer(PAC_PRIVSVR_CHECKSUM))?;

        let mut copy = bytes.to_vec();
        zero_signature(&mut copy, server_loc.0, server_loc.1);
        zero_signature(&mut copy, kdc_loc.0, kdc_loc.1);

        if let Some(server) = server {
            check(server, PAC_SERVER_CHECKSUM, &server_sig, &copy)?;
        }
        if let Some(kdc) = kdc {
            // The KDC signature covers the server signature buffer after
            // its SignatureType.
            let server_body = self
                .buffer(PAC_SERVER_CHECKSUM)
                .and_then(|b| b.get(4..))
                .ok_or(PacError::MissingBuffer(PAC_SERVER_CHECKSUM))?;
            check(kdc, PAC_PRIVSVR_CHECKSUM, &kdc_sig, server_body)?;

            let full = self.signature(PAC_FULL_CHECKSUM)?;
            if ticket_input.is_some() {
                if !self.has_ticket_signature() {
                    return Err(PacError::MissingBuffer(PAC_TICKET_CHECKSUM));
                }
                if full.is_none() {
                    return Err(PacError::MissingBuffer(PAC_FULL_CHECKSUM));
                }
            }
            if let Some(full_sig) = full {
                if full_sig.signature_type != kdc_sig.signature_type {
                    return Err(PacError::BadSignature {
                        buffer: PAC_FULL_CHECKSUM,
                        reason: "type differs from the KDC signature".into(),
                    });
                }
                let full_loc =
                    locate(PAC_FULL_CHECKSUM).ok_or(PacError::MissingBuffer(PAC_FULL_CHECKSUM))?;
                zero_signature(&mut copy, full_loc.0, full_loc.1);
                check(kdc, PAC_FULL_CHECKSUM, &full_sig, &copy)?;
            }

            match (self.signature(PAC_TICKET_CHECKSUM)?, ticket_input) {
                (Some(ticket_sig), Some(ticket)) => {
                    if ticket_sig.signature_type != kdc_sig.signature_type {
                        return Err(PacError::BadSignature {
                            buffer: PAC_TICKET_CHECKSUM,
                            reason: "type differs from the KDC signature".into(),
                        });
                    }
                    check(kdc, PAC_TICKET_CHECKSUM, &ticket_sig, ticket)?;
                }
                (Some(_), None) => {
                    return Err(PacError::InvalidArgument(
                        "PAC has a ticket signature: pass ticket_input to verify it",
                    ));
                }
                (None, Some(_)) => return Err(PacError::MissingBuffer(PAC_TICKET_CHECKSUM)),
                (None, None) => {}
            }
        }
        Ok(())
    }

    /// Copies this PAC (typically from a TGT) for a new ticket: keeps every
    /// buffer except the signature buffers (6, 7, 16, 19) and, for a
    /// [`TicketKind::Service`] ticket, PAC_ATTRIBUTES_INFO (17) and
    /// PAC_REQUESTOR (18). The result is unsigned: call [`Pac::sign`] with
    /// the new ticket's server key and the krbtgt key (and `ticket_input`
    /// for a service ticket). Verify the source PAC first.
    pub fn reissue(&self, kind: TicketKind) -> Pac {
        let buffers: Vec<PacBuffer> = self
            .buffers
            .iter()
            .filter(|b| {
                !SIGNATURE_BUFFER_TYPES.contains(&b.kind)
                    && !(kind == TicketKind::Service
                        && (b.kind == PAC_ATTRIBUTES_INFO || b.kind == PAC_REQUESTOR))
            })
            .cloned()
            .collect();
        Pac {
            buffers,
            received: None,
        }
    }
}
