//! One way to read entries whether inside the write transaction (which sees its own
//! changes) or on a read snapshot, so rules such as tokenGroups or the resultant password
//! policy are written once.

use kauri_db::{DbRead, DbWrite, Dn};
use kauri_kv::Backend;

use super::error::DirResult;

/// The id of the entry a DN value names, by parsing it (`None` for a value that is no DN,
/// or names nothing): what [`View::id_of_value`] does unless a view knows a quicker way.
pub(crate) fn id_of_dn_value<V: View + ?Sized>(view: &V, value: &[u8]) -> DirResult<Option<u64>> {
    match std::str::from_utf8(value)
        .ok()
        .and_then(|t| Dn::parse(t).ok())
    {
        Some(dn) => view.id_of(&dn),
        None => Ok(None),
    }
}

/// Reads the directory: ids by DN, attribute values, links.
pub trait View {
    /// The id of an entry.
    fn id_of(&self, dn: &Dn) -> DirResult<Option<u64>>;
    /// The raw values of an attribute of a record (empty when absent); a linked
    /// attribute's values are the DNs it links to.
    fn values(&self, id: u64, attr: &str) -> DirResult<Vec<Vec<u8>>>;
    /// The DN of a record.
    fn dn_of(&self, id: u64) -> DirResult<String>;
    /// The ids a linked attribute of `id` names (forward or back), in id order.
    fn links(&self, id: u64, attr: &str) -> DirResult<Vec<u64>>;

    /// The records holding `value` in an indexed attribute (empty when not indexed).
    fn find(&self, attr: &str, value: &[u8]) -> DirResult<Vec<u64>>;

    /// The ids of a record's children.
    fn children(&self, id: u64) -> DirResult<Vec<u64>>;
    /// The id of the descriptor object `id` stores, if it has one.
    fn descriptor_id_of(&self, id: u64) -> DirResult<Option<u64>>;
    /// The descriptor stored under `sd_id`.
    fn descriptor_bytes(&self, sd_id: u64) -> DirResult<Option<Vec<u8>>>;
    /// The parent of object `id` (0 above a naming context head).
    fn parent_id(&self, id: u64) -> DirResult<Option<u64>>;

    /// The id of the entry a DN value names (`None` for a value that is no DN, or names
    /// nothing).
    fn id_of_value(&self, value: &[u8]) -> DirResult<Option<u64>> {
        id_of_dn_value(self, value)
    }

    /// The id of an entry's parent (`None` when it does not exist, or the entry is a
    /// naming context head).
    fn parent_of(&self, dn: &Dn) -> DirResult<Option<u64>> {
        match dn.parent() {
            Some(p) => self.id_of(&p),
            None => Ok(None),
        }
    }

    /// The value of a record's RDN (`samdom.example.com` of `DC=samdom.example.com,…`),
    /// without building its whole DN where the transaction allows it.
    fn rdn_value(&self, id: u64) -> DirResult<Option<String>> {
        Ok(Dn::parse(&self.dn_of(id)?).ok().and_then(|dn| {
            dn.rdn()
                .and_then(|r| r.avas().first().map(|a| a.value.clone()))
        }))
    }

    /// The id of the child of `parent` named `rdn` (one key read where the transaction
    /// allows it).
    fn child_of(&self, parent: u64, rdn: &kauri_db::Rdn) -> DirResult<Option<u64>> {
        let parent = Dn::parse(&self.dn_of(parent)?)
            .map_err(|e| super::DirError::UnwillingToPerform(e.to_string()))?;
        self.id_of(&parent.child(rdn.clone()))
    }

