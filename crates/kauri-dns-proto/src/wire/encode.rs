//! Writing a message: name compression, and truncation to a payload limit.

use super::writer::Writer;
use super::{Message, Record, RecordData};
use crate::rdata::rtype;

/// Writes one record; `false` (and nothing written) when its data is over 65535 bytes.
fn record(w: &mut Writer, rec: &Record) -> bool {
    let mark = w.len();
    // A TSIG record's names are never compressed (RFC 8945 §4.2).
    w.name(&rec.name, rec.rtype != rtype::TSIG);
    w.u16(rec.rtype);
    w.u16(rec.class);
    w.u32(rec.ttl);
    let len_at = w.len();
    w.u16(0);
    match &rec.data {
        RecordData::Data(d) => d.write_wire(w),
        RecordData::Empty => {}
        RecordData::Opt(options) => {
            for (code, value) in options {
                let Ok(n) = u16::try_from(value.len()) else {
                    w.rewind(mark);
                    return false;
                };
                w.u16(*code);
                w.u16(n);
                w.bytes(value);
            }
        }
        RecordData::Tsig(t) => t.write(w),
        RecordData::Tkey(t) => t.write(w),
    }
    match u16::try_from(w.len() - len_at - 2) {
        Ok(n) => {
            w.patch_u16(len_at, n);
            true
        }
        Err(_) => {
            w.rewind(mark);
            false
        }
    }
}

impl Message {
    /// The message in wire form, names compressed (owner names, questions, and the names
    /// in NS, CNAME, PTR, SOA and MX data; never in SRV, TSIG or unknown data). A record
    /// whose data cannot be represented (over 65535 bytes) is left out, and a section is
    /// cut at 65535 records.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with(true)
    }

    pub(crate) fn encode_with(&self, compress: bool) -> Vec<u8> {
        let mut w = Writer::new(compress);
        w.u16(self.header.id);
        w.u16(self.header.flags());
        let counts_at = w.len();
        for _ in 0..4 {
            w.u16(0);
        }
        let mut qd = 0u16;
        for q in self.questions.iter().take(usize::from(u16::MAX)) {
            w.name(&q.name, true);
            w.u16(q.qtype);
            w.u16(q.qclass);
            qd += 1;
        }
        w.patch_u16(counts_at, qd);
        for (i, section) in [&self.answers, &self.authority, &self.additional]
            .into_iter()
            .enumerate()
        {
            let mut n = 0u16;
            for rec in section {
                if n == u16::MAX {
                    break;
                }
                if record(&mut w, rec) {
                    n += 1;
                }
            }
            w.patch_u16(counts_at + 2 * (i + 1), n);
        }
        w.into_bytes()
    }

    /// The message in at most `max` bytes, for a UDP reply. When it does not fit, the
    /// additional records go first (except OPT and TSIG, which must stay); if it still does
    /// not fit, TC is set and the authority records, then whole answer RRsets from the
    /// end, are dropped (RFC 2181 §9) until it fits. Should even the header, questions and
    /// OPT record not fit (only for a tiny `max`), the TSIG, the OPT's options, the OPT,
    /// and the questions go in turn; below 12 bytes the result is empty.
    pub fn encode_limited(&self, max: usize) -> Vec<u8> {
        let full = self.encode();
        if full.len() <= max {
            return full;
        }
        let mut m = self.clone();
        m.additional
            .retain(|r| r.rtype == rtype::OPT || r.rtype == rtype::TSIG);
        let bytes = m.encode();
        if bytes.len() <= max {
            return bytes;
        }
        m.header.tc = true;
        m.authority.clear();
        let answers = std::mem::take(&mut m.answers);
        // The most answers that fit: encoded size only grows with each record kept.
        let (mut lo, mut hi) = (0usize, answers.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            m.answers = answers.get(..mid).unwrap_or_default().to_vec();
            if m.encode().len() <= max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        // Keep whole RRsets only.
        let mut keep = lo;
        if keep < answers.len() {
            if let Some(cut) = answers.get(keep) {
                while keep > 0
                    && answers.get(keep - 1).is_some_and(|r| {
                        r.name == cut.name && r.rtype == cut.rtype && r.class == cut.class
                    })
                {
                    keep -= 1;
                }
            }
        }
        m.answers = answers.get(..keep).unwrap_or_default().to_vec();
        let bytes = m.encode();
        if bytes.len() <= max {
            return bytes;
        }
        // Only a tiny `max` gets here.
        m.additional.retain(|r| r.rtype != rtype::TSIG);
        for r in &mut m.additional {
            r.data = RecordData::Opt(Vec::new());
        }
        let bytes = m.encode();
        if bytes.len() <= max {
            return bytes;
        }
        m.additional.clear();
        let bytes = m.encode();
        if bytes.len() <= max {
            return bytes;
        }
        m.questions.clear();
        let bytes = m.encode();
        if bytes.len() <= max {
            return bytes;
        }
        Vec::new()
    }
}
