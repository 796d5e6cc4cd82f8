//! The self-relative SECURITY_DESCRIPTOR (MS-DTYP 2.4.6) with its ACLs (2.4.5) and ACEs
//! (2.4.4): the value of every object's `nTSecurityDescriptor`.
//!
//! Reading accepts the four parts (owner, group, SACL, DACL) at any offsets and in any
//! order. Writing lays them out the way Windows does: the 20-byte header, then the SACL,
//! the DACL, the owner and the group ([`Layout::Windows`]; MS-DTYP 2.5.1.4's worked
//! example and every descriptor Windows converted from SDDL in Samba's test data
//! `libcli/security/tests/data/*.json` are in that order). Samba's NDR writes owner,
//! group, SACL, DACL instead ([`Layout::OwnerFirst`]), which is what a Samba-provisioned
//! database holds; both read back to the same [`SecurityDescriptor`].
//!
//! ACE types the directory does not use (callback, mandatory-label, resource-attribute
//! ACEs, …) are kept as raw bytes ([`AceKind::Unknown`]) and written back unchanged, so
//! such a descriptor survives a read and write. Three things are not kept: the header's
//! Sbz1 byte (written as 0), an ACL's Sbz1/Sbz2 fields (written as 0) and bytes an
//! ACL's size covers beyond its last ACE (dropped).

use crate::sid::Sid;

use super::SdError;

/// A GUID in its wire layout (first three groups little-endian), as ACEs and
/// `schemaIDGUID` carry it.
pub type Guid = [u8; 16];

/// SECURITY_DESCRIPTOR control bits (MS-DTYP 2.4.6): which parts are present and how
/// they were inherited.
pub mod control {
    /// The owner was supplied by a defaulting mechanism.
    pub const SE_OWNER_DEFAULTED: u16 = 0x0001;
    /// The group was supplied by a defaulting mechanism.
    pub const SE_GROUP_DEFAULTED: u16 = 0x0002;
    /// A DACL is present (with a zero offset: a NULL DACL, granting everything).
    pub const SE_DACL_PRESENT: u16 = 0x0004;
    /// The DACL was supplied by a defaulting mechanism.
    pub const SE_DACL_DEFAULTED: u16 = 0x0008;
    /// A SACL is present.
    pub const SE_SACL_PRESENT: u16 = 0x0010;
    /// The SACL was supplied by a defaulting mechanism.
    pub const SE_SACL_DEFAULTED: u16 = 0x0020;
    /// The DACL is trusted (set by a trusted source; unused by the directory).
    pub const SE_DACL_TRUSTED: u16 = 0x0040;
    /// Server security (unused by the directory).
    pub const SE_SERVER_SECURITY: u16 = 0x0080;
    /// The DACL asks for automatic inheritance to be computed (SDDL `AR`).
    pub const SE_DACL_AUTO_INHERIT_REQ: u16 = 0x0100;
    /// The SACL asks for automatic inheritance to be computed (SDDL `AR`).
    pub const SE_SACL_AUTO_INHERIT_REQ: u16 = 0x0200;
    /// The DACL was built with automatic inheritance (SDDL `AI`).
    pub const SE_DACL_AUTO_INHERITED: u16 = 0x0400;
    /// The SACL was built with automatic inheritance (SDDL `AI`).
    pub const SE_SACL_AUTO_INHERITED: u16 = 0x0800;
    /// The DACL does not inherit from the parent (SDDL `P`).
    pub const SE_DACL_PROTECTED: u16 = 0x1000;
    /// The SACL does not inherit from the parent (SDDL `P`).
    pub const SE_SACL_PROTECTED: u16 = 0x2000;
    /// The resource-manager control byte (Sbz1) is valid.
    pub const SE_RM_CONTROL_VALID: u16 = 0x4000;
    /// The descriptor is in self-relative form (always, for stored descriptors).
    pub const SE_SELF_RELATIVE: u16 = 0x8000;
}

