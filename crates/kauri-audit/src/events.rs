//! The Windows security event IDs Kauri records, with the titles Windows gives them, and
//! the rules that pick one: which group event a groupType and an operation make, which
//! account event an account operation makes. Using Microsoft's numbers means the rules
//! administrators and SIEMs already have for a Windows DC ("alert on 4728 to Domain
//! Admins", "count 4625 per address") work on Kauri's log unchanged.
//!
//! Titles as Microsoft's auditing reference names them ("Audit User Account Management",
//! "Audit Security Group Management", "Audit Distribution Group Management", "Audit
//! Directory Service Changes", "Audit Kerberos Authentication Service", …).

use crate::event::Category;

/// One Windows security event: its number, Windows' title for it, a short name for
/// one-line output, and the category Kauri files it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    /// The event ID.
    pub id: u32,
    /// Windows' title, e.g. "An account was successfully logged on."
    pub title: &'static str,
    /// A few words for tables, e.g. "logon".
    pub short: &'static str,
    /// The category events with this ID are logged under.
    pub category: Category,
}

const fn ev(id: u32, category: Category, short: &'static str, title: &'static str) -> EventInfo {
    EventInfo {
        id,
        title,
        short,
        category,
    }
}

use Category::{Account, Authentication, Change, Group, Password, Token};

/// Every event ID Kauri knows, in numeric order.
#[rustfmt::skip]
pub const EVENTS: &[EventInfo] = &[
    ev(4624, Authentication, "logon", "An account was successfully logged on."),
    ev(4625, Authentication, "logon failed", "An account failed to log on."),
    ev(4627, Token, "token groups", "Group membership information."),
    ev(4662, Change, "object operation", "An operation was performed on an object."),
    ev(4720, Account, "user created", "A user account was created."),
    ev(4722, Account, "account enabled", "A user account was enabled."),
    ev(4723, Password, "password change", "An attempt was made to change an account's password."),
    ev(4724, Password, "password reset", "An attempt was made to reset an account's password."),
    ev(4725, Account, "account disabled", "A user account was disabled."),
    ev(4726, Account, "user deleted", "A user account was deleted."),
    ev(4727, Group, "global group created", "A security-enabled global group was created."),
    ev(4728, Group, "global group member added", "A member was added to a security-enabled global group."),
    ev(4729, Group, "global group member removed", "A member was removed from a security-enabled global group."),
    ev(4730, Group, "global group deleted", "A security-enabled global group was deleted."),
    ev(4731, Group, "local group created", "A security-enabled local group was created."),
    ev(4732, Group, "local group member added", "A member was added to a security-enabled local group."),
    ev(4733, Group, "local group member removed", "A member was removed from a security-enabled local group."),
    ev(4734, Group, "local group deleted", "A security-enabled local group was deleted."),
    ev(4735, Group, "local group changed", "A security-enabled local group was changed."),
    ev(4737, Group, "global group changed", "A security-enabled global group was changed."),
    ev(4738, Account, "user changed", "A user account was changed."),
    ev(4740, Account, "account locked out", "A user account was locked out."),
    ev(4741, Account, "computer created", "A computer account was created."),
    ev(4742, Account, "computer changed", "A computer account was changed."),
    ev(4743, Account, "computer deleted", "A computer account was deleted."),
    ev(4744, Group, "local distribution group created", "A security-disabled local group was created."),
    ev(4745, Group, "local distribution group changed", "A security-disabled local group was changed."),
    ev(4746, Group, "local distribution group member added", "A member was added to a security-disabled local group."),
    ev(4747, Group, "local distribution group member removed", "A member was removed from a security-disabled local group."),
    ev(4748, Group, "local distribution group deleted", "A security-disabled local group was deleted."),
    ev(4749, Group, "global distribution group created", "A security-disabled global group was created."),
    ev(4750, Group, "global distribution group changed", "A security-disabled global group was changed."),
    ev(4751, Group, "global distribution group member added", "A member was added to a security-disabled global group."),
    ev(4752, Group, "global distribution group member removed", "A member was removed from a security-disabled global group."),
    ev(4753, Group, "global distribution group deleted", "A security-disabled global group was deleted."),
    ev(4754, Group, "universal group created", "A security-enabled universal group was created."),
    ev(4755, Group, "universal group changed", "A security-enabled universal group was changed."),
    ev(4756, Group, "universal group member added", "A member was added to a security-enabled universal group."),
    ev(4757, Group, "universal group member removed", "A member was removed from a security-enabled universal group."),
    ev(4758, Group, "universal group deleted", "A security-enabled universal group was deleted."),
    ev(4759, Group, "universal distribution group created", "A security-disabled universal group was created."),
    ev(4760, Group, "universal distribution group changed", "A security-disabled universal group was changed."),
    ev(4761, Group, "universal distribution group member added", "A member was added to a security-disabled universal group."),
    ev(4762, Group, "universal distribution group member removed", "A member was removed from a security-disabled universal group."),
    ev(4763, Group, "universal distribution group deleted", "A security-disabled universal group was deleted."),
    ev(4764, Group, "group type changed", "A group's type was changed."),
    ev(4767, Account, "account unlocked", "A user account was unlocked."),
    ev(4768, Authentication, "TGT requested", "A Kerberos authentication ticket (TGT) was requested."),
    ev(4769, Authentication, "service ticket requested", "A Kerberos service ticket was requested."),
    ev(4771, Authentication, "pre-authentication failed", "Kerberos pre-authentication failed."),
    ev(4776, Authentication, "credential validation", "The computer attempted to validate the credentials for an account."),
    ev(4781, Account, "account renamed", "The name of an account was changed."),
    ev(5136, Change, "object modified", "A directory service object was modified."),
    ev(5137, Change, "object created", "A directory service object was created."),
    ev(5138, Change, "object undeleted", "A directory service object was undeleted."),
    ev(5139, Change, "object moved", "A directory service object was moved."),
    ev(5141, Change, "object deleted", "A directory service object was deleted."),
];

