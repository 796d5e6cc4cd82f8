//! The traffic model: Samba's model format version 2, a JSON file that Samba's
//! `traffic_learner` writes and `traffic_replay` reads, so a model moves between the two
//! tool sets in either direction.
//!
//! The file holds:
//!
//! - `ngrams`: a Markov chain over the packets a client sends in one conversation. A key is
//!   the previous two states joined by a tab (`-` before the first packet), its value maps
//!   each next state to how often it followed. A state is `protocol:opcode` (`ldap:3`),
//!   `wait:N` for a pause whose length is in bucket N (see [`wait_bucket`]), or `-` for the
//!   end of the conversation.
//! - `query_details`: per `protocol:opcode`, the packet's extra summary columns joined by
//!   tabs (`-` when the packet had none) with their counts.
//! - `dns`: DNS packets of the learned traffic counted by opcode (they are kept out of the
//!   conversations).
//! - `packet_rate`: `[packets, seconds]`, the base rate a scale factor multiplies.
//! - `cumulative_duration`: the summed length, in seconds, of the learned conversations.
//! - `version`: 2.
//!
//! Samba's loader accepts version 2 or later and needs every key but `dns`; it ignores
//! keys it does not know. [`Model::parse`] accepts the same files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};

/// The model format version written, and the lowest one read.
pub const MODEL_VERSION: u64 = 2;

/// The state that marks the start (in an n-gram key) or the end (as a next state) of a
/// conversation.
pub const END: &str = "-";

/// Gaps up to this many seconds between a client's packets are not modelled as waits.
pub const WAIT_THRESHOLD: f64 = 0.1;

/// Wait buckets are natural logarithms of the gap in units of 1/`WAIT_SCALE` seconds.
pub const WAIT_SCALE: f64 = 10.0;

/// The `wait:N` bucket of a gap of `seconds` between two packets of a client: the
/// whole part of `ln(seconds × 10)`, at least 0. Replay sleeps `e^(N + u) / 10` seconds
/// for a uniform `u` in `[0, 1)`, so bucket 0 covers 0.1–0.27 s, 1 up to 0.74 s, 2 up to
/// 2 s and so on.
pub fn wait_bucket(seconds: f64) -> i64 {
    (seconds * WAIT_SCALE).max(1.0).ln().trunc() as i64
}

/// Protocols Samba's replayer ignores altogether (file sharing and browsing).
const SKIPPED_PROTOCOLS: [&str; 4] = ["smb", "smb2", "browser", "smb_netlogon"];

/// Packets Samba's replayer can send, as `protocol:opcode`, sorted. Any other packet of a
/// summary (a response, a bind that the replayer makes implicitly, an unsupported call)
/// is left out of conversations and models.
const REPLAYABLE: [&str; 43] = [
    "cldap:3",
    "dcerpc:15",
    "dcerpc:16",
    "dns:0",
    "drsuapi:0",
    "drsuapi:1",
    "drsuapi:12",
    "drsuapi:13",
    "kerberos:",
    "ldap:0",
    "ldap:2",
    "ldap:3",
    "lsarpc:14",
    "lsarpc:15",
    "lsarpc:39",
    "lsarpc:76",
    "lsarpc:77",
    "nbns:0",
    "rpc_netlogon:29",
    "rpc_netlogon:30",
    "rpc_netlogon:39",
    "rpc_netlogon:40",
    "rpc_netlogon:45",
    "samr:0",
    "samr:1",
    "samr:15",
    "samr:16",
    "samr:17",
    "samr:18",
    "samr:19",
    "samr:25",
    "samr:3",
    "samr:34",
    "samr:36",
    "samr:39",
    "samr:5",
    "samr:57",
    "samr:6",
    "samr:64",
    "samr:7",
    "samr:8",
    "srvsvc:16",
    "srvsvc:21",
];

/// What Kauri's replayer sends besides Samba's set, as `protocol:opcode`, sorted: explicit
/// Kerberos AS and TGS exchanges, and LDAP modify, add, delete, rename, compare and
/// extended operations.
const KAURI_EXTRA: [&str; 9] = [
    "kerberos:10",
    "kerberos:12",
    "kerberos:14",
    "ldap:10",
    "ldap:12",
    "ldap:14",
    "ldap:23",
    "ldap:6",
    "ldap:8",
];

