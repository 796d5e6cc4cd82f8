//! A small LDIF (RFC 2849) reader for schema files, and the conversion of
//! `attributeSchema` / `classSchema` records into definitions.
//!
//! It understands what Microsoft's published schema files use: CRLF or LF
//! line ends, `#` comments (folded comments included), folded lines (a line
//! starting with one space continues the previous one), `attr: value` and
//! base64 `attr:: value` lines, an optional `version: 1` header and
//! `changetype: add`. Every error names the file and the line.

use base64::Engine as _;

use super::{AttributeDef, ClassDef, SchemaError};

/// One LDIF record: its DN, the line it starts on and its attribute values
/// in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdifRecord {
    /// The record's distinguished name as written.
    pub dn: String,
    /// 1-based line number of the `dn:` line.
    pub line: usize,
    /// `(attribute, value, line)` triples in file order; base64 values are decoded.
    pub values: Vec<(String, Vec<u8>, usize)>,
}

impl LdifRecord {
    /// All values of an attribute (case-insensitive name).
    pub fn all<'a, 'b>(
        &'a self,
        attr: &'b str,
    ) -> impl Iterator<Item = (&'a [u8], usize)> + use<'a, 'b> {
        self.values
            .iter()
            .filter(move |(a, _, _)| a.eq_ignore_ascii_case(attr))
            .map(|(_, v, l)| (v.as_slice(), *l))
    }

    /// The first value of an attribute.
    pub fn first(&self, attr: &str) -> Option<(&[u8], usize)> {
        self.all(attr).next()
    }

    /// Whether the record's `objectClass` includes `class`.
    pub fn has_object_class(&self, class: &str) -> bool {
        self.all("objectClass")
            .any(|(v, _)| v.eq_ignore_ascii_case(class.as_bytes()))
    }
}

/// Splits LDIF text into records. `file` is used in error messages only.
pub fn parse_ldif(text: &[u8], file: &str) -> Result<Vec<LdifRecord>, SchemaError> {
    let err = |line: usize, reason: String| SchemaError::Malformed {
        file: file.to_string(),
        line,
        reason,
    };

    // Unfold into logical lines: (first physical line number, bytes, is comment).
    // `None` stands for a blank separator line.
    let mut logical: Vec<Option<(usize, Vec<u8>, bool)>> = Vec::new();
    for (idx, raw) in text.split(|&b| b == b'\n').enumerate() {
        let lineno = idx + 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if let Some(rest) = line.strip_prefix(b" ") {
            match logical.last_mut() {
                Some(Some((_, buf, _))) => buf.extend_from_slice(rest),
                _ => {
                    return Err(err(
                        lineno,
                        "continuation line without a line to continue".into(),
                    ))
                }
            }
        } else if line.is_empty() {
            logical.push(None);
        } else {
            let comment = line.first() == Some(&b'#');
            logical.push(Some((lineno, line.to_vec(), comment)));
        }
    }

    let mut records = Vec::new();
    let mut current: Option<LdifRecord> = None;
    let mut seen_first = false;
    for item in logical {
        let Some((lineno, bytes, comment)) = item else {
            if let Some(r) = current.take() {
                records.push(r);
            }
            continue;
        };
        if comment {
            continue;
        }
        let line = std::str::from_utf8(&bytes).map_err(|e| {
            err(
                lineno,
                format!("not valid UTF-8 (at byte {})", e.valid_up_to()),
            )
        })?;
        let (name, value) = split_line(line).map_err(|r| err(lineno, r))?;
        let first_line_of_file = !seen_first;
        seen_first = true;
        match current.as_mut() {
            None => {
                if first_line_of_file && name.eq_ignore_ascii_case("version") {
                    if value != b"1" {
                        return Err(err(lineno, "unsupported LDIF version".into()));
                    }
                    continue;
                }
                if !name.eq_ignore_ascii_case("dn") {
                    return Err(err(
                        lineno,
                        format!("record must start with 'dn:', found '{name}:'"),
                    ));
                }
                let dn = String::from_utf8(value)
                    .map_err(|_| err(lineno, "DN is not valid UTF-8".into()))?;
                current = Some(LdifRecord {
                    dn,
                    line: lineno,
                    values: Vec::new(),
                });
            }
            Some(rec) => {
                if name.eq_ignore_ascii_case("dn") {
                    return Err(err(
                        lineno,
                        "second 'dn:' in one record (missing blank line?)".into(),
                    ));
                }
                if name.eq_ignore_ascii_case("changetype") {
                    if !value.eq_ignore_ascii_case(b"add") {
                        return Err(err(
                            lineno,
                            format!(
                                "unsupported changetype '{}' (only 'add' is understood)",
                                String::from_utf8_lossy(&value)
                            ),
                        ));
                    }
                    continue;
                }
                rec.values.push((name.to_string(), value, lineno));
            }
        }
    }
    if let Some(r) = current.take() {
        records.push(r);
    }
    Ok(records)
}

