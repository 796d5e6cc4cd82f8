//! Replay plans: the conversations a replayer runs and, in each, the packets the client
//! sends and when. A plan comes from a [`Model`] (generated, with the semantics of Samba's
//! `traffic_replay`) or from a summary (replayed as recorded).
//!
//! From a model:
//!
//! - The rate planned for is the model's base rate (`packet_rate`'s packets / seconds)
//!   times the scale factor (1 when neither a scale nor a target rate is given), or the
//!   target rate itself. Conversations are generated until their packets reach
//!   `⌊rate × duration⌋`; the last one may overshoot.
//! - Each conversation starts at a uniformly drawn time in `[−9 × duration, duration]`, so
//!   that the run begins with conversations already under way; only packets within
//!   `[0, duration]` are kept, and a conversation reaching past the duration stops there.
//!   A conversation whose kept packets would all be ones that make no traffic on their own
//!   ([`crate::model::is_traffic_generating`]) is dropped and does not count.
//! - A conversation walks the n-gram chain from the start key (`-`, `-`), drawing each
//!   next state in proportion to its count; a key the model lacks ends it. Each packet
//!   comes `e^u` seconds after the state before, `u` uniform in `[−10, −3)`; a `wait:N`
//!   state sleeps `e^(N + u) / 10` seconds, `u` uniform in `[0, 1)`; both are divided by
//!   the replay rate. A packet's extra columns are drawn from the model's
//!   `query_details` for its `protocol:opcode` in proportion to their counts (`-` means
//!   none).
//! - Persistence: when the chain ends after time 0, with probability `persistence` the
//!   conversation waits instead (`wait:5` to `wait:11`, drawn uniformly: 15 s to
//!   4.5 hours) and goes on; two waits in a row restart the chain from the start key.
//! - Conversations are ordered by their first packet and numbered from 2 (1 being the
//!   server), as Samba numbers its client processes.
//! - The model's `dns` counts plan nothing: as in Samba, DNS load is a separate stream at
//!   a rate of its own ([`add_dns_queries`], Samba's `--dns-rate`).
//!
//! From a summary, the conversations are those learning sees (host pairs, the client
//! guessed the same way) with every packet Kauri's replayer sends ([`Operations::Kauri`]:
//! writes and explicit Kerberos exchanges too), DNS queries included, each client packet
//! planned at its recorded time from the summary's first packet divided by the replay
//! rate; packets past the duration are dropped. Scale, target rate and persistence do not
//! apply.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::learn;
use crate::model::{is_traffic_generating, Model, Operations, END, WAIT_SCALE};
use crate::random::Rng;
use crate::summary::Packet;

/// The most packets a plan may hold, so a mistyped rate fails instead of exhausting memory.
pub const MAX_PACKETS: u64 = 50_000_000;

/// Conversations generated in a row that send nothing before planning gives up on a
/// model as one that makes no traffic.
const MAX_EMPTY_TRIES: u64 = 200_000;

/// What to plan (Samba's `traffic_replay` options of the same names).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// How long the run lasts, seconds (Samba's `-D`).
    pub duration: f64,
    /// Multiply the model's base rate by this (Samba's `-S`); not with `target_rate`.
    pub scale: Option<f64>,
    /// Plan this many client packets per second instead (Samba's `-T`).
    pub target_rate: Option<f64>,
    /// Replay this many times faster than learned or recorded (Samba's `-r`).
    pub replay_rate: f64,
    /// The chance, 0 to 1, that a conversation pauses instead of ending (Samba's
    /// `--conversation-persistence`).
    pub persistence: f64,
    /// Fixes every random draw: the same seed and options give the same plan.
    pub seed: u64,
}

impl Default for PlanOptions {
    /// Samba's defaults: 60 seconds at scale 1, learned speed, no persistence.
    fn default() -> PlanOptions {
        PlanOptions {
            duration: 60.0,
            scale: None,
            target_rate: None,
            replay_rate: 1.0,
            persistence: 0.0,
            seed: 0,
        }
    }
}

