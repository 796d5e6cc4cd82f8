//! The LDAP ping (MS-ADTS 6.3.3): how a client finds out whether this DC serves the domain
//! it looks for, which site it is in and which site the client is in. Asked over CLDAP
//! (UDP) or LDAP as a root DSE search for the `Netlogon` attribute with a filter naming the
//! domain; answered with a NETLOGON_SAM_LOGON_RESPONSE in the form the client's `NtVer`
//! asks for (6.3.1.7 – 6.3.1.9).

use std::net::IpAddr;

use kauri_db::{DbRead, Dn};
use kauri_kv::Backend;

use super::error::DirResult;
use super::info::DomainInfo;
use super::view::View;
use super::Directory;

/// `NtVer` bits (MS-ADTS 6.3.1.1).
pub mod nt_version {
    /// NETLOGON_NT_VERSION_1.
    pub const V1: u32 = 0x1;
    /// NETLOGON_NT_VERSION_5: the Windows 2000 response.
    pub const V5: u32 = 0x2;
    /// NETLOGON_NT_VERSION_5EX: the extended response.
    pub const V5EX: u32 = 0x4;
    /// NETLOGON_NT_VERSION_5EX_WITH_IP: the extended response with the DC's address.
    pub const V5EX_WITH_IP: u32 = 0x8;
    /// NETLOGON_NT_VERSION_WITH_CLOSEST_SITE: the next closest site too.
    pub const WITH_CLOSEST_SITE: u32 = 0x10;
}

/// DS flags a DC announces (MS-ADTS 6.3.1.2).
pub mod ds_flags {
    /// The PDC emulator.
    pub const PDC: u32 = 0x1;
    /// A global catalog.
    pub const GC: u32 = 0x4;
    /// An LDAP server.
    pub const LDAP: u32 = 0x8;
    /// A directory service.
    pub const DS: u32 = 0x10;
    /// A Kerberos KDC.
    pub const KDC: u32 = 0x20;
    /// A time server.
    pub const TIMESERV: u32 = 0x40;
    /// In the client's site.
    pub const CLOSEST: u32 = 0x80;
    /// A writable DC.
    pub const WRITABLE: u32 = 0x100;
    /// A reliable time source.
    pub const GOOD_TIMESERV: u32 = 0x200;
    /// Holds every secret of the domain (not read-only).
    pub const FULL_SECRET_DOMAIN_6: u32 = 0x1000;
    /// Serves AD web services.
    pub const WS: u32 = 0x2000;
    /// Windows Server 2012 or later.
    pub const DS_8: u32 = 0x4000;
    /// Windows Server 2012 R2 or later.
    pub const DS_9: u32 = 0x8000;
    /// Windows Server 2016 or later.
    pub const DS_10: u32 = 0x1_0000;
}

/// Response opcodes (MS-ADTS 6.3.1.2 and 6.3.1.7 – 6.3.1.9).
mod opcode {
    pub const SAM_LOGON_RESPONSE: u16 = 19;
    pub const SAM_USER_UNKNOWN: u16 = 21;
    pub const SAM_LOGON_RESPONSE_EX: u16 = 23;
    pub const SAM_USER_UNKNOWN_EX: u16 = 25;
}

/// What a ping asks: the filter's terms (MS-ADTS 6.3.3.2), all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PingRequest {
    /// `DnsDomain`: the DNS name of the domain looked for.
    pub dns_domain: Option<String>,
    /// `Host`: the client's NetBIOS name.
    pub host: Option<String>,
    /// `DnsHostName`: the client's DNS name.
    pub dns_host_name: Option<String>,
    /// `User`: an account whose existence the client asks about.
    pub user: Option<String>,
    /// `AAC`: userAccountControl bits the account must have one of.
    pub aac: Option<u32>,
    /// `DomainSid`: the SID of the domain looked for.
    pub domain_sid: Option<Vec<u8>>,
    /// `DomainGuid`: the GUID of the domain looked for.
    pub domain_guid: Option<Vec<u8>>,
    /// `NtVer`: which response forms the client understands.
    pub nt_version: Option<u32>,
}

