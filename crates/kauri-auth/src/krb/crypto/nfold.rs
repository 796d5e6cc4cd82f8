//! The n-fold function of RFC 3961 §5.1.
//!
//! n-fold stretches or shrinks a constant to the cipher block size before it
//! is encrypted to derive a key (DK). It is defined on bit strings: the input
//! is repeated, each copy rotated right by 13 bits more than the previous one,
//! until the length is the least common multiple of the input and output
//! lengths; the result is cut into output-sized pieces that are added together
//! with ones' complement (end-around carry) addition.

/// Folds `input` into `out.len()` bytes, overwriting `out`.
///
/// Used for the constants that are not per-usage ("kerberos" for
/// string-to-key, "prf" for the PRF) and as the reference implementation the
/// fast usage-constant path is tested against. An empty input or output
/// leaves `out` zeroed.
pub(super) fn nfold(input: &[u8], out: &mut [u8]) {
    out.fill(0);
    let in_len = input.len();
    let out_len = out.len();
    if in_len == 0 || out_len == 0 {
        return;
    }
    let Some(total) = lcm(in_len, out_len) else {
        return;
    };

    // Walk the expanded string from its last byte to its first, adding each
    // byte into its output column. The carry out of the most significant byte
    // of one output-sized piece flows into the least significant byte of the
    // previous piece, which is the same output column as the end-around carry
    // would reach, so a single running carry implements the whole sum.
    let mut carry: u32 = 0;
    for pos in (0..total).rev() {
        let column = pos % out_len;
        let Some(slot) = out.get_mut(column) else {
            return;
        };
        let sum = u32::from(*slot) + u32::from(expanded_byte(input, pos)) + carry;
        *slot = (sum & 0xff) as u8;
        carry = sum >> 8;
    }
    // Whatever carry is left wraps around to the least significant end.
    add_end_around(out, carry);
}

/// Adds `carry` at the least significant (last) byte of the big-endian
/// number `out`, wrapping any carry out of the top back to the bottom.
fn add_end_around(out: &mut [u8], mut carry: u32) {
    while carry != 0 {
        for slot in out.iter_mut().rev() {
            let sum = u32::from(*slot) + carry;
            *slot = (sum & 0xff) as u8;
            carry = sum >> 8;
            if carry == 0 {
                break;
            }
        }
    }
}

/// Byte `pos` of the expanded string: copy `pos / len` of the input, rotated
/// right by 13 bits per copy.
fn expanded_byte(input: &[u8], pos: usize) -> u8 {
    let len = input.len();
    let bits = 8 * len;
    let copy = pos / len;
    let index = pos % len;
    let rotation = (13 * copy) % bits;
    // Bit `p` of the rotated string is bit `p - rotation` of the input, so
    // this byte starts at input bit `8 * index - rotation` (mod bits).
    let start = (8 * index + bits - rotation) % bits;
    let shift = start % 8;
    let hi = input.get(start / 8).copied().unwrap_or(0);
    let lo = input.get((start / 8 + 1) % len).copied().unwrap_or(0);
    if shift == 0 {
        hi
    } else {
        (hi << shift) | (lo >> (8 - shift))
    }
}

/// Greatest common divisor (Euclid).
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Least common multiple; `None` on overflow (only reachable with absurd
/// lengths, never with Kerberos constants).
fn lcm(a: usize, b: usize) -> Option<usize> {
    (a / gcd(a, b)).checked_mul(b)
}

/// 16-byte n-fold of the 5-byte derivation constant `usage (big-endian) |
/// tag` that RFC 3961 §5.3 uses for Ke (0xAA), Ki (0x55) and Kc (0x99).
///
/// This runs on every encrypt, decrypt and checksum, so it avoids the
/// bit-by-bit generic path: the 40-bit constant lives in a `u64`, each of the
/// 16 rotated copies is one rotate, and the five 128-bit pieces are summed
/// with `u128` end-around carry. Tests check it against [`nfold`].
pub(super) fn usage_constant(usage: u32, tag: u8) -> [u8; 16] {
    const BITS: u32 = 40;
    const MASK: u64 = (1u64 << BITS) - 1;
    let x: u64 = (u64::from(usage) << 8) | u64::from(tag);

    // lcm(5, 16) = 80 bytes = 16 copies of the 5-byte constant.
    let mut expanded = [0u8; 80];
    for (copy, chunk) in expanded.chunks_exact_mut(5).enumerate() {
        let r = (13 * copy as u32) % BITS;
        let rotated = if r == 0 {
            x
        } else {
            ((x >> r) | (x << (BITS - r))) & MASK
        };
        let be = rotated.to_be_bytes();
        chunk.copy_from_slice(&be[3..]);
    }

    let mut acc: u128 = 0;
    for piece in expanded.chunks_exact(16) {
        let mut word = [0u8; 16];
        word.copy_from_slice(piece);
        let (sum, overflow) = acc.overflowing_add(u128::from_be_bytes(word));
        // After an overflow `sum` is at most 2^128 - 2, so adding the
        // end-around carry cannot overflow again.
        acc = sum + u128::from(overflow);
    }
    acc.to_be_bytes()
}

/// 16-byte n-fold of "kerberos" (RFC 3961 appendix A.1 lists it), the
/// constant of the AES string-to-key derivation. Kept as a constant because
/// every password change needs it; a test checks it against [`nfold`].
pub(super) const KERBEROS_FOLD_16: [u8; 16] = [
    0x6b, 0x65, 0x72, 0x62, 0x65, 0x72, 0x6f, 0x73, 0x7b, 0x9b, 0x5b, 0x2b, 0x93, 0x13, 0x2b, 0x93,
];
