//! LDIF (RFC 2849) as `kauri ldif import` reads it, record by record until the end or
//! the first error. A content record written back with the exporter's writer reads back
//! as the same record.

#![no_main]

use kauri::ldif::write_entry;
use kauri::ldif_read::{LdifReader, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut reader = LdifReader::new(data);
    // Every record takes at least one line, so this ends.
    for _ in 0..=data.len() {
        match reader.next_record() {
            Ok(Some(record)) => {
                let _ = reader.last_record_line();
                if let Record::Content { dn, attrs, .. } = &record {
                    let mut out = Vec::new();
                    write_entry(&mut out, dn, attrs).expect("writing to memory");
                    let back = LdifReader::new(out.as_slice())
                        .next_record()
                        .expect("a written record reads back");
                    assert_eq!(back.as_ref(), Some(&record));
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = e.to_string();
                return;
            }
        }
    }
    panic!("more records than bytes");
});
