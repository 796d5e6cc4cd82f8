//! Property tests for filter formatting and parsing round trips.

use kauri_db::filter::{ExtensibleMatch, Filter, SubstringFilter};
use proptest::prelude::*;

fn attr() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z][a-zA-Z0-9-]{0,8}(;[a-zA-Z0-9-]{1,5}){0,2}",
        "(0|[1-9][0-9]{0,3})(\\.(0|[1-9][0-9]{0,5})){1,4}",
    ]
}

fn rule() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z][a-zA-Z0-9-]{0,8}"
            .prop_filter("dn is the :dn flag", |r| !r.eq_ignore_ascii_case("dn")),
        "(0|[1-9][0-9]{0,3})(\\.(0|[1-9][0-9]{0,5})){1,4}",
    ]
}

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        prop::sample::select(vec![
            b'*', b'(', b')', b'\\', 0, b' ', b'=', 0xc3, 0xa4, b'a'
        ]),
    ]
}

fn bytes(min: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(byte(), min..10),
        "[a-zé中 ]{1,6}".prop_map(String::into_bytes),
    ]
}

fn leaf() -> impl Strategy<Value = Filter> {
    prop_oneof![
        (attr(), bytes(0)).prop_map(|(a, v)| Filter::eq(&a, v)),
        (attr(), bytes(0)).prop_map(|(a, v)| Filter::ge(&a, v)),
        (attr(), bytes(0)).prop_map(|(a, v)| Filter::le(&a, v)),
        (attr(), bytes(0)).prop_map(|(a, v)| Filter::approx(&a, v)),
        attr().prop_map(|a| Filter::present(&a)),
        (
            attr(),
            prop::option::of(bytes(1)),
            prop::collection::vec(bytes(1), 0..3),
            prop::option::of(bytes(1)),
        )
            .prop_filter("needs a component", |(_, i, a, f)| {
                i.is_some() || !a.is_empty() || f.is_some()
            })
            .prop_map(|(attr, initial, any, final_)| {
                Filter::Substrings(SubstringFilter {
                    attr,
                    initial,
                    any,
                    final_,
                })
            }),
        (
            prop::option::of(attr()),
            prop::option::of(rule()),
            bytes(0),
            any::<bool>()
        )
            .prop_filter("needs attr or rule", |(a, r, _, _)| a.is_some()
                || r.is_some())
            .prop_map(|(attr, rule, value, dn_attributes)| {
                Filter::Extensible(ExtensibleMatch {
                    rule,
                    attr,
                    value,
                    dn_attributes,
                })
            }),
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    leaf().prop_recursive(4, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Filter::and),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Filter::or),
            inner.prop_map(Filter::not),
        ]
    })
}

/// Strings assembled from filter fragments, to reach deep parser states.
fn filterish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "(", "(", ")", ")", "&", "|", "!", "cn", "=", "*", "**", "~=", ">=", "<=", ":", ":dn",
            ":=", "1.2.3", "\\", "\\2a", "\\4", "\\zz", "a", " ", ";x", "é", "\0",
        ]),
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn display_parse_round_trip(f in filter()) {
        let s = f.to_string();
        let parsed = Filter::parse(&s);
        prop_assert_eq!(parsed.as_ref(), Ok(&f), "{}", s);
        prop_assert!(f.depth() <= 5);
    }

    #[test]
    fn random_strings_never_panic(s in ".{0,64}") {
        if let Ok(f) = Filter::parse(&s) {
            prop_assert_eq!(Filter::parse(&f.to_string()), Ok(f));
        }
    }

    #[test]
    fn fragment_strings_never_panic(s in filterish()) {
        match Filter::parse(&s) {
            Ok(f) => prop_assert_eq!(Filter::parse(&f.to_string()), Ok(f)),
            Err(e) => prop_assert!(e.position() <= s.len()),
        }
    }
}
