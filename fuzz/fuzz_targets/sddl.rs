//! SDDL as administrators type it (`kauri dsacl set --sddl`) and as the schema's
//! `defaultSecurityDescriptor` values carry it: what parses prints, the printed text
//! parses to the same descriptor and prints the same again, and the descriptor's binary
//! form reads back to it. Single ACEs and SIDs go through their own parsers too.

#![no_main]

use kauri_domain::security::{sddl, SecurityDescriptor};
use kauri_domain::sid::Sid;
use libfuzzer_sys::fuzz_target;

/// The domain SDDL aliases (DA, DU, …) resolve against.
fn domain() -> Sid {
    Sid {
        authority: 5,
        subs: vec![21, 2457507606, 2709100691, 398136650],
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dom = domain();
    match SecurityDescriptor::from_sddl(text, &dom) {
        Ok(sd) => {
            let printed = sd
                .to_sddl(&dom)
                .unwrap_or_else(|e| panic!("a parsed descriptor does not print: {e}"));
            let back = SecurityDescriptor::from_sddl(&printed, &dom)
                .unwrap_or_else(|e| panic!("printed SDDL does not parse: {e}: {printed}"));
            assert_eq!(back, sd, "{printed}");
            assert_eq!(back.to_sddl(&dom).as_deref(), Ok(printed.as_str()));
            // Too many ACEs for an ACL's 16-bit size is the one thing that cannot write.
            if let Ok(bytes) = sd.to_bytes() {
                assert_eq!(SecurityDescriptor::from_bytes(&bytes).as_ref(), Ok(&sd));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Ok(ace) = sddl::parse_ace(text, &dom) {
        let printed = sddl::format_ace(&ace, &dom).expect("a parsed ACE prints");
        assert_eq!(
            sddl::parse_ace(&printed, &dom).as_ref(),
            Ok(&ace),
            "{printed}"
        );
    }
    if let Ok(sid) = sddl::parse_sid(text, &dom) {
        let printed = sddl::format_sid(&sid, &dom);
        assert_eq!(
            sddl::parse_sid(&printed, &dom).as_ref(),
            Ok(&sid),
            "{printed}"
        );
    }
    if let Ok(mask) = sddl::parse_rights(text) {
        assert_eq!(sddl::parse_rights(&sddl::format_rights(mask)), Ok(mask));
    }
});
