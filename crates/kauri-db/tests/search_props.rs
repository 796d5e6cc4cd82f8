//! Property: on random data, after random adds, modifies, moves and deletes, every search
//! returns exactly what a brute-force evaluation of the filter over a plain model of the
//! entries returns — for both backends, with indexes (including truncated index keys) and
//! without.

use std::collections::BTreeMap;

use kauri_db::{
    Db, DbConfig, Dn, Entry, Filter, IndexFlags, Modification, ModifyOp, Rdn, Scope, SearchRequest,
    Syntax,
};
use kauri_kv::Backend;
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "Alpha Beta",
    "alpha",
    "Beta gamma",
    "GAMMA",
    "delta alpha",
    "Beta",
];
const TAGS: &[&str] = &["red", "Green", "blue", "RED"];
const PARTS: &[&str] = &["a", "al", "Be", "ma", "ta", "gam", "x", "ha"];
const CONTAINERS: usize = 4;

#[derive(Debug, Clone)]
enum Op {
    Add {
        parent: usize,
        names: Vec<usize>,
        nums: Vec<i64>,
        tags: Vec<usize>,
        flag: Option<bool>,
        group: bool,
    },
    SetNums {
        target: usize,
        nums: Vec<i64>,
    },
    AddTag {
        target: usize,
        tag: usize,
    },
    MoveEntry {
        target: usize,
        parent: usize,
    },
    MoveOu {
        ou: usize,
        parent: usize,
    },
    Delete {
        target: usize,
    },
}

#[derive(Debug, Clone)]
struct ModelEntry {
    parent: usize, // index into containers
    rdn: String,
    attrs: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone)]
struct Model {
    /// Containers: 0 = dc=t (root); 1.. = OUs with their parent container.
    ou_parent: Vec<Option<usize>>,
    entries: Vec<Option<ModelEntry>>,
}

impl Model {
    fn container_dn(&self, c: usize) -> String {
        match self.ou_parent[c] {
            None => "dc=t".to_string(),
            Some(p) => format!("ou=o{c},{}", self.container_dn(p)),
        }
    }
    fn is_below(&self, c: usize, ancestor: usize) -> bool {
        let mut cur = self.ou_parent[c];
        while let Some(p) = cur {
            if p == ancestor {
                return true;
            }
            cur = self.ou_parent[p];
        }
        false
    }
}

fn config(key_len: usize) -> DbConfig {
    let mut cfg = DbConfig {
        max_index_key_len: key_len,
        ..DbConfig::default()
    };
    cfg.schema
        .set("num", Syntax::Integer)
        .set("flag", Syntax::Boolean);
    cfg.index(
        "name",
        IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL | IndexFlags::PRESENCE,
    )
    .index("num", IndexFlags::EQUALITY | IndexFlags::ORDERED)
    .index("flag", IndexFlags::EQUALITY);
    cfg
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..CONTAINERS, prop::collection::vec(0..NAMES.len(), 0..3), prop::collection::vec(-4i64..5, 0..3),
              prop::collection::vec(0..TAGS.len(), 0..3), prop::option::of(any::<bool>()), any::<bool>())
            .prop_map(|(parent, names, nums, tags, flag, group)| Op::Add { parent, names, nums, tags, flag, group }),
        1 => (0..40usize, prop::collection::vec(-4i64..5, 0..3)).prop_map(|(target, nums)| Op::SetNums { target, nums }),
        1 => (0..40usize, 0..TAGS.len()).prop_map(|(target, tag)| Op::AddTag { target, tag }),
        1 => (0..40usize, 0..CONTAINERS).prop_map(|(target, parent)| Op::MoveEntry { target, parent }),
        1 => (1..CONTAINERS, 0..CONTAINERS).prop_map(|(ou, parent)| Op::MoveOu { ou, parent }),
        1 => (0..40usize).prop_map(|target| Op::Delete { target }),
    ]
}

fn value_strategy(attr: &'static str) -> BoxedStrategy<String> {
    match attr {
        "name" => prop::sample::select(NAMES)
            .prop_map(|s| s.to_string())
            .boxed(),
        "tag" => prop::sample::select(TAGS)
            .prop_map(|s| s.to_string())
            .boxed(),
        "num" => prop_oneof![
            (-5i64..6).prop_map(|n| n.to_string()),
            Just("x1".to_string())
        ]
        .boxed(),
        "flag" => prop::sample::select(&["TRUE", "false", "maybe"][..])
            .prop_map(|s| s.to_string())
            .boxed(),
        _ => prop::sample::select(&["top", "person", "group", "organizationalUnit"][..])
            .prop_map(|s| s.to_string())
            .boxed(),
    }
}