/// Which packets learning keeps and a summary's replay plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Operations {
    /// Samba's set: a model learned with it is the one Samba's learner makes.
    #[default]
    Samba,
    /// Samba's set and the operations only Kauri's replayer sends (writes, explicit
    /// Kerberos exchanges). Samba's replayer reads such a model and skips those states.
    Kauri,
}

impl Operations {
    /// Whether a packet is one this set replays.
    pub fn replays(self, protocol: &str, opcode: &str) -> bool {
        if is_replayable(protocol, opcode) {
            return true;
        }
        self == Operations::Kauri && {
            let key = format!("{protocol}:{opcode}");
            KAURI_EXTRA.binary_search(&key.as_str()).is_ok()
        }
    }
}

/// Whether a packet is one a replayer sends (Samba's replayer has an action for it), so
/// learning keeps it in a conversation and replay plans it.
pub fn is_replayable(protocol: &str, opcode: &str) -> bool {
    if SKIPPED_PROTOCOLS.contains(&protocol) {
        return false;
    }
    let key = format!("{protocol}:{opcode}");
    REPLAYABLE.binary_search(&key.as_str()).is_ok()
}

/// Whether a packet makes traffic on its own. A Kerberos marker, an LDAP unbind or a
/// DCE/RPC alter-context answer only acts on what earlier packets set up, so a planned
/// conversation made of nothing else is dropped.
pub fn is_traffic_generating(protocol: &str, opcode: &str) -> bool {
    if protocol == "wait" {
        return false;
    }
    if matches!(
        (protocol, opcode),
        ("kerberos", "") | ("ldap", "2") | ("dcerpc", "15") | ("dcerpc", "16")
    ) {
        return false;
    }
    Operations::Kauri.replays(protocol, opcode)
}

/// Why a model could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The model file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("the model is not JSON: {0}")]
    NotJson(serde_json::Error),
    /// The JSON is not an object.
    #[error("the model is not a JSON object")]
    NotAnObject,
    /// There is no `version` key.
    #[error("the model has no version number; version {MODEL_VERSION} or later is required")]
    NoVersion,
    /// The version is older than [`MODEL_VERSION`] or not a number.
    #[error("the model is version {found}; version {MODEL_VERSION} or later is required")]
    Version {
        /// The version found, as written.
        found: String,
    },
    /// A key every model has is missing.
    #[error("the model has no {0:?}")]
    Missing(&'static str),
    /// A value has the wrong shape.
    #[error("the model's {field}: {problem}")]
    Invalid {
        /// Where: `packet_rate`, `ngrams["-\t-"]["ldap:3"]`, …
        field: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

/// `[packets, seconds]` of the learned traffic: replay multiplies `packets / seconds` by
/// its scale factor to get the rate it plans for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketRate {
    /// Packets counted (both directions of every replayable packet).
    pub packets: f64,
    /// Over this many seconds.
    pub seconds: f64,
}

impl Default for PacketRate {
    /// Samba's value for a model learned from fewer than two conversations.
    fn default() -> PacketRate {
        PacketRate {
            packets: 0.0,
            seconds: 1.0,
        }
    }
}

/// A traffic model (Samba's format version 2). Maps are ordered so that saving is
/// deterministic.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// Previous states, tab-joined (`-` at the start) → next state → count.
    pub ngrams: BTreeMap<String, BTreeMap<String, u64>>,
    /// `protocol:opcode` → tab-joined extra columns (`-` for none) → count.
    pub query_details: BTreeMap<String, BTreeMap<String, u64>>,
    /// DNS opcode → packets counted.
    pub dns: BTreeMap<String, u64>,
    /// The base rate of the learned traffic.
    pub packet_rate: PacketRate,
    /// Summed conversation length, seconds.
    pub cumulative_duration: f64,
}

