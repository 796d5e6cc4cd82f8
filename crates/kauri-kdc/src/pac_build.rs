//! The PAC (MS-PAC) of a ticket-granting ticket, built from the account: its logon
//! information with the groups of its token, client information, UPN and DNS
//! information (extended, with sAMAccountName and SID), the attributes saying whether the
//! client asked for a PAC, and the requestor SID.

use kauri_auth::krb::pac::{
    filetime_from_unix, ClientInfo, GroupMembership, KerbValidationInfo, PacAttributes,
    PacContents, PacRequestor, SidAndAttributes, UpnDnsExtension, UpnDnsInfo, FILETIME_NEVER,
    PAC_WAS_GIVEN_IMPLICITLY, PAC_WAS_REQUESTED, SE_GROUP_DEFAULT, UPN_DNS_FLAG_CONSTRUCTED,
};
use kauri_domain::directory::kdc::{KdcAccount, PasswordTimes};
use kauri_domain::directory::DomainInfo;
use kauri_domain::sid::Sid;

/// "Authentication authority asserted identity" (S-1-18-1): the client proved itself to
/// the KDC (MS-KILE), so every PAC Kauri issues carries it.
const AUTHENTICATION_AUTHORITY_ASSERTED: &str = "S-1-18-1";

/// Everything a TGT's PAC says, for one logon.
pub struct PacInput<'a> {
    /// The account.
    pub acct: &'a KdcAccount,
    /// The domain.
    pub domain: &'a DomainInfo,
    /// Every group of the account's token (domain groups become RIDs, others extra SIDs).
    pub groups: &'a [Sid],
    /// When the password may change and must.
    pub times: PasswordTimes,
    /// The ticket's authtime (Unix seconds).
    pub authtime: i64,
    /// The ticket's client name without realm, as in its cname.
    pub client_name: String,
    /// This DC's host name (the logon server).
    pub logon_server: String,
    /// Whether the client asked for the PAC (PA-PAC-REQUEST) or got it by default.
    pub requested: Option<bool>,
}

/// The contents of a TGT's PAC.
pub fn tgt_contents(p: &PacInput<'_>) -> PacContents {
    let a = p.acct;
    let domain_sid = p.domain.sid.to_bytes();
    let mut group_ids = Vec::new();
    let mut extra_sids = Vec::new();
    for g in p.groups {
        match (g.domain(), g.rid()) {
            (Some(d), Some(rid)) if d == p.domain.sid => group_ids.push(GroupMembership {
                relative_id: rid,
                attributes: SE_GROUP_DEFAULT,
            }),
            // Built-in groups are the local machine's business (AD leaves them out).
            _ if g.to_string().starts_with("S-1-5-32-") => {}
            _ => extra_sids.push(SidAndAttributes {
                sid: g.to_bytes(),
                attributes: SE_GROUP_DEFAULT,
            }),
        }
    }
    if let Ok(s) = Sid::parse(AUTHENTICATION_AUTHORITY_ASSERTED) {
        extra_sids.push(SidAndAttributes {
            sid: s.to_bytes(),
            attributes: SE_GROUP_DEFAULT,
        });
    }
    let user_rid = a.sid.as_ref().and_then(Sid::rid).unwrap_or(0);
    let ad_time = |t: i64| -> u64 {
        if t <= 0 {
            0
        } else if t == i64::MAX {
            FILETIME_NEVER
        } else {
            t as u64
        }
    };
    let logon_info = KerbValidationInfo {
        logon_time: filetime_from_unix(p.authtime),
        logoff_time: FILETIME_NEVER,
        kick_off_time: FILETIME_NEVER,
        password_last_set: ad_time(a.pwd_last_set),
        password_can_change: ad_time(p.times.can_change),
        password_must_change: ad_time(p.times.must_change),
        effective_name: a.sam.clone(),
        full_name: a.display_name.clone(),
        logon_script: a.script_path.clone(),
        profile_path: a.profile_path.clone(),
        home_directory: a.home_directory.clone(),
        home_directory_drive: a.home_drive.clone(),
        logon_count: u16::try_from(a.logon_count).unwrap_or(u16::MAX),
        bad_password_count: u16::try_from(a.bad_pwd_count).unwrap_or(u16::MAX),
        user_id: user_rid,
        primary_group_id: a.primary_group_id,
        group_ids,
        user_flags: 0,
        user_session_key: [0; 16],
        logon_server: p.logon_server.clone(),
        logon_domain_name: p.domain.netbios.clone(),
        logon_domain_id: Some(domain_sid),
        reserved1: [0; 2],
        user_account_control: acb_of(a.uac),
        sub_auth_status: 0,
        last_successful_i_logon: 0,
        last_failed_i_logon: 0,
        failed_i_logon_count: 0,
        reserved3: 0,
        extra_sids,
        resource_group_domain_sid: None,
        resource_group_ids: Vec::new(),
    };
    let (upn, flags) = match &a.upn {
        Some(u) => (u.clone(), 0),
        None => (
            format!("{}@{}", a.sam, p.domain.dns_name),
            UPN_DNS_FLAG_CONSTRUCTED,
        ),
    };
    PacContents {
        logon_info,
        client_info: ClientInfo {
            client_id: filetime_from_unix(p.authtime),
            name: p.client_name.clone(),
        },
        upn_dns_info: Some(UpnDnsInfo {
            upn,
            dns_domain_name: p.domain.dns_name.to_ascii_uppercase(),
            flags,
            extension: a.sid.as_ref().map(|s| UpnDnsExtension {
                sam_name: a.sam.clone(),
                sid: s.to_bytes(),
            }),
        }),
        attributes: Some(PacAttributes {
            flags: match p.requested {
                Some(true) => PAC_WAS_REQUESTED,
                Some(false) => 0,
                None => PAC_WAS_GIVEN_IMPLICITLY,
            },
        }),
        requestor: a.sid.as_ref().map(|s| PacRequestor { sid: s.to_bytes() }),
        extra_buffers: Vec::new(),
    }
}

