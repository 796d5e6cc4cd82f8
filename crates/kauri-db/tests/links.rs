//! Linked attributes against both backends: links kept in both directions, shown as DNs
//! that follow renames, searched by equality, presence and in-chain, removed with their
//! entries, and verified by the consistency check and rebuilt by a re-index.

mod common;

use common::{dn, ou, user};
use kauri_db::{Db, DbError, Entry, Filter, Modification, ModifyOp, Rdn, Scope, SearchRequest};
use kauri_kv::Backend;

const BASE: &str = "dc=example,dc=com";

fn group(name: &str, members: &[&str]) -> Entry {
    let mut e = Entry::new(dn(&format!("cn={name},ou=Groups,{BASE}")))
        .with("objectClass", &["top", "group"])
        .with("cn", &[name]);
    if !members.is_empty() {
        e.push(
            "member",
            members.iter().map(|m| m.as_bytes().to_vec()).collect(),
        );
    }
    e
}

fn setup<B: Backend>(db: &Db<B>) {
    db.add_root(
        Entry::new(dn(BASE))
            .with("objectClass", &["top", "domain"])
            .with("dc", &["example"]),
    )
    .unwrap();
    db.add(ou("People", BASE)).unwrap();
    db.add(ou("Groups", BASE)).unwrap();
    for i in 0..5 {
        db.add(user(&format!("U{i}"), &format!("ou=People,{BASE}"), i))
            .unwrap();
    }
}

fn u(i: u32) -> String {
    format!("cn=U{i},ou=People,{BASE}")
}

fn g(name: &str) -> String {
    format!("cn={name},ou=Groups,{BASE}")
}

fn values<B: Backend>(db: &Db<B>, entry: &str, attr: &str) -> Vec<String> {
    let e = db.read().unwrap().entry(&dn(entry)).unwrap().unwrap();
    let mut v: Vec<String> = e
        .get(attr)
        .unwrap_or(&[])
        .iter()
        .map(|x| String::from_utf8(x.clone()).unwrap().to_ascii_lowercase())
        .collect();
    v.sort();
    v
}

fn found<B: Backend>(db: &Db<B>, filter: &str) -> Vec<String> {
    let r = db.read().unwrap();
    let mut out: Vec<String> = r
        .search_entries(&SearchRequest::new(
            dn(BASE),
            Scope::Subtree,
            Filter::parse(filter).unwrap(),
        ))
        .unwrap()
        .into_iter()
        .map(|e| e.dn.to_string().to_ascii_lowercase())
        .collect();
    out.sort();
    out
}

fn usn_changed<B: Backend>(db: &Db<B>, entry: &str) -> u64 {
    let e = db.read().unwrap().entry(&dn(entry)).unwrap().unwrap();
    String::from_utf8(e.get("uSNChanged").unwrap()[0].clone())
        .unwrap()
        .parse()
        .unwrap()
}

