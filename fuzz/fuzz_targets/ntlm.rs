//! NTLM (MS-NLMP) messages from both sides of an exchange. The first input byte picks
//! what the rest is: a client's NEGOTIATE and AUTHENTICATE to a server, verified against
//! an account's password (0); an AUTHENTICATE and target information on their own (1); a
//! server's CHALLENGE to Kauri's own client (2); protected messages after the bind (3).

#![no_main]

use kauri_auth::crypto::nt_hash;
use kauri_auth::ntlm::{flags, Authenticate, AvPairs, NtlmClient, NtlmServer, NtlmSession};
use kauri_auth::SecurityLayer;
use kauri_fuzz::{names, parts, settings, CHALLENGE, PASSWORD};
use libfuzzer_sys::fuzz_target;

fn av_pairs(b: &[u8]) {
    if let Ok(p) = AvPairs::parse(b) {
        assert_eq!(AvPairs::parse(&p.encode()).as_ref(), Ok(&p));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode & 3 {
        0 => {
            let p = parts(rest, 2);
            let mut server =
                NtlmServer::with_challenge(names(), settings(mode & 4 != 0), CHALLENGE);
            if server.challenge(p[0]).is_err() {
                return;
            }
            let Ok(auth) = server.parse_authenticate(p.get(1).copied().unwrap_or_default()) else {
                return;
            };
            let _ = (
                auth.is_anonymous(),
                auth.client_av_pairs(),
                format!("{auth:?}"),
            );
            if let Ok(mut v) = server.verify(&auth, &nt_hash(PASSWORD)) {
                let _ = v.session.unwrap(p.get(2).copied().unwrap_or_default());
            }
        }
        1 => {
            if let Ok(a) = Authenticate::parse(rest) {
                let _ = (a.is_anonymous(), a.client_av_pairs());
            }
            av_pairs(rest);
        }
        2 => {
            let mut client = NtlmClient::new("alice", "SAMDOM", PASSWORD, mode & 4 != 0);
            if mode & 8 != 0 {
                client = client.target("ldap/dc1.samdom.example.com");
            }
            let _ = client.negotiate();
            if let Ok((auth, _)) = client.authenticate(rest) {
                // What Kauri's client sends, Kauri's server reads.
                Authenticate::parse(&auth).expect("the client's AUTHENTICATE parses");
            }
        }
        _ => {
            let seal = if mode & 4 != 0 { flags::SEAL } else { 0 };
            let exch = if mode & 8 != 0 { flags::KEY_EXCH } else { 0 };
            let f = flags::SIGN | flags::EXTENDED_SESSIONSECURITY | flags::N128 | seal | exch;
            let mut session = NtlmSession::new(&[7; 16], f);
            for token in parts(rest, 4) {
                assert!(session.unwrap(token).is_err(), "a forged token passed");
            }
        }
    }
});
