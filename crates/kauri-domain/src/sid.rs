//! Security identifiers: the domain SID every principal's `objectSid` extends with a RID,
//! and the well-known relative identifiers AD gives its built-in principals (MS-DTYP 2.4.2.4).

use std::fmt;

use kauri_db::syntax::{parse_sid_text, sid_to_string};

/// A SID as AD stores it in `objectSid`: revision 1, a 48-bit authority, up to 15
/// sub-authorities, little-endian on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sid {
    /// The identifier authority (5 = NT authority).
    pub authority: u64,
    /// The sub-authorities, the RID last.
    pub subs: Vec<u32>,
}

/// Why a SID text or binary value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad SID: {0}")]
pub struct SidError(pub String);

impl Sid {
    /// Parses `S-1-5-21-…` text.
    pub fn parse(text: &str) -> Result<Sid, SidError> {
        let bin = parse_sid_text(text.as_bytes()).map_err(SidError)?;
        Sid::from_bytes(&bin)
    }

    /// Reads the binary layout (as stored in `objectSid`).
    pub fn from_bytes(bin: &[u8]) -> Result<Sid, SidError> {
        if sid_to_string(bin).is_none() {
            return Err(SidError("not a binary SID".into()));
        }
        let mut auth = [0u8; 8];
        if let (Some(dst), Some(src)) = (auth.get_mut(2..), bin.get(2..8)) {
            dst.copy_from_slice(src);
        }
        let subs = bin
            .get(8..)
            .unwrap_or(&[])
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Sid {
            authority: u64::from_be_bytes(auth),
            subs,
        })
    }

    /// The binary layout (as stored in `objectSid` and carried in `tokenGroups`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 4 * self.subs.len());
        out.push(1);
        out.push(self.subs.len() as u8);
        out.extend_from_slice(&self.authority.to_be_bytes()[2..]);
        for s in &self.subs {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out
    }

    /// A new random domain SID, `S-1-5-21-x-y-z`, as provisioning creates one.
    pub fn new_domain() -> Result<Sid, SidError> {
        let mut r = [0u8; 12];
        getrandom::fill(&mut r).map_err(|e| SidError(format!("no randomness: {e}")))?;
        let sub = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
        Ok(Sid {
            authority: 5,
            subs: vec![21, sub(0), sub(4), sub(8)],
        })
    }

    /// This SID extended with a RID (a principal of the domain this SID names).
    pub fn with_rid(&self, rid: u32) -> Sid {
        let mut subs = self.subs.clone();
        subs.push(rid);
        Sid {
            authority: self.authority,
            subs,
        }
    }

    /// The last sub-authority: the RID of a domain principal.
    pub fn rid(&self) -> Option<u32> {
        self.subs.last().copied()
    }

    /// The SID without its RID: the domain of a domain principal.
    pub fn domain(&self) -> Option<Sid> {
        let (_, rest) = self.subs.split_last()?;
        Some(Sid {
            authority: self.authority,
            subs: rest.to_vec(),
        })
    }

    /// A `S-1-5-<subs>` SID of the NT authority (Network S-1-5-2, This Organization
    /// S-1-5-15, …).
    pub fn nt_authority(subs: &[u32]) -> Sid {
        Sid {
            authority: 5,
            subs: subs.to_vec(),
        }
    }

    /// A `S-1-5-32-<rid>` SID of the Builtin domain (Administrators, Users, …).
    pub fn builtin(rid: u32) -> Sid {
        Sid {
            authority: 5,
            subs: vec![32, rid],
        }
    }
}

impl fmt::Display for Sid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.authority >= 1 << 32 {
            write!(f, "S-1-0x{:012X}", self.authority)?;
        } else {
            write!(f, "S-1-{}", self.authority)?;
        }
        for s in &self.subs {
            write!(f, "-{s}")?;
        }
        Ok(())
    }
}

