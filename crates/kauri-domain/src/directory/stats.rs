//! Group statistics: the numbers that matter for a directory at scale (how many groups,
//! how many memberships, how they are spread, which groups are the largest), read from one
//! snapshot, member counts taken from the link table without building member lists.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use kauri_db::{DbRead, Dn, Filter, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::DirResult;
use super::principal::{self, group_type};

/// What `group stats` reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupStats {
    /// Groups in the naming context.
    pub groups: u64,
    /// Direct memberships (values of `member`) over all groups.
    pub memberships: u64,
    /// Groups without members.
    pub empty: u64,
    /// Mean direct members per group.
    pub average_members: f64,
    /// Median direct members per group.
    pub median_members: f64,
    /// The largest groups, largest first: (DN, direct members).
    pub largest: Vec<(String, u64)>,
    /// Groups by kind ("global security", "domain local distribution", …).
    pub by_type: BTreeMap<String, u64>,
}

/// A group's kind from its `groupType`.
fn kind(bits: Option<u32>) -> String {
    let Some(bits) = bits else {
        return "without groupType".into();
    };
    let scope = if bits & group_type::BUILTIN_LOCAL != 0 {
        "builtin local"
    } else {
        match principal::group_scope(bits, true) {
            Ok(principal::Scope::Global) => "global",
            Ok(principal::Scope::DomainLocal) => "domain local",
            Ok(principal::Scope::Universal) => "universal",
            Err(_) => "invalid",
        }
    };
    let security = if bits & group_type::SECURITY != 0 {
        "security"
    } else {
        "distribution"
    };
    format!("{scope} {security}")
}

/// The statistics of groups given as (direct members, key, groupType bits), the keys of
/// the `top` largest returned beside them (the caller names them): shared by the local
/// path, which counts links, and the remote one, which counts `member` values.
pub fn summarize<K: Ord>(
    mut counts: Vec<(u64, K, Option<u32>)>,
    top: usize,
) -> (GroupStats, Vec<(K, u64)>) {
    let mut out = GroupStats::default();
    for (_, _, bits) in &counts {
        *out.by_type.entry(kind(*bits)).or_insert(0) += 1;
    }
    out.groups = counts.len() as u64;
    out.memberships = counts.iter().map(|(n, _, _)| n).sum();
    out.empty = counts.iter().filter(|(n, _, _)| *n == 0).count() as u64;
    if !counts.is_empty() {
        out.average_members = out.memberships as f64 / counts.len() as f64;
        let mut sizes: Vec<u64> = counts.iter().map(|(n, _, _)| *n).collect();
        sizes.sort_unstable();
        let mid = sizes.len() / 2;
        out.median_members = if sizes.len() % 2 == 1 {
            sizes[mid] as f64
        } else {
            (sizes[mid - 1] + sizes[mid]) as f64 / 2.0
        };
    }
    counts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let largest = counts
        .into_iter()
        .take(top)
        .map(|(n, k, _)| (k, n))
        .collect();
    (out, largest)
}

/// Statistics of the groups below `base` (a naming context), the `top` largest listed.
pub fn group_stats<B: Backend>(r: &DbRead<'_, B>, base: &Dn, top: usize) -> DirResult<GroupStats> {
    let Some(member) = r.attr_id("member") else {
        return Ok(GroupStats::default());
    };
    let group_type_attr = r.attr_id("groupType");
    let filter = Filter::Equality("objectClass".into(), b"group".to_vec());
    let req = SearchRequest::new(base.clone(), Scope::Subtree, filter);
    let mut counts: Vec<(u64, u64, Option<u32>)> = Vec::new();
    r.search(&req, |hit| {
        let n = r.linked_count(hit.id, member)?.unwrap_or(0);
        let bits = group_type_attr
            .and_then(|a| hit.record.attr(a))
            .and_then(|a| {
                a.values()
                    .next()
                    .and_then(|v| principal::parse_u32_bits(v.raw))
            });
        counts.push((n, hit.id, bits));
        Ok(ControlFlow::Continue(()))
    })?;
    let (mut out, largest) = summarize(counts, top);
    for (id, n) in largest {
        out.largest.push((r.dn_string(id)?, n));
    }
    Ok(out)
}
