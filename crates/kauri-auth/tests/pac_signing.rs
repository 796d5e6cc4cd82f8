//! Signing and verification with a real HMAC-MD5 (RFC 4757) signer.

mod pac_common;
use kauri_auth::krb::pac::*;
use pac_common::*;

fn kinds(pac: &Pac) -> Vec<u32> {
    pac.buffers().iter().map(|b| b.kind).collect()
}

fn signed_service_pac() -> (Pac, Vec<u8>) {
    let mut pac = Pac::from_contents(&sample_contents(20))
        .unwrap()
        .reissue(TicketKind::Service);
    pac.sign(&server_signer(), &kdc_signer(), Some(&fake_ticket_input()))
        .unwrap();
    let bytes = pac.encode();
    (pac, bytes)
}

/// Offset and length of buffer `kind` inside an encoded PAC.
fn locate(bytes: &[u8], kind: u32) -> (usize, usize) {
    let n = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    for i in 0..n {
        let e = &bytes[8 + 16 * i..24 + 16 * i];
        if u32::from_le_bytes(e[0..4].try_into().unwrap()) == kind {
            let size = u32::from_le_bytes(e[4..8].try_into().unwrap()) as usize;
            let off = u64::from_le_bytes(e[8..16].try_into().unwrap()) as usize;
            return (off, size);
        }
    }
    panic!("no buffer {kind}");
}

fn zeroed(bytes: &[u8], kinds: &[u32]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    for &k in kinds {
        let (off, size) = locate(bytes, k);
        v[off + 4..off + size].fill(0);
    }
    v
}

fn sig_of(bytes: &[u8], kind: u32) -> Vec<u8> {
    let (off, size) = locate(bytes, kind);
    bytes[off + 4..off + size].to_vec()
}

#[test]
fn tgt_pac_has_only_server_and_kdc_signatures() {
    let mut pac = Pac::from_contents(&sample_contents(3)).unwrap();
    // A krbtgt ticket: server and KDC signatures both made with krbtgt.
    let krbtgt = kdc_signer();
    pac.sign(&krbtgt, &krbtgt, None).unwrap();
    assert_eq!(kinds(&pac), vec![1, 10, 12, 17, 18, 6, 7]);
    let bytes = pac.encode();
    let parsed = Pac::parse(&bytes).unwrap();
    parsed.verify(Some(&krbtgt), Some(&krbtgt), None).unwrap();
    assert!(!parsed.has_ticket_signature());
    // Asking for a ticket signature on a TGT PAC fails.
    assert_eq!(
        parsed
            .verify(Some(&krbtgt), Some(&krbtgt), Some(&fake_ticket_input()))
            .unwrap_err(),
        PacError::MissingBuffer(PAC_TICKET_CHECKSUM)
    );
}

#[test]
fn signatures_follow_the_documented_rules() {
    let (_, bytes) = signed_service_pac();
    let s = server_signer();
    let k = kdc_signer();
    let ticket = fake_ticket_input();
    // 16: over the ticket input, krbtgt key.
    assert_eq!(sig_of(&bytes, 16), k.sign(&ticket).unwrap());
    // 19: over the PAC with 6, 7, 19 zeroed (16 filled), krbtgt key.
    assert_eq!(
        sig_of(&bytes, 19),
        k.sign(&zeroed(&bytes, &[6, 7, 19])).unwrap()
    );
    // 6: over the PAC with 6, 7 zeroed (16, 19 filled), server key.
    assert_eq!(sig_of(&bytes, 6), s.sign(&zeroed(&bytes, &[6, 7])).unwrap());
    // 7: over the server signature, krbtgt key.
    assert_eq!(sig_of(&bytes, 7), k.sign(&sig_of(&bytes, 6)).unwrap());
    // The SignatureType fields.
    for kind in [6, 7, 16, 19] {
        let (off, _) = locate(&bytes, kind);
        assert_eq!(&bytes[off..off + 4], &KERB_CHECKSUM_HMAC_MD5.to_le_bytes());
    }
}

