//! DNS messages (RFC 1035 §4) as a server receives and sends them: queries, responses,
//! NOTIFY and dynamic updates (RFC 2136), with EDNS (RFC 6891) and TSIG/TKEY records.
//!
//! * [`Message::decode`] is strict: counts, lengths and pointers are checked against the
//!   buffer, OPT may only be the one record of its kind in the additional section, TSIG
//!   only the last additional record, and no bytes may follow the last section.
//! * [`Message::encode`] compresses names; [`Message::encode_limited`] truncates to fit
//!   a UDP payload.

mod decode;
mod encode;
pub(crate) mod reader;
pub(crate) mod writer;

use crate::name::Name;
use crate::rdata::{rtype, RData};
use crate::tsig::{Tkey, Tsig};

/// Operation codes (header OPCODE).
pub mod opcode {
    /// A standard query.
    pub const QUERY: u8 = 0;
    /// Zone change notification (RFC 1996).
    pub const NOTIFY: u8 = 4;
    /// Dynamic update (RFC 2136).
    pub const UPDATE: u8 = 5;
}

/// Response codes: the header's 4 bits (0–15), and the extended values EDNS (in the OPT
/// record's upper bits) and TSIG/TKEY (in their 16-bit error fields) carry.
pub mod rcode {
    /// No error.
    pub const NOERROR: u8 = 0;
    /// The request could not be read.
    pub const FORMERR: u8 = 1;
    /// The server failed.
    pub const SERVFAIL: u8 = 2;
    /// The name does not exist.
    pub const NXDOMAIN: u8 = 3;
    /// The operation is not implemented.
    pub const NOTIMP: u8 = 4;
    /// Refused by policy.
    pub const REFUSED: u8 = 5;
    /// UPDATE: a name exists that should not.
    pub const YXDOMAIN: u8 = 6;
    /// UPDATE: an RRset exists that should not.
    pub const YXRRSET: u8 = 7;
    /// UPDATE: an RRset that should exist does not.
    pub const NXRRSET: u8 = 8;
    /// Not authoritative for the zone (or, with TSIG, not authorized).
    pub const NOTAUTH: u8 = 9;
    /// UPDATE: a name is outside the zone.
    pub const NOTZONE: u8 = 10;
    /// TSIG: the signature does not verify (TSIG error field).
    pub const BADSIG: u8 = 16;
    /// EDNS: unsupported version (extended RCODE; same value as BADSIG).
    pub const BADVERS: u8 = 16;
    /// TSIG/TKEY: unknown key.
    pub const BADKEY: u8 = 17;
    /// TSIG/TKEY: time outside the fudge window.
    pub const BADTIME: u8 = 18;
    /// TKEY: unsupported mode.
    pub const BADMODE: u8 = 19;
    /// TKEY: duplicate key name.
    pub const BADNAME: u8 = 20;
    /// TKEY: unsupported algorithm.
    pub const BADALG: u8 = 21;
}

/// The fixed 12-byte header's flags and codes (the section counts follow from the
/// sections themselves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// Matches a response to its request.
    pub id: u16,
    /// Set in responses.
    pub qr: bool,
    /// The operation ([`opcode`]), 4 bits.
    pub opcode: u8,
    /// Authoritative answer.
    pub aa: bool,
    /// Truncated: the client should retry over TCP.
    pub tc: bool,
    /// Recursion desired (copied into responses).
    pub rd: bool,
    /// Recursion available.
    pub ra: bool,
    /// Authentic data (RFC 4035).
    pub ad: bool,
    /// Checking disabled (RFC 4035).
    pub cd: bool,
    /// The low 4 bits of the response code ([`rcode`]).
    pub rcode: u8,
}

impl Header {
    pub(crate) fn flags(&self) -> u16 {
        (u16::from(self.qr) << 15)
            | (u16::from(self.opcode & 0x0F) << 11)
            | (u16::from(self.aa) << 10)
            | (u16::from(self.tc) << 9)
            | (u16::from(self.rd) << 8)
            | (u16::from(self.ra) << 7)
            | (u16::from(self.ad) << 5)
            | (u16::from(self.cd) << 4)
            | u16::from(self.rcode & 0x0F)
    }

    pub(crate) fn from_parts(id: u16, flags: u16) -> Header {
        Header {
            id,
            qr: flags & 0x8000 != 0,
            opcode: ((flags >> 11) & 0x0F) as u8,
            aa: flags & 0x0400 != 0,
            tc: flags & 0x0200 != 0,
            rd: flags & 0x0100 != 0,
            ra: flags & 0x0080 != 0,
            ad: flags & 0x0020 != 0,
            cd: flags & 0x0010 != 0,
            rcode: (flags & 0x0F) as u8,
        }
    }
}

/// The header of a datagram that may not decode as a whole, so a FORMERR (or NOTIMP)
/// reply can still carry the request's id and opcode. `None` below 12 bytes.
pub fn peek_header(buf: &[u8]) -> Option<Header> {
    let id = u16::from_be_bytes([*buf.first()?, *buf.get(1)?]);
    let flags = u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]);
    buf.get(11)?;
    Some(Header::from_parts(id, flags))
}