/// Why no plan could be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The duration is not a positive number of seconds.
    #[error("the duration must be a positive number of seconds, not {0}")]
    Duration(f64),
    /// The replay rate is not a positive number.
    #[error("the replay rate must be a positive factor, not {0}")]
    ReplayRate(f64),
    /// The scale factor is not a positive number.
    #[error("the scale must be a positive factor, not {0}")]
    Scale(f64),
    /// The target rate is not a positive number.
    #[error("the target rate must be a positive number of packets per second, not {0}")]
    TargetRate(f64),
    /// Persistence is not a chance from 0 to 1.
    #[error("the conversation persistence must be a chance from 0 to 1, not {0}")]
    Persistence(f64),
    /// The DNS query rate is not a number of queries per second.
    #[error("the DNS rate must be zero or more queries per second, not {0}")]
    DnsRate(f64),
    /// A scale and a target rate were both given.
    #[error("give a scale or a target rate, not both")]
    ScaleAndRate,
    /// A scale was asked for but the model's `packet_rate` gives no base rate.
    #[error(
        "the model's packet_rate [{packets}, {seconds}] gives no base rate to scale \
         (was it learned from a single conversation?); give a target rate instead"
    )]
    NoBaseRate {
        /// The model's packets.
        packets: f64,
        /// The model's seconds.
        seconds: f64,
    },
    /// The plan would be unreasonably large.
    #[error("the plan would hold {0:.0} packets, more than {MAX_PACKETS}")]
    TooLarge(f64),
    /// A state of the model's n-grams is neither `protocol:opcode`, `wait:N` nor `-`.
    #[error("the model's n-grams hold a state {0:?} that is not protocol:opcode or wait:N")]
    BadState(String),
    /// The model never generates a conversation that sends traffic.
    #[error("the model generates no conversation that sends traffic")]
    NoTraffic,
    /// The summary holds no packet a client sends that can be replayed within the
    /// duration.
    #[error("the summary holds no client packet to replay within the duration")]
    EmptySummary,
}

/// A replay plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The conversations, ordered by start.
    pub conversations: Vec<PlannedConversation>,
    /// How long the run lasts, seconds.
    pub duration: f64,
    /// Planned client packets per second (`packets / duration`).
    pub offered_rate: f64,
    /// Planned client packets in all (Kerberos markers and unbinds included, as Samba
    /// counts them).
    pub packets: u64,
}

/// One conversation: a client's packets to the server, replayed in order on one
/// connection set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedConversation {
    /// Its number: 2 and up in start order (0 for the DNS stream).
    pub id: u64,
    /// When its first packet is due, seconds from the run's start.
    pub start: f64,
    /// Its packets, ordered by `at`.
    pub packets: Vec<PlannedPacket>,
}

/// One packet the client sends; the replayer sends it and times the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedPacket {
    /// When it is due, seconds from the run's start.
    pub at: f64,
    /// `ldap`, `cldap`, `kerberos`, `dns`, …
    pub protocol: String,
    /// The operation code as in summaries (`3` for an LDAP search; empty for Kerberos).
    pub opcode: String,
    /// Its extra summary columns, to make it like the learned one (for LDAP: scope, DN
    /// signature, an empty column, filter, attributes, an empty column, auth type, SASL
    /// mechanism).
    pub extra: Vec<String>,
}

impl Plan {
    fn new(conversations: Vec<PlannedConversation>, duration: f64) -> Plan {
        let packets: u64 = conversations.iter().map(|c| c.packets.len() as u64).sum();
        Plan {
            conversations,
            duration,
            offered_rate: packets as f64 / duration,
            packets,
        }
    }
}

fn check_common(options: &PlanOptions) -> Result<(), PlanError> {
    if !(options.duration.is_finite() && options.duration > 0.0) {
        return Err(PlanError::Duration(options.duration));
    }
    if !(options.replay_rate.is_finite() && options.replay_rate > 0.0) {
        return Err(PlanError::ReplayRate(options.replay_rate));
    }
    Ok(())
}

