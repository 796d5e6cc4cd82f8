//! Connection-oriented DCE/RPC (C706, MS-RPCE) over TCP or SMB named pipes.
//!
//! A Bind or Alter_context names the interface of each presentation context; a Request
//! names its operation, and a Response is matched to its Request by call id. The final
//! fragment of a Request or Response to an interface the summary lists is written under
//! the interface's name with the operation number and name (`rpc_netlogon 4
//! NetrServerReqChallenge`); other packets as `dcerpc` with the packet type (`11 Bind`).
//! Calls to interfaces the summary does not list are counted, not written.

use std::collections::HashMap;

use super::names;
use super::{Framing, Outcome, Record};

/// Most pipes, contexts per pipe and outstanding calls per pipe remembered.
const MAX_ENTRIES: usize = 1024;

/// An RPC interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interface {
    /// Listed in summaries: its protocol name and operation names.
    Listed(&'static str, &'static [(u16, &'static str)]),
    /// Known, but not listed.
    Other(&'static str),
}

const INTERFACES: &[(&str, Interface)] = &[
    (
        "e1af8308-5d1f-11c9-91a4-08002b14a0fa",
        Interface::Listed("epm", names::EPM),
    ),
    (
        "12345778-1234-abcd-ef00-0123456789ab",
        Interface::Listed("lsarpc", names::LSARPC),
    ),
    (
        "12345778-1234-abcd-ef00-0123456789ac",
        Interface::Listed("samr", names::SAMR),
    ),
    (
        "12345678-1234-abcd-ef00-01234567cffb",
        Interface::Listed("rpc_netlogon", names::NETLOGON),
    ),
    (
        "e3514235-4b06-11d1-ab04-00c04fc2dcd2",
        Interface::Listed("drsuapi", names::DRSUAPI),
    ),
    (
        "50abc2a4-574d-40b3-9d66-ee4fd5fba076",
        Interface::Listed("dnsserver", names::DNSSERVER),
    ),
    (
        "4b324fc8-1670-01d3-1278-5a47bf6ee188",
        Interface::Listed("srvsvc", names::SRVSVC),
    ),
    (
        "6bffd098-a112-3610-9833-46c3f87e345a",
        Interface::Other("wkssvc"),
    ),
    (
        "338cd001-2244-31f1-aaaa-900038001003",
        Interface::Other("winreg"),
    ),
    (
        "3919286a-b10c-11d0-9ba8-00c04fd92ef5",
        Interface::Other("dssetup"),
    ),
    (
        "afa8bd80-7d8a-11c9-bef4-08002b102989",
        Interface::Other("mgmt"),
    ),
    (
        "12345678-1234-abcd-ef00-0123456789ab",
        Interface::Other("spoolss"),
    ),
    (
        "4fc742e0-4a10-11cf-8273-00aa004ae673",
        Interface::Other("netdfs"),
    ),
    (
        "3dde7c30-165d-11d1-ab8f-00805f14db40",
        Interface::Other("backupkey"),
    ),
    (
        "367abb81-9844-35f1-ad32-98f038001003",
        Interface::Other("svcctl"),
    ),
    (
        "82273fdc-e32a-18c3-3f78-827929dc23ea",
        Interface::Other("eventlog"),
    ),
    (
        "f5cc59b4-4264-101a-8c59-08002b2f8426",
        Interface::Other("frsrpc"),
    ),
    (
        "897e2e5f-93f3-4376-9c9c-fd2277495c27",
        Interface::Other("frstrans"),
    ),
    (
        "99fcfec4-5260-101b-bbcb-00aa0021347a",
        Interface::Other("oxid"),
    ),
    (
        "000001a0-0000-0000-c000-000000000046",
        Interface::Other("isystemactivator"),
    ),
    (
        "1ff70682-0a51-30e8-076d-740be8cee98b",
        Interface::Other("atsvc"),
    ),
    (
        "894de0c0-0d55-11d3-a322-00c04fa321a1",
        Interface::Other("initshutdown"),
    ),
    (
        "c681d488-d850-11d0-8c52-00c04fd90f7e",
        Interface::Other("efs"),
    ),
];

/// The name of a packet type.
pub fn packet_type_name(t: u8) -> &'static str {
    const NAMES: [&str; 21] = [
        "Request",
        "Ping",
        "Response",
        "Fault",
        "Working",
        "Nocall",
        "Reject",
        "Ack",
        "Cl_cancel",
        "Fack",
        "Cancel_ack",
        "Bind",
        "Bind_ack",
        "Bind_nak",
        "Alter_context",
        "Alter_context_resp",
        "AUTH3",
        "Shutdown",
        "Co_cancel",
        "Orphaned",
        "RPC-over-HTTP RTS",
    ];
    NAMES.get(usize::from(t)).copied().unwrap_or("Unknown")
}

/// What one pipe (a TCP connection, or an SMB file id) remembers.
#[derive(Debug, Default)]
struct Pipe {
    contexts: HashMap<u16, Interface>,
    calls: HashMap<u32, u16>,
}

/// The RPC state of one conversation, per pipe.
#[derive(Debug, Default)]
pub struct RpcState {
    pipes: HashMap<[u8; 16], Pipe>,
}

impl RpcState {
    fn pipe(&mut self, key: [u8; 16]) -> &mut Pipe {
        if self.pipes.len() >= MAX_ENTRIES && !self.pipes.contains_key(&key) {
            self.pipes.clear();
        }
        self.pipes.entry(key).or_default()
    }
}

/// Whether bytes look like the start of a connection-oriented PDU.
pub fn looks_like_pdu(buf: &[u8]) -> bool {
    buf.len() >= 16
        && buf[0] == 5
        && buf[1] <= 1
        && buf[2] <= 20
        && buf[4] & 0xee == 0
        && buf[5] <= 3
        && frag_len(buf).is_some_and(|n| n >= 16)
}

fn le(buf: &[u8]) -> bool {
    buf.get(4).is_some_and(|d| d & 0x10 != 0)
}

fn u16_at(buf: &[u8], at: usize) -> Option<u16> {
    crate::capture::u16_at(buf, at, !le(buf))
}

fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    crate::capture::u32_at(buf, at, !le(buf))
}

fn frag_len(buf: &[u8]) -> Option<usize> {
    u16_at(buf, 8).map(usize::from)
}

/// Where the first PDU in a TCP stream buffer ends.
pub fn framing(buf: &[u8]) -> Framing {
    if buf.len() < 16 {
        return if buf.first().is_none_or(|b| *b == 5) {
            Framing::NeedMore
        } else {
            Framing::NotAStart
        };
    }
    if !looks_like_pdu(buf) {
        return Framing::NotAStart;
    }
    frag_len(buf).map_or(Framing::NotAStart, Framing::Pdu)
}

/// A UUID in its usual text form, read in the PDU's byte order.
fn uuid(buf: &[u8], at: usize) -> Option<String> {
    let b = buf.get(at..at + 16)?;
    Some(format!(
        "{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        u32_at(buf, at)?,
        u16_at(buf, at + 4)?,
        u16_at(buf, at + 6)?,
        b[8],
        b[9],
        b[10],
        b[11],
        b[12],
        b[13],
        b[14],
        b[15]
    ))
}

fn interface(uuid: &str) -> Option<Interface> {
    INTERFACES.iter().find(|(u, _)| *u == uuid).map(|(_, i)| *i)
}

/// Remembers the interfaces a Bind or Alter_context names.
fn bind(pipe: &mut Pipe, pdu: &[u8]) {
    let Some(&count) = pdu.get(24) else {
        return;
    };
    let mut at = 28;
    for _ in 0..count {
        let (Some(ctx), Some(&transfers)) = (u16_at(pdu, at), pdu.get(at + 2)) else {
            return;
        };
        let Some(id) = uuid(pdu, at + 4) else {
            return;
        };
        if let Some(i) = interface(&id) {
            if pipe.contexts.len() >= MAX_ENTRIES {
                pipe.contexts.clear();
            }
            pipe.contexts.insert(ctx, i);
        } else {
            pipe.contexts.remove(&ctx);
        }
        at += 24 + 20 * usize::from(transfers);
    }
}

/// The outcomes of the PDUs in `data` (one or more, back to back) on pipe `key`.
pub fn dissect(state: &mut RpcState, key: [u8; 16], data: &[u8], cut: bool) -> Vec<Outcome> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        if !looks_like_pdu(rest) {
            if out.is_empty() || !cut {
                let short = cut && rest.len() < 16 && rest.first() == Some(&5);
                out.push(Outcome::Record(Record::bad("dcerpc", short)));
            }
            break;
        }
        let len = frag_len(rest).unwrap_or(rest.len()).min(rest.len());
        out.push(pdu(state.pipe(key), &rest[..len]));
        rest = &rest[len..];
    }
    out
}

