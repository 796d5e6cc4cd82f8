//! `nTSecurityDescriptor` values as a client writes them or a database (Samba's, a backup)
//! holds them: the self-relative binary form. What parses writes back (in both layouts,
//! and cut to any SD flags) to bytes that parse to the same descriptor.
//!
//! Printed as SDDL and parsed again, it gives the same descriptor up to what SDDL does
//! not carry, which is the property checked: the control bits other than the ACLs'
//! present, protected (P), auto-inherit-requested (AR) and auto-inherited (AI) bits and
//! self-relative (SDDL has no letters for the defaulted, trusted, server-security and
//! resource-manager bits; the parser marks every descriptor self-relative), the flags of
//! an ACL SDDL prints no section for, the PRESENT bit of an ACL that is there (printed,
//! it reads back present), and each ACL's revision byte (the parser picks 2, or 4 once an
//! object ACE is there, as Windows does). Descriptors SDDL cannot express at all —
//! unknown ACE types, ACE flag 0x20, application data after an ACE's SID — must be
//! refused by the printer, never printed wrong.

#![no_main]

use kauri_domain::security::descriptor::{control, sd_flags, Layout};
use kauri_domain::security::{Acl, SecurityDescriptor};
use kauri_domain::sid::Sid;
use libfuzzer_sys::fuzz_target;

/// The domain SDDL aliases (DA, DU, …) resolve against.
fn domain() -> Sid {
    Sid {
        authority: 5,
        subs: vec![21, 2457507606, 2709100691, 398136650],
    }
}

/// What an SDDL round trip keeps of `sd` (see the module documentation).
fn sddl_view(sd: &SecurityDescriptor) -> SecurityDescriptor {
    let mut out = sd.clone();
    let mut c = control::SE_SELF_RELATIVE;
    let acl_bits = |present: u16, p: u16, ar: u16, ai: u16, acl: &Option<Acl>| {
        if acl.is_some() || sd.control & present != 0 {
            present | (sd.control & (p | ar | ai))
        } else {
            0
        }
    };
    c |= acl_bits(
        control::SE_DACL_PRESENT,
        control::SE_DACL_PROTECTED,
        control::SE_DACL_AUTO_INHERIT_REQ,
        control::SE_DACL_AUTO_INHERITED,
        &sd.dacl,
    );
    c |= acl_bits(
        control::SE_SACL_PRESENT,
        control::SE_SACL_PROTECTED,
        control::SE_SACL_AUTO_INHERIT_REQ,
        control::SE_SACL_AUTO_INHERITED,
        &sd.sacl,
    );
    out.control = c;
    for acl in [&mut out.dacl, &mut out.sacl].into_iter().flatten() {
        acl.revision = Acl::revision_for(&acl.aces);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let sd = match SecurityDescriptor::from_bytes(data) {
        Ok(sd) => sd,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    // Binary: whatever parsed writes, and reads back the same, in either layout.
    for layout in [Layout::Windows, Layout::OwnerFirst] {
        let bytes = sd.to_bytes_in(layout).expect("a parsed descriptor writes");
        let back = SecurityDescriptor::from_bytes(&bytes).expect("written bytes parse");
        assert_eq!(back, sd, "{layout:?}");
        assert_eq!(back.to_bytes_in(layout).as_ref(), Ok(&bytes));
    }
    for flags in [
        sd_flags::OWNER | sd_flags::GROUP | sd_flags::DACL,
        sd_flags::DACL,
        0,
    ] {
        let part = sd.only(flags);
        let bytes = part.to_bytes().expect("a part writes");
        assert_eq!(SecurityDescriptor::from_bytes(&bytes).as_ref(), Ok(&part));
    }

    // SDDL: printed, it parses to the same descriptor as far as SDDL carries one, and
    // prints the same again.
    let dom = domain();
    let Ok(text) = sd.to_sddl(&dom) else {
        return;
    };
    let parsed = SecurityDescriptor::from_sddl(&text, &dom)
        .unwrap_or_else(|e| panic!("printed SDDL does not parse: {e}: {text}"));
    let expect = sddl_view(&sd);
    assert_eq!(parsed, expect, "{text}");
    assert_eq!(
        parsed.to_bytes().expect("parsed SDDL writes"),
        expect.to_bytes().expect("the SDDL view writes"),
        "{text}"
    );
    assert_eq!(parsed.to_sddl(&dom).as_deref(), Ok(text.as_str()));
});
