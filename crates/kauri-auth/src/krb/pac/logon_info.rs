//! KERB_VALIDATION_INFO (MS-PAC 2.5), the logon-information buffer (type 1):
//! who the client is and which groups it belongs to. The KDC fills one
//! [`KerbValidationInfo`] from the directory; the acceptor decodes it to
//! build the client's token.
//!
//! Wire form: an NDR20 type serialization (version 1) of a unique pointer to
//! the structure. Embedded pointers are written in the structure as referent
//! ids and their referents follow the structure in field order:
//! EffectiveName, FullName, LogonScript, ProfilePath, HomeDirectory,
//! HomeDirectoryDrive, GroupIds, LogonServer, LogonDomainName,
//! LogonDomainId, ExtraSids (the array, then the SID of each element),
//! ResourceGroupDomainSid, ResourceGroupIds.

use super::ndr::{NdrReader, NdrWriter};
use super::sid::validate_sid;
use super::PacError;

/// FILETIME value meaning "never" / "no limit" (e.g. for LogoffTime,
/// KickOffTime and PasswordMustChange of accounts whose password never
/// expires).
pub const FILETIME_NEVER: u64 = 0x7fff_ffff_ffff_ffff;

/// Number of 100 ns intervals between 1601-01-01 and 1970-01-01.
const FILETIME_UNIX_EPOCH: u64 = 116_444_736_000_000_000;

/// Converts Unix seconds (e.g. a Kerberos `KerberosTime`) to a FILETIME, the
/// time format of every time field in the PAC. Times before 1601 clamp to 0.
pub fn filetime_from_unix(secs: i64) -> u64 {
    let ft = i128::from(secs) * 10_000_000 + i128::from(FILETIME_UNIX_EPOCH);
    ft.clamp(0, i128::from(u64::MAX)) as u64
}

/// Converts a FILETIME back to whole Unix seconds (rounding toward 1601).
pub fn filetime_to_unix(ft: u64) -> i64 {
    ((i128::from(ft) - i128::from(FILETIME_UNIX_EPOCH)).div_euclid(10_000_000)) as i64
}

/// UserFlags bit: the ExtraSids field is populated (LOGON_EXTRA_SIDS).
/// [`KerbValidationInfo::encode`] sets it whenever `extra_sids` is non-empty.
pub const LOGON_EXTRA_SIDS: u32 = 0x0000_0020;
/// UserFlags bit: ResourceGroupDomainSid/ResourceGroupIds are populated
/// (LOGON_RESOURCE_GROUPS). Set by `encode` when `resource_group_ids` is
/// non-empty.
pub const LOGON_RESOURCE_GROUPS: u32 = 0x0000_0200;

/// Group attribute SE_GROUP_MANDATORY.
pub const SE_GROUP_MANDATORY: u32 = 0x0000_0001;
/// Group attribute SE_GROUP_ENABLED_BY_DEFAULT.
pub const SE_GROUP_ENABLED_BY_DEFAULT: u32 = 0x0000_0002;
/// Group attribute SE_GROUP_ENABLED.
pub const SE_GROUP_ENABLED: u32 = 0x0000_0004;
/// The usual attributes of a group in a PAC: mandatory, enabled by default,
/// enabled (7).
pub const SE_GROUP_DEFAULT: u32 =
    SE_GROUP_MANDATORY | SE_GROUP_ENABLED_BY_DEFAULT | SE_GROUP_ENABLED;

/// GROUP_MEMBERSHIP (MS-PAC 2.2.2): a group in the logon domain (or the
/// resource domain) named by its relative id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupMembership {
    /// The group's RID within its domain.
    pub relative_id: u32,
    /// SE_GROUP_* attribute bits, normally [`SE_GROUP_DEFAULT`].
    pub attributes: u32,
}

/// KERB_SID_AND_ATTRIBUTES (MS-PAC 2.2.1): a group (or other SID) outside the
/// logon domain, e.g. universal groups of other domains, "Authentication
/// authority asserted identity" (S-1-18-1) or SID history.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SidAndAttributes {
    /// Binary SID (see [`super::sid`]).
    pub sid: Vec<u8>,
    /// SE_GROUP_* attribute bits.
    pub attributes: u32,
}

