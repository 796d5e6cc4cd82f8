//! DNS messages from anyone (UDP and TCP on port 53): queries, dynamic updates, TKEY
//! negotiations, signed or not. A message that decodes encodes to one that decodes to the
//! same message, byte for byte stable; truncating it for a 512-byte UDP reply stays within
//! 512 bytes and still decodes; its TSIG (when there is one) yields a digest input; its
//! record data prints in both text forms and samba-tool's form parses back.

#![no_main]

use kauri_dns_proto::tsig::request_digest_input;
use kauri_dns_proto::wire::{peek_header, Message, RecordData};
use kauri_dns_proto::RData;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let peeked = peek_header(data);
    let decoded = match Message::decode_with_offsets(data) {
        Ok(d) => d,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let m = &decoded.message;
    assert_eq!(peeked, Some(m.header));
    let bytes = m.encode();
    let again = Message::decode_with_offsets(&bytes).expect("an encoded message decodes");
    assert_eq!(
        &again.message, m,
        "a message changed through encode and decode"
    );
    assert_eq!(again.tsig_start.is_some(), decoded.tsig_start.is_some());
    assert_eq!(again.message.encode(), bytes, "encoding is not stable");

    let limited = m.encode_limited(512);
    assert!(
        limited.len() <= 512,
        "encode_limited(512) gave {} bytes",
        limited.len()
    );
    if !limited.is_empty() {
        Message::decode(&limited).expect("a truncated message decodes");
    }
    let _ = m.edns();
    let _ = m.rcode();

    for q in &m.questions {
        let _ = q.name.to_string();
    }
    let records = m.answers.iter().chain(&m.authority).chain(&m.additional);
    for r in records {
        let text = r.name.to_fqdn_string();
        let parsed = kauri_dns_proto::Name::parse(&text).expect("a printed name parses");
        assert_eq!(parsed.labels(), r.name.labels());
        match &r.data {
            RecordData::Data(d) => {
                let _ = d.to_string();
                let samba = d.samba_text();
                let back = RData::parse_text(d.rtype(), &samba);
                let lossless = match d {
                    RData::Txt(strings) => {
                        !strings.is_empty()
                            && strings.iter().all(|s| std::str::from_utf8(s).is_ok())
                    }
                    _ => true,
                };
                if lossless {
                    assert_eq!(
                        back.as_ref(),
                        Ok(d),
                        "samba-tool text {samba:?} does not read back"
                    );
                }
            }
            RecordData::Tsig(t) => {
                if let Some(start) = decoded.tsig_start {
                    request_digest_input(data, start, &r.name, t).expect("a digest input");
                }
            }
            _ => {}
        }
    }
});