impl Model {
    /// Reads a model file.
    pub fn load(path: impl AsRef<Path>) -> Result<Model, ModelError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Model::parse(&text)
    }

    /// Reads a model from its JSON text. Accepts what Samba's loader accepts: version 2 or
    /// later, `dns` optional, unknown keys ignored.
    pub fn parse(text: &str) -> Result<Model, ModelError> {
        let value: Value = serde_json::from_str(text).map_err(ModelError::NotJson)?;
        let obj = value.as_object().ok_or(ModelError::NotAnObject)?;
        match obj.get("version") {
            None => return Err(ModelError::NoVersion),
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= MODEL_VERSION as f64) => {}
            Some(other) => {
                return Err(ModelError::Version {
                    found: other.to_string(),
                })
            }
        }
        let ngrams = nested_counts(obj, "ngrams")?;
        let query_details = nested_counts(obj, "query_details")?;
        let dns = match obj.get("dns") {
            None => BTreeMap::new(),
            Some(v) => counts(v, "dns")?,
        };
        let cumulative_duration = obj
            .get("cumulative_duration")
            .ok_or(ModelError::Missing("cumulative_duration"))?
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| invalid("cumulative_duration", "not a number"))?;
        let rate = obj
            .get("packet_rate")
            .ok_or(ModelError::Missing("packet_rate"))?
            .as_array()
            .ok_or_else(|| invalid("packet_rate", "not a [packets, seconds] list"))?;
        let numbers: Vec<f64> = rate
            .iter()
            .filter_map(Value::as_f64)
            .filter(|v| v.is_finite())
            .collect();
        if rate.len() != 2 || numbers.len() != 2 {
            return Err(invalid("packet_rate", "not a [packets, seconds] list"));
        }
        Ok(Model {
            ngrams,
            query_details,
            dns,
            packet_rate: PacketRate {
                packets: numbers[0],
                seconds: numbers[1],
            },
            cumulative_duration,
        })
    }

    /// The model as a JSON value: keys sorted, counts as integers, `packet_rate`'s
    /// packets as an integer when whole.
    pub fn to_value(&self) -> Result<Value, ModelError> {
        let mut out = Map::new();
        out.insert(
            "cumulative_duration".into(),
            float(self.cumulative_duration, "cumulative_duration")?,
        );
        out.insert("dns".into(), counts_value(&self.dns));
        out.insert("ngrams".into(), nested_value(&self.ngrams));
        let packets =
            if self.packet_rate.packets.fract() == 0.0 && self.packet_rate.packets.abs() < 9.0e15 {
                Value::from(self.packet_rate.packets as i64)
            } else {
                float(self.packet_rate.packets, "packet_rate")?
            };
        out.insert(
            "packet_rate".into(),
            Value::Array(vec![
                packets,
                float(self.packet_rate.seconds, "packet_rate")?,
            ]),
        );
        out.insert("query_details".into(), nested_value(&self.query_details));
        out.insert("version".into(), Value::from(MODEL_VERSION));
        Ok(Value::Object(out))
    }

    /// The model file's text: two-space indentation, sorted keys, floats in their
    /// shortest round-trip form, a final newline. The same model always gives the same
    /// text.
    pub fn to_json(&self) -> Result<String, ModelError> {
        let value = self.to_value()?;
        // Serialising a Value into a string cannot fail: every key is a string.
        let mut text = serde_json::to_string_pretty(&value).map_err(ModelError::NotJson)?;
        text.push('\n');
        Ok(text)
    }

    /// Writes the model file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        let path = path.as_ref();
        let text = self.to_json()?;
        std::fs::write(path, text).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The base rate of the learned traffic in packets per second (what scale 1 plans),
    /// or `None` when `packet_rate` gives none (no packets, or no time).
    pub fn base_rate(&self) -> Option<f64> {
        let PacketRate { packets, seconds } = self.packet_rate;
        let rate = packets / seconds;
        (rate.is_finite() && rate > 0.0).then_some(rate)
    }
}

fn invalid(field: impl Into<String>, problem: &'static str) -> ModelError {
    ModelError::Invalid {
        field: field.into(),
        problem,
    }
}

fn float(v: f64, field: &'static str) -> Result<Value, ModelError> {
    Number::from_f64(v)
        .map(Value::Number)
        .ok_or_else(|| invalid(field, "not a finite number"))
}

fn counts(value: &Value, field: &str) -> Result<BTreeMap<String, u64>, ModelError> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(field, "not an object of counts"))?;
    let mut out = BTreeMap::new();
    for (k, v) in obj {
        let n = v
            .as_u64()
            .ok_or_else(|| invalid(format!("{field}[{k:?}]"), "not a count"))?;
        out.insert(k.clone(), n);
    }
    Ok(out)
}