/// The packets per second a model plan aims at.
fn planned_rate(model: &Model, options: &PlanOptions) -> Result<f64, PlanError> {
    match (options.scale, options.target_rate) {
        (Some(_), Some(_)) => Err(PlanError::ScaleAndRate),
        (None, Some(rate)) if rate.is_finite() && rate > 0.0 => Ok(rate),
        (None, Some(rate)) => Err(PlanError::TargetRate(rate)),
        (scale, None) => {
            let scale = scale.unwrap_or(1.0);
            if !(scale.is_finite() && scale > 0.0) {
                return Err(PlanError::Scale(scale));
            }
            let base = model.base_rate().ok_or(PlanError::NoBaseRate {
                packets: model.packet_rate.packets,
                seconds: model.packet_rate.seconds,
            })?;
            Ok(scale * base)
        }
    }
}

/// A state of the chain, parsed once.
#[derive(Debug, Clone)]
enum State {
    End,
    Wait(f64),
    Packet {
        protocol: String,
        opcode: String,
        generating: bool,
    },
}

/// A model made ready for walking: state names interned, choices with their weights.
struct Chain {
    /// Per interned name, its meaning when it is ever a next state (key-only names have
    /// none and are never walked to).
    states: Vec<Option<State>>,
    ids: HashMap<String, usize>,
    next: HashMap<(usize, usize), (Vec<usize>, Vec<u64>)>,
    details: HashMap<usize, (Vec<Vec<String>>, Vec<u64>)>,
    end: usize,
    persistence_waits: Vec<usize>,
}

impl Chain {
    fn new(model: &Model) -> Result<Chain, PlanError> {
        let mut chain = Chain {
            states: Vec::new(),
            ids: HashMap::new(),
            next: HashMap::new(),
            details: HashMap::new(),
            end: 0,
            persistence_waits: Vec::new(),
        };
        chain.end = chain.state(END)?;
        for n in 5..12 {
            let id = chain.state(&format!("wait:{n}"))?;
            chain.persistence_waits.push(id);
        }
        for (key, nexts) in &model.ngrams {
            let parts: Vec<&str> = key.split('\t').collect();
            let [a, b] = parts[..] else {
                // Keys of another length never match a two-state context.
                continue;
            };
            let key = (chain.name(a), chain.name(b));
            let mut choices = (Vec::new(), Vec::new());
            for (state, count) in nexts {
                choices.0.push(chain.state(state)?);
                choices.1.push(*count);
            }
            chain.next.insert(key, choices);
        }
        for (state, extras) in &model.query_details {
            let Some(&id) = chain.ids.get(state) else {
                continue;
            };
            let mut choices = (Vec::new(), Vec::new());
            for (extra, count) in extras {
                let fields = if extra == END {
                    Vec::new()
                } else {
                    extra.split('\t').map(str::to_string).collect()
                };
                choices.0.push(fields);
                choices.1.push(*count);
            }
            chain.details.insert(id, choices);
        }
        Ok(chain)
    }

    /// The id of a name as written.
    fn name(&mut self, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.states.push(None);
        self.ids.insert(name.to_string(), self.states.len() - 1);
        self.states.len() - 1
    }

    /// The id of a next state, which must parse.
    fn state(&mut self, name: &str) -> Result<usize, PlanError> {
        let id = self.name(name);
        if self.states[id].is_none() {
            let state = parse_state(name).ok_or_else(|| PlanError::BadState(name.to_string()))?;
            self.states[id] = Some(state);
        }
        Ok(id)
    }

    fn is_wait(&self, id: usize) -> bool {
        matches!(self.states[id], Some(State::Wait(_)))
    }

    fn is_generating(&self, id: usize) -> bool {
        matches!(
            self.states[id],
            Some(State::Packet {
                generating: true,
                ..
            })
        )
    }

    fn can_generate(&self) -> bool {
        self.next.values().any(|(ids, counts)| {
            ids.iter()
                .zip(counts)
                .any(|(id, n)| *n > 0 && self.is_generating(*id))
        })
    }