/// Splits one logical line into attribute name and (decoded) value.
fn split_line(line: &str) -> Result<(&str, Vec<u8>), String> {
    let colon = line
        .find(':')
        .ok_or_else(|| format!("expected 'attribute: value', found '{}'", clip(line)))?;
    let name = &line[..colon];
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b';' || b == b'.')
    {
        return Err(format!("invalid attribute description '{}'", clip(name)));
    }
    let rest = &line[colon + 1..];
    if let Some(b64) = rest.strip_prefix(':') {
        let b64 = b64.trim_matches(' ');
        let v = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("bad base64 value for '{name}': {e}"))?;
        Ok((name, v))
    } else if rest.starts_with('<') {
        Err(format!("URL values are not supported (attribute '{name}')"))
    } else {
        Ok((name, rest.trim_start_matches(' ').as_bytes().to_vec()))
    }
}

/// Shortens text quoted in error messages.
fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        let mut t: String = s.chars().take(60).collect();
        t.push('…');
        t
    } else {
        s.to_string()
    }
}

/// Reads typed fields out of a record, producing located errors.
struct Fields<'a> {
    rec: &'a LdifRecord,
    file: &'a str,
}

impl<'a> Fields<'a> {
    fn err(&self, line: usize, reason: String) -> SchemaError {
        SchemaError::Malformed {
            file: self.file.to_string(),
            line,
            reason,
        }
    }

    fn text(&self, attr: &str) -> Result<Option<(String, usize)>, SchemaError> {
        match self.rec.first(attr) {
            None => Ok(None),
            Some((v, l)) => String::from_utf8(v.to_vec())
                .map(|s| Some((s, l)))
                .map_err(|_| self.err(l, format!("'{attr}' is not valid UTF-8"))),
        }
    }

    fn required(&self, attr: &str) -> Result<String, SchemaError> {
        self.text(attr)?.map(|(s, _)| s).ok_or_else(|| {
            self.err(
                self.rec.line,
                format!("entry '{}' has no '{attr}'", self.rec.dn),
            )
        })
    }

    fn list(&self, attr: &str) -> Result<Vec<String>, SchemaError> {
        self.rec
            .all(attr)
            .map(|(v, l)| {
                String::from_utf8(v.to_vec())
                    .map_err(|_| self.err(l, format!("'{attr}' is not valid UTF-8")))
            })
            .collect()
    }

    fn boolean(&self, attr: &str) -> Result<bool, SchemaError> {
        match self.text(attr)? {
            None => Ok(false),
            Some((s, l)) => {
                if s.eq_ignore_ascii_case("TRUE") {
                    Ok(true)
                } else if s.eq_ignore_ascii_case("FALSE") {
                    Ok(false)
                } else {
                    Err(self.err(l, format!("'{attr}' must be TRUE or FALSE, found '{s}'")))
                }
            }
        }
    }

    fn int<T: std::str::FromStr>(&self, attr: &str) -> Result<Option<T>, SchemaError> {
        match self.text(attr)? {
            None => Ok(None),
            Some((s, l)) => s
                .trim()
                .parse::<T>()
                .map(Some)
                .map_err(|_| self.err(l, format!("'{attr}' must be an integer, found '{s}'"))),
        }
    }

    fn guid(&self, attr: &str) -> Result<Option<[u8; 16]>, SchemaError> {
        match self.rec.first(attr) {
            None => Ok(None),
            Some((v, l)) => <[u8; 16]>::try_from(v).map(Some).map_err(|_| {
                self.err(
                    l,
                    format!("'{attr}' must be 16 bytes, found {} bytes", v.len()),
                )
            }),
        }
    }

    fn binary(&self, attr: &str) -> Option<Vec<u8>> {
        self.rec.first(attr).map(|(v, _)| v.to_vec())
    }

    /// The `cn`, or the value of the DN's first RDN when `cn` is absent.
    fn cn(&self) -> Result<String, SchemaError> {
        if let Some((cn, _)) = self.text("cn")? {
            return Ok(cn);
        }
        let first = self.rec.dn.split(',').next().unwrap_or_default();
        match first.split_once('=') {
            Some((_, v)) if !v.is_empty() => Ok(v.to_string()),
            _ => Err(self.err(
                self.rec.line,
                format!("cannot find a cn in '{}'", self.rec.dn),
            )),
        }
    }
}