/// The PAC's UserAccountControl is SAMR's account-control bits (MS-SAMR 2.2.1.12), not
/// LDAP's `userAccountControl`: each flag maps to its SAMR counterpart.
pub fn acb_of(uac: u32) -> u32 {
    const MAP: [(u32, u32); 21] = [
        (0x0000_0002, 0x0000_0001), // ACCOUNTDISABLE → DISABLED
        (0x0000_0008, 0x0000_0002), // HOMEDIR_REQUIRED → HOMDIRREQ
        (0x0000_0020, 0x0000_0004), // PASSWD_NOTREQD → PWNOTREQ
        (0x0000_0100, 0x0000_0008), // TEMP_DUPLICATE_ACCOUNT → TEMPDUP
        (0x0000_0200, 0x0000_0010), // NORMAL_ACCOUNT → NORMAL
        (0x0002_0000, 0x0000_0020), // MNS_LOGON_ACCOUNT → MNS
        (0x0000_0800, 0x0000_0040), // INTERDOMAIN_TRUST_ACCOUNT → DOMTRUST
        (0x0000_1000, 0x0000_0080), // WORKSTATION_TRUST_ACCOUNT → WSTRUST
        (0x0000_2000, 0x0000_0100), // SERVER_TRUST_ACCOUNT → SVRTRUST
        (0x0001_0000, 0x0000_0200), // DONT_EXPIRE_PASSWORD → PWNOEXP
        (0x0000_0010, 0x0000_0400), // LOCKOUT → AUTOLOCK
        (0x0000_0080, 0x0000_0800), // ENCRYPTED_TEXT_PWD_ALLOWED
        (0x0004_0000, 0x0000_1000), // SMARTCARD_REQUIRED
        (0x0008_0000, 0x0000_2000), // TRUSTED_FOR_DELEGATION
        (0x0010_0000, 0x0000_4000), // NOT_DELEGATED
        (0x0020_0000, 0x0000_8000), // USE_DES_KEY_ONLY
        (0x0040_0000, 0x0001_0000), // DONT_REQUIRE_PREAUTH
        (0x0080_0000, 0x0002_0000), // PASSWORD_EXPIRED
        (0x0100_0000, 0x0004_0000), // TRUSTED_TO_AUTH_FOR_DELEGATION
        (0x0200_0000, 0x0008_0000), // NO_AUTH_DATA_REQUIRED
        (0x0400_0000, 0x0010_0000), // PARTIAL_SECRETS_ACCOUNT
    ];
    MAP.iter()
        .filter(|(uf, _)| uac & uf != 0)
        .fold(0, |acb, (_, bit)| acb | bit)
}

#[cfg(test)]
mod tests {
    use super::acb_of;

    #[test]
    fn account_control_bits_are_samr_bits() {
        // A normal user; a disabled one; a DC (server trust, trusted for delegation).
        assert_eq!(acb_of(0x200), 0x10);
        assert_eq!(acb_of(0x202), 0x11);
        assert_eq!(acb_of(0x8_2000), 0x2100);
        assert_eq!(acb_of(0x1_0200), 0x210);
    }
}
