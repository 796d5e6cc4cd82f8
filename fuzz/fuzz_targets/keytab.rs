//! A keytab file as `kauri domain exportkeytab` reads it before adding to it (MIT's
//! format 0x0502): records, holes, the end marker, each entry's fields. A keytab that
//! decodes is written out again and reads back as the same entries.

#![no_main]

use kauri::keytab::{decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let entries = match decode(data) {
        Ok(e) => e,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    for e in &entries {
        let _ = e.principal();
        let _ = format!("{e:?}");
        assert!(e.same_slot(e));
    }
    match encode(&entries) {
        Ok(bytes) => {
            let again = decode(&bytes).expect("a keytab written reads back");
            assert_eq!(again, entries, "a keytab changed through encode and decode");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