/// KERB_VALIDATION_INFO (MS-PAC 2.5). Field names follow the specification.
/// Count fields (GroupCount, SidCount, ResourceGroupCount) are not stored:
/// they are the lengths of the vectors. Strings are plain Rust strings (a
/// null string pointer decodes as ""), SIDs are binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KerbValidationInfo {
    /// Time the user logged on (FILETIME).
    pub logon_time: u64,
    /// Time the logon expires (FILETIME; [`FILETIME_NEVER`] for none).
    pub logoff_time: u64,
    /// Time the client must be forced off (FILETIME; [`FILETIME_NEVER`]).
    pub kick_off_time: u64,
    /// When the password was last set (FILETIME).
    pub password_last_set: u64,
    /// When the password may next be changed (FILETIME).
    pub password_can_change: u64,
    /// When the password must be changed (FILETIME; [`FILETIME_NEVER`]).
    pub password_must_change: u64,
    /// The account name (sAMAccountName).
    pub effective_name: String,
    /// The display name.
    pub full_name: String,
    /// The logon script path.
    pub logon_script: String,
    /// The roaming profile path.
    pub profile_path: String,
    /// The home directory.
    pub home_directory: String,
    /// The home directory drive letter (e.g. "H:").
    pub home_directory_drive: String,
    /// Number of successful logons.
    pub logon_count: u16,
    /// Number of failed password attempts.
    pub bad_password_count: u16,
    /// The account's RID in the logon domain.
    pub user_id: u32,
    /// RID of the primary group (usually 513, Domain Users).
    pub primary_group_id: u32,
    /// Groups in the logon domain (GroupCount + GroupIds).
    pub group_ids: Vec<GroupMembership>,
    /// LOGON_* flags; see [`LOGON_EXTRA_SIDS`], [`LOGON_RESOURCE_GROUPS`].
    pub user_flags: u32,
    /// Session key; for Kerberos PACs always 16 zero bytes.
    pub user_session_key: [u8; 16],
    /// NetBIOS name of the DC that authenticated the user.
    pub logon_server: String,
    /// NetBIOS name of the logon domain.
    pub logon_domain_name: String,
    /// SID of the logon domain (binary). `None` encodes a null pointer;
    /// real PACs always carry it.
    pub logon_domain_id: Option<Vec<u8>>,
    /// Reserved1 (two ULONGs, zero).
    pub reserved1: [u32; 2],
    /// The account's userAccountControl bits (USER_* flags of MS-SAMR).
    pub user_account_control: u32,
    /// SubAuthStatus (zero for Kerberos).
    pub sub_auth_status: u32,
    /// LastSuccessfulILogon (FILETIME, zero when not tracked).
    pub last_successful_i_logon: u64,
    /// LastFailedILogon (FILETIME, zero when not tracked).
    pub last_failed_i_logon: u64,
    /// FailedILogonCount.
    pub failed_i_logon_count: u32,
    /// Reserved3 (zero).
    pub reserved3: u32,
    /// SIDs outside the logon domain (SidCount + ExtraSids).
    pub extra_sids: Vec<SidAndAttributes>,
    /// Domain SID of the resource groups (binary), if any.
    pub resource_group_domain_sid: Option<Vec<u8>>,
    /// Resource-domain groups (ResourceGroupCount + ResourceGroupIds).
    pub resource_group_ids: Vec<GroupMembership>,
}

impl Default for KerbValidationInfo {
    /// An empty logon info with the "never" times Windows uses for accounts
    /// without limits; the KDC overwrites what it knows.
    fn default() -> Self {
        KerbValidationInfo {
            logon_time: 0,
            logoff_time: FILETIME_NEVER,
            kick_off_time: FILETIME_NEVER,
            password_last_set: 0,
            password_can_change: 0,
            password_must_change: FILETIME_NEVER,
            effective_name: String::new(),
            full_name: String::new(),
            logon_script: String::new(),
            profile_path: String::new(),
            home_directory: String::new(),
            home_directory_drive: String::new(),
            logon_count: 0,
            bad_password_count: 0,
            user_id: 0,
            primary_group_id: 513,
            group_ids: Vec::new(),
            user_flags: 0,
            user_session_key: [0; 16],
            logon_server: String::new(),
            logon_domain_name: String::new(),
            logon_domain_id: None,
            reserved1: [0; 2],
            user_account_control: 0,
            sub_auth_status: 0,
            last_successful_i_logon: 0,
            last_failed_i_logon: 0,
            failed_i_logon_count: 0,
            reserved3: 0,
            extra_sids: Vec::new(),
            resource_group_domain_sid: None,
            resource_group_ids: Vec::new(),
        }
    }
}

