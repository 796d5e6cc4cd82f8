//! Reading LDIF (RFC 2849), one record at a time, for `kauri ldif import`: content
//! records and change records (add, delete, modify with RFC 4525's increment, modrdn and
//! moddn), controls, folded lines, comments, base64 values and `file://` URLs. A file of
//! any size is read with only the current record in memory; every error names its line.

use std::collections::hash_map::{Entry, HashMap};
use std::io::BufRead;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

/// Attribute descriptions with their values, in the order first seen.
pub type Attrs = Vec<(String, Vec<Vec<u8>>)>;

/// A control given on a change record (`control: <oid> [criticality] [value]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdifControl {
    /// The control's OID.
    pub oid: String,
    /// Whether it is critical.
    pub critical: bool,
    /// Its value.
    pub value: Option<Vec<u8>>,
}

/// What a modify group does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModOp {
    /// `add:`
    Add,
    /// `delete:`
    Delete,
    /// `replace:`
    Replace,
    /// `increment:` (RFC 4525)
    Increment,
}

/// One group of a modify record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mod {
    /// What to do.
    pub op: ModOp,
    /// The attribute.
    pub attr: String,
    /// The values (none: all, for delete and replace).
    pub values: Vec<Vec<u8>>,
}

/// One LDIF record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// An entry (a file of content records, as `ldif export` writes).
    Content {
        /// The DN.
        dn: String,
        /// The attributes.
        attrs: Attrs,
        /// Controls (content records have none; kept for symmetry).
        controls: Vec<LdifControl>,
    },
    /// `changetype: add`.
    Add {
        /// The DN.
        dn: String,
        /// The attributes.
        attrs: Attrs,
        /// Controls.
        controls: Vec<LdifControl>,
    },
    /// `changetype: delete`.
    Delete {
        /// The DN.
        dn: String,
        /// Controls.
        controls: Vec<LdifControl>,
    },
    /// `changetype: modify`.
    Modify {
        /// The DN.
        dn: String,
        /// The groups, in order.
        mods: Vec<Mod>,
        /// Controls.
        controls: Vec<LdifControl>,
    },
    /// `changetype: modrdn` or `moddn`.
    ModDn {
        /// The DN.
        dn: String,
        /// The new RDN.
        new_rdn: String,
        /// Whether the old RDN's values go.
        delete_old_rdn: bool,
        /// The new parent, for a move.
        new_superior: Option<String>,
        /// Controls.
        controls: Vec<LdifControl>,
    },
}

/// Why an LDIF file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LdifError {
    /// Reading the input failed.
    #[error("line {line}: {source}")]
    Io {
        /// Where.
        line: usize,
        /// Why.
        source: std::io::Error,
    },
    /// The text breaks RFC 2849.
    #[error("line {line}: {message}")]
    Syntax {
        /// Where.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

fn syntax(line: usize, message: impl Into<String>) -> LdifError {
    LdifError::Syntax {
        line,
        message: message.into(),
    }
}

/// Whether the file holds content records or change records (RFC 2849 allows one kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Content,
    Changes,
}

/// Reads records from a buffered input.
pub struct LdifReader<R: BufRead> {
    input: R,
    line: usize,
    /// A line read ahead (the one after a folded line's continuations), with its number.
    ahead: Option<(Vec<u8>, usize)>,
    first: bool,
    kind: Option<FileKind>,
    record_line: usize,
    done: bool,
}

/// One logical line: continuations joined, with the number of its first physical line.
struct Line {
    text: Vec<u8>,
    number: usize,
}

impl<R: BufRead> LdifReader<R> {
    /// A reader of `input`.
    pub fn new(input: R) -> LdifReader<R> {
        LdifReader {
            input,
            line: 0,
            ahead: None,
            first: true,
            kind: None,
            record_line: 0,
            done: false,
        }
    }

    /// The line the record returned last starts on.
    pub fn last_record_line(&self) -> usize {
        self.record_line
    }

