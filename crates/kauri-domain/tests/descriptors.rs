//! Every object's security descriptor: computed when the object is created (owner,
//! group, class default, parent's inheritable ACEs), stored once per distinct value,
//! rewritten below an object whose descriptor changes or that moves (and only where the
//! result differs), written with the SD flags control, and given to every object of a
//! database made before descriptors existed.

mod common;

use common::provisioned;

use kauri_db::{Dn, Entry, Modification, ModifyOp};
use kauri_domain::directory::{view::View, Account, Caller, Change, Directory, Request};
use kauri_domain::security::SecurityDescriptor;
use kauri_domain::sid::Sid;
use kauri_kv::mem::MemBackend;

const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
const SID: &str = "S-1-5-21-1-2-3";

fn dn(s: &str) -> Dn {
    Dn::parse(s).unwrap()
}

fn apply(dir: &Directory<MemBackend>, caller: Caller, change: Change) -> Result<(), String> {
    let mut w = dir.db().write().unwrap();
    let r = dir.apply(
        &mut w,
        &Request {
            caller,
            encrypted: true,
            change,
        },
    );
    w.commit().unwrap();
    dir.after_commit().unwrap();
    r.map_err(|e| e.to_string())
}

fn sd_of(dir: &Directory<MemBackend>, d: &str) -> SecurityDescriptor {
    let r = dir.db().read().unwrap();
    let id = r.id_of(&dn(d)).unwrap().unwrap();
    let bytes = r.values(id, "nTSecurityDescriptor").unwrap();
    SecurityDescriptor::from_bytes(&bytes[0]).unwrap()
}

fn sddl_of(dir: &Directory<MemBackend>, d: &str) -> String {
    sd_of(dir, d).to_sddl(&Sid::parse(SID).unwrap()).unwrap()
}

fn sd_id_of(dir: &Directory<MemBackend>, d: &str) -> u64 {
    let r = dir.db().read().unwrap();
    let id = r.id_of(&dn(d)).unwrap().unwrap();
    r.descriptor_id_of(id).unwrap().unwrap()
}

fn ou(name: &str, parent: &str) -> Entry {
    Entry::new(dn(&format!("OU={name},{parent}"))).with("objectClass", &["organizationalUnit"])
}

fn user(name: &str, parent: &str) -> Entry {
    Entry::new(dn(&format!("CN={name},{parent}")))
        .with("objectClass", &["user"])
        .with("sAMAccountName", &[name])
}

fn set_sd(dir: &Directory<MemBackend>, d: &str, sddl: &str, flags: Option<u32>) {
    let sd = SecurityDescriptor::from_sddl(sddl, &Sid::parse(SID).unwrap()).unwrap();
    apply(
        dir,
        Caller::System,
        Change::Modify {
            dn: dn(d),
            mods: vec![Modification {
                op: ModifyOp::Replace,
                attr: "nTSecurityDescriptor".into(),
                values: vec![sd.to_bytes().unwrap()],
            }],
            permissive: false,
            sd_flags: flags,
        },
    )
    .unwrap();
}

#[test]
fn new_objects_get_their_class_default_and_parent_aces() {
    let dir = provisioned();
    let users = format!("CN=Users,{DOMAIN}");
    // Every provisioned object has a descriptor; users share one.
    let admin = sddl_of(&dir, &format!("CN=Administrator,{users}"));
    assert!(admin.starts_with("O:DAG:DAD:AI"), "{admin}");
    // The user class default grants SELF its phone and address (RPWP on Personal-Information).
    assert!(
        admin.contains("(OA;;RPWP;77b5b886-944a-11d1-aebd-0000f80367c1;;PS)"),
        "{admin}"
    );
    // The domain head's inheritable ACEs arrive marked inherited.
    assert!(admin.contains("(A;CIID;LC;;;RU)"), "{admin}");

    // An ordinary account that creates an object owns it, with its primary group.
    apply(&dir, Caller::System, Change::Add(ou("Staff", DOMAIN))).unwrap();
    let staff = format!("OU=Staff,{DOMAIN}");
    let r = dir.db().read().unwrap();
    let admin_id = r
        .id_of(&dn(&format!("CN=Administrator,{users}")))
        .unwrap()
        .unwrap();
    drop(r);
    let user_sid = Sid::parse(&format!("{SID}-1105")).unwrap();
    let creator = Caller::Account(Account {
        id: admin_id,
        dn: format!("CN=Administrator,{users}"),
        sid: Some(user_sid.clone()),
        // Account Operators may create users in an OU (its class default says so).
        groups: vec![
            Sid::parse(&format!("{SID}-513")).unwrap(),
            Sid::parse("S-1-5-32-548").unwrap(),
        ],
        admin: false,
    });
    apply(&dir, creator, Change::Add(user("alice", &staff))).unwrap();
    let alice = sd_of(&dir, &format!("CN=alice,{staff}"));
    assert_eq!(alice.owner, Some(user_sid));
    assert_eq!(
        alice.group,
        Some(Sid::parse(&format!("{SID}-513")).unwrap())
    );
    // Two users created alike by the server share one stored descriptor.
    apply(&dir, Caller::System, Change::Add(user("bob", &staff))).unwrap();
    apply(&dir, Caller::System, Change::Add(user("carol", &staff))).unwrap();
    assert_eq!(
        sd_id_of(&dir, &format!("CN=bob,{staff}")),
        sd_id_of(&dir, &format!("CN=carol,{staff}"))
    );
}

