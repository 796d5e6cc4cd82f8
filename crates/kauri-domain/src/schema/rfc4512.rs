//! RFC 4512 schema descriptions, as published in the aggregate subschema
//! entry (`CN=Aggregate,CN=Schema,CN=Configuration,…`).
//!
//! The rendering follows what AD publishes: the numeric OID, one quoted
//! `NAME`, the syntax OID of [`super::syntax::AdSyntax::ldap_syntax_oid`]
//! in single quotes, `SINGLE-VALUE` for single-valued attributes and
//! `NO-USER-MODIFICATION` for system-only ones, e.g.
//!
//! ```text
//! ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' SYNTAX '1.3.6.1.4.1.1466.115.121.1.15' SINGLE-VALUE )
//! ```
//!
//! Classes name their superclass, kind (88-classes have none), and their
//! own (not inherited) mandatory and optional attributes, system and
//! non-system together:
//!
//! ```text
//! ( 1.2.840.113556.1.5.9 NAME 'user' SUP organizationalPerson STRUCTURAL MAY ( … ) )
//! ```
//!
//! Auxiliary classes are published as `dITContentRules` of the structural
//! classes that carry them. A small parser reads such descriptions back.

use super::syntax::ldap_syntax_oid;
use super::{AttributeDef, ClassCategory, ClassDef};

/// Appends ` KEYWORD list` in RFC 4512 `oids` form; nothing for an empty list.
fn push_oids<'a>(out: &mut String, keyword: &str, names: impl IntoIterator<Item = &'a str>) {
    let names: Vec<&str> = names.into_iter().collect();
    match names.as_slice() {
        [] => {}
        [one] => {
            out.push_str(&format!(" {keyword} {one}"));
        }
        many => {
            out.push_str(&format!(" {keyword} ( {} )", many.join(" $ ")));
        }
    }
}

/// The `attributeTypes` value of an attribute.
pub fn attribute_type(attr: &AttributeDef) -> String {
    let mut out = format!(
        "( {} NAME '{}' SYNTAX '{}'",
        attr.attribute_id,
        attr.ldap_name,
        ldap_syntax_oid(attr)
    );
    if attr.single_valued {
        out.push_str(" SINGLE-VALUE");
    }
    if attr.system_only {
        out.push_str(" NO-USER-MODIFICATION");
    }
    out.push_str(" )");
    out
}

/// The `objectClasses` value of a class.
pub fn object_class(class: &ClassDef) -> String {
    let mut out = format!("( {} NAME '{}'", class.governs_id, class.ldap_name);
    if !class.sub_class_of.eq_ignore_ascii_case(&class.ldap_name) {
        out.push_str(&format!(" SUP {}", class.sub_class_of));
    }
    match class.category() {
        ClassCategory::Structural => out.push_str(" STRUCTURAL"),
        ClassCategory::Abstract => out.push_str(" ABSTRACT"),
        ClassCategory::Auxiliary => out.push_str(" AUXILIARY"),
        ClassCategory::Class88 => {}
    }
    push_oids(
        &mut out,
        "MUST",
        class
            .system_must_contain
            .iter()
            .chain(&class.must_contain)
            .map(String::as_str),
    );
    push_oids(
        &mut out,
        "MAY",
        class
            .system_may_contain
            .iter()
            .chain(&class.may_contain)
            .map(String::as_str),
    );
    out.push_str(" )");
    out
}

/// The `dITContentRules` value of a class: the auxiliary classes its
/// instances may carry. `None` when it has none or is not instantiable.
pub fn dit_content_rule(class: &ClassDef) -> Option<String> {
    if matches!(
        class.category(),
        ClassCategory::Abstract | ClassCategory::Auxiliary
    ) {
        return None;
    }
    let aux: Vec<&str> = class
        .system_auxiliary_class
        .iter()
        .chain(&class.auxiliary_class)
        .map(String::as_str)
        .collect();
    if aux.is_empty() {
        return None;
    }
    let mut out = format!("( {} NAME '{}'", class.governs_id, class.ldap_name);
    push_oids(&mut out, "AUX", aux);
    out.push_str(" )");
    Some(out)
}

/// A parsed `attributeTypes` value (RFC 4512 section 4.1.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttributeTypeDescription {
    /// The numeric OID.
    pub oid: String,
    /// The names (`NAME`).
    pub names: Vec<String>,
    /// `DESC`.
    pub desc: Option<String>,
    /// `OBSOLETE` present.
    pub obsolete: bool,
    /// `SUP`.
    pub sup: Option<String>,
    /// `EQUALITY`.
    pub equality: Option<String>,
    /// `ORDERING`.
    pub ordering: Option<String>,
    /// `SUBSTR`.
    pub substr: Option<String>,
    /// `SYNTAX` without quotes or length bound.
    pub syntax: Option<String>,
    /// `SINGLE-VALUE` present.
    pub single_value: bool,
    /// `COLLECTIVE` present.
    pub collective: bool,
    /// `NO-USER-MODIFICATION` present.
    pub no_user_modification: bool,
    /// `USAGE`.
    pub usage: Option<String>,
}