/// The table entry of an event ID.
pub fn lookup(id: u32) -> Option<&'static EventInfo> {
    EVENTS
        .binary_search_by_key(&id, |e| e.id)
        .ok()
        .and_then(|i| EVENTS.get(i))
}

/// Windows' title of an event ID.
pub fn title(id: u32) -> Option<&'static str> {
    lookup(id).map(|e| e.title)
}

/// What was done to a group, for [`group_event_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupOp {
    /// The group was created.
    Created,
    /// Its attributes changed.
    Changed,
    /// It was deleted.
    Deleted,
    /// A member was added.
    MemberAdded,
    /// A member was removed.
    MemberRemoved,
    /// Its groupType (scope or security) changed: 4764 whatever the type.
    TypeChanged,
}

/// `groupType` bits (MS-ADTS 2.2.12).
const BUILTIN_LOCAL: u32 = 0x1;
const GLOBAL: u32 = 0x2;
const DOMAIN_LOCAL: u32 = 0x4;
const UNIVERSAL: u32 = 0x8;
const SECURITY_ENABLED: u32 = 0x8000_0000;

/// The event ID Windows logs for `op` on a group of type `group_type` (the attribute's
/// value, signed as AD stores it or unsigned — only the low 32 bits count): security
/// groups get 4727–4758, distribution groups 4744–4763, by scope (global, domain local
/// with builtin counted as local, universal). `None` when the type has no scope bit.
pub fn group_event_id(group_type: i64, op: GroupOp) -> Option<u32> {
    if op == GroupOp::TypeChanged {
        return Some(4764);
    }
    let gt = (group_type & 0xFFFF_FFFF) as u32;
    let security = gt & SECURITY_ENABLED != 0;
    // [created, changed, deleted, member added, member removed]
    let ids: [u32; 5] = if gt & UNIVERSAL != 0 {
        if security {
            [4754, 4755, 4758, 4756, 4757]
        } else {
            [4759, 4760, 4763, 4761, 4762]
        }
    } else if gt & GLOBAL != 0 {
        if security {
            [4727, 4737, 4730, 4728, 4729]
        } else {
            [4749, 4750, 4753, 4751, 4752]
        }
    } else if gt & (DOMAIN_LOCAL | BUILTIN_LOCAL) != 0 {
        if security {
            [4731, 4735, 4734, 4732, 4733]
        } else {
            [4744, 4745, 4748, 4746, 4747]
        }
    } else {
        return None;
    };
    let i = match op {
        GroupOp::Created => 0,
        GroupOp::Changed => 1,
        GroupOp::Deleted => 2,
        GroupOp::MemberAdded => 3,
        GroupOp::MemberRemoved => 4,
        GroupOp::TypeChanged => return Some(4764),
    };
    ids.get(i).copied()
}

/// What was done to a user or computer account, for [`user_event_id`] and
/// [`computer_event_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountOp {
    /// The account was created.
    Created,
    /// Its attributes changed.
    Changed,
    /// It was deleted.
    Deleted,
    /// It was enabled (userAccountControl's ACCOUNTDISABLE cleared).
    Enabled,
    /// It was disabled.
    Disabled,
    /// It was locked out after bad passwords.
    LockedOut,
    /// Its lockout was cleared.
    Unlocked,
    /// Its sAMAccountName changed.
    Renamed,
    /// Its owner changed its password (knowing the old one).
    PasswordChanged,
    /// Someone set its password (an administrator's reset).
    PasswordReset,
}

impl AccountOp {
    /// The category events of this operation go under: password changes and resets are
    /// [`Category::Password`], the rest [`Category::Account`].
    pub fn category(self) -> Category {
        match self {
            AccountOp::PasswordChanged | AccountOp::PasswordReset => Category::Password,
            _ => Category::Account,
        }
    }
}

/// The event ID Windows logs for `op` on a user account.
pub fn user_event_id(op: AccountOp) -> u32 {
    match op {
        AccountOp::Created => 4720,
        AccountOp::Enabled => 4722,
        AccountOp::PasswordChanged => 4723,
        AccountOp::PasswordReset => 4724,
        AccountOp::Disabled => 4725,
        AccountOp::Deleted => 4726,
        AccountOp::Changed => 4738,
        AccountOp::LockedOut => 4740,
        AccountOp::Unlocked => 4767,
        AccountOp::Renamed => 4781,
    }
}

