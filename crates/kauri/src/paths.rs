//! Where Kauri keeps things by default. Installed from its package and run as its service
//! user, `kauri` uses the packaged places — the settings in `/etc/kauri/kauri.toml`, the
//! domain in `/var/lib/kauri` — so `sudo -u kauri kauri domain provision …` creates the
//! domain the service serves; run as anyone else, it works in the current folder
//! (`./kauri-data`), as when trying Kauri out from a checkout.

use std::path::PathBuf;

/// The service user the package creates.
pub const SERVICE_USER: &str = "kauri";

/// The packaged settings file.
pub const PACKAGED_CONFIG: &str = "/etc/kauri/kauri.toml";

/// The packaged data folder.
pub const PACKAGED_DATA: &str = "/var/lib/kauri";

/// The data folder outside the package: in the current folder.
pub const LOCAL_DATA: &str = "kauri-data";

/// Whether this process runs as the service user.
pub fn as_service_user() -> bool {
    user_name(effective_uid()).as_deref() == Some(SERVICE_USER)
}

/// The data folder commands use unless told otherwise.
pub fn default_data() -> PathBuf {
    PathBuf::from(if as_service_user() {
        PACKAGED_DATA
    } else {
        LOCAL_DATA
    })
}

/// [`default_data`] as text, for options that also take a URL.
pub fn default_data_text() -> String {
    default_data().display().to_string()
}

/// The settings file `kauri serve` reads unless told otherwise: the packaged one for the
/// service user (when it exists), none otherwise (every setting at its default).
pub fn default_config() -> Option<PathBuf> {
    let packaged = PathBuf::from(PACKAGED_CONFIG);
    (as_service_user() && packaged.exists()).then_some(packaged)
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The name of a user id, from the system's user database.
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: getpwuid_r fills `pwd` with pointers into `buf`, which outlives their use
    // below; `result` is null or points at `pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            uid,
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pwd.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_named_and_is_not_the_service_user() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        if effective_uid() == 0 {
            assert!(!as_service_user());
            assert_eq!(default_data(), PathBuf::from(LOCAL_DATA));
            assert_eq!(default_config(), None);
        }
    }
}