/// The SAMR account control bits (ACB) of a userAccountControl value, as the AAC term of
/// a ping states them.
fn acb_of(uac: u32) -> u32 {
    const MAP: [(u32, u32); 8] = [
        (0x0002, 0x0001), // ACCOUNTDISABLE / ACB_DISABLED
        (0x0008, 0x0002), // HOMEDIR_REQUIRED / ACB_HOMDIRREQ
        (0x0020, 0x0004), // PASSWD_NOTREQD / ACB_PWNOTREQ
        (0x0100, 0x0008), // TEMP_DUPLICATE_ACCOUNT / ACB_TEMPDUP
        (0x0200, 0x0010), // NORMAL_ACCOUNT / ACB_NORMAL
        (0x0800, 0x0040), // INTERDOMAIN_TRUST_ACCOUNT / ACB_DOMTRUST
        (0x1000, 0x0080), // WORKSTATION_TRUST_ACCOUNT / ACB_WSTRUST
        (0x2000, 0x0100), // SERVER_TRUST_ACCOUNT / ACB_SVRTRUST
    ];
    MAP.iter()
        .filter(|(uf, _)| uac & uf != 0)
        .fold(0, |acc, (_, acb)| acc | acb)
}

/// DNS names written with RFC 1035 compression: a name (or its tail) written before is a
/// pointer to where it was, relative to the start of the response.
struct Names {
    seen: Vec<(String, usize)>,
}

impl Names {
    fn put(&mut self, out: &mut Vec<u8>, name: &str) {
        let labels: Vec<&str> = name.split('.').filter(|l| !l.is_empty()).collect();
        for i in 0..labels.len() {
            let tail = labels[i..].join(".").to_ascii_lowercase();
            if let Some((_, at)) = self.seen.iter().find(|(n, _)| *n == tail) {
                out.extend_from_slice(&(0xc000 | *at as u16).to_be_bytes());
                return;
            }
            if out.len() < 0x3fff {
                self.seen.push((tail, out.len()));
            }
            let bytes = labels[i].as_bytes();
            let len = bytes.len().min(63);
            out.push(len as u8);
            out.extend_from_slice(&bytes[..len]);
        }
        out.push(0);
    }
}

/// Writes a name as DNS labels (uncompressed), the empty name as the root label.
#[cfg(test)]
fn put_name(out: &mut Vec<u8>, name: &str) {
    Names { seen: Vec::new() }.put(out, name)
}

/// Writes a NUL-terminated UTF-16LE string.
fn put_utf16z(out: &mut Vec<u8>, s: &str) {
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out.extend_from_slice(&[0, 0]);
}

/// Everything a response says about this DC.
struct Facts {
    guid: [u8; 16],
    forest: String,
    domain: String,
    host_dns: String,
    netbios_domain: String,
    netbios_host: String,
    dc_site: String,
    client_site: String,
    flags: u32,
}

/// Whether `ip` falls in the subnet named `cidr` (`10.1.0.0/16`, `fd00::/8`).
fn in_subnet(ip: IpAddr, cidr: &str) -> Option<u8> {
    let (net, bits) = cidr.split_once('/')?;
    let bits: u8 = bits.parse().ok()?;
    match (ip, net.parse::<IpAddr>().ok()?) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            (u32::from(a) & mask == u32::from(n) & mask).then_some(bits)
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits)
            };
            (u128::from(a) & mask == u128::from(n) & mask).then_some(bits)
        }
        _ => None,
    }
}

fn rdn_value(dn: &Dn) -> String {
    dn.rdn()
        .and_then(|r| r.avas().first().map(|a| a.value.clone()))
        .unwrap_or_default()
}

impl<B: Backend> Directory<B> {
    /// The site a client address belongs to: the site of the most specific subnet object
    /// (`CN=<address>/<bits>,CN=Subnets,CN=Sites,<config>`) holding it.
    fn client_site(&self, v: &DbRead<'_, B>, domain: &DomainInfo, ip: IpAddr) -> DirResult<String> {
        let subnets = Dn::parse(&format!("CN=Subnets,CN=Sites,{}", domain.config_dn))
            .map_err(|e| super::DirError::UnwillingToPerform(e.to_string()))?;
        let Some(container) = v.id_of(&subnets)? else {
            return Ok(String::new());
        };
        let mut best: Option<(u8, String)> = None;
        for id in v.children(container)? {
            let Some(name) = v.text(id, "cn")? else {
                continue;
            };
            let Some(bits) = in_subnet(ip, &name) else {
                continue;
            };
            if best.as_ref().is_some_and(|(b, _)| *b >= bits) {
                continue;
            }
            let site = v
                .text(id, "siteObject")?
                .and_then(|s| Dn::parse(&s).ok())
                .map(|d| rdn_value(&d))
                .unwrap_or_default();
            best = Some((bits, site));
        }
        Ok(best.map(|(_, s)| s).unwrap_or_default())
    }