fn assert_clean<B: Backend>(db: &Db<B>) {
    let report = db.check(false, None).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

both_backends!(links_in_both_directions);
fn links_in_both_directions<B: Backend>(db: &Db<B>) {
    setup(db);
    db.add(group("G1", &[&u(0), &u(1)])).unwrap();
    assert_eq!(
        values(db, &g("G1"), "member"),
        vec![u(0).to_lowercase(), u(1).to_lowercase()]
    );
    assert_eq!(values(db, &u(0), "memberOf"), vec![g("G1").to_lowercase()]);
    assert!(values(db, &u(2), "memberOf").is_empty());
    // Equality both ways, presence both ways.
    assert_eq!(
        found(db, &format!("(member={})", u(1))),
        vec![g("G1").to_lowercase()]
    );
    assert_eq!(
        found(db, &format!("(memberOf={})", g("G1"))),
        vec![u(0).to_lowercase(), u(1).to_lowercase()]
    );
    assert_eq!(found(db, "(member=*)"), vec![g("G1").to_lowercase()]);
    assert_eq!(found(db, "(memberOf=*)").len(), 2);
    assert_eq!(found(db, &format!("(!(memberOf={}))", g("G1"))).len(), 7);
    assert!(found(db, "(member=cn=nobody,dc=example,dc=com)").is_empty());
    // A search plan reads the links, not the records.
    let r = db.read().unwrap();
    let req = SearchRequest::new(
        dn(BASE),
        Scope::Subtree,
        Filter::parse(&format!("(&(objectClass=*)(memberOf={}))", g("G1"))).unwrap(),
    );
    let plan = r.explain(&req).unwrap();
    assert!(!plan.unindexed, "{plan}");
    drop(r);
    assert_clean(db);
}

both_backends!(modify_links);
fn modify_links<B: Backend>(db: &Db<B>) {
    setup(db);
    db.add(group("G1", &[&u(0)])).unwrap();
    let before = usn_changed(db, &g("G1"));
    let user_before = usn_changed(db, &u(2));
    db.modify(
        &dn(&g("G1")),
        &[Modification::new(ModifyOp::Add, "member", &[&u(2)])],
    )
    .unwrap();
    assert!(
        usn_changed(db, &g("G1")) > before,
        "the group's change USN moves"
    );
    assert_eq!(
        usn_changed(db, &u(2)),
        user_before,
        "a back link does not change its target"
    );
    // Adding a present value, deleting an absent one, naming a missing entry: AD's
    // answers (entryAlreadyExists, unwillingToPerform, noSuchObject).
    let err = db
        .modify(
            &dn(&g("G1")),
            &[Modification::new(ModifyOp::Add, "member", &[&u(2)])],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::EntryAlreadyExists(_)), "{err}");
    let err = db
        .modify(
            &dn(&g("G1")),
            &[Modification::new(ModifyOp::Delete, "member", &[&u(3)])],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::UnwillingToPerform(_)), "{err}");
    let err = db
        .modify(
            &dn(&g("G1")),
            &[Modification::new(
                ModifyOp::Add,
                "member",
                &["cn=ghost,dc=example,dc=com"],
            )],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::NoSuchObject(_)), "{err}");
    let err = db
        .modify(
            &dn(&g("G1")),
            &[Modification::new(ModifyOp::Add, "member", &["not a dn"])],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::InvalidAttributeSyntax(_)), "{err}");
    // Back links are never written.
    let err = db
        .modify(
            &dn(&u(3)),
            &[Modification::new(ModifyOp::Add, "memberOf", &[&g("G1")])],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::UnwillingToPerform(_)), "{err}");
    // A failed modification leaves nothing behind, even its valid parts.
    let err = db
        .modify(
            &dn(&g("G1")),
            &[
                Modification::new(ModifyOp::Add, "member", &[&u(4)]),
                Modification::new(ModifyOp::Add, "member", &[&u(4)]),
            ],
        )
        .unwrap_err();
    assert!(matches!(err, DbError::EntryAlreadyExists(_)), "{err}");
    assert!(values(db, &u(4), "memberOf").is_empty());
    // Replace and delete-all.
    db.modify(
        &dn(&g("G1")),
        &[Modification::new(
            ModifyOp::Replace,
            "member",
            &[&u(3), &u(0)],
        )],
    )
    .unwrap();
    assert_eq!(
        values(db, &g("G1"), "member"),
        vec![u(0).to_lowercase(), u(3).to_lowercase()]
    );
    assert!(values(db, &u(2), "memberOf").is_empty());
    db.modify(
        &dn(&g("G1")),
        &[Modification::new(ModifyOp::Delete, "member", &[])],
    )
    .unwrap();
    assert!(values(db, &g("G1"), "member").is_empty());
    assert!(found(db, "(member=*)").is_empty());
    assert!(found(db, "(memberOf=*)").is_empty());
    // A pair without a back link.
    db.modify(
        &dn(&u(1)),
        &[Modification::new(ModifyOp::Add, "seeAlso", &[&u(2)])],
    )
    .unwrap();
    assert_eq!(values(db, &u(1), "seeAlso"), vec![u(2).to_lowercase()]);
    assert_eq!(
        found(db, &format!("(seeAlso={})", u(2))),
        vec![u(1).to_lowercase()]
    );
    assert_clean(db);
}

