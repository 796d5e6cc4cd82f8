//! Property tests for DN formatting and parsing round trips.

use kauri_db::dn::{Ava, Dn, Rdn};
use proptest::prelude::*;

fn attr() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z][a-zA-Z0-9-]{0,10}",
        "(0|[1-9][0-9]{0,3})(\\.(0|[1-9][0-9]{0,5})){1,4}",
    ]
}

fn special_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            ',', '+', '"', '\\', '<', '>', ';', '=', '#', ' ', '\0', '\t', '\n', '\r', 'é', 'ß',
            'Ä', '中', '\u{3000}', '\u{a0}', 'a', 'Z', '0', 'İ',
        ]),
        any::<char>(),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,12}",
        prop::collection::vec(special_char(), 0..12).prop_map(|v| v.into_iter().collect()),
    ]
}

fn rdn() -> impl Strategy<Value = Rdn> {
    prop::collection::vec((attr(), value()), 1..4).prop_map(|pairs| {
        Rdn::from_avas(
            pairs
                .into_iter()
                .map(|(attr, value)| Ava { attr, value })
                .collect(),
        )
        .unwrap()
    })
}

fn dn() -> impl Strategy<Value = Dn> {
    prop::collection::vec(rdn(), 0..5).prop_map(Dn::from_rdns)
}

fn assert_same(a: &Dn, b: &Dn) {
    assert_eq!(a, b);
    assert_eq!(a.norm(), b.norm());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.rdns().iter().zip(b.rdns()) {
        assert_eq!(x.avas(), y.avas());
        assert_eq!(x.norm(), y.norm());
    }
}

/// Strings assembled from DN-ish fragments, so that many of them parse.
fn dnish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "cn",
            "OU",
            "=",
            "=",
            ",",
            ",",
            "+",
            ";",
            " ",
            "  ",
            "\\",
            "\\2C",
            "\\c3\\a4",
            "\\ ",
            "\\#",
            "\"",
            "#",
            "#0C026162",
            "#04",
            "6162",
            "a",
            "Foo",
            "é",
            "OID.2.5.4.3",
            "1.2",
            "<",
            ">",
            "\t",
            "\\00",
            "\\ff",
        ]),
        0..16,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn display_parse_round_trip(d in dn()) {
        let s = d.to_string();
        let parsed = Dn::parse(&s).unwrap();
        assert_same(&parsed, &d);
        let again: Dn = s.parse().unwrap();
        prop_assert_eq!(again.to_string(), s);
    }

    #[test]
    fn rdn_round_trip(r in rdn()) {
        let parsed = Rdn::parse(&r.to_string()).unwrap();
        prop_assert_eq!(parsed.avas(), r.avas());
        prop_assert_eq!(parsed.norm(), r.norm());
    }

    #[test]
    fn reparse_is_stable(s in dnish()) {
        if let Ok(d) = Dn::parse(&s) {
            let d2 = Dn::parse(&d.to_string()).unwrap();
            assert_same(&d2, &d);
            prop_assert_eq!(d2.to_string(), d.to_string());
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,64}") {
        if let Ok(d) = Dn::parse(&s) {
            let d2 = Dn::parse(&d.to_string()).unwrap();
            assert_same(&d2, &d);
        }
        let _ = Rdn::parse(&s);
    }

    #[test]
    fn hierarchy_consistent(d in dn(), r in rdn()) {
        let c = d.child(r.clone());
        prop_assert!(d.is_parent_of(&c));
        prop_assert!(d.is_ancestor_of(&c));
        prop_assert!(c.is_descendant_of(&d));
        prop_assert_eq!(c.parent().unwrap(), d.clone());
        prop_assert_eq!(c.rdn().unwrap(), &r);
        prop_assert_eq!(c.rebase(&d, &d).unwrap(), c.clone());
    }
}
