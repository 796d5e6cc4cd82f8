//! Case-insensitive lookups of names (attribute and class descriptors) in maps keyed by
//! their lowercased form, without allocating: every attribute of every entry read or
//! written is looked up this way, often several times.

/// Names up to this many bytes are lowercased on the stack.
const STACK: usize = 64;

/// Calls `f` with `name` lowercased (ASCII letters only, as descriptors are compared):
/// `name` itself when it has no uppercase letter, a stack copy when it is short, an
/// allocated one otherwise.
pub fn with_lower<R>(name: &str, f: impl FnOnce(&str) -> R) -> R {
    if !name.bytes().any(|b| b.is_ascii_uppercase()) {
        return f(name);
    }
    let mut buf = [0u8; STACK];
    if let Some(lower) = buf.get_mut(..name.len()) {
        lower.copy_from_slice(name.as_bytes());
        lower.make_ascii_lowercase();
        // Lowercasing ASCII letters keeps UTF-8 valid.
        if let Ok(k) = std::str::from_utf8(lower) {
            return f(k);
        }
    }
    f(&name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::with_lower;

    #[test]
    fn lowercases_short_long_and_non_ascii_names() {
        assert_eq!(
            with_lower("sAMAccountName", str::to_string),
            "samaccountname"
        );
        assert_eq!(with_lower("cn", str::to_string), "cn");
        let long = "A".repeat(100);
        assert_eq!(with_lower(&long, str::to_string), "a".repeat(100));
        assert_eq!(with_lower("ÄbC", str::to_string), "Äbc");
    }
}
