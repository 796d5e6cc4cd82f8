//! Assigned numbers: message types, PA-DATA types, AD types, name types,
//! address types, encryption and checksum types, and error codes
//! (RFC 4120 §7.5, RFC 3961/8009, RFC 6113, MS-KILE, MS-SFU).

/// Message types (RFC 4120 §7.5.7), equal to their APPLICATION tags.
pub mod msg_type {
    /// AS-REQ.
    pub const AS_REQ: i32 = 10;
    /// AS-REP.
    pub const AS_REP: i32 = 11;
    /// TGS-REQ.
    pub const TGS_REQ: i32 = 12;
    /// TGS-REP.
    pub const TGS_REP: i32 = 13;
    /// AP-REQ.
    pub const AP_REQ: i32 = 14;
    /// AP-REP.
    pub const AP_REP: i32 = 15;
    /// KRB-SAFE.
    pub const KRB_SAFE: i32 = 20;
    /// KRB-PRIV.
    pub const KRB_PRIV: i32 = 21;
    /// KRB-CRED.
    pub const KRB_CRED: i32 = 22;
    /// EncASRepPart (APPLICATION tag only).
    pub const ENC_AS_REP_PART: i32 = 25;
    /// EncTGSRepPart (APPLICATION tag only).
    pub const ENC_TGS_REP_PART: i32 = 26;
    /// EncAPRepPart (APPLICATION tag only).
    pub const ENC_AP_REP_PART: i32 = 27;
    /// EncKrbPrivPart (APPLICATION tag only).
    pub const ENC_KRB_PRIV_PART: i32 = 28;
    /// EncKrbCredPart (APPLICATION tag only).
    pub const ENC_KRB_CRED_PART: i32 = 29;
    /// KRB-ERROR.
    pub const KRB_ERROR: i32 = 30;
}

/// PA-DATA types (RFC 4120 §7.5.2, RFC 6113, RFC 6806, MS-KILE, MS-SFU).
pub mod padata {
    /// PA-TGS-REQ: AP-REQ authenticating a TGS-REQ.
    pub const PA_TGS_REQ: i32 = 1;
    /// PA-ENC-TIMESTAMP: EncryptedData of PA-ENC-TS-ENC.
    pub const PA_ENC_TIMESTAMP: i32 = 2;
    /// PA-PW-SALT: raw salt (not DER).
    pub const PA_PW_SALT: i32 = 3;
    /// PA-ETYPE-INFO: ETYPE-INFO.
    pub const PA_ETYPE_INFO: i32 = 11;
    /// PA-PK-AS-REQ (PKINIT).
    pub const PA_PK_AS_REQ: i32 = 16;
    /// PA-PK-AS-REP (PKINIT).
    pub const PA_PK_AS_REP: i32 = 17;
    /// PA-ETYPE-INFO2: ETYPE-INFO2.
    pub const PA_ETYPE_INFO2: i32 = 19;
    /// PA-SVR-REFERRAL-INFO / PA-USE-SPECIFIED-KVNO.
    pub const PA_SVR_REFERRAL_INFO: i32 = 20;
    /// PA-PAC-REQUEST: KERB-PA-PAC-REQUEST.
    pub const PA_PAC_REQUEST: i32 = 128;
    /// PA-FOR-USER: S4U2Self request (MS-SFU).
    pub const PA_FOR_USER: i32 = 129;
    /// PA-FOR-X509-USER: S4U2Self by certificate (MS-SFU).
    pub const PA_FOR_X509_USER: i32 = 130;
    /// PA-AS-CHECKSUM.
    pub const PA_AS_CHECKSUM: i32 = 132;
    /// PA-FX-COOKIE (RFC 6113).
    pub const PA_FX_COOKIE: i32 = 133;
    /// PA-AUTHENTICATION-SET (RFC 6113).
    pub const PA_AUTHENTICATION_SET: i32 = 134;
    /// PA-AUTH-SET-SELECTED (RFC 6113).
    pub const PA_AUTH_SET_SELECTED: i32 = 135;
    /// PA-FX-FAST: FAST armor (RFC 6113).
    pub const PA_FX_FAST: i32 = 136;
    /// PA-FX-ERROR (RFC 6113).
    pub const PA_FX_ERROR: i32 = 137;
    /// PA-ENCRYPTED-CHALLENGE (RFC 6113).
    pub const PA_ENCRYPTED_CHALLENGE: i32 = 138;
    /// PA-REQ-ENC-PA-REP (RFC 6806).
    pub const PA_REQ_ENC_PA_REP: i32 = 149;
    /// PA-AS-FRESHNESS (RFC 8070).
    pub const PA_AS_FRESHNESS: i32 = 150;
    /// KERB-KEY-LIST-REQ (MS-KILE, RODC key list).
    pub const KERB_KEY_LIST_REQ: i32 = 161;
    /// KERB-KEY-LIST-REP (MS-KILE).
    pub const KERB_KEY_LIST_REP: i32 = 162;
    /// PA-SUPPORTED-ENCTYPES: 4-byte little-endian enctype bit mask (MS-KILE).
    pub const PA_SUPPORTED_ENCTYPES: i32 = 165;
    /// PA-EXTENDED-ERROR (MS-KILE).
    pub const PA_EXTENDED_ERROR: i32 = 166;
    /// PA-PAC-OPTIONS: PA-PAC-OPTIONS (MS-KILE 2.2.10).
    pub const PA_PAC_OPTIONS: i32 = 167;
}

