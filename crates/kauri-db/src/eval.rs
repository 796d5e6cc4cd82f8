//! Filters compiled against the attribute registry and syntaxes, and their evaluation on
//! stored records.
//!
//! Compiling resolves each attribute name to its id once and normalizes each assertion
//! value once; evaluation then compares bytes with the normalized forms stored in the
//! record, reading only the attributes the filter names. Evaluation is three-valued
//! (RFC 4511 section 4.5.1.7): an assertion that cannot be decided (a value that does
//! not fit the attribute's syntax, an unknown matching rule) is Undefined, and only True
//! selects an entry.

use crate::config::DbConfig;
use crate::dn::Rdn;
use crate::filter::{ExtensibleMatch, Filter};
use crate::record::RecordView;
use crate::syntax::{casefold, SubstringPosition, Syntax};

/// The three truth values of LDAP filter evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    /// The entry matches.
    True,
    /// The entry does not match.
    False,
    /// It cannot be decided; treated as non-matching, and `!Undefined` stays Undefined.
    Undefined,
}

impl Tri {
    fn from_bool(b: bool) -> Tri {
        if b {
            Tri::True
        } else {
            Tri::False
        }
    }
}

/// How an extensible match compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtRule {
    /// Equality under the attribute's own syntax (normalized bytes equal).
    SyntaxEq(Vec<u8>),
    /// Case-insensitive string equality on the raw values.
    CaseIgnore(String),
    /// Exact byte equality on the raw values.
    Exact(Vec<u8>),
    /// Every bit of the mask set (1.2.840.113556.1.4.803).
    BitAnd(i64),
    /// Any bit of the mask set (1.2.840.113556.1.4.804).
    BitOr(i64),
}

/// A filter ready to be evaluated and planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compiled {
    /// Matches everything (`(&)`).
    True,
    /// Matches nothing (`(|)`, or an attribute never stored).
    False,
    /// Undecidable item.
    Undefined,
    /// All children true.
    And(Vec<Compiled>),
    /// Any child true.
    Or(Vec<Compiled>),
    /// Negation.
    Not(Box<Compiled>),
    /// Some value's normalized form equals `norm`.
    Eq {
        /// Attribute id.
        attr: u32,
        /// Normalized assertion value.
        norm: Vec<u8>,
    },
    /// Substring match on normalized forms.
    Sub {
        /// Attribute id.
        attr: u32,
        /// Normalized initial part.
        initial: Option<Vec<u8>>,
        /// Normalized middle parts, in order.
        any: Vec<Vec<u8>>,
        /// Normalized final part.
        final_: Option<Vec<u8>>,
    },
    /// Some value `>=` the assertion.
    Ge {
        /// Attribute id.
        attr: u32,
        /// Normalized assertion value.
        norm: Vec<u8>,
    },
    /// Some value `<=` the assertion.
    Le {
        /// Attribute id.
        attr: u32,
        /// Normalized assertion value.
        norm: Vec<u8>,
    },
    /// The attribute has a value.
    Present {
        /// Attribute id.
        attr: u32,
    },
    /// An extensible match on one attribute.
    Ext {
        /// Attribute id.
        attr: u32,
        /// How to compare.
        rule: ExtRule,
    },
    /// The entry is one of these (sorted) ids: an equality or in-chain match on a linked
    /// attribute, answered from the `links` table when the filter is compiled.
    InSet(std::sync::Arc<[u64]>),
    /// The entry has a value of a linked attribute (its presence key exists).
    LinkPresent {
        /// Attribute id (forward or back link).
        attr: u32,
    },
    /// An extensible match that also looks at the entry's DN (`:dn:`), or at every
    /// attribute when no attribute is named; evaluated with the DN's AVAs.
    ExtDn {
        /// The match, with the attribute name kept for DN components.
        m: ExtensibleMatch,
        /// Attribute id when an attribute is named and stored.
        attr: Option<u32>,
    },
}

/// The OID of AD's LDAP_MATCHING_RULE_IN_CHAIN: a linked attribute's values followed
/// transitively (nested group membership).
pub const IN_CHAIN: &str = "1.2.840.113556.1.4.1941";

/// What an assertion on a linked attribute compiles to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkMatch {
    /// The attribute is not linked.
    NotLinked,
    /// The value is not a DN.
    BadValue,
    /// The entries whose values include the named entry (sorted ids; empty when the DN
    /// names nothing).
    Ids(Vec<u64>),
}

