//! Reading the log back: the files of a log in time order, each line parsed and tested
//! against a [`Filter`], and a [`Follower`] that keeps reading lines as they are appended
//! and carries on across rotations. This is what `kauri audit` is made of; it is here so
//! other tools (and tests) read the log the same way.
//!
//! A log is a folder holding the current file (`audit.log`) and the files rotated out of
//! it (`audit-20261127T010203.log`, `audit-20261127T010203.1.log` when two rotations fall
//! in one second), named by the UTC second they were rotated at.

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::event::{AuditEvent, Category, Outcome};
use crate::time::Timestamp;
use crate::AuditError;

/// The files of one log: the current file and its rotated predecessors beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSet {
    dir: PathBuf,
    stem: String,
    ext: String,
}

/// A file rotated out of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotatedFile {
    /// Where it is.
    pub path: PathBuf,
    /// When it was rotated (to the second): every event in it is older.
    pub rotated: Timestamp,
    /// Its place among files rotated in the same second (0 for the first).
    pub seq: u32,
}

impl LogSet {
    /// The log whose current file is `path` (e.g. `/srv/kauri/audit/audit.log`).
    pub fn for_file(path: &Path) -> LogSet {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "audit".into());
        let ext = path
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        LogSet { dir, stem, ext }
    }

    /// The log at `path`: a folder (holding `audit.log`) or a log file. An error when
    /// neither the path nor the folder it would be in exists.
    pub fn open(path: &Path) -> Result<LogSet, AuditError> {
        if path.is_dir() {
            return Ok(LogSet::for_file(&path.join("audit.log")));
        }
        let set = LogSet::for_file(path);
        if path.exists() || set.dir.is_dir() {
            return Ok(set);
        }
        Err(AuditError::io(
            path,
            std::io::Error::new(ErrorKind::NotFound, "no audit log there"),
        ))
    }

    /// The folder the files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current file, the one being written.
    pub fn current(&self) -> PathBuf {
        let mut name = self.stem.clone();
        if !self.ext.is_empty() {
            name.push('.');
            name.push_str(&self.ext);
        }
        self.dir.join(name)
    }

    fn rotated_name(&self, stamp: &str, seq: u32) -> String {
        let mut name = format!("{}-{stamp}", self.stem);
        if seq > 0 {
            name.push_str(&format!(".{seq}"));
        }
        if !self.ext.is_empty() {
            name.push('.');
            name.push_str(&self.ext);
        }
        name
    }

    fn parse_rotated(&self, name: &str) -> Option<(Timestamp, u32)> {
        let rest = name.strip_prefix(&self.stem)?.strip_prefix('-')?;
        let rest = if self.ext.is_empty() {
            rest
        } else {
            rest.strip_suffix(&self.ext)?.strip_suffix('.')?
        };
        let (stamp, seq) = match rest.split_once('.') {
            Some((stamp, seq)) => (stamp, seq.parse().ok()?),
            None => (rest, 0),
        };
        Some((Timestamp::parse_compact(stamp)?, seq))
    }

    /// The name a file rotated now gets: `…-<stamp>.log`, or `…-<stamp>.<n>.log` after
    /// the files already rotated in that second, so names always sort in rotation order
    /// (even when old ones were pruned meanwhile, or the clock went back).
    pub(crate) fn next_rotated_path(&self, now: Timestamp) -> PathBuf {
        let now = Timestamp::from_micros(now.micros().div_euclid(1_000_000) * 1_000_000);
        let newest = self
            .rotated_files()
            .ok()
            .and_then(|r| r.last().map(|l| (l.rotated, l.seq)));
        let (stamp, mut seq) = match newest {
            Some((t, s)) if t >= now => (t, s.saturating_add(1)),
            _ => (now, 0),
        };
        let stamp = stamp.compact();
        loop {
            let p = self.dir.join(self.rotated_name(&stamp, seq));
            if seq == u32::MAX || std::fs::symlink_metadata(&p).is_err() {
                return p;
            }
            seq += 1;
        }
    }

    /// The rotated files, oldest first.
    pub fn rotated_files(&self) -> Result<Vec<RotatedFile>, AuditError> {
        let mut out = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| AuditError::io(&self.dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| AuditError::io(&self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            if let Some((rotated, seq)) = self.parse_rotated(name) {
                out.push(RotatedFile {
                    path: entry.path(),
                    rotated,
                    seq,
                });
            }
        }
        out.sort_by_key(|r| (r.rotated, r.seq));
        Ok(out)
    }

    /// Every file of the log in time order: the rotated ones, then the current one.
    pub fn files(&self) -> Result<Vec<PathBuf>, AuditError> {
        let mut files: Vec<PathBuf> = self.rotated_files()?.into_iter().map(|r| r.path).collect();
        let current = self.current();
        if current.exists() {
            files.push(current);
        }
        Ok(files)
    }
}

