//! Where an add leaves the entry it validated and completed: the write transaction of a
//! change, or a bulk load ([`super::bulk`]), which validates every entry the same way.

use kauri_db::{DbWrite, Entry};
use kauri_kv::Backend;

use super::error::DirResult;
use super::view::View;
use super::Directory;
use crate::schema::Schema;

/// What an add needs from the place it writes to, besides reading it.
pub(crate) trait AddStore<B: Backend>: View {
    /// Stores a finished entry (as the head of a naming context when `naming_context`);
    /// returns its id.
    fn put_entry(&mut self, entry: Entry, naming_context: bool) -> DirResult<u64>;

    /// A RID for a new security principal.
    fn new_rid(&mut self, dir: &Directory<B>) -> DirResult<u32>;

    /// Makes a schema extended by a new schema object the working copy.
    fn schema_extended(&mut self, dir: &Directory<B>, schema: Schema) -> DirResult<()>;
}

impl<B: Backend> AddStore<B> for DbWrite<'_, B> {
    fn put_entry(&mut self, entry: Entry, naming_context: bool) -> DirResult<u64> {
        Ok(if naming_context {
            self.add_naming_context(entry)?
        } else {
            self.add(entry)?
        })
    }

    fn new_rid(&mut self, dir: &Directory<B>) -> DirResult<u32> {
        dir.next_rid(self)
    }

    fn schema_extended(&mut self, dir: &Directory<B>, schema: Schema) -> DirResult<()> {
        dir.extend_schema(self, schema)
    }
}
