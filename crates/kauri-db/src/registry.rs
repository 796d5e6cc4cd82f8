//! The attribute registry: attribute names ↔ the small ids records and index keys use.
//!
//! Stored in `meta` (`a:<lowercased name>` → u32 BE id, `i:<u32 BE id>` → name as first
//! seen). The whole registry is small and lives in memory as an immutable snapshot that
//! write transactions extend and publish after they commit. A reader that meets an id or a
//! name its in-memory copy lacks (a commit raced its snapshot) falls back to `meta`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{DbError, DbResult};
use crate::keys::meta;

/// An immutable registry snapshot.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    by_name: HashMap<String, u32>,
    names: Vec<Option<Arc<str>>>,
}

impl Registry {
    /// The id of a lowercased attribute name.
    pub fn id_of_lower(&self, lower: &str) -> Option<u32> {
        self.by_name.get(lower).copied()
    }

    /// The name of an id.
    pub fn name_of(&self, id: u32) -> Option<&Arc<str>> {
        self.names.get(id as usize).and_then(|n| n.as_ref())
    }

    /// Every registered (id, name).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Arc<str>)> {
        self.names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_ref().map(|n| (i as u32, n)))
    }

    /// The highest id in use (0 when empty).
    pub fn max_id(&self) -> u32 {
        self.names.len().saturating_sub(1) as u32
    }

    /// Forgets a lowercased name (its attribute was renamed).
    pub fn remove_name(&mut self, lower: &str) {
        self.by_name.remove(lower);
    }

    /// Adds one registration (a later name for the same id replaces the earlier).
    pub fn insert(&mut self, id: u32, name: &str) {
        self.by_name.insert(name.to_ascii_lowercase(), id);
        let idx = id as usize;
        if self.names.len() <= idx {
            self.names.resize(idx + 1, None);
        }
        if let Some(slot) = self.names.get_mut(idx) {
            *slot = Some(Arc::from(name));
        }
    }

    /// Loads every registration from the `meta` table of a view.
    pub fn load<R: kauri_kv::ReadTxn>(
        view: &R,
        meta_table: kauri_kv::TableId,
    ) -> DbResult<Registry> {
        let mut reg = Registry::default();
        for kv in view.prefix(meta_table, meta::ATTR_BY_ID, kauri_kv::Direction::Forward)? {
            let (k, v) = kv?;
            let k: &[u8] = &k;
            let id_bytes: [u8; 4] = k
                .get(meta::ATTR_BY_ID.len()..)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| DbError::corrupt("attribute registry key malformed"))?;
            let name = std::str::from_utf8(v)
                .map_err(|_| DbError::corrupt("attribute name is not UTF-8"))?;
            reg.insert(u32::from_be_bytes(id_bytes), name);
        }
        Ok(reg)
    }
}

/// The `meta` key of a name registration.
pub fn name_key(lower: &str) -> Vec<u8> {
    let mut k = meta::ATTR_BY_NAME.to_vec();
    k.extend_from_slice(lower.as_bytes());
    k
}

/// The `meta` key of an id registration.
pub fn id_key(id: u32) -> Vec<u8> {
    let mut k = meta::ATTR_BY_ID.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}