both_backends!(renames_and_deletes);
fn renames_and_deletes<B: Backend>(db: &Db<B>) {
    setup(db);
    db.add(group("G1", &[&u(0), &u(1)])).unwrap();
    db.add(group("G2", &[&g("G1")])).unwrap();
    // Renaming a member changes the DN shown, with no link rewritten.
    db.rename(&dn(&u(0)), &Rdn::parse("cn=Renamed").unwrap(), true, None)
        .unwrap();
    let renamed = format!("cn=Renamed,ou=People,{BASE}").to_lowercase();
    assert!(values(db, &g("G1"), "member").contains(&renamed));
    assert_eq!(
        found(db, &format!("(member={renamed})")),
        vec![g("G1").to_lowercase()]
    );
    // Deleting a member removes it from its groups and moves their change USN.
    let before = usn_changed(db, &g("G1"));
    db.delete(&dn(&u(1)), false).unwrap();
    assert_eq!(values(db, &g("G1"), "member"), vec![renamed.clone()]);
    assert!(usn_changed(db, &g("G1")) > before);
    // Deleting a group removes its members' back links and its own.
    db.delete(&dn(&g("G1")), false).unwrap();
    assert!(values(db, &renamed, "memberOf").is_empty());
    assert!(values(db, &g("G2"), "member").is_empty());
    assert!(found(db, "(memberOf=*)").is_empty());
    assert_clean(db);
}

both_backends!(in_chain_and_cycles);
fn in_chain_and_cycles<B: Backend>(db: &Db<B>) {
    setup(db);
    // G0 ∋ U0; G(i) ∋ G(i-1) for ten levels; G9 ∋ G0 closes a cycle.
    db.add(group("G0", &[&u(0)])).unwrap();
    for i in 1..10 {
        db.add(group(&format!("G{i}"), &[&g(&format!("G{}", i - 1))]))
            .unwrap();
    }
    db.modify(
        &dn(&g("G0")),
        &[Modification::new(ModifyOp::Add, "member", &[&g("G9")])],
    )
    .unwrap();
    let chain = found(db, &format!("(member:1.2.840.113556.1.4.1941:={})", u(0)));
    assert_eq!(chain.len(), 10, "{chain:?}");
    let direct = found(db, &format!("(member={})", u(0)));
    assert_eq!(direct, vec![g("G0").to_lowercase()]);
    let members = found(
        db,
        &format!("(memberOf:1.2.840.113556.1.4.1941:={})", g("G5")),
    );
    // Every group (the cycle makes G5 a member of itself) and U0.
    assert_eq!(members.len(), 11, "{members:?}");
    assert!(members.contains(&u(0).to_lowercase()));
    let r = db.read().unwrap();
    let user_id = r.lookup(&dn(&u(0))).unwrap().unwrap();
    let member_of = r.attr_id("memberOf").unwrap();
    assert_eq!(r.link_closure(user_id, member_of).unwrap().len(), 10);
}

both_backends!(reindex_rebuilds_link_presence);
fn reindex_rebuilds_link_presence<B: Backend>(db: &Db<B>) {
    setup(db);
    db.add(group("G1", &[&u(0), &u(1)])).unwrap();
    db.reindex(None).unwrap();
    assert_eq!(found(db, "(member=*)"), vec![g("G1").to_lowercase()]);
    assert_eq!(found(db, "(memberOf=*)").len(), 2);
    assert_clean(db);
}

both_backends!(large_group);
fn large_group<B: Backend>(db: &Db<B>) {
    setup(db);
    db.add(group("Big", &[])).unwrap();
    let mut w = db.write().unwrap();
    for i in 0..3000 {
        w.add(user(&format!("M{i}"), &format!("ou=People,{BASE}"), i))
            .unwrap();
        w.modify(
            &dn(&g("Big")),
            &[Modification::new(
                ModifyOp::Add,
                "member",
                &[&format!("cn=M{i},ou=People,{BASE}")],
            )],
        )
        .unwrap();
    }
    w.commit().unwrap();
    assert_eq!(values(db, &g("Big"), "member").len(), 3000);
    assert_eq!(found(db, &format!("(memberOf={})", g("Big"))).len(), 3000);
    assert_clean(db);
}

