//! Security descriptor tests: binary round trips on descriptors Windows and Samba
//! wrote, SDDL against AD's own `defaultSecurityDescriptor` values and Windows'
//! recorded output, the access check, and inheritance checked against what Samba's
//! test suite (run against Windows DCs too) and a Samba provision hold.
//!
//! Where each real vector comes from is said next to it. The schema-file tests need
//! Debian's `samba-ad-provision` package (`/usr/share/samba/setup/ad-schema`).

use std::path::Path;

use base64::Engine as _;
use proptest::prelude::*;

use kauri_domain::schema::builtin::parse_guid;
use kauri_domain::schema::ldif::parse_ldif;
use kauri_domain::schema::{Schema, DEFAULT_SCHEMA_DIR};
use kauri_domain::security::descriptor::{ACL_REVISION, ACL_REVISION_DS};
use kauri_domain::security::rights::*;
use kauri_domain::security::{
    control, create_descriptor, create_descriptor_with, sddl, well_known, Access, AccessCheck, Ace,
    AceKind, Acl, Guid, Layout, ObjectTypeList, OwnerRights, SdError, SecurityDescriptor, Token,
};
use kauri_domain::sid::Sid;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn guid(s: &str) -> Guid {
    parse_guid(s).unwrap()
}

fn sid(s: &str) -> Sid {
    Sid::parse(s).unwrap()
}

// ---------------------------------------------------------------------------------
// Binary form
// ---------------------------------------------------------------------------------

/// MS-DTYP 2.5.1.4 ("SDDL String to Binary Security Descriptor Examples"): the SDDL and
/// the bytes Windows makes of it.
const MS_DTYP_SDDL: &str =
    "O:BAG:BAD:P(A;CIOI;GRGX;;;BU)(A;CIOI;GA;;;BA)(A;CIOI;GA;;;SY)(A;CIOI;GA;;;CO)S:P(AU;FA;GR;;;WD)";
const MS_DTYP_BYTES: &str = "
    01 00 14 b0 90 00 00 00 a0 00 00 00 14 00 00 00 30 00 00 00 02 00 1c 00 01 00 00 00
    02 80 14 00 00 00 00 80 01 01 00 00 00 00 00 01 00 00 00 00 02 00 60 00 04 00 00 00
    00 03 18 00 00 00 00 a0 01 02 00 00 00 00 00 05 20 00 00 00 21 02 00 00 00 03 18 00
    00 00 00 10 01 02 00 00 00 00 00 05 20 00 00 00 20 02 00 00 00 03 14 00 00 00 00 10
    01 01 00 00 00 00 00 05 12 00 00 00 00 03 14 00 00 00 00 10 01 01 00 00 00 00 00 03
    00 00 00 00 01 02 00 00 00 00 00 05 20 00 00 00 20 02 00 00 01 02 00 00 00 00 00 05
    20 00 00 00 20 02 00 00";

#[test]
fn ms_dtyp_worked_example() {
    let dom = sid("S-1-5-21-1-2-3");
    let bytes = hex(MS_DTYP_BYTES);
    let from_text = SecurityDescriptor::from_sddl(MS_DTYP_SDDL, &dom).unwrap();
    assert_eq!(from_text.to_bytes().unwrap(), bytes);
    let from_bytes = SecurityDescriptor::from_bytes(&bytes).unwrap();
    assert_eq!(from_bytes, from_text);
    // Windows prints ACE flags and rights in bit order.
    assert_eq!(
        from_bytes.to_sddl(&dom).unwrap(),
        "O:BAG:BAD:P(A;OICI;GXGR;;;BU)(A;OICI;GA;;;BA)(A;OICI;GA;;;SY)(A;OICI;GA;;;CO)\
         S:P(AU;FA;GR;;;WD)"
    );
}

/// Descriptors Windows made from SDDL (ConvertStringSecurityDescriptorToSecurityDescriptor),
/// recorded in Samba's `libcli/security/tests/data/short-ordinary-acls-v2.json.gz` (the
/// first three) and `short-ordinary-acls.json.gz` (the last two), converted in the domain
/// S-1-5-21-2457507606-2709100691-398136650.
const WINDOWS_VECTORS: &[(&str, &str)] = &[
    (
        "O:ISD:ARAIS:PAR",
        "010014a72400000000000000140000001c0000000200080000000000020008000000000001020000000000\
         052000000038020000",
    ),
    (
        "D:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;BO)(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;SY)\
         (A;;LCRPLORC;;;AU)S:(AU;SA;WPCR;;;WD)",
        "010014800000000000000000140000003000000002001c000100000002401400200100000101000000000001\
         00000000020048000300000000001800ff010f000102000000000005200000002702000000001400ff010f00\
         010100000000000512000000000014009400020001010000000000050b000000",
    ),
    (
        "O:S-1-5-21-278947126-313297131-136083339-518G:S-1-5-21-278947126-313297131-136083339-518\
         D:AI(A;CIID;LCRPLORC;;;AU)(A;CIID;CCLCSWRPWPLOCRRCWDWO;;;S-1-5-21-278947126-313297131-\
         136083339-518)(A;CIID;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;SY)S:AI(AU;CIIDSA;WP;;;WD)",
        "0100148c84000000a0000000140000003000000002001c000100000002521400200000000101000000000001\
         000000000200540003000000001214009400020001010000000000050b00000000122400bd010e0001050000\
         00000005150000003665a010eb88ac128b771c080602000000121400ff010f00010100000000000512000000\
         0105000000000005150000003665a010eb88ac128b771c08060200000105000000000005150000003665a010\
         eb88ac128b771c0806020000",
    ),
    (
        "O:AUG:AUD:AI(A;;CC;;;AU)(OA;CIID;LC;;bf967a9c-0de6-11d0-a285-00aa003049e2;\
         S-1-5-21-2654824374-240158998-261516133-512)",
        "01000484680000007400000000000000140000000400540002000000000014000100000001010000000000050b\
         0000000512380004000000020000009c7a96bfe60dd011a28500aa003049e2010500000000000515000000b667\
         3d9e1689500e656b960f0002000001010000000000050b00000001010000000000050b000000",
    ),
    (
        "O:S-1-5-21-2654824374-240158998-261516133-512G:S-1-5-21-2654824374-240158998-261516133-512\
         D:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;SY)(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;\
         S-1-5-21-2654824374-240158998-261516133-512)(OA;;CCDC;bf967a86-0de6-11d0-a285-00aa003049e2;;AO)\
         (OA;;CCDC;bf967aba-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967a9c-0de6-11d0-a285-00aa003049e2;;AO)\
         (OA;;CCDC;bf967aa8-0de6-11d0-a285-00aa003049e2;;PO)(A;;LCRPLORC;;;AU)(A;;LCRPLORC;;;ED)\
         (OA;;CCDC;4828cc14-1437-45bc-9b07-ad6f015e5f28;;AO)S:AI(OU;CIIDSA;WP;\
         f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)(OU;CIIDSA;WP;\
         f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)",
        "01001488d0010000ec010000140000008c0000000400780002000000075238002000000003000000be3b0ef3f09f\
         d111b6030000f80367c1a57a96bfe60dd011a28500aa003049e2010100000000000100000000075238002000000003\
         000000bf3b0ef3f09fd111b6030000f80367c1a57a96bfe60dd011a28500aa003049e2010100000000000100000000\
         040044010900000000001400ff010f0001010000000000051200000000002400ff010f00010500000000000515000000\
         b6673d9e1689500e656b960f0002000005002c000300000001000000867a96bfe60dd011a28500aa003049e2010200\
         00000000052000000024020000 05002c000300000001000000ba7a96bfe60dd011a28500aa003049e20102000000\
         000005200000002402000005002c0003000000010000009c7a96bfe60dd011a28500aa003049e20102000000000005\
         200000002402000005002c000300000001000000a87a96bfe60dd011a28500aa003049e20102000000000005200000\
         0026020000000014009400020001010000000000050b000000000014009400020001010000000000050900000005002c\
         00030000000100000014cc28483714bc459b07ad6f015e5f2801020000000000052000000024020000010500000000\
         000515000000b6673d9e1689500e656b960f00020000010500000000000515000000b6673d9e1689500e656b960f0002\
         0000",
    ),
];

