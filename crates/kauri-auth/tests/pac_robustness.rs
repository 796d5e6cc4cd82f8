//! Decoders must reject malformed input without panicking. A deterministic
//! mutation loop over real and generated PACs, plus hand-made attacks on
//! the container.

mod pac_common;
use kauri_auth::krb::pac::*;
use pac_common::*;

/// Decodes every buffer with its decoder and runs verification; only
/// panics matter here.
fn exercise(bytes: &[u8]) {
    let Ok(pac) = Pac::parse(bytes) else { return };
    let _ = pac.logon_info();
    let _ = pac.client_info();
    let _ = pac.upn_dns_info();
    let _ = pac.attributes_info();
    let _ = pac.requestor();
    for k in SIGNATURE_BUFFER_TYPES {
        let _ = pac.signature(k);
    }
    let _ = pac.verify(Some(&server_signer()), Some(&kdc_signer()), Some(b"x"));
    let _ = pac.verify(Some(&server_signer()), None, None);
    let _ = pac.encode();
    let _ = pac.reissue(TicketKind::Service);
    // Also feed every buffer to every decoder.
    for b in pac.buffers() {
        decode_all(&b.data);
    }
}

fn decode_all(d: &[u8]) {
    let _ = KerbValidationInfo::decode(d);
    let _ = ClientInfo::decode(d);
    let _ = UpnDnsInfo::decode(d);
    let _ = PacAttributes::decode(d);
    let _ = PacRequestor::decode(d);
    let _ = PacSignatureData::decode(d);
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let mut v = vec![
        data("samba_saved_pac.bin"),
        data("win2008_s4u_pac_regular.bin"),
        data("win2008_s4u_pac_ent_xrealm.bin"),
    ];
    let mut pac = Pac::from_contents(&sample_contents(30)).unwrap();
    pac.sign(&server_signer(), &kdc_signer(), Some(&fake_ticket_input()))
        .unwrap();
    v.push(pac.encode());
    v
}

#[test]
fn truncations_never_panic() {
    for sample in corpus() {
        for n in 0..sample.len() {
            exercise(&sample[..n]);
        }
        let pac = Pac::parse(&sample).unwrap();
        for b in pac.buffers() {
            for n in 0..b.data.len() {
                decode_all(&b.data[..n]);
            }
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for sample in corpus() {
        let pac = Pac::parse(&sample).unwrap();
        let logon = pac.buffer(PAC_LOGON_INFO).unwrap().to_vec();
        for _ in 0..3000 {
            let mut m = sample.clone();
            let mut l = logon.clone();
            let flips = 1 + rng.next() % 4;
            for _ in 0..flips {
                let i = (rng.next() as usize) % m.len();
                m[i] = rng.next() as u8;
                let j = (rng.next() as usize) % l.len();
                // Bias toward interesting values in count/length fields.
                l[j] = match rng.next() % 4 {
                    0 => 0xff,
                    1 => 0,
                    _ => rng.next() as u8,
                };
            }
            exercise(&m);
            decode_all(&l);
        }
    }
}

fn header(count: u32, entries: &[(u32, u32, u64)]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&count.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    for (t, s, o) in entries {
        v.extend_from_slice(&t.to_le_bytes());
        v.extend_from_slice(&s.to_le_bytes());
        v.extend_from_slice(&o.to_le_bytes());
    }
    v
}

#[test]
fn container_attacks_are_rejected() {
    // Absurd buffer count.
    assert!(Pac::parse(&header(u32::MAX, &[])).is_err());
    assert!(Pac::parse(&header(1000, &[])).is_err());
    assert!(Pac::parse(&header(0, &[])).is_err());
    // Version not 0.
    let mut v = header(1, &[(1, 0, 24)]);
    v[4] = 1;
    assert!(Pac::parse(&v).is_err());
    // Offset inside the header, unaligned, past the end, overflowing.
    let mut v = header(1, &[(1, 8, 8)]);
    v.resize(32, 0);
    assert!(Pac::parse(&v).is_err());
    let mut v = header(1, &[(1, 4, 28)]);
    v.resize(40, 0);
    assert!(Pac::parse(&v).is_err());
    let mut v = header(1, &[(1, 16, 24)]);
    v.resize(32, 0);
    assert!(Pac::parse(&v).is_err());
    let mut v = header(1, &[(1, u32::MAX, u64::MAX - 7)]);
    v.resize(32, 0);
    assert!(Pac::parse(&v).is_err());
    // Overlapping buffers.
    let mut v = header(2, &[(1, 16, 40), (10, 8, 48)]);
    v.resize(64, 0);
    assert!(Pac::parse(&v).is_err());
    // Duplicate type.
    let mut v = header(2, &[(1, 8, 40), (1, 8, 48)]);
    v.resize(56, 0);
    assert_eq!(Pac::parse(&v).unwrap_err(), PacError::DuplicateBuffer(1));
    // The same two buffers with distinct types are fine.
    let mut v = header(2, &[(1, 8, 40), (10, 8, 48)]);
    v.resize(56, 0);
    assert!(Pac::parse(&v).is_ok());
}

#[test]
fn huge_counts_in_logon_info_are_rejected_cheaply() {
    let li = sample_logon_info(2, vec![]);
    let enc = li.encode().unwrap();
    // GroupCount is at stream offset 4 (referent) + 48 + 48 + 4 + 8 = 112,
    // i.e. buffer offset 16 + 108.
    let at = 16 + 4 + 48 + 48 + 4 + 8;
    assert_eq!(u32::from_le_bytes(enc[at..at + 4].try_into().unwrap()), 2);
    let mut bad = enc.clone();
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(KerbValidationInfo::decode(&bad).is_err());
    // Also a consistent but huge conformance: count and max_count agree.
    let mut bad = enc.clone();
    bad[at..at + 4].copy_from_slice(&0x1000_0000u32.to_le_bytes());
    assert!(KerbValidationInfo::decode(&bad).is_err());
    // Object length larger than the data.
    let mut bad = enc.clone();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(KerbValidationInfo::decode(&bad).is_err());
    // Big-endian NDR is refused.
    let mut bad = enc;
    bad[1] = 0x00;
    assert!(matches!(
        KerbValidationInfo::decode(&bad),
        Err(PacError::Unsupported(_))
    ));
}