    /// The next physical line without its line ending, or `None` at the end.
    fn physical(&mut self) -> Result<Option<(Vec<u8>, usize)>, LdifError> {
        if let Some(l) = self.ahead.take() {
            return Ok(Some(l));
        }
        let mut buf = Vec::new();
        let n = self
            .input
            .read_until(b'\n', &mut buf)
            .map_err(|source| LdifError::Io {
                line: self.line + 1,
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if buf.ends_with(b"\n") {
            buf.pop();
            if buf.ends_with(b"\r") {
                buf.pop();
            }
        }
        Ok(Some((buf, self.line)))
    }

    /// The next logical line (folded lines joined); comments are skipped; an empty line
    /// is returned as empty text.
    fn logical(&mut self) -> Result<Option<Line>, LdifError> {
        loop {
            let Some((mut text, number)) = self.physical()? else {
                return Ok(None);
            };
            if text.first() == Some(&b' ') {
                return Err(syntax(
                    number,
                    "a continued line follows no line to continue",
                ));
            }
            // Join continuations: lines starting with exactly one space.
            loop {
                match self.physical()? {
                    Some((next, _)) if next.first() == Some(&b' ') => {
                        text.extend_from_slice(&next[1..]);
                    }
                    Some(other) => {
                        self.ahead = Some(other);
                        break;
                    }
                    None => break,
                }
            }
            if text.first() == Some(&b'#') {
                continue;
            }
            return Ok(Some(Line { text, number }));
        }
    }

    /// The lines of the next record, blank lines before it skipped.
    fn record_lines(&mut self) -> Result<Vec<Line>, LdifError> {
        let mut lines = Vec::new();
        loop {
            match self.logical()? {
                None => return Ok(lines),
                Some(l) if l.text.is_empty() => {
                    if !lines.is_empty() {
                        return Ok(lines);
                    }
                }
                Some(l) => lines.push(l),
            }
        }
    }

    /// The next record, or `None` at the end of the input.
    pub fn next_record(&mut self) -> Result<Option<Record>, LdifError> {
        if self.done {
            return Ok(None);
        }
        let mut lines = self.record_lines()?;
        if self.first {
            self.first = false;
            if let Some(l) = lines.first() {
                let (name, value) = split(l)?;
                if name.eq_ignore_ascii_case("version") {
                    if value != b"1" {
                        return Err(syntax(
                            l.number,
                            format!(
                                "LDIF version {} is not supported (only 1)",
                                String::from_utf8_lossy(&value)
                            ),
                        ));
                    }
                    lines.remove(0);
                    if lines.is_empty() {
                        lines = self.record_lines()?;
                    }
                }
            }
        }
        if lines.is_empty() {
            self.done = true;
            return Ok(None);
        }
        self.record_line = lines[0].number;
        let record = parse_record(&lines)?;
        let kind = match record {
            Record::Content { .. } => FileKind::Content,
            _ => FileKind::Changes,
        };
        match self.kind {
            None => self.kind = Some(kind),
            Some(k) if k != kind => {
                return Err(syntax(
                    self.record_line,
                    "content records and change records cannot be mixed in one file",
                ))
            }
            Some(_) => {}
        }
        Ok(Some(record))
    }
}

impl<R: BufRead> Iterator for LdifReader<R> {
    type Item = Result<Record, LdifError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// A line's name and value: `name: text`, `name:: base64` or `name:< file://…`.
fn split(l: &Line) -> Result<(String, Vec<u8>), LdifError> {
    let colon = l
        .text
        .iter()
        .position(|b| *b == b':')
        .ok_or_else(|| syntax(l.number, "a line without a colon"))?;
    let name = std::str::from_utf8(&l.text[..colon])
        .map_err(|_| syntax(l.number, "an attribute name that is not ASCII"))?;
    if name.is_empty() {
        return Err(syntax(l.number, "a value line without an attribute name"));
    }
    let valid = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b';' || b == b'.');
    if !valid {
        return Err(syntax(
            l.number,
            format!("{name:?} is not an attribute description"),
        ));
    }
    let rest = &l.text[colon + 1..];
    let trimmed = |r: &[u8]| -> Vec<u8> {
        let start = r.iter().position(|b| *b != b' ').unwrap_or(r.len());
        r[start..].to_vec()
    };
    let value = match rest.first() {
        Some(b':') => {
            let text = trimmed(&rest[1..]);
            B64.decode(&text)
                .map_err(|e| syntax(l.number, format!("{name}: bad base64 ({e})")))?
        }
        Some(b'<') => {
            let url = trimmed(&rest[1..]);
            let url = String::from_utf8(url)
                .map_err(|_| syntax(l.number, format!("{name}: the URL is not UTF-8")))?;
            read_url(&url).map_err(|m| syntax(l.number, format!("{name}: {m}")))?
        }
        _ => trimmed(rest),
    };
    Ok((name.to_string(), value))
}

/// The bytes a `file://` URL names. Only a regular file is read: a device such as
/// `/dev/zero` never ends and a FIFO may never answer.
fn read_url(url: &str) -> Result<Vec<u8>, String> {
    let Some(path) = url
        .strip_prefix("file://")
        .or_else(|| url.strip_prefix("file:"))
    else {
        return Err(format!("{url}: only file:// URLs are supported"));
    };
    // Opened once and checked on the handle, so the file cannot be swapped for a device
    // between the check and the read; without blocking, so a FIFO does not hang the open.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let mut file = options.open(path).map_err(|e| format!("{url}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{url}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{url}: not a regular file"));
    }
    let mut out = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0).min(1 << 20));
    std::io::Read::read_to_end(&mut file, &mut out).map_err(|e| format!("{url}: {e}"))?;
    Ok(out)
}