#[test]
fn service_ticket_pac_verifies_and_every_flipped_byte_fails() {
    let (pac, bytes) = signed_service_pac();
    assert_eq!(kinds(&pac), vec![1, 10, 12, 6, 7, 16, 19]);
    let ticket = fake_ticket_input();
    let s = server_signer();
    let k = kdc_signer();
    let parsed = Pac::parse(&bytes).unwrap();
    parsed.verify(Some(&s), Some(&k), Some(&ticket)).unwrap();
    parsed.verify(Some(&s), None, None).unwrap(); // what a GSS acceptor does
    pac.verify(Some(&s), Some(&k), Some(&ticket)).unwrap(); // unparsed PAC too

    let (kdc_off, kdc_len) = locate(&bytes, PAC_PRIVSVR_CHECKSUM);
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x80;
        let Ok(p) = Pac::parse(&bad) else { continue };
        assert!(
            p.verify(Some(&s), Some(&k), Some(&ticket)).is_err(),
            "full verification missed a flip at byte {i}"
        );
        // The server signature alone covers everything but the KDC
        // signature's own bytes.
        if !(kdc_off + 4..kdc_off + kdc_len).contains(&i) {
            assert!(
                p.verify(Some(&s), None, None).is_err(),
                "server verification missed a flip at byte {i}"
            );
        }
    }
}

#[test]
fn ticket_signature_checks_the_ticket_input() {
    let (_, bytes) = signed_service_pac();
    let parsed = Pac::parse(&bytes).unwrap();
    let mut other = fake_ticket_input();
    other[10] ^= 1;
    let err = parsed
        .verify(Some(&server_signer()), Some(&kdc_signer()), Some(&other))
        .unwrap_err();
    assert!(
        matches!(err, PacError::BadSignature { buffer: 16, .. }),
        "{err}"
    );
    // A PAC with a ticket signature needs the ticket input when the KDC
    // key is given.
    assert!(matches!(
        parsed.verify(None, Some(&kdc_signer()), None),
        Err(PacError::InvalidArgument(_))
    ));
    // The ticket signature is krbtgt-keyed.
    assert!(matches!(
        parsed.verify(Some(&server_signer()), None, Some(&fake_ticket_input())),
        Err(PacError::InvalidArgument(_))
    ));
    assert!(matches!(
        parsed.verify(None, None, None),
        Err(PacError::InvalidArgument(_))
    ));
}

#[test]
fn mixed_checksum_sizes() {
    let server = Truncated12Signer(server_signer());
    let kdc = kdc_signer();
    let mut pac = Pac::new_unsigned(
        &sample_contents(2),
        server.checksum_type(),
        kdc.checksum_type(),
        true,
    )
    .unwrap();
    let placeholder_len = pac.encode().len();
    pac.sign(&server, &kdc, Some(&fake_ticket_input())).unwrap();
    let bytes = pac.encode();
    assert_eq!(
        bytes.len(),
        placeholder_len,
        "placeholders have the final size"
    );
    assert_eq!(pac.buffer(PAC_SERVER_CHECKSUM).unwrap().len(), 16);
    assert_eq!(pac.buffer(PAC_PRIVSVR_CHECKSUM).unwrap().len(), 20);
    Pac::parse(&bytes)
        .unwrap()
        .verify(Some(&server), Some(&kdc), Some(&fake_ticket_input()))
        .unwrap();
    // A verifier expecting HMAC-MD5 for the server signature refuses AES.
    assert!(Pac::parse(&bytes)
        .unwrap()
        .verify(Some(&server_signer()), None, None)
        .is_err());
}

#[test]
fn reissue_tgt_pac_into_service_ticket() {
    let krbtgt = kdc_signer();
    let mut tgt = Pac::from_contents(&sample_contents(7)).unwrap();
    tgt.sign(&krbtgt, &krbtgt, None).unwrap();
    let tgt = Pac::parse(&tgt.encode()).unwrap();
    tgt.verify(Some(&krbtgt), Some(&krbtgt), None).unwrap();

    // TGS-REQ for a service: drop signatures, attributes and requestor.
    let mut st = tgt.reissue(TicketKind::Service);
    assert_eq!(kinds(&st), vec![1, 10, 12]);
    st.sign(&server_signer(), &krbtgt, Some(&fake_ticket_input()))
        .unwrap();
    assert_eq!(kinds(&st), vec![1, 10, 12, 6, 7, 16, 19]);
    let st = Pac::parse(&st.encode()).unwrap();
    st.verify(
        Some(&server_signer()),
        Some(&krbtgt),
        Some(&fake_ticket_input()),
    )
    .unwrap();
    assert_eq!(st.logon_info().unwrap(), tgt.logon_info().unwrap());
    assert_eq!(st.buffer(PAC_LOGON_INFO), tgt.buffer(PAC_LOGON_INFO));

    // Renewal: keep everything but the signatures.
    let mut renewed = tgt.reissue(TicketKind::Tgt);
    assert_eq!(kinds(&renewed), vec![1, 10, 12, 17, 18]);
    renewed.sign(&krbtgt, &krbtgt, None).unwrap();
    assert_eq!(renewed.encode(), tgt.encode());
}