/// Authorization data types (RFC 4120 §7.5.4, MS-KILE, MS-PAC).
pub mod ad_type {
    /// AD-IF-RELEVANT: contents are AuthorizationData.
    pub const AD_IF_RELEVANT: i32 = 1;
    /// AD-INTENDED-FOR-SERVER.
    pub const AD_INTENDED_FOR_SERVER: i32 = 2;
    /// AD-INTENDED-FOR-APPLICATION-CLASS.
    pub const AD_INTENDED_FOR_APPLICATION_CLASS: i32 = 3;
    /// AD-KDC-ISSUED.
    pub const AD_KDC_ISSUED: i32 = 4;
    /// AD-AND-OR.
    pub const AD_AND_OR: i32 = 5;
    /// AD-MANDATORY-TICKET-EXTENSIONS.
    pub const AD_MANDATORY_TICKET_EXTENSIONS: i32 = 6;
    /// AD-IN-TICKET-EXTENSIONS.
    pub const AD_IN_TICKET_EXTENSIONS: i32 = 7;
    /// AD-MANDATORY-FOR-KDC.
    pub const AD_MANDATORY_FOR_KDC: i32 = 8;
    /// AD-FX-FAST-ARMOR (RFC 6113).
    pub const AD_FX_FAST_ARMOR: i32 = 71;
    /// AD-FX-FAST-USED (RFC 6113).
    pub const AD_FX_FAST_USED: i32 = 72;
    /// AD-WIN2K-PAC: the PAC (MS-PAC), inside AD-IF-RELEVANT.
    pub const AD_WIN2K_PAC: i32 = 128;
    /// AD-ETYPE-NEGOTIATION (RFC 4537).
    pub const AD_ETYPE_NEGOTIATION: i32 = 129;
    /// KERB-AUTH-DATA-TOKEN-RESTRICTIONS: KERB-AD-RESTRICTION-ENTRY list (MS-KILE 2.2.6).
    pub const KERB_AUTH_DATA_TOKEN_RESTRICTIONS: i32 = 141;
    /// KERB-LOCAL: opaque, client-local data.
    pub const KERB_LOCAL: i32 = 142;
    /// AD-AUTH-DATA-AP-OPTIONS: 4-byte LE flags, 0x4000 = channel bindings supported.
    pub const AD_AUTH_DATA_AP_OPTIONS: i32 = 143;
    /// KERB-AUTH-DATA-CLIENT-TARGET (MS-KILE).
    pub const KERB_AUTH_DATA_CLIENT_TARGET: i32 = 144;
}

