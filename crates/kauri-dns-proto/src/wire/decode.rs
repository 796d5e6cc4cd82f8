//! Reading a message from its bytes, strictly.

use super::reader::{Reader, HEADER_LEN};
use super::{Decoded, Header, Message, Question, Record, RecordData};
use crate::error::{ProtoError, Result};
use crate::rdata::{rtype, RData};
use crate::tsig::{Tkey, Tsig};

/// The smallest question: the root name, type and class.
const MIN_QUESTION: usize = 1 + 4;
/// The smallest record: the root name, type, class, TTL and RDLENGTH.
const MIN_RECORD: usize = 1 + 10;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Answer,
    Authority,
    Additional,
}

/// Reads one record; `start` of its data is checked against its length first.
fn record(r: &mut Reader<'_>, msg: &[u8]) -> Result<Record> {
    let name = r.name()?;
    let rtype = r.u16()?;
    let class = r.u16()?;
    let ttl = r.u32()?;
    let len = usize::from(r.u16()?);
    let start = r.pos();
    r.take(len)?;
    let bad = |reason| ProtoError::BadRdata { rtype, reason };
    let data = match rtype {
        rtype::OPT => {
            let mut d = Reader::sub(msg, start, len)?;
            let mut options = Vec::new();
            while !d.at_end() {
                let code = d.u16().map_err(|_| bad("option shorter than its header"))?;
                let n = d.u16().map_err(|_| bad("option shorter than its header"))?;
                let value = d
                    .take(usize::from(n))
                    .map_err(|_| bad("option longer than the record"))?;
                options.push((code, value.to_vec()));
            }
            RecordData::Opt(options)
        }
        rtype::TSIG => RecordData::Tsig(Tsig::decode(&mut Reader::sub(msg, start, len)?)?),
        rtype::TKEY => RecordData::Tkey(Tkey::decode(&mut Reader::sub(msg, start, len)?)?),
        _ if len == 0 => RecordData::Empty,
        _ => RecordData::Data(RData::decode_wire(rtype, msg, start, len)?),
    };
    Ok(Record {
        name,
        rtype,
        class,
        ttl,
        data,
    })
}

impl Message {
    /// Reads a message; see [`Message::decode_with_offsets`].
    pub fn decode(buf: &[u8]) -> Result<Message> {
        Ok(Message::decode_with_offsets(buf)?.message)
    }

    /// Reads a message and notes where its TSIG record starts. Strict: the section counts
    /// must fit the buffer (checked before anything is allocated), names may only point
    /// backwards, record data must fill its length, OPT may appear once and only in the
    /// additional section with the root as owner, TSIG only as the last additional
    /// record, and nothing may follow the last section. Every failure here deserves
    /// FORMERR.
    pub fn decode_with_offsets(buf: &[u8]) -> Result<Decoded> {
        let mut r = Reader::new(buf);
        let id = r.u16()?;
        let flags = r.u16()?;
        let qd = usize::from(r.u16()?);
        let an = usize::from(r.u16()?);
        let ns = usize::from(r.u16()?);
        let ar = usize::from(r.u16()?);
        let least = qd * MIN_QUESTION + (an + ns + ar) * MIN_RECORD;
        if least > buf.len().saturating_sub(HEADER_LEN) {
            return Err(ProtoError::Truncated);
        }
        let mut questions = Vec::with_capacity(qd);
        for _ in 0..qd {
            questions.push(Question {
                name: r.name()?,
                qtype: r.u16()?,
                qclass: r.u16()?,
            });
        }
        let mut sections: [Vec<Record>; 3] = [
            Vec::with_capacity(an),
            Vec::with_capacity(ns),
            Vec::with_capacity(ar),
        ];
        let mut seen_opt = false;
        let mut tsig_start = None;
        for ((section, count), records) in
            [Section::Answer, Section::Authority, Section::Additional]
                .into_iter()
                .zip([an, ns, ar])
                .zip(sections.iter_mut())
        {
            for i in 0..count {
                let start = r.pos();
                let rec = record(&mut r, buf)?;
                match rec.rtype {
                    rtype::OPT => {
                        if section != Section::Additional {
                            return Err(ProtoError::MisplacedOpt);
                        }
                        if seen_opt {
                            return Err(ProtoError::DuplicateOpt);
                        }
                        if !rec.name.is_root() {
                            return Err(ProtoError::BadRdata {
                                rtype: rtype::OPT,
                                reason: "owner name is not the root",
                            });
                        }
                        seen_opt = true;
                    }
                    rtype::TSIG => {
                        if section != Section::Additional || i + 1 != count {
                            return Err(ProtoError::MisplacedTsig);
                        }
                        tsig_start = Some(start);
                    }
                    _ => {}
                }
                records.push(rec);
            }
        }
        if !r.at_end() {
            return Err(ProtoError::TrailingBytes);
        }
        let [answers, authority, additional] = sections;
        Ok(Decoded {
            message: Message {
                header: Header::from_parts(id, flags),
                questions,
                answers,
                authority,
                additional,
            },
            tsig_start,
        })
    }
}