fn text(l: &Line, value: Vec<u8>, what: &str) -> Result<String, LdifError> {
    String::from_utf8(value).map_err(|_| syntax(l.number, format!("{what} is not UTF-8")))
}

/// A record's attributes as they are read: values of one attribute (names compared
/// without case) grouped in the order first seen. Groups are found by hash, so a record
/// of many attributes reads in time linear in its size.
#[derive(Default)]
struct Grouped {
    attrs: Attrs,
    index: HashMap<String, usize>,
}

impl Grouped {
    fn push(&mut self, name: String, value: Vec<u8>) {
        match self.index.entry(name.to_ascii_lowercase()) {
            Entry::Occupied(at) => {
                if let Some((_, values)) = self.attrs.get_mut(*at.get()) {
                    values.push(value);
                }
            }
            Entry::Vacant(at) => {
                at.insert(self.attrs.len());
                self.attrs.push((name, vec![value]));
            }
        }
    }
}

fn parse_record(lines: &[Line]) -> Result<Record, LdifError> {
    let first = &lines[0];
    let (name, value) = split(first)?;
    if !name.eq_ignore_ascii_case("dn") {
        return Err(syntax(first.number, "a record must start with dn:"));
    }
    let dn = text(first, value, "the DN")?;
    let mut rest = lines[1..].iter().peekable();
    let mut controls = Vec::new();
    let mut changetype: Option<String> = None;
    while let Some(l) = rest.peek() {
        let (name, value) = split(l)?;
        if name.eq_ignore_ascii_case("control") {
            controls.push(parse_control(l, value)?);
            rest.next();
        } else if name.eq_ignore_ascii_case("changetype") {
            changetype = Some(text(l, value, "the changetype")?.to_ascii_lowercase());
            rest.next();
            break;
        } else {
            break;
        }
    }
    let rest: Vec<&Line> = rest.collect();
    match changetype.as_deref() {
        None => {
            if !controls.is_empty() {
                return Err(syntax(first.number, "controls need a changetype"));
            }
            let mut attrs = Grouped::default();
            for l in rest {
                let (n, v) = split(l)?;
                attrs.push(n, v);
            }
            Ok(Record::Content {
                dn,
                attrs: attrs.attrs,
                controls,
            })
        }
        Some("add") => {
            let mut attrs = Grouped::default();
            for l in rest {
                let (n, v) = split(l)?;
                attrs.push(n, v);
            }
            if attrs.attrs.is_empty() {
                return Err(syntax(first.number, "an add record without attributes"));
            }
            Ok(Record::Add {
                dn,
                attrs: attrs.attrs,
                controls,
            })
        }
        Some("delete") => {
            if let Some(l) = rest.first() {
                return Err(syntax(l.number, "a delete record has no more lines"));
            }
            Ok(Record::Delete { dn, controls })
        }
        Some("modrdn" | "moddn") => {
            let mut new_rdn = None;
            let mut delete_old = None;
            let mut new_superior = None;
            for l in rest {
                let (n, v) = split(l)?;
                match n.to_ascii_lowercase().as_str() {
                    "newrdn" => new_rdn = Some(text(l, v, "newrdn")?),
                    "deleteoldrdn" => {
                        delete_old = Some(match v.as_slice() {
                            b"0" => false,
                            b"1" => true,
                            _ => return Err(syntax(l.number, "deleteoldrdn must be 0 or 1")),
                        })
                    }
                    "newsuperior" => new_superior = Some(text(l, v, "newsuperior")?),
                    other => {
                        return Err(syntax(
                            l.number,
                            format!("{other}: not part of a modrdn record"),
                        ))
                    }
                }
            }
            Ok(Record::ModDn {
                dn,
                new_rdn: new_rdn.ok_or_else(|| syntax(first.number, "modrdn without newrdn"))?,
                delete_old_rdn: delete_old
                    .ok_or_else(|| syntax(first.number, "modrdn without deleteoldrdn"))?,
                new_superior,
                controls,
            })
        }
        Some("modify") => {
            let mut mods = Vec::new();
            let mut current: Option<Mod> = None;
            for l in rest {
                if l.text == b"-" {
                    match current.take() {
                        Some(m) => mods.push(m),
                        None => return Err(syntax(l.number, "a '-' without a group before it")),
                    }
                    continue;
                }
                let (n, v) = split(l)?;
                match &mut current {
                    None => {
                        let op = match n.to_ascii_lowercase().as_str() {
                            "add" => ModOp::Add,
                            "delete" => ModOp::Delete,
                            "replace" => ModOp::Replace,
                            "increment" => ModOp::Increment,
                            other => {
                                return Err(syntax(
                                    l.number,
                                    format!("{other}: expected add, delete, replace or increment"),
                                ))
                            }
                        };
                        current = Some(Mod {
                            op,
                            attr: text(l, v, "the attribute")?,
                            values: Vec::new(),
                        });
                    }
                    Some(m) => {
                        if !n.eq_ignore_ascii_case(&m.attr) {
                            return Err(syntax(
                                l.number,
                                format!("{n}: this group changes {}", m.attr),
                            ));
                        }
                        m.values.push(v);
                    }
                }
            }
            // The last group's '-' may be left out at the end of the record.
            if let Some(m) = current {
                mods.push(m);
            }
            Ok(Record::Modify { dn, mods, controls })
        }
        Some(other) => Err(syntax(
            first.number,
            format!("changetype {other} is not add, delete, modify, modrdn or moddn"),
        )),
    }
}

