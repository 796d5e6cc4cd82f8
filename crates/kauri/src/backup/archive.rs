//! The backup archive: one zstd-compressed tar file holding a domain's database dump, its
//! sealing key (unless the backup is a renamed lab copy) and a manifest with the checksum
//! of every member, verified in full before anything is restored from it.
//!
//! Members, in order:
//!
//! | member | content |
//! |---|---|
//! | `kauri-backup.json` | format version and kind, so a foreign or newer archive is refused at once |
//! | `secrets.key` | the key that seals password hashes (offline and online backups) |
//! | `db/dump.00000`, `db/dump.00001`, … | the database dump (`kauri_kv::dump`), cut into 32 MiB pieces |
//! | `manifest.json` | what the backup is, and the size and SHA-256 of every member above |
//!
//! A tar member's size precedes its data, so the dump, whose size is known only at its
//! end, is cut into pieces of bounded size: the archive is written in one pass, in bounded
//! memory, from one snapshot. The manifest comes last because it holds the pieces' sums.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::DomainFile;

/// The archive layout this code writes and reads.
pub const FORMAT: u32 = 1;
/// The first member: format and kind.
pub const HEADER: &str = "kauri-backup.json";
/// The last member: the manifest.
pub const MANIFEST: &str = "manifest.json";
/// The sealing key's member.
pub const SECRETS_KEY: &str = "secrets.key";
/// The dump's pieces are this prefix and a five-digit number.
const DUMP_PREFIX: &str = "db/dump.";
/// Largest dump piece.
const PIECE: usize = 32 << 20;
/// The zstd level: fast, and still about a third of the dump's size.
const ZSTD_LEVEL: i32 = 3;

/// How a backup was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// From a data folder, while the server may run.
    Offline,
    /// Pulled from a running DC over LDAP.
    Online,
    /// Pulled from a running DC, renamed for a lab, without secrets.
    Rename,
}

impl Kind {
    /// The kind as the manifest and file names spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Offline => "offline",
            Kind::Online => "online",
            Kind::Rename => "rename",
        }
    }
}

/// The first member.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Archive format ([`FORMAT`]).
    pub format: u32,
    /// The backup's kind.
    pub kind: Kind,
}

/// A member's size and checksum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSum {
    /// Member name.
    pub name: String,
    /// Bytes.
    pub bytes: u64,
    /// SHA-256, lowercase hex.
    pub sha256: String,
}

/// The names a renamed backup had before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenamedFrom {
    /// The old realm.
    pub realm: String,
    /// The old NetBIOS name.
    pub netbios_domain: String,
    /// The old domain DN.
    pub domain_dn: String,
}

/// The dump's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpInfo {
    /// Dump format (`kauri_kv::dump::VERSION`).
    pub format: u32,
    /// Its tables, in order.
    pub tables: Vec<String>,
    /// Key-value pairs.
    pub pairs: u64,
    /// Bytes of the dump stream.
    pub bytes: u64,
}

/// The last member: what the backup is and what it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Archive format ([`FORMAT`]).
    pub format: u32,
    /// The backup's kind.
    pub kind: Kind,
    /// When the snapshot was taken (GeneralizedTime, UTC).
    pub created: String,
    /// The Kauri that wrote it.
    pub kauri_version: String,
    /// Where it came from: a data folder or a server URL.
    pub source: String,
    /// The domain, as its `domain.json` says (after the rename, for a renamed backup).
    pub domain: DomainFile,
    /// The names before a rename.
    pub renamed_from: Option<RenamedFrom>,
    /// The highest USN committed in the snapshot.
    pub highest_usn: u64,
    /// The invocation id of the database copied (hex).
    pub invocation_id: String,
    /// Entries in the snapshot.
    pub records: u64,
    /// Whether the archive holds the sealing key (and so usable password hashes).
    pub secrets: bool,
    /// The dump.
    pub dump: DumpInfo,
    /// Every member before the manifest.
    pub files: Vec<FileSum>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a new archive: at `<path>.partial` until [`ArchiveWriter::finish`] renames it,
/// so a backup cut short never looks finished.
pub struct ArchiveWriter {
    tar: tar::Builder<zstd::stream::write::Encoder<'static, BufWriter<File>>>,
    files: Vec<FileSum>,
    partial: PathBuf,
    path: PathBuf,
}

