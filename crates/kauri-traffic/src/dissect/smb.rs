//! SMB over NetBIOS sessions (TCP 139 and 445) and the mailslot datagrams of UDP 138.
//!
//! An SMB1 message is written as `smb` with the last command it names (an AndX chain's
//! last link, so `255 No further commands (0xff)` when the chain ends) and the command's
//! name with its hex code; an SMB2 message as `smb2` with its (last compounded) command
//! number and name; an encrypted or compressed SMB2 message as `smb2` with empty columns.
//! When the message carries DCE/RPC over a named pipe (SMB1 transactions, reads and
//! writes; SMB2 reads, writes and pipe transceive ioctls) the RPC packets are written
//! instead. Mailslot datagrams are written as `browser` or `smb_netlogon` with the
//! command byte (`0x00000008 Browser Election Request (0x08)`).

use std::collections::HashMap;

use super::dcerpc::{self, RpcState};
use super::names;
use super::{Framing, Outcome, Record};

/// Most outstanding requests remembered (to find a response's pipe).
const MAX_PENDING: usize = 1024;
/// FSCTL_PIPE_TRANSCEIVE.
const PIPE_TRANSCEIVE: u32 = 0x0011_c017;

/// What an SMB conversation remembers: which pipe each outstanding request used.
#[derive(Debug, Default)]
pub struct SmbState {
    pending: HashMap<u64, [u8; 16]>,
}

impl SmbState {
    fn remember(&mut self, mid: u64, key: [u8; 16]) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.clear();
        }
        self.pending.insert(mid, key);
    }
}

/// Where the first NetBIOS session message in a TCP stream buffer ends.
pub fn framing(buf: &[u8]) -> Framing {
    match buf.get(..4) {
        None => Framing::NeedMore,
        Some(h) if matches!(h[0], 0x00 | 0x81..=0x85) => Framing::Pdu(
            4 + ((usize::from(h[1]) << 16) | usize::from(u16::from_be_bytes([h[2], h[3]]))),
        ),
        Some(_) => Framing::NotAStart,
    }
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    crate::capture::u16_at(b, at, false)
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    crate::capture::u32_at(b, at, false)
}

/// A pipe key from an SMB1 file id.
fn fid_key(fid: u16) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..2].copy_from_slice(&fid.to_le_bytes());
    k
}

/// `len` bytes at `offset` of `msg`, as far as they were captured.
fn slice(msg: &[u8], offset: usize, len: usize) -> Option<&[u8]> {
    let start = msg.get(offset..)?;
    Some(&start[..len.min(start.len())])
}

/// The outcomes of one NetBIOS session message.
pub fn nbss(smb: &mut SmbState, rpc: &mut RpcState, pdu: &[u8], cut: bool) -> Vec<Outcome> {
    if pdu.first() != Some(&0) {
        return vec![Outcome::Ignored("nbss")];
    }
    let msg = pdu.get(4..).unwrap_or(&[]);
    match msg.get(..4) {
        Some([0xff, b'S', b'M', b'B']) => smb1(smb, rpc, msg, cut),
        Some([0xfe, b'S', b'M', b'B']) => smb2(smb, rpc, msg, cut),
        Some([0xfd | 0xfc, b'S', b'M', b'B']) => vec![Outcome::Record(Record::op("smb2", "", ""))],
        _ => vec![Outcome::Ignored("nbss")],
    }
}

fn smb1_name(cmd: u8) -> String {
    let name = names::SMB_COMMANDS
        .iter()
        .find(|(c, _)| *c == cmd)
        .map_or_else(|| format!("unknown-0x{cmd:02X}"), |(_, n)| n.to_string());
    format!("{name} (0x{cmd:02x})")
}

fn is_andx(cmd: u8) -> bool {
    matches!(cmd, 0x24 | 0x2d | 0x2e | 0x2f | 0x73 | 0x74 | 0x75 | 0xa2)
}