/// One question (for UPDATE: the zone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Question {
    /// The name asked about.
    pub name: Name,
    /// The type asked for (for UPDATE: SOA).
    pub qtype: u16,
    /// The class (IN).
    pub qclass: u16,
}

/// What a resource record carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordData {
    /// Ordinary data.
    Data(RData),
    /// No data (RDLENGTH 0), as RFC 2136 prerequisites and deletions use with class ANY.
    Empty,
    /// EDNS options (code, value) of an OPT record.
    Opt(Vec<(u16, Vec<u8>)>),
    /// A transaction signature.
    Tsig(Tsig),
    /// A transaction key negotiation.
    Tkey(Tkey),
}

/// A resource record in one of a message's sections. For OPT, `class` is the UDP payload
/// size and `ttl` carries the extended RCODE, version and flags (see [`Edns`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The owner name.
    pub name: Name,
    /// The record type; written as is, and the data is read by it.
    pub rtype: u16,
    /// The class.
    pub class: u16,
    /// Time to live, seconds.
    pub ttl: u32,
    /// The data.
    pub data: RecordData,
}

/// A DNS message. For UPDATE the sections are zone, prerequisite, update and additional.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    /// Header flags and codes.
    pub header: Header,
    /// Question section (UPDATE: zone).
    pub questions: Vec<Question>,
    /// Answer section (UPDATE: prerequisites).
    pub answers: Vec<Record>,
    /// Authority section (UPDATE: updates).
    pub authority: Vec<Record>,
    /// Additional section, with any OPT and TSIG record.
    pub additional: Vec<Record>,
}

/// A decoded message and where its TSIG record starts, which a verifier needs to
/// rebuild the signed bytes ([`crate::tsig::request_digest_input`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The message.
    pub message: Message,
    /// The byte offset of the TSIG record (always the last additional record), if any.
    pub tsig_start: Option<usize>,
}

/// The EDNS parameters of an OPT record (RFC 6891 §6.1.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Edns {
    /// The largest UDP payload the sender takes.
    pub udp_size: u16,
    /// The upper 8 bits of the 12-bit extended RCODE.
    pub ext_rcode: u8,
    /// EDNS version (0).
    pub version: u8,
    /// DNSSEC OK.
    pub dnssec_ok: bool,
    /// Options (code, value), e.g. cookies (10).
    pub options: Vec<(u16, Vec<u8>)>,
}

impl Edns {
    fn record(&self) -> Record {
        Record {
            name: Name::root(),
            rtype: rtype::OPT,
            class: self.udp_size,
            ttl: (u32::from(self.ext_rcode) << 24)
                | (u32::from(self.version) << 16)
                | if self.dnssec_ok { 0x8000 } else { 0 },
            data: RecordData::Opt(self.options.clone()),
        }
    }
}

impl Message {
    /// The start of a response to `request`: same id, opcode, RD and CD, the questions
    /// copied, QR set, everything else empty.
    pub fn response_to(request: &Message) -> Message {
        Message {
            header: Header {
                id: request.header.id,
                qr: true,
                opcode: request.header.opcode,
                rd: request.header.rd,
                cd: request.header.cd,
                ..Header::default()
            },
            questions: request.questions.clone(),
            ..Message::default()
        }
    }

    /// The EDNS parameters, when the message has an OPT record.
    pub fn edns(&self) -> Option<Edns> {
        let opt = self.additional.iter().find(|r| r.rtype == rtype::OPT)?;
        let options = match &opt.data {
            RecordData::Opt(o) => o.clone(),
            _ => Vec::new(),
        };
        Some(Edns {
            udp_size: opt.class,
            ext_rcode: (opt.ttl >> 24) as u8,
            version: (opt.ttl >> 16) as u8,
            dnssec_ok: opt.ttl & 0x8000 != 0,
            options,
        })
    }

    /// Adds, replaces or (with `None`) removes the OPT record. A new one goes last in the
    /// additional section, but before a TSIG record, which must stay last.
    pub fn set_edns(&mut self, edns: Option<Edns>) {
        let Some(edns) = edns else {
            self.additional.retain(|r| r.rtype != rtype::OPT);
            return;
        };
        let rec = edns.record();
        if let Some(slot) = self.additional.iter_mut().find(|r| r.rtype == rtype::OPT) {
            *slot = rec;
            return;
        }
        let at = match self.additional.last() {
            Some(last) if last.rtype == rtype::TSIG => self.additional.len() - 1,
            _ => self.additional.len(),
        };
        self.additional.insert(at, rec);
    }

    /// The full response code: the header's 4 bits, extended by the OPT record's upper 8
    /// bits when there is one.
    pub fn rcode(&self) -> u16 {
        let ext = self.edns().map_or(0, |e| u16::from(e.ext_rcode));
        (ext << 4) | u16::from(self.header.rcode & 0x0F)
    }

    /// Sets the full response code. Codes above 15 need an OPT record (RFC 6891 §6.1.3);
    /// without one only the low 4 bits can be sent.
    pub fn set_rcode(&mut self, code: u16) {
        self.header.rcode = (code & 0x0F) as u8;
        if let Some(opt) = self.additional.iter_mut().find(|r| r.rtype == rtype::OPT) {
            let ext = u32::from((code >> 4) as u8);
            opt.ttl = (opt.ttl & 0x00FF_FFFF) | (ext << 24);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
