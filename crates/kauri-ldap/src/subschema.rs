//! The subschema entry (RFC 4512 section 4.2), as AD publishes it at
//! `CN=Aggregate,CN=Schema,CN=Configuration,<forest root>`: every attribute type, object
//! class and DIT content rule of the AD schema, so generic LDAP browsers can show the
//! schema. The descriptions are rendered on first use and again after a schema change.

use kauri_domain::schema::{rfc4512, Schema, SchemaSource};
use kauri_ldap_proto::{Attribute, SearchResultEntry};

/// The rendered subschema.
pub struct Subschema {
    attribute_types: Vec<Vec<u8>>,
    object_classes: Vec<Vec<u8>>,
    dit_content_rules: Vec<Vec<u8>>,
    /// Where the schema came from (the published files, or the built-in subset).
    pub source: SchemaSource,
}

impl Subschema {
    /// Renders a given schema.
    pub fn render(schema: &Schema, source: SchemaSource) -> Subschema {
        Subschema {
            attribute_types: schema
                .attributes()
                .map(|a| rfc4512::attribute_type(a).into_bytes())
                .collect(),
            object_classes: schema
                .classes()
                .map(|c| rfc4512::object_class(c).into_bytes())
                .collect(),
            dit_content_rules: schema
                .classes()
                .filter_map(rfc4512::dit_content_rule)
                .map(String::into_bytes)
                .collect(),
            source,
        }
    }

    /// The subschema DN for a forest whose root naming context is `root`.
    pub fn dn(root: &str) -> String {
        if root.is_empty() {
            "CN=Aggregate".to_string()
        } else {
            format!("CN=Aggregate,CN=Schema,CN=Configuration,{root}")
        }
    }

    /// The entry, with the attributes asked for: the schema descriptions are operational,
    /// so they come when named or with `+`.
    pub fn entry(&self, dn: &str, requested: &[String]) -> SearchResultEntry {
        let wants = |name: &str| {
            requested
                .iter()
                .any(|r| r == "+" || r.eq_ignore_ascii_case(name))
        };
        let user = requested.is_empty() || requested.iter().any(|r| r == "*");
        let mut attributes = Vec::new();
        if user || wants("objectClass") {
            attributes.push(Attribute {
                name: "objectClass".into(),
                values: vec![b"top".to_vec(), b"subSchema".to_vec()],
            });
        }
        if user || wants("cn") {
            attributes.push(Attribute {
                name: "cn".into(),
                values: vec![b"Aggregate".to_vec()],
            });
        }
        for (name, values) in [
            ("attributeTypes", &self.attribute_types),
            ("objectClasses", &self.object_classes),
            ("dITContentRules", &self.dit_content_rules),
        ] {
            if wants(name) {
                attributes.push(Attribute {
                    name: name.into(),
                    values: values.clone(),
                });
            }
        }
        SearchResultEntry {
            dn: dn.to_string(),
            attributes,
        }
    }
}