/// An RPC_UNICODE_STRING prepared for encoding.
struct WireString {
    units: Vec<u16>,
    byte_len: u16,
}

fn wire_string(s: &str, what: &'static str) -> Result<WireString, PacError> {
    let units: Vec<u16> = s.encode_utf16().collect();
    let byte_len = units
        .len()
        .checked_mul(2)
        .and_then(|n| u16::try_from(n).ok())
        .ok_or(PacError::TooLarge(what))?;
    Ok(WireString { units, byte_len })
}

fn count_u32(n: usize, what: &'static str) -> Result<u32, PacError> {
    u32::try_from(n).map_err(|_| PacError::TooLarge(what))
}

/// Writes an RPC_UNICODE_STRING header (Length, MaximumLength in bytes, then
/// the buffer pointer). Windows sends a non-null pointer even for empty
/// strings, and so do we.
fn write_string_header(w: &mut NdrWriter, s: &WireString) {
    w.u16(s.byte_len);
    w.u16(s.byte_len);
    w.pointer(true);
}

fn write_groups(w: &mut NdrWriter, groups: &[GroupMembership]) {
    w.u32(groups.len() as u32);
    for g in groups {
        w.u32(g.relative_id);
        w.u32(g.attributes);
    }
}

impl KerbValidationInfo {
    /// Encodes the logon info as a complete PAC buffer of type 1 (NDR type
    /// serialization header included). Runs in time linear in the number of
    /// groups and SIDs.
    ///
    /// `user_flags` gets [`LOGON_EXTRA_SIDS`] / [`LOGON_RESOURCE_GROUPS`]
    /// ORed in when `extra_sids` / `resource_group_ids` are non-empty, since
    /// Windows ignores those lists without the flags.
    ///
    /// Fails if a string exceeds 32767 UTF-16 code units, a SID is malformed,
    /// or resource groups are given without a resource domain SID.
    pub fn encode(&self) -> Result<Vec<u8>, PacError> {
        let strings = [
            wire_string(
                &self.effective_name,
                "EffectiveName longer than 32767 UTF-16 units",
            )?,
            wire_string(&self.full_name, "FullName longer than 32767 UTF-16 units")?,
            wire_string(
                &self.logon_script,
                "LogonScript longer than 32767 UTF-16 units",
            )?,
            wire_string(
                &self.profile_path,
                "ProfilePath longer than 32767 UTF-16 units",
            )?,
            wire_string(
                &self.home_directory,
                "HomeDirectory longer than 32767 UTF-16 units",
            )?,
            wire_string(
                &self.home_directory_drive,
                "HomeDirectoryDrive longer than 32767 UTF-16 units",
            )?,
        ];
        let logon_server = wire_string(
            &self.logon_server,
            "LogonServer longer than 32767 UTF-16 units",
        )?;
        let logon_domain_name = wire_string(
            &self.logon_domain_name,
            "LogonDomainName longer than 32767 UTF-16 units",
        )?;
        if let Some(sid) = &self.logon_domain_id {
            validate_sid(sid)?;
        }
        if let Some(sid) = &self.resource_group_domain_sid {
            validate_sid(sid)?;
        }
        if !self.resource_group_ids.is_empty() && self.resource_group_domain_sid.is_none() {
            return Err(PacError::InvalidArgument(
                "resource groups need a ResourceGroupDomainSid",
            ));
        }
        let mut sid_bytes = 0usize;
        for s in &self.extra_sids {
            validate_sid(&s.sid)?;
            sid_bytes += 4 + s.sid.len();
        }
        let group_count = count_u32(self.group_ids.len(), "too many groups")?;
        let sid_count = count_u32(self.extra_sids.len(), "too many extra SIDs")?;
        let resource_count = count_u32(self.resource_group_ids.len(), "too many resource groups")?;

        let mut user_flags = self.user_flags;
        if !self.extra_sids.is_empty() {
            user_flags |= LOGON_EXTRA_SIDS;
        }
        if !self.resource_group_ids.is_empty() {
            user_flags |= LOGON_RESOURCE_GROUPS;
        }

        // Exact-enough capacity so the body is written without reallocation.
        let string_bytes: usize = strings
            .iter()
            .chain([&logon_server, &logon_domain_name])
            .map(|s| 16 + usize::from(s.byte_len))
            .sum();
        let capacity = 256
            + string_bytes
            + 8 * (self.group_ids.len() + self.resource_group_ids.len())
            + 8 * self.extra_sids.len()
            + sid_bytes
            + 128;
        let mut w = NdrWriter::new(capacity);

        // Top-level unique pointer to the structure.
        w.pointer(true);
        for t in [
            self.logon_time,
            self.logoff_time,
            self.kick_off_time,
            self.password_last_set,
            self.password_can_change,
            self.password_must_change,
        ] {
            w.filetime(t);
        }
        for s in &strings {
            write_string_header(&mut w, s);
        }
        w.u16(self.logon_count);
        w.u16(self.bad_password_count);
        w.u32(self.user_id);
        w.u32(self.primary_group_id);
        w.u32(group_count);
        w.pointer(!self.group_ids.is_empty());
        w.u32(user_flags);
        w.bytes(&self.user_session_key);
        write_string_header(&mut w, &logon_server);
        write_string_header(&mut w, &logon_domain_name);
        w.pointer(self.logon_domain_id.is_some());
        w.u32(self.reserved1[0]);
        w.u32(self.reserved1[1]);
        w.u32(self.user_account_control);
        w.u32(self.sub_auth_status);
        w.filetime(self.last_successful_i_logon);
        w.filetime(self.last_failed_i_logon);
        w.u32(self.failed_i_logon_count);
        w.u32(self.reserved3);
        w.u32(sid_count);
        w.pointer(!self.extra_sids.is_empty());
        w.pointer(self.resource_group_domain_sid.is_some());
        w.u32(resource_count);
        w.pointer(!self.resource_group_ids.is_empty());

        // Deferred referents, in field order.
        for s in &strings {
            w.conformant_varying_u16(&s.units);
        }
        if !self.group_ids.is_empty() {
            write_groups(&mut w, &self.group_ids);
        }
        w.conformant_varying_u16(&logon_server.units);
        w.conformant_varying_u16(&logon_domain_name.units);
        if let Some(sid) = &self.logon_domain_id {
            w.rpc_sid(sid);
        }
        if !self.extra_sids.is_empty() {
            w.u32(sid_count);
            for s in &self.extra_sids {
                w.pointer(true);
                w.u32(s.attributes);
            }
            // Pointers embedded in the array elements: their referents come
            // right after the array.
            for s in &self.extra_sids {
                w.rpc_sid(&s.sid);
            }
        }
        if let Some(sid) = &self.resource_group_domain_sid {
            w.rpc_sid(sid);
        }
        if !self.resource_group_ids.is_empty() {
            write_groups(&mut w, &self.resource_group_ids);
        }
        w.finish()
    }

