//! SPNEGO (RFC 4178) tokens carrying NTLMSSP, as LDAP's GSS-SPNEGO SASL bind brings them:
//! up to three client tokens into the accepting side, then the account check (even first
//! byte); or a server's tokens into Kauri's own client (odd first byte).

#![no_main]

use kauri_auth::spnego::{SpnegoClient, SpnegoServer, Step};
use kauri_fuzz::{names, parts, settings, PASSWORD};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let Ok(mut server) = SpnegoServer::new(names(), settings(mode & 2 != 0)) else {
            return;
        };
        for token in parts(rest, 3) {
            match server.step(token) {
                Ok(Step::Continue(_)) => continue,
                Ok(Step::Authenticate(auth)) => {
                    let hash = kauri_auth::crypto::nt_hash(PASSWORD);
                    let _ = server.accept(&auth, (mode & 4 != 0).then_some(&hash));
                    return;
                }
                Err(e) => {
                    let _ = e.to_string();
                    return;
                }
            }
        }
    } else {
        let mut client = SpnegoClient::new("alice", "SAMDOM", PASSWORD, mode & 2 != 0);
        let _ = client.initial();
        for token in parts(rest, 2) {
            match client.step(token) {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return,
            }
        }
    }
});
