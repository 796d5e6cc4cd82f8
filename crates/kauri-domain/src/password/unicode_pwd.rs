//! The `unicodePwd` value form: AD takes a new password as the UTF-16LE encoding of the
//! password wrapped in double quotes (MS-ADTS 3.1.1.3.1.5.1).

use super::PasswordError;

/// The password inside a `unicodePwd` value as a client sent it in an add or modify.
pub fn decode_unicode_pwd(value: &[u8]) -> Result<String, PasswordError> {
    if !value.len().is_multiple_of(2) {
        return Err(PasswordError::OddLength(value.len()));
    }
    let units = value
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    let text = char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .map_err(|_| PasswordError::BadUtf16)?;
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .map(str::to_owned)
        .ok_or(PasswordError::NotQuoted)
}

/// The `unicodePwd` value a client sends to set `password` (for tests and tools).
pub fn encode_unicode_pwd(password: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * password.len() + 4);
    for unit in "\""
        .encode_utf16()
        .chain(password.encode_utf16())
        .chain("\"".encode_utf16())
    {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes() {
        // "ab" quoted, UTF-16LE.
        let v = [0x22, 0, b'a', 0, b'b', 0, 0x22, 0];
        assert_eq!(encode_unicode_pwd("ab"), v);
        assert_eq!(decode_unicode_pwd(&v).unwrap(), "ab");
        assert_eq!(decode_unicode_pwd(&[0x22, 0, 0x22, 0]).unwrap(), "");
        // A character outside the BMP travels as a surrogate pair.
        let v = encode_unicode_pwd("\u{1F511}");
        assert_eq!(v, [0x22, 0, 0x3D, 0xD8, 0x11, 0xDD, 0x22, 0]);
        assert_eq!(decode_unicode_pwd(&v).unwrap(), "\u{1F511}");
    }

    #[test]
    fn malformed_values() {
        assert_eq!(
            decode_unicode_pwd(&[0x22, 0, 0x22]),
            Err(PasswordError::OddLength(3))
        );
        assert_eq!(
            decode_unicode_pwd(&[b'a', 0, b'b', 0]),
            Err(PasswordError::NotQuoted)
        );
        assert_eq!(
            decode_unicode_pwd(&[0x22, 0]),
            Err(PasswordError::NotQuoted)
        );
        assert_eq!(decode_unicode_pwd(&[]), Err(PasswordError::NotQuoted));
        assert_eq!(
            decode_unicode_pwd(&[0x22, 0, b'a', 0]),
            Err(PasswordError::NotQuoted)
        );
        // An unpaired high surrogate.
        assert_eq!(
            decode_unicode_pwd(&[0x22, 0, 0x3D, 0xD8, 0x22, 0]),
            Err(PasswordError::BadUtf16)
        );
    }

    proptest! {
        #[test]
        fn round_trip(pw in any::<String>()) {
            prop_assert_eq!(decode_unicode_pwd(&encode_unicode_pwd(&pw)).unwrap(), pw);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_unicode_pwd(&bytes);
        }
    }
}
