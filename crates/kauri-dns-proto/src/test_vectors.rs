//! Real packets and blobs for the tests, as hex. How each was made is said by it.
//!
//! The DNS packets were captured on loopback by a small Python UDP listener that wrote
//! each datagram it got to a file, while `dig` 9.18 and `nsupdate` (bind9-dnsutils) were
//! pointed at it; the others were built with dnspython 2.9 (`dns.message`, `dns.tsig`),
//! whose HMAC-SHA256 over the recorded digest input was checked to equal the MAC in the
//! packet (key `kauri-key.`, secret base64 `c2VjcmV0LWtleS1mb3Ita2F1cmktdGVzdHMtMDEyMzQ1Njc4OQ==`).

/// Decodes a hex constant.
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// `dig @127.0.0.1 _ldap._tcp.dc._msdcs.samdom.example.com SRV`: RD, AD, EDNS (1232
/// bytes) with a client cookie.
pub(crate) const DIG_SRV_QUERY: &str = concat!(
    "bdb201200001000000000001055f6c646170045f746370026463065f6d736463730673616d646f6d07657861",
    "6d706c6503636f6d000021000100002904d000000000000c000a0008c15ac30a2c184f03",
);

/// `dig +noedns dc1.samdom.example.com A`.
pub(crate) const DIG_A_NOEDNS: &str =
    "39dc01200001000000000000036463310673616d646f6d076578616d706c6503636f6d0000010001";

/// `nsupdate -y hmac-sha256:kauri-key.:…` sending: zone samdom.example.com; `update delete
/// old.samdom.example.com A`; `update add host1… 3600 A 10.0.0.21`; `update add
/// _ldap._tcp.samdom.example.com 900 SRV 0 100 389 host1.samdom.example.com`. Signed with
/// TSIG (hmac-sha256), which starts at byte 147.
pub(crate) const NSUPDATE_SIGNED: &str = concat!(
    "491e280000010000000300010673616d646f6d076578616d706c6503636f6d0000060001036f6c64c00c0001",
    "00ff00000000000005686f737431c00c0001000100000e1000040a000015055f6c646170045f746370067361",
    "6d646f6d076578616d706c6503636f6d000021000100000384002000000064018505686f7374310673616d64",
    "6f6d076578616d706c6503636f6d00096b617572692d6b65790000fa00ff00000000003d0b686d61632d7368",
    "613235360000006b08bb22012c00205067cb5ce325be3f6f9310f132b6a007a84328fd78e0836176c17bbc8d",
    "846f0b491e00000000",
);

/// What dnspython's `dns.tsig` hashes to verify [`NSUPDATE_SIGNED`] (its
/// `HMACTSig.update` calls, recorded).
pub(crate) const NSUPDATE_SIGNED_DIGEST: &str = concat!(
    "491e280000010000000300000673616d646f6d076578616d706c6503636f6d0000060001036f6c64c00c0001",
    "00ff00000000000005686f737431c00c0001000100000e1000040a000015055f6c646170045f746370067361",
    "6d646f6d076578616d706c6503636f6d000021000100000384002000000064018505686f7374310673616d64",
    "6f6d076578616d706c6503636f6d00096b617572692d6b65790000ff000000000b686d61632d736861323536",
    "0000006b08bb22012c00000000",
);

/// Unsigned `nsupdate`: `prereq nxdomain new.samdom.example.com`; `prereq yxrrset
/// dc1.samdom.example.com A`; `update add new.samdom.example.com 300 TXT "hello world"
/// "second"`; `update delete dc1.samdom.example.com A 10.0.0.9`.
pub(crate) const NSUPDATE_PREREQ: &str = concat!(
    "74f4280000010002000200000673616d646f6d076578616d706c6503636f6d0000060001036e6577c00c00ff",
    "00fe00000000000003646331c00c000100ff000000000000c024001000010000012c00130b68656c6c6f2077",
    "6f726c64067365636f6e64c034000100fe0000000000040a000009",
);

/// dnspython's `make_response` to [`NSUPDATE_SIGNED`], signed with the same key.
pub(crate) const SIGNED_RESPONSE: &str = concat!(
    "491ea80000010000000000010673616d646f6d076578616d706c6503636f6d0000060001096b617572692d6b",
    "65790000fa00ff00000000003d0b686d61632d7368613235360000006b08bb33012c00201f72a8d7e3bab367",
    "1730158e9beb689a67e33b2fb3cccb22d194c9c3581d1183491e00000000",
);

/// What dnspython hashed to sign [`SIGNED_RESPONSE`].
pub(crate) const SIGNED_RESPONSE_DIGEST: &str = concat!(
    "00205067cb5ce325be3f6f9310f132b6a007a84328fd78e0836176c17bbc8d846f0b491ea800000100000000",
    "00000673616d646f6d076578616d706c6503636f6d0000060001096b617572692d6b65790000ff000000000b",
    "686d61632d7368613235360000006b08bb33012c00000000",
);

/// A GSS-TSIG TKEY query built with dnspython: `3953903012.sig-dc1.samdom.example.com`
/// TKEY ANY, with a TKEY record (gss-tsig, mode 3, a token) in the additional section.
pub(crate) const TKEY_QUERY: &str = concat!(
    "1234000000010000000000010a33393533393033303132077369672d6463310673616d646f6d076578616d70",
    "6c6503636f6d0000f900ffc00c00f900ff00000000002c086773732d74736967006553f10065554280000300",
    "0000126082010606062b0601050502a081fb3081f80000",
);

/// An SRV answer built with dnspython: two SRV records, an NS in authority, A and AAAA
/// glue, EDNS 4096. Its A/AAAA owners point into the SRV data.
pub(crate) const SRV_RESPONSE: &str = concat!(
    "beef81000001000200010003055f6c646170045f7463700673616d646f6d076578616d706c6503636f6d0000",
    "210001c00c0021000100000384001e000000640185036463320673616d646f6d076578616d706c6503636f6d",
    "00c00c0021000100000384001e000000640185036463310673616d646f6d076578616d706c6503636f6d00c0",
    "170002000100000e10000603646331c017c08f000100010000038400040a000001c08f001c00010000038400",
    "10fd0000000000000000000000000000010000292000000000000000",
);
