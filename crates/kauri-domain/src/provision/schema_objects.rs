//! The Schema NC: its head (schema FSMO role, schema version) and one
//! `attributeSchema` or `classSchema` object per definition of the schema
//! being provisioned, encoded by [`crate::schema::objects`].

use super::build::{Obj, Tree};
use super::{Names, ProvisionError, SCHEMA_OBJECT_VERSION};
use crate::schema::objects::{attribute_entry, class_entry};
use crate::schema::Schema;

/// The Schema NC head.
pub fn head(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    tree.add_head(
        Obj::new(names.schema.clone(), "dMD")
            .dn("fSMORoleOwner", &names.ntds)
            .int("objectVersion", SCHEMA_OBJECT_VERSION),
    )
}

/// Every attribute definition, then every class definition, as objects
/// below the Schema NC head.
pub fn add(tree: &mut Tree, names: &Names, schema: &Schema) -> Result<(), ProvisionError> {
    for def in schema.attributes() {
        tree.push(attribute_entry(def, &names.schema)?, false)?;
    }
    for def in schema.classes() {
        tree.push(class_entry(def, &names.schema)?, false)?;
    }
    Ok(())
}
