//! The descriptor attribute's values are stored once and referred to by id: records that
//! share a value share one stored copy, readers get the value back, and values no record
//! names any longer are swept.

mod common;

use common::*;
use kauri_db::{Modification, ModifyOp, Syntax};

fn config() -> kauri_db::DbConfig {
    let mut cfg = common::config();
    cfg.schema.set("sd", Syntax::OctetString);
    cfg.descriptor_attribute = Some("sd".into());
    cfg
}

fn stored_ids(db: &kauri_db::Db<kauri_kv::lmdb::LmdbBackend>) -> Vec<u64> {
    let r = db.read().unwrap();
    kauri_db::descriptors::all_ids(r.kv()).unwrap()
}

#[test]
fn shared_values_are_stored_once_and_read_back() {
    let t = lmdb_with(config());
    let sd_a = vec![1u8; 300];
    let sd_b = vec![2u8; 200];
    let mut w = t.db.write().unwrap();
    w.add(ou("people", "")).unwrap();
    for i in 0..50 {
        let mut e = user(&format!("u{i}"), "ou=people", i);
        e.push(
            "sd",
            vec![if i % 10 == 0 {
                sd_b.clone()
            } else {
                sd_a.clone()
            }],
        );
        w.add(e).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(stored_ids(&t.db).len(), 2);

    let r = t.db.read().unwrap();
    let e = r.entry(&dn("cn=u3,ou=people")).unwrap().unwrap();
    assert_eq!(e.get("sd").unwrap(), std::slice::from_ref(&sd_a));
    let e = r.entry(&dn("cn=u10,ou=people")).unwrap().unwrap();
    assert_eq!(e.get("sd").unwrap(), std::slice::from_ref(&sd_b));
    // The record holds the id, which names the value.
    let id = r.lookup(&dn("cn=u3,ou=people")).unwrap().unwrap();
    let rec = r.record(id).unwrap().unwrap();
    let stored = rec.attr(r.descriptor_attr_id().unwrap()).unwrap();
    let raw = stored.values().next().unwrap().raw;
    assert_eq!(raw.len(), 8);
    assert_eq!(r.stored_descriptor(raw), Some(sd_a.as_slice()));
    drop(r);

    // Replacing every use of one value leaves it unused; the sweep removes it.
    let mut w = t.db.write().unwrap();
    for i in (0..50).step_by(10) {
        w.modify(
            &dn(&format!("cn=u{i},ou=people")),
            &[Modification::new(
                ModifyOp::Replace,
                "sd",
                &[std::str::from_utf8(&[3u8; 10]).unwrap()],
            )],
        )
        .unwrap();
    }
    assert_eq!(t.db.sweep_descriptors_in(&mut w).unwrap(), 1);
    w.commit().unwrap();
    assert_eq!(stored_ids(&t.db).len(), 2);
    let report = t.db.check(false, None).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn a_missing_descriptor_is_reported() {
    let t = lmdb_with(config());
    let mut w = t.db.write().unwrap();
    w.add(ou("people", "")).unwrap();
    let mut e = user("u1", "ou=people", 1);
    e.push("sd", vec![vec![9u8; 40]]);
    w.add(e).unwrap();
    // Sweeping with a record still naming the value keeps it.
    assert_eq!(t.db.sweep_descriptors_in(&mut w).unwrap(), 0);
    let id = kauri_db::descriptors::find(w.kv(), &[9u8; 40])
        .unwrap()
        .unwrap();
    use kauri_kv::WriteTxn;
    w.kv()
        .delete(
            kauri_db::db::T_DESCRIPTORS,
            &kauri_db::descriptors::id_key(id),
        )
        .unwrap();
    w.commit().unwrap();
    let report = t.db.check(false, None).unwrap();
    assert!(report
        .problems
        .iter()
        .any(|p| matches!(p, kauri_db::check::Problem::MissingDescriptor { .. })));
}
