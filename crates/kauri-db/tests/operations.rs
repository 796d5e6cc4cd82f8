//! Add, modify, delete, rename and search against both backends: LDAP semantics, error
//! codes, USNs, nested rollback, re-index and the consistency check.

mod common;

use std::ops::ControlFlow;

use common::{dn, ou, user};
use kauri_db::{Db, DbError, Entry, Filter, Modification, ModifyOp, Rdn, Scope, SearchRequest};
use kauri_kv::{Backend, ReadTxn, WriteTxn};

fn tree<B: Backend>(db: &Db<B>) {
    db.add_root(
        Entry::new(dn("dc=example,dc=com"))
            .with("objectClass", &["top", "domain"])
            .with("dc", &["example"]),
    )
    .unwrap();
    db.add(ou("People", "dc=example,dc=com")).unwrap();
    db.add(ou("Staff", "ou=People,dc=example,dc=com")).unwrap();
    db.add(ou("Groups", "dc=example,dc=com")).unwrap();
    for i in 0..10 {
        db.add(user(&format!("User {i}"), "ou=People,dc=example,dc=com", i))
            .unwrap();
    }
    for i in 10..15 {
        db.add(user(
            &format!("User {i}"),
            "ou=Staff,ou=People,dc=example,dc=com",
            i,
        ))
        .unwrap();
    }
}

fn names<B: Backend>(db: &Db<B>, base: &str, scope: Scope, filter: &str) -> Vec<String> {
    let r = db.read().unwrap();
    let mut out: Vec<String> = r
        .search_entries(&SearchRequest::new(
            dn(base),
            scope,
            Filter::parse(filter).unwrap(),
        ))
        .unwrap()
        .into_iter()
        .map(|e| e.dn.to_string())
        .collect();
    out.sort();
    out
}

fn count<B: Backend>(db: &Db<B>, base: &str, scope: Scope, filter: &str) -> usize {
    names(db, base, scope, filter).len()
}

both_backends!(add_lookup_and_scopes);
fn add_lookup_and_scopes<B: Backend>(db: &Db<B>) {
    tree(db);
    let base = "dc=example,dc=com";
    assert_eq!(count(db, base, Scope::Subtree, "(objectClass=*)"), 19);
    assert_eq!(count(db, base, Scope::Children, "(objectClass=*)"), 18);
    assert_eq!(count(db, base, Scope::OneLevel, "(objectClass=*)"), 2);
    assert_eq!(
        count(
            db,
            "ou=People,dc=example,dc=com",
            Scope::OneLevel,
            "(objectClass=user)"
        ),
        10
    );
    assert_eq!(
        count(
            db,
            "ou=People,dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=user)"
        ),
        15
    );
    assert_eq!(
        count(
            db,
            "cn=User 3,ou=People,dc=example,dc=com",
            Scope::Base,
            "(objectClass=*)"
        ),
        1
    );
    assert_eq!(
        count(
            db,
            "cn=User 3,ou=People,dc=example,dc=com",
            Scope::Base,
            "(cn=nobody)"
        ),
        0
    );
    // Case-insensitive DN and value matching.
    assert_eq!(
        names(
            db,
            "OU=people,DC=Example,dc=COM",
            Scope::OneLevel,
            "(CN=user 3)"
        ),
        vec!["cn=User 3,ou=People,dc=example,dc=com"]
    );
    // Whole-tree search from the root DN.
    assert_eq!(count(db, "", Scope::Subtree, "(uid=user.12)"), 1);
    let r = db.read().unwrap();
    let e = r
        .entry(&dn("cn=user 12,ou=staff,ou=people,dc=example,dc=com"))
        .unwrap()
        .unwrap();
    assert_eq!(e.get("employeeNumber").unwrap(), &[b"12".to_vec()]);
    assert!(e.get("uSNCreated").is_some() && e.get("uSNChanged").is_some());
    assert!(matches!(
        r.search_entries(&SearchRequest::new(
            dn("ou=nowhere,dc=example,dc=com"),
            Scope::Subtree,
            Filter::present("cn")
        )),
        Err(DbError::NoSuchObject(_))
    ));
}

