//! Helpers for security identifiers in their binary form (MS-DTYP 2.4.2.2):
//! `Revision` (1), `SubAuthorityCount` (0..=15), a 6-byte big-endian
//! `IdentifierAuthority`, then `SubAuthorityCount` little-endian `u32`s.
//!
//! The PAC types keep SIDs as `Vec<u8>` in exactly this layout, because that
//! is what the directory stores (`objectSid`) and what goes on the wire; these
//! helpers exist to validate them and to convert to and from the `S-1-…`
//! string form for logs, configuration and tests.

use super::PacError;

/// The largest number of sub-authorities a SID may have (MS-DTYP 2.4.2).
pub const SID_MAX_SUB_AUTHORITIES: u8 = 15;

/// Checks that `sid` is a well-formed binary SID: revision 1, at most 15
/// sub-authorities, and a length of exactly `8 + 4 * count` bytes.
pub fn validate_sid(sid: &[u8]) -> Result<(), PacError> {
    let (&revision, &count) = match (sid.first(), sid.get(1)) {
        (Some(r), Some(c)) => (r, c),
        _ => return Err(PacError::InvalidSid("shorter than 8 bytes")),
    };
    if revision != 1 {
        return Err(PacError::InvalidSid("revision is not 1"));
    }
    if count > SID_MAX_SUB_AUTHORITIES {
        return Err(PacError::InvalidSid("more than 15 sub-authorities"));
    }
    if sid.len() != 8 + 4 * usize::from(count) {
        return Err(PacError::InvalidSid(
            "length does not match sub-authority count",
        ));
    }
    Ok(())
}

/// Reads one binary SID from the start of `data` and returns it with the
/// number of bytes it occupied (for structures that embed a raw SID).
pub fn sid_from_prefix(data: &[u8]) -> Result<(Vec<u8>, usize), PacError> {
    let count = *data
        .get(1)
        .ok_or(PacError::InvalidSid("shorter than 8 bytes"))?;
    let len = 8 + 4 * usize::from(count);
    let sid = data
        .get(..len)
        .ok_or(PacError::InvalidSid("truncated sub-authorities"))?;
    validate_sid(sid)?;
    Ok((sid.to_vec(), len))
}

/// Formats a binary SID as `S-1-<authority>-<sub1>-…`. The authority is
/// printed in decimal below 2^32 and in hexadecimal (`0x…`) above, as Windows
/// does.
pub fn sid_to_string(sid: &[u8]) -> Result<String, PacError> {
    validate_sid(sid)?;
    let mut authority: u64 = 0;
    for b in &sid[2..8] {
        authority = (authority << 8) | u64::from(*b);
    }
    let mut out = if authority >= 1 << 32 {
        format!("S-1-0x{authority:012X}")
    } else {
        format!("S-1-{authority}")
    };
    for c in sid[8..].chunks_exact(4) {
        let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        out.push('-');
        out.push_str(&v.to_string());
    }
    Ok(out)
}

/// Parses `S-1-<authority>-<sub>…` (authority decimal or `0x` hex) into a
/// binary SID.
pub fn sid_from_string(s: &str) -> Result<Vec<u8>, PacError> {
    let rest = s
        .strip_prefix("S-1-")
        .or_else(|| s.strip_prefix("s-1-"))
        .ok_or(PacError::InvalidSid("does not start with S-1-"))?;
    let mut parts = rest.split('-');
    let auth_str = parts.next().ok_or(PacError::InvalidSid("no authority"))?;
    let authority = if let Some(hex) = auth_str
        .strip_prefix("0x")
        .or_else(|| auth_str.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).map_err(|_| PacError::InvalidSid("bad authority"))?
    } else {
        auth_str
            .parse::<u64>()
            .map_err(|_| PacError::InvalidSid("bad authority"))?
    };
    if authority >= 1 << 48 {
        return Err(PacError::InvalidSid("authority exceeds 48 bits"));
    }
    let mut sid = vec![1u8, 0];
    sid.extend_from_slice(&authority.to_be_bytes()[2..]);
    let mut count: u8 = 0;
    for p in parts {
        let v: u32 = p
            .parse()
            .map_err(|_| PacError::InvalidSid("bad sub-authority"))?;
        if count == SID_MAX_SUB_AUTHORITIES {
            return Err(PacError::InvalidSid("more than 15 sub-authorities"));
        }
        count += 1;
        sid.extend_from_slice(&v.to_le_bytes());
    }
    sid[1] = count;
    Ok(sid)
}

/// Appends a relative id to a domain SID, giving the SID of an account or
/// group in that domain (e.g. domain SID + 513 = Domain Users).
pub fn sid_with_rid(domain_sid: &[u8], rid: u32) -> Result<Vec<u8>, PacError> {
    validate_sid(domain_sid)?;
    let count = domain_sid[1];
    if count >= SID_MAX_SUB_AUTHORITIES {
        return Err(PacError::InvalidSid("more than 15 sub-authorities"));
    }
    let mut sid = Vec::with_capacity(domain_sid.len() + 4);
    sid.extend_from_slice(domain_sid);
    sid[1] = count + 1;
    sid.extend_from_slice(&rid.to_le_bytes());
    Ok(sid)
}
