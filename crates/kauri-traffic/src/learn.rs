//! Learning a [`Model`] from summaries, with the semantics of Samba's `traffic_learner`
//! (its default DNS handling, `count`), so the same summaries give the same model in
//! either tool.
//!
//! How packets become a model:
//!
//! 1. Every DNS packet, either direction, is counted by opcode into `dns` and takes no
//!    further part.
//! 2. The other packets of all summaries are taken in order (file by file, line by line;
//!    no time offset is applied between files) and their times are made relative to the
//!    earliest of them.
//! 3. A conversation is every packet between one pair of hosts, whatever the stream or
//!    protocol; conversations are ordered by their first packet in that order. A
//!    conversation's start is its first packet, replayable or not, and its packets' times
//!    are relative to that start.
//! 4. Each packet votes on which host is the client (requests such as an LDAP search or a
//!    DCE/RPC bind for the sender, responses for the receiver). Only replayable packets
//!    ([`crate::model::is_replayable`]; with [`Operations::Kauri`] also writes and
//!    explicit Kerberos exchanges, which then vote too) are kept, and conversations left
//!    with none are dropped.
//! 5. In each conversation only the client's packets are learned. A gap of more than 0.1 s
//!    before a packet adds a `wait:N` state first ([`crate::model::wait_bucket`]). The gap
//!    is measured from the previous client packet learned, which for a conversation's
//!    first packet is the last one of the conversation before (times being
//!    conversation-relative, that gap is often negative and adds no wait).
//! 6. States form a chain keyed by the two states before (`-` before the first); the end
//!    state `-` is added once, after the last conversation's last state.
//! 7. `query_details` counts each learned packet's extra columns.
//! 8. `packet_rate` is `[replayable packets of both sides, seconds]` where seconds run
//!    from the first conversation's start (summary-relative) to the latest
//!    conversation-relative time of any conversation's last packet, but at least 0.1 s;
//!    with fewer than two conversations it stays `[0, 1]`.
//! 9. `cumulative_duration` sums, per conversation, the time from its first to its last
//!    replayable packet.
//!
//! When a conversation's votes are even, the client is the host with the higher id, unless
//! that host was the server of the conversation learned just before.

use std::collections::{BTreeMap, HashMap};

use crate::model::{wait_bucket, Model, Operations, PacketRate, END, WAIT_THRESHOLD};
use crate::summary::{Packet, Timestamp};

/// Why no model could be learned.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// Nothing in the summaries is traffic a replayer could send.
    #[error(
        "the summaries hold no conversation with packets a replayer sends \
         ({packets} packets besides DNS, {dns} DNS packets)"
    )]
    NoConversations {
        /// Packets other than DNS.
        packets: usize,
        /// DNS packets.
        dns: usize,
    },
}

/// Learns a model from one or more summaries (each a file's packets, in file order), as
/// Samba's learner does.
pub fn learn<S: AsRef<[Packet]>>(summaries: &[S]) -> Result<Model, LearnError> {
    learn_with(summaries, Operations::Samba)
}