both_backends!(filters);
fn filters<B: Backend>(db: &Db<B>) {
    tree(db);
    let b = "dc=example,dc=com";
    let s = Scope::Subtree;
    assert_eq!(count(db, b, s, "(cn=user 1*)"), 6); // 1, 10..14
    assert_eq!(count(db, b, s, "(cn=*ser 1)"), 1);
    assert_eq!(count(db, b, s, "(cn=u*1*)"), 6);
    assert_eq!(count(db, b, s, "(employeeNumber>=12)"), 3);
    assert_eq!(count(db, b, s, "(employeeNumber<=2)"), 3);
    assert_eq!(
        count(db, b, s, "(&(employeeNumber>=3)(employeeNumber<=5))"),
        3
    );
    assert_eq!(count(db, b, s, "(employeeNumber=-1)"), 0);
    assert_eq!(
        count(db, b, s, "(employeeNumber=007)"),
        1,
        "integer equality ignores leading zeros"
    );
    assert_eq!(
        count(db, b, s, "(employeeNumber>=abc)"),
        0,
        "undecidable assertion matches nothing"
    );
    assert_eq!(
        count(db, b, s, "(!(employeeNumber>=abc))"),
        0,
        "not(undefined) stays undefined"
    );
    assert_eq!(count(db, b, s, "(|(uid=user.1)(uid=user.2)(cn=User 3))"), 3);
    assert_eq!(
        count(db, b, s, "(&(objectClass=user)(!(employeeNumber>=5)))"),
        5
    );
    assert_eq!(count(db, b, s, "(sn=*)"), 0);
    assert_eq!(count(db, b, s, "(nosuchattr=1)"), 0);
    assert_eq!(count(db, b, s, "(!(nosuchattr=1))"), 19);
    assert_eq!(count(db, b, s, "(cn~=USER 4)"), 1);
    assert_eq!(
        count(db, b, s, "(employeeNumber:1.2.840.113556.1.4.803:=3)"),
        3,
        "3, 7 and 11 have bits 1|2"
    );
    assert_eq!(
        count(db, b, s, "(employeeNumber:1.2.840.113556.1.4.804:=8)"),
        7,
        "8..14 have bit 8"
    );
    assert_eq!(count(db, b, s, "(cn:caseExactMatch:=User 4)"), 1);
    assert_eq!(count(db, b, s, "(cn:caseExactMatch:=user 4)"), 0);
    assert_eq!(
        count(db, b, s, "(ou:dn:=staff)"),
        6,
        "the OU itself and the five users below it"
    );
    assert_eq!(count(db, b, s, "(&)"), 19);
    assert_eq!(count(db, b, s, "(|)"), 0);
    let r = db.read().unwrap();
    let ex = r
        .explain(&SearchRequest::new(
            dn(b),
            s,
            Filter::parse("(&(objectClass=user)(uid=user.3))").unwrap(),
        ))
        .unwrap();
    assert!(!ex.unindexed);
    assert!(ex.used.iter().any(|u| u.starts_with("eq(uid)")), "{ex}");
    assert_eq!(ex.candidates, 1, "{ex}");
    let before = db.unindexed_searches();
    let ex = r
        .explain(&SearchRequest::new(
            dn(b),
            s,
            Filter::parse("(ou=x)").unwrap(),
        ))
        .unwrap();
    assert!(ex.unindexed, "{ex}");
    r.search_count(&SearchRequest::new(
        dn(b),
        s,
        Filter::parse("(ou=x)").unwrap(),
    ))
    .unwrap();
    assert_eq!(db.unindexed_searches(), before + 1);
}

