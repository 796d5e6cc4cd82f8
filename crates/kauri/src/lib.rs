//! The library half of the `kauri` command: what reads files that come from outside (LDIF,
//! backup archives, keytabs) and the data folder those files belong to, so they can be
//! tested and fuzzed without the command around them. The commands themselves live in the
//! binary.

pub mod backup {
    //! Backups: the archive format, written and verified here; the commands that take,
    //! verify and restore backups are the binary's.

    pub mod archive;
}
pub mod domain;
pub mod keytab;
pub mod ldif;
pub mod ldif_read;
pub mod paths;
pub mod profile;
