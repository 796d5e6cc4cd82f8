//! The one-way forms a DC keeps of a password: the NT hash (MD4 of the UTF-16LE password,
//! what NTLM and Kerberos RC4 need) and SHA-crypt strings (`$5$`/`$6$`, what Unix hosts
//! and `{CRYPT}` `userPassword` consumers verify), computed as glibc's `crypt` does
//! (Ulrich Drepper, "Unix crypt using SHA-256 and SHA-512").

use md4::{Digest, Md4};
use subtle::ConstantTimeEq;

use super::{random_fill, PasswordError};

/// Rounds used for new SHA-crypt hashes: glibc's default when a setting names none.
///
/// These hashes are made on every password set and are never the main bind check (the NT
/// hash is, and it is an unsalted MD4, so extra crypt rounds would not protect an account
/// whose NT hash leaked). 5000 keeps a password set cheap while staying the value every
/// crypt implementation expects.
pub const DEFAULT_CRYPT_ROUNDS: u32 = 5000;
/// The fewest rounds SHA-crypt allows; a setting asking for fewer gets this many.
pub const MIN_CRYPT_ROUNDS: u32 = 1000;
/// The most rounds SHA-crypt allows; a setting asking for more gets this many.
pub const MAX_CRYPT_ROUNDS: u32 = 999_999_999;

/// Salt characters SHA-crypt uses, at most.
const SALT_MAX: usize = 16;

/// crypt's base-64 alphabet (not RFC 4648's).
const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The NT hash (NTOWFv1, MS-NLMP 3.3.1): MD4 of the password's UTF-16LE encoding.
pub fn nt_hash(password: &str) -> [u8; 16] {
    let mut md4 = Md4::new();
    for unit in password.encode_utf16() {
        md4.update(unit.to_le_bytes());
    }
    md4.finalize().into()
}

/// Which SHA-crypt variant a hash string uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CryptAlgorithm {
    /// `$5$`: SHA-256-crypt.
    Sha256,
    /// `$6$`: SHA-512-crypt.
    Sha512,
}

impl CryptAlgorithm {
    fn prefix(self) -> &'static str {
        match self {
            CryptAlgorithm::Sha256 => "$5$",
            CryptAlgorithm::Sha512 => "$6$",
        }
    }
}

/// A parsed `$5$[rounds=N$]salt[$…]` setting.
struct Setting<'a> {
    algorithm: CryptAlgorithm,
    /// The rounds the setting named, clamped; `None` when it named none.
    rounds: Option<u32>,
    salt: &'a str,
}

fn bad(reason: &str) -> PasswordError {
    PasswordError::BadCryptSetting(reason.to_owned())
}

fn is_crypt_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'/'
}

fn parse_setting(setting: &str) -> Result<Setting<'_>, PasswordError> {
    let (algorithm, rest) = if let Some(rest) = setting.strip_prefix("$5$") {
        (CryptAlgorithm::Sha256, rest)
    } else if let Some(rest) = setting.strip_prefix("$6$") {
        (CryptAlgorithm::Sha512, rest)
    } else {
        return Err(bad("not a $5$ or $6$ setting"));
    };
    let (rounds, rest) = match rest.strip_prefix("rounds=") {
        Some(r) => {
            let (digits, after) = r
                .split_once('$')
                .ok_or_else(|| bad("rounds= is not followed by '$'"))?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("rounds= is not a decimal number"));
            }
            // All digits, so the only parse failure is overflow: clamp like glibc.
            let n = digits.parse::<u64>().unwrap_or(u64::MAX);
            let n = n.clamp(u64::from(MIN_CRYPT_ROUNDS), u64::from(MAX_CRYPT_ROUNDS));
            (Some(u32::try_from(n).unwrap_or(MAX_CRYPT_ROUNDS)), after)
        }
        None => (None, rest),
    };
    let field = rest.split_once('$').map_or(rest, |(salt, _)| salt);
    let salt = field
        .get(..field.len().min(SALT_MAX))
        .ok_or_else(|| bad("salt has characters outside crypt's alphabet"))?;
    if !salt.bytes().all(is_crypt_char) {
        return Err(bad("salt has characters outside crypt's alphabet"));
    }
    Ok(Setting {
        algorithm,
        rounds,
        salt,
    })
}

/// Appends `n` crypt base-64 characters for the 24-bit group `b2 b1 b0`, low bits first.
fn push_b64(out: &mut String, b2: u8, b1: u8, b0: u8, n: usize) {
    let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
    for _ in 0..n {
        out.push(char::from(ALPHABET[(w & 0x3f) as usize]));
        w >>= 6;
    }
}