both_backends!(add_errors);
fn add_errors<B: Backend>(db: &Db<B>) {
    tree(db);
    let e = db
        .add(user("User 1", "ou=People,dc=example,dc=com", 99))
        .unwrap_err();
    assert!(matches!(e, DbError::EntryAlreadyExists(_)), "{e}");
    assert_eq!(e.ldap_result_code(), 68);
    let e = db
        .add(user("X", "ou=Missing,dc=example,dc=com", 1))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 32, "{e}");
    let e = db
        .add(user("X", "ou=People,dc=example,dc=com", 1).with("uid", &["user.1"]))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 19, "unique uid: {e}");
    let bad = Entry::new(dn("cn=Bad,dc=example,dc=com"))
        .with("cn", &["Bad"])
        .with("employeeNumber", &["12x"]);
    assert_eq!(db.add(bad).unwrap_err().ldap_result_code(), 21);
    let dup = Entry::new(dn("cn=Dup,dc=example,dc=com"))
        .with("cn", &["Dup"])
        .with("mail", &["a@x", "A@X"]);
    assert_eq!(db.add(dup).unwrap_err().ldap_result_code(), 20);
    let badname = Entry::new(dn("cn=N,dc=example,dc=com")).with("c n", &["x"]);
    assert_eq!(db.add(badname).unwrap_err().ldap_result_code(), 21);
    // The RDN value is added when missing.
    db.add(Entry::new(dn("cn=Implicit,dc=example,dc=com")).with("objectClass", &["top"]))
        .unwrap();
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(cn=implicit)"),
        1
    );
    // Nothing half-written: the failed adds left no trace.
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(objectClass=*)"),
        20
    );
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(modify_semantics);
fn modify_semantics<B: Backend>(db: &Db<B>) {
    tree(db);
    let u = dn("cn=User 1,ou=People,dc=example,dc=com");
    let m = |op, a: &str, v: &[&str]| Modification::new(op, a, v);
    db.modify(&u, &[m(ModifyOp::Add, "mail", &["second@example.com"])])
        .unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(mail=SECOND@example.com)"
        ),
        1
    );
    let e = db
        .modify(&u, &[m(ModifyOp::Add, "mail", &["Second@Example.com"])])
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 20, "{e}");
    let e = db
        .modify(&u, &[m(ModifyOp::Delete, "mail", &["nope@example.com"])])
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 16, "{e}");
    let e = db
        .modify(&u, &[m(ModifyOp::Delete, "description", &[])])
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 16, "{e}");
    let e = db
        .modify(&u, &[m(ModifyOp::Delete, "cn", &[])])
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 67, "{e}");
    let e = db
        .modify(
            &dn("cn=ghost,dc=example,dc=com"),
            &[m(ModifyOp::Replace, "sn", &["x"])],
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 32, "{e}");
    // A failed modification list changes nothing, even the parts before the error.
    let e = db
        .modify(
            &u,
            &[
                m(ModifyOp::Replace, "sn", &["Smith"]),
                m(ModifyOp::Delete, "mail", &["nope@x"]),
            ],
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 16);
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(sn=smith)"),
        0
    );
    // Replace, delete values, increment, permissive.
    db.modify(&u, &[m(ModifyOp::Replace, "mail", &["only@example.com"])])
        .unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(mail=second@example.com)"
        ),
        0
    );
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(mail=only@example.com)"
        ),
        1
    );
    db.modify(&u, &[m(ModifyOp::Increment, "employeeNumber", &["41"])])
        .unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(employeeNumber=42)"
        ),
        1
    );
    db.modify(&u, &[m(ModifyOp::Replace, "mail", &[])]).unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(&(cn=user 1)(mail=*))"
        ),
        0
    );
    db.modify(&u, &[m(ModifyOp::Replace, "mail", &[])]).unwrap();
    let mut w = db.write().unwrap();
    w.modify_permissive(
        &u,
        &[
            m(ModifyOp::Delete, "mail", &["x@y"]),
            m(ModifyOp::Add, "cn", &["user 1"]),
        ],
    )
    .unwrap();
    w.commit().unwrap();
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(delete_and_subtree_delete);
fn delete_and_subtree_delete<B: Backend>(db: &Db<B>) {
    tree(db);
    let e = db
        .delete(&dn("ou=Staff,ou=People,dc=example,dc=com"), false)
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 66);
    assert_eq!(
        db.delete(&dn("cn=User 0,ou=People,dc=example,dc=com"), false)
            .unwrap(),
        1
    );
    assert_eq!(
        db.delete(&dn("ou=People,dc=example,dc=com"), true).unwrap(),
        16
    );
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(objectClass=*)"),
        2
    );
    assert_eq!(
        db.delete(&dn("cn=x,dc=example,dc=com"), false)
            .unwrap_err()
            .ldap_result_code(),
        32
    );
    // The uid of a deleted entry is free again.
    db.add(user("User 3", "ou=Groups,dc=example,dc=com", 3))
        .unwrap();
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(rename_and_move);
fn rename_and_move<B: Backend>(db: &Db<B>) {
    tree(db);
    let staff = dn("ou=Staff,ou=People,dc=example,dc=com");
    // Move the Staff OU (with its users) below Groups, renaming it.
    db.rename(
        &staff,
        &Rdn::parse("ou=Team").unwrap(),
        true,
        Some(&dn("ou=Groups,dc=example,dc=com")),
    )
    .unwrap();
    assert_eq!(
        count(
            db,
            "ou=Team,ou=Groups,dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=user)"
        ),
        5
    );
    assert_eq!(
        count(
            db,
            "ou=People,dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=user)"
        ),
        10
    );
    assert_eq!(
        names(db, "dc=example,dc=com", Scope::Subtree, "(uid=user.12)"),
        vec!["cn=User 12,ou=Team,ou=Groups,dc=example,dc=com"]
    );
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(ou=staff)"),
        0,
        "old RDN value deleted"
    );
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(ou=team)"),
        1
    );
    // Rename keeping the old RDN value.
    let u = dn("cn=User 2,ou=People,dc=example,dc=com");
    db.rename(&u, &Rdn::parse("cn=Renamed").unwrap(), false, None)
        .unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(&(cn=renamed)(cn=user 2))"
        ),
        1
    );
    // Errors: target exists, moving below itself, missing parent, missing entry.
    let e = db
        .rename(
            &dn("cn=User 3,ou=People,dc=example,dc=com"),
            &Rdn::parse("cn=User 4").unwrap(),
            true,
            None,
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    let e = db
        .rename(
            &dn("ou=Groups,dc=example,dc=com"),
            &Rdn::parse("ou=G").unwrap(),
            true,
            Some(&dn("ou=Team,ou=Groups,dc=example,dc=com")),
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 53);
    let e = db
        .rename(&u, &Rdn::parse("cn=x").unwrap(), true, None)
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 32);
    let e = db
        .rename(
            &dn("cn=User 5,ou=People,dc=example,dc=com"),
            &Rdn::parse("cn=User 5").unwrap(),
            true,
            Some(&dn("ou=Nowhere,dc=example,dc=com")),
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 32);
    // Case-only rename of the same entry.
    db.rename(
        &dn("cn=User 5,ou=People,dc=example,dc=com"),
        &Rdn::parse("cn=USER 5").unwrap(),
        false,
        None,
    )
    .unwrap();
    assert_eq!(
        names(
            db,
            "ou=people,dc=example,dc=com",
            Scope::OneLevel,
            "(uid=user.5)"
        ),
        vec!["cn=USER 5,ou=People,dc=example,dc=com"]
    );
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(usn_and_nested_rollback);
fn usn_and_nested_rollback<B: Backend>(db: &Db<B>) {
    tree(db);
    let start = db.highest_committed_usn();
    assert!(start >= 15);
    let mut w = db.write().unwrap();
    w.add(user("A", "dc=example,dc=com", 100)).unwrap();
    let bad = w.add(user("B", "ou=Missing,dc=example,dc=com", 101));
    assert!(bad.is_err());
    w.add(user("C", "dc=example,dc=com", 102)).unwrap();
    // Not visible before commit, to readers or through the USN.
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::OneLevel,
            "(objectClass=user)"
        ),
        0
    );
    assert_eq!(db.highest_committed_usn(), start);
    let top = w.commit().unwrap();
    assert_eq!(db.highest_committed_usn(), top);
    assert!(top > start);
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::OneLevel,
            "(objectClass=user)"
        ),
        2
    );
    let r = db.read().unwrap();
    assert_eq!(r.usn().unwrap(), top);
    let a = r.entry(&dn("cn=A,dc=example,dc=com")).unwrap().unwrap();
    let c = r.entry(&dn("cn=C,dc=example,dc=com")).unwrap().unwrap();
    let usn = |e: &Entry| {
        String::from_utf8(e.get("uSNChanged").unwrap()[0].clone())
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(usn(&a) > start && usn(&c) > usn(&a) && usn(&c) <= top);
    // Changes since a USN come from a range scan of the ordered index.
    let f = format!("(uSNChanged>={})", start + 1);
    assert_eq!(count(db, "dc=example,dc=com", Scope::Subtree, &f), 2);
    let ex = r
        .explain(&SearchRequest::new(
            dn("dc=example,dc=com"),
            Scope::Subtree,
            Filter::parse(&f).unwrap(),
        ))
        .unwrap();
    assert!(
        ex.used.iter().any(|u| u.starts_with("ge(usnchanged)")),
        "{ex}"
    );
    drop(r);
    // A modify moves the entry's uSNChanged forward, and abort leaves no trace.
    db.modify(
        &dn("cn=A,dc=example,dc=com"),
        &[Modification::new(ModifyOp::Replace, "sn", &["x"])],
    )
    .unwrap();
    let mut w = db.write().unwrap();
    w.add(user("D", "dc=example,dc=com", 103)).unwrap();
    w.abort();
    assert_eq!(count(db, "dc=example,dc=com", Scope::OneLevel, "(cn=d)"), 0);
    let r = db.read().unwrap();
    let a2 = r.entry(&dn("cn=A,dc=example,dc=com")).unwrap().unwrap();
    assert!(usn(&a2) > top);
    // Explicit nested transactions for group commit.
    drop(r);
    let mut w = db.write().unwrap();
    w.begin_nested().unwrap();
    w.add(user("E", "dc=example,dc=com", 104)).unwrap();
    w.abort_nested().unwrap();
    w.begin_nested().unwrap();
    w.add(user("F", "dc=example,dc=com", 105)).unwrap();
    w.commit_nested().unwrap();
    w.commit().unwrap();
    assert_eq!(
        names(db, "dc=example,dc=com", Scope::OneLevel, "(|(cn=e)(cn=f))"),
        vec!["cn=F,dc=example,dc=com"]
    );
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(reindex_and_check_repair);
fn reindex_and_check_repair<B: Backend>(db: &Db<B>) {
    tree(db);
    let before = count(db, "dc=example,dc=com", Scope::Subtree, "(cn=user*)");
    let stats = db.reindex(None).unwrap();
    assert_eq!(stats.records, 19);
    assert!(db.check(false, None).unwrap().is_clean());
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(cn=user*)"),
        before
    );
    // Break things behind the database's back.
    {
        let mut w = db.kv().write().unwrap();
        let k = kauri_db::keys::value_key(
            db.read().unwrap().attr_id("uid").unwrap(),
            b"user.3",
            999,
            kauri_kv::MAX_KEY_LEN,
        );
        w.put(kauri_db::db::T_INDEX, &k, &[]).unwrap(); // stray key
        let first_tree = w
            .prefix(kauri_db::db::T_TREE, &[], kauri_kv::Direction::Forward)
            .unwrap()
            .next()
            .map(|kv| kv.unwrap().0.to_vec());
        w.delete(kauri_db::db::T_TREE, &first_tree.unwrap())
            .unwrap(); // unreachable entry
        w.commit().unwrap();
    }
    let report = db.check(false, None).unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| matches!(p, kauri_db::check::Problem::ExtraIndexKey { .. })),
        "{:?}",
        report.problems
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| matches!(p, kauri_db::check::Problem::MissingTreeKey { .. })),
        "{:?}",
        report.problems
    );
    let fixed = db.check(true, None).unwrap();
    assert!(fixed.fixed && fixed.is_clean(), "{:?}", fixed.problems);
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(objectClass=*)"),
        19
    );
}

