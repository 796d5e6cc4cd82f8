//! `KerberosFlags` (BIT STRING) and the named bits of KDCOptions,
//! TicketFlags, APOptions and PA-PAC-OPTIONS.
//!
//! RFC 4120 numbers flag bits from the start of the BIT STRING: bit 0 is the
//! first (most significant) bit of the first byte. This module keeps that
//! numbering in a `u32` where RFC bit `n` is `0x8000_0000 >> n`, so the
//! `u32` reads exactly like the four bytes on the wire (big-endian).

use super::der::{dec_flags, enc_flags, Der, Res, Tlv};

/// A 32-bit `KerberosFlags` value; RFC bit 0 is the most significant bit.
///
/// Encoded as a 32-bit BIT STRING with no unused bits (what MIT and Windows
/// send). Decoding accepts any length: missing bits read as zero, bits past 32
/// are ignored, bits marked unused are cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KerberosFlags(pub u32);

/// The mask of RFC bit `n` (0 = most significant); bits past 31 give 0.
pub const fn flag_bit(n: u32) -> u32 {
    if n < 32 {
        0x8000_0000 >> n
    } else {
        0
    }
}

impl KerberosFlags {
    /// No flags set.
    pub const EMPTY: KerberosFlags = KerberosFlags(0);

    /// True if every bit of `mask` is set.
    pub fn contains(self, mask: u32) -> bool {
        self.0 & mask == mask
    }

    /// True if RFC bit `n` is set.
    pub fn bit(self, n: u32) -> bool {
        self.0 & flag_bit(n) != 0
    }

    /// Sets the bits of `mask`.
    pub fn insert(&mut self, mask: u32) {
        self.0 |= mask;
    }

    /// Clears the bits of `mask`.
    pub fn remove(&mut self, mask: u32) {
        self.0 &= !mask;
    }

    /// Returns a copy with the bits of `mask` set.
    pub fn with(self, mask: u32) -> Self {
        KerberosFlags(self.0 | mask)
    }
}

impl Der for KerberosFlags {
    fn to_der(&self) -> Vec<u8> {
        enc_flags(self.0)
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_flags(t, what).map(KerberosFlags)
    }
}

der_codec!(KerberosFlags, "KerberosFlags");

/// KDCOptions bits (RFC 4120 §5.4.1, RFC 6806, MS-SFU), as `u32` masks.
pub mod kdc_options {
    use super::flag_bit;
    /// Bit 0, reserved.
    pub const RESERVED: u32 = flag_bit(0);
    /// Bit 1: forwardable.
    pub const FORWARDABLE: u32 = flag_bit(1);
    /// Bit 2: forwarded.
    pub const FORWARDED: u32 = flag_bit(2);
    /// Bit 3: proxiable.
    pub const PROXIABLE: u32 = flag_bit(3);
    /// Bit 4: proxy.
    pub const PROXY: u32 = flag_bit(4);
    /// Bit 5: allow-postdate.
    pub const ALLOW_POSTDATE: u32 = flag_bit(5);
    /// Bit 6: postdated.
    pub const POSTDATED: u32 = flag_bit(6);
    /// Bit 8: renewable.
    pub const RENEWABLE: u32 = flag_bit(8);
    /// Bit 14: cname-in-addl-tkt (MS-SFU constrained delegation); RFC 6112
    /// reuses the same bit as request-anonymous.
    pub const CNAME_IN_ADDL_TKT: u32 = flag_bit(14);
    /// Bit 14: request-anonymous (RFC 6112); same bit as `CNAME_IN_ADDL_TKT`.
    pub const REQUEST_ANONYMOUS: u32 = flag_bit(14);
    /// Bit 15: canonicalize (RFC 6806 / MS-KILE name canonicalization).
    pub const CANONICALIZE: u32 = flag_bit(15);
    /// Bit 26: disable-transited-check.
    pub const DISABLE_TRANSITED_CHECK: u32 = flag_bit(26);
    /// Bit 27: renewable-ok.
    pub const RENEWABLE_OK: u32 = flag_bit(27);
    /// Bit 28: enc-tkt-in-skey (user-to-user).
    pub const ENC_TKT_IN_SKEY: u32 = flag_bit(28);
    /// Bit 30: renew.
    pub const RENEW: u32 = flag_bit(30);
    /// Bit 31: validate.
    pub const VALIDATE: u32 = flag_bit(31);
}