fn nested_counts(
    obj: &Map<String, Value>,
    field: &'static str,
) -> Result<BTreeMap<String, BTreeMap<String, u64>>, ModelError> {
    let inner = obj
        .get(field)
        .ok_or(ModelError::Missing(field))?
        .as_object()
        .ok_or_else(|| invalid(field, "not an object"))?;
    let mut out = BTreeMap::new();
    for (k, v) in inner {
        out.insert(k.clone(), counts(v, &format!("{field}[{k:?}]"))?);
    }
    Ok(out)
}

fn counts_value(counts: &BTreeMap<String, u64>) -> Value {
    Value::Object(
        counts
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(*v)))
            .collect(),
    )
}

fn nested_value(nested: &BTreeMap<String, BTreeMap<String, u64>>) -> Value {
    Value::Object(
        nested
            .iter()
            .map(|(k, v)| (k.clone(), counts_value(v)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{
        "ngrams": {"-\t-": {"ldap:3": 2}, "-\tldap:3": {"-": 2}},
        "query_details": {"ldap:3": {"2\tDC,DC\t\tcn\t\t\t": 2}},
        "cumulative_duration": 0.5,
        "packet_rate": [4, 0.25],
        "version": 2
    }"#;

    #[test]
    fn reads_and_writes() {
        let m = Model::parse(SMALL).unwrap();
        assert_eq!(m.ngrams["-\t-"]["ldap:3"], 2);
        assert!(m.dns.is_empty());
        assert_eq!(m.base_rate(), Some(16.0));
        let text = m.to_json().unwrap();
        assert_eq!(Model::parse(&text).unwrap(), m);
        assert_eq!(m.to_json().unwrap(), text);
        assert!(text.contains("\"packet_rate\": [\n    4,\n    0.25\n  ]"));
        let keys: Vec<String> = match m.to_value().unwrap() {
            Value::Object(o) => o.keys().cloned().collect(),
            _ => unreachable!(),
        };
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn versions() {
        let v1 = SMALL.replace("\"version\": 2", "\"version\": 1");
        let e = Model::parse(&v1).unwrap_err();
        assert!(matches!(e, ModelError::Version { ref found } if found == "1"));
        assert!(e.to_string().contains("version 1"));
        let v3 = SMALL.replace("\"version\": 2", "\"version\": 3");
        assert!(Model::parse(&v3).is_ok());
        let vs = SMALL.replace("\"version\": 2", "\"version\": \"2\"");
        assert!(matches!(Model::parse(&vs), Err(ModelError::Version { .. })));
        let none = SMALL.replace(",\n        \"version\": 2", "");
        assert!(matches!(Model::parse(&none), Err(ModelError::NoVersion)));
    }

    #[test]
    fn bad_models() {
        assert!(matches!(
            Model::parse("not json"),
            Err(ModelError::NotJson(_))
        ));
        assert!(matches!(Model::parse("[2]"), Err(ModelError::NotAnObject)));
        let no_ngrams = SMALL.replace("\"ngrams\"", "\"grams\"");
        assert!(matches!(
            Model::parse(&no_ngrams),
            Err(ModelError::Missing("ngrams"))
        ));
        let bad_count = SMALL.replace("\"ldap:3\": 2}, \"-", "\"ldap:3\": 2.5}, \"-");
        assert!(matches!(
            Model::parse(&bad_count),
            Err(ModelError::Invalid { .. })
        ));
        let bad_rate = SMALL.replace("[4, 0.25]", "[4]");
        assert!(matches!(
            Model::parse(&bad_rate),
            Err(ModelError::Invalid { .. })
        ));
        let zero = Model::parse(&SMALL.replace("[4, 0.25]", "[0, 1]")).unwrap();
        assert_eq!(zero.base_rate(), None);
    }

    #[test]
    fn packet_tables() {
        assert!(is_replayable("ldap", "3"));
        assert!(is_replayable("kerberos", ""));
        assert!(!is_replayable("ldap", ""));
        assert!(!is_replayable("ldap", "5"));
        assert!(!is_replayable("smb", "0x72"));
        assert!(is_traffic_generating("ldap", "3"));
        assert!(!is_traffic_generating("ldap", "2"));
        assert!(!is_traffic_generating("wait", "0"));
        let mut sorted = REPLAYABLE;
        sorted.sort_unstable();
        assert_eq!(sorted, REPLAYABLE);
        assert_eq!(wait_bucket(0.05), 0);
        assert_eq!(wait_bucket(0.2), 0);
        assert_eq!(wait_bucket(0.3), 1);
        assert_eq!(wait_bucket(3.0), 3);
    }
}