fn leaf_strategy() -> impl Strategy<Value = Filter> {
    let attr = prop::sample::select(&["name", "tag", "num", "flag", "objectClass"][..]);
    attr.prop_flat_map(|a| {
        let part =
            || prop::option::of(prop::sample::select(PARTS).prop_map(|p| p.as_bytes().to_vec()));
        prop_oneof![
            value_strategy(a).prop_map(move |v| Filter::eq(a, v)),
            Just(Filter::present(a)),
            value_strategy(a).prop_map(move |v| Filter::ge(a, v)),
            value_strategy(a).prop_map(move |v| Filter::le(a, v)),
            (
                part(),
                prop::collection::vec(
                    prop::sample::select(PARTS).prop_map(|p| p.as_bytes().to_vec()),
                    0..2
                ),
                part()
            )
                .prop_filter("needs a part", |(i, m, f)| i.is_some()
                    || !m.is_empty()
                    || f.is_some())
                .prop_map(move |(initial, any, final_)| Filter::Substrings(
                    kauri_db::filter::SubstringFilter {
                        attr: a.to_string(),
                        initial,
                        any,
                        final_
                    }
                )),
        ]
    })
}

fn filter_strategy() -> impl Strategy<Value = Filter> {
    leaf_strategy().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Filter::And),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Filter::Or),
            inner.prop_map(Filter::not),
        ]
    })
}

// ----- the brute-force oracle ---------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    Y,
    N,
    U,
}