    /// Decodes a PAC buffer of type 1. Never panics; rejects inconsistent
    /// counts, truncated data, malformed SIDs and invalid UTF-16.
    pub fn decode(buf: &[u8]) -> Result<Self, PacError> {
        let body = super::ndr::type_serialization1_body(buf)?;
        let mut r = NdrReader::new(body);
        if !r.pointer("KERB_VALIDATION_INFO pointer")? {
            return Err(PacError::Malformed("null KERB_VALIDATION_INFO pointer"));
        }
        let mut info = KerbValidationInfo {
            logon_time: r.filetime("LogonTime")?,
            logoff_time: r.filetime("LogoffTime")?,
            kick_off_time: r.filetime("KickOffTime")?,
            password_last_set: r.filetime("PasswordLastSet")?,
            password_can_change: r.filetime("PasswordCanChange")?,
            password_must_change: r.filetime("PasswordMustChange")?,
            ..KerbValidationInfo::default()
        };
        let mut string_headers = [(0u16, false); 6];
        for h in string_headers.iter_mut() {
            *h = read_string_header(&mut r)?;
        }
        info.logon_count = r.u16("LogonCount")?;
        info.bad_password_count = r.u16("BadPasswordCount")?;
        info.user_id = r.u32("UserId")?;
        info.primary_group_id = r.u32("PrimaryGroupId")?;
        let group_count = r.u32("GroupCount")?;
        let groups_present = r.pointer("GroupIds")?;
        info.user_flags = r.u32("UserFlags")?;
        let key = r.bytes(16, "UserSessionKey")?;
        info.user_session_key.copy_from_slice(key);
        let logon_server_header = read_string_header(&mut r)?;
        let logon_domain_header = read_string_header(&mut r)?;
        let domain_id_present = r.pointer("LogonDomainId")?;
        info.reserved1 = [r.u32("Reserved1")?, r.u32("Reserved1")?];
        info.user_account_control = r.u32("UserAccountControl")?;
        info.sub_auth_status = r.u32("SubAuthStatus")?;
        info.last_successful_i_logon = r.filetime("LastSuccessfulILogon")?;
        info.last_failed_i_logon = r.filetime("LastFailedILogon")?;
        info.failed_i_logon_count = r.u32("FailedILogonCount")?;
        info.reserved3 = r.u32("Reserved3")?;
        let sid_count = r.u32("SidCount")?;
        let extra_sids_present = r.pointer("ExtraSids")?;
        let resource_sid_present = r.pointer("ResourceGroupDomainSid")?;
        let resource_count = r.u32("ResourceGroupCount")?;
        let resource_present = r.pointer("ResourceGroupIds")?;

        // Deferred referents.
        let mut strings: [String; 6] = Default::default();
        for (slot, header) in strings.iter_mut().zip(string_headers) {
            *slot = read_string_body(&mut r, header)?;
        }
        let [effective_name, full_name, logon_script, profile_path, home_directory, home_directory_drive] =
            strings;
        info.effective_name = effective_name;
        info.full_name = full_name;
        info.logon_script = logon_script;
        info.profile_path = profile_path;
        info.home_directory = home_directory;
        info.home_directory_drive = home_directory_drive;

        info.group_ids = read_groups(&mut r, group_count, groups_present, "GroupIds")?;
        info.logon_server = read_string_body(&mut r, logon_server_header)?;
        info.logon_domain_name = read_string_body(&mut r, logon_domain_header)?;
        if domain_id_present {
            info.logon_domain_id = Some(r.rpc_sid("LogonDomainId")?);
        }
        if extra_sids_present {
            let n = r.conformant_count(sid_count, 8, "ExtraSids")?;
            let mut pending = Vec::with_capacity(n);
            for _ in 0..n {
                let present = r.pointer("ExtraSids[].Sid")?;
                let attributes = r.u32("ExtraSids[].Attributes")?;
                if !present {
                    return Err(PacError::Malformed("null SID in ExtraSids"));
                }
                pending.push(attributes);
            }
            let mut extra = Vec::with_capacity(n);
            for attributes in pending {
                let sid = r.rpc_sid("ExtraSids[].Sid")?;
                extra.push(SidAndAttributes { sid, attributes });
            }
            info.extra_sids = extra;
        } else if sid_count != 0 {
            return Err(PacError::Malformed("SidCount without ExtraSids"));
        }
        if resource_sid_present {
            info.resource_group_domain_sid = Some(r.rpc_sid("ResourceGroupDomainSid")?);
        }
        info.resource_group_ids =
            read_groups(&mut r, resource_count, resource_present, "ResourceGroupIds")?;
        Ok(info)
    }
}