/// A parsed `objectClasses` value (RFC 4512 section 4.1.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectClassDescription {
    /// The numeric OID.
    pub oid: String,
    /// The names (`NAME`).
    pub names: Vec<String>,
    /// `DESC`.
    pub desc: Option<String>,
    /// `OBSOLETE` present.
    pub obsolete: bool,
    /// Superclasses (`SUP`).
    pub sup: Vec<String>,
    /// `ABSTRACT`, `STRUCTURAL` or `AUXILIARY`, if given.
    pub kind: Option<String>,
    /// `MUST` attributes.
    pub must: Vec<String>,
    /// `MAY` attributes.
    pub may: Vec<String>,
}

/// A description that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid schema description: {0}")]
pub struct DescriptionError(pub String);

/// Lexical tokens of a description.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Open,
    Close,
    Dollar,
    Quoted(String),
    Word(String),
}

/// Splits a description into tokens.
fn tokenize(s: &str) -> Result<Vec<Token>, DescriptionError> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' | '\r' | '\n' => {}
            '(' => out.push(Token::Open),
            ')' => out.push(Token::Close),
            '$' => out.push(Token::Dollar),
            '\'' => {
                let mut text = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '\'' {
                        closed = true;
                        break;
                    }
                    text.push(c);
                }
                if !closed {
                    return Err(DescriptionError(format!("unterminated quote at {i}")));
                }
                out.push(Token::Quoted(text));
            }
            _ => {
                let mut word = String::from(c);
                while let Some(&(_, c)) = chars.peek() {
                    if matches!(c, ' ' | '\t' | '\r' | '\n' | '(' | ')' | '$' | '\'') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                out.push(Token::Word(word));
            }
        }
    }
    Ok(out)
}

/// A cursor over tokens with the grammar's building blocks.
struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn new(s: &str) -> Result<Parser, DescriptionError> {
        let tokens = tokenize(s)?;
        let mut p = Parser { tokens, pos: 0 };
        if p.next() != Some(Token::Open) {
            return Err(DescriptionError("must start with '('".into()));
        }
        if p.tokens.last() != Some(&Token::Close) {
            return Err(DescriptionError("must end with ')'".into()));
        }
        p.tokens.pop();
        Ok(p)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn word(&mut self, what: &str) -> Result<String, DescriptionError> {
        match self.next() {
            Some(Token::Word(w)) => Ok(w),
            other => Err(DescriptionError(format!(
                "expected {what}, found {other:?}"
            ))),
        }
    }

    fn quoted(&mut self, what: &str) -> Result<String, DescriptionError> {
        match self.next() {
            Some(Token::Quoted(w)) => Ok(w),
            other => Err(DescriptionError(format!(
                "expected {what}, found {other:?}"
            ))),
        }
    }

    /// `qdescrs`: one quoted name or a parenthesized list of them.
    fn qdescrs(&mut self) -> Result<Vec<String>, DescriptionError> {
        match self.next() {
            Some(Token::Quoted(q)) => Ok(vec![q]),
            Some(Token::Open) => {
                let mut out = Vec::new();
                loop {
                    match self.next() {
                        Some(Token::Quoted(q)) => out.push(q),
                        Some(Token::Close) => return Ok(out),
                        other => {
                            return Err(DescriptionError(format!(
                                "expected a quoted name, found {other:?}"
                            )))
                        }
                    }
                }
            }
            other => Err(DescriptionError(format!(
                "expected NAME value, found {other:?}"
            ))),
        }
    }

    /// `oids`: one oid or a `$`-separated parenthesized list.
    fn oids(&mut self) -> Result<Vec<String>, DescriptionError> {
        match self.next() {
            Some(Token::Word(w)) => Ok(vec![w]),
            Some(Token::Open) => {
                let mut out = Vec::new();
                loop {
                    match self.next() {
                        Some(Token::Word(w)) => out.push(w),
                        Some(Token::Dollar) => {}
                        Some(Token::Close) => return Ok(out),
                        other => {
                            return Err(DescriptionError(format!(
                                "expected an oid, found {other:?}"
                            )))
                        }
                    }
                }
            }
            other => Err(DescriptionError(format!("expected oids, found {other:?}"))),
        }
    }

    /// A `SYNTAX` value, quoted (as AD writes it) or not, without `{len}`.
    fn syntax(&mut self) -> Result<String, DescriptionError> {
        let s = match self.next() {
            Some(Token::Word(w)) | Some(Token::Quoted(w)) => w,
            other => {
                return Err(DescriptionError(format!(
                    "expected SYNTAX, found {other:?}"
                )))
            }
        };
        Ok(s.split('{').next().unwrap_or_default().to_string())
    }

    /// Skips the value of an `X-…` extension.
    fn skip_extension(&mut self) -> Result<(), DescriptionError> {
        self.qdescrs().map(|_| ())
    }
}

