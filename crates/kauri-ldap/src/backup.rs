//! The backup extended operation ([`kauri_ldap_proto::controls::KAURI_BACKUP`]): a
//! domain's database streamed to an administrator as a dump.
//!
//! The dump is written from one snapshot into an unnamed spool file in the data folder as
//! fast as the disk takes it, and the snapshot is released before the first byte goes to
//! the client: a slow client never pins an old snapshot (which would keep the writer from
//! growing the map), and the stream it receives is one consistent state whatever its speed.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use kauri_db::db::TABLES;
use kauri_ldap_proto::controls as ctl;
use kauri_ldap_proto::{
    ExtendedResponse, IntermediateResponse, LdapResult, MessageId, ProtocolOp, ResultCode,
};
use tokio::sync::mpsc;

use crate::ctx::Ctx;

/// Largest piece of the dump in one intermediate response.
const PIECE: usize = 1 << 20;

/// Why a backup stopped.
enum Stop {
    /// The client went away; nothing more to send.
    Gone,
    /// The server could not produce the dump.
    Failed(String),
}

/// Runs on a blocking thread: spools the dump, streams it as intermediate responses to
/// `out` and ends with the final response. `encode` turns an operation into the bytes of
/// a message with id `id`. Returns whether the backup was delivered.
pub(crate) fn run(
    ctx: &Arc<Ctx>,
    id: MessageId,
    with_key: bool,
    out: &mpsc::Sender<Vec<u8>>,
    encode: impl Fn(MessageId, ProtocolOp) -> Vec<u8>,
) -> bool {
    let send = |op: ProtocolOp| out.blocking_send(encode(id, op)).map_err(|_| Stop::Gone);
    let result = (|| -> Result<(), Stop> {
        let failed = |what: &str, e: &dyn std::fmt::Display| Stop::Failed(format!("{what}: {e}"));
        let mut spool = tempfile::tempfile_in(&ctx.cfg().data)
            .or_else(|_| tempfile::tempfile())
            .map_err(|e| failed("no spool file for the dump", &e))?;
        {
            let snapshot = ctx.db.read().map_err(|e| failed("no snapshot", &e))?;
            let mut w = BufWriter::with_capacity(1 << 20, &mut spool);
            kauri_kv::dump::write_dump(snapshot.kv(), TABLES, &mut w)
                .map_err(|e| failed("dumping the database", &e))?;
            w.flush().map_err(|e| failed("spooling the dump", &e))?;
        }
        let size = spool
            .seek(SeekFrom::End(0))
            .and_then(|n| spool.rewind().map(|()| n))
            .map_err(|e| failed("spooling the dump", &e))?;
        let piece = |value: Vec<u8>| {
            ProtocolOp::IntermediateResponse(IntermediateResponse {
                name: Some(ctl::KAURI_BACKUP.to_string()),
                value: Some(value),
            })
        };
        send(piece(size.to_be_bytes().to_vec()))?;
        let mut buf = vec![0u8; PIECE];
        loop {
            let n = spool
                .read(&mut buf)
                .map_err(|e| failed("reading the spooled dump", &e))?;
            if n == 0 {
                break;
            }
            send(piece(buf[..n].to_vec()))?;
        }
        let key = if with_key {
            ctx.dir.secret_key().map(|k| k.to_bytes().to_vec())
        } else {
            None
        };
        send(ProtocolOp::ExtendedResponse(ExtendedResponse {
            result: LdapResult::success(),
            name: Some(ctl::KAURI_BACKUP.to_string()),
            value: key,
        }))
    })();
    match result {
        Ok(()) => {
            // Only a copy with the sealing key restores this domain; one without it is
            // a lab copy (`backup rename`), not a backup.
            if with_key {
                ctx.status.backed_up();
            }
            true
        }
        Err(Stop::Gone) => false,
        Err(Stop::Failed(why)) => {
            tracing::warn!(%why, "backup failed");
            let _ = send(ProtocolOp::ExtendedResponse(ExtendedResponse {
                result: LdapResult::new(ResultCode::OTHER, why),
                name: Some(ctl::KAURI_BACKUP.to_string()),
                value: None,
            }));
            false
        }
    }
}