fn read_string_header(r: &mut NdrReader<'_>) -> Result<(u16, bool), PacError> {
    let length = r.u16("RPC_UNICODE_STRING.Length")?;
    let _maximum_length = r.u16("RPC_UNICODE_STRING.MaximumLength")?;
    let present = r.pointer("RPC_UNICODE_STRING.Buffer")?;
    Ok((length, present))
}

fn read_string_body(
    r: &mut NdrReader<'_>,
    (length, present): (u16, bool),
) -> Result<String, PacError> {
    if !present {
        if length != 0 {
            return Err(PacError::Malformed(
                "non-empty RPC_UNICODE_STRING with null buffer",
            ));
        }
        return Ok(String::new());
    }
    r.conformant_varying_string(length, "RPC_UNICODE_STRING buffer")
}

fn read_groups(
    r: &mut NdrReader<'_>,
    count: u32,
    present: bool,
    what: &'static str,
) -> Result<Vec<GroupMembership>, PacError> {
    if !present {
        if count != 0 {
            return Err(PacError::Malformed(what));
        }
        return Ok(Vec::new());
    }
    let n = r.conformant_count(count, 8, what)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let relative_id = r.u32(what)?;
        let attributes = r.u32(what)?;
        out.push(GroupMembership {
            relative_id,
            attributes,
        });
    }
    Ok(out)
}
