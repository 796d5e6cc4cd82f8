//! Just enough DER for SPNEGO: tag-length-value reading with definite lengths, and writing.

use crate::error::AuthError;

/// One element: its tag byte and contents, and what follows it.
pub(crate) struct Tlv<'a> {
    pub tag: u8,
    pub body: &'a [u8],
    pub rest: &'a [u8],
}

/// Reads one element from the front of `input`.
pub(crate) fn read<'a>(input: &'a [u8], what: &'static str) -> Result<Tlv<'a>, AuthError> {
    let bad = |why: &str| AuthError::malformed(what, why.to_string());
    let (&tag, after) = input.split_first().ok_or_else(|| bad("truncated tag"))?;
    if tag & 0x1f == 0x1f {
        return Err(bad("multi-byte tags are not used here"));
    }
    let (&first, mut after) = after.split_first().ok_or_else(|| bad("truncated length"))?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || after.len() < n {
            return Err(bad("bad length"));
        }
        let mut len = 0usize;
        for &b in &after[..n] {
            len = (len << 8) | usize::from(b);
        }
        after = &after[n..];
        len
    };
    if after.len() < len {
        return Err(bad("length past the end"));
    }
    Ok(Tlv {
        tag,
        body: &after[..len],
        rest: &after[len..],
    })
}

/// Reads one element that must carry `tag`.
pub(crate) fn expect<'a>(
    input: &'a [u8],
    tag: u8,
    what: &'static str,
) -> Result<Tlv<'a>, AuthError> {
    let t = read(input, what)?;
    if t.tag != tag {
        return Err(AuthError::malformed(
            what,
            format!("tag {:#04x} where {tag:#04x} belongs", t.tag),
        ));
    }
    Ok(t)
}

/// Writes one element.
pub(crate) fn write(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    let len = body.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
}

/// One element as a new vector.
pub(crate) fn element(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 6);
    write(&mut out, tag, body);
    out
}
