//! A backup archive as `kauri domain backup verify` and `restore` read it: the zstd
//! stream, the tar members, the header and manifest (JSON), the checksums, and the dump
//! its pieces carry, loaded into an empty store. The first input byte chooses whether the
//! rest is the file itself (even) or the content of its zstd stream (odd: compressed
//! here, so the fuzzer works on the tar layer and below).

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use kauri::backup::archive;
use kauri_db::db::TABLES;
use kauri_kv::dump::load_dump;
use kauri_kv::mem::MemBackend;
use libfuzzer_sys::fuzz_target;

/// One scratch file per fuzzing process, removed when the process ends normally.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a scratch folder"));
        dir.path().join("backup.tar.zst")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let file = if mode & 1 == 1 {
        zstd::bulk::compress(rest, 1).expect("compressing in memory")
    } else {
        rest.to_vec()
    };
    let path = scratch();
    std::fs::write(path, &file).expect("writing the scratch file");
    let verified = archive::verify(path, &|done, total| assert!(done <= total));
    if let Ok(v) = &verified {
        let _ = v.manifest.kind.as_str();
    }
    // A restore reads the dump of verified archives only; reading any is no less safe.
    let store = MemBackend::new(TABLES);
    let _ = archive::with_dump(path, |input| Ok(load_dump(&store, TABLES, input, None)?));
});
