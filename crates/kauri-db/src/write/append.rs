//! Adding an entry whose place and links the caller resolved (bulk loads only): no name
//! is looked up, the record and its node are appended, and the keys that would land at
//! scattered places of their tables — the entry's name under its parent and the back keys
//! of its links — are collected and written in order when the load commits a chunk, so
//! every committed chunk holds a whole hierarchy and whole links. Index keys go to the
//! load's sorter as for any bulk add.

use kauri_kv::{Backend, WriteTxn};

use super::{back_link_refused, DbWrite};
use crate::config::LinkRole;
use crate::db::{T_LINKS, T_TREE};
use crate::entry::Entry;
use crate::error::{DbError, DbResult};
use crate::keys::{id_key, link_key, presence_key, tree_key, LINK_BACK, LINK_FORWARD};
use crate::record::{put_stamp, Stamp};

/// An entry whose place and links its caller resolved: a bulk load that validated every
/// entry against its own view of the directory hands them over this way, so no name is
/// looked up again.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The entry, without its linked attributes.
    pub entry: Entry,
    /// The id of its parent: an existing entry, or one placed before it.
    pub parent: u64,
    /// Its forward links: each linked attribute with the ids it names.
    pub links: Vec<(String, Vec<u64>)>,
    /// The id the caller counted on it getting (the next record id); checked.
    pub id: u64,
}

/// Tree keys and back link keys of placed entries, waiting for the chunk's commit.
#[derive(Debug, Default)]
pub(crate) struct PlacedKeys {
    tree: Vec<(Vec<u8>, u64)>,
    back: Vec<[u8; 21]>,
}

impl PlacedKeys {
    /// Writes the collected keys in key order; a name already taken under its parent
    /// (in the table, or twice among the keys) is entryAlreadyExists.
    pub(crate) fn write<W: WriteTxn>(&mut self, kv: &mut W) -> DbResult<()> {
        self.tree.sort_unstable();
        let taken = |id: u64| {
            DbError::EntryAlreadyExists(format!(
                "the name of record {id} is already taken below its parent"
            ))
        };
        for pair in self.tree.windows(2) {
            if let [(a, _), (b, id)] = pair {
                if a == b {
                    return Err(taken(*id));
                }
            }
        }
        for (k, id) in &self.tree {
            if kv.get(T_TREE, k)?.is_some() {
                return Err(taken(*id));
            }
            kv.put(T_TREE, k, &id_key(*id))?;
        }
        self.back.sort_unstable();
        for k in &self.back {
            kv.put(T_LINKS, k, &[])?;
        }
        self.tree.clear();
        self.back.clear();
        Ok(())
    }
}

impl<'d, B: Backend> DbWrite<'d, B> {
    /// Adds a placed entry (bulk mode only); its tree key and link back keys go to `keys`
    /// for the commit of the chunk.
    pub(crate) fn add_placed(&mut self, placed: Placed, keys: &mut PlacedKeys) -> DbResult<u64> {
        if self.deferred.is_none() {
            return Err(DbError::UnwillingToPerform(
                "placed entries are added by a bulk load only".into(),
            ));
        }
        self.op(|w| w.add_placed_inner(placed, keys))
    }

    fn add_placed_inner(&mut self, placed: Placed, keys: &mut PlacedKeys) -> DbResult<u64> {
        let Placed {
            entry,
            parent,
            links,
            id: expected,
        } = placed;
        let Entry { dn, attrs } = entry;
        let Some(rdn) = dn.rdn().cloned() else {
            return Err(DbError::UnwillingToPerform(
                "cannot add an entry with an empty DN".into(),
            ));
        };
        if parent == 0 || parent >= self.next_id {
            return Err(DbError::NoSuchObject(format!(
                "the parent of {dn} (record {parent}) does not exist"
            )));
        }
        if expected != self.next_id {
            return Err(DbError::UnwillingToPerform(format!(
                "{dn} was placed as record {expected}, but the next record is {}",
                self.next_id
            )));
        }
        let usn = self.next_usn();
        let (rec, _) = self.build_record(parent, rdn.to_string(), &rdn, attrs, usn, false)?;
        let mut resolved = Vec::with_capacity(links.len());
        let mut link_values = 0;
        for (name, mut targets) in links {
            let (back, reference) = match self.link_role(&name) {
                Some(LinkRole::Forward {
                    back, reference, ..
                }) => (back, reference),
                Some(LinkRole::Back { forward }) => return Err(back_link_refused(&name, &forward)),
                None => {
                    return Err(DbError::UnwillingToPerform(format!(
                        "{name} is not a linked attribute"
                    )))
                }
            };
            self.count_links(&mut link_values, targets.len())?;
            targets.sort_unstable();
            let n = targets.len();
            targets.dedup();
            if targets.len() != n {
                return Err(if reference {
                    DbError::AttributeOrValueExists(format!("{name}: a value given twice"))
                } else {
                    DbError::EntryAlreadyExists(format!(
                        "00000562: UpdErr: DSID-031A11C4, problem 6005 (ENTRY_EXISTS), data \
                         0: {name}: a value given twice"
                    ))
                });
            }
            if let Some(t) = targets.iter().find(|t| **t == 0 || **t >= self.next_id) {
                return Err(DbError::NoSuchObject(format!(
                    "{name}: record {t} does not exist"
                )));
            }
            resolved.push((self.link_attr(&name, back.as_deref())?, targets));
        }
        let id = self.store_new_record(&rec)?;
        keys.tree
            .push((tree_key(parent, rdn.norm(), self.cfg.max_index_key_len), id));
        let mut stamp = Vec::with_capacity(24);
        put_stamp(&mut stamp, &self.stamp(Stamp::default(), usn));
        for (la, targets) in resolved {
            if targets.is_empty() {
                continue;
            }
            self.insert_key(&presence_key(la.forward, id))?;
            for t in targets {
                self.kv
                    .append(T_LINKS, &link_key(LINK_FORWARD, id, la.forward, t), &stamp)?;
                keys.back.push(link_key(LINK_BACK, t, la.forward, id));
                if let Some(b) = la.back {
                    self.insert_key(&presence_key(b, t))?;
                }
            }
        }
        Ok(id)
    }
}