fn windows_domain() -> Sid {
    sid("S-1-5-21-2457507606-2709100691-398136650")
}

#[test]
fn windows_vectors_round_trip() {
    let dom = windows_domain();
    for (text, bytes) in WINDOWS_VECTORS {
        let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = hex(bytes);
        let parsed = SecurityDescriptor::from_sddl(&text, &dom).unwrap();
        assert_eq!(parsed.to_bytes().unwrap(), bytes, "SDDL to bytes: {text}");
        let decoded = SecurityDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, parsed, "{text}");
        assert_eq!(
            decoded.to_bytes().unwrap(),
            bytes,
            "bytes round trip: {text}"
        );
        // These keys are Windows' own SDDL output, so printing gives them back.
        assert_eq!(decoded.to_sddl(&dom).unwrap(), text);
    }
}

/// `nTSecurityDescriptor` values of a Samba-provisioned forest, from Samba's
/// `source4/selftest/provisions/multi-dc-samba-master-c596ac6/private/sam.ldb.d/`
/// `DC=FORESTDNSZONES,DC=SAMDOM,DC=EXAMPLE,DC=COM.ldb.dump` (domain
/// S-1-5-21-3008502463-2017935226-3707235946): CN=MicrosoftDNS (a container), its child
/// DC=_msdcs.samdom.example.com (a dnsZone) and that zone's child DC=gc (a dnsNode).
/// Samba writes owner, group, SACL, DACL.
const SAMBA_CONTAINER: &str = concat!(
    "AQAUjBQAAAAgAAAALAAAAKQAAAABAQAAAAAABRIAAAABAQAAAAAABRIAAAAEAHgAAgAAAAdaOAAgAAAAAwAAAL47",
    "DvPwn9ERtgMAAPgDZ8Glepa/5g3QEaKFAKoAMEniAQEAAAAAAAEAAAAAB1o4ACAAAAADAAAAvzsO8/Cf0RG2AwAA",
    "+ANnwaV6lr/mDdARooUAqgAwSeIBAQAAAAAAAQAAAAAEADAEFgAAAAAAFAD/AQ8AAQEAAAAAAAUSAAAAAAIUAH8B",
    "DwABAQAAAAAABQkAAAAFGjwAEAAAAAMAAAAAQhZMwCDQEadoAKoAbgUpFMwoSDcUvEWbB61vAV5fKAECAAAAAAAF",
    "IAAAACoCAAAFGjwAEAAAAAMAAAAAQhZMwCDQEadoAKoAbgUpunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoC",
    "AAAFGjwAEAAAAAMAAAAQICBfpXnQEZAgAMBPwtTPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwA",
    "EAAAAAMAAAAQICBfpXnQEZAgAMBPwtTPunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMA",
    "AABAwgq8qXnQEZAgAMBPwtTPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAABAwgq8",
    "qXnQEZAgAMBPwtTPunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAABCL7pZonnQEZAg",
    "AMBPwtPPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAABCL7pZonnQEZAgAMBPwtPP",
    "unqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAD4iHAD4QrSEbQiAKDJaPk5FMwoSDcU",
    "vEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAD4iHAD4QrSEbQiAKDJaPk5unqWv+YN0BGihQCq",
    "ADBJ4gECAAAAAAAFIAAAACoCAAAFGjgAEAAAAAMAAABtnsa3xyzSEYVOAKDJg/YIhnqWv+YN0BGihQCqADBJ4gEB",
    "AAAAAAAFCQAAAAUaOAAQAAAAAwAAAG2exrfHLNIRhU4AoMmD9gicepa/5g3QEaKFAKoAMEniAQEAAAAAAAUJAAAA",
    "BRo4ABAAAAADAAAAbZ7Gt8cs0hGFTgCgyYP2CLp6lr/mDdARooUAqgAwSeIBAQAAAAAABQkAAAAFGiwAlAACAAIA",
    "AAAUzChINxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAAKgIAAAUaLACUAAIAAgAAAJx6lr/mDdARooUAqgAwSeIBAgAA",
    "AAAABSAAAAAqAgAABRosAJQAAgACAAAAunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFEigAMAEAAAEA",
    "AADeR+aRb9lwS5VX1j/088zYAQEAAAAAAAUKAAAAABIkAP8BDwABBQAAAAAABRUAAAC/GlKzej9HeGru99wHAgAA",
    "ABIYAAQAAAABAgAAAAAABSAAAAAqAgAAABIYAL0BDwABAgAAAAAABSAAAAAgAgAA",
);
const SAMBA_DNSZONE: &str = concat!(
    "AQAUjBQAAAAwAAAATAAAAMQAAAABBQAAAAAABRUAAAC/GlKzej9HeGru99z0AQAAAQUAAAAAAAUVAAAAvxpSs3o/",
    "R3hq7vfcAQIAAAQAeAACAAAAB1o4ACAAAAADAAAAvjsO8/Cf0RG2AwAA+ANnwaV6lr/mDdARooUAqgAwSeIBAQAA",
    "AAAAAQAAAAAHWjgAIAAAAAMAAAC/Ow7z8J/REbYDAAD4A2fBpXqWv+YN0BGihQCqADBJ4gEBAAAAAAABAAAAAAQA",
    "tAQbAAAAAAAkAP8BDwABBQAAAAAABRUAAAC/GlKzej9HeGru99wAAgAAAAAUAP8BDwABAQAAAAAABQkAAAAAABQA",
    "/wEPAAEBAAAAAAAFEgAAAAAAFAABAAAAAQEAAAAAAAULAAAAAAAUAJQAAgABAQAAAAAAAQAAAAAAACQA/wEPAAEF",
    "AAAAAAAFFQAAAL8aUrN6P0d4au733PQBAAAAEhQAfwEPAAEBAAAAAAAFCQAAAAUaPAAQAAAAAwAAAABCFkzAINAR",
    "p2gAqgBuBSkUzChINxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAAAwAAAABCFkzAINARp2gAqgBu",
    "BSm6epa/5g3QEaKFAKoAMEniAQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAAAwAAABAgIF+ledARkCAAwE/C1M8UzChI",
    "NxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAAAwAAABAgIF+ledARkCAAwE/C1M+6epa/5g3QEaKF",
    "AKoAMEniAQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAAAwAAAEDCCrypedARkCAAwE/C1M8UzChINxS8RZsHrW8BXl8o",
    "AQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAAAwAAAEDCCrypedARkCAAwE/C1M+6epa/5g3QEaKFAKoAMEniAQIAAAAA",
    "AAUgAAAAKgIAAAUaPAAQAAAAAwAAAEIvulmiedARkCAAwE/C088UzChINxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAA",
    "KgIAAAUaPAAQAAAAAwAAAEIvulmiedARkCAAwE/C08+6epa/5g3QEaKFAKoAMEniAQIAAAAAAAUgAAAAKgIAAAUa",
    "PAAQAAAAAwAAAPiIcAPhCtIRtCIAoMlo+TkUzChINxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAAKgIAAAUaPAAQAAAA",
    "AwAAAPiIcAPhCtIRtCIAoMlo+Tm6epa/5g3QEaKFAKoAMEniAQIAAAAAAAUgAAAAKgIAAAUaOAAQAAAAAwAAAG2e",
    "xrfHLNIRhU4AoMmD9giGepa/5g3QEaKFAKoAMEniAQEAAAAAAAUJAAAABRo4ABAAAAADAAAAbZ7Gt8cs0hGFTgCg",
    "yYP2CJx6lr/mDdARooUAqgAwSeIBAQAAAAAABQkAAAAFGjgAEAAAAAMAAABtnsa3xyzSEYVOAKDJg/YIunqWv+YN",
    "0BGihQCqADBJ4gEBAAAAAAAFCQAAAAUaLACUAAIAAgAAABTMKEg3FLxFmwetbwFeXygBAgAAAAAABSAAAAAqAgAA",
    "BRosAJQAAgACAAAAnHqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGiwAlAACAAIAAAC6epa/5g3QEaKF",
    "AKoAMEniAQIAAAAAAAUgAAAAKgIAAAUSKAAwAQAAAQAAAN5H5pFv2XBLlVfWP/TzzNgBAQAAAAAABQoAAAAAEiQA",
    "/wEPAAEFAAAAAAAFFQAAAL8aUrN6P0d4au733AcCAAAAEhgABAAAAAECAAAAAAAFIAAAACoCAAAAEhgAvQEPAAEC",
    "AAAAAAAFIAAAACACAAA=",
);
const SAMBA_DNSNODE: &str = concat!(
    "AQAUjBQAAAAwAAAATAAAAMQAAAABBQAAAAAABRUAAAC/GlKzej9HeGru99z0AQAAAQUAAAAAAAUVAAAAvxpSs3o/",
    "R3hq7vfcAQIAAAQAeAACAAAAB1o4ACAAAAADAAAAvjsO8/Cf0RG2AwAA+ANnwaV6lr/mDdARooUAqgAwSeIBAQAA",
    "AAAAAQAAAAAHWjgAIAAAAAMAAAC/Ow7z8J/REbYDAAD4A2fBpXqWv+YN0BGihQCqADBJ4gEBAAAAAAABAAAAAAQA",
    "oAQaAAAAAAAkAP8BDwABBQAAAAAABRUAAAC/GlKzej9HeGru99wAAgAAAAAUAP8BDwABAQAAAAAABQkAAAAAABQA",
    "/wEPAAEBAAAAAAAFEgAAAAAAJAD/AQ8AAQUAAAAAAAUVAAAAvxpSs3o/R3hq7vfc9AEAAAAAFACUAAIAAQEAAAAA",
    "AAEAAAAAABIUAH8BDwABAQAAAAAABQkAAAAFGjwAEAAAAAMAAAAAQhZMwCDQEadoAKoAbgUpFMwoSDcUvEWbB61v",
    "AV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAAAQhZMwCDQEadoAKoAbgUpunqWv+YN0BGihQCqADBJ4gEC",
    "AAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAAQICBfpXnQEZAgAMBPwtTPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAF",
    "IAAAACoCAAAFGjwAEAAAAAMAAAAQICBfpXnQEZAgAMBPwtTPunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoC",
    "AAAFGjwAEAAAAAMAAABAwgq8qXnQEZAgAMBPwtTPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwA",
    "EAAAAAMAAABAwgq8qXnQEZAgAMBPwtTPunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMA",
    "AABCL7pZonnQEZAgAMBPwtPPFMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAABCL7pZ",
    "onnQEZAgAMBPwtPPunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAD4iHAD4QrSEbQi",
    "AKDJaPk5FMwoSDcUvEWbB61vAV5fKAECAAAAAAAFIAAAACoCAAAFGjwAEAAAAAMAAAD4iHAD4QrSEbQiAKDJaPk5",
    "unqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoCAAAFGjgAEAAAAAMAAABtnsa3xyzSEYVOAKDJg/YIhnqWv+YN",
    "0BGihQCqADBJ4gEBAAAAAAAFCQAAAAUaOAAQAAAAAwAAAG2exrfHLNIRhU4AoMmD9gicepa/5g3QEaKFAKoAMEni",
    "AQEAAAAAAAUJAAAABRo4ABAAAAADAAAAbZ7Gt8cs0hGFTgCgyYP2CLp6lr/mDdARooUAqgAwSeIBAQAAAAAABQkA",
    "AAAFGiwAlAACAAIAAAAUzChINxS8RZsHrW8BXl8oAQIAAAAAAAUgAAAAKgIAAAUaLACUAAIAAgAAAJx6lr/mDdAR",
    "ooUAqgAwSeIBAgAAAAAABSAAAAAqAgAABRosAJQAAgACAAAAunqWv+YN0BGihQCqADBJ4gECAAAAAAAFIAAAACoC",
    "AAAFEigAMAEAAAEAAADeR+aRb9lwS5VX1j/088zYAQEAAAAAAAUKAAAAABIkAP8BDwABBQAAAAAABRUAAAC/GlKz",
    "ej9HeGru99wHAgAAABIYAAQAAAABAgAAAAAABSAAAAAqAgAAABIYAL0BDwABAgAAAAAABSAAAAAgAgAA",
);