/// What compiling needs to know: names to ids and the syntaxes.
pub trait AttrResolver {
    /// The id of an attribute description (lowercased), if any record ever held it.
    fn resolve(&self, lower: &str) -> Option<u32>;

    /// The entries that hold DN `value` in linked attribute `lower` (directly, or
    /// through a chain of links when `chain`).
    fn link_match(&self, lower: &str, value: &[u8], chain: bool) -> LinkMatch {
        let _ = (lower, value, chain);
        LinkMatch::NotLinked
    }

    /// Whether `lower` is a linked attribute.
    fn is_linked(&self, lower: &str) -> bool {
        let _ = lower;
        false
    }

    /// The id of the entry a DN names (`None` when none or not a DN).
    fn entry_id(&self, dn: &[u8]) -> Option<u64> {
        let _ = dn;
        None
    }
}

fn link_compiled(m: LinkMatch) -> Option<Compiled> {
    match m {
        LinkMatch::NotLinked => None,
        LinkMatch::BadValue => Some(Compiled::Undefined),
        LinkMatch::Ids(ids) if ids.is_empty() => Some(Compiled::False),
        LinkMatch::Ids(ids) => Some(Compiled::InSet(ids.into())),
    }
}

/// Compiles a filter. Attributes that were never stored compile to `False` (an absent
/// attribute matches no assertion), values that do not fit the syntax to `Undefined`.
pub fn compile(filter: &Filter, cfg: &DbConfig, res: &dyn AttrResolver) -> Compiled {
    if let Some(c) = compile_own_dn(filter, cfg, res) {
        return c;
    }
    let attr_of = |a: &str| -> (Option<u32>, Syntax) {
        let lower = a.to_ascii_lowercase();
        (res.resolve(&lower), cfg.schema.syntax_of_lower(&lower))
    };
    if let Some(c) = compile_linked(filter, res) {
        return c;
    }
    match filter {
        Filter::And(fs) => Compiled::And(fs.iter().map(|f| compile(f, cfg, res)).collect()),
        Filter::Or(fs) => Compiled::Or(fs.iter().map(|f| compile(f, cfg, res)).collect()),
        Filter::Not(f) => Compiled::Not(Box::new(compile(f, cfg, res))),
        Filter::Equality(a, v) | Filter::Approx(a, v) => {
            let (id, syn) = attr_of(a);
            match syn.normalize(v) {
                Err(_) => Compiled::Undefined,
                Ok(n) => match id {
                    Some(attr) => Compiled::Eq {
                        attr,
                        norm: n.into_owned(),
                    },
                    None => Compiled::False,
                },
            }
        }
        Filter::GreaterOrEqual(a, v) | Filter::LessOrEqual(a, v) => {
            let (id, syn) = attr_of(a);
            if !syn.supports_ordering() {
                return Compiled::Undefined;
            }
            let Ok(n) = syn.normalize(v) else {
                return Compiled::Undefined;
            };
            let Some(attr) = id else {
                return Compiled::False;
            };
            let norm = n.into_owned();
            if matches!(filter, Filter::GreaterOrEqual(..)) {
                Compiled::Ge { attr, norm }
            } else {
                Compiled::Le { attr, norm }
            }
        }
        Filter::Substrings(s) => {
            let (id, syn) = attr_of(&s.attr);
            if !syn.supports_substrings() {
                return Compiled::Undefined;
            }
            let norm = |p: &[u8], pos| syn.normalize_substring(p, pos).map(|c| c.into_owned());
            let initial = match s
                .initial
                .as_deref()
                .map(|p| norm(p, SubstringPosition::Initial))
            {
                Some(Err(_)) => return Compiled::Undefined,
                Some(Ok(v)) => Some(v),
                None => None,
            };
            let final_ = match s
                .final_
                .as_deref()
                .map(|p| norm(p, SubstringPosition::Final))
            {
                Some(Err(_)) => return Compiled::Undefined,
                Some(Ok(v)) => Some(v),
                None => None,
            };
            let mut any = Vec::with_capacity(s.any.len());
            for p in &s.any {
                match norm(p, SubstringPosition::Any) {
                    Ok(v) => any.push(v),
                    Err(_) => return Compiled::Undefined,
                }
            }
            match id {
                Some(attr) => Compiled::Sub {
                    attr,
                    initial,
                    any,
                    final_,
                },
                None => Compiled::False,
            }
        }
        Filter::Present(a) => match attr_of(a).0 {
            Some(attr) => Compiled::Present { attr },
            None => Compiled::False,
        },
        Filter::Extensible(m) => compile_ext(m, cfg, res),
    }
}

