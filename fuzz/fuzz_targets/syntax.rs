//! Attribute values and assertion values as clients send them, through the syntax that
//! validates and normalizes them for comparison and index keys (the first input byte
//! picks the syntax). Normalizing a normalized text value changes nothing, and the SID
//! and GUID text forms convert back to the bytes they came from.

#![no_main]

use kauri_db::syntax::{
    guid_to_string, parse_generalized_time, parse_sid_text, sid_to_string, SubstringPosition,
};
use kauri_db::Syntax;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, raw)) = data.split_first() else {
        return;
    };
    let syntax = Syntax::ALL[usize::from(pick) % Syntax::ALL.len()];
    if let Ok(norm) = syntax.normalize(raw) {
        // Integers and times normalize to binary sort keys, not to values of their syntax.
        if !matches!(
            syntax,
            Syntax::Integer | Syntax::GeneralizedTime | Syntax::UtcTime
        ) {
            match syntax.normalize(&norm) {
                Ok(again) => assert_eq!(again, norm, "{syntax:?} normalization is not stable"),
                // Text of spaces only folds to nothing, which as a value is refused.
                Err(e) => assert!(norm.is_empty(), "{syntax:?}: {e}"),
            }
        }
    }
    for position in [
        SubstringPosition::Initial,
        SubstringPosition::Any,
        SubstringPosition::Final,
    ] {
        let _ = syntax.normalize_substring(raw, position);
    }
    let _ = parse_generalized_time(raw);
    if let Ok(sid) = parse_sid_text(raw) {
        let text = sid_to_string(&sid).expect("a parsed SID prints");
        assert_eq!(parse_sid_text(text.as_bytes()), Ok(sid));
    }
    if let Some(text) = sid_to_string(raw) {
        assert_eq!(parse_sid_text(text.as_bytes()).as_deref(), Ok(raw));
    }
    if let Ok(guid) = <[u8; 16]>::try_from(raw) {
        let text = guid_to_string(&guid);
        let back = Syntax::Guid
            .normalize(text.as_bytes())
            .expect("a GUID's text is valid");
        assert_eq!(&*back, raw);
    }
});