fn samba_domain() -> Sid {
    sid("S-1-5-21-3008502463-2017935226-3707235946")
}

#[test]
fn samba_provision_descriptors_round_trip() {
    for value in [SAMBA_CONTAINER, SAMBA_DNSZONE, SAMBA_DNSNODE] {
        let bytes = b64(value);
        let sd = SecurityDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(sd.to_bytes_in(Layout::OwnerFirst).unwrap(), bytes);
        let windows = sd.to_bytes().unwrap();
        assert_eq!(windows.len(), bytes.len());
        assert_eq!(SecurityDescriptor::from_bytes(&windows).unwrap(), sd);
        // SACL first in Windows' layout.
        assert_eq!(&windows[12..16], &20u32.to_le_bytes());
        let text = sd.to_sddl(&samba_domain()).unwrap();
        assert_eq!(
            SecurityDescriptor::from_sddl(&text, &samba_domain()).unwrap(),
            sd
        );
        assert_eq!(sd.control, 0x8c14);
        assert_eq!(sd.dacl.as_ref().unwrap().revision, ACL_REVISION_DS);
    }
    let node = SecurityDescriptor::from_bytes(&b64(SAMBA_DNSNODE)).unwrap();
    let text = node.to_sddl(&samba_domain()).unwrap();
    assert!(
        text.starts_with(
            "O:LAG:DUD:AI(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DA)(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;ED)"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "S:AI(OU;CIIOIDSA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)\
         (OU;CIIOIDSA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)"
    ), "{text}");
}

#[test]
fn malformed_bytes_are_errors_not_panics() {
    let good = hex(MS_DTYP_BYTES);
    for cut in 0..good.len() {
        let _ = SecurityDescriptor::from_bytes(&good[..cut]);
    }
    assert!(matches!(
        SecurityDescriptor::from_bytes(&good[..good.len() - 1]),
        Err(SdError::Binary { .. })
    ));
    // An ACE whose size overruns its ACL.
    let mut b = good.clone();
    b[0x1e] = 0xff;
    assert!(SecurityDescriptor::from_bytes(&b).is_err());
    // Unknown object-ACE flags.
    let dom = sid("S-1-5-21-1-2-3");
    let sd = SecurityDescriptor::from_sddl("D:(OA;;CR;;;WD)", &dom).unwrap();
    let mut b = sd.to_bytes().unwrap();
    b[20 + 8 + 8] = 4;
    assert!(SecurityDescriptor::from_bytes(&b).is_err());
}

// ---------------------------------------------------------------------------------
// Generated descriptors
// ---------------------------------------------------------------------------------

fn arb_sid() -> impl Strategy<Value = Sid> {
    (
        prop_oneof![Just(5u64), Just(1u64), Just(3u64), 0u64..(1 << 48)],
        proptest::collection::vec(any::<u32>(), 0..=6),
    )
        .prop_map(|(authority, subs)| Sid { authority, subs })
}

fn arb_ace(sddl_only: bool) -> impl Strategy<Value = Ace> {
    let kinds = prop_oneof![
        Just(AceKind::AccessAllowed),
        Just(AceKind::AccessDenied),
        Just(AceKind::SystemAudit),
        Just(AceKind::AccessAllowedObject),
        Just(AceKind::AccessDeniedObject),
        Just(AceKind::SystemAuditObject),
    ];
    let flags = if sddl_only {
        any::<u8>().prop_map(|f| f & !0x20).boxed()
    } else {
        any::<u8>().boxed()
    };
    let known = (
        kinds,
        flags,
        any::<u32>(),
        arb_sid(),
        proptest::option::of(any::<[u8; 16]>()),
        proptest::option::of(any::<[u8; 16]>()),
        proptest::collection::vec(any::<u8>(), 0..if sddl_only { 1 } else { 12 }),
    )
        .prop_map(|(kind, flags, mask, sid, o, i, data)| {
            let object = kind.is_object();
            Ace {
                kind,
                flags,
                mask,
                sid,
                object_type: o.filter(|_| object),
                inherited_object_type: i.filter(|_| object),
                application_data: data,
            }
        });
    if sddl_only {
        return known.boxed();
    }
    let unknown = (
        prop_oneof![3u8..=4, 8u8..=255],
        any::<u8>(),
        proptest::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(ace_type, flags, body)| Ace {
            kind: AceKind::Unknown { ace_type, body },
            flags,
            mask: 0,
            sid: Sid {
                authority: 0,
                subs: vec![0],
            },
            object_type: None,
            inherited_object_type: None,
            application_data: Vec::new(),
        });
    prop_oneof![4 => known, 1 => unknown].boxed()
}