/// Parses an `attributeTypes` value.
pub fn parse_attribute_type(s: &str) -> Result<AttributeTypeDescription, DescriptionError> {
    let mut p = Parser::new(s)?;
    let mut d = AttributeTypeDescription {
        oid: p.word("numeric OID")?,
        ..Default::default()
    };
    while let Some(t) = p.next() {
        let Token::Word(kw) = t else {
            return Err(DescriptionError(format!("unexpected {t:?}")));
        };
        match kw.as_str() {
            "NAME" => d.names = p.qdescrs()?,
            "DESC" => d.desc = Some(p.quoted("DESC value")?),
            "OBSOLETE" => d.obsolete = true,
            "SUP" => d.sup = Some(p.word("SUP value")?),
            "EQUALITY" => d.equality = Some(p.word("EQUALITY value")?),
            "ORDERING" => d.ordering = Some(p.word("ORDERING value")?),
            "SUBSTR" => d.substr = Some(p.word("SUBSTR value")?),
            "SYNTAX" => d.syntax = Some(p.syntax()?),
            "SINGLE-VALUE" => d.single_value = true,
            "COLLECTIVE" => d.collective = true,
            "NO-USER-MODIFICATION" => d.no_user_modification = true,
            "USAGE" => d.usage = Some(p.word("USAGE value")?),
            x if x.starts_with("X-") => p.skip_extension()?,
            other => return Err(DescriptionError(format!("unknown keyword '{other}'"))),
        }
    }
    Ok(d)
}

/// Parses an `objectClasses` value.
pub fn parse_object_class(s: &str) -> Result<ObjectClassDescription, DescriptionError> {
    let mut p = Parser::new(s)?;
    let mut d = ObjectClassDescription {
        oid: p.word("numeric OID")?,
        ..Default::default()
    };
    while let Some(t) = p.next() {
        let Token::Word(kw) = t else {
            return Err(DescriptionError(format!("unexpected {t:?}")));
        };
        match kw.as_str() {
            "NAME" => d.names = p.qdescrs()?,
            "DESC" => d.desc = Some(p.quoted("DESC value")?),
            "OBSOLETE" => d.obsolete = true,
            "SUP" => d.sup = p.oids()?,
            "ABSTRACT" | "STRUCTURAL" | "AUXILIARY" => d.kind = Some(kw),
            "MUST" => d.must = p.oids()?,
            "MAY" => d.may = p.oids()?,
            x if x.starts_with("X-") => p.skip_extension()?,
            other => return Err(DescriptionError(format!("unknown keyword '{other}'"))),
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sam() -> AttributeDef {
        AttributeDef {
            ldap_name: "sAMAccountName".into(),
            cn: "SAM-Account-Name".into(),
            attribute_id: "1.2.840.113556.1.4.221".into(),
            attribute_syntax: "2.5.5.12".into(),
            om_syntax: 64,
            om_object_class: None,
            single_valued: true,
            link_id: None,
            search_flags: 13,
            system_only: false,
            system_flags: 16,
            range_lower: Some(0),
            range_upper: Some(256),
            schema_id_guid: None,
            attribute_security_guid: None,
            is_member_of_partial_attribute_set: true,
            show_in_advanced_view_only: true,
            is_defunct: false,
            admin_description: None,
            int_id: None,
        }
    }

    #[test]
    fn renders_like_ad() {
        assert_eq!(
            attribute_type(&sam()),
            "( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' SYNTAX '1.3.6.1.4.1.1466.115.121.1.15' SINGLE-VALUE )"
        );
        let mut a = sam();
        a.system_only = true;
        a.single_valued = false;
        assert!(
            attribute_type(&a).ends_with("'1.3.6.1.4.1.1466.115.121.1.15' NO-USER-MODIFICATION )")
        );
    }

    #[test]
    fn parses_standard_forms() {
        let d = parse_attribute_type(
            "( 2.5.4.3 NAME ( 'cn' 'commonName' ) DESC 'x y' SUP name SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{64} X-ORIGIN 'RFC 4519' )",
        )
        .unwrap();
        assert_eq!(d.names, ["cn", "commonName"]);
        assert_eq!(d.sup.as_deref(), Some("name"));
        assert_eq!(d.syntax.as_deref(), Some("1.3.6.1.4.1.1466.115.121.1.15"));
        let c = parse_object_class(
            "( 2.5.6.6 NAME 'person' SUP top STRUCTURAL MUST ( sn $ cn ) MAY description )",
        )
        .unwrap();
        assert_eq!(c.must, ["sn", "cn"]);
        assert_eq!(c.may, ["description"]);
        assert_eq!(c.kind.as_deref(), Some("STRUCTURAL"));
        assert!(parse_attribute_type("( 1.2 NAME 'x' BOGUS )").is_err());
        assert!(parse_attribute_type("1.2 NAME 'x'").is_err());
        assert!(parse_attribute_type("( 1.2 NAME 'x )").is_err());
    }
}
