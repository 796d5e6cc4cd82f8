//! Access mask bits: the rights an ACE grants or denies and an access check asks for
//! (MS-DTYP 2.4.3 for the generic and standard bits, MS-ADTS 5.1.3.2 for the directory
//! ones), and AD's mapping of the generic bits onto directory rights.

/// CC: create children (of the class the ACE's object type names, or any class).
pub const RIGHT_DS_CREATE_CHILD: u32 = 0x0000_0001;
/// DC: delete children (of the class the ACE's object type names, or any class).
pub const RIGHT_DS_DELETE_CHILD: u32 = 0x0000_0002;
/// LC: list the object's children.
pub const RIGHT_DS_LIST_CONTENTS: u32 = 0x0000_0004;
/// SW: validated write ("self"): a write checked by the directory, named by the ACE's
/// object type (MS-ADTS calls it RIGHT_DS_WRITE_PROPERTY_EXTENDED).
pub const RIGHT_DS_SELF: u32 = 0x0000_0008;
/// RP: read properties (all, a property set, or one property).
pub const RIGHT_DS_READ_PROPERTY: u32 = 0x0000_0010;
/// WP: write properties (all, a property set, or one property).
pub const RIGHT_DS_WRITE_PROPERTY: u32 = 0x0000_0020;
/// DT: delete the object and its whole subtree.
pub const RIGHT_DS_DELETE_TREE: u32 = 0x0000_0040;
/// LO: see the object when listing its parent (only when list-object mode is on).
pub const RIGHT_DS_LIST_OBJECT: u32 = 0x0000_0080;
/// CR: a control access right (extended right) named by the ACE's object type.
pub const RIGHT_DS_CONTROL_ACCESS: u32 = 0x0000_0100;
/// SD: delete the object.
pub const RIGHT_DELETE: u32 = 0x0001_0000;
/// RC: read the security descriptor, SACL excepted.
pub const RIGHT_READ_CONTROL: u32 = 0x0002_0000;
/// WD: write the DACL.
pub const RIGHT_WRITE_DAC: u32 = 0x0004_0000;
/// WO: take ownership.
pub const RIGHT_WRITE_OWNER: u32 = 0x0008_0000;
/// SYNCHRONIZE: meaningless to the directory, present in file masks (FA, FR, …).
pub const RIGHT_SYNCHRONIZE: u32 = 0x0010_0000;
/// ACCESS_SYSTEM_SECURITY: read or write the SACL; granted by privilege, never by an ACE.
pub const ACCESS_SYSTEM_SECURITY: u32 = 0x0100_0000;
/// MAXIMUM_ALLOWED: asks an access check for everything the descriptor grants.
pub const MAXIMUM_ALLOWED: u32 = 0x0200_0000;
/// GA: every right, mapped through [`map_generic`].
pub const GENERIC_ALL: u32 = 0x1000_0000;
/// GX: execute, mapped through [`map_generic`].
pub const GENERIC_EXECUTE: u32 = 0x2000_0000;
/// GW: write, mapped through [`map_generic`].
pub const GENERIC_WRITE: u32 = 0x4000_0000;
/// GR: read, mapped through [`map_generic`].
pub const GENERIC_READ: u32 = 0x8000_0000;

/// What GENERIC_READ means on a directory object: RC, LC, RP and LO (0x20094).
pub const DS_GENERIC_READ: u32 =
    RIGHT_READ_CONTROL | RIGHT_DS_LIST_CONTENTS | RIGHT_DS_READ_PROPERTY | RIGHT_DS_LIST_OBJECT;
/// What GENERIC_WRITE means on a directory object: RC, SW and WP (0x20028).
pub const DS_GENERIC_WRITE: u32 = RIGHT_READ_CONTROL | RIGHT_DS_SELF | RIGHT_DS_WRITE_PROPERTY;
/// What GENERIC_EXECUTE means on a directory object: RC and LC (0x20004).
pub const DS_GENERIC_EXECUTE: u32 = RIGHT_READ_CONTROL | RIGHT_DS_LIST_CONTENTS;
/// What GENERIC_ALL means on a directory object: every directory and standard right
/// but SYNCHRONIZE (0xF01FF).
pub const DS_GENERIC_ALL: u32 = 0x000F_01FF;

/// Every right an ACE can name that the directory interprets: the nine directory bits
/// and the four standard ones.
pub const DS_ALL_RIGHTS: u32 = DS_GENERIC_ALL;

/// FA: all file access (SDDL alias; never used by the directory itself).
pub const FILE_ALL_ACCESS: u32 = 0x001F_01FF;
/// FR: generic file read (SDDL alias).
pub const FILE_GENERIC_READ: u32 = 0x0012_0089;
/// FW: generic file write (SDDL alias).
pub const FILE_GENERIC_WRITE: u32 = 0x0012_0116;
/// FX: generic file execute (SDDL alias).
pub const FILE_GENERIC_EXECUTE: u32 = 0x0012_00A0;
/// KA: all registry key access (SDDL alias).
pub const KEY_ALL_ACCESS: u32 = 0x000F_003F;
/// KR: registry key read (SDDL alias).
pub const KEY_READ: u32 = 0x0002_0019;
/// KW: registry key write (SDDL alias).
pub const KEY_WRITE: u32 = 0x0002_0006;
/// KX: registry key execute (SDDL alias; the same bits as KR).
pub const KEY_EXECUTE: u32 = 0x0002_0019;

/// Replaces the four generic bits of a mask with the directory rights they stand for
/// (MS-ADTS 5.1.3.2; the same table as Samba's `map_generic_rights_ds`): ACEs created
/// by inheritance and the masks an access check compares carry no generic bits.
pub const fn map_generic(mask: u32) -> u32 {
    let mut out = mask & !(GENERIC_ALL | GENERIC_EXECUTE | GENERIC_WRITE | GENERIC_READ);
    if mask & GENERIC_ALL != 0 {
        out |= DS_GENERIC_ALL;
    }
    if mask & GENERIC_EXECUTE != 0 {
        out |= DS_GENERIC_EXECUTE;
    }
    if mask & GENERIC_WRITE != 0 {
        out |= DS_GENERIC_WRITE;
    }
    if mask & GENERIC_READ != 0 {
        out |= DS_GENERIC_READ;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_mapping_matches_the_directory_table() {
        assert_eq!(map_generic(GENERIC_ALL), 0xF01FF);
        assert_eq!(map_generic(GENERIC_READ), 0x20094);
        assert_eq!(map_generic(GENERIC_WRITE), 0x20028);
        assert_eq!(map_generic(GENERIC_EXECUTE), 0x20004);
        assert_eq!(map_generic(GENERIC_READ | RIGHT_DS_CONTROL_ACCESS), 0x20194);
        assert_eq!(map_generic(RIGHT_WRITE_DAC), RIGHT_WRITE_DAC);
    }
}
