//! Arbitrary bytes into every decoder a client reaches before it has authenticated: the
//! NTLM messages, target information, SPNEGO tokens, whole exchanges and protected
//! messages. Nothing may panic; malformed input is an error. `KAURI_FUZZ_CASES` sets the
//! number of inputs per property (CI runs the default; a release run takes a million).

use kauri_auth::layer::SecurityLayer;
use kauri_auth::ntlm::{flags, Authenticate, AvPairs, NtlmSession, NtlmSettings, ServerNames};
use kauri_auth::spnego::{SpnegoServer, Step, OID_NTLMSSP, OID_SPNEGO};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("KAURI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn names() -> ServerNames {
    ServerNames {
        netbios_domain: "SAMDOM".into(),
        netbios_computer: "DC1".into(),
        dns_domain: "samdom.example.com".into(),
        dns_computer: "dc1.samdom.example.com".into(),
        dns_tree: "samdom.example.com".into(),
    }
}

/// Bytes that often start like the real thing, so the fuzzing gets past the first checks.
fn ntlm_like(kind: u8) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..200).prop_map(move |tail| {
        let mut m = b"NTLMSSP\0".to_vec();
        m.extend_from_slice(&[kind, 0, 0, 0]);
        m.extend(tail);
        m
    })
}

fn der_like() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        prop::collection::vec(any::<u8>(), 0..200).prop_map(|tail| {
            let mut m = vec![0x60, tail.len() as u8, 0x06, 0x06];
            m.extend_from_slice(OID_SPNEGO);
            m.extend(tail);
            m
        }),
        prop::collection::vec(any::<u8>(), 0..200).prop_map(|tail| {
            let mut m = vec![0xa1, tail.len() as u8, 0x30, tail.len() as u8];
            m.extend(tail);
            m
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn ntlm_messages_never_panic(auth in ntlm_like(3), raw in prop::collection::vec(any::<u8>(), 0..120)) {
        let _ = Authenticate::parse(&auth);
        let _ = Authenticate::parse(&raw);
        let _ = AvPairs::parse(&raw);
        if let Ok(a) = Authenticate::parse(&auth) {
            let _ = a.client_av_pairs();
        }
    }

    #[test]
    fn exchanges_never_panic(first in prop_oneof![ntlm_like(1), der_like()], second in prop_oneof![ntlm_like(3), der_like()]) {
        let mut server = SpnegoServer::new(names(), NtlmSettings::default()).unwrap();
        if let Ok(Step::Continue(_)) = server.step(&first) {
            if let Ok(Step::Authenticate(auth)) = server.step(&second) {
                let _ = server.accept(&auth, Some(&[7u8; 16]));
            }
        }
    }

    #[test]
    fn protected_messages_never_panic(token in prop::collection::vec(any::<u8>(), 0..100), seal in any::<bool>()) {
        let f = flags::SIGN | flags::EXTENDED_SESSIONSECURITY | flags::N128 | flags::KEY_EXCH
            | if seal { flags::SEAL } else { 0 };
        let mut s = NtlmSession::new(&[3; 16], f);
        prop_assert!(s.unwrap(&token).is_err());
    }
}

/// A token that names the mechanism but carries garbage gets an error, not a panic, and
/// the exchange ends there.
#[test]
fn a_spnego_init_with_a_broken_ntlm_token_is_refused() {
    let mut token = vec![0x06, 0x06];
    token.extend_from_slice(OID_SPNEGO);
    let mut list = vec![0x30, 12, 0x06, 10];
    list.extend_from_slice(OID_NTLMSSP);
    let mut init = vec![0xa0, list.len() as u8];
    init.extend(list);
    init.extend_from_slice(&[0xa2, 4, 0x04, 2, 0xde, 0xad]);
    let mut seq = vec![0x30, init.len() as u8];
    seq.extend(init);
    let mut neg = vec![0xa0, seq.len() as u8];
    neg.extend(seq);
    token.extend(neg);
    let mut outer = vec![0x60, token.len() as u8];
    outer.extend(token);
    let mut server = SpnegoServer::new(names(), NtlmSettings::default()).unwrap();
    assert!(server.step(&outer).is_err());
}