/// Assertions on an attribute that names the entry's own DN: equality is the entry that
/// DN names, presence is every entry.
fn compile_own_dn(filter: &Filter, cfg: &DbConfig, res: &dyn AttrResolver) -> Option<Compiled> {
    let is_dn_attr = |a: &str| cfg.dn_attributes.iter().any(|d| d.eq_ignore_ascii_case(a));
    match filter {
        Filter::Equality(a, v) | Filter::Approx(a, v) if is_dn_attr(a) => {
            Some(match res.entry_id(v) {
                Some(id) => Compiled::InSet(vec![id].into()),
                None => Compiled::False,
            })
        }
        Filter::Present(a) if is_dn_attr(a) => Some(Compiled::True),
        Filter::GreaterOrEqual(a, _) | Filter::LessOrEqual(a, _) if is_dn_attr(a) => {
            Some(Compiled::Undefined)
        }
        Filter::Substrings(s) if is_dn_attr(&s.attr) => Some(Compiled::Undefined),
        _ => None,
    }
}

/// Assertions on linked attributes: equality and in-chain matches become id sets,
/// presence a presence-key test, and ordering or substrings (which AD does not offer on
/// DN values) are undefined.
fn compile_linked(filter: &Filter, res: &dyn AttrResolver) -> Option<Compiled> {
    match filter {
        Filter::Equality(a, v) | Filter::Approx(a, v) => {
            link_compiled(res.link_match(&a.to_ascii_lowercase(), v, false))
        }
        Filter::Present(a) => {
            let lower = a.to_ascii_lowercase();
            res.is_linked(&lower).then(|| match res.resolve(&lower) {
                Some(attr) => Compiled::LinkPresent { attr },
                None => Compiled::False,
            })
        }
        Filter::GreaterOrEqual(a, _) | Filter::LessOrEqual(a, _) => res
            .is_linked(&a.to_ascii_lowercase())
            .then_some(Compiled::Undefined),
        Filter::Substrings(s) => res
            .is_linked(&s.attr.to_ascii_lowercase())
            .then_some(Compiled::Undefined),
        Filter::Extensible(m) if !m.dn_attributes => {
            let lower = m.attr.as_deref()?.to_ascii_lowercase();
            if !res.is_linked(&lower) {
                return None;
            }
            match m.rule.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("2.5.13.1") | Some("distinguishednamematch") => {
                    link_compiled(res.link_match(&lower, &m.value, false))
                }
                Some(IN_CHAIN) => link_compiled(res.link_match(&lower, &m.value, true)),
                Some(_) => Some(Compiled::Undefined),
            }
        }
        _ => None,
    }
}

fn compile_ext(m: &ExtensibleMatch, cfg: &DbConfig, res: &dyn AttrResolver) -> Compiled {
    let lower = m.attr.as_deref().map(str::to_ascii_lowercase);
    let id = lower.as_deref().and_then(|l| res.resolve(l));
    if m.dn_attributes || m.attr.is_none() {
        return Compiled::ExtDn {
            m: m.clone(),
            attr: id,
        };
    }
    let syn = lower
        .as_deref()
        .map(|l| cfg.schema.syntax_of_lower(l))
        .unwrap_or(Syntax::DirectoryString);
    let Some(rule) = ext_rule(m.rule.as_deref(), &m.value, syn) else {
        return Compiled::Undefined;
    };
    match id {
        Some(attr) => Compiled::Ext { attr, rule },
        None => Compiled::False,
    }
}