#[test]
fn truncated_index_keys_still_answer_exactly() {
    let mut cfg = common::config();
    cfg.max_index_key_len = 24; // value room: 9 bytes
    cfg.index(
        "description",
        kauri_db::IndexFlags::EQUALITY
            | kauri_db::IndexFlags::SUBSTRING_INITIAL
            | kauri_db::IndexFlags::ORDERED,
    );
    let l = common::lmdb_with(cfg.clone());
    let m = common::mem_with(cfg);
    fn run<B: Backend>(db: &Db<B>) {
        db.add(Entry::new(dn("dc=x")).with("dc", &["x"])).unwrap();
        let long = "x".repeat(300);
        for (i, d) in [
            "a very long description one",
            "a very long description two",
            "short",
            "a very long",
        ]
        .iter()
        .enumerate()
        {
            db.add(
                Entry::new(dn(&format!("cn=e{i},dc=x")))
                    .with("description", &[d])
                    .with("uid", &[&format!("{long}{i}")]),
            )
            .unwrap();
        }
        // A DN longer than any key: the tree key is hashed.
        let long_rdn = format!("cn={}", "y".repeat(600));
        db.add(Entry::new(dn(&format!("{long_rdn},dc=x")))).unwrap();
        assert_eq!(
            count(
                db,
                "dc=x",
                Scope::Subtree,
                "(description=a very long description two)"
            ),
            1
        );
        assert_eq!(
            count(
                db,
                "dc=x",
                Scope::Subtree,
                "(description=a very long description*)"
            ),
            2
        );
        assert_eq!(
            count(
                db,
                "dc=x",
                Scope::Subtree,
                "(description>=a very long description one)"
            ),
            3
        );
        assert_eq!(
            count(
                db,
                "dc=x",
                Scope::Subtree,
                "(description<=a very long description one)"
            ),
            2
        );
        assert_eq!(
            count(db, "dc=x", Scope::Subtree, &format!("(uid={long}2)")),
            1
        );
        assert_eq!(
            count(db, &format!("{long_rdn},dc=x"), Scope::Base, "(cn=*)"),
            1
        );
        // Unique values sharing a truncated key are still distinct values.
        let e = db
            .add(Entry::new(dn("cn=dup,dc=x")).with("uid", &[&format!("{long}1")]))
            .unwrap_err();
        assert_eq!(e.ldap_result_code(), 19);
        assert!(db.check(false, None).unwrap().is_clean());
        db.reindex(None).unwrap();
        assert!(db.check(false, None).unwrap().is_clean());
    }
    run(&l.db);
    run(&m);
}