/// The last command an SMB1 message names, following its AndX chain.
fn last_command(msg: &[u8]) -> Option<u8> {
    let mut cmd = *msg.get(4)?;
    let mut last = cmd;
    let mut off = 32;
    for _ in 0..16 {
        if !is_andx(cmd) || msg.get(off).is_none_or(|wc| *wc < 2) {
            break;
        }
        let (Some(&next), Some(next_off)) = (msg.get(off + 1), le16(msg, off + 3)) else {
            break;
        };
        last = next;
        let next_off = usize::from(next_off);
        if next == 0xff || next_off <= off || next_off >= msg.len() {
            break;
        }
        cmd = next;
        off = next_off;
    }
    Some(last)
}

fn smb1(smb: &mut SmbState, rpc: &mut RpcState, msg: &[u8], cut: bool) -> Vec<Outcome> {
    if msg.len() < 5 || (msg.len() < 33 && !cut) {
        return vec![Outcome::Record(Record::bad("smb", cut))];
    }
    if let Some((key, data)) = smb1_pipe_data(smb, msg) {
        if dcerpc::looks_like_pdu(data) {
            return dcerpc::dissect(rpc, key, data, cut);
        }
    }
    match last_command(msg) {
        Some(cmd) => vec![Outcome::Record(Record::op(
            "smb",
            cmd.to_string(),
            smb1_name(cmd),
        ))],
        None => vec![Outcome::Record(Record::bad("smb", cut))],
    }
}

/// The pipe and data of an SMB1 message that may carry DCE/RPC.
fn smb1_pipe_data<'a>(smb: &mut SmbState, msg: &'a [u8]) -> Option<([u8; 16], &'a [u8])> {
    let cmd = *msg.get(4)?;
    let reply = msg.get(9)? & 0x80 != 0;
    let mid = u64::from(le16(msg, 30)?);
    let wc = usize::from(*msg.get(32)?);
    let w = 33;
    match (cmd, reply) {
        (0x25, false) if wc >= 16 => {
            let setup_count = *msg.get(w + 26)?;
            if setup_count < 2 || le16(msg, w + 28)? != 0x26 {
                return None;
            }
            let key = fid_key(le16(msg, w + 30)?);
            smb.remember(mid, key);
            let (count, offset) = (le16(msg, w + 22)?, le16(msg, w + 24)?);
            Some((key, slice(msg, usize::from(offset), usize::from(count))?))
        }
        (0x25, true) if wc >= 10 => {
            let key = smb.pending.remove(&mid)?;
            let (count, offset) = (le16(msg, w + 12)?, le16(msg, w + 14)?);
            Some((key, slice(msg, usize::from(offset), usize::from(count))?))
        }
        (0x2f, false) if wc >= 12 => {
            let key = fid_key(le16(msg, w + 4)?);
            let (count, offset) = (le16(msg, w + 20)?, le16(msg, w + 22)?);
            Some((key, slice(msg, usize::from(offset), usize::from(count))?))
        }
        (0x2e, false) if wc >= 10 => {
            smb.remember(mid, fid_key(le16(msg, w + 4)?));
            None
        }
        (0x2e, true) if wc >= 12 => {
            let key = smb.pending.remove(&mid)?;
            let (count, offset) = (le16(msg, w + 10)?, le16(msg, w + 12)?);
            Some((key, slice(msg, usize::from(offset), usize::from(count))?))
        }
        _ => None,
    }
}

fn smb2_name(cmd: u16) -> String {
    const NAMES: [&str; 19] = [
        "Negotiate Protocol",
        "Session Setup",
        "Session Logoff",
        "Tree Connect",
        "Tree Disconnect",
        "Create",
        "Close",
        "Flush",
        "Read",
        "Write",
        "Lock",
        "Ioctl",
        "Cancel",
        "KeepAlive",
        "Find",
        "Notify",
        "GetInfo",
        "SetInfo",
        "Break",
    ];
    NAMES
        .get(usize::from(cmd))
        .map_or_else(|| format!("unknown-0x{cmd:02X}"), |n| n.to_string())
}

