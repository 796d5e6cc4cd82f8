//! The domain most tests start from: SAMDOM.EXAMPLE.COM provisioned in memory.

#![allow(dead_code)]

use std::sync::Arc;

use kauri_db::Db;
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::mem::MemBackend;

/// The provisioned domain's DN.
pub const DOMAIN: &str = "DC=samdom,DC=example,DC=com";

/// A directory in memory with SAMDOM.EXAMPLE.COM provisioned (Administrator's password
/// `Passw0rd.Admin`, domain SID S-1-5-21-1-2-3).
pub fn provisioned() -> Directory<MemBackend> {
    provisioned_with(Schema::load_default().0)
}

/// [`provisioned`] with this schema.
pub fn provisioned_with(schema: Schema) -> Directory<MemBackend> {
    let db = Arc::new(Db::in_memory(schema.db_config()).unwrap());
    let dir = Directory::new(db, schema, Some(SecretKey::generate().unwrap())).unwrap();
    let params = ProvisionParams {
        realm: "SAMDOM.EXAMPLE.COM".into(),
        netbios_domain: "SAMDOM".into(),
        dc_name: "DC1".into(),
        domain_sid: Sid::parse("S-1-5-21-1-2-3").unwrap(),
        site: "Default-First-Site-Name".into(),
    };
    dir.provision(&params, "Passw0rd.Admin", None).unwrap();
    dir
}