#[test]
fn reopen_keeps_everything_and_notices_index_changes() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || kauri_kv::lmdb::LmdbOptions {
        map_size: 1 << 20,
        ..Default::default()
    };
    {
        let db = Db::open_lmdb(dir.path(), common::config(), opts()).unwrap();
        tree(&db);
    }
    let mut cfg = common::config();
    cfg.index("sn", kauri_db::IndexFlags::EQUALITY);
    cfg.index("ou", kauri_db::IndexFlags::EQUALITY);
    let db = Db::open_lmdb(dir.path(), cfg, opts()).unwrap();
    assert_eq!(
        count(&db, "dc=example,dc=com", Scope::Subtree, "(objectClass=*)"),
        19
    );
    let r = db.read().unwrap();
    let ex = r
        .explain(&SearchRequest::new(
            dn("dc=example,dc=com"),
            Scope::Subtree,
            Filter::parse("(ou=staff)").unwrap(),
        ))
        .unwrap();
    assert!(!ex.unindexed, "the new index was built at open: {ex}");
    assert!(db.check(false, None).unwrap().is_clean());
    let mut seen = 0;
    r.search(
        &SearchRequest::new(
            dn("dc=example,dc=com"),
            Scope::Subtree,
            Filter::present("objectClass"),
        ),
        |_| {
            seen += 1;
            Ok(if seen == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        },
    )
    .unwrap();
    assert_eq!(seen, 3);
}

#[test]
fn size_limit_delivers_then_errors() {
    let db = common::mem_with(common::config());
    tree(&db);
    let r = db.read().unwrap();
    let mut req = SearchRequest::new(
        dn("dc=example,dc=com"),
        Scope::Subtree,
        Filter::present("objectClass"),
    );
    req.size_limit = 4;
    let mut got = 0;
    let e = r
        .search(&req, |_| {
            got += 1;
            Ok(ControlFlow::Continue(()))
        })
        .unwrap_err();
    assert!(matches!(e, DbError::SizeLimitExceeded));
    assert_eq!(got, 4);
}

#[test]
fn bulk_mode_writes_sorted_indexes_and_enforces_uniqueness() {
    let l = common::lmdb_with(common::config());
    let db = &l.db;
    let mut w = db.write().unwrap();
    w.defer_indexes();
    w.add_root(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
        .unwrap();
    for i in 0..500 {
        w.add(user(&format!("U{i}"), "dc=example,dc=com", i))
            .unwrap();
    }
    w.commit().unwrap();
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=user)"
        ),
        500
    );
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(employeeNumber>=490)"
        ),
        10
    );
    assert!(db.check(false, None).unwrap().is_clean());
    let mut w = db.write().unwrap();
    w.defer_indexes();
    w.add(user("Other", "dc=example,dc=com", 1).with("uid", &["u7"]))
        .unwrap();
    assert_eq!(w.commit().unwrap_err().ldap_result_code(), 19);
    assert_eq!(
        count(
            db,
            "dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=user)"
        ),
        500
    );
}

