//! Linked attributes on the write path: one key per link and direction in the `links`
//! table (see [`crate::keys::link_key`]), written in the same transaction as the change
//! that makes them, plus a presence key per entry and attribute so `(member=*)` and
//! `(memberOf=*)` are index reads.

use std::collections::BTreeSet;

use kauri_kv::{Backend, Direction, ReadTxn, WriteTxn};

use crate::config::LinkRole;
use crate::db::{T_INDEX, T_LINKS};
use crate::dn::Dn;
use crate::error::{DbError, DbResult};
use crate::keys::{link_key, link_prefix, presence_key, LINK_BACK, LINK_FORWARD};
use crate::read;
use crate::record::{put_stamp, OwnedAttr, OwnedRecord, RecordView, Stamp};
use crate::reindex::for_each_record;

use super::DbWrite;

/// A forward link attribute resolved to ids: its own and its back link's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinkAttr {
    pub(crate) forward: u32,
    pub(crate) back: Option<u32>,
}

impl<'d, B: Backend> DbWrite<'d, B> {
    /// The link role of an attribute description, if it is linked.
    pub(crate) fn link_role(&self, name: &str) -> Option<LinkRole> {
        self.cfg.link_of(name).cloned()
    }

    /// Registers (if needed) and returns the ids of a forward link attribute and its back
    /// link.
    pub(crate) fn link_attr(&mut self, forward: &str, back: Option<&str>) -> DbResult<LinkAttr> {
        let forward = self.attr_id(forward)?;
        let back = match back {
            Some(b) => Some(self.attr_id(b)?),
            None => None,
        };
        Ok(LinkAttr { forward, back })
    }

    /// Whether a stored attribute id is a one-way reference.
    fn is_reference(&self, attr: u32) -> bool {
        self.attr_lower_name(attr).is_some_and(|n| {
            matches!(
                self.cfg.link_of_lower(&n),
                Some(LinkRole::Forward {
                    reference: true,
                    ..
                })
            )
        })
    }

    /// The link attribute of a stored forward attribute id (for removing links found by
    /// a scan).
    fn link_attr_of_id(&mut self, forward: u32) -> DbResult<LinkAttr> {
        let back = self
            .attr_lower_name(forward)
            .and_then(|n| match self.cfg.link_of_lower(&n) {
                Some(LinkRole::Forward { back, .. }) => back.clone(),
                _ => None,
            });
        let back = match back {
            Some(b) => Some(self.attr_id(&b)?),
            None => None,
        };
        Ok(LinkAttr { forward, back })
    }

    /// The ids of the entries named by DN values of a forward link; every one must exist
    /// and be named once.
    pub(crate) fn link_targets(&self, attr: &str, values: &[Vec<u8>]) -> DbResult<Vec<u64>> {
        let max = self.cfg.max_index_key_len;
        let reference = matches!(
            self.link_role(attr),
            Some(LinkRole::Forward {
                reference: true,
                ..
            })
        );
        let mut out = Vec::with_capacity(values.len());
        let mut seen = BTreeSet::new();
        for raw in values {
            let text = std::str::from_utf8(raw).map_err(|_| {
                DbError::InvalidAttributeSyntax(format!("{attr}: a DN value must be UTF-8"))
            })?;
            let dn = Dn::parse(text)
                .map_err(|e| DbError::InvalidAttributeSyntax(format!("{attr}: {e}")))?;
            let id = match read::lookup(&self.kv, &dn, max)? {
                Some(id) if id != 0 => id,
                _ => {
                    return Err(DbError::NoSuchObject(format!(
                        "{attr}: {text} does not exist"
                    )))
                }
            };
            if !seen.insert(id) {
                if reference {
                    return Err(DbError::AttributeOrValueExists(format!(
                        "{attr}: value {text:?} given twice"
                    )));
                }
                return Err(DbError::EntryAlreadyExists(format!(
                    "00000562: UpdErr: DSID-031A11C4, problem 6005 (ENTRY_EXISTS), data 0: \
                     {attr}: value {text:?} given twice"
                )));
            }
            out.push(id);
        }
        Ok(out)
    }