    /// Answers an LDAP ping: the `Netlogon` value, or `None` when this DC does not serve
    /// the domain the ping names (no answer at all, as AD gives). `served` adds the DS
    /// flags of the services the server runs besides LDAP ([`ds_flags::GC`],
    /// [`ds_flags::KDC`]).
    pub fn ldap_ping(
        &self,
        req: &PingRequest,
        client: Option<IpAddr>,
        server: Option<IpAddr>,
        served: u32,
    ) -> DirResult<Option<Vec<u8>>> {
        let Some(domain) = self.domain() else {
            return Ok(None);
        };
        let r = self.db().read()?;
        let guid: [u8; 16] = r
            .values(domain.domain_id, "objectGUID")?
            .first()
            .and_then(|g| g.as_slice().try_into().ok())
            .unwrap_or([0; 16]);
        // The domain looked for: this one when its GUID or its name matches, or when the
        // ping names none; the SID must agree when given.
        let guid_matches = req.domain_guid.as_ref().map(|g| g.as_slice() == guid);
        let name_matches = req.dns_domain.as_ref().map(|n| {
            n.trim_end_matches('.')
                .eq_ignore_ascii_case(&domain.dns_name)
        });
        let ours = match (guid_matches, name_matches) {
            (None, None) => true,
            (g, n) => g == Some(true) || n == Some(true),
        };
        if !ours {
            return Ok(None);
        }
        if let Some(sid) = &req.domain_sid {
            if *sid != domain.sid.to_bytes() {
                return Ok(None);
            }
        }
        // An account is known when it exists and is of a kind the AAC bits (SAMR's ACB
        // form) ask for; without AAC no account is.
        let user_known = match &req.user {
            None => true,
            Some(name) => {
                let mut known = false;
                for id in r.find("sAMAccountName", name.as_bytes())? {
                    let uac = r.int(id, "userAccountControl")?.unwrap_or(0) as u32;
                    if req.aac.is_some_and(|aac| acb_of(uac) & aac != 0) {
                        known = true;
                    }
                }
                known
            }
        };
        let host = domain.server.as_ref().map(rdn_value).unwrap_or_default();
        let dc_site = domain
            .server
            .as_ref()
            .and_then(|s| s.parent())
            .and_then(|servers| servers.parent())
            .map(|site| rdn_value(&site))
            .unwrap_or_default();
        let client_site = match client {
            Some(ip) => self.client_site(&r, &domain, ip)?,
            None => String::new(),
        };
        use ds_flags::*;
        let mut flags = PDC
            | LDAP
            | DS
            | TIMESERV
            | WRITABLE
            | GOOD_TIMESERV
            | FULL_SECRET_DOMAIN_6
            | WS
            | DS_8
            | DS_9
            | DS_10
            | (served & (GC | KDC));
        // A client outside every subnet is served as if in this DC's site (AD's answer
        // for a DC in a single-site forest).
        if client_site.is_empty() || client_site.eq_ignore_ascii_case(&dc_site) {
            flags |= CLOSEST;
        }
        let dns = domain.dns_name.to_ascii_lowercase();
        let facts = Facts {
            guid,
            forest: dns.clone(),
            host_dns: format!("{}.{dns}", host.to_ascii_lowercase()),
            domain: dns,
            netbios_domain: domain.netbios.to_ascii_uppercase(),
            netbios_host: host.to_ascii_uppercase(),
            dc_site: dc_site.clone(),
            client_site: if client_site.is_empty() {
                dc_site
            } else {
                client_site
            },
            flags,
        };
        // A ping that states no NtVer gets the Windows 2000 form.
        let nt = req.nt_version.unwrap_or(nt_version::V5);
        let user = req.user.clone().unwrap_or_default();
        let answer = if nt & (nt_version::V5EX | nt_version::V5EX_WITH_IP) != 0 {
            response_ex(&facts, &user, user_known, nt, server)
        } else if nt & nt_version::V5 != 0 {
            response_nt5(&facts, &user, user_known, server)
        } else {
            response_nt40(&facts, &user, user_known)
        };
        Ok(Some(answer))
    }
}