fn arb_acl(sddl_only: bool) -> impl Strategy<Value = Acl> {
    (
        any::<u8>(),
        proptest::collection::vec(arb_ace(sddl_only), 0..8),
    )
        .prop_map(move |(revision, aces)| {
            if sddl_only {
                Acl::new(aces)
            } else {
                Acl { revision, aces }
            }
        })
}

fn arb_sd(sddl_only: bool) -> impl Strategy<Value = SecurityDescriptor> {
    (
        any::<u16>(),
        proptest::option::of(arb_sid()),
        proptest::option::of(arb_sid()),
        proptest::option::of(arb_acl(sddl_only)),
        proptest::option::of(arb_acl(sddl_only)),
    )
        .prop_map(move |(c, owner, group, sacl, dacl)| {
            let control = if sddl_only {
                // Only what SDDL carries: the PRESENT bits in step with the ACLs and
                // the P/AR/AI flags of an ACL that is there.
                let mut k = control::SE_SELF_RELATIVE;
                if dacl.is_some() {
                    k |= control::SE_DACL_PRESENT | (c & 0x1500);
                }
                if sacl.is_some() {
                    k |= control::SE_SACL_PRESENT | (c & 0x2a00);
                }
                k
            } else {
                c
            };
            SecurityDescriptor {
                control,
                owner,
                group,
                sacl,
                dacl,
            }
        })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = SecurityDescriptor::from_bytes(&bytes);
    }

    #[test]
    fn mutated_descriptors_never_panic(
        edits in proptest::collection::vec((0usize..0xb0, any::<u8>()), 1..6),
        cut in 0usize..0xb0,
    ) {
        let mut b = hex(MS_DTYP_BYTES);
        for (at, v) in edits {
            if let Some(x) = b.get_mut(at) {
                *x = v;
            }
        }
        let _ = SecurityDescriptor::from_bytes(&b);
        b.truncate(cut);
        let _ = SecurityDescriptor::from_bytes(&b);
    }

    #[test]
    fn encode_decode_round_trip(sd in arb_sd(false)) {
        let bytes = sd.to_bytes().unwrap();
        let back = SecurityDescriptor::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&back, &sd);
        prop_assert_eq!(back.to_bytes().unwrap(), bytes);
        let other = sd.to_bytes_in(Layout::OwnerFirst).unwrap();
        prop_assert_eq!(SecurityDescriptor::from_bytes(&other).unwrap(), sd);
    }

    #[test]
    fn sddl_print_parse_round_trip(sd in arb_sd(true)) {
        let dom = sid("S-1-5-21-1-2-3");
        let text = sd.to_sddl(&dom).unwrap();
        let back = SecurityDescriptor::from_sddl(&text, &dom).unwrap();
        prop_assert_eq!(back, sd, "{}", text);
    }

    #[test]
    fn arbitrary_sddl_never_panics(text in "[OGDS:()PAIRNO_;A-Za-z0-9 -]{0,80}") {
        let _ = sddl::parse(&text, &sid("S-1-5-21-1-2-3"));
    }

    #[test]
    fn access_checks_never_exceed_the_request(
        sd in arb_sd(false),
        desired in any::<u32>(),
        groups in proptest::collection::vec(arb_sid(), 0..4),
    ) {
        let token = Token::new(sid("S-1-5-21-1-2-3-1105"), groups);
        let check = AccessCheck::new(&token);
        let mut want = map_generic(desired & !MAXIMUM_ALLOWED) & !ACCESS_SYSTEM_SECURITY;
        if desired & MAXIMUM_ALLOWED != 0 {
            want |= DS_GENERIC_ALL;
        }
        prop_assert_eq!(check.granted(&sd, desired) & !want, 0);
        let mut list = ObjectTypeList::new([7; 16]);
        list.add_property_set([8; 16], &[[9; 16], [10; 16]]);
        let access = check.evaluate(&sd, desired, &list);
        prop_assert!(access.granted_list().iter().all(|g| g & !want == 0));
    }
}

// ---------------------------------------------------------------------------------
// SDDL against AD's default security descriptors
// ---------------------------------------------------------------------------------

/// Windows' canonical form of an SDDL string, computed independently of the module:
/// sections in O, G, D, S order, ACL flags as P AR AI, ACE flags and rights aliases
/// deduplicated and in bit order, letters upper-case, GUIDs lower-case, no white space.
fn windows_canonical(text: &str) -> String {
    const FLAGS: [&str; 7] = ["OI", "CI", "NP", "IO", "ID", "SA", "FA"];
    const RIGHTS: [&str; 17] = [
        "CC", "DC", "LC", "SW", "RP", "WP", "DT", "LO", "CR", "SD", "RC", "WD", "WO", "GA", "GX",
        "GW", "GR",
    ];
    let pairs = |s: &str| -> Vec<String> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        s.as_bytes()
            .chunks(2)
            .map(|c| String::from_utf8_lossy(c).to_ascii_uppercase())
            .collect()
    };
    let ordered = |have: Vec<String>, order: &[&str]| -> String {
        order
            .iter()
            .filter(|o| have.iter().any(|h| h == *o))
            .copied()
            .collect()
    };
    let mut sections: Vec<(char, String)> = Vec::new();
    let t: String = text.trim().to_string();
    let b = t.as_bytes();
    let mut i = 0;
    let mut depth = 0;
    let mut start = 0;
    let mut tag = ' ';
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            c if depth == 0 && b.get(i + 1) == Some(&b':') && b"OGDS".contains(&c) => {
                if tag != ' ' {
                    sections.push((tag, t[start..i].to_string()));
                }
                tag = char::from(c);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    sections.push((tag, t[start..].to_string()));
    let mut out = String::new();
    for want in ['O', 'G', 'D', 'S'] {
        for (tag, body) in sections.iter().filter(|(t, _)| *t == want) {
            out.push(*tag);
            out.push(':');
            if matches!(tag, 'O' | 'G') {
                out.push_str(body.trim());
                continue;
            }
            let (flags, aces) = body.split_at(body.find('(').unwrap_or(body.len()));
            let flags: String = flags.chars().filter(|c| !c.is_whitespace()).collect();
            for f in ["P", "AR", "AI"] {
                if flags.replace("AR", "").replace("AI", "").contains('P') && f == "P"
                    || f != "P" && flags.contains(f)
                {
                    out.push_str(f);
                }
            }
            for ace in aces.split('(').map(str::trim).filter(|a| !a.is_empty()) {
                let ace = ace.trim_end_matches(')');
                let f: Vec<&str> = ace.split(';').map(str::trim).collect();
                out.push('(');
                out.push_str(&f[0].to_ascii_uppercase());
                out.push(';');
                out.push_str(&ordered(pairs(f[1]), &FLAGS));
                out.push(';');
                out.push_str(&ordered(pairs(f[2]), &RIGHTS));
                out.push(';');
                out.push_str(&f[3].to_ascii_lowercase());
                out.push(';');
                out.push_str(&f[4].to_ascii_lowercase());
                out.push(';');
                out.push_str(f[5]);
                out.push(')');
            }
        }
    }
    out
}

