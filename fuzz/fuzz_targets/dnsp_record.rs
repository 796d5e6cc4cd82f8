//! The directory's DNS blobs as another DC (Samba, Windows) or a restored backup may have
//! written them: `dnsRecord` and `dnsProperty` values. A `dnsRecord` that decodes encodes
//! to the same bytes (its Reserved field, ignored on reading, written as 0); a
//! `dnsProperty` that decodes encodes to the same bytes except the fields MS-DNSP says are
//! unused (NameLength, Flag, Name), and to the same property.

#![no_main]

use kauri_dns_proto::dnsp::{Body, DnsProperty, DnsRecord};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match DnsRecord::decode(data) {
        Ok(r) => {
            let bytes = r.encode();
            let mut expect = data.to_vec();
            if let Some(reserved) = expect.get_mut(16..20) {
                reserved.fill(0);
            }
            assert_eq!(
                bytes, expect,
                "a dnsRecord changed through decode and encode: {r:?}"
            );
            if let Body::Record(d) = &r.body {
                let _ = d.to_string();
                let _ = d.samba_text();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match DnsProperty::decode(data) {
        Ok(p) => {
            let bytes = p.encode();
            assert_eq!(DnsProperty::decode(&bytes).as_ref(), Ok(&p));
            let end = 20 + p.data.len();
            assert_eq!(bytes.get(..4), data.get(..4), "DataLength changed");
            assert_eq!(
                bytes.get(12..end),
                data.get(12..end),
                "Version, Id or Data changed"
            );
            assert_eq!(bytes.len(), end + 4);
            let _ = (
                p.u8_value(),
                p.u32_value(),
                p.u64_value(),
                p.ip4_array(),
                p.utf16_value(),
            );
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