    /// Adds one link; returns false when it already exists.
    pub(crate) fn add_link(
        &mut self,
        src: u64,
        attr: LinkAttr,
        dst: u64,
        usn: u64,
    ) -> DbResult<bool> {
        let stamp = self.stamp(Stamp::default(), usn);
        self.add_link_stamped(src, attr, dst, &stamp)
    }

    /// Adds one link with the given replication stamp; returns false when it already
    /// exists.
    fn add_link_stamped(
        &mut self,
        src: u64,
        attr: LinkAttr,
        dst: u64,
        stamp: &Stamp,
    ) -> DbResult<bool> {
        let fwd = link_key(LINK_FORWARD, src, attr.forward, dst);
        if self.kv.get(T_LINKS, &fwd)?.is_some() {
            return Ok(false);
        }
        let mut value = Vec::with_capacity(24);
        put_stamp(&mut value, stamp);
        self.kv.put(T_LINKS, &fwd, &value)?;
        self.kv
            .put(T_LINKS, &link_key(LINK_BACK, dst, attr.forward, src), &[])?;
        self.kv
            .put(T_INDEX, &presence_key(attr.forward, src), &[])?;
        if let Some(b) = attr.back {
            self.kv.put(T_INDEX, &presence_key(b, dst), &[])?;
        }
        Ok(true)
    }

    /// Removes one link; returns false when it did not exist.
    pub(crate) fn remove_link(&mut self, src: u64, attr: LinkAttr, dst: u64) -> DbResult<bool> {
        let fwd = link_key(LINK_FORWARD, src, attr.forward, dst);
        if self.kv.get(T_LINKS, &fwd)?.is_none() {
            return Ok(false);
        }
        self.kv.delete(T_LINKS, &fwd)?;
        self.kv
            .delete(T_LINKS, &link_key(LINK_BACK, dst, attr.forward, src))?;
        if !self.has_links(LINK_FORWARD, src, attr.forward)? {
            self.kv.delete(T_INDEX, &presence_key(attr.forward, src))?;
        }
        if let Some(b) = attr.back {
            if !self.has_links(LINK_BACK, dst, attr.forward)? {
                self.kv.delete(T_INDEX, &presence_key(b, dst))?;
            }
        }
        Ok(true)
    }

    fn has_links(&self, kind: u8, from: u64, attr: u32) -> DbResult<bool> {
        let prefix = link_prefix(kind, from, attr);
        let mut it = self.kv.prefix(T_LINKS, &prefix, Direction::Forward)?;
        Ok(it.next().transpose()?.is_some())
    }

    /// The ids one entry links to through one forward attribute, in id order.
    pub(crate) fn linked(&self, kind: u8, from: u64, attr: u32) -> DbResult<Vec<u64>> {
        read::link_ids(&self.kv, kind, from, attr)
    }

    /// The ids a linked attribute (forward or back) of `id` names as this transaction
    /// sees them, in id order; `None` when `attr` is not linked.
    pub fn linked_ids_by_name(&self, id: u64, attr: &str) -> DbResult<Option<Vec<u64>>> {
        let (kind, forward) = match self.link_role(attr) {
            None => return Ok(None),
            Some(LinkRole::Forward { .. }) => (LINK_FORWARD, attr.to_string()),
            Some(LinkRole::Back { forward }) => (LINK_BACK, forward),
        };
        match self.find_attr(&forward.to_ascii_lowercase()) {
            Some(a) => read::link_ids(&self.kv, kind, id, a).map(Some),
            None => Ok(Some(Vec::new())),
        }
    }