/// Every `defaultSecurityDescriptor` of the schema files Windows Server publishes (as
/// Debian's samba-ad-provision installs them), with the file each came from.
fn schema_file_defaults() -> Vec<(String, String)> {
    let dir = Path::new(DEFAULT_SCHEMA_DIR);
    assert!(
        dir.is_dir(),
        "{DEFAULT_SCHEMA_DIR} is missing: install Debian's samba-ad-provision package"
    );
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("ldf") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&path).unwrap();
        for rec in parse_ldif(&text, &name).unwrap() {
            for (v, _) in rec.all("defaultSecurityDescriptor") {
                out.push((name.clone(), String::from_utf8(v.to_vec()).unwrap()));
            }
        }
    }
    out
}

#[test]
fn every_default_security_descriptor_parses_and_prints_canonically() {
    // A domain none of the files' literal SIDs belongs to, so they print as SIDs.
    let dom = sid("S-1-5-21-1004336348-1177238915-682003330");
    let values = schema_file_defaults();
    assert!(values.len() > 1000, "{}", values.len());
    let mut seen = std::collections::BTreeSet::new();
    for (file, text) in &values {
        let sd = SecurityDescriptor::from_sddl(text, &dom)
            .unwrap_or_else(|e| panic!("{file}: {e}: {text}"));
        let printed = sd.to_sddl(&dom).unwrap();
        assert_eq!(printed, windows_canonical(text), "{file}");
        assert_eq!(SecurityDescriptor::from_sddl(&printed, &dom).unwrap(), sd);
        let bytes = sd.to_bytes().unwrap();
        assert_eq!(SecurityDescriptor::from_bytes(&bytes).unwrap(), sd);
        seen.insert(printed);
    }
    assert!(seen.len() > 40, "{}", seen.len());
    // The classic user default, as Windows prints it.
    let user = Schema::builtin();
    let user = user
        .class("user")
        .unwrap()
        .default_security_descriptor
        .clone()
        .unwrap();
    let printed = SecurityDescriptor::from_sddl(&user, &dom)
        .unwrap()
        .to_sddl(&dom)
        .unwrap();
    assert!(
        printed.starts_with("D:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DA)"),
        "{printed}"
    );
    assert!(printed.contains("(A;;LCRPLORC;;;PS)"), "{printed}");
}

#[test]
fn builtin_schema_defaults_parse() {
    let dom = sid("S-1-5-21-1-2-3");
    let s = Schema::builtin();
    let mut n = 0;
    for c in s.classes() {
        if let Some(text) = &c.default_security_descriptor {
            let sd = SecurityDescriptor::from_sddl(text, &dom)
                .unwrap_or_else(|e| panic!("{}: {e}", c.ldap_name));
            assert_eq!(sd.to_sddl(&dom).unwrap(), windows_canonical(text));
            n += 1;
        }
    }
    assert!(n > 50, "{n}");
}

#[test]
fn sddl_aliases_of_the_domain_and_forest() {
    let dom = sid("S-1-5-21-1-2-3");
    let root = sid("S-1-5-21-7-8-9");
    let sd = sddl::parse_in_forest(
        "O:DAG:DUD:(A;;RP;;;EA)(A;;RP;;;SA)(A;;RP;;;RO)(A;;RP;;;EK)(A;;RP;;;DD)(A;;RP;;;DC)\
         (A;;RP;;;CA)(A;;RP;;;RS)(A;;RP;;;LA)(A;;RP;;;ER)(A;;RP;;;ED)",
        &dom,
        &root,
    )
    .unwrap();
    let sids: Vec<String> = sd
        .dacl
        .as_ref()
        .unwrap()
        .aces
        .iter()
        .map(|a| a.sid.to_string())
        .collect();
    assert_eq!(
        sids,
        [
            "S-1-5-21-7-8-9-519",
            "S-1-5-21-7-8-9-518",
            "S-1-5-21-7-8-9-498",
            "S-1-5-21-7-8-9-527",
            "S-1-5-21-1-2-3-516",
            "S-1-5-21-1-2-3-515",
            "S-1-5-21-1-2-3-517",
            "S-1-5-21-1-2-3-553",
            "S-1-5-21-1-2-3-500",
            "S-1-5-32-573",
            "S-1-5-9",
        ]
    );
    assert_eq!(sd.owner, Some(dom.with_rid(512)));
    // In another domain the same SIDs print as numbers.
    let printed = sddl::print(&sd, &sid("S-1-5-21-4-5-6")).unwrap();
    assert!(printed
        .starts_with("O:S-1-5-21-1-2-3-512G:S-1-5-21-1-2-3-513D:(A;;RP;;;S-1-5-21-7-8-9-519)"));
    assert_eq!(sddl::format_sid(&sid("S-1-5-21-1-2-3-512"), &dom), "DA");
}

// ---------------------------------------------------------------------------------
// Access checks
// ---------------------------------------------------------------------------------

fn domain() -> Sid {
    sid("S-1-5-21-1-2-3")
}

fn sd(text: &str) -> SecurityDescriptor {
    SecurityDescriptor::from_sddl(text, &domain()).unwrap()
}

/// A domain user (RID 1105) with the groups a logon adds.
fn user() -> Token {
    let d = domain();
    Token::new(
        d.with_rid(1105),
        [
            d.with_rid(513),
            well_known::world(),
            well_known::authenticated_users(),
        ],
    )
}

const USER_CLASS: &str = "bf967aba-0de6-11d0-a285-00aa003049e2";
/// The Personal-Information property set and two of its properties.
const PERSONAL_INFO: &str = "77b5b886-944a-11d1-aebd-0000f80367c1";
const TELEPHONE: &str = "bf967a49-0de6-11d0-a285-00aa003049e2";
const STREET: &str = "bf967a3a-0de6-11d0-a285-00aa003049e2";
/// The Public-Information property set and one of its properties.
const PUBLIC_INFO: &str = "e48d0154-bcf8-11d1-8702-00c04fb96050";
const UPN: &str = "28630ebb-41d5-11d1-a9c1-0000f80367c1";
/// User-Change-Password, an extended right.
const CHANGE_PASSWORD: &str = "ab721a53-1e2f-11d0-9819-00aa0040529b";

fn user_list() -> ObjectTypeList {
    let mut l = ObjectTypeList::new(guid(USER_CLASS));
    l.add_property_set(guid(PERSONAL_INFO), &[guid(TELEPHONE), guid(STREET)]);
    l.add_property_set(guid(PUBLIC_INFO), &[guid(UPN)]);
    l.add(guid(CHANGE_PASSWORD));
    l
}

#[test]
fn deny_ace_before_allow_ace_wins_and_order_matters() {
    let t = user();
    let c = AccessCheck::new(&t);
    let rpwp = RIGHT_DS_READ_PROPERTY | RIGHT_DS_WRITE_PROPERTY;
    assert_eq!(
        c.granted(&sd("D:(D;;WP;;;DU)(A;;RPWP;;;AU)"), rpwp),
        RIGHT_DS_READ_PROPERTY
    );
    assert_eq!(c.granted(&sd("D:(A;;RPWP;;;AU)(D;;WP;;;DU)"), rpwp), rpwp);
    // A deny for someone else changes nothing.
    assert_eq!(c.granted(&sd("D:(D;;WP;;;DA)(A;;RPWP;;;AU)"), rpwp), rpwp);
    // MAXIMUM_ALLOWED reports everything granted.
    assert_eq!(
        c.granted(&sd("D:(D;;SD;;;WD)(A;;GA;;;AU)"), MAXIMUM_ALLOWED),
        DS_GENERIC_ALL & !RIGHT_DELETE
    );
}