/// Which events to return. Every field that is set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// The actor: matches `user` or `user_sid` exactly (case-insensitively), or the
    /// account name inside `user` — the value of a DN's first RDN, the name of a
    /// `DOMAIN\name`, the part of a UPN before the `@`.
    pub user: Option<String>,
    /// The target: the object with this DN or any object below it (case-insensitive).
    pub dn: Option<String>,
    /// Any of these event IDs (empty: any).
    pub event_ids: Vec<u32>,
    /// Any of these categories (empty: any).
    pub categories: Vec<Category>,
    /// Only successes or only failures.
    pub outcome: Option<Outcome>,
    /// At or after this time.
    pub since: Option<Timestamp>,
    /// Before this time.
    pub until: Option<Timestamp>,
}

impl Filter {
    /// Whether the event passes.
    pub fn matches(&self, e: &AuditEvent) -> bool {
        if self.since.is_some_and(|s| e.time < s) || self.until.is_some_and(|u| e.time >= u) {
            return false;
        }
        if !self.event_ids.is_empty() && !e.event_id.is_some_and(|id| self.event_ids.contains(&id))
        {
            return false;
        }
        if !self.categories.is_empty() && !self.categories.contains(&e.category) {
            return false;
        }
        if self.outcome.is_some_and(|o| o != e.outcome) {
            return false;
        }
        if let Some(u) = &self.user {
            if !user_matches(u, e) {
                return false;
            }
        }
        if let Some(base) = &self.dn {
            if !e.dn.as_deref().is_some_and(|dn| dn_within(dn, base)) {
                return false;
            }
        }
        true
    }
}

fn user_matches(wanted: &str, e: &AuditEvent) -> bool {
    let wanted = wanted.trim();
    if e.user_sid
        .as_deref()
        .is_some_and(|s| s.eq_ignore_ascii_case(wanted))
    {
        return true;
    }
    let Some(user) = e.user.as_deref() else {
        return false;
    };
    let w = wanted.to_lowercase();
    user.to_lowercase() == w || account_name(user).to_lowercase() == account_name(&w)
}

/// The account name in the forms an actor is written in: a DN's first RDN value,
/// `DOMAIN\name`, `name@realm`, or the name itself.
fn account_name(s: &str) -> String {
    let s = s.trim();
    let first_comma = unescaped(s, ',').unwrap_or(s.len());
    let first_rdn = &s[..first_comma];
    if let Some(eq) = unescaped(first_rdn, '=') {
        return unescape(first_rdn[eq + 1..].trim());
    }
    if let Some((_, name)) = s.rsplit_once('\\') {
        return name.to_string();
    }
    if let Some((name, _)) = s.rsplit_once('@') {
        return name.to_string();
    }
    s.to_string()
}

/// The byte position of the first `c` not escaped by a backslash.
fn unescaped(s: &str, c: char) -> Option<usize> {
    let mut escaped = false;
    for (i, ch) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else if ch == c {
            return Some(i);
        }
    }
    None
}

/// A DN attribute value with `\,`-style escapes removed (hex escapes are left as they
/// are: names in the log are written as text).
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut escaped = false;
    for ch in v.chars() {
        if escaped {
            out.push(ch);
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else {
            out.push(ch);
        }
    }
    out
}

/// A DN's RDNs, each lowercased with the spaces around `=`, `,` and `+` removed.
fn dn_rdns(dn: &str) -> Vec<String> {
    let mut rdns = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for ch in dn.chars() {
        if escaped {
            cur.extend(ch.to_lowercase());
            escaped = false;
            continue;
        }
        match ch {
            '\\' => {
                cur.push('\\');
                escaped = true;
            }
            ',' => {
                rdns.push(cur.trim().to_string());
                cur.clear();
            }
            '=' | '+' => {
                let t = cur.trim_end().len();
                cur.truncate(t);
                cur.push(ch);
            }
            c if c.is_whitespace() && (cur.ends_with('=') || cur.ends_with('+')) => {}
            c => cur.extend(c.to_lowercase()),
        }
    }
    rdns.push(cur.trim().to_string());
    rdns
}