/// One PDU's outcome.
fn pdu(pipe: &mut Pipe, p: &[u8]) -> Outcome {
    let ptype = p[2];
    let last_frag = p[3] & 0x02 != 0;
    let call = u32_at(p, 12).unwrap_or(0);
    let generic = || {
        Outcome::Record(Record::op(
            "dcerpc",
            ptype.to_string(),
            packet_type_name(ptype),
        ))
    };
    let (ctx, opnum) = match ptype {
        11 | 14 => {
            bind(pipe, p);
            return generic();
        }
        0 => {
            let (Some(ctx), Some(opnum)) = (u16_at(p, 20), u16_at(p, 22)) else {
                return generic();
            };
            if pipe.calls.len() >= MAX_ENTRIES {
                pipe.calls.clear();
            }
            pipe.calls.insert(call, opnum);
            (ctx, opnum)
        }
        2 => {
            let Some(ctx) = u16_at(p, 20) else {
                return generic();
            };
            let opnum = if last_frag {
                pipe.calls.remove(&call)
            } else {
                pipe.calls.get(&call).copied()
            };
            let Some(opnum) = opnum else {
                return generic();
            };
            (ctx, opnum)
        }
        _ => return generic(),
    };
    if !last_frag {
        return generic();
    }
    match pipe.contexts.get(&ctx) {
        Some(Interface::Listed(name, table)) => {
            let op = table
                .iter()
                .find(|(n, _)| *n == opnum)
                .map_or("Unknown operation", |(_, s)| s);
            Outcome::Record(Record::op(name, opnum.to_string(), op))
        }
        Some(Interface::Other(name)) => Outcome::Ignored(name),
        None => generic(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian PDU header followed by `body`.
    pub(crate) fn pdu_bytes(ptype: u8, call: u32, body: &[u8]) -> Vec<u8> {
        let mut v = vec![5, 0, ptype, 3, 0x10, 0, 0, 0];
        v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&call.to_le_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn bind_then_request_names_the_operation() {
        let mut bind = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0];
        bind.extend_from_slice(&[0, 0, 1, 0]);
        // 12345678-1234-abcd-ef00-01234567cffb, little-endian fields.
        bind.extend_from_slice(&[
            0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0xcd, 0xab, 0xef, 0x00, 0x01, 0x23, 0x45, 0x67,
            0xcf, 0xfb, 1, 0, 0, 0,
        ]);
        bind.extend_from_slice(&[0; 20]);
        let mut state = RpcState::default();
        let out = dissect(&mut state, [0; 16], &pdu_bytes(11, 1, &bind), false);
        assert_eq!(out, [Outcome::Record(Record::op("dcerpc", "11", "Bind"))]);
        let req = pdu_bytes(0, 2, &[0, 0, 0, 0, 0, 0, 4, 0]);
        let out = dissect(&mut state, [0; 16], &req, false);
        assert_eq!(
            out,
            [Outcome::Record(Record::op(
                "rpc_netlogon",
                "4",
                "NetrServerReqChallenge"
            ))]
        );
        let resp = pdu_bytes(2, 2, &[0, 0, 0, 0, 0, 0, 0, 0]);
        let out = dissect(&mut state, [0; 16], &resp, false);
        assert_eq!(
            out,
            [Outcome::Record(Record::op(
                "rpc_netlogon",
                "4",
                "NetrServerReqChallenge"
            ))]
        );
        assert_eq!(framing(&req), Framing::Pdu(24));
        assert_eq!(framing(b"GET / HTTP/1.1\r\n"), Framing::NotAStart);
    }
}