/// [`learn`], keeping the packets of `operations` ([`Operations::Kauri`] keeps writes and
/// explicit Kerberos exchanges too).
pub fn learn_with<S: AsRef<[Packet]>>(
    summaries: &[S],
    operations: Operations,
) -> Result<Model, LearnError> {
    let mut dns: BTreeMap<String, u64> = BTreeMap::new();
    let mut dns_packets = 0;
    let mut others: Vec<&Packet> = Vec::new();
    for summary in summaries {
        for p in summary.as_ref() {
            if p.protocol == "dns" {
                *dns.entry(p.opcode.clone()).or_insert(0) += 1;
                dns_packets += 1;
            } else {
                others.push(p);
            }
        }
    }
    let conversations = gather(&others, operations);
    if conversations.is_empty() {
        return Err(LearnError::NoConversations {
            packets: others.len(),
            dns: dns_packets,
        });
    }
    let clients = clients(&conversations);

    let mut model = Model {
        dns,
        ..Model::default()
    };

    if conversations.len() > 1 {
        let first = conversations[0].start;
        let mut last = first + 0.1;
        let mut total = 0usize;
        for c in &conversations {
            total += c.packets.len();
            if let Some(p) = c.packets.last() {
                if p.time > last {
                    last = p.time;
                }
            }
        }
        model.packet_rate = PacketRate {
            packets: total as f64,
            seconds: last - first,
        };
    }

    let mut cumulative = 0.0;
    let mut prev = 0.0;
    let start = || [END.to_string(), END.to_string()];
    let mut key = start();
    for (c, client) in conversations.iter().zip(&clients) {
        cumulative += c.duration();
        key = start();
        for p in c.packets.iter().filter(|p| p.packet.src == *client) {
            let elapsed = p.time - prev;
            prev = p.time;
            if elapsed > WAIT_THRESHOLD {
                let wait = format!("wait:{}", wait_bucket(elapsed));
                count_next(&mut model.ngrams, &key, &wait);
                key = [std::mem::take(&mut key[1]), wait];
            }
            let state = p.packet.key();
            let extra = if p.packet.extra.is_empty() {
                END.to_string()
            } else {
                p.packet.extra.join("\t")
            };
            *model
                .query_details
                .entry(state.clone())
                .or_default()
                .entry(extra)
                .or_insert(0) += 1;
            count_next(&mut model.ngrams, &key, &state);
            key = [std::mem::take(&mut key[1]), state];
        }
    }
    count_next(&mut model.ngrams, &key, END);
    model.cumulative_duration = cumulative;
    Ok(model)
}

fn count_next(ngrams: &mut BTreeMap<String, BTreeMap<String, u64>>, key: &[String; 2], next: &str) {
    *ngrams
        .entry(key.join("\t"))
        .or_default()
        .entry(next.to_string())
        .or_insert(0) += 1;
}

/// A capture time as the decimal it was written in, read to the nearest double (as
/// Samba reads it), so time differences come out bit for bit the same.
pub(crate) fn seconds(t: &Timestamp) -> f64 {
    t.to_string().parse().unwrap_or_else(|_| t.as_secs_f64())
}

/// A replayable packet kept in a conversation.
pub(crate) struct Kept<'a> {
    /// Seconds from the conversation's start.
    pub time: f64,
    /// Seconds from the earliest packet gathered.
    pub since_first: f64,
    /// The packet.
    pub packet: &'a Packet,
}

/// The packets between one pair of hosts.
pub(crate) struct Conversation<'a> {
    /// The two hosts, lower id first.
    pub endpoints: (u32, u32),
    /// When its first packet (replayable or not) came, from the earliest packet gathered.
    pub start: f64,
    /// Below zero when the lower host looks like the client.
    pub balance: f64,
    /// Its replayable packets, in input order.
    pub packets: Vec<Kept<'a>>,
}

impl Conversation<'_> {
    /// Time from its first to its last replayable packet.
    fn duration(&self) -> f64 {
        match (self.packets.first(), self.packets.last()) {
            (Some(a), Some(b)) if self.packets.len() > 1 => b.time - a.time,
            _ => 0.0,
        }
    }

    /// The client's host id; `clue` is the server of the conversation handled before.
    fn client(&self, clue: Option<u32>) -> u32 {
        let (a, b) = self.endpoints;
        if self.balance < 0.0 || (self.balance == 0.0 && clue == Some(b)) {
            a
        } else {
            b
        }
    }
}

/// How strongly a packet says its sender is the client (+1) or the server (−1).
fn client_score(p: &Packet, operations: Operations) -> f64 {
    if operations == Operations::Kauri {
        match (p.protocol.as_str(), p.opcode.as_str()) {
            ("ldap", "6" | "8" | "10" | "12" | "14" | "23") | ("kerberos", "10" | "12") => {
                return 1.0
            }
            ("ldap", "7" | "9" | "11" | "13" | "15" | "24") | ("kerberos", "11" | "13") => {
                return -1.0
            }
            _ => {}
        }
    }
    match (p.protocol.as_str(), p.opcode.as_str()) {
        ("dns", "0")
        | ("smb", "0x72")
        | ("ldap", "0")
        | ("ldap", "3")
        | ("ldap", "2")
        | ("cldap", "3")
        | ("dcerpc", "11")
        | ("dcerpc", "14")
        | ("nbns", "0") => 1.0,
        ("dns", "1")
        | ("ldap", "1")
        | ("ldap", "4")
        | ("ldap", "5")
        | ("cldap", "5")
        | ("dcerpc", "12")
        | ("dcerpc", "13")
        | ("dcerpc", "15") => -1.0,
        _ => 0.0,
    }
}