/// Whether `dn` is `base` or below it.
fn dn_within(dn: &str, base: &str) -> bool {
    let base = dn_rdns(base);
    let dn = dn_rdns(dn);
    dn.len() >= base.len() && dn[dn.len() - base.len()..] == base[..]
}

/// One event read back, with its line exactly as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The event.
    pub event: AuditEvent,
    /// Its line, without the newline.
    pub line: String,
}

/// What a read went through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Files read.
    pub files: u64,
    /// Lines read (blank lines not counted).
    pub lines: u64,
    /// Events that passed the filter.
    pub matched: u64,
    /// Lines that are not events (damaged, or not JSON): skipped and counted.
    pub skipped: u64,
}

/// Tests one line; false when the callback asked to stop.
fn process_line<F: FnMut(&Record) -> bool>(
    bytes: &[u8],
    complete: bool,
    filter: &Filter,
    stats: &mut ReadStats,
    f: &mut F,
) -> bool {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    let parsed = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| serde_json::from_str::<AuditEvent>(t).ok().map(|e| (t, e)));
    let Some((text, event)) = parsed else {
        // An unterminated last line may be a write in progress: not damage.
        if complete {
            stats.lines += 1;
            stats.skipped += 1;
        }
        return true;
    };
    stats.lines += 1;
    if !filter.matches(&event) {
        return true;
    }
    stats.matched += 1;
    f(&Record {
        event,
        line: text.to_string(),
    })
}

/// Reads one file through the filter; false when the callback asked to stop. A file
/// that has disappeared (pruned meanwhile) reads as empty.
pub fn read_file<F: FnMut(&Record) -> bool>(
    path: &Path,
    filter: &Filter,
    stats: &mut ReadStats,
    f: &mut F,
) -> Result<bool, AuditError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(AuditError::io(path, e)),
    };
    stats.files += 1;
    let mut lines = LineBuffer::default();
    loop {
        let more = lines.fill(&mut file).map_err(|e| AuditError::io(path, e))?;
        if !lines.each(filter, stats, f) {
            return Ok(false);
        }
        if !more {
            break;
        }
    }
    Ok(lines.finish(filter, stats, f))
}

/// Reads the whole log, oldest first, through the filter, calling `f` for each event
/// that passes until it returns false. Rotated files entirely older than
/// `filter.since` are not opened.
pub fn read<F: FnMut(&Record) -> bool>(
    set: &LogSet,
    filter: &Filter,
    mut f: F,
) -> Result<ReadStats, AuditError> {
    let mut stats = ReadStats::default();
    for r in set.rotated_files()? {
        if older_than_since(&r, filter) {
            continue;
        }
        if !read_file(&r.path, filter, &mut stats, &mut f)? {
            return Ok(stats);
        }
    }
    read_file(&set.current(), filter, &mut stats, &mut f)?;
    Ok(stats)
}

/// Whether every event of a rotated file is before `since`: it was rotated (to the
/// second) before it.
fn older_than_since(r: &RotatedFile, filter: &Filter) -> bool {
    filter
        .since
        .is_some_and(|s| r.rotated.micros().saturating_add(1_000_000) <= s.micros())
}

/// Bytes read from a file, cut into lines.
#[derive(Default)]
struct LineBuffer {
    buf: Vec<u8>,
}