#[test]
fn a_changed_dacl_reaches_the_subtree_and_a_move_reinherits() {
    let dir = provisioned();
    apply(&dir, Caller::System, Change::Add(ou("Sales", DOMAIN))).unwrap();
    apply(&dir, Caller::System, Change::Add(ou("Other", DOMAIN))).unwrap();
    let sales = format!("OU=Sales,{DOMAIN}");
    apply(&dir, Caller::System, Change::Add(ou("East", &sales))).unwrap();
    let east = format!("OU=East,{sales}");
    for n in ["u1", "u2"] {
        apply(&dir, Caller::System, Change::Add(user(n, &east))).unwrap();
    }
    let before_owner = sd_of(&dir, &sales).owner;
    // A helpdesk grant on Sales: reset passwords of users below (inherit to users only).
    let grant = "(OA;CI;CR;00299570-246d-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;S-1-5-21-1-2-3-2000)";
    let current = sddl_of(&dir, &sales);
    let dacl_at = current.find("D:").unwrap();
    let sacl_at = current.find("S:").unwrap_or(current.len());
    let dacl = &current[dacl_at..sacl_at];
    let explicit: String = dacl
        .split_inclusive(')')
        .filter(|a| !a.contains("ID;") && !a.contains(";ID"))
        .collect();
    // Only the DACL is written (SD flags 4): owner and group stay.
    set_sd(&dir, &sales, &format!("{explicit}{grant}"), Some(4));
    let now = sd_of(&dir, &sales);
    assert_eq!(now.owner, before_owner);
    let u1 = sddl_of(&dir, &format!("CN=u1,{east}"));
    assert!(
        u1.contains("(OA;CIID;CR;00299570-246d-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;S-1-5-21-1-2-3-2000)"),
        "{u1}"
    );
    let east_sd = sddl_of(&dir, &east);
    // The OU itself gets the ACE only to pass on.
    assert!(east_sd.contains("(OA;CIIOID;CR;00299570"), "{east_sd}");
    // Moving a user out of Sales drops the inherited grant.
    apply(
        &dir,
        Caller::System,
        Change::Rename {
            dn: dn(&format!("CN=u2,{east}")),
            new_rdn: kauri_db::Rdn::parse("CN=u2").unwrap(),
            delete_old_rdn: true,
            new_parent: Some(dn(&format!("OU=Other,{DOMAIN}"))),
        },
    )
    .unwrap();
    let u2 = sddl_of(&dir, &format!("CN=u2,OU=Other,{DOMAIN}"));
    assert!(!u2.contains("00299570"), "{u2}");
    // An unchanged subtree keeps its record: writing the same DACL again changes nothing
    // below.
    let r = dir.db().read().unwrap();
    let usn_before = r
        .int(
            r.id_of(&dn(&format!("CN=u1,{east}"))).unwrap().unwrap(),
            "uSNChanged",
        )
        .unwrap();
    drop(r);
    set_sd(&dir, &sales, &format!("{explicit}{grant}"), Some(4));
    let r = dir.db().read().unwrap();
    let usn_after = r
        .int(
            r.id_of(&dn(&format!("CN=u1,{east}"))).unwrap().unwrap(),
            "uSNChanged",
        )
        .unwrap();
    assert_eq!(usn_before, usn_after);
}

#[test]
fn a_database_without_descriptors_gets_them_on_first_start() {
    let dir = provisioned();
    let admin_dn = format!("CN=Administrator,CN=Users,{DOMAIN}");
    let before = sddl_of(&dir, &admin_dn);
    // Take every descriptor away, as a database made before descriptors holds none.
    let mut w = dir.db().write().unwrap();
    let mut stack: Vec<u64> = w
        .naming_contexts()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut all = 0;
    while let Some(id) = stack.pop() {
        w.modify_by_id(
            id,
            &[Modification {
                op: ModifyOp::Delete,
                attr: "nTSecurityDescriptor".into(),
                values: Vec::new(),
            }],
        )
        .unwrap();
        all += 1;
        stack.extend(w.children(id).unwrap());
    }
    w.commit().unwrap();
    let mut w = dir.db().write().unwrap();
    let given = dir.ensure_descriptors(&mut w, None).unwrap();
    w.commit().unwrap();
    assert_eq!(given, all);
    assert_eq!(sddl_of(&dir, &admin_dn), before);
    // A second start finds nothing to do.
    let mut w = dir.db().write().unwrap();
    assert_eq!(dir.ensure_descriptors(&mut w, None).unwrap(), 0);
    w.abort();
}