/// ACE header flags (MS-DTYP 2.4.4.1): inheritance and auditing.
pub mod ace_flags {
    /// OI: inherited by non-container children.
    pub const OBJECT_INHERIT: u8 = 0x01;
    /// CI: inherited by container children.
    pub const CONTAINER_INHERIT: u8 = 0x02;
    /// NP: inherited one level only (the child's copy loses OI/CI).
    pub const NO_PROPAGATE_INHERIT: u8 = 0x04;
    /// IO: does not apply to this object, only to children that inherit it.
    pub const INHERIT_ONLY: u8 = 0x08;
    /// ID: this ACE was inherited from the parent.
    pub const INHERITED: u8 = 0x10;
    /// SA: audit successful access (SACL ACEs).
    pub const SUCCESSFUL_ACCESS: u8 = 0x40;
    /// FA: audit failed access (SACL ACEs).
    pub const FAILED_ACCESS: u8 = 0x80;
    /// The four flags that steer inheritance.
    pub const INHERITANCE: u8 =
        OBJECT_INHERIT | CONTAINER_INHERIT | NO_PROPAGATE_INHERIT | INHERIT_ONLY;
}

/// ACL_REVISION: the revision of an ACL holding no object ACEs.
pub const ACL_REVISION: u8 = 2;
/// ACL_REVISION_DS: the revision an ACL needs once it holds object ACEs.
pub const ACL_REVISION_DS: u8 = 4;

/// ObjectType is present in an object ACE.
const ACE_OBJECT_TYPE_PRESENT: u32 = 0x1;
/// InheritedObjectType is present in an object ACE.
const ACE_INHERITED_OBJECT_TYPE_PRESENT: u32 = 0x2;

/// The type of an ACE: the six the directory evaluates, or any other kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AceKind {
    /// ACCESS_ALLOWED_ACE_TYPE (0).
    AccessAllowed,
    /// ACCESS_DENIED_ACE_TYPE (1).
    AccessDenied,
    /// SYSTEM_AUDIT_ACE_TYPE (2).
    SystemAudit,
    /// ACCESS_ALLOWED_OBJECT_ACE_TYPE (5).
    AccessAllowedObject,
    /// ACCESS_DENIED_OBJECT_ACE_TYPE (6).
    AccessDeniedObject,
    /// SYSTEM_AUDIT_OBJECT_ACE_TYPE (7).
    SystemAuditObject,
    /// Any other type: its body (everything after the 4-byte ACE header) verbatim. The
    /// ACE's `mask`, `sid` and GUID fields mean nothing for it (0, S-1-0-0, `None`).
    Unknown {
        /// The AceType byte.
        ace_type: u8,
        /// The bytes after the ACE header.
        body: Vec<u8>,
    },
}

impl AceKind {
    /// The AceType byte.
    pub fn ace_type(&self) -> u8 {
        match self {
            AceKind::AccessAllowed => 0,
            AceKind::AccessDenied => 1,
            AceKind::SystemAudit => 2,
            AceKind::AccessAllowedObject => 5,
            AceKind::AccessDeniedObject => 6,
            AceKind::SystemAuditObject => 7,
            AceKind::Unknown { ace_type, .. } => *ace_type,
        }
    }

    /// The kind of a known AceType byte.
    pub fn known(ace_type: u8) -> Option<AceKind> {
        Some(match ace_type {
            0 => AceKind::AccessAllowed,
            1 => AceKind::AccessDenied,
            2 => AceKind::SystemAudit,
            5 => AceKind::AccessAllowedObject,
            6 => AceKind::AccessDeniedObject,
            7 => AceKind::SystemAuditObject,
            _ => return None,
        })
    }

    /// Whether the type carries object GUIDs (5, 6, 7).
    pub fn is_object(&self) -> bool {
        matches!(
            self,
            AceKind::AccessAllowedObject | AceKind::AccessDeniedObject | AceKind::SystemAuditObject
        )
    }

    /// The object variant of a plain type and vice versa (`None` for unknown types).
    pub fn with_object(&self, object: bool) -> Option<AceKind> {
        use AceKind::*;
        Some(match (self, object) {
            (AccessAllowed | AccessAllowedObject, false) => AccessAllowed,
            (AccessDenied | AccessDeniedObject, false) => AccessDenied,
            (SystemAudit | SystemAuditObject, false) => SystemAudit,
            (AccessAllowed | AccessAllowedObject, true) => AccessAllowedObject,
            (AccessDenied | AccessDeniedObject, true) => AccessDeniedObject,
            (SystemAudit | SystemAuditObject, true) => SystemAuditObject,
            (Unknown { .. }, _) => return None,
        })
    }
}

