//! A bulk load's validation (`Directory::bulk_add`): every entry checked and completed as
//! an LDAP add is, each seeing the entries before it, then stored by the database's bulk
//! loader into a domain that passes both consistency checks.

mod common;

use common::{provisioned, DOMAIN};

use kauri_db::{Dn, Entry};
use kauri_domain::directory::{Caller, Change, DirError, Request};
use kauri_domain::sid::Sid;

fn ou(name: &str) -> Entry {
    Entry::new(Dn::parse(&format!("OU={name},{DOMAIN}")).unwrap())
        .with("objectClass", &["organizationalUnit"])
}

fn user(cn: &str, parent: &str, sam: &str) -> Entry {
    Entry::new(Dn::parse(&format!("CN={cn},{parent}")).unwrap())
        .with("objectClass", &["user"])
        .with("sAMAccountName", &[sam])
        .with("userPrincipalName", &[&format!("{sam}@samdom.example.com")])
}

fn code(r: &Result<kauri_db::bulk::Placed, DirError>) -> u32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.ldap_result_code(),
    }
}

#[test]
fn a_bulk_load_validates_as_adds_do() {
    let dir = provisioned();
    let admin = Caller::Account(dir.local_administrator().unwrap());
    let staff = format!("OU=Staff,{DOMAIN}");
    let mut bulk = dir.bulk_add(admin.clone(), 10).unwrap();
    let group = Entry::new(Dn::parse(&format!("CN=Team,{staff}")).unwrap())
        .with("objectClass", &["group"])
        .with("sAMAccountName", &["team"])
        .with(
            "member",
            &[
                &format!("CN=Ann,{staff}"),
                &format!("CN=Bob,{staff}"),
                &format!("CN=Administrator,CN=Users,{DOMAIN}"),
            ],
        );
    let results = bulk
        .add_batch(vec![
            ou("Staff"),
            user("Ann", &staff, "ann"),
            // The manager was validated just before.
            user("Bob", &staff, "bob").with("manager", &[&format!("CN=Ann,{staff}")]),
            // Taken by an entry of this load, or by one stored before it.
            user("Ann2", &staff, "ANN"),
            user("Admin2", &staff, "administrator"),
            // A name this load made already.
            user("Ann", &staff, "ann3"),
            // Below nothing.
            user("Cid", &format!("OU=Nowhere,{DOMAIN}"), "cid"),
            // Not in the schema.
            user("Dee", &staff, "dee").with("noSuchThing", &["x"]),
            group,
        ])
        .unwrap();
    let codes: Vec<u32> = results.iter().map(code).collect();
    assert_eq!(codes, vec![0, 0, 0, 68, 68, 68, 32, 16, 0]);
    assert_eq!(bulk.rids_left(), 5);

    // Stored in order by the bulk loader, the domain is whole.
    let mut loader = dir.db().bulk_loader(2).unwrap();
    for p in results.into_iter().flatten() {
        loader.add_placed(p).unwrap();
    }
    loader.finish().unwrap();
    assert!(dir.db().check(false, None).unwrap().is_clean());
    let check = dir.check_domain().unwrap();
    assert!(check.problems.is_empty(), "{:?}", check.problems);

    // What comes after the load sees it: the names are taken, the RIDs used.
    let mut w = dir.db().write().unwrap();
    let taken = dir.apply(
        &mut w,
        &Request {
            caller: admin.clone(),
            encrypted: true,
            change: Change::Add(user("Eve", &staff, "bob")),
        },
    );
    assert!(matches!(taken, Err(DirError::EntryAlreadyExists(_))));
    dir.apply(
        &mut w,
        &Request {
            caller: admin,
            encrypted: true,
            change: Change::Add(user("Eve", &staff, "eve")),
        },
    )
    .unwrap();
    w.commit().unwrap();
    let r = dir.db().read().unwrap();
    let sid_of = |cn: &str| {
        let id = r
            .lookup(&Dn::parse(&format!("CN={cn},{staff}")).unwrap())
            .unwrap()
            .unwrap();
        use kauri_domain::directory::view::View;
        let raw = r.values(id, "objectSid").unwrap().remove(0);
        Sid::from_bytes(&raw).unwrap().rid().unwrap()
    };
    let (ann, bob, team, eve) = (sid_of("Ann"), sid_of("Bob"), sid_of("Team"), sid_of("Eve"));
    assert!(ann < bob && bob < team, "{ann} {bob} {team}");
    assert!(eve > team, "{eve} after {team}");
}