impl ArchiveWriter {
    /// Starts an archive of `kind` at `path` (readable by the owner only: it may hold
    /// every password hash of the domain and the key that unseals them).
    pub fn create(path: &Path, kind: Kind) -> Result<ArchiveWriter> {
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = opts
            .open(&partial)
            .with_context(|| format!("creating {}", partial.display()))?;
        let mut zst = zstd::stream::write::Encoder::new(BufWriter::new(file), ZSTD_LEVEL)
            .context("starting the compressor")?;
        // Compression runs on a worker thread of its own while the dump is produced.
        zst.multithread(1).context("starting the compressor")?;
        let mut tar = tar::Builder::new(zst);
        tar.mode(tar::HeaderMode::Deterministic);
        let mut w = ArchiveWriter {
            tar,
            files: Vec::new(),
            partial,
            path: path.to_path_buf(),
        };
        let header = serde_json::to_vec_pretty(&Header {
            format: FORMAT,
            kind,
        })?;
        w.add_file(HEADER, &header)?;
        Ok(w)
    }

    /// Adds a member (recorded in the manifest with its checksum).
    pub fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o600);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        self.tar
            .append_data(&mut header, name, data)
            .with_context(|| format!("writing {name} into the archive"))?;
        self.files.push(FileSum {
            name: name.to_string(),
            bytes: data.len() as u64,
            sha256: hex(&Sha256::digest(data)),
        });
        Ok(())
    }

    /// A writer for the dump: what it is given lands in pieces of at most 32 MiB.
    /// `progress` hears the dump bytes written so far.
    pub fn dump_writer<'a>(&'a mut self, progress: &'a dyn Fn(u64)) -> DumpWriter<'a> {
        DumpWriter {
            archive: self,
            buf: Vec::with_capacity(PIECE),
            pieces: 0,
            total: 0,
            progress,
            failed: None,
        }
    }

    /// Writes the manifest (with the members' sums), ends the compressed stream, syncs
    /// the file and gives it its final name.
    pub fn finish(mut self, mut manifest: Manifest) -> Result<PathBuf> {
        manifest.format = FORMAT;
        manifest.files = std::mem::take(&mut self.files);
        let bytes = serde_json::to_vec_pretty(&manifest)?;
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        self.tar
            .append_data(&mut header, MANIFEST, bytes.as_slice())
            .context("writing the manifest")?;
        let zst = self.tar.into_inner().context("ending the archive")?;
        let buffered = zst.finish().context("ending the compressed stream")?;
        let file = buffered
            .into_inner()
            .map_err(|e| e.into_error())
            .context("writing the archive")?;
        file.sync_all().context("syncing the archive")?;
        std::fs::rename(&self.partial, &self.path)
            .with_context(|| format!("naming the archive {}", self.path.display()))?;
        Ok(self.path)
    }

    /// Removes the unfinished file (a backup that failed).
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.partial);
    }
}

/// Cuts the dump into archive members (see [`ArchiveWriter::dump_writer`]).
pub struct DumpWriter<'a> {
    archive: &'a mut ArchiveWriter,
    buf: Vec<u8>,
    pieces: usize,
    total: u64,
    progress: &'a dyn Fn(u64),
    failed: Option<String>,
}

impl DumpWriter<'_> {
    fn flush_piece(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let name = format!("{DUMP_PREFIX}{:05}", self.pieces);
        self.archive.add_file(&name, &self.buf).map_err(|e| {
            self.failed = Some(format!("{e:#}"));
            io::Error::other(format!("{e:#}"))
        })?;
        self.pieces += 1;
        self.buf.clear();
        (self.progress)(self.total);
        Ok(())
    }

    /// Writes the last piece; returns the dump's size.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_piece()?;
        match self.failed {
            Some(e) => bail!(e),
            None => Ok(self.total),
        }
    }
}

impl Write for DumpWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = PIECE - self.buf.len();
        let n = data.len().min(room);
        self.buf.extend_from_slice(&data[..n]);
        self.total += n as u64;
        if self.buf.len() >= PIECE {
            self.flush_piece()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An archive that passed verification: its manifest and its small members.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The manifest.
    pub manifest: Manifest,
    /// The sealing key, when the archive holds one.
    pub secrets_key: Option<Vec<u8>>,
}

/// Reads through a decompressing reader, counting the compressed bytes consumed.
struct CountingFile {
    inner: BufReader<File>,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Read for CountingFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

type Members = tar::Archive<zstd::stream::read::Decoder<'static, BufReader<CountingFile>>>;

fn open(path: &Path) -> Result<(Members, std::rc::Rc<std::cell::Cell<u64>>, u64)> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    let counting = CountingFile {
        inner: BufReader::new(file),
        read: read.clone(),
    };
    let zst = zstd::stream::read::Decoder::new(counting).with_context(|| {
        format!(
            "{} is not a Kauri backup (not a zstd stream)",
            path.display()
        )
    })?;
    Ok((tar::Archive::new(zst), read, size))
}

fn not_a_backup(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{} is not a usable Kauri backup: {why}", path.display())
}