#[test]
fn object_ace_for_one_property() {
    let t = user();
    let c = AccessCheck::new(&t);
    let list = user_list();
    let d = sd(&format!("D:(OA;;RP;{TELEPHONE};;AU)"));
    let a = c.evaluate(&d, RIGHT_DS_READ_PROPERTY, &list);
    assert_eq!(
        a.granted_for(&guid(TELEPHONE)),
        Some(RIGHT_DS_READ_PROPERTY)
    );
    assert_eq!(a.granted_for(&guid(STREET)), Some(0));
    assert_eq!(a.granted_for(&guid(PERSONAL_INFO)), Some(0));
    assert_eq!(a.granted_for(&guid(UPN)), Some(0));
    assert_eq!(a.granted(), 0);
    // Without a list, typed object ACEs do not count.
    assert_eq!(c.granted(&d, RIGHT_DS_READ_PROPERTY), 0);
    // Grants do not flow upwards: the set is not granted because the properties
    // listed under it are.
    let d = sd(&format!("D:(OA;;RP;{TELEPHONE};;AU)(OA;;RP;{STREET};;AU)"));
    let a = c.evaluate(&d, RIGHT_DS_READ_PROPERTY, &list);
    assert_eq!(a.granted_for(&guid(PERSONAL_INFO)), Some(0));
    assert_eq!(a.granted_for(&guid(STREET)), Some(RIGHT_DS_READ_PROPERTY));
    assert_eq!(a.granted(), 0);
}

#[test]
fn object_ace_for_a_property_set_and_the_class() {
    let t = user();
    let c = AccessCheck::new(&t);
    let list = user_list();
    let d = sd(&format!(
        "D:(OD;;RP;{STREET};;AU)(OA;;RPWP;{PERSONAL_INFO};;AU)"
    ));
    let a: Access<'_> = c.evaluate(&d, RIGHT_DS_READ_PROPERTY | RIGHT_DS_WRITE_PROPERTY, &list);
    assert_eq!(a.granted_for(&guid(TELEPHONE)), Some(0x30));
    assert_eq!(a.granted_for(&guid(STREET)), Some(RIGHT_DS_WRITE_PROPERTY));
    assert_eq!(a.granted_for(&guid(PERSONAL_INFO)), Some(0x30));
    assert_eq!(a.granted_for(&guid(UPN)), Some(0));
    assert!(a.allows(&guid(TELEPHONE), RIGHT_DS_READ_PROPERTY));
    assert!(!a.allows(&guid(STREET), RIGHT_DS_READ_PROPERTY));
    // An object ACE naming the object's class covers the whole object.
    let d = sd(&format!("D:(OA;;RP;{USER_CLASS};;AU)"));
    let a = c.evaluate(&d, RIGHT_DS_READ_PROPERTY, &list);
    assert!(a
        .granted_list()
        .iter()
        .all(|g| *g == RIGHT_DS_READ_PROPERTY));
    assert_eq!(
        c.granted_for_class(&d, RIGHT_DS_READ_PROPERTY, &guid(USER_CLASS)),
        RIGHT_DS_READ_PROPERTY
    );
    // An object ACE without a type is a plain ACE.
    assert_eq!(
        c.granted(&sd("D:(OA;;RP;;;AU)"), RIGHT_DS_READ_PROPERTY),
        RIGHT_DS_READ_PROPERTY
    );
    // An extended right.
    let d = sd(&format!("D:(OA;;CR;{CHANGE_PASSWORD};;WD)"));
    let a = c.evaluate(&d, RIGHT_DS_CONTROL_ACCESS, &list);
    assert!(a.allows(&guid(CHANGE_PASSWORD), RIGHT_DS_CONTROL_ACCESS));
    assert!(!a.allows(&guid(UPN), RIGHT_DS_CONTROL_ACCESS));
}

#[test]
fn inherit_only_and_audit_aces_are_ignored() {
    let t = user();
    let c = AccessCheck::new(&t);
    assert_eq!(
        c.granted(&sd("D:(A;CIIO;RP;;;AU)"), RIGHT_DS_READ_PROPERTY),
        0
    );
    assert_eq!(
        c.granted(&sd("D:(D;IO;RP;;;AU)(A;;RP;;;AU)"), RIGHT_DS_READ_PROPERTY),
        RIGHT_DS_READ_PROPERTY
    );
    assert_eq!(
        c.granted(&sd("D:(AU;SA;RP;;;AU)"), RIGHT_DS_READ_PROPERTY),
        0
    );
    // Inherited ACEs count like explicit ones.
    assert_eq!(
        c.granted(&sd("D:(A;ID;RP;;;AU)"), RIGHT_DS_READ_PROPERTY),
        RIGHT_DS_READ_PROPERTY
    );
}

#[test]
fn owner_implicit_rights() {
    let d = domain();
    let t = user();
    let owned = |dacl: &str| sd(&format!("O:{}{dacl}", d.with_rid(1105)));
    let c = AccessCheck::new(&t);
    let rc_wd = RIGHT_READ_CONTROL | RIGHT_WRITE_DAC;
    // Granted before the ACEs: a deny cannot take them away.
    assert_eq!(
        c.granted(&owned("D:(D;;RCWD;;;AU)"), rc_wd | RIGHT_WRITE_OWNER),
        rc_wd
    );
    assert_eq!(c.granted(&owned("D:"), MAXIMUM_ALLOWED), rc_wd);
    // An OWNER RIGHTS ACE replaces them.
    assert_eq!(
        c.granted(&owned("D:(A;;RC;;;OW)"), rc_wd),
        RIGHT_READ_CONTROL
    );
    assert_eq!(
        c.granted(&owned("D:(A;;RPWD;;;OW)"), MAXIMUM_ALLOWED),
        RIGHT_DS_READ_PROPERTY | RIGHT_WRITE_DAC
    );
    // … unless it is inherit-only.
    assert_eq!(c.granted(&owned("D:(A;CIIO;RC;;;OW)"), rc_wd), rc_wd);
    // OWNER RIGHTS never applies to someone who is not the owner.
    assert_eq!(c.granted(&sd("O:DAD:(A;;RC;;;OW)"), rc_wd), 0);
    // AD's blocked implicit owner rights.
    let c = AccessCheck::new(&t).with_owner_rights(OwnerRights::ReadControl);
    assert_eq!(c.granted(&owned("D:"), rc_wd), RIGHT_READ_CONTROL);
}

#[test]
fn no_dacl_grants_everything_and_an_empty_one_nothing() {
    let t = user();
    let c = AccessCheck::new(&t);
    assert_eq!(
        c.granted(&sd("O:DAG:DA"), RIGHT_DS_WRITE_PROPERTY),
        RIGHT_DS_WRITE_PROPERTY
    );
    assert_eq!(
        c.granted(&sd("D:NO_ACCESS_CONTROL"), GENERIC_ALL),
        DS_GENERIC_ALL
    );
    assert_eq!(c.granted(&sd("D:"), GENERIC_READ), 0);
    let list = user_list();
    let a = c.evaluate(&sd("D:NO_ACCESS_CONTROL"), RIGHT_DS_READ_PROPERTY, &list);
    assert!(a
        .granted_list()
        .iter()
        .all(|g| *g == RIGHT_DS_READ_PROPERTY));
    // The SACL right comes from a privilege, never from a descriptor.
    assert_eq!(
        c.granted(&sd("D:NO_ACCESS_CONTROL"), ACCESS_SYSTEM_SECURITY),
        0
    );
    assert_eq!(
        c.granted(&sd("D:(A;;0x1000000;;;WD)"), ACCESS_SYSTEM_SECURITY),
        0
    );
}

#[test]
fn principal_self_stands_for_the_object() {
    let d = domain();
    let t = user();
    let desc = sd("D:(A;;WP;;;PS)");
    let me = d.with_rid(1105);
    let other = d.with_rid(1106);
    let c = AccessCheck::new(&t);
    assert_eq!(c.granted(&desc, RIGHT_DS_WRITE_PROPERTY), 0);
    assert_eq!(
        c.with_self(Some(&me))
            .granted(&desc, RIGHT_DS_WRITE_PROPERTY),
        RIGHT_DS_WRITE_PROPERTY
    );
    assert_eq!(
        c.with_self(Some(&other))
            .granted(&desc, RIGHT_DS_WRITE_PROPERTY),
        0
    );
    // A group the caller is in counts as self too (a group object's own SID).
    let group = d.with_rid(513);
    assert_eq!(
        c.with_self(Some(&group))
            .granted(&desc, RIGHT_DS_WRITE_PROPERTY),
        RIGHT_DS_WRITE_PROPERTY
    );
}

