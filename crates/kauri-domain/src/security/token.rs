//! The caller side of an access check: the SIDs a caller acts as (MS-DTYP 2.5.2's
//! token, reduced to what the directory needs), and the well-known SIDs that access
//! checks and inheritance treat specially.

use crate::sid::Sid;

/// Well-known SIDs with a special meaning in ACEs (MS-DTYP 2.4.2.4).
pub mod well_known {
    use crate::sid::Sid;

    /// Builds `S-1-<authority>-<subs…>`.
    fn sid(authority: u64, subs: &[u32]) -> Sid {
        Sid {
            authority,
            subs: subs.to_vec(),
        }
    }

    /// Whether `s` is `S-1-<authority>-<subs…>`, without allocating.
    pub fn is(s: &Sid, authority: u64, subs: &[u32]) -> bool {
        s.authority == authority && s.subs == subs
    }

    /// Everyone (WD), S-1-1-0.
    pub fn world() -> Sid {
        sid(1, &[0])
    }
    /// CREATOR OWNER (CO), S-1-3-0: replaced by the new object's owner on inheritance.
    pub fn creator_owner() -> Sid {
        sid(3, &[0])
    }
    /// CREATOR GROUP (CG), S-1-3-1: replaced by the new object's group on inheritance.
    pub fn creator_group() -> Sid {
        sid(3, &[1])
    }
    /// OWNER RIGHTS (OW), S-1-3-4: its ACEs replace the owner's implicit rights.
    pub fn owner_rights() -> Sid {
        sid(3, &[4])
    }
    /// PRINCIPAL SELF (PS), S-1-5-10: stands for the object's own SID in an access check.
    pub fn principal_self() -> Sid {
        sid(5, &[10])
    }
    /// Authenticated Users (AU), S-1-5-11.
    pub fn authenticated_users() -> Sid {
        sid(5, &[11])
    }
    /// Enterprise Domain Controllers (ED), S-1-5-9.
    pub fn enterprise_dcs() -> Sid {
        sid(5, &[9])
    }
    /// Local System (SY), S-1-5-18.
    pub fn system() -> Sid {
        sid(5, &[18])
    }
    /// Anonymous Logon (AN), S-1-5-7.
    pub fn anonymous() -> Sid {
        sid(5, &[7])
    }

    /// Whether `s` is CREATOR OWNER.
    pub fn is_creator_owner(s: &Sid) -> bool {
        is(s, 3, &[0])
    }
    /// Whether `s` is CREATOR GROUP.
    pub fn is_creator_group(s: &Sid) -> bool {
        is(s, 3, &[1])
    }
    /// Whether `s` is OWNER RIGHTS.
    pub fn is_owner_rights(s: &Sid) -> bool {
        is(s, 3, &[4])
    }
    /// Whether `s` is PRINCIPAL SELF.
    pub fn is_principal_self(s: &Sid) -> bool {
        is(s, 5, &[10])
    }
}

/// The SIDs a caller acts as: its own and every group's it belongs to, transitively,
/// with whatever well-known SIDs (Everyone, Authenticated Users, …) the caller's logon
/// adds — the caller of [`Token::new`] supplies them all.
///
/// Membership tests are a binary search over a sorted list, so a token built once per
/// connection can be checked against every search result without allocating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    user: Sid,
    sids: Vec<Sid>,
}

impl Token {
    /// A token for `user` and its `groups` (duplicates are harmless).
    pub fn new(user: Sid, groups: impl IntoIterator<Item = Sid>) -> Token {
        let mut sids: Vec<Sid> = groups.into_iter().collect();
        sids.push(user.clone());
        sids.sort();
        sids.dedup();
        Token { user, sids }
    }

    /// The caller's own SID.
    pub fn user(&self) -> &Sid {
        &self.user
    }

    /// Every SID of the token, the user's included, sorted.
    pub fn sids(&self) -> &[Sid] {
        &self.sids
    }

    /// Whether the token holds `sid`.
    pub fn contains(&self, sid: &Sid) -> bool {
        self.sids.binary_search(sid).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership() {
        let dom = Sid::parse("S-1-5-21-1-2-3").unwrap();
        let t = Token::new(
            dom.with_rid(1105),
            [dom.with_rid(513), well_known::world(), dom.with_rid(513)],
        );
        assert!(t.contains(&dom.with_rid(1105)));
        assert!(t.contains(&dom.with_rid(513)));
        assert!(t.contains(&well_known::world()));
        assert!(!t.contains(&dom.with_rid(512)));
        assert_eq!(t.sids().len(), 3);
        assert!(well_known::is_principal_self(
            &Sid::parse("S-1-5-10").unwrap()
        ));
    }
}
