//! Where the tests find Samba's sample data and Python modules; either missing, a test
//! says why and passes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python that has Samba's modules (Debian's `python3-samba`).
pub const PYTHON: &str = "/usr/bin/python3";

/// Where Samba's sample data and scripts are looked for: `$KAURI_SAMBA_TRAFFIC_DIR`, else
/// `../shared/samba-tests/traffic` beside the repository.
pub fn sample_dir() -> PathBuf {
    std::env::var_os("KAURI_SAMBA_TRAFFIC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samba-tests/traffic")
        })
}

/// Whether Samba's Python traffic module can be imported; says why not.
pub fn samba_python() -> bool {
    match Command::new(PYTHON)
        .args(["-c", "import samba.emulate.traffic"])
        .output()
    {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            println!(
                "skipped: {PYTHON} cannot import samba.emulate.traffic (install python3-samba): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            false
        }
        Err(e) => {
            println!("skipped: cannot run {PYTHON}: {e}");
            false
        }
    }
}

/// A file of the bundled sample (`examples/traffic`).
pub fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traffic")
        .join(name)
}
