//! Shared test helpers: a real HMAC-MD5 PAC signer and sample data.
#![allow(dead_code)]

use hmac::{Hmac, KeyInit, Mac};
use kauri_auth::krb::pac::*;
use md5::{Digest, Md5};

type HmacMd5 = Hmac<Md5>;

/// KERB_CHECKSUM_HMAC_MD5 (RFC 4757 section 4) with key usage 17
/// (KERB_NON_KERB_CKSUM_SALT), keyed with an RC4-HMAC key (the NT hash).
pub struct HmacMd5Signer {
    pub key: [u8; 16],
}

impl HmacMd5Signer {
    pub fn new(key: [u8; 16]) -> Self {
        HmacMd5Signer { key }
    }

    fn ksign_mac(&self) -> HmacMd5 {
        let mut m = HmacMd5::new_from_slice(&self.key).unwrap();
        m.update(b"signaturekey\0");
        let ksign = m.finalize().into_bytes();
        HmacMd5::new_from_slice(&ksign).unwrap()
    }

    fn inner(data: &[u8]) -> Vec<u8> {
        let mut h = Md5::new();
        h.update(17u32.to_le_bytes());
        h.update(data);
        h.finalize().to_vec()
    }
}

impl PacSigner for HmacMd5Signer {
    fn checksum_type(&self) -> i32 {
        KERB_CHECKSUM_HMAC_MD5
    }

    fn sign(&self, data: &[u8]) -> Result<Vec<u8>, PacError> {
        let mut m = self.ksign_mac();
        m.update(&Self::inner(data));
        Ok(m.finalize().into_bytes().to_vec())
    }

    fn verify(&self, checksum_type: i32, data: &[u8], signature: &[u8]) -> Result<(), PacError> {
        if checksum_type != KERB_CHECKSUM_HMAC_MD5 {
            return Err(PacError::UnsupportedChecksum(checksum_type));
        }
        let mut m = self.ksign_mac();
        m.update(&Self::inner(data));
        m.verify_slice(signature)
            .map_err(|_| PacError::ChecksumMismatch)
    }
}

/// A fake "AES" signer (HMAC-MD5 truncated to 12 bytes, type 16) to exercise
/// mixed checksum sizes; only the sizes matter to the PAC code.
pub struct Truncated12Signer(pub HmacMd5Signer);

impl PacSigner for Truncated12Signer {
    fn checksum_type(&self) -> i32 {
        HMAC_SHA1_96_AES256
    }
    fn sign(&self, data: &[u8]) -> Result<Vec<u8>, PacError> {
        Ok(self.0.sign(data)?[..12].to_vec())
    }
    fn verify(&self, checksum_type: i32, data: &[u8], signature: &[u8]) -> Result<(), PacError> {
        if checksum_type != HMAC_SHA1_96_AES256 {
            return Err(PacError::UnsupportedChecksum(checksum_type));
        }
        if self.sign(data)? == signature {
            Ok(())
        } else {
            Err(PacError::ChecksumMismatch)
        }
    }
}

pub fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/pac/{}", env!("CARGO_MANIFEST_DIR"), name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub const DOMAIN_SID: &str = "S-1-5-21-3623811015-3361044348-30300820";

pub fn domain_sid() -> Vec<u8> {
    sid_from_string(DOMAIN_SID).unwrap()
}

/// A realistic logon info with `groups` groups (513 first) and the given
/// extra SIDs.
pub fn sample_logon_info(groups: usize, extra_sids: Vec<SidAndAttributes>) -> KerbValidationInfo {
    let mut group_ids = Vec::with_capacity(groups);
    for i in 0..groups {
        group_ids.push(GroupMembership {
            relative_id: if i == 0 { 513 } else { 1000 + i as u32 },
            attributes: SE_GROUP_DEFAULT,
        });
    }
    let mut user_flags = 0;
    if !extra_sids.is_empty() {
        user_flags |= LOGON_EXTRA_SIDS;
    }
    KerbValidationInfo {
        logon_time: filetime_from_unix(1_700_000_000),
        password_last_set: filetime_from_unix(1_690_000_000),
        password_can_change: filetime_from_unix(1_690_086_400),
        effective_name: "alice".into(),
        full_name: "Alice Example".into(),
        logon_script: "logon.cmd".into(),
        profile_path: "\\\\fs\\profiles\\alice".into(),
        home_directory: "\\\\fs\\home\\alice".into(),
        home_directory_drive: "H:".into(),
        logon_count: 42,
        bad_password_count: 1,
        user_id: 1104,
        primary_group_id: 513,
        group_ids,
        user_flags,
        logon_server: "DC1".into(),
        logon_domain_name: "EXAMPLE".into(),
        logon_domain_id: Some(domain_sid()),
        user_account_control: 0x10,
        extra_sids,
        ..KerbValidationInfo::default()
    }
}

pub fn sample_contents(groups: usize) -> PacContents {
    let dom = domain_sid();
    PacContents {
        logon_info: sample_logon_info(
            groups,
            vec![SidAndAttributes {
                sid: sid_from_string("S-1-18-1").unwrap(),
                attributes: SE_GROUP_DEFAULT,
            }],
        ),
        client_info: ClientInfo {
            client_id: filetime_from_unix(1_700_000_000),
            name: "alice".into(),
        },
        upn_dns_info: Some(UpnDnsInfo {
            upn: "alice@example.com".into(),
            dns_domain_name: "EXAMPLE.COM".into(),
            flags: UPN_DNS_FLAG_EXTENDED,
            extension: Some(UpnDnsExtension {
                sam_name: "alice".into(),
                sid: sid_with_rid(&dom, 1104).unwrap(),
            }),
        }),
        attributes: Some(PacAttributes {
            flags: PAC_WAS_REQUESTED,
        }),
        requestor: Some(PacRequestor {
            sid: sid_with_rid(&dom, 1104).unwrap(),
        }),
        extra_buffers: vec![],
    }
}

pub fn server_signer() -> HmacMd5Signer {
    HmacMd5Signer::new(*b"server-key-16byt")
}

pub fn kdc_signer() -> HmacMd5Signer {
    HmacMd5Signer::new(*b"krbtgt-key-16byt")
}

/// Stand-in for the DER EncTicketPart with the PAC replaced by 0x00; the
/// PAC code treats it as opaque bytes.
pub fn fake_ticket_input() -> Vec<u8> {
    let mut v = vec![0x63, 0x82, 0x01, 0x00];
    v.extend((0..256u32).map(|i| (i * 7) as u8));
    v
}
