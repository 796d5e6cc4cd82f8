//! Packet captures from anywhere (`kauri traffic summarize CAPTURE`): the bytes as a pcap
//! or pcapng file, and the same bytes cut into raw-IP frames of a well-formed pcap file so
//! the IP, TCP reassembly and protocol dissectors see them directly. Nothing may panic;
//! every frame is counted as summarised or ignored, and every summary line reads back as
//! the same line.

#![no_main]

use kauri_traffic::summarize::{summarize_capture, Summary};
use kauri_traffic::summary::Packet;
use libfuzzer_sys::fuzz_target;

fn check(summary: &Summary) {
    let s = &summary.stats;
    assert_eq!(s.frames, s.summarised + s.ignored, "{s:?}");
    assert_eq!(s.lines, summary.packets.len() as u64);
    assert!(s.lines >= s.summarised);
    let _ = s.to_string();
    for p in &summary.packets {
        let line = p.to_string();
        assert!(!line.contains('\n'), "a line break inside {line:?}");
        let back = Packet::parse(&line, 1).expect("a summary line reads back");
        assert_eq!(&back, p);
    }
}

/// A pcap file of raw-IP frames: the input cut at two-byte lengths.
fn raw_ip_pcap(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 24);
    for x in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 101] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    let mut rest = data;
    let mut t = 0u32;
    while rest.len() >= 2 {
        let want = usize::from(u16::from_le_bytes([rest[0], rest[1]]) % 1600);
        rest = &rest[2..];
        let n = want.min(rest.len());
        // An odd length asks for a frame cut short by the snap length.
        let orig = if want & 1 == 1 { n + 7 } else { n };
        for x in [1_500_000_000, t, n as u32, orig as u32] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        t += 1;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if let Ok(summary) = summarize_capture(data) {
        check(&summary);
    }
    let summary = summarize_capture(&raw_ip_pcap(data)).expect("a well-formed pcap file");
    check(&summary);
});