    /// One conversation starting at `timestamp`, cut at `hard_stop`: packets as
    /// (time, state id, extra).
    fn walk(
        &self,
        rng: &mut Rng,
        mut timestamp: f64,
        hard_stop: f64,
        replay_rate: f64,
        persistence: f64,
    ) -> Vec<(f64, usize, Vec<String>)> {
        let mut out = Vec::new();
        let mut key = (self.end, self.end);
        loop {
            let mut state = match self.next.get(&key) {
                Some((ids, counts)) => rng.weighted(counts).map_or(self.end, |i| ids[i]),
                None => self.end,
            };
            if state == self.end {
                if timestamp < 0.0 || rng.unit() > persistence {
                    break;
                }
                let i = rng.below(self.persistence_waits.len() as u64) as usize;
                state = self.persistence_waits[i];
            }
            let extra = match self.details.get(&state) {
                Some((extras, counts)) => rng
                    .weighted(counts)
                    .map(|i| extras[i].clone())
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            if let Some(State::Wait(bucket)) = self.states[state] {
                timestamp += (bucket + rng.unit()).exp() / (WAIT_SCALE * replay_rate);
                if timestamp > hard_stop {
                    // No packet can follow inside the run.
                    break;
                }
            } else {
                let log_gap = -10.0 + 7.0 * rng.unit();
                timestamp += log_gap.exp() / replay_rate;
                if timestamp > hard_stop {
                    break;
                }
                if timestamp >= 0.0 {
                    out.push((timestamp, state, extra));
                }
            }
            key = (key.1, state);
            if self.is_wait(key.0) && self.is_wait(key.1) {
                key = (self.end, self.end);
            }
        }
        out
    }
}

fn parse_state(name: &str) -> Option<State> {
    if name == END {
        return Some(State::End);
    }
    let (protocol, opcode) = name.split_once(':')?;
    if protocol == "wait" {
        let bucket: i64 = opcode.trim().parse().ok()?;
        return Some(State::Wait(bucket as f64));
    }
    Some(State::Packet {
        protocol: protocol.to_string(),
        opcode: opcode.to_string(),
        generating: is_traffic_generating(protocol, opcode),
    })
}

/// Generates a plan from a model (see the module documentation for the semantics).
pub fn plan_from_model(model: &Model, options: &PlanOptions) -> Result<Plan, PlanError> {
    check_common(options)?;
    if !(0.0..=1.0).contains(&options.persistence) {
        return Err(PlanError::Persistence(options.persistence));
    }
    let rate = planned_rate(model, options)?;
    let wanted = (rate * options.duration).floor();
    if !wanted.is_finite() || wanted > MAX_PACKETS as f64 {
        return Err(PlanError::TooLarge(wanted));
    }
    let target = wanted as u64;
    let chain = Chain::new(model)?;
    if target > 0 && !chain.can_generate() {
        return Err(PlanError::NoTraffic);
    }

    let duration = options.duration;
    let lead_in = 9.0 * duration;
    let mut rng = Rng::new(options.seed);
    let mut generated: Vec<Vec<(f64, usize, Vec<String>)>> = Vec::new();
    let mut planned = 0u64;
    let mut empty_tries = 0u64;
    while planned < target {
        let start = -lead_in + (duration + lead_in) * rng.unit();
        let c = chain.walk(
            &mut rng,
            start,
            duration,
            options.replay_rate,
            options.persistence,
        );
        if !c.iter().any(|(_, id, _)| chain.is_generating(*id)) {
            empty_tries += 1;
            if empty_tries > MAX_EMPTY_TRIES {
                return Err(PlanError::NoTraffic);
            }
            continue;
        }
        empty_tries = 0;
        planned += c.len() as u64;
        generated.push(c);
    }
    generated.sort_by(|a, b| a[0].0.total_cmp(&b[0].0));

    let conversations = generated
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let packets: Vec<PlannedPacket> = c
                .into_iter()
                .map(|(at, id, extra)| {
                    let (protocol, opcode) = match &chain.states[id] {
                        Some(State::Packet {
                            protocol, opcode, ..
                        }) => (protocol.clone(), opcode.clone()),
                        // Only packet states are ever planned.
                        _ => (String::new(), String::new()),
                    };
                    PlannedPacket {
                        at,
                        protocol,
                        opcode,
                        extra,
                    }
                })
                .collect();
            PlannedConversation {
                id: i as u64 + 2,
                start: packets.first().map_or(0.0, |p| p.at),
                packets,
            }
        })
        .collect();
    Ok(Plan::new(conversations, duration))
}

