//! Small constructors for the request values callers build most, so a search or a change
//! takes one line.

use kauri_db::Filter;
use kauri_ldap_proto::{Attribute, Change, DerefAliases, ModOp, SearchRequest, SearchScope};

/// A search of `base` in `scope` for `filter`, returning `attributes` (none: all user
/// attributes), without size or time limits of the client's own.
pub fn search_request(
    base: &str,
    scope: SearchScope,
    filter: Filter,
    attributes: &[&str],
) -> SearchRequest {
    SearchRequest {
        base: base.to_string(),
        scope,
        deref: DerefAliases::Never,
        size_limit: 0,
        time_limit: 0,
        types_only: false,
        filter,
        attributes: attributes.iter().map(|a| a.to_string()).collect(),
    }
}

/// One change of a modify request: `op` on attribute `name` with `values`.
pub fn change<V: AsRef<[u8]>>(op: ModOp, name: &str, values: &[V]) -> Change {
    Change {
        op,
        attribute: Attribute {
            name: name.to_string(),
            values: values.iter().map(|v| v.as_ref().to_vec()).collect(),
        },
    }
}