/// Principal name types (RFC 4120 §6.2, MS-KILE).
pub mod name_type {
    /// NT-UNKNOWN.
    pub const NT_UNKNOWN: i32 = 0;
    /// NT-PRINCIPAL: a user.
    pub const NT_PRINCIPAL: i32 = 1;
    /// NT-SRV-INST: service and instance (krbtgt/REALM).
    pub const NT_SRV_INST: i32 = 2;
    /// NT-SRV-HST: service with host name.
    pub const NT_SRV_HST: i32 = 3;
    /// NT-SRV-XHST.
    pub const NT_SRV_XHST: i32 = 4;
    /// NT-UID.
    pub const NT_UID: i32 = 5;
    /// NT-X500-PRINCIPAL.
    pub const NT_X500_PRINCIPAL: i32 = 6;
    /// NT-SMTP-NAME.
    pub const NT_SMTP_NAME: i32 = 7;
    /// NT-ENTERPRISE: one component `user@upn.suffix` (RFC 6806).
    pub const NT_ENTERPRISE: i32 = 10;
    /// NT-WELLKNOWN (RFC 6111).
    pub const NT_WELLKNOWN: i32 = 11;
    /// NT-SRV-HST-DOMAIN (RFC 6806 / MS).
    pub const NT_SRV_HST_DOMAIN: i32 = 12;
    /// NT-MS-PRINCIPAL: `DOMAIN\user` form (MS-KILE).
    pub const NT_MS_PRINCIPAL: i32 = -128;
    /// NT-MS-PRINCIPAL-AND-ID (MS-KILE).
    pub const NT_MS_PRINCIPAL_AND_ID: i32 = -129;
    /// NT-ENT-PRINCIPAL-AND-ID (MS-KILE).
    pub const NT_ENT_PRINCIPAL_AND_ID: i32 = -130;
}

/// Host address types (RFC 4120 §7.5.3).
pub mod addr_type {
    /// IPv4, 4 bytes.
    pub const IPV4: i32 = 2;
    /// Directional.
    pub const DIRECTIONAL: i32 = 3;
    /// ChaosNet.
    pub const CHAOSNET: i32 = 5;
    /// XNS.
    pub const XNS: i32 = 6;
    /// ISO.
    pub const ISO: i32 = 7;
    /// DECNET Phase IV.
    pub const DECNET: i32 = 12;
    /// AppleTalk DDP.
    pub const APPLETALK: i32 = 16;
    /// NetBIOS name, 16 bytes space padded (Windows).
    pub const NETBIOS: i32 = 20;
    /// IPv6, 16 bytes.
    pub const IPV6: i32 = 24;
}

/// Encryption types (RFC 3961, 3962, 4757, 8009).
pub mod etype {
    /// des-cbc-crc.
    pub const DES_CBC_CRC: i32 = 1;
    /// des-cbc-md5.
    pub const DES_CBC_MD5: i32 = 3;
    /// des3-cbc-sha1-kd.
    pub const DES3_CBC_SHA1_KD: i32 = 16;
    /// aes128-cts-hmac-sha1-96.
    pub const AES128_CTS_HMAC_SHA1_96: i32 = 17;
    /// aes256-cts-hmac-sha1-96.
    pub const AES256_CTS_HMAC_SHA1_96: i32 = 18;
    /// aes128-cts-hmac-sha256-128.
    pub const AES128_CTS_HMAC_SHA256_128: i32 = 19;
    /// aes256-cts-hmac-sha384-192.
    pub const AES256_CTS_HMAC_SHA384_192: i32 = 20;
    /// rc4-hmac (arcfour-hmac-md5).
    pub const RC4_HMAC: i32 = 23;
    /// rc4-hmac-exp.
    pub const RC4_HMAC_EXP: i32 = 24;
}