fn fold(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn any_of(vals: &[String], f: impl Fn(&str) -> T) -> T {
    let mut out = T::N;
    for v in vals {
        match f(v) {
            T::Y => return T::Y,
            T::U => out = T::U,
            T::N => {}
        }
    }
    out
}

fn oracle(f: &Filter, e: &ModelEntry) -> T {
    let vals = |a: &str| e.attrs.get(&a.to_lowercase()).cloned().unwrap_or_default();
    let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    match f {
        Filter::And(fs) => {
            let mut out = T::Y;
            for x in fs {
                match oracle(x, e) {
                    T::N => return T::N,
                    T::U => out = T::U,
                    T::Y => {}
                }
            }
            out
        }
        Filter::Or(fs) => {
            let mut out = T::N;
            for x in fs {
                match oracle(x, e) {
                    T::Y => return T::Y,
                    T::U => out = T::U,
                    T::N => {}
                }
            }
            out
        }
        Filter::Not(x) => match oracle(x, e) {
            T::Y => T::N,
            T::N => T::Y,
            T::U => T::U,
        },
        Filter::Present(a) => {
            if vals(a).is_empty() {
                T::N
            } else {
                T::Y
            }
        }
        Filter::Equality(a, v) | Filter::GreaterOrEqual(a, v) | Filter::LessOrEqual(a, v) => {
            let v = s(v);
            let want = |o: std::cmp::Ordering| match f {
                Filter::Equality(..) => o == std::cmp::Ordering::Equal,
                Filter::GreaterOrEqual(..) => o != std::cmp::Ordering::Less,
                _ => o != std::cmp::Ordering::Greater,
            };
            let have = vals(a);
            match a.as_str() {
                "num" => match v.parse::<i64>() {
                    Err(_) => T::U,
                    Ok(n) => {
                        if have.is_empty() {
                            T::N
                        } else {
                            any_of(&have, |x| {
                                if want(x.parse::<i64>().unwrap().cmp(&n)) {
                                    T::Y
                                } else {
                                    T::N
                                }
                            })
                        }
                    }
                },
                "flag" => {
                    let up = v.to_uppercase();
                    if up != "TRUE" && up != "FALSE" {
                        return T::U;
                    }
                    if !matches!(f, Filter::Equality(..)) {
                        return T::U; // booleans have no ordering
                    }
                    any_of(&have, |x| if x.to_uppercase() == up { T::Y } else { T::N })
                }
                _ => any_of(&have, |x| {
                    if want(fold(x).as_bytes().cmp(fold(&v).as_bytes())) {
                        T::Y
                    } else {
                        T::N
                    }
                }),
            }
        }
        Filter::Substrings(sf) => {
            if sf.attr == "num" || sf.attr == "flag" {
                return T::U;
            }
            let init = sf.initial.as_ref().map(|b| fold(&s(b)));
            let fin = sf.final_.as_ref().map(|b| fold(&s(b)));
            let mids: Vec<String> = sf.any.iter().map(|b| fold(&s(b))).collect();
            any_of(&vals(&sf.attr), |x| {
                let x = fold(x);
                let mut pos = 0;
                if let Some(i) = &init {
                    if !x.starts_with(i.as_str()) {
                        return T::N;
                    }
                    pos = i.len();
                }
                for m in &mids {
                    match x[pos..].find(m.as_str()) {
                        Some(p) => pos += p + m.len(),
                        None => return T::N,
                    }
                }
                if let Some(fi) = &fin {
                    if x.len() < pos + fi.len() || !x.ends_with(fi.as_str()) {
                        return T::N;
                    }
                }
                T::Y
            })
        }
        _ => T::U,
    }
}

// ----- running it ------------------------------------------------------------------------------

fn apply<B: Backend>(db: &Db<B>, model: &mut Model, op: &Op) {
    let live: Vec<usize> = model
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_some())
        .map(|(i, _)| i)
        .collect();
    let pick = |t: usize| live.get(t % live.len().max(1)).copied();
    let entry_dn = |m: &Model, i: usize| {
        let e = m.entries[i].as_ref().unwrap();
        format!("{},{}", e.rdn, m.container_dn(e.parent))
    };
    match op {
        Op::Add {
            parent,
            names,
            nums,
            tags,
            flag,
            group,
        } => {
            let i = model.entries.len();
            let mut attrs: BTreeMap<String, Vec<String>> = BTreeMap::new();
            attrs.insert(
                "objectclass".into(),
                vec!["top".into(), if *group { "group" } else { "person" }.into()],
            );
            attrs.insert("cn".into(), vec![format!("e{i}")]);
            let mut push_unique = |a: &str, v: String, fold_it: bool| {
                let list = attrs.entry(a.into()).or_default();
                let key = |x: &String| if fold_it { fold(x) } else { x.clone() };
                if !list.iter().any(|x| key(x) == key(&v)) {
                    list.push(v);
                }
            };
            for n in names {
                push_unique("name", NAMES[*n].into(), true);
            }
            for n in nums {
                push_unique("num", n.to_string(), false);
            }
            for t in tags {
                push_unique("tag", TAGS[*t].into(), true);
            }
            if let Some(f) = flag {
                push_unique("flag", if *f { "TRUE" } else { "FALSE" }.into(), false);
            }
            let me = ModelEntry {
                parent: *parent,
                rdn: format!("cn=e{i}"),
                attrs,
            };
            let mut e =
                Entry::new(Dn::parse(&format!("cn=e{i},{}", model.container_dn(*parent))).unwrap());
            for (a, vs) in &me.attrs {
                e.push(a, vs.iter().map(|v| v.as_bytes().to_vec()).collect());
            }
            db.add(e).unwrap();
            model.entries.push(Some(me));
        }
        Op::SetNums { target, nums } => {
            let Some(i) = pick(*target) else { return };
            let mut nums: Vec<String> = nums.iter().map(|n| n.to_string()).collect();
            nums.dedup();
            nums.sort();
            nums.dedup();
            let vals: Vec<&str> = nums.iter().map(String::as_str).collect();
            db.modify(
                &Dn::parse(&entry_dn(model, i)).unwrap(),
                &[Modification::new(ModifyOp::Replace, "num", &vals)],
            )
            .unwrap();
            let e = model.entries[i].as_mut().unwrap();
            if nums.is_empty() {
                e.attrs.remove("num");
            } else {
                e.attrs.insert("num".into(), nums);
            }
        }
        Op::AddTag { target, tag } => {
            let Some(i) = pick(*target) else { return };
            let r = db.modify(
                &Dn::parse(&entry_dn(model, i)).unwrap(),
                &[Modification::new(ModifyOp::Add, "tag", &[TAGS[*tag]])],
            );
            let e = model.entries[i].as_mut().unwrap();
            let list = e.attrs.entry("tag".into()).or_default();
            if list.iter().any(|x| fold(x) == fold(TAGS[*tag])) {
                assert_eq!(r.unwrap_err().ldap_result_code(), 20);
            } else {
                r.unwrap();
                list.push(TAGS[*tag].into());
            }
        }
        Op::MoveEntry { target, parent } => {
            let Some(i) = pick(*target) else { return };
            let old = entry_dn(model, i);
            let rdn = Rdn::parse(&model.entries[i].as_ref().unwrap().rdn).unwrap();
            db.rename(
                &Dn::parse(&old).unwrap(),
                &rdn,
                true,
                Some(&Dn::parse(&model.container_dn(*parent)).unwrap()),
            )
            .unwrap();
            model.entries[i].as_mut().unwrap().parent = *parent;
        }
        Op::MoveOu { ou, parent } => {
            let old = Dn::parse(&model.container_dn(*ou)).unwrap();
            let newp = Dn::parse(&model.container_dn(*parent)).unwrap();
            let r = db.rename(
                &old,
                &Rdn::parse(&format!("ou=o{ou}")).unwrap(),
                true,
                Some(&newp),
            );
            if *parent == *ou || model.is_below(*parent, *ou) {
                assert_eq!(r.unwrap_err().ldap_result_code(), 53);
            } else {
                r.unwrap();
                model.ou_parent[*ou] = Some(*parent);
            }
        }
        Op::Delete { target } => {
            let Some(i) = pick(*target) else { return };
            db.delete(&Dn::parse(&entry_dn(model, i)).unwrap(), false)
                .unwrap();
            model.entries[i] = None;
        }
    }
}