/// One access control entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ace {
    /// The ACE type.
    pub kind: AceKind,
    /// Inheritance and audit flags ([`ace_flags`]).
    pub flags: u8,
    /// The access mask ([`super::rights`]).
    pub mask: u32,
    /// The trustee.
    pub sid: Sid,
    /// Object ACEs: the class, property, property set, extended right or validated
    /// write the ACE is about (`None`: the whole object).
    pub object_type: Option<Guid>,
    /// Object ACEs: the only class of child that inherits the ACE (`None`: every class).
    pub inherited_object_type: Option<Guid>,
    /// Bytes the ACE's size covers after its SID (callback data; normally empty).
    pub application_data: Vec<u8>,
}

/// The NULL SID (S-1-0-0) that stands in the `sid` of unknown ACEs.
fn null_sid() -> Sid {
    Sid {
        authority: 0,
        subs: vec![0],
    }
}

impl Ace {
    /// A plain (non-object) ACE.
    pub fn new(kind: AceKind, flags: u8, mask: u32, sid: Sid) -> Ace {
        Ace {
            kind,
            flags,
            mask,
            sid,
            object_type: None,
            inherited_object_type: None,
            application_data: Vec::new(),
        }
    }

    /// An object ACE about `object_type`, inherited only by `inherited_object_type`.
    pub fn object(
        kind: AceKind,
        flags: u8,
        mask: u32,
        sid: Sid,
        object_type: Option<Guid>,
        inherited_object_type: Option<Guid>,
    ) -> Ace {
        Ace {
            object_type,
            inherited_object_type,
            ..Ace::new(kind, flags, mask, sid)
        }
    }

    /// Whether the ACE applies to children only (IO).
    pub fn is_inherit_only(&self) -> bool {
        self.flags & ace_flags::INHERIT_ONLY != 0
    }

    /// Whether the ACE came from the parent (ID).
    pub fn is_inherited(&self) -> bool {
        self.flags & ace_flags::INHERITED != 0
    }

    /// The ACE's size on the wire.
    fn wire_len(&self) -> usize {
        match &self.kind {
            AceKind::Unknown { body, .. } => 4 + body.len(),
            k => {
                let guids = if k.is_object() {
                    4 + 16
                        * (usize::from(self.object_type.is_some())
                            + usize::from(self.inherited_object_type.is_some()))
                } else {
                    0
                };
                4 + 4 + guids + sid_len(&self.sid) + self.application_data.len()
            }
        }
    }

    /// Appends the wire form.
    fn write(&self, out: &mut Vec<u8>) -> Result<(), SdError> {
        let size = u16::try_from(self.wire_len())
            .map_err(|_| SdError::Encode("an ACE is longer than 65535 bytes".into()))?;
        out.push(self.kind.ace_type());
        out.push(self.flags);
        out.extend_from_slice(&size.to_le_bytes());
        if let AceKind::Unknown { body, .. } = &self.kind {
            out.extend_from_slice(body);
            return Ok(());
        }
        out.extend_from_slice(&self.mask.to_le_bytes());
        if self.kind.is_object() {
            let mut f = 0u32;
            if self.object_type.is_some() {
                f |= ACE_OBJECT_TYPE_PRESENT;
            }
            if self.inherited_object_type.is_some() {
                f |= ACE_INHERITED_OBJECT_TYPE_PRESENT;
            }
            out.extend_from_slice(&f.to_le_bytes());
            if let Some(g) = &self.object_type {
                out.extend_from_slice(g);
            }
            if let Some(g) = &self.inherited_object_type {
                out.extend_from_slice(g);
            }
        }
        write_sid(&self.sid, out)?;
        out.extend_from_slice(&self.application_data);
        Ok(())
    }
}