/// The event ID Windows logs for `op` on a computer account: its own IDs for created,
/// changed and deleted, the user account IDs for the rest (as Windows does: 4722, 4724,
/// 4725 and 4781 are logged for computers too).
pub fn computer_event_id(op: AccountOp) -> u32 {
    match op {
        AccountOp::Created => 4741,
        AccountOp::Changed => 4742,
        AccountOp::Deleted => 4743,
        other => user_event_id(other),
    }
}

/// The "Audit Directory Service Changes" event for a change action: `add`/`create`
/// 5137, `modify` 5136, `rename`/`move`/`moddn` 5139, `delete` 5141, `undelete` 5138.
pub fn directory_change_event_id(action: &str) -> Option<u32> {
    Some(match action {
        "add" | "create" => 5137,
        "modify" => 5136,
        "rename" | "move" | "moddn" | "modrdn" => 5139,
        "delete" => 5141,
        "undelete" => 5138,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_unique_and_complete() {
        assert!(EVENTS.windows(2).all(|w| w[0].id < w[1].id));
        for id in [
            4624, 4625, 4627, 4662, 4720, 4722, 4723, 4724, 4725, 4726, 4727, 4728, 4729, 4730,
            4731, 4732, 4733, 4734, 4735, 4737, 4738, 4740, 4741, 4742, 4743, 4754, 4755, 4756,
            4757, 4758, 4767, 4768, 4769, 4771, 4776, 4781, 5136, 5137, 5139, 5141,
        ] {
            let e = lookup(id).unwrap_or_else(|| panic!("{id} missing"));
            assert!(e.title.ends_with('.') && !e.short.is_empty());
        }
        for id in 4744..=4763 {
            if !(4754..=4758).contains(&id) {
                assert!(title(id).unwrap().contains("security-disabled"), "{id}");
            }
        }
        assert_eq!(title(4624), Some("An account was successfully logged on."));
        assert_eq!(title(4625), Some("An account failed to log on."));
        assert_eq!(title(1), None);
    }

    #[test]
    fn group_ids_by_type_and_operation() {
        use GroupOp::*;
        // AD stores groupType signed: a security global group is -2147483646.
        let sec_global = -2_147_483_646i64;
        let sec_local = 0x8000_0004u32 as i64;
        let builtin = -2_147_483_643i64; // 0x80000005: builtin + domain local
        let sec_universal = -2_147_483_640i64;
        let dist_global = 2;
        let dist_local = 4;
        let dist_universal = 8;
        let ops = [Created, Changed, Deleted, MemberAdded, MemberRemoved];
        let ids = |gt: i64| ops.map(|op| group_event_id(gt, op).unwrap());
        assert_eq!(ids(sec_global), [4727, 4737, 4730, 4728, 4729]);
        assert_eq!(ids(sec_local), [4731, 4735, 4734, 4732, 4733]);
        assert_eq!(ids(builtin), [4731, 4735, 4734, 4732, 4733]);
        assert_eq!(ids(0x8000_0001), [4731, 4735, 4734, 4732, 4733]);
        assert_eq!(ids(sec_universal), [4754, 4755, 4758, 4756, 4757]);
        assert_eq!(ids(dist_local), [4744, 4745, 4748, 4746, 4747]);
        assert_eq!(ids(dist_global), [4749, 4750, 4753, 4751, 4752]);
        assert_eq!(ids(dist_universal), [4759, 4760, 4763, 4761, 4762]);
        assert_eq!(group_event_id(0, Created), None);
        assert_eq!(group_event_id(sec_global, TypeChanged), Some(4764));
        // Every id produced has a title, and it is a group event.
        for gt in [
            sec_global,
            sec_local,
            sec_universal,
            dist_global,
            dist_local,
            dist_universal,
        ] {
            for id in ids(gt) {
                assert_eq!(lookup(id).unwrap().category, Category::Group);
            }
        }
    }

    #[test]
    fn account_ids() {
        assert_eq!(user_event_id(AccountOp::Created), 4720);
        assert_eq!(user_event_id(AccountOp::PasswordReset), 4724);
        assert_eq!(computer_event_id(AccountOp::Created), 4741);
        assert_eq!(computer_event_id(AccountOp::Disabled), 4725);
        assert_eq!(AccountOp::PasswordChanged.category(), Category::Password);
        for op in [
            AccountOp::Created,
            AccountOp::Changed,
            AccountOp::Deleted,
            AccountOp::Enabled,
            AccountOp::Disabled,
            AccountOp::LockedOut,
            AccountOp::Unlocked,
            AccountOp::Renamed,
            AccountOp::PasswordChanged,
            AccountOp::PasswordReset,
        ] {
            assert_eq!(lookup(user_event_id(op)).unwrap().category, op.category());
            assert!(lookup(computer_event_id(op)).is_some());
        }
        assert_eq!(directory_change_event_id("rename"), Some(5139));
        assert_eq!(directory_change_event_id("search"), None);
    }
}