/// Reads the whole archive once: the header first (a foreign or newer archive stops
/// there), every member's SHA-256 and size against the manifest's, nothing missing and
/// nothing extra. `progress` hears (compressed bytes read, archive size).
pub fn verify(path: &Path, progress: &dyn Fn(u64, u64)) -> Result<Verified> {
    let (mut archive, read, size) = open(path)?;
    let mut sums: Vec<FileSum> = Vec::new();
    let mut header: Option<Header> = None;
    let mut manifest: Option<Manifest> = None;
    let mut key = None;
    let mut buf = vec![0u8; 1 << 20];
    let entries = archive
        .entries()
        .map_err(|e| not_a_backup(path, format!("not a tar archive ({e})")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| not_a_backup(path, format!("damaged ({e})")))?;
        let name = entry
            .path()
            .map_err(|e| not_a_backup(path, e))?
            .to_string_lossy()
            .into_owned();
        if manifest.is_some() {
            return Err(not_a_backup(path, format!("{name} follows the manifest")));
        }
        if header.is_none() && name != HEADER {
            return Err(not_a_backup(
                path,
                format!("it starts with {name}, not {HEADER}"),
            ));
        }
        let small = name == HEADER || name == MANIFEST || name == SECRETS_KEY;
        let mut kept = Vec::new();
        let mut hasher = Sha256::new();
        let mut bytes = 0u64;
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| not_a_backup(path, format!("damaged in {name} ({e})")))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            bytes += n as u64;
            if small {
                if kept.len() > 1 << 20 {
                    return Err(not_a_backup(path, format!("{name} is too large")));
                }
                kept.extend_from_slice(&buf[..n]);
            }
            progress(read.get(), size);
        }
        match name.as_str() {
            HEADER => {
                let h: Header = serde_json::from_slice(&kept)
                    .map_err(|e| not_a_backup(path, format!("unreadable {HEADER} ({e})")))?;
                if h.format != FORMAT {
                    bail!(
                        "{} is a Kauri backup of format {}; this Kauri reads format {FORMAT}",
                        path.display(),
                        h.format
                    );
                }
                header = Some(h);
            }
            MANIFEST => {
                manifest = Some(
                    serde_json::from_slice(&kept)
                        .map_err(|e| not_a_backup(path, format!("unreadable manifest ({e})")))?,
                );
                continue;
            }
            SECRETS_KEY => key = Some(kept),
            _ => {}
        }
        sums.push(FileSum {
            name,
            bytes,
            sha256: hex(&hasher.finalize()),
        });
    }
    let manifest =
        manifest.ok_or_else(|| not_a_backup(path, "the manifest is missing (cut short?)"))?;
    let header = header.ok_or_else(|| not_a_backup(path, "empty"))?;
    if manifest.kind != header.kind || manifest.format != header.format {
        return Err(not_a_backup(path, "the manifest and the header disagree"));
    }
    if sums.len() != manifest.files.len() {
        return Err(not_a_backup(
            path,
            format!(
                "{} members where the manifest lists {}",
                sums.len(),
                manifest.files.len()
            ),
        ));
    }
    for (got, want) in sums.iter().zip(&manifest.files) {
        if got != want {
            return Err(not_a_backup(
                path,
                format!(
                    "{} does not match the manifest (checksum or size differs: damaged)",
                    want.name
                ),
            ));
        }
    }
    let dump_bytes: u64 = sums
        .iter()
        .filter(|s| s.name.starts_with(DUMP_PREFIX))
        .map(|s| s.bytes)
        .sum();
    if dump_bytes != manifest.dump.bytes {
        return Err(not_a_backup(path, "the dump's pieces do not add up"));
    }
    if manifest.secrets != key.is_some() {
        return Err(not_a_backup(path, "the sealing key is missing"));
    }
    Ok(Verified {
        manifest,
        secrets_key: key,
    })
}

/// The dump's pieces read one after the other as one stream.
struct Pieces<'a, R: Read> {
    entries: tar::Entries<'a, R>,
    current: Option<tar::Entry<'a, R>>,
}

impl<R: Read> Read for Pieces<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(e) = self.current.as_mut() {
                let n = e.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                self.current = None;
            }
            let Some(next) = self.entries.next() else {
                return Ok(0);
            };
            let next = next?;
            let is_piece = next
                .path()
                .map(|p| p.to_string_lossy().starts_with(DUMP_PREFIX))
                .unwrap_or(false);
            if is_piece {
                self.current = Some(next);
            }
        }
    }
}

/// Hands the dump of a verified archive to `f` as one stream.
pub fn with_dump<T>(path: &Path, f: impl FnOnce(&mut dyn Read) -> Result<T>) -> Result<T> {
    let (mut archive, _, _) = open(path)?;
    let mut pieces = Pieces {
        entries: archive.entries().context("reading the archive")?,
        current: None,
    };
    f(&mut pieces)
}