fn ext_rule(rule: Option<&str>, value: &[u8], syn: Syntax) -> Option<ExtRule> {
    let int = || std::str::from_utf8(value).ok()?.trim().parse::<i64>().ok();
    match rule.map(str::to_ascii_lowercase).as_deref() {
        None => syn
            .normalize(value)
            .ok()
            .map(|n| ExtRule::SyntaxEq(n.into_owned())),
        Some("1.2.840.113556.1.4.803") => int().map(ExtRule::BitAnd),
        Some("1.2.840.113556.1.4.804") => int().map(ExtRule::BitOr),
        Some("2.5.13.2")
        | Some("caseignorematch")
        | Some("2.5.13.4")
        | Some("caseignoresubstringsmatch")
        | Some("1.3.6.1.4.1.1466.109.114.2")
        | Some("caseignoreia5match") => std::str::from_utf8(value)
            .ok()
            .map(|s| ExtRule::CaseIgnore(casefold(s))),
        Some("2.5.13.5")
        | Some("caseexactmatch")
        | Some("2.5.13.17")
        | Some("octetstringmatch")
        | Some("1.3.6.1.4.1.1466.109.114.1")
        | Some("caseexactia5match") => Some(ExtRule::Exact(value.to_vec())),
        Some("2.5.13.14") | Some("integermatch") => Syntax::Integer
            .normalize(value)
            .ok()
            .map(|n| ExtRule::SyntaxEq(n.into_owned())),
        Some("2.5.13.1") | Some("distinguishednamematch") => Syntax::Dn
            .normalize(value)
            .ok()
            .map(|n| ExtRule::SyntaxEq(n.into_owned())),
        Some("2.5.13.13") | Some("booleanmatch") => Syntax::Boolean
            .normalize(value)
            .ok()
            .map(|n| ExtRule::SyntaxEq(n.into_owned())),
        Some("2.5.13.27") | Some("generalizedtimematch") => Syntax::GeneralizedTime
            .normalize(value)
            .ok()
            .map(|n| ExtRule::SyntaxEq(n.into_owned())),
        _ => None,
    }
}

/// Whether `hay` contains `needle` at or after `from`; returns the end of the first match.
fn find_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    let rest = hay.get(from..)?;
    rest.windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p + needle.len())
}

fn sub_matches(
    v: &[u8],
    initial: &Option<Vec<u8>>,
    any: &[Vec<u8>],
    final_: &Option<Vec<u8>>,
) -> bool {
    let mut pos = 0;
    if let Some(i) = initial {
        if !v.starts_with(i) {
            return false;
        }
        pos = i.len();
    }
    for a in any {
        match find_from(v, a, pos) {
            Some(p) => pos = p,
            None => return false,
        }
    }
    if let Some(f) = final_ {
        return v.len() >= pos + f.len() && v.ends_with(f);
    }
    true
}

fn parse_int(raw: &[u8]) -> Option<i64> {
    std::str::from_utf8(raw).ok()?.trim().parse::<i64>().ok()
}

fn ext_value_matches(rule: &ExtRule, raw: &[u8], norm: &[u8]) -> Tri {
    match rule {
        ExtRule::SyntaxEq(n) => Tri::from_bool(norm == n.as_slice()),
        ExtRule::Exact(x) => Tri::from_bool(raw == x.as_slice()),
        ExtRule::CaseIgnore(s) => match std::str::from_utf8(raw) {
            Ok(r) => Tri::from_bool(casefold(r) == *s),
            Err(_) => Tri::Undefined,
        },
        ExtRule::BitAnd(m) => match parse_int(raw) {
            Some(v) => Tri::from_bool(v & m == *m),
            None => Tri::Undefined,
        },
        ExtRule::BitOr(m) => match parse_int(raw) {
            Some(v) => Tri::from_bool(v & m != 0),
            None => Tri::Undefined,
        },
    }
}

/// Combines per-value results: True if any value matches, else Undefined if any was
/// undecidable, else False.
fn any_value(results: impl Iterator<Item = Tri>) -> Tri {
    let mut out = Tri::False;
    for r in results {
        match r {
            Tri::True => return Tri::True,
            Tri::Undefined => out = Tri::Undefined,
            Tri::False => {}
        }
    }
    out
}

/// The DN components an `ExtDn` match can look at: (attribute, value) pairs of every RDN.
pub type DnAvas = Vec<(String, String)>;

/// Evaluates a compiled filter on a record. `dn_avas` is called only for `:dn:` matches.
pub fn eval(
    c: &Compiled,
    id: u64,
    rec: &RecordView<'_>,
    cfg: &DbConfig,
    res: &dyn AttrNames,
    dn_avas: &mut dyn FnMut() -> DnAvas,
) -> Tri {
    eval_in(c, id, rec, cfg, res, dn_avas, None)
}