#[test]
fn generic_rights_are_mapped_on_both_sides() {
    let t = user();
    let c = AccessCheck::new(&t);
    assert_eq!(
        c.granted(&sd("D:(A;;GR;;;AU)"), GENERIC_READ),
        DS_GENERIC_READ
    );
    assert_eq!(
        c.granted(&sd("D:(A;;GR;;;AU)"), RIGHT_DS_LIST_CONTENTS),
        RIGHT_DS_LIST_CONTENTS
    );
    assert_eq!(
        c.granted(&sd("D:(A;;LCRPLORC;;;AU)"), GENERIC_READ),
        DS_GENERIC_READ
    );
    assert_eq!(
        c.granted(&sd("D:(A;;GA;;;AU)"), MAXIMUM_ALLOWED),
        DS_GENERIC_ALL
    );
}

#[test]
fn access_to_a_real_dns_node() {
    // The DC=gc dnsNode of Samba's provision (see samba_provision_descriptors_round_trip).
    let node = SecurityDescriptor::from_bytes(&b64(SAMBA_DNSNODE)).unwrap();
    let d = samba_domain();
    let anonymous = Token::new(well_known::anonymous(), [well_known::world()]);
    let c = AccessCheck::new(&anonymous);
    assert_eq!(
        c.granted(&node, RIGHT_DS_READ_PROPERTY),
        RIGHT_DS_READ_PROPERTY
    );
    assert_eq!(c.granted(&node, RIGHT_DS_WRITE_PROPERTY), 0);
    let admin = Token::new(
        d.with_rid(500),
        [d.with_rid(512), d.with_rid(513), well_known::world()],
    );
    assert_eq!(
        AccessCheck::new(&admin).granted(&node, GENERIC_ALL),
        DS_GENERIC_ALL
    );
    let plain = Token::new(
        d.with_rid(1105),
        [
            d.with_rid(513),
            well_known::world(),
            well_known::authenticated_users(),
        ],
    );
    assert_eq!(
        AccessCheck::new(&plain).granted(&node, MAXIMUM_ALLOWED),
        RIGHT_DS_LIST_CONTENTS | RIGHT_DS_READ_PROPERTY | RIGHT_DS_LIST_OBJECT | RIGHT_READ_CONTROL
    );
}

#[test]
fn object_type_lists_are_built_in_order() {
    let mut l = ObjectTypeList::new([1; 16]);
    assert!(l.push(2, [2; 16]).is_err());
    assert!(l.push(0, [2; 16]).is_err());
    assert_eq!(l.push(1, [2; 16]).unwrap(), 1);
    assert_eq!(l.push(2, [3; 16]).unwrap(), 2);
    assert_eq!(l.push(1, [4; 16]).unwrap(), 3);
    assert_eq!(l.len(), 4);
    assert_eq!(l.position(&[4; 16]), Some(3));
}

// ---------------------------------------------------------------------------------
// Inheritance
// ---------------------------------------------------------------------------------

const GROUP_CLASS: &str = "bf967a9c-0de6-11d0-a285-00aa003049e2";
const OU_CLASS: &str = "bf967aa5-0de6-11d0-a285-00aa003049e2";

fn text(sd: &SecurityDescriptor) -> String {
    sd.to_sddl(&domain()).unwrap()
}

/// A child of class `class` under `parent`, from the creator's descriptor `creator`,
/// created by a member of Domain Admins (so owned by DA, MS-ADTS 6.1.3.7).
fn child(parent: &SecurityDescriptor, creator: &str, class: &str) -> SecurityDescriptor {
    let d = domain();
    let creator = sd(creator);
    create_descriptor_with(
        Some(parent),
        Some(&creator),
        &d.with_rid(512),
        &d.with_rid(512),
        &[guid(class)],
        true,
    )
}

/// The cases below follow Samba's `source4/dsdb/tests/python/sec_descriptor.py`
/// (test_209 … test_217 and the *_on_attribute / objectclass tests), which Samba runs
/// against Windows DCs as well as its own.
#[test]
fn creator_owner_is_split_into_effective_and_inherit_only_aces() {
    // test_209: a CO ACE on the parent reaches a child owned by AU.
    let parent = sd("O:DAG:DAD:P(D;CI;WP;;;CO)");
    let d = domain();
    let creator = sd("O:AUG:AUD:AI(A;;CC;;;AU)");
    let c = create_descriptor_with(
        Some(&parent),
        Some(&creator),
        &d.with_rid(512),
        &d.with_rid(512),
        &[guid(GROUP_CLASS)],
        true,
    );
    let s = text(&c);
    assert_eq!(
        s,
        "O:AUG:AUD:AI(A;;CC;;;AU)(D;ID;WP;;;AU)(D;CIIOID;WP;;;CO)"
    );
    // test_211: a CO ACE in the creator's own descriptor.
    let c = child(&sd("D:P"), "D:(D;CI;WP;;;CO)", GROUP_CLASS);
    let s = text(&c);
    assert!(
        s.contains("(D;;WP;;;DA)") && s.contains("(D;CIIO;WP;;;CO)"),
        "{s}"
    );
    // test_212: an inherit-only one stays as it is.
    let s = text(&child(&sd("D:P"), "D:(D;CIIO;WP;;;CO)", GROUP_CLASS));
    assert!(
        s.contains("(D;CIIO;WP;;;CO)") && !s.contains("(D;;WP;;;DA)"),
        "{s}"
    );
    assert!(!s.contains("(D;CIIO;WP;;;CO)(D;CIIO;WP;;;CO)"), "{s}");
    // test_213: inherit-only without inheritance flags is dropped.
    assert!(!text(&child(&sd("D:P"), "D:(D;IO;WP;;;DA)", GROUP_CLASS)).contains("WP"));
}

#[test]
fn generic_rights_are_expanded() {
    // test_214.
    let top = sd("D:P(A;CI;WPRPLCCCDCWDRCSD;;;DA)");
    let ou1 = child(&top, "D:(A;CI;GA;;;DU)", OU_CLASS);
    let s = text(&ou1);
    assert!(
        s.contains("(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DU)") && s.contains("(A;CIIO;GA;;;DU)"),
        "{s}"
    );
    let ou2 = child(&top, "D:(A;CIIO;GA;;;DU)", OU_CLASS);
    let s = text(&ou2);
    assert!(
        !s.contains("(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DU)") && s.contains("(A;CIIO;GA;;;DU)"),
        "{s}"
    );
    let s = text(&child(&top, "D:(A;;GA;;;DU)", OU_CLASS));
    assert!(
        s.contains("(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DU)") && !s.contains("(A;CIIO;GA;;;DU)"),
        "{s}"
    );
    let s = text(&child(&top, "D:(A;IO;GA;;;DU)", OU_CLASS));
    assert!(!s.contains("DU"), "{s}");
    for parent in [&ou1, &ou2] {
        let s = text(&child(parent, "D:", OU_CLASS));
        assert!(
            s.contains("(A;ID;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DU)")
                && s.contains("(A;CIIOID;GA;;;DU)"),
            "{s}"
        );
    }
    // test_215: the IO flag is gone in the child.
    let ou1 = child(&top, "D:(A;CIIO;WP;;;DU)", OU_CLASS);
    let s = text(&child(&ou1, "D:", OU_CLASS));
    assert!(
        s.contains("(A;CIID;WP;;;DU)") && !s.contains("(A;CIIOID;WP;;;DU)"),
        "{s}"
    );
}

#[test]
fn inherited_marks_from_the_creator() {
    let ou = sd("D:P(A;;WPRPLCCCDCWDRCSD;;;DA)");
    // test_216: ID ACEs the creator supplies are dropped…
    let s = text(&child(&ou, "D:(D;ID;WP;;;AU)", GROUP_CLASS));
    assert!(!s.contains(";;;AU)"), "{s}");
    // test_210 likewise.
    let s = text(&child(&ou, "D:(D;CIIO;WP;;;CO)(A;ID;WP;;;AU)", GROUP_CLASS));
    assert!(!s.contains("(A;ID;WP;;;AU)"), "{s}");
    // test_217: … unless the DACL is protected, which turns them into explicit ACEs.
    let s = text(&child(&ou, "D:P(A;ID;WP;;;AU)", GROUP_CLASS));
    assert!(
        s.contains("(A;;WP;;;AU)") && !s.contains("(A;ID;WP;;;AU)"),
        "{s}"
    );
}