    /// Removes every link from and to an entry (it is being deleted, or becoming a
    /// tombstone when `tombstone` is set: then the references other entries hold to it
    /// stay, see [`LinkRole::Forward`]). Returns the entries whose forward links lost a
    /// value, so their change stamps can move.
    pub fn remove_all_links(&mut self, id: u64, tombstone: bool) -> DbResult<Vec<u64>> {
        let mut found: Vec<(u8, u32, u64)> = Vec::new();
        for kind in [LINK_FORWARD, LINK_BACK] {
            for (attr, other) in read::entry_links(&self.kv, kind, id)? {
                found.push((kind, attr, other));
            }
        }
        let mut sources = BTreeSet::new();
        for (kind, attr, other) in found {
            if tombstone && kind == LINK_BACK && self.is_reference(attr) {
                continue;
            }
            let la = self.link_attr_of_id(attr)?;
            if kind == LINK_FORWARD {
                self.remove_link(id, la, other)?;
            } else {
                self.remove_link(other, la, id)?;
                sources.insert(other);
            }
        }
        Ok(sources.into_iter().collect())
    }
}

impl<'d, B: Backend> DbWrite<'d, B> {
    /// Moves the values records hold for attributes the configuration stores as links
    /// into the `links` table, keeping each attribute's replication stamp: a database
    /// written before an attribute became a reference holds its values in records. A
    /// value naming no entry has nothing to link to and is dropped with a warning.
    /// Returns how many values it moved or dropped. The indexes must be rebuilt afterwards.
    pub(crate) fn move_record_values_to_links(&mut self) -> DbResult<u64> {
        let linked: BTreeSet<u32> = self
            .reg
            .iter()
            .map(|(id, name)| (id, name.to_ascii_lowercase()))
            .filter(|(_, lower)| {
                matches!(
                    self.cfg.link_of_lower(lower.as_str()),
                    Some(LinkRole::Forward { .. })
                )
            })
            .map(|(id, _)| id)
            .collect();
        if linked.is_empty() {
            return Ok(0);
        }
        let mut found: Vec<(u64, OwnedRecord, usize)> = Vec::new();
        let mut last = None;
        loop {
            let next = for_each_record(&self.kv, last, 4096, |id, bytes| {
                let rec = RecordView::parse(bytes)?;
                if rec.attrs().any(|a| linked.contains(&a.id) && a.count > 0) {
                    found.push((id, rec.to_owned_record()?, bytes.len()));
                }
                Ok(())
            })?;
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        let max = self.cfg.max_index_key_len;
        let (mut moved, mut dropped) = (0u64, 0u64);
        for (id, mut rec, stored) in found {
            let (taken, kept): (Vec<OwnedAttr>, Vec<OwnedAttr>) = std::mem::take(&mut rec.attrs)
                .into_iter()
                .partition(|a| linked.contains(&a.id));
            rec.attrs = kept;
            for a in taken {
                let la = self.link_attr_of_id(a.id)?;
                for v in a.values {
                    let target = std::str::from_utf8(&v.raw)
                        .ok()
                        .and_then(|t| Dn::parse(t).ok())
                        .map(|dn| read::lookup(&self.kv, &dn, max))
                        .transpose()?
                        .flatten()
                        .filter(|t| *t != 0);
                    match target {
                        Some(t) => {
                            self.add_link_stamped(id, la, t, &a.stamp)?;
                            moved += 1;
                        }
                        None => {
                            dropped += 1;
                            tracing::warn!(
                                entry = id,
                                attribute = self.attr_lower_name(a.id).unwrap_or_default(),
                                value = %String::from_utf8_lossy(&v.raw),
                                "a stored DN value names no entry; dropped while storing the \
                                 attribute as references"
                            );
                        }
                    }
                }
            }
            self.put_record(id, &rec, stored)?;
        }
        if moved + dropped > 0 {
            tracing::info!(moved, dropped, "DN values now stored as references");
        }
        Ok(moved + dropped)
    }
}