fn smb2(smb: &mut SmbState, rpc: &mut RpcState, msg: &[u8], cut: bool) -> Vec<Outcome> {
    let mut rpc_out = Vec::new();
    let mut last = None;
    let mut off = 0usize;
    for _ in 0..64 {
        let Some(hdr) = msg.get(off..) else {
            break;
        };
        let Some(cmd) = le16(hdr, 12) else {
            break;
        };
        last = Some(cmd);
        if let Some((key, data)) = smb2_pipe_data(smb, hdr) {
            if dcerpc::looks_like_pdu(data) {
                rpc_out.extend(dcerpc::dissect(rpc, key, data, cut));
            }
        }
        match le32(hdr, 20) {
            Some(next) if next >= 64 && next.is_multiple_of(8) => off += next as usize,
            _ => break,
        }
    }
    if !rpc_out.is_empty() {
        return rpc_out;
    }
    match last {
        Some(cmd) => vec![Outcome::Record(Record::op(
            "smb2",
            cmd.to_string(),
            smb2_name(cmd),
        ))],
        None => vec![Outcome::Record(Record::bad("smb2", cut))],
    }
}

/// The pipe and data of one SMB2 message that may carry DCE/RPC.
fn smb2_pipe_data<'a>(smb: &mut SmbState, hdr: &'a [u8]) -> Option<([u8; 16], &'a [u8])> {
    let cmd = le16(hdr, 12)?;
    let reply = le32(hdr, 16)? & 1 != 0;
    let mid = crate::capture::u64_at(hdr, 24, false)?;
    let body = hdr.get(64..)?;
    let file_id = |at: usize| -> Option<[u8; 16]> { body.get(at..at + 16)?.try_into().ok() };
    let data = |offset: u32, count: u32| slice(hdr, offset as usize, count as usize);
    match (cmd, reply) {
        (9, false) => {
            let key = file_id(16)?;
            Some((key, data(u32::from(le16(body, 2)?), le32(body, 4)?)?))
        }
        (8, false) => {
            smb.remember(mid, file_id(16)?);
            None
        }
        (8, true) => {
            let key = smb.pending.remove(&mid)?;
            Some((key, data(u32::from(*body.get(2)?), le32(body, 4)?)?))
        }
        (11, false) if le32(body, 4)? == PIPE_TRANSCEIVE => {
            Some((file_id(8)?, data(le32(body, 24)?, le32(body, 28)?)?))
        }
        (11, true) if le32(body, 4)? == PIPE_TRANSCEIVE => {
            Some((file_id(8)?, data(le32(body, 32)?, le32(body, 36)?)?))
        }
        _ => None,
    }
}

const BROWSER_COMMANDS: &[(u8, &str)] = &[
    (0x01, "Host Announcement"),
    (0x02, "Request Announcement"),
    (0x08, "Browser Election Request"),
    (0x09, "Get Backup List Request"),
    (0x0a, "Get Backup List Response"),
    (0x0b, "Become Backup Browser"),
    (0x0c, "Domain/Workgroup Announcement"),
    (0x0d, "Master Announcement"),
    (0x0e, "Reset Browser State Announcement"),
    (0x0f, "Local Master Announcement"),
];