    /// The first value of an attribute, as text.
    fn text(&self, id: u64, attr: &str) -> DirResult<Option<String>> {
        Ok(self
            .values(id, attr)?
            .into_iter()
            .next()
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// The first value of each of `attrs`, as text, in their order: one read of the
    /// record where the transaction allows it.
    fn texts(&self, id: u64, attrs: &[&str]) -> DirResult<Vec<Option<String>>> {
        attrs.iter().map(|a| self.text(id, a)).collect()
    }

    /// Every value of each of `attrs` (none of them linked), in their order: one read of
    /// the record where the transaction allows it.
    fn all_values(&self, id: u64, attrs: &[&str]) -> DirResult<Vec<Vec<Vec<u8>>>> {
        attrs.iter().map(|a| self.values(id, a)).collect()
    }

    /// The first value of an integer attribute.
    fn int(&self, id: u64, attr: &str) -> DirResult<Option<i64>> {
        Ok(self.text(id, attr)?.and_then(|t| t.trim().parse().ok()))
    }
}

/// Whether `attr` is the attribute whose values the database stores once each, records
/// holding their ids ([`kauri_db::descriptors`]).
fn is_descriptor(attr: &str) -> bool {
    attr.eq_ignore_ascii_case(super::descriptors::SD_ATTR)
}

/// Both transaction kinds read the same way; only their types differ.
macro_rules! view_impl {
    ($t:ident) => {
        impl<B: Backend> ValueOf for $t<'_, B> {
            fn value_of(&self, raw: &[u8], descriptor: bool) -> Option<Vec<u8>> {
                if descriptor {
                    let id = kauri_db::descriptors::id_of_stored(raw)?;
                    self.descriptor(id).ok().flatten().map(<[u8]>::to_vec)
                } else {
                    Some(raw.to_vec())
                }
            }
        }

        impl<B: Backend> View for $t<'_, B> {
            fn id_of(&self, dn: &Dn) -> DirResult<Option<u64>> {
                Ok(self.lookup(dn)?.filter(|id| *id != 0))
            }

            fn values(&self, id: u64, attr: &str) -> DirResult<Vec<Vec<u8>>> {
                if let Some(ids) = self.linked_ids_by_name(id, attr)? {
                    let mut out = Vec::with_capacity(ids.len());
                    for t in ids {
                        out.push(self.dn_string(t)?.into_bytes());
                    }
                    return Ok(out);
                }
                let Some(aid) = self.stored_attr_id(attr) else {
                    return Ok(Vec::new());
                };
                let Some(rec) = self.record(id)? else {
                    return Ok(Vec::new());
                };
                let descriptor = is_descriptor(attr);
                Ok(rec
                    .attr(aid)
                    .map(|a| {
                        a.values()
                            .filter_map(|v| self.value_of(v.raw, descriptor))
                            .collect()
                    })
                    .unwrap_or_default())
            }

            fn dn_of(&self, id: u64) -> DirResult<String> {
                Ok(self.dn_string(id)?)
            }

            fn links(&self, id: u64, attr: &str) -> DirResult<Vec<u64>> {
                Ok(self.linked_ids_by_name(id, attr)?.unwrap_or_default())
            }

            fn find(&self, attr: &str, value: &[u8]) -> DirResult<Vec<u64>> {
                Ok(self.find_eq(attr, value)?.unwrap_or_default())
            }

            fn texts(&self, id: u64, attrs: &[&str]) -> DirResult<Vec<Option<String>>> {
                // What the record holds comes from one decode of it; what it does not
                // (a linked attribute, an absent one) is looked up as `text` does.
                let rec = self.record(id)?;
                attrs
                    .iter()
                    .map(|a| {
                        let stored = self
                            .stored_attr_id(a)
                            .and_then(|aid| rec.as_ref()?.attr(aid))
                            .and_then(|at| at.values().next())
                            .map(|v| String::from_utf8_lossy(v.raw).into_owned());
                        match stored {
                            Some(t) => Ok(Some(t)),
                            None => self.text(id, a),
                        }
                    })
                    .collect()
            }

            fn rdn_value(&self, id: u64) -> DirResult<Option<String>> {
                Ok(self
                    .rdn_string(id)?
                    .and_then(|t| kauri_db::Rdn::parse(&t).ok())
                    .and_then(|r| r.avas().first().map(|a| a.value.clone())))
            }

            fn child_of(&self, parent: u64, rdn: &kauri_db::Rdn) -> DirResult<Option<u64>> {
                Ok(self.child_id(parent, rdn)?)
            }

            fn all_values(&self, id: u64, attrs: &[&str]) -> DirResult<Vec<Vec<Vec<u8>>>> {
                let Some(rec) = self.record(id)? else {
                    return Ok(vec![Vec::new(); attrs.len()]);
                };
                Ok(attrs
                    .iter()
                    .map(|a| {
                        let descriptor = is_descriptor(a);
                        self.stored_attr_id(a)
                            .and_then(|aid| rec.attr(aid))
                            .map(|at| {
                                at.values()
                                    .filter_map(|v| self.value_of(v.raw, descriptor))
                                    .collect()
                            })
                            .unwrap_or_default()
                    })
                    .collect())
            }

            fn children(&self, id: u64) -> DirResult<Vec<u64>> {
                // The transaction's own method, not this one.
                Ok($t::children(self, id)?)
            }

            fn descriptor_id_of(&self, id: u64) -> DirResult<Option<u64>> {
                let Some(aid) = self.stored_attr_id(super::descriptors::SD_ATTR) else {
                    return Ok(None);
                };
                let Some(rec) = self.record(id)? else {
                    return Ok(None);
                };
                Ok(rec
                    .attr(aid)
                    .and_then(|a| a.values().next())
                    .and_then(|v| kauri_db::descriptors::id_of_stored(v.raw)))
            }

            fn descriptor_bytes(&self, sd_id: u64) -> DirResult<Option<Vec<u8>>> {
                Ok(self.descriptor(sd_id)?.map(<[u8]>::to_vec))
            }

            fn parent_id(&self, id: u64) -> DirResult<Option<u64>> {
                Ok(self.parent_of(id)?)
            }
        }
    };
}

/// A stored value as readers see it: a descriptor's id turned into the descriptor.
trait ValueOf {
    fn value_of(&self, raw: &[u8], descriptor: bool) -> Option<Vec<u8>>;
}

view_impl!(DbWrite);
view_impl!(DbRead);