#[test]
fn naming_contexts_nest_without_hiding_each_other() {
    let db = common::mem_with(common::config());
    db.add_root(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
        .unwrap();
    db.add(user("A", "dc=example,dc=com", 1)).unwrap();
    // A shorter naming context added later does not hide the longer one.
    db.add_root(Entry::new(dn("dc=com")).with("dc", &["com"]))
        .unwrap();
    db.add(ou("Other", "dc=com")).unwrap();
    assert_eq!(
        names(&db, "dc=example,dc=com", Scope::Subtree, "(cn=a)"),
        vec!["cn=A,dc=example,dc=com"]
    );
    assert_eq!(count(&db, "dc=com", Scope::OneLevel, "(objectClass=*)"), 1);
    // The same DN cannot be created a second way.
    let e = db
        .add(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    // `:dn:` matching sees the components of the naming context's DN too.
    assert_eq!(
        count(&db, "dc=example,dc=com", Scope::Subtree, "(dc:dn:=example)"),
        2
    );
    assert!(db.check(false, None).unwrap().is_clean());
}

#[test]
fn a_naming_context_below_an_existing_entry_is_a_partition_of_its_own() {
    let db = common::mem_with(common::config());
    db.add_root(
        Entry::new(dn("dc=example,dc=com"))
            .with("objectClass", &["domain"])
            .with("dc", &["example"]),
    )
    .unwrap();
    db.add(ou("People", "dc=example,dc=com")).unwrap();
    let mut w = db.write().unwrap();
    let config = w
        .add_naming_context(
            Entry::new(dn("cn=Configuration,dc=example,dc=com"))
                .with("objectClass", &["container"])
                .with("cn", &["Configuration"]),
        )
        .unwrap();
    w.add_naming_context(
        Entry::new(dn("cn=Schema,cn=Configuration,dc=example,dc=com"))
            .with("objectClass", &["dMD"])
            .with("cn", &["Schema"]),
    )
    .unwrap();
    w.add(ou("Sites", "cn=Configuration,dc=example,dc=com"))
        .unwrap();
    w.commit().unwrap();
    let r = db.read().unwrap();
    assert_eq!(r.naming_contexts().unwrap().len(), 3);
    assert_eq!(
        r.lookup(&dn("cn=configuration,dc=example,dc=com")).unwrap(),
        Some(config)
    );
    drop(r);
    // The domain's subtree stops at the partition boundary; each partition is whole.
    assert_eq!(
        count(&db, "dc=example,dc=com", Scope::Subtree, "(objectClass=*)"),
        2
    );
    assert_eq!(
        count(&db, "dc=example,dc=com", Scope::OneLevel, "(objectClass=*)"),
        1
    );
    assert_eq!(
        names(
            &db,
            "cn=Configuration,dc=example,dc=com",
            Scope::Subtree,
            "(objectClass=*)"
        ),
        vec![
            "cn=Configuration,dc=example,dc=com",
            "ou=Sites,cn=Configuration,dc=example,dc=com"
        ]
    );
    // Neither way can create the same DN twice.
    let e = db
        .add(Entry::new(dn("cn=Configuration,dc=example,dc=com")).with("cn", &["Configuration"]))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    let mut w = db.write().unwrap();
    let e = w
        .add_naming_context(Entry::new(dn("ou=People,dc=example,dc=com")).with("ou", &["People"]))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    drop(w);
    let e = db
        .rename(
            &dn("ou=People,dc=example,dc=com"),
            &Rdn::parse("cn=Configuration").unwrap(),
            true,
            None,
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(naming_contexts_take_new_names);
fn naming_contexts_take_new_names<B: Backend>(db: &Db<B>) {
    tree(db);
    let mut w = db.write().unwrap();
    w.add_naming_context(
        Entry::new(dn("cn=Configuration,dc=example,dc=com"))
            .with("objectClass", &["container"])
            .with("cn", &["Configuration"]),
    )
    .unwrap();
    w.add(ou("Sites", "cn=Configuration,dc=example,dc=com"))
        .unwrap();
    w.commit().unwrap();
    let before = db.read().unwrap().usn().unwrap();

    let mut w = db.write().unwrap();
    w.rename_naming_context(&dn("dc=example,dc=com"), &dn("DC=lab,DC=example,DC=org"))
        .unwrap();
    w.rename_naming_context(
        &dn("cn=Configuration,dc=example,dc=com"),
        &dn("CN=Configuration,DC=lab,DC=example,DC=org"),
    )
    .unwrap();
    // Only naming contexts, and never onto another one.
    let e = w
        .rename_naming_context(
            &dn("ou=People,dc=lab,dc=example,dc=org"),
            &dn("ou=Folk,dc=lab,dc=example,dc=org"),
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 53);
    let e = w
        .rename_naming_context(
            &dn("dc=lab,dc=example,dc=org"),
            &dn("cn=configuration,dc=lab,dc=example,dc=org"),
        )
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 68);
    w.commit().unwrap();

    let r = db.read().unwrap();
    assert!(r.usn().unwrap() > before);
    assert_eq!(r.lookup(&dn("dc=example,dc=com")).unwrap(), None);
    let head = r.entry(&dn("dc=lab,dc=example,dc=org")).unwrap().unwrap();
    assert_eq!(head.dn.to_string(), "DC=lab,DC=example,DC=org");
    assert_eq!(head.get("dc").unwrap(), &[b"lab".to_vec()]);
    let staff = "cn=User 12,ou=Staff,ou=People,dc=lab,dc=example,dc=org";
    assert_eq!(
        r.entry(&dn(staff)).unwrap().unwrap().dn.to_string(),
        "cn=User 12,ou=Staff,ou=People,DC=lab,DC=example,DC=org"
    );
    drop(r);
    assert_eq!(
        count(db, "dc=lab,dc=example,dc=org", Scope::Subtree, "(dc=lab)"),
        1
    );
    assert_eq!(
        count(
            db,
            "dc=lab,dc=example,dc=org",
            Scope::Subtree,
            "(dc=example)"
        ),
        0
    );
    assert_eq!(
        names(
            db,
            "cn=configuration,dc=lab,dc=example,dc=org",
            Scope::OneLevel,
            "(objectClass=*)"
        ),
        vec!["ou=Sites,CN=Configuration,DC=lab,DC=example,DC=org"]
    );
    assert!(db.check(false, None).unwrap().is_clean());
}

both_backends!(a_retired_invocation_is_kept_with_its_usn);
fn a_retired_invocation_is_kept_with_its_usn<B: Backend>(db: &Db<B>) {
    tree(db);
    let old = db.invocation_id();
    let usn = db.read().unwrap().usn().unwrap();
    assert!(db.read().unwrap().retired_invocations().unwrap().is_empty());
    let (was, new) = Db::<B>::retire_invocation(db.kv()).unwrap();
    assert_eq!(was, old);
    assert_ne!(new, old);
    let (_, newer) = Db::<B>::retire_invocation(db.kv()).unwrap();
    assert_eq!(
        db.read().unwrap().retired_invocations().unwrap(),
        vec![(old, usn), (new, usn)]
    );
    assert_ne!(newer, new);
}

#[test]
fn bulk_mode_keeps_indexes_exact_and_refuses_commit_after_failure() {
    let l = common::lmdb_with(common::config());
    let db = &l.db;
    let mut w = db.write().unwrap();
    w.defer_indexes();
    w.add_root(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
        .unwrap();
    for i in 0..20 {
        w.add(user(&format!("U{i}"), "dc=example,dc=com", i))
            .unwrap();
    }
    // Changes to entries added in bulk mode leave no stale keys behind.
    w.modify(
        &dn("cn=U3,dc=example,dc=com"),
        &[Modification::new(ModifyOp::Replace, "uid", &["renamed3"])],
    )
    .unwrap();
    w.delete(&dn("cn=U4,dc=example,dc=com"), false).unwrap();
    w.commit().unwrap();
    assert!(db.check(false, None).unwrap().is_clean());
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(uid=u3)"),
        0
    );
    assert_eq!(
        count(db, "dc=example,dc=com", Scope::Subtree, "(uid=renamed3)"),
        1
    );
    db.add(user("U3b", "dc=example,dc=com", 3).with("uid", &["u3"]))
        .unwrap();
    // After a failed bulk operation nothing more is accepted, and nothing is committed.
    let mut w = db.write().unwrap();
    w.defer_indexes();
    w.add(user("V1", "dc=example,dc=com", 1)).unwrap();
    assert!(w
        .add(user("V2", "ou=missing,dc=example,dc=com", 2))
        .is_err());
    assert!(w.add(user("V3", "dc=example,dc=com", 3)).is_err());
    assert!(w.commit().is_err());
    assert_eq!(count(db, "dc=example,dc=com", Scope::Subtree, "(cn=v*)"), 0);
}

#[test]
fn changed_syntaxes_renormalize_stored_values() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || kauri_kv::lmdb::LmdbOptions {
        map_size: 1 << 20,
        ..Default::default()
    };
    {
        let mut cfg = common::config();
        cfg.schema.set("code", kauri_db::Syntax::CaseExactString);
        cfg.index("code", kauri_db::IndexFlags::EQUALITY);
        let db = Db::open_lmdb(dir.path(), cfg, opts()).unwrap();
        db.add_root(Entry::new(dn("dc=x")).with("dc", &["x"]))
            .unwrap();
        db.add(Entry::new(dn("cn=a,dc=x")).with("code", &["AbC"]))
            .unwrap();
        assert_eq!(count(&db, "dc=x", Scope::Subtree, "(code=abc)"), 0);
    }
    let mut cfg = common::config();
    cfg.schema.set("code", kauri_db::Syntax::DirectoryString);
    cfg.index("code", kauri_db::IndexFlags::EQUALITY);
    let db = Db::open_lmdb(dir.path(), cfg, opts()).unwrap();
    assert_eq!(count(&db, "dc=x", Scope::Subtree, "(code=abc)"), 1);
    let r = db.read().unwrap();
    let ex = r
        .explain(&SearchRequest::new(
            dn("dc=x"),
            Scope::Subtree,
            Filter::parse("(code=abc)").unwrap(),
        ))
        .unwrap();
    assert!(ex.used.iter().any(|u| u.starts_with("eq(code)")), "{ex}");
    assert!(db.check(false, None).unwrap().is_clean());
}

#[test]
fn check_and_reindex_stay_exact_when_the_sort_budget_is_small() {
    let mut cfg = common::config();
    cfg.sort_budget = 2048;
    let db = common::mem_with(cfg);
    tree(&db);
    let report = db.check(false, None).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert!(report.index_keys > 100);
    let stats = db.reindex(None).unwrap();
    assert!(stats.spills > 0);
    assert!(db.check(false, None).unwrap().is_clean());
    {
        let mut w = db.kv().write().unwrap();
        let k = kauri_db::keys::presence_key(db.read().unwrap().attr_id("mail").unwrap(), 4242);
        w.put(kauri_db::db::T_INDEX, &k, &[]).unwrap();
        w.commit().unwrap();
    }
    let report = db.check(false, None).unwrap();
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
}

#[test]
fn chunked_bulk_load_indexes_everything_and_recovers_when_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || kauri_kv::lmdb::LmdbOptions {
        map_size: 1 << 20,
        ..Default::default()
    };
    {
        let db = Db::open_lmdb(dir.path(), common::config(), opts()).unwrap();
        let mut l = db.bulk_loader(7).unwrap();
        l.add_root(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
            .unwrap();
        for i in 0..50 {
            l.add(user(&format!("U{i}"), "dc=example,dc=com", i))
                .unwrap();
        }
        let stats = l.finish().unwrap();
        assert_eq!(stats.entries, 51);
        assert!(stats.commits >= 8);
        assert!(db.check(false, None).unwrap().is_clean());
        assert_eq!(
            count(&db, "dc=example,dc=com", Scope::Subtree, "(uid=u42)"),
            1
        );
        // A load that fails keeps its committed chunks, unindexed until the next open.
        let mut l = db.bulk_loader(5).unwrap();
        for i in 0..12 {
            l.add(user(&format!("W{i}"), "dc=example,dc=com", i))
                .unwrap();
        }
        assert!(l.add(user("X", "ou=missing,dc=example,dc=com", 1)).is_err());
        assert!(l.finish().is_err());
        assert!(!db.check(false, None).unwrap().is_clean());
    }
    let db = Db::open_lmdb(dir.path(), common::config(), opts()).unwrap();
    assert!(db.check(false, None).unwrap().is_clean());
    assert_eq!(
        count(&db, "dc=example,dc=com", Scope::Subtree, "(cn=w*)"),
        10
    );
}

#[test]
fn filters_built_too_deep_are_refused() {
    let db = common::mem_with(common::config());
    tree(&db);
    let mut f = Filter::present("cn");
    for _ in 0..150 {
        f = Filter::not(f);
    }
    let r = db.read().unwrap();
    let e = r
        .search_count(&SearchRequest::new(
            dn("dc=example,dc=com"),
            Scope::Subtree,
            f,
        ))
        .unwrap_err();
    assert_eq!(e.ldap_result_code(), 87);
}

#[test]
fn cursors_continue_across_snapshots_and_skip_deleted_entries() {
    let l = common::lmdb_with(common::config());
    let db = &l.db;
    tree(db);
    let req = SearchRequest::new(
        dn("dc=example,dc=com"),
        Scope::Subtree,
        Filter::parse("(objectClass=user)").unwrap(),
    );
    let mut cursor = db.read().unwrap().open_cursor(&req).unwrap();
    let mut seen = Vec::new();
    // First page of 4 in one snapshot.
    let more = db
        .read()
        .unwrap()
        .advance(&mut cursor, usize::MAX, |hit| {
            seen.push(hit.id);
            Ok(if seen.len() == 4 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        })
        .unwrap();
    assert!(more);
    // A write between pages: one later entry goes away.
    db.delete(
        &dn("cn=User 12,ou=Staff,ou=People,dc=example,dc=com"),
        false,
    )
    .unwrap();
    let r = db.read().unwrap();
    while r
        .advance(&mut cursor, 3, |hit| {
            seen.push(hit.id);
            Ok(ControlFlow::Continue(()))
        })
        .unwrap()
    {}
    assert_eq!(seen.len(), 14);
    let mut sorted = seen.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 14, "no entry delivered twice");
    assert_eq!(cursor.returned(), 14);
}

both_backends!(configuration_replaced_while_open);
fn configuration_replaced_while_open<B: Backend>(db: &Db<B>) {
    tree(db);
    let base = "dc=example,dc=com";
    db.modify(
        &dn("cn=User 1,ou=People,dc=example,dc=com"),
        &[Modification::new(ModifyOp::Add, "roomNumber", &["B12"])],
    )
    .unwrap();
    let req = SearchRequest::new(
        dn(base),
        Scope::Subtree,
        Filter::parse("(roomNumber=b12)").unwrap(),
    );
    assert!(db.read().unwrap().explain(&req).unwrap().unindexed);
    // An index on an attribute that holds values: the keys are built at once.
    let mut cfg = (*db.config()).clone();
    cfg.index("roomNumber", kauri_db::IndexFlags::EQUALITY);
    // A new attribute with its own syntax: nothing to rebuild.
    cfg.schema.set("floor", kauri_db::Syntax::Integer);
    db.replace_config(cfg).unwrap();
    let plan = db.read().unwrap().explain(&req).unwrap();
    assert!(!plan.unindexed, "{plan}");
    assert_eq!(count(db, base, Scope::Subtree, "(roomNumber=b12)"), 1);
    db.modify(
        &dn("cn=User 2,ou=People,dc=example,dc=com"),
        &[Modification::new(ModifyOp::Add, "floor", &["10"])],
    )
    .unwrap();
    assert_eq!(count(db, base, Scope::Subtree, "(floor>=9)"), 1);
    assert!(db.check(false, None).unwrap().is_clean());
}

/// An entry holds at most `max_entry_values` values (links not counted): adds and modifies
/// past it are refused with adminLimitExceeded and change nothing, a change that shrinks an
/// entry is always allowed, and many values are added, found and deleted at once in time
/// linear in their number (duplicates caught by normalized form).
#[test]
fn values_per_entry_are_limited_and_handled_in_bulk() {
    let mut cfg = common::config();
    cfg.max_entry_values = 3_000;
    let db = common::mem_with(cfg);
    db.add_root(Entry::new(dn("dc=com")).with("objectClass", &["top", "domain"]))
        .unwrap();
    let many = |n: usize, prefix: &str| -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{prefix}-{i}").into_bytes())
            .collect()
    };
    let mut e = Entry::new(dn("cn=Many,dc=com")).with("objectClass", &["top", "person"]);
    e.push("description", many(2_990, "Value"));
    db.add(e).unwrap();
    // The same value twice in another case is a duplicate.
    let mut twice = Entry::new(dn("cn=Twice,dc=com")).with("objectClass", &["top", "person"]);
    let mut dup = many(100, "v");
    dup.push(b"V-42".to_vec());
    twice.push("description", dup);
    assert!(matches!(
        db.add(twice),
        Err(DbError::AttributeOrValueExists(_))
    ));
    let mut over = Entry::new(dn("cn=Over,dc=com")).with("objectClass", &["top", "person"]);
    over.push("description", many(3_001, "v"));
    assert!(matches!(db.add(over), Err(DbError::AdminLimitExceeded(_))));
    let target = dn("cn=Many,dc=com");
    let add = |n: usize, prefix: &str| Modification {
        op: ModifyOp::Add,
        attr: "description".into(),
        values: many(n, prefix),
    };
    assert!(matches!(
        db.modify(&target, &[add(20, "more")]),
        Err(DbError::AdminLimitExceeded(_))
    ));
    // A value already there (in another case) is refused; permissive modify skips it.
    assert!(matches!(
        db.modify(&target, &[add(1, "VALUE")]),
        Err(DbError::AttributeOrValueExists(_))
    ));
    db.modify(&target, &[add(5, "more")]).unwrap();
    let count = |db: &kauri_db::Db<kauri_kv::mem::MemBackend>| {
        db.read()
            .unwrap()
            .entry(&target)
            .unwrap()
            .unwrap()
            .get("description")
            .map_or(0, |v| v.len())
    };
    assert_eq!(count(&db), 2_995);
    // Deleting 2,000 values at once; one absent value spoils the whole change.
    let mut gone = many(2_000, "value");
    gone.push(b"absent".to_vec());
    let del = |values: Vec<Vec<u8>>| Modification {
        op: ModifyOp::Delete,
        attr: "description".into(),
        values,
    };
    assert!(matches!(
        db.modify(&target, &[del(gone.clone())]),
        Err(DbError::NoSuchAttribute(_))
    ));
    assert_eq!(count(&db), 2_995);
    gone.pop();
    db.modify(&target, &[del(gone)]).unwrap();
    assert_eq!(count(&db), 995);
    let report = db.check(false, None).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}
