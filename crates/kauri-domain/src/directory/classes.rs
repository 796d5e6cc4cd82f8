//! Object classes of an entry as the schema sees them: the structural chain completed
//! from the classes a client names, and what that set of classes allows (mandatory and
//! optional attributes, possible superiors, the naming attribute). Computed once per
//! distinct set of classes and kept with the schema snapshot, so adding the 100,000th user
//! costs a map lookup, not a walk of the schema.

use std::collections::HashMap;
use std::sync::Arc;

use kauri_db::quick_hash::QuickSet;
use parking_lot::Mutex;

use crate::schema::{ClassCategory, ClassDef, Schema};

use super::error::{DirError, DirResult};

/// Everything validation needs to know about one combination of object classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSet {
    /// `objectClass` as stored: `top` … the structural class, then auxiliary classes.
    pub object_classes: Vec<String>,
    /// The most specific structural class.
    pub structural: String,
    /// Lowercased names of every mandatory attribute.
    pub must: QuickSet<String>,
    /// Lowercased names of every attribute allowed (mandatory or optional).
    pub allowed: QuickSet<String>,
    /// Lowercased names of the classes a parent must have one of.
    pub poss_superiors: QuickSet<String>,
    /// Lowercased name of the attribute that names instances (`rDNAttID`).
    pub rdn_attr: String,
    /// `defaultObjectCategory` of the structural class (a DN in the schema NC).
    pub default_object_category: Option<String>,
    /// Lowercased names of every class in the set, superclasses included.
    pub lineage: QuickSet<String>,
}

impl ClassSet {
    /// Whether the set includes `class` (or a subclass of it).
    pub fn is(&self, class: &str) -> bool {
        kauri_db::ascii::with_lower(class, |c| self.lineage.contains(c))
    }
}

/// The schema a directory validates against: immutable, shared by every request until a
/// schema change replaces it, with the class sets computed so far.
#[derive(Debug)]
pub struct SchemaSnapshot {
    /// The definitions.
    pub schema: Schema,
    sets: Mutex<HashMap<Vec<String>, Arc<ClassSet>>>,
}

impl SchemaSnapshot {
    /// A snapshot of `schema`.
    pub fn new(schema: Schema) -> SchemaSnapshot {
        SchemaSnapshot {
            schema,
            sets: Mutex::new(HashMap::new()),
        }
    }

    /// The class set of an entry whose `objectClass` holds `names` (names or OIDs, in
    /// any order, superclasses optional).
    pub fn class_set(&self, names: &[&str]) -> DirResult<Arc<ClassSet>> {
        let mut key: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        key.sort();
        key.dedup();
        if let Some(s) = self.sets.lock().get(&key) {
            return Ok(s.clone());
        }
        let set = Arc::new(self.compute(names)?);
        let mut sets = self.sets.lock();
        if sets.len() > 10_000 {
            sets.clear();
        }
        sets.insert(key, set.clone());
        Ok(set)
    }

    fn class(&self, name: &str) -> DirResult<&ClassDef> {
        self.schema
            .class(name)
            .or_else(|| self.schema.class_by_oid(name))
            // AD: noSuchAttribute for a class the schema does not define.
            .ok_or_else(|| {
                DirError::NoSuchAttribute(format!(
                    "0000201C: objectClass {name} is not in the schema"
                ))
            })
    }