/// An access control list: the DACL or the SACL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Acl {
    /// The AclRevision byte: [`ACL_REVISION`] (2) or [`ACL_REVISION_DS`] (4).
    pub revision: u8,
    /// The ACEs, in evaluation order.
    pub aces: Vec<Ace>,
}

impl Acl {
    /// An ACL with the lowest revision that can hold `aces` (4 once an object ACE is
    /// present, else 2), as Windows chooses when it converts SDDL.
    pub fn new(aces: Vec<Ace>) -> Acl {
        Acl {
            revision: Acl::revision_for(&aces),
            aces,
        }
    }

    /// The lowest revision that can hold `aces`.
    pub fn revision_for(aces: &[Ace]) -> u8 {
        if aces.iter().any(|a| a.kind.is_object()) {
            ACL_REVISION_DS
        } else {
            ACL_REVISION
        }
    }

    /// Appends the wire form.
    fn write(&self, out: &mut Vec<u8>) -> Result<(), SdError> {
        let body: usize = self.aces.iter().map(Ace::wire_len).sum();
        let size = u16::try_from(8 + body)
            .map_err(|_| SdError::Encode("an ACL is longer than 65535 bytes".into()))?;
        let count = u16::try_from(self.aces.len())
            .map_err(|_| SdError::Encode("an ACL holds more than 65535 ACEs".into()))?;
        out.push(self.revision);
        out.push(0);
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        for ace in &self.aces {
            ace.write(out)?;
        }
        Ok(())
    }
}

/// The order in which [`SecurityDescriptor::to_bytes_in`] lays out the parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Header, SACL, DACL, owner, group: what Windows writes.
    Windows,
    /// Header, owner, group, SACL, DACL: what Samba's NDR writes (and so what a
    /// Samba-provisioned database holds).
    OwnerFirst,
}

/// The parts of a descriptor the SD flags control names (LDAP_SERVER_SD_FLAGS_OID).
pub mod sd_flags {
    /// OWNER_SECURITY_INFORMATION.
    pub const OWNER: u32 = 0x1;
    /// GROUP_SECURITY_INFORMATION.
    pub const GROUP: u32 = 0x2;
    /// DACL_SECURITY_INFORMATION.
    pub const DACL: u32 = 0x4;
    /// SACL_SECURITY_INFORMATION.
    pub const SACL: u32 = 0x8;
    /// Every part.
    pub const ALL: u32 = 0xF;
}

/// A security descriptor: owner, group, SACL and DACL, and the control bits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecurityDescriptor {
    /// Control bits ([`control`]), written as they are: builders keep
    /// SE_SELF_RELATIVE and the two PRESENT bits in step with the parts.
    pub control: u16,
    /// The owner.
    pub owner: Option<Sid>,
    /// The primary group (unused by the directory but stored).
    pub group: Option<Sid>,
    /// The system ACL (auditing).
    pub sacl: Option<Acl>,
    /// The discretionary ACL: `None` grants everything (a NULL or absent DACL).
    pub dacl: Option<Acl>,
}

impl Default for SecurityDescriptor {
    fn default() -> Self {
        SecurityDescriptor {
            control: control::SE_SELF_RELATIVE,
            owner: None,
            group: None,
            sacl: None,
            dacl: None,
        }
    }
}

impl SecurityDescriptor {
    /// Reads a self-relative descriptor (the parts at any offsets, in any order).
    pub fn from_bytes(buf: &[u8]) -> Result<SecurityDescriptor, SdError> {
        if buf.len() < 20 {
            return Err(bad(buf.len(), "shorter than the 20-byte header"));
        }
        if buf.first() != Some(&1) {
            return Err(bad(0, "revision is not 1"));
        }
        let control = le16(buf, 2).ok_or(bad(2, "truncated header"))?;
        let offset = |at: usize| -> Result<Option<usize>, SdError> {
            let v = le32(buf, at).ok_or(bad(at, "truncated header"))?;
            match usize::try_from(v) {
                Ok(0) => Ok(None),
                Ok(o) if o >= 20 => Ok(Some(o)),
                _ => Err(bad(at, "offset points into the header")),
            }
        };
        let owner = match offset(4)? {
            Some(o) => Some(read_sid(buf, o, buf.len())?.0),
            None => None,
        };
        let group = match offset(8)? {
            Some(o) => Some(read_sid(buf, o, buf.len())?.0),
            None => None,
        };
        let sacl = match offset(12)? {
            Some(o) => Some(read_acl(buf, o)?),
            None => None,
        };
        let dacl = match offset(16)? {
            Some(o) => Some(read_acl(buf, o)?),
            None => None,
        };
        Ok(SecurityDescriptor {
            control,
            owner,
            group,
            sacl,
            dacl,
        })
    }