/// `control: <oid> [true|false] [: value | :: base64]`.
fn parse_control(l: &Line, value: Vec<u8>) -> Result<LdifControl, LdifError> {
    let text = text(l, value, "the control")?;
    let (spec, value) = match text.split_once(':') {
        Some((spec, v)) => {
            let value = match v.strip_prefix(':') {
                Some(b) => B64
                    .decode(b.trim())
                    .map_err(|e| syntax(l.number, format!("control value: bad base64 ({e})")))?,
                None => v.trim_start().as_bytes().to_vec(),
            };
            (spec, Some(value))
        }
        None => (text.as_str(), None),
    };
    let mut words = spec.split_whitespace();
    let oid = words
        .next()
        .ok_or_else(|| syntax(l.number, "a control without an OID"))?
        .to_string();
    let critical = match words.next() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(syntax(
                l.number,
                format!("control criticality {other:?} is not true or false"),
            ))
        }
    };
    Ok(LdifControl {
        oid,
        critical,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Record>, LdifError> {
        LdifReader::new(text.as_bytes()).collect()
    }

    fn attrs(pairs: &[(&str, &[&[u8]])]) -> Attrs {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.iter().map(|x| x.to_vec()).collect()))
            .collect()
    }

    #[test]
    fn content_records_with_folding_comments_base64_and_crlf() {
        let text = "version: 1\r\n# a comment\r\n#  folded\r\n  comment\r\ndn: cn=Ann Lee,\r\n ou=People,dc=example\r\ncn: Ann Lee\r\ndescription:: \r\n IGxlYWRpbmcgc3BhY2U=\r\ncn: Ann\r\nsn:    Lee\r\n\r\n\r\ndn:: Y249w4lsb2RpZSxkYz1leGFtcGxl\r\ncn: \u{c9}lodie\r\n";
        let got = read(text).unwrap();
        assert_eq!(
            got,
            vec![
                Record::Content {
                    dn: "cn=Ann Lee,ou=People,dc=example".into(),
                    attrs: attrs(&[
                        ("cn", &[b"Ann Lee", b"Ann"]),
                        ("description", &[b" leading space"]),
                        ("sn", &[b"Lee"]),
                    ]),
                    controls: vec![],
                },
                Record::Content {
                    dn: "cn=\u{c9}lodie,dc=example".into(),
                    attrs: attrs(&[("cn", &["\u{c9}lodie".as_bytes()])]),
                    controls: vec![],
                },
            ]
        );
    }

    #[test]
    fn change_records_of_every_kind() {
        let text = "dn: cn=a,dc=x\ncontrol: 1.2.840.113556.1.4.805 true\nchangetype: delete\n\n\
dn: cn=b,dc=x\nchangetype: add\nobjectClass: person\ncn: b\n\n\
dn: cn=c,dc=x\nchangetype: modify\nadd: member\nmember: cn=b,dc=x\nmember: cn=d,dc=x\n-\ndelete: description\n-\nreplace: telephoneNumber\ntelephoneNumber: 1\n-\nincrement: uidNumber\nuidNumber: 5\n-\n\n\
dn: cn=d,dc=x\nchangetype: moddn\nnewrdn: cn=e\ndeleteoldrdn: 1\nnewsuperior: ou=y,dc=x\n\n\
dn: cn=f,dc=x\ncontrol: 1.2.3 false:: AAE=\nchangetype: modrdn\nnewrdn: cn=g\ndeleteoldrdn: 0\n";
        let got = read(text).unwrap();
        assert_eq!(got.len(), 5);
        assert_eq!(
            got[0],
            Record::Delete {
                dn: "cn=a,dc=x".into(),
                controls: vec![LdifControl {
                    oid: "1.2.840.113556.1.4.805".into(),
                    critical: true,
                    value: None
                }]
            }
        );
        assert!(matches!(&got[1], Record::Add { attrs, .. } if attrs.len() == 2));
        let Record::Modify { mods, .. } = &got[2] else {
            panic!("{:?}", got[2]);
        };
        assert_eq!(mods.len(), 4);
        assert_eq!(mods[0].op, ModOp::Add);
        assert_eq!(mods[0].values.len(), 2);
        assert_eq!(mods[1].op, ModOp::Delete);
        assert!(mods[1].values.is_empty());
        assert_eq!(mods[3].op, ModOp::Increment);
        assert_eq!(
            got[3],
            Record::ModDn {
                dn: "cn=d,dc=x".into(),
                new_rdn: "cn=e".into(),
                delete_old_rdn: true,
                new_superior: Some("ou=y,dc=x".into()),
                controls: vec![]
            }
        );
        let Record::ModDn { controls, .. } = &got[4] else {
            panic!()
        };
        assert_eq!(controls[0].value.as_deref(), Some(&[0u8, 1][..]));
    }

    #[test]
    fn file_urls_are_read() {
        let path = std::env::temp_dir().join(format!("kauri-ldif-{}", std::process::id()));
        std::fs::write(&path, [0u8, 1, 2, 255]).unwrap();
        let text = format!("dn: cn=p,dc=x\njpegPhoto:< file://{}\n", path.display());
        let got = read(&text).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            got[0],
            Record::Content {
                dn: "cn=p,dc=x".into(),
                attrs: attrs(&[("jpegPhoto", &[&[0u8, 1, 2, 255]])]),
                controls: vec![]
            }
        );
        let e = read("dn: cn=p,dc=x\njpegPhoto:< http://example.com/x\n").unwrap_err();
        assert!(e.to_string().contains("only file:// URLs"), "{e}");
        // A device never ends: refused, not read until memory runs out.
        for url in ["file:///dev/zero", "file:///"] {
            let e = read(&format!("dn: cn=p,dc=x\njpegPhoto:< {url}\n")).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        // Nor a FIFO nobody writes to, which must not hang the reader on its open.
        #[cfg(unix)]
        {
            let dir = tempfile::tempdir().unwrap();
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let url = format!("file://{}", fifo.display());
            let e = read(&format!("dn: cn=p,dc=x\njpegPhoto:< {url}\n")).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
    }

    #[test]
    fn many_attributes_read_in_linear_time() {
        // Grouping values by attribute once compared each new name with every earlier
        // one: a record of 30,000 attributes (290 KB) took 40 s to read.
        let n = 100_000;
        let mut text = String::from("dn: cn=x\n");
        for i in 0..n {
            text.push_str(&format!("a{i}: v\nA{i}: w\n"));
        }
        let got = read(&text).unwrap();
        let Record::Content { attrs, .. } = &got[0] else {
            panic!("a content record")
        };
        assert_eq!(attrs.len(), n);
        assert_eq!(
            attrs[n - 1],
            (format!("a{}", n - 1), vec![b"v".to_vec(), b"w".to_vec()])
        );
    }

    #[test]
    fn errors_name_their_line() {
        let cases = [
            ("cn: x\n", "line 1", "must start with dn"),
            ("dn: cn=x\nno colon here\n", "line 2", "without a colon"),
            ("dn: cn=x\n: value\n", "line 2", "without an attribute name"),
            ("dn: cn=x\ncn:: !!!\n", "line 2", "bad base64"),
            ("version: 2\n\ndn: cn=x\n", "line 1", "version 2"),
            (
                "dn: cn=x\nchangetype: modify\nadd: cn\nsn: y\n-\n",
                "line 4",
                "changes cn",
            ),
            ("dn: cn=x\nchangetype: explode\n", "line 1", "explode"),
            (
                "dn: cn=x\nchangetype: delete\ncn: y\n",
                "line 3",
                "no more lines",
            ),
            (
                "dn: cn=x\ncn: a\n\ndn: cn=y\nchangetype: delete\n",
                "line 4",
                "mixed",
            ),
            (" dn: cn=x\n", "line 1", "continued line"),
            ("dn:: //8=\n", "line 1", "not UTF-8"),
            (
                "dn: cn=x\nchangetype: modrdn\nnewrdn: cn=y\n",
                "line 1",
                "deleteoldrdn",
            ),
        ];
        for (text, line, what) in cases {
            let e = read(text).unwrap_err().to_string();
            assert!(e.starts_with(line) && e.contains(what), "{text:?}: {e}");
        }
        assert!(read("").unwrap().is_empty());
        assert!(read("\n\n# only a comment\n").unwrap().is_empty());
    }

    #[test]
    fn what_the_writer_writes_reads_back() {
        let values: Vec<&[u8]> = vec![
            b"plain",
            b" leading space",
            b"trailing space ",
            b":colon first",
            b"<angle first",
            b"with\0nul",
            "M\u{101}ori".as_bytes(),
            &[0xff, 0xfe, 0x00, 0x80],
            b"",
        ];
        let entry = attrs(&[("cn", &values[..]), ("objectClass", &[b"top", b"person"])]);
        let mut out = Vec::new();
        crate::ldif::write_entry(&mut out, "cn=x,dc=example", &entry).unwrap();
        crate::ldif::write_entry(&mut out, "cn=\u{e9},dc=example", &entry).unwrap();
        let got = read(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(got.len(), 2);
        for r in got {
            let Record::Content { attrs, .. } = r else {
                panic!()
            };
            assert_eq!(attrs, entry);
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"dn: cn=x,\n-:<# changetypemodifyaddelete\r\x00\xff=1";
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 200) as usize;
            let mut bytes = Vec::with_capacity(len);
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bytes.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            for r in LdifReader::new(bytes.as_slice()) {
                let _ = r;
            }
        }
    }
}