/// NETLOGON_SAM_LOGON_RESPONSE_EX (6.3.1.9).
fn response_ex(f: &Facts, user: &str, known: bool, nt: u32, server: Option<IpAddr>) -> Vec<u8> {
    let mut out = Vec::with_capacity(160);
    let mut names = Names { seen: Vec::new() };
    let op = if known {
        opcode::SAM_LOGON_RESPONSE_EX
    } else {
        opcode::SAM_USER_UNKNOWN_EX
    };
    out.extend_from_slice(&op.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&f.flags.to_le_bytes());
    out.extend_from_slice(&f.guid);
    names.put(&mut out, &f.forest);
    names.put(&mut out, &f.domain);
    names.put(&mut out, &f.host_dns);
    names.put(&mut out, &f.netbios_domain);
    names.put(&mut out, &f.netbios_host);
    names.put(&mut out, user);
    names.put(&mut out, &f.dc_site);
    names.put(&mut out, &f.client_site);
    let mut version = nt_version::V1 | nt_version::V5EX;
    if nt & nt_version::V5EX_WITH_IP != 0 {
        version |= nt_version::V5EX_WITH_IP;
        // A sockaddr_in: family 2, port 0, the address the client reached us on.
        let v4 = match server {
            Some(IpAddr::V4(a)) => a.octets(),
            _ => [0; 4],
        };
        out.push(16);
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        out.extend_from_slice(&v4);
        out.extend_from_slice(&[0; 8]);
    }
    if nt & nt_version::WITH_CLOSEST_SITE != 0 {
        version |= nt_version::WITH_CLOSEST_SITE;
        names.put(&mut out, "");
    }
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out
}

/// NETLOGON_SAM_LOGON_RESPONSE (6.3.1.8), the Windows 2000 form.
fn response_nt5(f: &Facts, user: &str, known: bool, server: Option<IpAddr>) -> Vec<u8> {
    let mut out = Vec::with_capacity(200);
    let mut names = Names { seen: Vec::new() };
    let op = if known {
        opcode::SAM_LOGON_RESPONSE
    } else {
        opcode::SAM_USER_UNKNOWN
    };
    out.extend_from_slice(&op.to_le_bytes());
    put_utf16z(&mut out, &format!("\\\\{}", f.netbios_host));
    put_utf16z(&mut out, user);
    put_utf16z(&mut out, &f.netbios_domain);
    out.extend_from_slice(&f.guid);
    out.extend_from_slice(&[0; 16]);
    names.put(&mut out, &f.forest);
    names.put(&mut out, &f.domain);
    names.put(&mut out, &f.host_dns);
    let ip = match server {
        Some(IpAddr::V4(a)) => a.octets(),
        _ => [0; 4],
    };
    out.extend_from_slice(&ip);
    out.extend_from_slice(&f.flags.to_le_bytes());
    out.extend_from_slice(&(nt_version::V1 | nt_version::V5).to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out
}

/// NETLOGON_SAM_LOGON_RESPONSE_NT40 (6.3.1.7).
fn response_nt40(f: &Facts, user: &str, known: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(80);
    let op = if known {
        opcode::SAM_LOGON_RESPONSE
    } else {
        opcode::SAM_USER_UNKNOWN
    };
    out.extend_from_slice(&op.to_le_bytes());
    put_utf16z(&mut out, &format!("\\\\{}", f.netbios_host));
    put_utf16z(&mut out, user);
    put_utf16z(&mut out, &f.netbios_domain);
    out.extend_from_slice(&nt_version::V1.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_match_by_prefix() {
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        assert_eq!(in_subnet(ip, "10.0.0.0/8"), Some(8));
        assert_eq!(in_subnet(ip, "10.1.0.0/16"), Some(16));
        assert_eq!(in_subnet(ip, "10.2.0.0/16"), None);
        assert_eq!(in_subnet(ip, "fd00::/8"), None);
        let v6: IpAddr = "fd00::1".parse().unwrap();
        assert_eq!(in_subnet(v6, "fd00::/8"), Some(8));
        assert_eq!(in_subnet(ip, "garbage"), None);
    }

    #[test]
    fn names_compress_to_earlier_tails() {
        let mut out = vec![0; 4];
        let mut names = Names { seen: Vec::new() };
        names.put(&mut out, "samdom.example.com");
        names.put(&mut out, "samdom.example.com");
        names.put(&mut out, "dc1.samdom.example.com");
        assert_eq!(
            &out[4..],
            b"\x06samdom\x07example\x03com\x00\xc0\x04\x03dc1\xc0\x04"
        );
        assert_eq!(acb_of(0x1000 | 0x2), 0x80 | 0x1);
    }

    #[test]
    fn names_are_dns_labels() {
        let mut out = Vec::new();
        put_name(&mut out, "samdom.example.com");
        assert_eq!(out, b"\x06samdom\x07example\x03com\x00");
        out.clear();
        put_name(&mut out, "");
        assert_eq!(out, [0]);
    }
}