/// Well-known RIDs of domain principals (MS-DTYP 2.4.2.4, MS-ADTS 6.1.1.6).
pub mod rid {
    /// The built-in Administrator account.
    pub const ADMINISTRATOR: u32 = 500;
    /// The Guest account (disabled).
    pub const GUEST: u32 = 501;
    /// The Kerberos service account (disabled).
    pub const KRBTGT: u32 = 502;
    /// Enterprise Read-only Domain Controllers (forest root domain only).
    pub const ENTERPRISE_READONLY_DOMAIN_CONTROLLERS: u32 = 498;
    /// Domain Admins.
    pub const DOMAIN_ADMINS: u32 = 512;
    /// Domain Users: every user's primary group.
    pub const DOMAIN_USERS: u32 = 513;
    /// Domain Guests.
    pub const DOMAIN_GUESTS: u32 = 514;
    /// Domain Computers: every workstation's primary group.
    pub const DOMAIN_COMPUTERS: u32 = 515;
    /// Domain Controllers: every DC's primary group.
    pub const DOMAIN_CONTROLLERS: u32 = 516;
    /// Cert Publishers.
    pub const CERT_PUBLISHERS: u32 = 517;
    /// Schema Admins.
    pub const SCHEMA_ADMINS: u32 = 518;
    /// Enterprise Admins.
    pub const ENTERPRISE_ADMINS: u32 = 519;
    /// Group Policy Creator Owners.
    pub const GROUP_POLICY_CREATOR_OWNERS: u32 = 520;
    /// Read-only Domain Controllers.
    pub const READONLY_DOMAIN_CONTROLLERS: u32 = 521;
    /// Cloneable Domain Controllers.
    pub const CLONEABLE_CONTROLLERS: u32 = 522;
    /// Protected Users.
    pub const PROTECTED_USERS: u32 = 525;
    /// Key Admins.
    pub const KEY_ADMINS: u32 = 526;
    /// Enterprise Key Admins.
    pub const ENTERPRISE_KEY_ADMINS: u32 = 527;
    /// RAS and IAS Servers.
    pub const RAS_AND_IAS_SERVERS: u32 = 553;
    /// Allowed RODC Password Replication Group.
    pub const ALLOWED_RODC_PASSWORD_REPLICATION: u32 = 571;
    /// Denied RODC Password Replication Group.
    pub const DENIED_RODC_PASSWORD_REPLICATION: u32 = 572;
    /// The first RID the allocator hands out to new principals.
    pub const FIRST_ALLOCATED: u32 = 1100;

    /// Builtin (S-1-5-32) aliases.
    pub mod builtin {
        /// Administrators.
        pub const ADMINISTRATORS: u32 = 544;
        /// Users.
        pub const USERS: u32 = 545;
        /// Guests.
        pub const GUESTS: u32 = 546;
        /// Account Operators.
        pub const ACCOUNT_OPERATORS: u32 = 548;
        /// Server Operators.
        pub const SERVER_OPERATORS: u32 = 549;
        /// Print Operators.
        pub const PRINT_OPERATORS: u32 = 550;
        /// Backup Operators.
        pub const BACKUP_OPERATORS: u32 = 551;
        /// Replicator.
        pub const REPLICATOR: u32 = 552;
        /// Pre-Windows 2000 Compatible Access.
        pub const PRE_WINDOWS_2000: u32 = 554;
        /// Remote Desktop Users.
        pub const REMOTE_DESKTOP_USERS: u32 = 555;
        /// Network Configuration Operators.
        pub const NETWORK_CONFIGURATION_OPERATORS: u32 = 556;
        /// Incoming Forest Trust Builders.
        pub const INCOMING_FOREST_TRUST_BUILDERS: u32 = 557;
        /// Performance Monitor Users.
        pub const PERFORMANCE_MONITOR_USERS: u32 = 558;
        /// Performance Log Users.
        pub const PERFORMANCE_LOG_USERS: u32 = 559;
        /// Windows Authorization Access Group.
        pub const WINDOWS_AUTHORIZATION_ACCESS: u32 = 560;
        /// Terminal Server License Servers.
        pub const TERMINAL_SERVER_LICENSE_SERVERS: u32 = 561;
        /// Distributed COM Users.
        pub const DISTRIBUTED_COM_USERS: u32 = 562;
        /// IIS_IUSRS.
        pub const IIS_IUSRS: u32 = 568;
        /// Cryptographic Operators.
        pub const CRYPTOGRAPHIC_OPERATORS: u32 = 569;
        /// Event Log Readers.
        pub const EVENT_LOG_READERS: u32 = 573;
        /// Certificate Service DCOM Access.
        pub const CERTIFICATE_SERVICE_DCOM_ACCESS: u32 = 574;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_round_trip() {
        let s = Sid::parse("S-1-5-21-1004336348-1177238915-682003330-512").unwrap();
        assert_eq!(s.rid(), Some(512));
        assert_eq!(Sid::from_bytes(&s.to_bytes()).unwrap(), s);
        assert_eq!(
            s.to_string(),
            "S-1-5-21-1004336348-1177238915-682003330-512"
        );
        assert_eq!(
            s.domain().unwrap().with_rid(513).to_string(),
            "S-1-5-21-1004336348-1177238915-682003330-513"
        );
        assert_eq!(Sid::builtin(544).to_string(), "S-1-5-32-544");
        assert!(Sid::parse("S-2-5").is_err());
        assert!(Sid::from_bytes(&[1, 2, 0]).is_err());
    }

    #[test]
    fn new_domains_differ() {
        let a = Sid::new_domain().unwrap();
        let b = Sid::new_domain().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.subs.len(), 4);
        assert_eq!(a.subs[0], 21);
    }
}