/// Groups packets into conversations by host pair (see the module documentation).
pub(crate) fn gather<'a>(packets: &[&'a Packet], operations: Operations) -> Vec<Conversation<'a>> {
    let times: Vec<f64> = packets.iter().map(|p| seconds(&p.timestamp)).collect();
    let Some(first) = times.iter().copied().reduce(f64::min) else {
        return Vec::new();
    };
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut out: Vec<Conversation<'a>> = Vec::new();
    for (p, t) in packets.iter().zip(times) {
        let since_first = t - first;
        let endpoints = (p.src.min(p.dest), p.src.max(p.dest));
        let i = *index.entry(endpoints).or_insert_with(|| {
            out.push(Conversation {
                endpoints,
                start: since_first,
                balance: 0.0,
                packets: Vec::new(),
            });
            out.len() - 1
        });
        let c = &mut out[i];
        if p.src == endpoints.0 {
            c.balance -= client_score(p, operations);
        } else {
            c.balance += client_score(p, operations);
        }
        if operations.replays(&p.protocol, &p.opcode) {
            c.packets.push(Kept {
                time: since_first - c.start,
                since_first,
                packet: p,
            });
        }
    }
    out.retain(|c| !c.packets.is_empty());
    out
}

/// Each conversation's client, deciding even votes as Samba does: by whether the higher
/// host was the server of the conversation before.
pub(crate) fn clients(conversations: &[Conversation<'_>]) -> Vec<u32> {
    let mut clue = None;
    conversations
        .iter()
        .map(|c| {
            let client = c.client(clue);
            let (a, b) = c.endpoints;
            clue = Some(if client == a { b } else { a });
            client
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Packet> {
        crate::summary::read(text.as_bytes()).unwrap()
    }

    #[test]
    fn one_conversation() {
        let s = lines(
            "10.0\t06\t1\t5\t1\tldap\t3\tsearchRequest\t2\tDC,DC\t\tcn\t\t\t\n\
             10.01\t06\t1\t1\t5\tldap\t5\tsearchResDone\t\t\t\t\t\t\t\n\
             10.5\t06\t1\t5\t1\tldap\t2\tunbindRequest\t\t\t\t\t\t\t\n\
             10.6\t11\t\t5\t1\tdns\t0\tquery\n",
        );
        let m = learn(&[s]).unwrap();
        assert_eq!(m.ngrams["-\t-"]["ldap:3"], 1);
        assert_eq!(m.ngrams["-\tldap:3"]["wait:1"], 1);
        assert_eq!(m.ngrams["ldap:3\twait:1"]["ldap:2"], 1);
        assert_eq!(m.ngrams["wait:1\tldap:2"]["-"], 1);
        assert_eq!(m.query_details["ldap:3"]["2\tDC,DC\t\tcn\t\t\t"], 1);
        assert_eq!(m.dns["0"], 1);
        assert_eq!(m.packet_rate, PacketRate::default());
        assert!((m.cumulative_duration - 0.5).abs() < 1e-9);
    }

    #[test]
    fn nothing_to_learn() {
        assert!(matches!(
            learn::<Vec<Packet>>(&[]),
            Err(LearnError::NoConversations { .. })
        ));
        let dns_only = lines("1.0\t11\t\t3\t1\tdns\t0\tquery\n");
        assert!(matches!(
            learn(&[dns_only]),
            Err(LearnError::NoConversations { dns: 1, .. })
        ));
        let smb_only = lines("1.0\t06\t1\t3\t1\tsmb\t0x72\tNegotiate Protocol (0x72)\n");
        assert!(learn(&[smb_only]).is_err());
    }
}