    /// The parts named by SD flags (MS-ADTS 3.1.1.3.4.1.11: owner 1, group 2, DACL 4,
    /// SACL 8): what a read with the SD flags control returns, the others absent with
    /// their control bits cleared.
    pub fn only(&self, flags: u32) -> SecurityDescriptor {
        let mut out = self.clone();
        if flags & sd_flags::OWNER == 0 {
            out.owner = None;
            out.control &= !control::SE_OWNER_DEFAULTED;
        }
        if flags & sd_flags::GROUP == 0 {
            out.group = None;
            out.control &= !control::SE_GROUP_DEFAULTED;
        }
        if flags & sd_flags::DACL == 0 {
            out.dacl = None;
            out.control &= !(control::SE_DACL_PRESENT
                | control::SE_DACL_DEFAULTED
                | control::SE_DACL_AUTO_INHERITED
                | control::SE_DACL_PROTECTED
                | control::SE_DACL_AUTO_INHERIT_REQ);
        }
        if flags & sd_flags::SACL == 0 {
            out.sacl = None;
            out.control &= !(control::SE_SACL_PRESENT
                | control::SE_SACL_DEFAULTED
                | control::SE_SACL_AUTO_INHERITED
                | control::SE_SACL_PROTECTED
                | control::SE_SACL_AUTO_INHERIT_REQ);
        }
        out
    }

    /// The self-relative form in Windows' layout (SACL, DACL, owner, group).
    pub fn to_bytes(&self) -> Result<Vec<u8>, SdError> {
        self.to_bytes_in(Layout::Windows)
    }