/// Builds an attribute definition from an `attributeSchema` record.
pub fn attribute_from_record(rec: &LdifRecord, file: &str) -> Result<AttributeDef, SchemaError> {
    let f = Fields { rec, file };
    let om_syntax = f
        .int::<i32>("oMSyntax")?
        .ok_or_else(|| f.err(rec.line, format!("entry '{}' has no 'oMSyntax'", rec.dn)))?;
    Ok(AttributeDef {
        ldap_name: f.required("lDAPDisplayName")?,
        cn: f.cn()?,
        attribute_id: f.required("attributeID")?,
        attribute_syntax: f.required("attributeSyntax")?,
        om_syntax,
        om_object_class: f.binary("oMObjectClass"),
        single_valued: f.boolean("isSingleValued")?,
        link_id: f.int("linkID")?,
        search_flags: f.int::<u32>("searchFlags")?.unwrap_or(0),
        system_only: f.boolean("systemOnly")?,
        system_flags: f.int("systemFlags")?.unwrap_or(0),
        range_lower: f.int("rangeLower")?,
        range_upper: f.int("rangeUpper")?,
        schema_id_guid: f.guid("schemaIDGUID")?,
        attribute_security_guid: f.guid("attributeSecurityGUID")?,
        is_member_of_partial_attribute_set: f.boolean("isMemberOfPartialAttributeSet")?,
        show_in_advanced_view_only: f.boolean("showInAdvancedViewOnly")?,
        is_defunct: f.boolean("isDefunct")?,
        admin_description: f.text("adminDescription")?.map(|(s, _)| s),
        int_id: f.int("msDS-IntId")?,
    })
}

/// Builds a class definition from a `classSchema` record.
pub fn class_from_record(rec: &LdifRecord, file: &str) -> Result<ClassDef, SchemaError> {
    let f = Fields { rec, file };
    let category = match f.text("objectClassCategory")? {
        None => 0,
        Some((s, l)) => match s.trim() {
            "0" => 0,
            "1" => 1,
            "2" => 2,
            "3" => 3,
            other => {
                return Err(f.err(
                    l,
                    format!("objectClassCategory must be 0, 1, 2 or 3, found '{other}'"),
                ))
            }
        },
    };
    Ok(ClassDef {
        ldap_name: f.required("lDAPDisplayName")?,
        cn: f.cn()?,
        governs_id: f.required("governsID")?,
        sub_class_of: f.required("subClassOf")?,
        object_class_category: category,
        rdn_att_id: f.text("rDNAttID")?.map(|(s, _)| s),
        must_contain: f.list("mustContain")?,
        may_contain: f.list("mayContain")?,
        system_must_contain: f.list("systemMustContain")?,
        system_may_contain: f.list("systemMayContain")?,
        auxiliary_class: f.list("auxiliaryClass")?,
        system_auxiliary_class: f.list("systemAuxiliaryClass")?,
        poss_superiors: f.list("possSuperiors")?,
        system_poss_superiors: f.list("systemPossSuperiors")?,
        default_object_category: f.text("defaultObjectCategory")?.map(|(s, _)| s),
        default_security_descriptor: f.text("defaultSecurityDescriptor")?.map(|(s, _)| s),
        system_only: f.boolean("systemOnly")?,
        schema_id_guid: f.guid("schemaIDGUID")?,
        default_hiding_value: f.boolean("defaultHidingValue")?,
        system_flags: f.int("systemFlags")?.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_comments_and_base64() {
        let text = b"# a comment\r\n  folded comment\r\nversion: 1\r\n\r\ndn: CN=A,DC=X\r\nchangetype: add\r\ndescription: \r\n hello\r\n  world\r\nblob:: AAEC\r\n\r\n\r\ndn: CN=B,DC=X\nx: y\n";
        let recs = parse_ldif(text, "t.ldf").unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].dn, "CN=A,DC=X");
        assert_eq!(recs[0].line, 5);
        assert_eq!(recs[0].first("DESCRIPTION").unwrap().0, b"hello world");
        assert_eq!(recs[0].first("blob").unwrap().0, &[0u8, 1, 2]);
        assert_eq!(recs[1].first("x").unwrap(), (&b"y"[..], 14));
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse_ldif(b"dn: CN=A\nnonsense\n", "f.ldf").unwrap_err();
        assert!(e.to_string().starts_with("f.ldf:2:"), "{e}");
        let e = parse_ldif(b"dn: CN=A\nchangetype: modify\n", "f.ldf").unwrap_err();
        assert!(e.to_string().contains("modify"), "{e}");
        let e = parse_ldif(b"cn: x\n", "f.ldf").unwrap_err();
        assert!(e.to_string().contains("dn:"), "{e}");
        let e = parse_ldif(b"dn: CN=A\nv:: !!!\n", "f.ldf").unwrap_err();
        assert!(e.to_string().starts_with("f.ldf:2:"), "{e}");
        let e = parse_ldif(b" x\n", "f.ldf").unwrap_err();
        assert!(e.to_string().starts_with("f.ldf:1:"), "{e}");
        let e = parse_ldif(b"dn: CN=A\nv: \xff\n", "f.ldf").unwrap_err();
        assert!(e.to_string().starts_with("f.ldf:2:"), "{e}");
    }

    #[test]
    fn attribute_record_errors() {
        let recs = parse_ldif(
            b"dn: CN=A,DC=X\nlDAPDisplayName: a\nattributeID: 1.2.3\nattributeSyntax: 2.5.5.12\noMSyntax: x64\n",
            "f.ldf",
        )
        .unwrap();
        let e = attribute_from_record(&recs[0], "f.ldf").unwrap_err();
        assert!(e.to_string().starts_with("f.ldf:5:"), "{e}");
    }
}
