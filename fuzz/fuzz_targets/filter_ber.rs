//! A search filter in its BER form, as a SearchRequest carries it: nesting bounded,
//! assertion values kept as bytes. A decoded filter encodes and decodes to itself, and
//! prints (for logs) whatever it holds.

#![no_main]

use kauri_db::filter::MAX_FILTER_DEPTH;
use kauri_ldap_proto::decode::decode_filter;
use kauri_ldap_proto::encode::encode_filter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = decode_filter(data) else {
        return;
    };
    assert!(f.depth() <= MAX_FILTER_DEPTH);
    let _ = f.attributes();
    let _ = f.to_string();
    let bytes = encode_filter(&f);
    let back = decode_filter(&bytes).expect("a re-encoded filter decodes");
    assert_eq!(back, f);
    assert_eq!(encode_filter(&back), bytes);
});