/// SHA-256-crypt's output order: byte i goes with i+10 and i+20, rotated per group.
fn encode_sha256(d: &[u8; 32], out: &mut String) {
    for i in 0..10 {
        let (a, b, c) = (d[i], d[i + 10], d[i + 20]);
        let (x, y, z) = match i % 3 {
            0 => (a, b, c),
            1 => (c, a, b),
            _ => (b, c, a),
        };
        push_b64(out, x, y, z, 4);
    }
    push_b64(out, 0, d[31], d[30], 3);
}

/// SHA-512-crypt's output order: byte i goes with i+21 and i+42, rotated per group.
fn encode_sha512(d: &[u8; 64], out: &mut String) {
    for i in 0..21 {
        let (a, b, c) = (d[i], d[i + 21], d[i + 42]);
        let (x, y, z) = match i % 3 {
            0 => (a, b, c),
            1 => (b, c, a),
            _ => (c, a, b),
        };
        push_b64(out, x, y, z, 4);
    }
    push_b64(out, 0, 0, d[63], 2);
}

/// glibc's `crypt(password, setting)` for SHA-crypt settings: `$5$` or `$6$`, an optional
/// `rounds=N$` (clamped to 1000..=999999999 and then always written back), and a salt of
/// which the first 16 characters count. `setting` may be a whole hash string.
pub fn crypt(password: &str, setting: &str) -> Result<String, PasswordError> {
    let s = parse_setting(setting)?;
    let rounds = s.rounds.unwrap_or(DEFAULT_CRYPT_ROUNDS);
    let params = sha_crypt::Params::new(rounds).map_err(|_| bad("rounds out of range"))?;
    let mut out = String::with_capacity(128);
    out.push_str(s.algorithm.prefix());
    if let Some(r) = s.rounds {
        out.push_str("rounds=");
        out.push_str(&r.to_string());
        out.push('$');
    }
    out.push_str(s.salt);
    out.push('$');
    let (pw, salt) = (password.as_bytes(), s.salt.as_bytes());
    match s.algorithm {
        CryptAlgorithm::Sha256 => {
            encode_sha256(&sha_crypt::sha256_crypt(pw, salt, params), &mut out)
        }
        CryptAlgorithm::Sha512 => {
            encode_sha512(&sha_crypt::sha512_crypt(pw, salt, params), &mut out)
        }
    }
    Ok(out)
}

/// A fresh 16-character salt from crypt's alphabet.
pub fn random_crypt_salt() -> Result<String, PasswordError> {
    let mut raw = [0u8; SALT_MAX];
    random_fill(&mut raw)?;
    // 256 is a multiple of 64, so masking keeps every character equally likely.
    Ok(raw
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(b & 0x3f)]))
        .collect())
}

/// A new `$5$rounds=N$salt$…` or `$6$rounds=N$salt$…` hash of `password` with a random
/// salt. The rounds are always written, so the string says how it was made.
pub fn hash_crypt(
    password: &str,
    algorithm: CryptAlgorithm,
    rounds: u32,
) -> Result<String, PasswordError> {
    let setting = format!(
        "{}rounds={rounds}${}",
        algorithm.prefix(),
        random_crypt_salt()?
    );
    crypt(password, &setting)
}