const NETLOGON_COMMANDS: &[(u8, &str)] = &[
    (0x00, "LM1.0/LM2.0 LOGON Request"),
    (0x01, "LM1.0 LOGON Response"),
    (0x02, "LM1.0 Query - Centralized Initialization"),
    (0x03, "LM1.0 Query - Distributed Initialization"),
    (0x04, "LM1.0 Response - Centralized Query"),
    (0x05, "LM1.0 Response - Distributed Initialization"),
    (0x06, "LM2.0 Response to LOGON Request"),
    (0x07, "Query for PDC"),
    (0x08, "Announce Startup of PDC"),
    (0x09, "Announce Failed PDC"),
    (0x0a, "Announce Change to UAS or SAM"),
    (0x0b, "Announce no user on machine"),
    (0x0c, "Response from PDC"),
    (0x0d, "LM1.0/LM2.0 Response to re-LOGON Request"),
    (0x0e, "LM1.0/LM2.0 Response to Interrogate Request"),
    (0x0f, "LM2.0 Response during LOGON pause"),
    (0x10, "LM2.0 Response - user unknown"),
    (0x11, "LM2.0 Announce account updates"),
    (0x12, "SAM LOGON request from client"),
    (0x13, "Response to SAM LOGON request"),
    (0x14, "SAM Response during LOGON pause"),
    (0x15, "SAM Response - user unknown"),
    (0x16, "SAM Response to Interrogate Request"),
    (0x17, "SAM Active Directory Response - user unknown"),
    (0x18, "SAM unknown command 0x18"),
    (0x19, "Active Directory Response to SAM LOGON request"),
];

/// A command byte's line: `0x000000NN`, `Name (0xNN)`.
fn command(protocol: &'static str, table: &[(u8, &str)], c: u8) -> Outcome {
    let name = table
        .iter()
        .find(|(n, _)| *n == c)
        .map_or("Unknown", |(_, s)| s);
    Outcome::Record(Record::op(
        protocol,
        format!("0x{c:08x}"),
        format!("{name} (0x{c:02x})"),
    ))
}

/// Skips an encoded NetBIOS name; returns the offset after it.
fn skip_name(data: &[u8], mut at: usize) -> Option<usize> {
    for _ in 0..64 {
        let len = *data.get(at)?;
        if len == 0 {
            return Some(at + 1);
        }
        if len & 0xc0 == 0xc0 {
            return Some(at + 2);
        }
        at += 1 + usize::from(len);
    }
    None
}

/// The outcome of one NetBIOS datagram (UDP 138).
pub fn datagram(data: &[u8], cut: bool) -> Outcome {
    let Some(smb) = datagram_smb(data) else {
        return Outcome::Ignored("nbdgm");
    };
    if smb.len() < 5 || (smb.len() < 33 && !cut) {
        return Outcome::Record(Record::bad("smb", cut));
    }
    let generic = || Outcome::Record(Record::op("smb", smb[4].to_string(), smb1_name(smb[4])));
    if smb[4] != 0x25 {
        return generic();
    }
    let Some((name, payload)) = mailslot(smb) else {
        return generic();
    };
    let Some(&c) = payload.first() else {
        return Outcome::Ignored("mailslot");
    };
    let name = name.to_ascii_uppercase();
    if name.starts_with(b"\\MAILSLOT\\BROWSE") || name.starts_with(b"\\MAILSLOT\\LANMAN") {
        command("browser", BROWSER_COMMANDS, c)
    } else if name.starts_with(b"\\MAILSLOT\\NET\\")
        || name.starts_with(b"\\MAILSLOT\\TEMP\\NETLOGON")
    {
        command("smb_netlogon", NETLOGON_COMMANDS, c)
    } else {
        Outcome::Ignored("mailslot")
    }
}

/// The SMB message of a direct or broadcast datagram.
fn datagram_smb(data: &[u8]) -> Option<&[u8]> {
    if !matches!(data.first()?, 0x10..=0x12) {
        return None;
    }
    let at = skip_name(data, 14)?;
    let at = skip_name(data, at)?;
    let smb = data.get(at..)?;
    (smb.get(..4)? == [0xff, b'S', b'M', b'B']).then_some(smb)
}