#[test]
fn resigning_replaces_stale_signature_buffers() {
    let (mut pac, _) = signed_service_pac();
    // Re-sign as a TGT-style PAC: 16 and 19 must disappear, sizes adapt.
    let aes = Truncated12Signer(kdc_signer());
    pac.sign(&aes, &aes, None).unwrap();
    assert_eq!(kinds(&pac), vec![1, 10, 12, 6, 7]);
    assert_eq!(pac.buffer(PAC_SERVER_CHECKSUM).unwrap().len(), 16);
    Pac::parse(&pac.encode())
        .unwrap()
        .verify(Some(&aes), Some(&aes), None)
        .unwrap();
}

#[test]
fn verification_requires_both_server_and_kdc_buffers() {
    let (mut pac, _) = signed_service_pac();
    pac.remove_buffer(PAC_PRIVSVR_CHECKSUM);
    assert_eq!(
        pac.verify(Some(&server_signer()), None, None).unwrap_err(),
        PacError::MissingBuffer(PAC_PRIVSVR_CHECKSUM)
    );
}

#[test]
fn full_checksum_type_must_match_kdc_type() {
    let (mut pac, _) = signed_service_pac();
    let aes = PacSignatureData {
        signature_type: HMAC_SHA1_96_AES256,
        signature: vec![0; 12],
        rodc_identifier: None,
    };
    pac.set_buffer(PAC_FULL_CHECKSUM, aes.encode().unwrap());
    let err = pac
        .verify(None, Some(&kdc_signer()), Some(&fake_ticket_input()))
        .unwrap_err();
    assert!(
        matches!(err, PacError::BadSignature { buffer: 19, .. }),
        "{err}"
    );
}

struct BadLengthSigner;
impl PacSigner for BadLengthSigner {
    fn checksum_type(&self) -> i32 {
        KERB_CHECKSUM_HMAC_MD5
    }
    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, PacError> {
        Ok(vec![0; 3])
    }
    fn verify(&self, _: i32, _: &[u8], _: &[u8]) -> Result<(), PacError> {
        Err(PacError::ChecksumMismatch)
    }
}

#[test]
fn signer_errors_are_reported() {
    let mut pac = Pac::from_contents(&sample_contents(1)).unwrap();
    assert!(matches!(
        pac.sign(&BadLengthSigner, &kdc_signer(), None),
        Err(PacError::Signer(_))
    ));
    struct Unknown;
    impl PacSigner for Unknown {
        fn checksum_type(&self) -> i32 {
            1234
        }
        fn sign(&self, _: &[u8]) -> Result<Vec<u8>, PacError> {
            Ok(vec![])
        }
        fn verify(&self, _: i32, _: &[u8], _: &[u8]) -> Result<(), PacError> {
            Ok(())
        }
    }
    assert_eq!(
        pac.sign(&Unknown, &kdc_signer(), None).unwrap_err(),
        PacError::UnsupportedChecksum(1234)
    );
}

#[test]
fn service_ticket_verification_requires_the_full_pac_signature() {
    let (mut pac, _) = signed_service_pac();
    pac.remove_buffer(PAC_FULL_CHECKSUM);
    assert_eq!(
        pac.verify(None, Some(&kdc_signer()), Some(&fake_ticket_input()))
            .unwrap_err(),
        PacError::MissingBuffer(PAC_FULL_CHECKSUM)
    );
}

/// Minimal DER TLV reader for the check below.
fn tlv(b: &[u8]) -> (u8, &[u8], &[u8]) {
    let tag = b[0];
    let len = b[1] as usize;
    assert!(len < 0x80);
    (tag, &b[2..2 + len], &b[2 + len..])
}

#[test]
fn dummy_pac_element_is_well_formed_der() {
    let (t, body, rest) = tlv(&DUMMY_PAC_AD_ELEMENT);
    assert_eq!((t, rest.len()), (0x30, 0));
    let (t, ad_type, body) = tlv(body);
    assert_eq!((t, ad_type), (0xa0, &[0x02, 0x01, 0x01][..]));
    let (t, ad_data, rest) = tlv(body);
    assert_eq!((t, rest.len()), (0xa1, 0));
    let (t, octets, _) = tlv(ad_data);
    assert_eq!(t, 0x04);
    let (t, seq_of, _) = tlv(octets);
    assert_eq!(t, 0x30);
    let (t, elem, _) = tlv(seq_of);
    assert_eq!(t, 0x30);
    let (t, ad_type, rest) = tlv(elem);
    assert_eq!((t, ad_type), (0xa0, &[0x02, 0x02, 0x00, 0x80][..]));
    let (t, ad_data, _) = tlv(rest);
    assert_eq!((t, ad_data), (0xa1, &[0x04, 0x01, 0x00][..]));
}