#[test]
fn object_aces_and_no_propagate() {
    let parent = |ace: &str| sd(&format!("O:DAG:DAD:P{ace}"));
    let attr = "bf967a0e-0de6-11d0-a285-00aa003049e2";
    // test_ci_and_io_on_attribute.
    let s = text(&child(
        &parent(&format!("(OA;CIOI;WP;{attr};;DU)")),
        "D:",
        GROUP_CLASS,
    ));
    assert!(s.contains(&format!("(OA;OICIID;WP;{attr};;DU)")), "{s}");
    // test_ci_and_np_on_attribute: NO_PROPAGATE leaves an effective copy only.
    let s = text(&child(
        &parent(&format!("(OA;CINP;WP;{attr};;DU)")),
        "D:",
        GROUP_CLASS,
    ));
    assert!(s.contains(&format!("(OA;ID;WP;{attr};;DU)")), "{s}");
    // test_oi_and_np_on_attribute: OI|NP does not reach a container at all.
    let s = text(&child(
        &parent(&format!("(OA;OINP;WP;{attr};;DU)")),
        "D:",
        GROUP_CLASS,
    ));
    assert!(!s.contains(attr), "{s}");
    // test_ci_ga_no_attr_objectclass_same / _different.
    let p = parent(&format!("(OA;CI;GA;;{GROUP_CLASS};DA)"));
    let s = text(&child(&p, "D:", GROUP_CLASS));
    assert!(s.contains("(A;ID;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DA)"), "{s}");
    assert!(
        s.contains(&format!("(OA;CIIOID;GA;;{GROUP_CLASS};DA)")),
        "{s}"
    );
    let s = text(&child(&p, "D:", OU_CLASS));
    assert!(!s.contains("(A;ID;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DA)"), "{s}");
    assert!(
        s.contains(&format!("(OA;CIIOID;GA;;{GROUP_CLASS};DA)")),
        "{s}"
    );
    // Superclasses do not match an inherited object type: a computer is a user, but
    // an ACE for users only does not apply to it.
    let p = parent(&format!("(OA;CI;RP;{attr};{USER_CLASS};AU)"));
    let computer = "bf967a86-0de6-11d0-a285-00aa003049e2";
    let s = text(&child(&p, "D:", computer));
    assert!(
        s.contains(&format!("(OA;CIIOID;RP;{attr};{USER_CLASS};AU)")),
        "{s}"
    );
    let s = text(&child(&p, "D:", USER_CLASS));
    assert!(
        s.contains(&format!("(OA;CIID;RP;{attr};{USER_CLASS};AU)")),
        "{s}"
    );
    // … and an auxiliary class counts.
    let d = domain();
    let c = create_descriptor_with(
        Some(&p),
        Some(&sd("D:")),
        &d.with_rid(512),
        &d.with_rid(512),
        &[guid(computer), guid(USER_CLASS)],
        true,
    );
    assert!(text(&c).contains("(OA;CIID;RP;"));
}

#[test]
fn non_containers_take_object_inherit_aces_only() {
    let d = domain();
    let p = sd("O:DAG:DAD:P(A;CI;RP;;;AU)(A;OI;WP;;;AU)(A;OICI;CR;;;AU)");
    let leaf = create_descriptor_with(
        Some(&p),
        None,
        &d.with_rid(512),
        &d.with_rid(512),
        &[[0; 16]],
        false,
    );
    assert_eq!(
        text(&leaf),
        "O:DAG:DAD:AI(A;OIID;WP;;;AU)(A;OICIID;CR;;;AU)"
    );
    let container = create_descriptor_with(
        Some(&p),
        None,
        &d.with_rid(512),
        &d.with_rid(512),
        &[[0; 16]],
        true,
    );
    assert_eq!(
        text(&container),
        "O:DAG:DAD:AI(A;CIID;RP;;;AU)(A;OIIOID;WP;;;AU)(A;OICIID;CR;;;AU)"
    );
}

#[test]
fn protected_descriptors_inherit_nothing() {
    let d = domain();
    let p = sd("O:DAG:DAD:P(A;CI;RP;;;AU)S:(AU;CISA;WP;;;WD)");
    let c = create_descriptor(
        Some(&p),
        Some("D:P(A;;RC;;;AU)"),
        &d,
        &d.with_rid(1105),
        &d.with_rid(513),
        guid(OU_CLASS),
        true,
    )
    .unwrap();
    assert_eq!(
        text(&c),
        format!(
            "O:{}G:DUD:P(A;;RC;;;AU)S:AI(AU;CIIDSA;WP;;;WD)",
            d.with_rid(1105)
        )
    );
    assert_eq!(c.dacl.as_ref().unwrap().revision, ACL_REVISION_DS);
    // The SACL inherits on its own terms.
    let c = create_descriptor(
        Some(&p),
        Some("D:(A;;RC;;;AU)S:P"),
        &d,
        &d.with_rid(1105),
        &d.with_rid(513),
        guid(OU_CLASS),
        true,
    )
    .unwrap();
    assert_eq!(
        text(&c),
        format!(
            "O:{}G:DUD:AI(A;;RC;;;AU)(A;CIID;RP;;;AU)S:P",
            d.with_rid(1105)
        )
    );
    // No parent: nothing inherited, nothing marked.
    let c = create_descriptor(
        None,
        Some("D:(A;;RC;;;AU)"),
        &d,
        &d.with_rid(512),
        &d.with_rid(512),
        guid(OU_CLASS),
        true,
    )
    .unwrap();
    assert_eq!(text(&c), "O:DAG:DAD:(A;;RC;;;AU)");
    // An owner named by the default wins over the creator's.
    let c = create_descriptor(
        None,
        Some("O:BAG:BAD:"),
        &d,
        &d.with_rid(512),
        &d.with_rid(512),
        guid(OU_CLASS),
        true,
    )
    .unwrap();
    assert_eq!(text(&c), "O:BAG:BAD:");
    assert!(create_descriptor(
        None,
        Some("D:(A;;RC;;;QQ)"),
        &d,
        &d,
        &d,
        guid(OU_CLASS),
        true
    )
    .is_err());
}

#[test]
fn samba_provision_objects_inherit_as_samba_computed() {
    // The dnsZone and dnsNode of samba_provision_descriptors_round_trip were created
    // from their class defaults under their parents: computing them again gives the
    // stored bytes.
    let schema = Schema::load_dir(Path::new(DEFAULT_SCHEMA_DIR)).unwrap();
    let d = samba_domain();
    let container = SecurityDescriptor::from_bytes(&b64(SAMBA_CONTAINER)).unwrap();
    for (parent, value, class) in [
        (&container, SAMBA_DNSZONE, "dnsZone"),
        (
            &SecurityDescriptor::from_bytes(&b64(SAMBA_DNSZONE)).unwrap(),
            SAMBA_DNSNODE,
            "dnsNode",
        ),
    ] {
        let stored = b64(value);
        let want = SecurityDescriptor::from_bytes(&stored).unwrap();
        let class = schema.class(class).unwrap();
        let got = create_descriptor(
            Some(parent),
            class.default_security_descriptor.as_deref(),
            &d,
            want.owner.as_ref().unwrap(),
            want.group.as_ref().unwrap(),
            class.schema_id_guid.unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(got.to_sddl(&d).unwrap(), want.to_sddl(&d).unwrap());
        assert_eq!(got.to_bytes_in(Layout::OwnerFirst).unwrap(), stored);
    }
}

#[test]
fn acl_revisions_follow_windows() {
    let dom = sid("S-1-5-21-1-2-3");
    let plain = SecurityDescriptor::from_sddl("D:(A;;RP;;;WD)", &dom).unwrap();
    assert_eq!(plain.dacl.unwrap().revision, ACL_REVISION);
    let object = SecurityDescriptor::from_sddl("D:(A;;RP;;;WD)(OA;;CR;;;WD)", &dom).unwrap();
    assert_eq!(object.dacl.unwrap().revision, ACL_REVISION_DS);
}
