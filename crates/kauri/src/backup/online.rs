//! Backups pulled from a running DC over LDAP: the backup extended operation on an
//! encrypted connection, as an administrator.

use std::io::Read;

use anyhow::{bail, Context, Result};
use kauri_ldap_client::proto::controls as ctl;

use crate::admin::target::Credentials;

/// Which server to pull from, and as whom.
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// The DC: ldaps://host[:port], or ldap://host[:port] (StartTLS is used).
    #[arg(long)]
    pub server: Option<String>,
    #[command(flatten)]
    pub credentials: Credentials,
}

impl RemoteArgs {
    /// The server URL, which these commands need.
    pub fn server(&self) -> Result<String> {
        match &self.server {
            Some(s) => Ok(s.clone()),
            None => bail!("give --server ldaps://dc.example.com (or -H for a local data folder)"),
        }
    }
}

/// Options of `kauri domain backup online`.
#[derive(Debug, Clone, clap::Args)]
pub struct OnlineOptions {
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Folder to write the archive to (created if missing).
    #[arg(long)]
    pub targetdir: std::path::PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A reader over the pieces another thread receives.
struct Pieces {
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.rx.recv() {
                Ok(next) => {
                    self.current = next;
                    self.at = 0;
                }
                // The sender is gone: the stream ended (or broke, which the caller learns
                // from the operation's result).
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Pulls a dump from the server with the backup extended operation and hands it to `load`
/// (on a thread of its own, as it arrives) with its size; returns the sealing key when
/// `with_key` and the server sent it.
pub fn pull(
    remote: &RemoteArgs,
    with_key: bool,
    load: impl FnOnce(&mut dyn Read, Option<u64>) -> Result<()> + Send,
) -> Result<Option<Vec<u8>>> {
    let server = remote.server()?;
    let rt = crate::admin::remote::runtime()?;
    let mut client = rt.block_on(crate::admin::remote::connect(&server, &remote.credentials))?;
    if !client.is_encrypted() {
        bail!("a backup travels over an encrypted connection only");
    }
    let (size_tx, size_rx) = std::sync::mpsc::sync_channel::<u64>(1);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(16);
    std::thread::scope(|scope| {
        let loader = scope.spawn(move || -> Result<()> {
            let size = size_rx.recv().ok();
            let mut pieces = Pieces {
                rx,
                current: Vec::new(),
                at: 0,
            };
            load(&mut pieces, size)
        });
        let mut first = true;
        let mut size_tx = Some(size_tx);
        let streamed = rt.block_on(client.extended_stream(
            ctl::KAURI_BACKUP,
            Some(vec![u8::from(with_key)]),
            Vec::new(),
            |piece| {
                let value = piece.value.unwrap_or_default();
                if first {
                    first = false;
                    let size = value
                        .get(..8)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_be_bytes)
                        .ok_or_else(|| {
                            kauri_ldap_client::ClientError::Protocol(
                                "the backup stream does not start with its size".into(),
                            )
                        })?;
                    if let Some(t) = size_tx.take() {
                        let _ = t.send(size);
                    }
                    return Ok(());
                }
                tx.send(value).map_err(|_| {
                    kauri_ldap_client::ClientError::Protocol(
                        "the backup stopped while loading (see the load's error)".into(),
                    )
                })
            },
        ));
        // Whatever happened, the loader hears the end of the stream.
        drop(size_tx);
        drop(tx);
        let loaded = loader
            .join()
            .map_err(|_| anyhow::anyhow!("the loader thread panicked"))?;
        let response = match streamed {
            Ok(r) => r,
            Err(e) => {
                // The load's own error says more when it stopped first.
                loaded?;
                return Err(
                    anyhow::Error::from(e).context(format!("pulling the backup from {server}"))
                );
            }
        };
        if response.result.code.0 != 0 {
            return Err(crate::admin::remote::refused(&response.result)
                .context(format!("the backup from {server}")));
        }
        loaded.context("loading the pulled database")?;
        Ok(if with_key { response.value } else { None })
    })
}
