//! Entries placed by a bulk load (parent and link targets given as ids): the same records,
//! hierarchy, links and indexes as ordinary adds, a name taken twice refused when the
//! chunk commits, and ids checked.

mod common;

use common::{dn, ou, user};
use kauri_db::bulk::{BulkLoader, Placed};
use kauri_db::{Db, DbError, Entry, Filter, Scope, SearchRequest};
use kauri_kv::lmdb::LmdbBackend;

fn placed(entry: Entry, parent: u64, links: Vec<(&str, Vec<u64>)>, id: u64) -> Placed {
    Placed {
        entry,
        parent,
        links: links
            .into_iter()
            .map(|(a, ids)| (a.to_string(), ids))
            .collect(),
        id,
    }
}

/// A database holding `dc=example,dc=com`: the database, the root's id and the next id.
fn rooted() -> (common::Lmdb, u64, u64) {
    let t = common::lmdb_with(common::config());
    t.db.add_root(Entry::new(dn("dc=example,dc=com")).with("dc", &["example"]))
        .unwrap();
    let r = t.db.read().unwrap();
    let root = r.lookup(&dn("dc=example,dc=com")).unwrap().unwrap();
    let first = r.next_record_id().unwrap();
    drop(r);
    (t, root, first)
}

/// Places ou=People (id `first`), four users U0–U3 in it (each with `links(i)`) and the
/// group cn=G with `members`, in that order.
fn people(
    l: &mut BulkLoader<'_, LmdbBackend>,
    root: u64,
    first: u64,
    links: impl Fn(u64) -> Vec<(&'static str, Vec<u64>)>,
    members: Vec<u64>,
) {
    l.add_placed(placed(
        ou("People", "dc=example,dc=com"),
        root,
        vec![],
        first,
    ))
    .unwrap();
    for i in 0..4u64 {
        let e = user(&format!("U{i}"), "ou=People,dc=example,dc=com", i as i64);
        l.add_placed(placed(e, first, links(i), first + 1 + i))
            .unwrap();
    }
    let group = Entry::new(dn("cn=G,dc=example,dc=com")).with("cn", &["G"]);
    l.add_placed(placed(group, root, vec![("member", members)], first + 5))
        .unwrap();
}

fn found(db: &Db<kauri_kv::lmdb::LmdbBackend>, filter: &str) -> Vec<String> {
    let r = db.read().unwrap();
    let mut out: Vec<String> = r
        .search_entries(&SearchRequest::new(
            dn("dc=example,dc=com"),
            Scope::Subtree,
            Filter::parse(filter).unwrap(),
        ))
        .unwrap()
        .into_iter()
        .map(|e| e.dn.to_string().to_lowercase())
        .collect();
    out.sort();
    out
}

#[test]
fn placed_entries_are_whole_entries() {
    let (t, root, first) = rooted();
    let db = &t.db;
    let mut l = db.bulk_loader(2).unwrap();
    people(
        &mut l,
        root,
        first,
        |i| {
            if i > 0 {
                vec![("seeAlso", vec![first + 1])]
            } else {
                vec![]
            }
        },
        vec![first + 3, first + 1, first + 2],
    );
    // The next id is counted on.
    let wrong = user("Late", "ou=People,dc=example,dc=com", 9);
    let stats = {
        let mut l2 = l;
        let e = l2.add_placed(placed(wrong, first, vec![], first + 99));
        assert!(matches!(e, Err(DbError::UnwillingToPerform(_))), "{e:?}");
        assert!(l2.failed());
        l2.finish()
    };
    assert!(stats.is_err());

    // The same again, without the mistake: everything is where ordinary adds put it.
    let (t, root, first) = rooted();
    let db = &t.db;
    let mut l = db.bulk_loader(2).unwrap();
    people(&mut l, root, first, |_| vec![], vec![first + 3, first + 1]);
    l.finish().unwrap();
    assert!(db.check(false, None).unwrap().is_clean());
    assert_eq!(
        found(db, "(uid=u2)"),
        vec!["cn=u2,ou=people,dc=example,dc=com"]
    );
    assert_eq!(
        found(db, "(memberOf=cn=G,dc=example,dc=com)"),
        vec![
            "cn=u0,ou=people,dc=example,dc=com",
            "cn=u2,ou=people,dc=example,dc=com"
        ]
    );
    assert_eq!(found(db, "(member=*)"), vec!["cn=g,dc=example,dc=com"]);
    let r = db.read().unwrap();
    assert!(r
        .lookup(&dn("cn=U3,ou=People,dc=example,dc=com"))
        .unwrap()
        .is_some());
}

#[test]
fn a_name_placed_twice_is_refused() {
    let (t, root, first) = rooted();
    let db = &t.db;
    let mut l = db.bulk_loader(10).unwrap();
    for i in 0..2 {
        let e = user("Same", "dc=example,dc=com", i);
        l.add_placed(placed(e, root, vec![], first + i as u64))
            .unwrap();
    }
    assert!(matches!(l.finish(), Err(DbError::EntryAlreadyExists(_))));
    // A name already stored is refused too.
    db.add(user("Old", "dc=example,dc=com", 7)).unwrap();
    let next = db.read().unwrap().next_record_id().unwrap();
    let mut l = db.bulk_loader(10).unwrap();
    l.add_placed(placed(
        user("Old", "dc=example,dc=com", 8),
        root,
        vec![],
        next,
    ))
    .unwrap();
    assert!(matches!(l.finish(), Err(DbError::EntryAlreadyExists(_))));
}