    fn compute(&self, names: &[&str]) -> DirResult<ClassSet> {
        let s = &self.schema;
        let mut classes = Vec::with_capacity(names.len());
        for n in names {
            classes.push(self.class(n)?);
        }
        // The structural classes named must form one chain; its most specific member
        // is the entry's structural class.
        let structural: Vec<&ClassDef> = classes
            .iter()
            .copied()
            .filter(|c| {
                matches!(
                    c.category(),
                    ClassCategory::Structural | ClassCategory::Class88
                )
            })
            .collect();
        let most = structural
            .iter()
            .copied()
            .find(|c| {
                let chain = s.superclass_chain(&c.ldap_name);
                structural
                    .iter()
                    .all(|o| chain.iter().any(|x| x.governs_id == o.governs_id))
            })
            .ok_or_else(|| {
                let abstract_class = classes.iter().find(|c| {
                    c.category() == ClassCategory::Abstract
                        && !c.ldap_name.eq_ignore_ascii_case("top")
                });
                if let (true, Some(a)) = (structural.is_empty(), abstract_class) {
                    // AD: an abstract class cannot be instantiated.
                    DirError::UnwillingToPerform(format!(
                        "0000209E: objectClass {} is abstract and cannot be instantiated",
                        a.ldap_name
                    ))
                } else if structural.is_empty() {
                    DirError::ObjectClassViolation("no structural object class given".into())
                } else {
                    DirError::ObjectClassViolation(format!(
                        "structural classes {} do not form one chain",
                        structural
                            .iter()
                            .map(|c| c.ldap_name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            })?;
        let chain = s.superclass_chain(&most.ldap_name);
        let mut object_classes: Vec<String> =
            chain.iter().rev().map(|c| c.ldap_name.clone()).collect();
        let mut lineage: QuickSet<String> = chain
            .iter()
            .map(|c| c.ldap_name.to_ascii_lowercase())
            .collect();
        for c in &classes {
            let lower = c.ldap_name.to_ascii_lowercase();
            if lineage.contains(&lower) {
                continue;
            }
            match c.category() {
                ClassCategory::Auxiliary => {
                    for sup in s.superclass_chain(&c.ldap_name).iter().rev() {
                        if lineage.insert(sup.ldap_name.to_ascii_lowercase()) {
                            object_classes.push(sup.ldap_name.clone());
                        }
                    }
                }
                _ => {
                    return Err(DirError::ObjectClassViolation(format!(
                        "objectClass {} is not in the chain of {}",
                        c.ldap_name, most.ldap_name
                    )))
                }
            }
        }
        // MS-ADTS 3.1.1.1.4: `top` first, the structural class last, auxiliary classes
        // between.
        if let Some(pos) = object_classes
            .iter()
            .position(|c| c.eq_ignore_ascii_case(&most.ldap_name))
        {
            let structural = object_classes.remove(pos);
            object_classes.push(structural);
        }
        let mut must = QuickSet::default();
        let mut allowed = QuickSet::default();
        for oc in &object_classes {
            for a in s.all_must(oc) {
                must.insert(a.to_ascii_lowercase());
                allowed.insert(a.to_ascii_lowercase());
            }
            for a in s.all_may(oc) {
                allowed.insert(a.to_ascii_lowercase());
            }
            for c in s.class_closure(oc) {
                lineage.insert(c.ldap_name.to_ascii_lowercase());
            }
        }
        let mut poss_superiors = QuickSet::default();
        for c in &chain {
            for p in c.poss_superiors.iter().chain(&c.system_poss_superiors) {
                poss_superiors.insert(p.to_ascii_lowercase());
            }
        }
        let rdn_attr = chain
            .iter()
            .find_map(|c| c.rdn_att_id.clone())
            .unwrap_or_else(|| "cn".to_string())
            .to_ascii_lowercase();
        Ok(ClassSet {
            object_classes,
            structural: most.ldap_name.clone(),
            must,
            allowed,
            poss_superiors,
            rdn_attr,
            default_object_category: most.default_object_category.clone(),
            lineage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> SchemaSnapshot {
        SchemaSnapshot::new(Schema::load_default().0)
    }

    #[test]
    fn user_chain_is_completed() {
        let s = snapshot();
        let set = s.class_set(&["user"]).unwrap();
        assert_eq!(
            set.object_classes,
            vec!["top", "person", "organizationalPerson", "user"]
        );
        assert_eq!(set.structural, "user");
        assert!(set.allowed.contains("samaccountname"));
        assert!(set.must.contains("objectclass"));
        assert_eq!(set.rdn_attr, "cn");
        assert!(set.poss_superiors.contains("organizationalunit"));
        assert!(set.is("person"));
        // The same set, named differently, is the cached one.
        let again = s.class_set(&["top", "USER", "person"]).unwrap();
        assert!(Arc::ptr_eq(
            &again,
            &s.class_set(&["person", "top", "user"]).unwrap()
        ));
        assert_eq!(again.object_classes, set.object_classes);
    }

    #[test]
    fn computer_is_a_user() {
        let s = snapshot();
        let set = s.class_set(&["computer"]).unwrap();
        assert_eq!(set.structural, "computer");
        assert!(set.is("user"));
        assert!(set.allowed.contains("dnshostname"));
    }

    #[test]
    fn bad_class_combinations_are_refused() {
        let s = snapshot();
        for bad in [vec!["top"], vec!["user", "organizationalUnit"]] {
            let err = s.class_set(&bad).unwrap_err();
            assert_eq!(err.ldap_result_code(), 65, "{bad:?}: {err}");
        }
        // AD: an unknown class is noSuchAttribute; an abstract one alone, unwilling.
        let err = s.class_set(&["nosuchclass"]).unwrap_err();
        assert_eq!(err.ldap_result_code(), 16, "{err}");
        let err = s.class_set(&["leaf"]).unwrap_err();
        assert_eq!(err.ldap_result_code(), 53, "{err}");
    }
}
