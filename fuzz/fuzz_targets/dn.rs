//! Distinguished names and RDNs in their RFC 4514 string form, as clients send them. A
//! parsed name prints to a string that parses to the same name (same values, same
//! normalized form) and prints the same again; its normalized form is a name whose
//! normalized form is itself.

#![no_main]

use kauri_db::dn::{Dn, Rdn};
use libfuzzer_sys::fuzz_target;

fn same_rdn(a: &Rdn, b: &Rdn) {
    assert_eq!(a.avas(), b.avas());
    assert_eq!(a.norm(), b.norm());
    assert_eq!(a, b);
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = Dn::parse(s) {
        let printed = d.to_string();
        let back = Dn::parse(&printed).expect("a printed DN parses");
        assert_eq!(back.len(), d.len(), "{printed}");
        for (x, y) in back.rdns().iter().zip(d.rdns()) {
            same_rdn(x, y);
        }
        assert_eq!(back.norm(), d.norm());
        assert_eq!(back.to_string(), printed);
        let norm = Dn::parse(d.norm()).expect("a normalized DN parses");
        assert_eq!(norm.norm(), d.norm(), "normalizing is not stable");
        // The hierarchy helpers agree with each other.
        if let Some(parent) = d.parent() {
            assert!(parent.is_parent_of(&d));
            assert!(d.is_descendant_of(&parent));
            if let Some(rdn) = d.rdn() {
                assert_eq!(parent.child(rdn.clone()), d);
            }
            assert_eq!(d.rebase(&parent, &parent).as_ref(), Some(&d));
        }
    }
    if let Ok(r) = Rdn::parse(s) {
        let printed = r.to_string();
        let back = Rdn::parse(&printed).expect("a printed RDN parses");
        same_rdn(&back, &r);
        assert_eq!(back.to_string(), printed);
        let norm = Rdn::parse(r.norm()).expect("a normalized RDN parses");
        assert_eq!(norm.norm(), r.norm(), "normalizing is not stable");
    }
});