/// Plans a summary's traffic as it was recorded (see the module documentation).
pub fn plan_from_summary(packets: &[Packet], options: &PlanOptions) -> Result<Plan, PlanError> {
    check_common(options)?;
    let all: Vec<&Packet> = packets.iter().collect();
    let conversations = learn::gather(&all, Operations::Kauri);
    let clients = learn::clients(&conversations);
    let mut planned: Vec<PlannedConversation> = Vec::new();
    for (c, client) in conversations.iter().zip(clients) {
        let mut packets: Vec<PlannedPacket> = c
            .packets
            .iter()
            .filter(|k| k.packet.src == client)
            .map(|k| PlannedPacket {
                at: k.since_first / options.replay_rate,
                protocol: k.packet.protocol.clone(),
                opcode: k.packet.opcode.clone(),
                extra: k.packet.extra.clone(),
            })
            .filter(|p| p.at <= options.duration)
            .collect();
        packets.sort_by(|a, b| a.at.total_cmp(&b.at));
        if let Some(first) = packets.first() {
            planned.push(PlannedConversation {
                id: 0,
                start: first.at,
                packets,
            });
        }
    }
    if planned.is_empty() {
        return Err(PlanError::EmptySummary);
    }
    planned.sort_by(|a, b| a.start.total_cmp(&b.start));
    for (i, c) in planned.iter_mut().enumerate() {
        c.id = i as u64 + 2;
    }
    Ok(Plan::new(planned, options.duration))
}