both_backends!(check_repairs_damaged_links);
fn check_repairs_damaged_links<B: Backend>(db: &Db<B>) {
    use kauri_db::db::{T_LINKS, T_META};
    use kauri_db::keys::{link_key, meta, LINK_BACK, LINK_FORWARD};
    use kauri_kv::WriteTxn;
    setup(db);
    db.add(group("G1", &[&u(0), &u(1), &u(2)])).unwrap();
    let (g1, u0, u1, member) = {
        let r = db.read().unwrap();
        let id = |d: &str| r.lookup(&dn(d)).unwrap().unwrap();
        (
            id(&g("G1")),
            id(&u(0)),
            id(&u(1)),
            r.attr_id("member").unwrap(),
        )
    };
    // Behind Kauri's back: a lost back link, a back link without its forward link, a link
    // to an entry that never existed, and a record id counter behind the records.
    {
        let mut w = db.kv().write().unwrap();
        assert!(w
            .delete(T_LINKS, &link_key(LINK_BACK, u0, member, g1))
            .unwrap());
        assert!(w
            .delete(T_LINKS, &link_key(LINK_FORWARD, g1, member, u1))
            .unwrap());
        w.put(T_LINKS, &link_key(LINK_FORWARD, g1, member, 9999), b"")
            .unwrap();
        w.put(T_LINKS, &link_key(LINK_BACK, 9999, member, g1), b"")
            .unwrap();
        w.put(T_META, meta::NEXT_ID, &2u64.to_be_bytes()).unwrap();
        w.commit().unwrap();
    }
    let report = db.check(false, None).unwrap();
    let broken = report
        .problems
        .iter()
        .filter(|p| matches!(p, kauri_db::check::Problem::BrokenLink { .. }))
        .count();
    assert_eq!(broken, 4, "{:?}", report.problems);
    assert!(report
        .problems
        .iter()
        .any(|p| matches!(p, kauri_db::check::Problem::CounterBehind { .. })));
    assert!(report.problems.iter().all(|p| p.fixable()));

    let fixed = db.check(true, None).unwrap();
    assert!(fixed.fixed);
    assert!(fixed.is_clean(), "{:?}", fixed.problems);
    // The forward link is the authority: u0 keeps its membership, u1 loses it.
    assert_eq!(
        values(db, &g("G1"), "member"),
        vec![u(0).to_ascii_lowercase(), u(2).to_ascii_lowercase()]
    );
    assert_eq!(
        values(db, &u(0), "memberOf"),
        vec![g("G1").to_ascii_lowercase()]
    );
    assert!(values(db, &u(1), "memberOf").is_empty());
    assert_eq!(found(db, &format!("(memberOf={})", g("G1"))).len(), 2);
    // New entries get ids past every existing one.
    let id = db
        .add(user("Fresh", &format!("ou=People,{BASE}"), 99))
        .unwrap();
    assert!(id > g1);
}