/// Checksum types (RFC 3961, 4757, 8009, RFC 4121).
pub mod cksumtype {
    /// CRC32.
    pub const CRC32: i32 = 1;
    /// rsa-md5.
    pub const RSA_MD5: i32 = 7;
    /// hmac-sha1-des3-kd.
    pub const HMAC_SHA1_DES3_KD: i32 = 12;
    /// hmac-sha1-96-aes128.
    pub const HMAC_SHA1_96_AES128: i32 = 15;
    /// hmac-sha1-96-aes256.
    pub const HMAC_SHA1_96_AES256: i32 = 16;
    /// hmac-sha256-128-aes128.
    pub const HMAC_SHA256_128_AES128: i32 = 19;
    /// hmac-sha384-192-aes256.
    pub const HMAC_SHA384_192_AES256: i32 = 20;
    /// GSS-API authenticator checksum (RFC 4121).
    pub const GSSAPI: i32 = 0x8003;
    /// KERB_CHECKSUM_HMAC_MD5 (RFC 4757), used by PA-FOR-USER and the PAC.
    pub const HMAC_MD5: i32 = -138;
}

/// Error codes for KRB-ERROR (RFC 4120 §7.5.9, RFC 4556, RFC 6113).
pub mod error_code {
    /// No error.
    pub const KDC_ERR_NONE: i32 = 0;
    /// Client's entry in database has expired.
    pub const KDC_ERR_NAME_EXP: i32 = 1;
    /// Server's entry in database has expired.
    pub const KDC_ERR_SERVICE_EXP: i32 = 2;
    /// Requested protocol version number not supported.
    pub const KDC_ERR_BAD_PVNO: i32 = 3;
    /// Client's key encrypted in old master key.
    pub const KDC_ERR_C_OLD_MAST_KVNO: i32 = 4;
    /// Server's key encrypted in old master key.
    pub const KDC_ERR_S_OLD_MAST_KVNO: i32 = 5;
    /// Client not found in Kerberos database.
    pub const KDC_ERR_C_PRINCIPAL_UNKNOWN: i32 = 6;
    /// Server not found in Kerberos database.
    pub const KDC_ERR_S_PRINCIPAL_UNKNOWN: i32 = 7;
    /// Multiple principal entries in database.
    pub const KDC_ERR_PRINCIPAL_NOT_UNIQUE: i32 = 8;
    /// The client or server has a null key.
    pub const KDC_ERR_NULL_KEY: i32 = 9;
    /// Ticket not eligible for postdating.
    pub const KDC_ERR_CANNOT_POSTDATE: i32 = 10;
    /// Requested starttime is later than end time.
    pub const KDC_ERR_NEVER_VALID: i32 = 11;
    /// KDC policy rejects request.
    pub const KDC_ERR_POLICY: i32 = 12;
    /// KDC cannot accommodate requested option.
    pub const KDC_ERR_BADOPTION: i32 = 13;
    /// KDC has no support for encryption type.
    pub const KDC_ERR_ETYPE_NOSUPP: i32 = 14;
    /// KDC has no support for checksum type.
    pub const KDC_ERR_SUMTYPE_NOSUPP: i32 = 15;
    /// KDC has no support for padata type.
    pub const KDC_ERR_PADATA_TYPE_NOSUPP: i32 = 16;
    /// KDC has no support for transited type.
    pub const KDC_ERR_TRTYPE_NOSUPP: i32 = 17;
    /// Clients credentials have been revoked.
    pub const KDC_ERR_CLIENT_REVOKED: i32 = 18;
    /// Credentials for server have been revoked.
    pub const KDC_ERR_SERVICE_REVOKED: i32 = 19;
    /// TGT has been revoked.
    pub const KDC_ERR_TGT_REVOKED: i32 = 20;
    /// Client not yet valid; try again later.
    pub const KDC_ERR_CLIENT_NOTYET: i32 = 21;
    /// Server not yet valid; try again later.
    pub const KDC_ERR_SERVICE_NOTYET: i32 = 22;
    /// Password has expired; change password to reset.
    pub const KDC_ERR_KEY_EXPIRED: i32 = 23;
    /// Pre-authentication information was invalid.
    pub const KDC_ERR_PREAUTH_FAILED: i32 = 24;
    /// Additional pre-authentication required.
    pub const KDC_ERR_PREAUTH_REQUIRED: i32 = 25;
    /// Requested server and ticket don't match.
    pub const KDC_ERR_SERVER_NOMATCH: i32 = 26;
    /// Server principal valid for user2user only.
    pub const KDC_ERR_MUST_USE_USER2USER: i32 = 27;
    /// KDC Policy rejects transited path.
    pub const KDC_ERR_PATH_NOT_ACCEPTED: i32 = 28;
    /// A service is not available.
    pub const KDC_ERR_SVC_UNAVAILABLE: i32 = 29;
    /// Integrity check on decrypted field failed.
    pub const KRB_AP_ERR_BAD_INTEGRITY: i32 = 31;
    /// Ticket expired.
    pub const KRB_AP_ERR_TKT_EXPIRED: i32 = 32;
    /// Ticket not yet valid.
    pub const KRB_AP_ERR_TKT_NYV: i32 = 33;
    /// Request is a replay.
    pub const KRB_AP_ERR_REPEAT: i32 = 34;
    /// The ticket isn't for us.
    pub const KRB_AP_ERR_NOT_US: i32 = 35;
    /// Ticket and authenticator don't match.
    pub const KRB_AP_ERR_BADMATCH: i32 = 36;
    /// Clock skew too great.
    pub const KRB_AP_ERR_SKEW: i32 = 37;
    /// Incorrect net address.
    pub const KRB_AP_ERR_BADADDR: i32 = 38;
    /// Protocol version mismatch.
    pub const KRB_AP_ERR_BADVERSION: i32 = 39;
    /// Invalid msg type.
    pub const KRB_AP_ERR_MSG_TYPE: i32 = 40;
    /// Message stream modified.
    pub const KRB_AP_ERR_MODIFIED: i32 = 41;
    /// Message out of order.
    pub const KRB_AP_ERR_BADORDER: i32 = 42;
    /// Specified version of key is not available.
    pub const KRB_AP_ERR_BADKEYVER: i32 = 44;
    /// Service key not available.
    pub const KRB_AP_ERR_NOKEY: i32 = 45;
    /// Mutual authentication failed.
    pub const KRB_AP_ERR_MUT_FAIL: i32 = 46;
    /// Incorrect message direction.
    pub const KRB_AP_ERR_BADDIRECTION: i32 = 47;
    /// Alternative authentication method required.
    pub const KRB_AP_ERR_METHOD: i32 = 48;
    /// Incorrect sequence number in message.
    pub const KRB_AP_ERR_BADSEQ: i32 = 49;
    /// Inappropriate type of checksum in message.
    pub const KRB_AP_ERR_INAPP_CKSUM: i32 = 50;
    /// Policy rejects transited path.
    pub const KRB_AP_PATH_NOT_ACCEPTED: i32 = 51;
    /// Response too big for UDP; retry with TCP.
    pub const KRB_ERR_RESPONSE_TOO_BIG: i32 = 52;
    /// Generic error (description in e-text).
    pub const KRB_ERR_GENERIC: i32 = 60;
    /// Field is too long for this implementation.
    pub const KRB_ERR_FIELD_TOOLONG: i32 = 61;
    /// PKINIT: client not trusted.
    pub const KDC_ERROR_CLIENT_NOT_TRUSTED: i32 = 62;
    /// PKINIT: KDC not trusted.
    pub const KDC_ERROR_KDC_NOT_TRUSTED: i32 = 63;
    /// PKINIT: invalid signature.
    pub const KDC_ERROR_INVALID_SIG: i32 = 64;
    /// PKINIT: key too weak.
    pub const KDC_ERR_KEY_TOO_WEAK: i32 = 65;
    /// PKINIT: certificate mismatch.
    pub const KDC_ERR_CERTIFICATE_MISMATCH: i32 = 66;
    /// No TGT available to validate USER-TO-USER.
    pub const KRB_AP_ERR_NO_TGT: i32 = 67;
    /// Wrong realm (referral).
    pub const KDC_ERR_WRONG_REALM: i32 = 68;
    /// Ticket must be for USER-TO-USER.
    pub const KRB_AP_ERR_USER_TO_USER_REQUIRED: i32 = 69;
    /// PKINIT: can't verify certificate.
    pub const KDC_ERR_CANT_VERIFY_CERTIFICATE: i32 = 70;
    /// PKINIT: invalid certificate.
    pub const KDC_ERR_INVALID_CERTIFICATE: i32 = 71;
    /// PKINIT: revoked certificate.
    pub const KDC_ERR_REVOKED_CERTIFICATE: i32 = 72;
    /// PKINIT: revocation status unknown.
    pub const KDC_ERR_REVOCATION_STATUS_UNKNOWN: i32 = 73;
    /// PKINIT: revocation status unavailable.
    pub const KDC_ERR_REVOCATION_STATUS_UNAVAILABLE: i32 = 74;
    /// PKINIT: client name mismatch.
    pub const KDC_ERR_CLIENT_NAME_MISMATCH: i32 = 75;
    /// PKINIT: KDC name mismatch.
    pub const KDC_ERR_KDC_NAME_MISMATCH: i32 = 76;
    /// FAST: pre-authentication expired.
    pub const KDC_ERR_PREAUTH_EXPIRED: i32 = 90;
    /// FAST: more pre-authentication data required.
    pub const KDC_ERR_MORE_PREAUTH_DATA_REQUIRED: i32 = 91;
    /// FAST: bad authentication set.
    pub const KDC_ERR_PREAUTH_BAD_AUTHENTICATION_SET: i32 = 92;
    /// FAST: unknown critical FAST options.
    pub const KDC_ERR_UNKNOWN_CRITICAL_FAST_OPTIONS: i32 = 93;

