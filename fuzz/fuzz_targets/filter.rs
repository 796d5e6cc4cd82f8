//! A search filter in its RFC 4515 string form (the admin tool, configuration, LDAP
//! URLs). A parsed filter prints to a string that parses to the same filter and prints
//! the same again, and its BER form decodes to it too.

#![no_main]

use kauri_db::filter::{Filter, MAX_FILTER_DEPTH};
use kauri_ldap_proto::decode::decode_filter;
use kauri_ldap_proto::encode::encode_filter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let f = match Filter::parse(s) {
        Ok(f) => f,
        Err(e) => {
            assert!(e.position() <= s.len(), "{e} points past the input");
            return;
        }
    };
    assert!(f.depth() <= MAX_FILTER_DEPTH);
    let _ = f.attributes();
    let printed = f.to_string();
    let back = Filter::parse(&printed).expect("a printed filter parses");
    assert_eq!(back, f, "{printed}");
    assert_eq!(back.to_string(), printed);
    let ber = decode_filter(&encode_filter(&f)).expect("its BER form decodes");
    assert_eq!(ber, f);
});