/// TicketFlags bits (RFC 4120 §5.3, RFC 6112, RFC 6806), as `u32` masks.
pub mod ticket_flags {
    use super::flag_bit;
    /// Bit 0, reserved.
    pub const RESERVED: u32 = flag_bit(0);
    /// Bit 1: forwardable.
    pub const FORWARDABLE: u32 = flag_bit(1);
    /// Bit 2: forwarded.
    pub const FORWARDED: u32 = flag_bit(2);
    /// Bit 3: proxiable.
    pub const PROXIABLE: u32 = flag_bit(3);
    /// Bit 4: proxy.
    pub const PROXY: u32 = flag_bit(4);
    /// Bit 5: may-postdate.
    pub const MAY_POSTDATE: u32 = flag_bit(5);
    /// Bit 6: postdated.
    pub const POSTDATED: u32 = flag_bit(6);
    /// Bit 7: invalid.
    pub const INVALID: u32 = flag_bit(7);
    /// Bit 8: renewable.
    pub const RENEWABLE: u32 = flag_bit(8);
    /// Bit 9: initial (issued by an AS exchange).
    pub const INITIAL: u32 = flag_bit(9);
    /// Bit 10: pre-authent.
    pub const PRE_AUTHENT: u32 = flag_bit(10);
    /// Bit 11: hw-authent.
    pub const HW_AUTHENT: u32 = flag_bit(11);
    /// Bit 12: transited-policy-checked.
    pub const TRANSITED_POLICY_CHECKED: u32 = flag_bit(12);
    /// Bit 13: ok-as-delegate.
    pub const OK_AS_DELEGATE: u32 = flag_bit(13);
    /// Bit 14: anonymous (RFC 6112).
    pub const ANONYMOUS: u32 = flag_bit(14);
    /// Bit 15: enc-pa-rep (RFC 6806: the KDC supports PA-REQ-ENC-PA-REP).
    pub const ENC_PA_REP: u32 = flag_bit(15);
}

/// APOptions bits (RFC 4120 §5.5.1), as `u32` masks.
pub mod ap_options {
    use super::flag_bit;
    /// Bit 0, reserved.
    pub const RESERVED: u32 = flag_bit(0);
    /// Bit 1: use-session-key (ticket is encrypted in the session key of a TGT).
    pub const USE_SESSION_KEY: u32 = flag_bit(1);
    /// Bit 2: mutual-required (client wants an AP-REP).
    pub const MUTUAL_REQUIRED: u32 = flag_bit(2);
}

/// PA-PAC-OPTIONS flag bits (MS-KILE 2.2.10), as `u32` masks.
pub mod pac_options {
    use super::flag_bit;
    /// Bit 0: Claims.
    pub const CLAIMS: u32 = flag_bit(0);
    /// Bit 1: Branch-Aware.
    pub const BRANCH_AWARE: u32 = flag_bit(1);
    /// Bit 2: Forward-to-Full-DC.
    pub const FORWARD_TO_FULL_DC: u32 = flag_bit(2);
    /// Bit 3: Resource-based-constrained-delegation.
    pub const RESOURCE_BASED_CONSTRAINED_DELEGATION: u32 = flag_bit(3);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering() {
        assert_eq!(kdc_options::FORWARDABLE, 0x4000_0000);
        assert_eq!(kdc_options::RENEWABLE, 0x0080_0000);
        assert_eq!(kdc_options::CANONICALIZE, 0x0001_0000);
        assert_eq!(kdc_options::RENEWABLE_OK, 0x0000_0010);
        assert_eq!(kdc_options::VALIDATE, 0x0000_0001);
        assert_eq!(ticket_flags::PRE_AUTHENT, 0x0020_0000);
        assert_eq!(ticket_flags::ENC_PA_REP, 0x0001_0000);
        assert_eq!(ap_options::MUTUAL_REQUIRED, 0x2000_0000);
        assert_eq!(flag_bit(40), 0);
        let f = KerberosFlags::EMPTY.with(kdc_options::FORWARDABLE | kdc_options::RENEW);
        assert!(f.bit(1) && f.bit(30) && !f.bit(2));
        assert!(f.contains(kdc_options::RENEW));
        let mut g = f;
        g.remove(kdc_options::RENEW);
        g.insert(kdc_options::PROXY);
        assert_eq!(g.0, kdc_options::FORWARDABLE | kdc_options::PROXY);
    }

    #[test]
    fn wire_form() {
        let f = KerberosFlags(kdc_options::FORWARDABLE | kdc_options::RENEWABLE_OK);
        let e = f.encode();
        assert_eq!(e, vec![0x03, 0x05, 0x00, 0x40, 0x00, 0x00, 0x10]);
        assert_eq!(KerberosFlags::decode(&e), Ok(f));
        // Short and long forms decode without panicking.
        assert_eq!(
            KerberosFlags::decode(&[0x03, 0x02, 0x00, 0x60]),
            Ok(KerberosFlags(0x6000_0000))
        );
        assert_eq!(
            KerberosFlags::decode(&[0x03, 0x07, 0x00, 1, 2, 3, 4, 5, 6]),
            Ok(KerberosFlags(0x0102_0304))
        );
        assert!(KerberosFlags::decode(&[0x03, 0x00]).is_err());
    }
}
