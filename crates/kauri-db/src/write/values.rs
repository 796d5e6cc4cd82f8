//! Value lists kept free of duplicates in time linear in their length, and the limits on
//! how many values one change may write.

use std::collections::HashSet;

use crate::record::{OwnedRecord, OwnedValue};

/// Lists shorter than this are searched by a scan; longer ones get a hash set.
const SCAN_LIMIT: usize = 16;

/// Answers "is this normalized value among the list's?" for a list that grows as values
/// are added: by a scan while the list is short, by a hash set built on first need after.
#[derive(Default)]
pub(crate) struct Seen {
    set: Option<HashSet<Vec<u8>>>,
}

impl Seen {
    /// Whether `norm` is the normalized form of one of `values`.
    pub(crate) fn contains(&mut self, values: &[OwnedValue], norm: &[u8]) -> bool {
        if self.set.is_none() && values.len() < SCAN_LIMIT {
            return values.iter().any(|o| o.norm() == norm);
        }
        self.set
            .get_or_insert_with(|| values.iter().map(|o| o.norm().to_vec()).collect())
            .contains(norm)
    }

    /// Records that a value with this normalized form joined the list.
    pub(crate) fn added(&mut self, norm: &[u8]) {
        if let Some(set) = &mut self.set {
            set.insert(norm.to_vec());
        }
    }
}

/// Removes from `values` those whose normalized form is one of `gone`'s, in one pass;
/// returns the forms that were not there.
pub(crate) fn remove_all(values: &mut Vec<OwnedValue>, gone: &[OwnedValue]) -> Vec<Vec<u8>> {
    let wanted: HashSet<&[u8]> = gone.iter().map(|v| v.norm()).collect();
    let mut absent = wanted.clone();
    values.retain(|v| {
        let hit = wanted.contains(v.norm());
        if hit {
            absent.remove(v.norm());
        }
        !hit
    });
    gone.iter()
        .filter(|v| absent.contains(v.norm()))
        .map(|v| v.norm().to_vec())
        .collect()
}

/// The values a record holds, all attributes together (its links are elsewhere and not
/// counted).
pub(crate) fn count(rec: &OwnedRecord) -> usize {
    rec.attrs.iter().map(|a| a.values.len()).sum()
}

/// The keys in `a` that are not in `b`, in `a`'s order, in time linear in both.
pub(crate) fn keys_not_in<'a>(a: &'a [Vec<u8>], b: &[Vec<u8>]) -> Vec<&'a Vec<u8>> {
    if a.len().saturating_mul(b.len()) <= SCAN_LIMIT * SCAN_LIMIT {
        return a.iter().filter(|k| !b.contains(k)).collect();
    }
    let other: HashSet<&[u8]> = b.iter().map(Vec::as_slice).collect();
    a.iter().filter(|k| !other.contains(k.as_slice())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> OwnedValue {
        OwnedValue {
            raw: s.as_bytes().to_vec(),
            norm: Some(s.to_ascii_lowercase().into_bytes()),
        }
    }

    #[test]
    fn seen_follows_a_growing_list() {
        let mut list = Vec::new();
        let mut seen = Seen::default();
        for i in 0..100 {
            let x = v(&format!("V{i}"));
            assert!(!seen.contains(&list, x.norm()));
            seen.added(x.norm());
            list.push(x);
        }
        for i in 0..100 {
            assert!(seen.contains(&list, format!("v{i}").as_bytes()));
        }
        assert!(!seen.contains(&list, b"v100"));
    }

    #[test]
    fn remove_all_reports_what_was_missing() {
        let mut list: Vec<OwnedValue> = (0..50).map(|i| v(&format!("V{i}"))).collect();
        let gone = vec![v("v3"), v("V49"), v("x")];
        let missing = remove_all(&mut list, &gone);
        assert_eq!(missing, vec![b"x".to_vec()]);
        assert_eq!(list.len(), 48);
        assert!(list.iter().all(|x| x.norm() != b"v3" && x.norm() != b"v49"));
    }

    #[test]
    fn keys_not_in_matches_a_scan() {
        let a: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i]).collect();
        let b: Vec<Vec<u8>> = (20..60u8).map(|i| vec![i]).collect();
        let got: Vec<u8> = keys_not_in(&a, &b).iter().map(|k| k[0]).collect();
        assert_eq!(got, (0..20).collect::<Vec<u8>>());
    }
}