/// [`eval`] for a reader who may not read some attributes of this record: an assertion
/// on an attribute `hidden` names is false, as if the attribute did not exist (MS-ADTS
/// 3.1.1.4.3), so a filter reveals nothing the reader could not read. Linked-attribute
/// equality (compiled to the matching ids) is not masked.
pub fn eval_hiding(
    c: &Compiled,
    id: u64,
    rec: &RecordView<'_>,
    cfg: &DbConfig,
    res: &dyn AttrNames,
    dn_avas: &mut dyn FnMut() -> DnAvas,
    hidden: &dyn Fn(u32) -> bool,
) -> Tri {
    eval_in(c, id, rec, cfg, res, dn_avas, Some(hidden))
}

impl Compiled {
    /// The attribute ids the filter asserts on (each once, in no particular order).
    pub fn attributes(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.collect_attributes(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_attributes(&self, out: &mut Vec<u32>) {
        match self {
            Compiled::And(cs) | Compiled::Or(cs) => {
                for c in cs {
                    c.collect_attributes(out);
                }
            }
            Compiled::Not(c) => c.collect_attributes(out),
            leaf => out.extend(leaf.leaf_attribute()),
        }
    }

    /// The attribute a leaf assertion tests (`None` for the logical nodes, constants and
    /// linked-attribute id sets).
    fn leaf_attribute(&self) -> Option<u32> {
        match self {
            Compiled::Eq { attr, .. }
            | Compiled::Ge { attr, .. }
            | Compiled::Le { attr, .. }
            | Compiled::Sub { attr, .. }
            | Compiled::Present { attr }
            | Compiled::Ext { attr, .. }
            | Compiled::LinkPresent { attr } => Some(*attr),
            Compiled::ExtDn { attr, .. } => *attr,
            _ => None,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn eval_in(
    c: &Compiled,
    id: u64,
    rec: &RecordView<'_>,
    cfg: &DbConfig,
    res: &dyn AttrNames,
    dn_avas: &mut dyn FnMut() -> DnAvas,
    hidden: Option<&dyn Fn(u32) -> bool>,
) -> Tri {
    if let Some(h) = hidden {
        if c.leaf_attribute().is_some_and(h) {
            return Tri::False;
        }
    }
    match c {
        Compiled::True => Tri::True,
        Compiled::False => Tri::False,
        Compiled::Undefined => Tri::Undefined,
        Compiled::And(cs) => {
            let mut out = Tri::True;
            for x in cs {
                match eval_in(x, id, rec, cfg, res, dn_avas, hidden) {
                    Tri::False => return Tri::False,
                    Tri::Undefined => out = Tri::Undefined,
                    Tri::True => {}
                }
            }
            out
        }
        Compiled::Or(cs) => {
            let mut out = Tri::False;
            for x in cs {
                match eval_in(x, id, rec, cfg, res, dn_avas, hidden) {
                    Tri::True => return Tri::True,
                    Tri::Undefined => out = Tri::Undefined,
                    Tri::False => {}
                }
            }
            out
        }
        Compiled::Not(x) => match eval_in(x, id, rec, cfg, res, dn_avas, hidden) {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Undefined => Tri::Undefined,
        },
        Compiled::Eq { attr, norm } => match rec.attr(*attr) {
            Some(a) => Tri::from_bool(a.values().any(|v| v.norm_eq(norm))),
            None => Tri::False,
        },
        Compiled::Ge { attr, norm } => match rec.attr(*attr) {
            Some(a) => Tri::from_bool(a.values().any(|v| v.norm_cmp(norm).is_ge())),
            None => Tri::False,
        },
        Compiled::Le { attr, norm } => match rec.attr(*attr) {
            Some(a) => Tri::from_bool(a.values().any(|v| v.norm_cmp(norm).is_le())),
            None => Tri::False,
        },
        Compiled::Sub {
            attr,
            initial,
            any,
            final_,
        } => match rec.attr(*attr) {
            Some(a) => Tri::from_bool(
                a.values()
                    .any(|v| sub_matches(&v.norm(), initial, any, final_)),
            ),
            None => Tri::False,
        },
        Compiled::Present { attr } => Tri::from_bool(rec.attr(*attr).is_some()),
        Compiled::Ext { attr, rule } => match rec.attr(*attr) {
            Some(a) => any_value(
                a.values()
                    .map(|v| ext_value_matches(rule, v.raw, &v.norm())),
            ),
            None => Tri::False,
        },
        Compiled::ExtDn { m, attr } => eval_ext_dn(m, *attr, rec, cfg, res, dn_avas),
        Compiled::InSet(ids) => Tri::from_bool(ids.binary_search(&id).is_ok()),
        Compiled::LinkPresent { attr } => Tri::from_bool(res.has_presence(*attr, id)),
    }
}

/// Id → name lookups needed when an extensible match spans every attribute.
pub trait AttrNames {
    /// The lowercased name of an attribute id.
    fn name_lower(&self, id: u32) -> Option<String>;

    /// Whether the presence key of `attr` exists for record `id` (linked attributes,
    /// whose values are not in the record).
    fn has_presence(&self, attr: u32, id: u64) -> bool {
        let _ = (attr, id);
        false
    }
}

fn eval_ext_dn(
    m: &ExtensibleMatch,
    attr: Option<u32>,
    rec: &RecordView<'_>,
    cfg: &DbConfig,
    res: &dyn AttrNames,
    dn_avas: &mut dyn FnMut() -> DnAvas,
) -> Tri {
    let mut results = Vec::new();
    let rule_for = |name: &str| {
        ext_rule(
            m.rule.as_deref(),
            &m.value,
            cfg.schema.syntax_of_lower(name),
        )
    };
    match (&m.attr, attr) {
        (Some(name), Some(id)) => {
            let lower = name.to_ascii_lowercase();
            match (rule_for(&lower), rec.attr(id)) {
                (Some(rule), Some(a)) => results.push(any_value(
                    a.values()
                        .map(|v| ext_value_matches(&rule, v.raw, &v.norm())),
                )),
                (None, _) => results.push(Tri::Undefined),
                _ => {}
            }
        }
        (Some(_), None) => {}
        (None, _) => {
            for a in rec.attrs() {
                let Some(lower) = res.name_lower(a.id) else {
                    continue;
                };
                if let Some(rule) = rule_for(&lower) {
                    results.push(any_value(
                        a.values()
                            .map(|v| ext_value_matches(&rule, v.raw, &v.norm())),
                    ));
                }
            }
        }
    }
    if m.dn_attributes {
        for (a, v) in dn_avas() {
            let lower = a.to_ascii_lowercase();
            if m.attr
                .as_deref()
                .is_some_and(|x| !x.eq_ignore_ascii_case(&lower))
            {
                continue;
            }
            let syn = cfg.schema.syntax_of_lower(&lower);
            if let Some(rule) = rule_for(&lower) {
                let norm = syn
                    .normalize(v.as_bytes())
                    .map(|c| c.into_owned())
                    .unwrap_or_default();
                results.push(ext_value_matches(&rule, v.as_bytes(), &norm));
            }
        }
    }
    any_value(results.into_iter())
}

/// The AVAs of every RDN in a DN given as name texts, leaf first: RDN texts, or the whole
/// DN text of a naming context. Unparsable names are skipped.
pub fn avas_of_rdns<'a>(names: impl Iterator<Item = &'a str>) -> DnAvas {
    let mut out = Vec::new();
    for r in names {
        let rdns = match Rdn::parse(r) {
            Ok(rdn) => vec![rdn],
            Err(_) => crate::dn::Dn::parse(r)
                .map(|d| d.rdns().to_vec())
                .unwrap_or_default(),
        };
        for rdn in rdns {
            for ava in rdn.avas() {
                out.push((ava.attr.clone(), ava.value.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_semantics() {
        let v = b"alice smith";
        assert!(sub_matches(v, &Some(b"al".to_vec()), &[], &None));
        assert!(sub_matches(
            v,
            &None,
            &[b"ce s".to_vec()],
            &Some(b"th".to_vec())
        ));
        assert!(!sub_matches(
            v,
            &Some(b"alice".to_vec()),
            &[],
            &Some(b"e smith".to_vec())
        ));
        assert!(sub_matches(
            v,
            &Some(b"alice".to_vec()),
            &[b" ".to_vec()],
            &Some(b"smith".to_vec())
        ));
        assert!(!sub_matches(
            b"ab",
            &Some(b"ab".to_vec()),
            &[],
            &Some(b"b".to_vec())
        ));
    }
}