/// Adds a stream of DNS queries at `rate` per second to a plan, as Samba's `--dns-rate`
/// does: `⌊rate × duration⌋` queries (`dns:0`) at uniformly drawn times over the run, in
/// one conversation numbered 0. Which names to ask is the replayer's choice.
pub fn add_dns_queries(plan: &mut Plan, rate: f64, seed: u64) -> Result<(), PlanError> {
    if !(rate.is_finite() && rate >= 0.0) {
        return Err(PlanError::DnsRate(rate));
    }
    let wanted = (rate * plan.duration).floor();
    if !wanted.is_finite() || wanted + plan.packets as f64 > MAX_PACKETS as f64 {
        return Err(PlanError::TooLarge(wanted + plan.packets as f64));
    }
    let n = wanted as u64;
    if n == 0 {
        return Ok(());
    }
    let mut rng = Rng::new(seed).fork(u64::MAX);
    let mut times: Vec<f64> = (0..n).map(|_| rng.unit() * plan.duration).collect();
    times.sort_by(f64::total_cmp);
    let packets: Vec<PlannedPacket> = times
        .into_iter()
        .map(|at| PlannedPacket {
            at,
            protocol: "dns".to_string(),
            opcode: "0".to_string(),
            extra: Vec::new(),
        })
        .collect();
    let conversation = PlannedConversation {
        id: 0,
        start: packets[0].at,
        packets,
    };
    let at = plan
        .conversations
        .partition_point(|c| c.start <= conversation.start);
    plan.conversations.insert(at, conversation);
    *plan = Plan::new(std::mem::take(&mut plan.conversations), plan.duration);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str) -> Model {
        Model::parse(text).unwrap()
    }

    const LOOP: &str = r#"{"ngrams": {"-\t-": {"ldap:3": 1}, "-\tldap:3": {"wait:0": 1},
        "ldap:3\twait:0": {"ldap:3": 1}, "wait:0\tldap:3": {"wait:0": 1}},
        "query_details": {"ldap:3": {"-": 1}}, "cumulative_duration": 1.0,
        "packet_rate": [10, 1.0], "version": 2}"#;

    #[test]
    fn options_are_checked() {
        let m = model(LOOP);
        let bad = |o: PlanOptions| plan_from_model(&m, &o).unwrap_err();
        let base = PlanOptions {
            duration: 1.0,
            ..PlanOptions::default()
        };
        assert!(matches!(
            bad(PlanOptions {
                duration: 0.0,
                ..base.clone()
            }),
            PlanError::Duration(_)
        ));
        assert!(matches!(
            bad(PlanOptions {
                replay_rate: -1.0,
                ..base.clone()
            }),
            PlanError::ReplayRate(_)
        ));
        assert!(matches!(
            bad(PlanOptions {
                persistence: 1.5,
                ..base.clone()
            }),
            PlanError::Persistence(_)
        ));
        assert!(matches!(
            bad(PlanOptions {
                scale: Some(1.0),
                target_rate: Some(5.0),
                ..base.clone()
            }),
            PlanError::ScaleAndRate
        ));
        assert!(matches!(
            bad(PlanOptions {
                target_rate: Some(1e12),
                ..base.clone()
            }),
            PlanError::TooLarge(_)
        ));
        let no_rate = model(&LOOP.replace("[10, 1.0]", "[0, 1]"));
        assert!(matches!(
            plan_from_model(&no_rate, &base),
            Err(PlanError::NoBaseRate { .. })
        ));
        assert!(plan_from_model(
            &no_rate,
            &PlanOptions {
                target_rate: Some(5.0),
                ..base.clone()
            }
        )
        .is_ok());
    }

    #[test]
    fn models_that_make_nothing() {
        let opts = PlanOptions {
            duration: 1.0,
            target_rate: Some(10.0),
            ..PlanOptions::default()
        };
        let unbind_only = LOOP.replace("ldap:3", "ldap:2");
        assert!(matches!(
            plan_from_model(&model(&unbind_only), &opts),
            Err(PlanError::NoTraffic)
        ));
        let bad_state = LOOP.replace("{\"wait:0\": 1}", "{\"wait\": 1}");
        assert!(matches!(
            plan_from_model(&model(&bad_state), &opts),
            Err(PlanError::BadState(_))
        ));
        // Waits alone loop forever in the chain; the run's end stops them.
        let waits = r#"{"ngrams": {"-\t-": {"wait:0": 1, "ldap:3": 1},
            "-\twait:0": {"wait:1": 1}}, "query_details": {},
            "cumulative_duration": 0, "packet_rate": [1, 1], "version": 2}"#;
        let p = plan_from_model(&model(waits), &opts).unwrap();
        assert!(p.packets >= 10);
    }

    #[test]
    fn persistence_keeps_conversations_going() {
        let once = r#"{"ngrams": {"-\t-": {"ldap:3": 1}}, "query_details": {},
            "cumulative_duration": 0, "packet_rate": [1, 1], "version": 2}"#;
        let opts = PlanOptions {
            duration: 2000.0,
            target_rate: Some(0.5),
            ..PlanOptions::default()
        };
        let short = plan_from_model(&model(once), &opts).unwrap();
        assert!(short.conversations.iter().all(|c| c.packets.len() == 1));
        let long = plan_from_model(
            &model(once),
            &PlanOptions {
                persistence: 1.0,
                ..opts
            },
        )
        .unwrap();
        assert!(long.conversations.iter().any(|c| c.packets.len() > 1));
        for c in &long.conversations {
            assert!(c.packets.windows(2).all(|w| w[1].at - w[0].at > 14.0));
        }
    }

    #[test]
    fn dns_stream() {
        let mut p = plan_from_model(
            &model(LOOP),
            &PlanOptions {
                duration: 10.0,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        let before = p.packets;
        add_dns_queries(&mut p, 5.0, 1).unwrap();
        assert_eq!(p.packets, before + 50);
        let dns = p.conversations.iter().find(|c| c.id == 0).unwrap();
        assert_eq!(dns.packets.len(), 50);
        assert!(dns
            .packets
            .iter()
            .all(|q| q.protocol == "dns" && q.at < 10.0));
        assert!(p.conversations.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(matches!(
            add_dns_queries(&mut p, f64::NAN, 1),
            Err(PlanError::DnsRate(_))
        ));
    }
}