/// A database written while `manager` was a plain DN value, opened again with `manager`
/// stored as a reference: the values move into the links table (a value naming nothing is
/// dropped), follow renames from then on, survive the target becoming a tombstone and go
/// with a hard delete.
#[test]
fn values_become_references_on_open() {
    use kauri_kv::lmdb::LmdbOptions;
    let opts = || LmdbOptions {
        map_size: 1 << 20,
        durable: false,
        ..LmdbOptions::default()
    };
    let boss = format!("cn=Boss,ou=People,{BASE}");
    let staff = u(0);
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open_lmdb(dir.path(), common::config(), opts()).unwrap();
        setup(&db);
        db.add(user("Boss", &format!("ou=People,{BASE}"), 99))
            .unwrap();
        let m = Modification::new(
            ModifyOp::Add,
            "manager",
            &[boss.as_str(), &format!("cn=Ghost,{BASE}")],
        );
        db.modify(&dn(&staff), &[m]).unwrap();
        assert_eq!(values(&db, &staff, "manager").len(), 2);
    }
    let mut cfg = common::config();
    cfg.reference("manager");
    let db = Db::open_lmdb(dir.path(), cfg, opts()).unwrap();
    assert_eq!(values(&db, &staff, "manager"), vec![boss.to_lowercase()]);
    assert_eq!(
        found(&db, &format!("(manager={boss})")),
        vec![staff.to_lowercase()]
    );
    assert_eq!(found(&db, "(manager=*)"), vec![staff.to_lowercase()]);
    assert_clean(&db);
    // Renames are followed.
    db.rename(&dn(&boss), &Rdn::parse("cn=Chief").unwrap(), true, None)
        .unwrap();
    let chief = format!("cn=Chief,ou=People,{BASE}").to_lowercase();
    assert_eq!(values(&db, &staff, "manager"), vec![chief.clone()]);
    // A target turning into a tombstone keeps the references to it; real links go.
    db.add(group("G1", &[&chief])).unwrap();
    let mut w = db.write().unwrap();
    let id = w.lookup(&dn(&chief)).unwrap().unwrap();
    w.remove_all_links(id, true).unwrap();
    w.commit().unwrap();
    assert_eq!(values(&db, &staff, "manager"), vec![chief.clone()]);
    assert!(values(&db, &g("G1"), "member").is_empty());
    // A value given twice is AD's attributeOrValueExists for a reference.
    let twice = Modification::new(ModifyOp::Replace, "manager", &[&u(1), &u(1)]);
    assert!(matches!(
        db.modify(&dn(&staff), &[twice]),
        Err(DbError::AttributeOrValueExists(_))
    ));
    // A hard delete takes the references with it.
    db.delete(&dn(&chief), false).unwrap();
    assert!(values(&db, &staff, "manager").is_empty());
    assert_clean(&db);
}

/// One operation writes at most `max_link_changes` link values (all its linked attributes
/// together): a larger one is refused whole with adminLimitExceeded, and the group grows to
/// any size in steps.
#[test]
fn link_values_per_operation_are_limited() {
    let mut cfg = common::config();
    cfg.max_link_changes = 40;
    let db = common::mem_with(cfg);
    setup(&db);
    for i in 0..100 {
        db.add(user(&format!("M{i}"), &format!("ou=People,{BASE}"), i))
            .unwrap();
    }
    let m = |i: usize| format!("cn=M{i},ou=People,{BASE}");
    let all: Vec<String> = (0..100).map(m).collect();
    let refs = |r: std::ops::Range<usize>| -> Vec<&str> {
        all.get(r).unwrap().iter().map(String::as_str).collect()
    };
    let too_many = group("Big", &refs(0..41));
    assert!(matches!(
        db.add(too_many),
        Err(DbError::AdminLimitExceeded(_))
    ));
    assert!(db.read().unwrap().entry(&dn(&g("Big"))).unwrap().is_none());
    db.add(group("Big", &refs(0..40))).unwrap();
    // Two modifications of 30 each: 60 in one operation, refused, nothing applied.
    let two = [
        Modification::new(ModifyOp::Add, "member", &refs(40..70)),
        Modification::new(ModifyOp::Add, "member", &refs(70..100)),
    ];
    assert!(matches!(
        db.modify(&dn(&g("Big")), &two),
        Err(DbError::AdminLimitExceeded(_))
    ));
    assert_eq!(values(&db, &g("Big"), "member").len(), 40);
    for part in two {
        db.modify(&dn(&g("Big")), &[part]).unwrap();
    }
    assert_eq!(values(&db, &g("Big"), "member").len(), 100);
    // Deleting many at once is counted too; in steps it works.
    let gone = Modification::new(ModifyOp::Delete, "member", &refs(0..50));
    assert!(matches!(
        db.modify(&dn(&g("Big")), std::slice::from_ref(&gone)),
        Err(DbError::AdminLimitExceeded(_))
    ));
    db.modify(
        &dn(&g("Big")),
        &[Modification::new(ModifyOp::Delete, "member", &refs(0..25))],
    )
    .unwrap();
    assert_eq!(values(&db, &g("Big"), "member").len(), 75);
    assert_clean(&db);
}