    /// The self-relative form with the parts in the given order.
    pub fn to_bytes_in(&self, layout: Layout) -> Result<Vec<u8>, SdError> {
        #[derive(Clone, Copy)]
        enum Part {
            Owner,
            Group,
            Sacl,
            Dacl,
        }
        let order = match layout {
            Layout::Windows => [Part::Sacl, Part::Dacl, Part::Owner, Part::Group],
            Layout::OwnerFirst => [Part::Owner, Part::Group, Part::Sacl, Part::Dacl],
        };
        let mut out = Vec::with_capacity(self.wire_len_hint());
        out.push(1);
        out.push(0);
        out.extend_from_slice(&self.control.to_le_bytes());
        out.extend_from_slice(&[0u8; 16]);
        for part in order {
            let at = u32::try_from(out.len())
                .map_err(|_| SdError::Encode("descriptor longer than 4 GiB".into()))?;
            let slot = match part {
                Part::Owner => self
                    .owner
                    .as_ref()
                    .map(|s| write_sid(s, &mut out))
                    .map(|r| (4, r)),
                Part::Group => self
                    .group
                    .as_ref()
                    .map(|s| write_sid(s, &mut out))
                    .map(|r| (8, r)),
                Part::Sacl => self
                    .sacl
                    .as_ref()
                    .map(|a| a.write(&mut out))
                    .map(|r| (12, r)),
                Part::Dacl => self
                    .dacl
                    .as_ref()
                    .map(|a| a.write(&mut out))
                    .map(|r| (16, r)),
            };
            if let Some((field, written)) = slot {
                written?;
                if let Some(dst) = out.get_mut(field..field + 4) {
                    dst.copy_from_slice(&at.to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    /// A rough size, to allocate once when writing.
    fn wire_len_hint(&self) -> usize {
        let acl = |a: &Option<Acl>| {
            a.as_ref()
                .map_or(0, |a| 8 + a.aces.iter().map(Ace::wire_len).sum::<usize>())
        };
        20 + self.owner.as_ref().map_or(0, sid_len)
            + self.group.as_ref().map_or(0, sid_len)
            + acl(&self.sacl)
            + acl(&self.dacl)
    }

    /// Parses SDDL, resolving domain-relative aliases (DA, EA, …) against `domain`,
    /// which also stands for the forest root domain; see [`super::sddl`].
    pub fn from_sddl(text: &str, domain: &Sid) -> Result<SecurityDescriptor, SdError> {
        super::sddl::parse(text, domain)
    }

    /// Prints SDDL as Windows does, using aliases for `domain`; see [`super::sddl`].
    pub fn to_sddl(&self, domain: &Sid) -> Result<String, SdError> {
        super::sddl::print(self, domain)
    }
}

/// A binary-form error at `offset`.
fn bad(offset: usize, what: &'static str) -> SdError {
    SdError::Binary { offset, what }
}

/// A little-endian u16 at `at`.
fn le16(buf: &[u8], at: usize) -> Option<u16> {
    let b: [u8; 2] = buf.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_le_bytes(b))
}

/// A little-endian u32 at `at`.
fn le32(buf: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = buf.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// The wire size of a SID.
fn sid_len(sid: &Sid) -> usize {
    8 + 4 * sid.subs.len()
}

/// Appends a SID's wire form, refusing what the form cannot hold.
fn write_sid(sid: &Sid, out: &mut Vec<u8>) -> Result<(), SdError> {
    if sid.subs.len() > 15 {
        return Err(SdError::Encode(format!(
            "SID {sid} has more than 15 sub-authorities"
        )));
    }
    if sid.authority >= 1 << 48 {
        return Err(SdError::Encode(format!(
            "SID {sid} has an authority over 48 bits"
        )));
    }
    out.extend_from_slice(&sid.to_bytes());
    Ok(())
}

/// Reads a SID at `at` that must end by `end`; returns it and its length.
pub(crate) fn read_sid(buf: &[u8], at: usize, end: usize) -> Result<(Sid, usize), SdError> {
    let head = buf
        .get(at..at.saturating_add(8))
        .filter(|_| at.saturating_add(8) <= end)
        .ok_or(bad(at, "truncated SID"))?;
    let (rev, n, auth) = match head {
        [rev, n, a @ ..] => (*rev, usize::from(*n), a),
        _ => return Err(bad(at, "truncated SID")),
    };
    if rev != 1 {
        return Err(bad(at, "SID revision is not 1"));
    }
    if n > 15 {
        return Err(bad(at + 1, "SID has more than 15 sub-authorities"));
    }
    let len = 8 + 4 * n;
    if at.saturating_add(len) > end {
        return Err(bad(at, "truncated SID"));
    }
    let mut a = [0u8; 8];
    if let Some(dst) = a.get_mut(2..) {
        dst.copy_from_slice(auth);
    }
    let mut subs = Vec::with_capacity(n);
    for i in 0..n {
        subs.push(le32(buf, at + 8 + 4 * i).ok_or(bad(at, "truncated SID"))?);
    }
    Ok((
        Sid {
            authority: u64::from_be_bytes(a),
            subs,
        },
        len,
    ))
}

/// Reads an ACL at `at`.
fn read_acl(buf: &[u8], at: usize) -> Result<Acl, SdError> {
    let revision = *buf.get(at).ok_or(bad(at, "truncated ACL header"))?;
    let size = usize::from(le16(buf, at + 2).ok_or(bad(at, "truncated ACL header"))?);
    let count = usize::from(le16(buf, at + 4).ok_or(bad(at, "truncated ACL header"))?);
    if le16(buf, at + 6).is_none() {
        return Err(bad(at, "truncated ACL header"));
    }
    if size < 8 {
        return Err(bad(at + 2, "ACL size is smaller than its header"));
    }
    let end = at + size;
    if end > buf.len() {
        return Err(bad(at + 2, "ACL runs past the end of the descriptor"));
    }
    let mut aces = Vec::with_capacity(count.min((size - 8) / 8));
    let mut pos = at + 8;
    for _ in 0..count {
        if pos + 4 > end {
            return Err(bad(pos, "ACE header runs past its ACL"));
        }
        let ace_type = *buf.get(pos).ok_or(bad(pos, "truncated ACE"))?;
        let flags = *buf.get(pos + 1).ok_or(bad(pos, "truncated ACE"))?;
        let ace_size = usize::from(le16(buf, pos + 2).ok_or(bad(pos, "truncated ACE"))?);
        if ace_size < 4 {
            return Err(bad(pos + 2, "ACE size is smaller than its header"));
        }
        let ace_end = pos + ace_size;
        if ace_end > end {
            return Err(bad(pos + 2, "ACE runs past its ACL"));
        }
        aces.push(read_ace(buf, pos, ace_end, ace_type, flags)?);
        pos = ace_end;
    }
    Ok(Acl { revision, aces })
}

/// Reads the ACE whose header is at `at` and which ends at `end`.
fn read_ace(buf: &[u8], at: usize, end: usize, ace_type: u8, flags: u8) -> Result<Ace, SdError> {
    let Some(kind) = AceKind::known(ace_type) else {
        let body = buf
            .get(at + 4..end)
            .ok_or(bad(at, "truncated ACE"))?
            .to_vec();
        return Ok(Ace::new(
            AceKind::Unknown { ace_type, body },
            flags,
            0,
            null_sid(),
        ));
    };
    let mut pos = at + 4;
    if pos + 4 > end {
        return Err(bad(pos, "ACE too short for its access mask"));
    }
    let mask = le32(buf, pos).ok_or(bad(pos, "truncated ACE"))?;
    pos += 4;
    let (mut object_type, mut inherited_object_type) = (None, None);
    if kind.is_object() {
        if pos + 4 > end {
            return Err(bad(pos, "object ACE too short for its flags"));
        }
        let f = le32(buf, pos).ok_or(bad(pos, "truncated ACE"))?;
        if f & !(ACE_OBJECT_TYPE_PRESENT | ACE_INHERITED_OBJECT_TYPE_PRESENT) != 0 {
            return Err(bad(pos, "unknown object ACE flags"));
        }
        pos += 4;
        let mut guid = |present: bool| -> Result<Option<Guid>, SdError> {
            if !present {
                return Ok(None);
            }
            if pos + 16 > end {
                return Err(bad(pos, "object ACE too short for its GUID"));
            }
            let g: Guid = buf
                .get(pos..pos + 16)
                .and_then(|s| s.try_into().ok())
                .ok_or(bad(pos, "truncated ACE"))?;
            pos += 16;
            Ok(Some(g))
        };
        object_type = guid(f & ACE_OBJECT_TYPE_PRESENT != 0)?;
        inherited_object_type = guid(f & ACE_INHERITED_OBJECT_TYPE_PRESENT != 0)?;
    }
    let (sid, len) = read_sid(buf, pos, end)?;
    let application_data = buf.get(pos + len..end).unwrap_or(&[]).to_vec();
    Ok(Ace {
        kind,
        flags,
        mask,
        sid,
        object_type,
        inherited_object_type,
        application_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    /// MS-DTYP 2.5.1.4's worked example: the binary form of
    /// `O:BAG:BAD:P(A;CIOI;GRGX;;;BU)(A;CIOI;GA;;;BA)(A;CIOI;GA;;;SY)(A;CIOI;GA;;;CO)S:P(AU;FA;GR;;;WD)`.
    pub(crate) const MS_DTYP_EXAMPLE: &str = "
        01 00 14 b0 90 00 00 00 a0 00 00 00 14 00 00 00
        30 00 00 00 02 00 1c 00 01 00 00 00 02 80 14 00
        00 00 00 80 01 01 00 00 00 00 00 01 00 00 00 00
        02 00 60 00 04 00 00 00 00 03 18 00 00 00 00 a0
        01 02 00 00 00 00 00 05 20 00 00 00 21 02 00 00
        00 03 18 00 00 00 00 10 01 02 00 00 00 00 00 05
        20 00 00 00 20 02 00 00 00 03 14 00 00 00 00 10
        01 01 00 00 00 00 00 05 12 00 00 00 00 03 14 00
        00 00 00 10 01 01 00 00 00 00 00 03 00 00 00 00
        01 02 00 00 00 00 00 05 20 00 00 00 20 02 00 00
        01 02 00 00 00 00 00 05 20 00 00 00 20 02 00 00";

    #[test]
    fn ms_dtyp_example_round_trips() {
        let bytes = hex(MS_DTYP_EXAMPLE);
        let sd = SecurityDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(sd.control, 0xb014);
        assert_eq!(sd.owner, Some(Sid::builtin(544)));
        assert_eq!(sd.group, Some(Sid::builtin(544)));
        let dacl = sd.dacl.as_ref().unwrap();
        assert_eq!(dacl.revision, 2);
        assert_eq!(dacl.aces.len(), 4);
        assert_eq!(dacl.aces[0].mask, 0xa000_0000);
        assert_eq!(dacl.aces[0].flags, 3);
        assert_eq!(dacl.aces[0].sid, Sid::builtin(545));
        let sacl = sd.sacl.as_ref().unwrap();
        assert_eq!(sacl.aces[0].kind, AceKind::SystemAudit);
        assert_eq!(sacl.aces[0].flags, ace_flags::FAILED_ACCESS);
        assert_eq!(sd.to_bytes().unwrap(), bytes);
    }

    #[test]
    fn layouts_read_back_equal() {
        let sd = SecurityDescriptor::from_bytes(&hex(MS_DTYP_EXAMPLE)).unwrap();
        let other = sd.to_bytes_in(Layout::OwnerFirst).unwrap();
        assert_eq!(&other[4..8], &20u32.to_le_bytes());
        assert_eq!(SecurityDescriptor::from_bytes(&other).unwrap(), sd);
    }

    #[test]
    fn unknown_ace_types_survive() {
        // A mandatory-label ACE (type 0x11) in a SACL, kept as raw bytes.
        let mut sd = SecurityDescriptor::default();
        let body = [1u8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 16, 0, 16, 0, 0];
        sd.sacl = Some(Acl {
            revision: 2,
            aces: vec![Ace::new(
                AceKind::Unknown {
                    ace_type: 0x11,
                    body: body.to_vec(),
                },
                0,
                0,
                null_sid(),
            )],
        });
        sd.control |= control::SE_SACL_PRESENT;
        let bytes = sd.to_bytes().unwrap();
        let back = SecurityDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(back, sd);
        assert_eq!(back.to_bytes().unwrap(), bytes);
    }

    #[test]
    fn malformed_input_is_refused_with_a_place() {
        assert!(SecurityDescriptor::from_bytes(&[]).is_err());
        let mut b = hex(MS_DTYP_EXAMPLE);
        b[0] = 2;
        assert_eq!(
            SecurityDescriptor::from_bytes(&b),
            Err(SdError::Binary {
                offset: 0,
                what: "revision is not 1"
            })
        );
        let mut b = hex(MS_DTYP_EXAMPLE);
        b.truncate(0x9c);
        assert!(matches!(
            SecurityDescriptor::from_bytes(&b),
            Err(SdError::Binary { offset: 0x90, .. })
        ));
        let mut b = hex(MS_DTYP_EXAMPLE);
        b[4] = 3; // owner offset into the header
        assert!(SecurityDescriptor::from_bytes(&b).is_err());
        let mut b = hex(MS_DTYP_EXAMPLE);
        b[0x32] = 0xff; // DACL size past the end
        assert!(SecurityDescriptor::from_bytes(&b).is_err());
    }

    #[test]
    fn unwritable_parts_are_errors() {
        let sd = SecurityDescriptor {
            owner: Some(Sid {
                authority: 5,
                subs: vec![1; 16],
            }),
            ..SecurityDescriptor::default()
        };
        assert!(matches!(sd.to_bytes(), Err(SdError::Encode(_))));
        let big = Ace {
            application_data: vec![0; 70_000],
            ..Ace::new(AceKind::AccessAllowed, 0, 1, Sid::builtin(544))
        };
        let sd = SecurityDescriptor {
            dacl: Some(Acl::new(vec![big])),
            ..SecurityDescriptor::default()
        };
        assert!(matches!(sd.to_bytes(), Err(SdError::Encode(_))));
    }
}