impl LineBuffer {
    /// Appends what the reader has (up to 256 KiB); false at its end.
    fn fill(&mut self, r: &mut impl Read) -> std::io::Result<bool> {
        let start = self.buf.len();
        self.buf.resize(start + 256 * 1024, 0);
        let n = loop {
            match r.read(&mut self.buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(start);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(start + n);
        Ok(n > 0)
    }

    /// Processes the complete lines, keeping a partial last one.
    fn each<F: FnMut(&Record) -> bool>(
        &mut self,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> bool {
        let mut start = 0;
        let mut go_on = true;
        while let Some(i) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + i;
            go_on = process_line(&self.buf[start..end], true, filter, stats, f);
            start = end + 1;
            if !go_on {
                break;
            }
        }
        self.buf.drain(..start);
        go_on
    }

    /// Processes an unterminated last line.
    fn finish<F: FnMut(&Record) -> bool>(
        &mut self,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> bool {
        let go_on = process_line(&self.buf, false, filter, stats, f);
        self.buf.clear();
        go_on
    }
}

fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

/// Reads a log as it grows, like `tail -F`: new lines of the current file as they are
/// appended, then, when the file is rotated away, the rest of it and the new file from
/// its start. Poll it (every 200 ms is plenty); nothing is read twice or skipped, except
/// files rotated away more than once between two polls.
#[derive(Debug)]
pub struct Follower {
    set: LogSet,
    file: Option<File>,
    id: Option<(u64, u64)>,
    pos: u64,
    lines: LineBufferDebug,
}

/// [`LineBuffer`] with a `Debug` that does not print the bytes.
#[derive(Default)]
struct LineBufferDebug(LineBuffer);

impl std::fmt::Debug for LineBufferDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes pending", self.0.buf.len())
    }
}

impl Follower {
    /// Starts following at the beginning of the current file (see
    /// [`Follower::history`] to read the rotated files first, and
    /// [`Follower::skip_to_end`] to see only what comes next). A log without a current
    /// file yet is followed from when one appears.
    pub fn new(set: LogSet) -> Result<Follower, AuditError> {
        let mut fl = Follower {
            set,
            file: None,
            id: None,
            pos: 0,
            lines: LineBufferDebug::default(),
        };
        let current = fl.set.current();
        match File::open(&current) {
            Ok(file) => {
                let m = file.metadata().map_err(|e| AuditError::io(&current, e))?;
                fl.id = Some(file_id(&m));
                fl.file = Some(file);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(AuditError::io(current, e)),
        }
        Ok(fl)
    }

    /// Skips what the current file holds now: only events written from here on are read.
    pub fn skip_to_end(&mut self) -> Result<(), AuditError> {
        if let Some(file) = &mut self.file {
            self.pos = file
                .seek(SeekFrom::End(0))
                .map_err(|e| AuditError::io(self.set.current(), e))?;
            self.lines.0.buf.clear();
        }
        Ok(())
    }

    /// Reads the log so far: the rotated files (except the one being followed, if it was
    /// rotated since), then the current file to its end. Then [`Follower::poll`] goes on
    /// from there. False when the callback asked to stop.
    pub fn history<F: FnMut(&Record) -> bool>(
        &mut self,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> Result<bool, AuditError> {
        for r in self.set.rotated_files()? {
            if older_than_since(&r, filter) {
                continue;
            }
            let same = std::fs::metadata(&r.path)
                .ok()
                .map(|m| file_id(&m))
                .is_some_and(|id| Some(id) == self.id);
            if same {
                continue;
            }
            if !read_file(&r.path, filter, stats, f)? {
                return Ok(false);
            }
        }
        self.poll(filter, stats, f)
    }

    /// Reads what was appended since the last call, following a rotation to the new
    /// file. False when the callback asked to stop.
    pub fn poll<F: FnMut(&Record) -> bool>(
        &mut self,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> Result<bool, AuditError> {
        let current = self.set.current();
        loop {
            // Look at the path first: if it is another file by now, everything of the
            // old one was written before the rename, and is read below.
            let at_path = std::fs::metadata(&current).ok().map(|m| file_id(&m));
            if !self.drain(filter, stats, f)? {
                return Ok(false);
            }
            match at_path {
                Some(id) if Some(id) == self.id => {
                    self.check_truncated()?;
                    return Ok(true);
                }
                Some(_) => {
                    if self.file.is_some() && !self.lines.0.finish(filter, stats, f) {
                        return Ok(false);
                    }
                    let file = match File::open(&current) {
                        Ok(file) => file,
                        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(true),
                        Err(e) => return Err(AuditError::io(current, e)),
                    };
                    let m = file.metadata().map_err(|e| AuditError::io(&current, e))?;
                    let new_id = Some(file_id(&m));
                    // Files rotated after the one just finished and before the new one
                    // (the log rotated more than once since the last poll).
                    if self.file.is_some() && !self.read_missed(new_id, filter, stats, f)? {
                        return Ok(false);
                    }
                    self.id = new_id;
                    self.file = Some(file);
                    self.pos = 0;
                    stats.files += 1;
                }
                None => return Ok(true),
            }
        }
    }

    /// After the followed file was rotated away: reads the files rotated after it and
    /// before `next`, the file to follow now. When it was already pruned there is no
    /// telling which came after it, and none are read.
    fn read_missed<F: FnMut(&Record) -> bool>(
        &mut self,
        next: Option<(u64, u64)>,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> Result<bool, AuditError> {
        let rotated = self.set.rotated_files()?;
        let ids: Vec<Option<(u64, u64)>> = rotated
            .iter()
            .map(|r| std::fs::metadata(&r.path).ok().map(|m| file_id(&m)))
            .collect();
        let Some(at) = ids.iter().position(|id| id.is_some() && *id == self.id) else {
            return Ok(true);
        };
        for (r, id) in rotated.iter().zip(&ids).skip(at + 1) {
            if *id == next {
                break;
            }
            if !read_file(&r.path, filter, stats, f)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads the followed file to its end.
    fn drain<F: FnMut(&Record) -> bool>(
        &mut self,
        filter: &Filter,
        stats: &mut ReadStats,
        f: &mut F,
    ) -> Result<bool, AuditError> {
        let Some(file) = &mut self.file else {
            return Ok(true);
        };
        loop {
            let before = self.lines.0.buf.len();
            let more = self
                .lines
                .0
                .fill(file)
                .map_err(|e| AuditError::io(self.set.current(), e))?;
            self.pos += (self.lines.0.buf.len() - before) as u64;
            if !self.lines.0.each(filter, stats, f) {
                return Ok(false);
            }
            if !more {
                return Ok(true);
            }
        }
    }

    /// A file cut short in place (by `truncate` or a `copytruncate` rotation) is read
    /// again from its start.
    fn check_truncated(&mut self) -> Result<(), AuditError> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let len = file
            .metadata()
            .map_err(|e| AuditError::io(self.set.current(), e))?
            .len();
        if len < self.pos {
            file.seek(SeekFrom::Start(0))
                .map_err(|e| AuditError::io(self.set.current(), e))?;
            self.pos = 0;
            self.lines.0.buf.clear();
        }
        Ok(())
    }
}

/// Follows a log from its current end, calling `f` for each new event that passes the
/// filter, polling every `interval`, until `f` returns false.
pub fn follow<F: FnMut(&Record) -> bool>(
    set: &LogSet,
    filter: &Filter,
    interval: Duration,
    mut f: F,
) -> Result<(), AuditError> {
    let mut fl = Follower::new(set.clone())?;
    fl.skip_to_end()?;
    let mut stats = ReadStats::default();
    while fl.poll(filter, &mut stats, &mut f)? {
        std::thread::sleep(interval);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_micros(1_795_741_323_000_000 + secs * 1_000_000)
    }

    fn sample() -> Vec<AuditEvent> {
        vec![
            AuditEvent::logon(Outcome::Success)
                .with_time(at(0))
                .with_user("CN=Alice Smith,CN=Users,DC=samdom,DC=example,DC=com")
                .with_user_sid("S-1-5-21-1-2-3-1104"),
            AuditEvent::logon(Outcome::Failure)
                .with_time(at(10))
                .with_user("SAMDOM\\bob"),
            AuditEvent::change("modify", Outcome::Success)
                .with_time(at(20))
                .with_user("alice@samdom.example.com")
                .with_dn("CN=Carol,OU=Sales, DC=samdom,DC=example,DC=com")
                .with_attributes(["description"]),
            AuditEvent::change("add", Outcome::Success)
                .with_time(at(30))
                .with_user("bob")
                .with_dn("OU=Sales,DC=samdom,DC=example,DC=com"),
            AuditEvent::change("delete", Outcome::Success)
                .with_time(at(40))
                .with_user("bob")
                .with_dn("CN=Dave,OU=Salesforce,DC=samdom,DC=example,DC=com"),
        ]
    }

    fn write_log(path: &Path, events: &[AuditEvent]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for e in events {
            writeln!(f, "{}", e.to_json_line()).unwrap();
        }
    }

    fn times(set: &LogSet, filter: &Filter) -> Vec<i64> {
        let mut out = Vec::new();
        read(set, filter, |r| {
            out.push((r.event.time.micros() - at(0).micros()) / 1_000_000);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn filters() {
        let tmp = tempfile::tempdir().unwrap();
        write_log(&tmp.path().join("audit.log"), &sample());
        let set = LogSet::open(tmp.path()).unwrap();
        let all = Filter::default();
        assert_eq!(times(&set, &all), [0, 10, 20, 30, 40]);
        let f = |mut g: Filter, edit: &dyn Fn(&mut Filter)| {
            edit(&mut g);
            times(&set, &g)
        };
        // By user: the DN's RDN value, the SID, DOMAIN\name, a UPN's name, any case.
        assert_eq!(
            f(all.clone(), &|g| g.user = Some("alice smith".into())),
            [0]
        );
        assert_eq!(
            f(all.clone(), &|g| g.user =
                Some("S-1-5-21-1-2-3-1104".into())),
            [0]
        );
        assert_eq!(
            f(all.clone(), &|g| g.user = Some("Bob".into())),
            [10, 30, 40]
        );
        assert_eq!(f(all.clone(), &|g| g.user = Some("alice".into())), [20]);
        assert_eq!(
            f(all.clone(), &|g| g.user = Some("SAMDOM\\bob".into())),
            [10, 30, 40]
        );
        // By DN subtree: the object and below, not a sibling whose name merely ends alike.
        assert_eq!(
            f(all.clone(), &|g| g.dn =
                Some("ou=sales,dc=SAMDOM,dc=example,dc=com".into())),
            [20, 30]
        );
        assert_eq!(
            f(all.clone(), &|g| g.dn = Some(
                "CN=Carol, OU=Sales,DC=samdom,DC=example,DC=com".into()
            )),
            [20]
        );
        // By event id, category, outcome.
        assert_eq!(
            f(all.clone(), &|g| g.event_ids = vec![4625, 5141]),
            [10, 40]
        );
        assert_eq!(
            f(all.clone(), &|g| g.categories =
                vec![Category::Authentication]),
            [0, 10]
        );
        assert_eq!(
            f(all.clone(), &|g| g.outcome = Some(Outcome::Failure)),
            [10]
        );
        // By time: since inclusive, until exclusive.
        assert_eq!(
            f(all.clone(), &|g| {
                g.since = Some(at(10));
                g.until = Some(at(30));
            }),
            [10, 20]
        );
    }

    #[test]
    fn files_in_time_order_and_damage_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let ev = sample();
        // Two rotations in one second sort by their sequence number, before audit.log.
        write_log(&tmp.path().join("audit-20261127T010203.1.log"), &ev[1..2]);
        write_log(&tmp.path().join("audit-20261127T010203.log"), &ev[0..1]);
        write_log(&tmp.path().join("audit-20261127T020000.log"), &ev[2..3]);
        std::fs::write(tmp.path().join("audit-notastamp.log"), "junk\n").unwrap();
        std::fs::write(tmp.path().join("other.log"), "junk\n").unwrap();
        let cur = tmp.path().join("audit.log");
        write_log(&cur, &ev[3..4]);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&cur)
            .unwrap()
            .write_all(b"{not json\n\n")
            .unwrap();
        write_log(&cur, &ev[4..5]);
        let set = LogSet::open(&cur).unwrap();
        let names: Vec<String> = set
            .files()
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "audit-20261127T010203.log",
                "audit-20261127T010203.1.log",
                "audit-20261127T020000.log",
                "audit.log"
            ]
        );
        let mut seen = Vec::new();
        let stats = read(&set, &Filter::default(), |r| {
            seen.push(r.event.clone());
            true
        })
        .unwrap();
        assert_eq!(seen, ev);
        assert_eq!(stats.skipped, 1);
        assert_eq!(stats.files, 4);
        // The record's line is the stored text.
        let mut first = None;
        read(&set, &Filter::default(), |r| {
            first = Some(r.line.clone());
            false
        })
        .unwrap();
        assert_eq!(first.unwrap(), ev[0].to_json_line());
        // A file rotated before `since` is not even opened.
        let since = Filter {
            since: Some(Timestamp::parse_rfc3339("2026-11-27T01:30:00Z").unwrap()),
            ..Filter::default()
        };
        let stats = read(&set, &since, |_| true).unwrap();
        assert_eq!(stats.files, 2);
    }

    #[test]
    fn follower_reads_appends_and_rotations() {
        let tmp = tempfile::tempdir().unwrap();
        let ev = sample();
        let cur = tmp.path().join("audit.log");
        write_log(&cur, &ev[0..1]);
        let set = LogSet::open(tmp.path()).unwrap();
        let mut fl = Follower::new(set.clone()).unwrap();
        let mut got = Vec::new();
        let mut stats = ReadStats::default();
        let mut sink = |r: &Record| {
            got.push((r.event.time.micros() - at(0).micros()) / 1_000_000);
            true
        };
        assert!(fl
            .history(&Filter::default(), &mut stats, &mut sink)
            .unwrap());
        // A line written in two pieces is read once, whole.
        let line = ev[1].to_json_line();
        let (a, b) = line.split_at(20);
        let mut f = std::fs::OpenOptions::new().append(true).open(&cur).unwrap();
        f.write_all(a.as_bytes()).unwrap();
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        f.write_all(format!("{b}\n").as_bytes()).unwrap();
        drop(f);
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        // Rotation: one more line into the old file, renamed, a new file with two.
        write_log(&cur, &ev[2..3]);
        std::fs::rename(&cur, tmp.path().join("audit-20261127T010300.log")).unwrap();
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        write_log(&cur, &ev[3..5]);
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        assert_eq!(got, [0, 10, 20, 30, 40]);
        assert_eq!(stats.skipped, 0);

        // A new follower's history: the rotated file, then the current one.
        let mut again = Vec::new();
        let mut fl2 = Follower::new(set).unwrap();
        fl2.history(
            &Filter::default(),
            &mut ReadStats::default(),
            &mut |r: &Record| {
                again.push(r.event.clone());
                true
            },
        )
        .unwrap();
        assert_eq!(again, ev);
    }

    #[test]
    fn follower_catches_up_on_several_rotations_between_polls() {
        let tmp = tempfile::tempdir().unwrap();
        let ev = sample();
        let cur = tmp.path().join("audit.log");
        write_log(&cur, &ev[0..1]);
        let set = LogSet::open(tmp.path()).unwrap();
        let mut fl = Follower::new(set).unwrap();
        let mut got = Vec::new();
        let mut stats = ReadStats::default();
        let mut sink = |r: &Record| {
            got.push(r.event.clone());
            true
        };
        assert!(fl
            .history(&Filter::default(), &mut stats, &mut sink)
            .unwrap());
        // Between two polls: one more line, two rotations, a third file.
        write_log(&cur, &ev[1..2]);
        std::fs::rename(&cur, tmp.path().join("audit-20261127T010300.log")).unwrap();
        write_log(&cur, &ev[2..3]);
        std::fs::rename(&cur, tmp.path().join("audit-20261127T010300.1.log")).unwrap();
        write_log(&cur, &ev[3..5]);
        assert!(fl.poll(&Filter::default(), &mut stats, &mut sink).unwrap());
        assert_eq!(got, ev);
    }

    #[test]
    fn open_needs_an_existing_folder() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(LogSet::open(&tmp.path().join("nope/audit.log")).is_err());
        let set = LogSet::open(&tmp.path().join("audit.log")).unwrap();
        assert_eq!(set.files().unwrap(), Vec::<PathBuf>::new());
        let custom = LogSet::for_file(Path::new("/var/log/kauri/ds.jsonl"));
        assert_eq!(
            custom.next_rotated_path(at(0)),
            PathBuf::from("/var/log/kauri/ds-20261127T010203.jsonl")
        );
        assert_eq!(
            custom.parse_rotated("ds-20261127T010203.7.jsonl"),
            Some((at(0), 7))
        );
    }

    #[test]
    fn dn_matching() {
        assert!(dn_within("CN=a,DC=x", "dc=X"));
        assert!(dn_within("cn=a , dc = x", "DC=x"));
        assert!(!dn_within("CN=a\\,DC=x,DC=y", "DC=x,DC=y"));
        assert!(dn_within("CN=a\\,DC=x,DC=y", "DC=y"));
        assert!(!dn_within("DC=y", "DC=x,DC=y"));
        assert_eq!(
            account_name("CN=Smith\\, John,CN=Users,DC=x"),
            "Smith, John"
        );
        assert_eq!(account_name("DOM\\jo"), "jo");
        assert_eq!(account_name("jo@dom"), "jo");
    }
}