/// The mailslot name and data of an SMB1 Trans request.
fn mailslot(smb: &[u8]) -> Option<(&[u8], &[u8])> {
    let wc = usize::from(*smb.get(32)?);
    let w = 33;
    if wc < 14 {
        return None;
    }
    let (count, offset) = (le16(smb, w + 22)?, le16(smb, w + 24)?);
    let bytes = smb.get(w + 2 * wc + 2..)?;
    let name = &bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())];
    Some((name, slice(smb, usize::from(offset), usize::from(count))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smb1_andx_chain_and_smb2() {
        let mut msg = vec![0xff, b'S', b'M', b'B', 0x73];
        msg.extend_from_slice(&[0; 27]);
        // Session Setup AndX → Tree Connect AndX → no further commands.
        msg.extend_from_slice(&[2, 0x75, 0, 39, 0, 0, 0]);
        msg.extend_from_slice(&[2, 0xff, 0, 0, 0, 0, 0]);
        let mut pdu = vec![0, 0, 0, msg.len() as u8];
        pdu.extend_from_slice(&msg);
        let out = nbss(
            &mut SmbState::default(),
            &mut RpcState::default(),
            &pdu,
            false,
        );
        assert_eq!(
            out,
            [Outcome::Record(Record::op(
                "smb",
                "255",
                "No further commands (0xff)"
            ))]
        );
        let mut msg2 = vec![0xfe, b'S', b'M', b'B', 64, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        msg2.extend_from_slice(&[0; 50]);
        let mut pdu2 = vec![0, 0, 0, msg2.len() as u8];
        pdu2.extend_from_slice(&msg2);
        let out = nbss(
            &mut SmbState::default(),
            &mut RpcState::default(),
            &pdu2,
            false,
        );
        assert_eq!(
            out,
            [Outcome::Record(Record::op(
                "smb2",
                "0",
                "Negotiate Protocol"
            ))]
        );
    }

    /// An SMB1 TransactNmPipe request on file id 0x4000 carrying `data`.
    fn trans_pipe(mid: u16, data: &[u8]) -> Vec<u8> {
        let mut m = vec![0xff, b'S', b'M', b'B', 0x25];
        m.extend_from_slice(&[0; 25]);
        m.extend_from_slice(&mid.to_le_bytes());
        m.push(16);
        let len = data.len() as u16;
        for w in [
            0u16, len, 0, 1024, 0, 0, 0, 0, 0, 0, 74, len, 74, 2, 0x26, 0x4000,
        ] {
            m.extend_from_slice(&w.to_le_bytes());
        }
        m.extend_from_slice(&(7 + len).to_le_bytes());
        m.extend_from_slice(b"\\PIPE\\\0");
        m.extend_from_slice(data);
        let mut pdu = vec![0, 0];
        pdu.extend_from_slice(&(m.len() as u16).to_be_bytes());
        pdu.extend_from_slice(&m);
        pdu
    }

    #[test]
    fn smb1_named_pipe_carries_rpc() {
        // Bind to srvsvc (4b324fc8-1670-01d3-1278-5a47bf6ee188), then NetShareEnumAll.
        let mut bind = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0];
        bind.extend_from_slice(&[
            0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01, 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e,
            0xe1, 0x88, 3, 0, 0, 0,
        ]);
        bind.extend_from_slice(&[0; 20]);
        let rpc = |ptype: u8, call: u32, body: &[u8]| {
            let mut v = vec![5, 0, ptype, 3, 0x10, 0, 0, 0];
            v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
            v.extend_from_slice(&[0, 0]);
            v.extend_from_slice(&call.to_le_bytes());
            v.extend_from_slice(body);
            v
        };
        let (mut smb, mut state) = (SmbState::default(), RpcState::default());
        let out = nbss(
            &mut smb,
            &mut state,
            &trans_pipe(1, &rpc(11, 1, &bind)),
            false,
        );
        assert_eq!(out, [Outcome::Record(Record::op("dcerpc", "11", "Bind"))]);
        let req = rpc(0, 2, &[0, 0, 0, 0, 0, 0, 15, 0]);
        let out = nbss(&mut smb, &mut state, &trans_pipe(2, &req), false);
        assert_eq!(
            out,
            [Outcome::Record(Record::op(
                "srvsvc",
                "15",
                "NetShareEnumAll"
            ))]
        );
    }
}