    /// The RFC name of an error code, for logs (`None` for unassigned codes).
    pub fn name(code: i32) -> Option<&'static str> {
        Some(match code {
            0 => "KDC_ERR_NONE",
            1 => "KDC_ERR_NAME_EXP",
            2 => "KDC_ERR_SERVICE_EXP",
            3 => "KDC_ERR_BAD_PVNO",
            4 => "KDC_ERR_C_OLD_MAST_KVNO",
            5 => "KDC_ERR_S_OLD_MAST_KVNO",
            6 => "KDC_ERR_C_PRINCIPAL_UNKNOWN",
            7 => "KDC_ERR_S_PRINCIPAL_UNKNOWN",
            8 => "KDC_ERR_PRINCIPAL_NOT_UNIQUE",
            9 => "KDC_ERR_NULL_KEY",
            10 => "KDC_ERR_CANNOT_POSTDATE",
            11 => "KDC_ERR_NEVER_VALID",
            12 => "KDC_ERR_POLICY",
            13 => "KDC_ERR_BADOPTION",
            14 => "KDC_ERR_ETYPE_NOSUPP",
            15 => "KDC_ERR_SUMTYPE_NOSUPP",
            16 => "KDC_ERR_PADATA_TYPE_NOSUPP",
            17 => "KDC_ERR_TRTYPE_NOSUPP",
            18 => "KDC_ERR_CLIENT_REVOKED",
            19 => "KDC_ERR_SERVICE_REVOKED",
            20 => "KDC_ERR_TGT_REVOKED",
            21 => "KDC_ERR_CLIENT_NOTYET",
            22 => "KDC_ERR_SERVICE_NOTYET",
            23 => "KDC_ERR_KEY_EXPIRED",
            24 => "KDC_ERR_PREAUTH_FAILED",
            25 => "KDC_ERR_PREAUTH_REQUIRED",
            26 => "KDC_ERR_SERVER_NOMATCH",
            27 => "KDC_ERR_MUST_USE_USER2USER",
            28 => "KDC_ERR_PATH_NOT_ACCEPTED",
            29 => "KDC_ERR_SVC_UNAVAILABLE",
            31 => "KRB_AP_ERR_BAD_INTEGRITY",
            32 => "KRB_AP_ERR_TKT_EXPIRED",
            33 => "KRB_AP_ERR_TKT_NYV",
            34 => "KRB_AP_ERR_REPEAT",
            35 => "KRB_AP_ERR_NOT_US",
            36 => "KRB_AP_ERR_BADMATCH",
            37 => "KRB_AP_ERR_SKEW",
            38 => "KRB_AP_ERR_BADADDR",
            39 => "KRB_AP_ERR_BADVERSION",
            40 => "KRB_AP_ERR_MSG_TYPE",
            41 => "KRB_AP_ERR_MODIFIED",
            42 => "KRB_AP_ERR_BADORDER",
            44 => "KRB_AP_ERR_BADKEYVER",
            45 => "KRB_AP_ERR_NOKEY",
            46 => "KRB_AP_ERR_MUT_FAIL",
            47 => "KRB_AP_ERR_BADDIRECTION",
            48 => "KRB_AP_ERR_METHOD",
            49 => "KRB_AP_ERR_BADSEQ",
            50 => "KRB_AP_ERR_INAPP_CKSUM",
            51 => "KRB_AP_PATH_NOT_ACCEPTED",
            52 => "KRB_ERR_RESPONSE_TOO_BIG",
            60 => "KRB_ERR_GENERIC",
            61 => "KRB_ERR_FIELD_TOOLONG",
            62 => "KDC_ERROR_CLIENT_NOT_TRUSTED",
            63 => "KDC_ERROR_KDC_NOT_TRUSTED",
            64 => "KDC_ERROR_INVALID_SIG",
            65 => "KDC_ERR_KEY_TOO_WEAK",
            66 => "KDC_ERR_CERTIFICATE_MISMATCH",
            67 => "KRB_AP_ERR_NO_TGT",
            68 => "KDC_ERR_WRONG_REALM",
            69 => "KRB_AP_ERR_USER_TO_USER_REQUIRED",
            70 => "KDC_ERR_CANT_VERIFY_CERTIFICATE",
            71 => "KDC_ERR_INVALID_CERTIFICATE",
            72 => "KDC_ERR_REVOKED_CERTIFICATE",
            73 => "KDC_ERR_REVOCATION_STATUS_UNKNOWN",
            74 => "KDC_ERR_REVOCATION_STATUS_UNAVAILABLE",
            75 => "KDC_ERR_CLIENT_NAME_MISMATCH",
            76 => "KDC_ERR_KDC_NAME_MISMATCH",
            90 => "KDC_ERR_PREAUTH_EXPIRED",
            91 => "KDC_ERR_MORE_PREAUTH_DATA_REQUIRED",
            92 => "KDC_ERR_PREAUTH_BAD_AUTHENTICATION_SET",
            93 => "KDC_ERR_UNKNOWN_CRITICAL_FAST_OPTIONS",
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::error_code;

    #[test]
    fn error_names() {
        assert_eq!(
            error_code::name(error_code::KDC_ERR_PREAUTH_REQUIRED),
            Some("KDC_ERR_PREAUTH_REQUIRED")
        );
        assert_eq!(error_code::name(30), None);
        assert_eq!(error_code::name(43), None);
        assert_eq!(error_code::name(-1), None);
        // Every code 0..=68 except the unassigned 30 and 43 and 53..=59 has a name.
        for c in 0..=68 {
            let unassigned = c == 30 || c == 43 || (53..=59).contains(&c);
            assert_eq!(error_code::name(c).is_some(), !unassigned, "code {c}");
        }
    }
}