fn check_search<B: Backend>(db: &Db<B>, model: &Model, base: usize, scope: Scope, filter: &Filter) {
    let r = db.read().unwrap();
    let req = SearchRequest::new(
        Dn::parse(&model.container_dn(base)).unwrap(),
        scope,
        filter.clone(),
    );
    let mut got: Vec<String> = r
        .search_entries(&req)
        .unwrap()
        .into_iter()
        .map(|e| e.dn.norm().to_string())
        .collect();
    got.sort();
    let mut want = Vec::new();
    // Containers carry objectClass and ou only.
    for c in 0..CONTAINERS {
        let in_scope = match scope {
            Scope::Base => c == base,
            Scope::OneLevel => model.ou_parent[c] == Some(base),
            Scope::Subtree => c == base || model.is_below(c, base),
            Scope::Children => model.is_below(c, base),
        };
        if !in_scope {
            continue;
        }
        let mut attrs = BTreeMap::new();
        if c == 0 {
            attrs.insert(
                "objectclass".to_string(),
                vec!["top".to_string(), "domain".to_string()],
            );
        } else {
            attrs.insert(
                "objectclass".to_string(),
                vec!["top".to_string(), "organizationalUnit".to_string()],
            );
        }
        let me = ModelEntry {
            parent: 0,
            rdn: String::new(),
            attrs,
        };
        if oracle(filter, &me) == T::Y {
            want.push(
                Dn::parse(&model.container_dn(c))
                    .unwrap()
                    .norm()
                    .to_string(),
            );
        }
    }
    for e in model.entries.iter().flatten() {
        let in_scope = match scope {
            Scope::Base => false,
            Scope::OneLevel => e.parent == base,
            Scope::Subtree | Scope::Children => e.parent == base || model.is_below(e.parent, base),
        };
        if in_scope && oracle(filter, e) == T::Y {
            want.push(
                Dn::parse(&format!("{},{}", e.rdn, model.container_dn(e.parent)))
                    .unwrap()
                    .norm()
                    .to_string(),
            );
        }
    }
    want.sort();
    let explain = r.explain(&req).unwrap();
    assert_eq!(
        got, want,
        "filter {filter} base {base} scope {scope:?}; plan: {explain}"
    );
}

fn run<B: Backend>(db: &Db<B>, ops: &[Op], searches: &[(usize, Scope, Filter)]) {
    db.add_root(Entry::new(Dn::parse("dc=t").unwrap()).with("objectClass", &["top", "domain"]))
        .unwrap();
    let mut model = Model {
        ou_parent: vec![None],
        entries: Vec::new(),
    };
    for c in 1..CONTAINERS {
        let parent = (c - 1) / 2; // 1,2 under root; 3 under 1
        db.add(
            Entry::new(Dn::parse(&format!("ou=o{c},{}", model.container_dn(parent))).unwrap())
                .with("objectClass", &["top", "organizationalUnit"]),
        )
        .unwrap();
        model.ou_parent.push(Some(parent));
    }
    for op in ops {
        apply(db, &mut model, op);
    }
    for (base, scope, f) in searches {
        check_search(db, &model, *base, *scope, f);
    }
    assert!(db.check(false, None).unwrap().is_clean());
}

fn scope_strategy() -> impl Strategy<Value = Scope> {
    prop::sample::select(
        &[
            Scope::Base,
            Scope::OneLevel,
            Scope::Subtree,
            Scope::Children,
        ][..],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn search_equals_brute_force(
        ops in prop::collection::vec(op_strategy(), 0..50),
        searches in prop::collection::vec((0..CONTAINERS, scope_strategy(), filter_strategy()), 1..12),
        short_keys in any::<bool>(),
    ) {
        let key_len = if short_keys { 20 } else { kauri_kv::MAX_KEY_LEN };
        let mem = Db::in_memory(config(key_len)).unwrap();
        run(&mem, &ops, &searches);
        let dir = tempfile::tempdir().unwrap();
        let opts = kauri_kv::lmdb::LmdbOptions { map_size: 1 << 20, durable: false, ..Default::default() };
        let lmdb = Db::open_lmdb(dir.path(), config(key_len), opts).unwrap();
        run(&lmdb, &ops, &searches);
    }
}