/// Whether `password` produces `hash` (a `$5$`/`$6$` string), compared in constant time.
/// A malformed hash verifies nothing.
pub fn verify_crypt(password: &str, hash: &str) -> bool {
    match crypt(password, hash) {
        Ok(computed) => computed.as_bytes().ct_eq(hash.as_bytes()).into(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn nt_hash_vectors() {
        // MS-NLMP 4.2.2.1.2 (NTOWFv1 of "Password"); the others cross-checked with
        // OpenSSL's MD4 over the UTF-16LE bytes.
        assert_eq!(
            hex(&nt_hash("Password")),
            "a4f49c406510bdcab6824ee7c30fd852"
        );
        assert_eq!(
            hex(&nt_hash("password")),
            "8846f7eaee8fb117ad06bdd830b7586c"
        );
        assert_eq!(hex(&nt_hash("")), "31d6cfe0d16ae931b73c59d7e0c089c0");
        assert_eq!(
            hex(&nt_hash("Pässwörd€1")),
            "0b765aea283c632ee215ceab79053add"
        );
    }

    /// (setting, password, expected) from the test vectors in Drepper's SHA-crypt
    /// specification (SHA-crypt.txt).
    const SHA256_VECTORS: [(&str, &str, &str); 7] = [
        (
            "$5$saltstring",
            "Hello world!",
            "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5",
        ),
        (
            "$5$rounds=10000$saltstringsaltstring",
            "Hello world!",
            "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA",
        ),
        (
            "$5$rounds=5000$toolongsaltstring",
            "This is just a test",
            "$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5",
        ),
        (
            "$5$rounds=1400$anotherlongsaltstring",
            "a very much longer text to encrypt.  This one even stretches over morethan one line.",
            "$5$rounds=1400$anotherlongsalts$Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1",
        ),
        (
            "$5$rounds=77777$short",
            "we have a short salt string but not a short password",
            "$5$rounds=77777$short$JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/",
        ),
        (
            "$5$rounds=123456$asaltof16chars..",
            "a short string",
            "$5$rounds=123456$asaltof16chars..$gP3VQ/6X7UUEW3HkBn2w1/Ptq2jxPyzV/cZKmF/wJvD",
        ),
        (
            "$5$rounds=10$roundstoolow",
            "the minimum number is still observed",
            "$5$rounds=1000$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC",
        ),
    ];

    const SHA512_VECTORS: [(&str, &str, &str); 7] = [
        ("$6$saltstring", "Hello world!",
         "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"),
        ("$6$rounds=10000$saltstringsaltstring", "Hello world!",
         "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."),
        ("$6$rounds=5000$toolongsaltstring", "This is just a test",
         "$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0"),
        ("$6$rounds=1400$anotherlongsaltstring",
         "a very much longer text to encrypt.  This one even stretches over morethan one line.",
         "$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1"),
        ("$6$rounds=77777$short", "we have a short salt string but not a short password",
         "$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0"),
        ("$6$rounds=123456$asaltof16chars..", "a short string",
         "$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1"),
        ("$6$rounds=10$roundstoolow", "the minimum number is still observed",
         "$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX."),
    ];

    #[test]
    fn drepper_vectors() {
        for (setting, password, expected) in SHA256_VECTORS.iter().chain(&SHA512_VECTORS) {
            assert_eq!(crypt(password, setting).unwrap(), *expected, "{setting}");
            // The whole hash works as a setting, as with glibc.
            assert_eq!(crypt(password, expected).unwrap(), *expected, "{setting}");
            assert!(verify_crypt(password, expected));
            assert!(!verify_crypt(&format!("{password}x"), expected));
        }
    }

    #[test]
    fn glibc_cross_check() {
        // Produced by the system's crypt(3) (libxcrypt, via Perl) for a non-ASCII password.
        let h = "$6$rounds=5000$abcdefghijklmnop$PgfBRn5NkXbA2XZtilnguWKQpJpfJShmLyZHZeZDGfPC0OAI0h9GDSq13PAh4FBaE5zk5GFVxj.FP0gNFfKla1";
        assert!(verify_crypt("pässword", h));
    }

    #[test]
    fn new_hashes() {
        let h = hash_crypt("Secret1!", CryptAlgorithm::Sha512, DEFAULT_CRYPT_ROUNDS).unwrap();
        assert!(h.starts_with("$6$rounds=5000$"));
        let salt = &h["$6$rounds=5000$".len()..][..16];
        assert!(salt.bytes().all(is_crypt_char));
        assert_eq!(h.len(), "$6$rounds=5000$".len() + 16 + 1 + 86);
        assert!(verify_crypt("Secret1!", &h));
        assert!(!verify_crypt("secret1!", &h));

        let h = hash_crypt("Secret1!", CryptAlgorithm::Sha256, DEFAULT_CRYPT_ROUNDS).unwrap();
        assert!(h.starts_with("$5$rounds=5000$"));
        assert_eq!(h.len(), "$5$rounds=5000$".len() + 16 + 1 + 43);
        assert!(verify_crypt("Secret1!", &h));

        assert_ne!(random_crypt_salt().unwrap(), random_crypt_salt().unwrap());
    }

    #[test]
    fn bad_settings() {
        for s in [
            "",
            "$1$salt",
            "$7$salt",
            "$5$rounds=$salt",
            "$5$rounds=12x$salt",
            "$5$rounds=5000",
            "$5$sa:lt",
            "$5$säl",
            "$5$rounds=-5$salt",
        ] {
            assert!(crypt("pw", s).is_err(), "{s}");
            assert!(!verify_crypt("pw", s), "{s}");
        }
        // Huge round counts are clamped, not rejected (checked without running them).
        let s = parse_setting("$5$rounds=99999999999999999999999$x").unwrap();
        assert_eq!(s.rounds, Some(MAX_CRYPT_ROUNDS));
        // An empty salt is allowed, as glibc allows it.
        assert!(crypt("pw", "$5$").unwrap().starts_with("$5$$"));
    }
}
