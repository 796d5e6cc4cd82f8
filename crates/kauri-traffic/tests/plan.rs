//! Replay plans from models and summaries: rates, scaling, timing, determinism, and Samba
//! generating traffic from a model Kauri wrote.
//!
//! Tests that use Samba's sample model look in `$KAURI_SAMBA_TRAFFIC_DIR` (default
//! `../shared/samba-tests/traffic` beside the repository) and otherwise use a model learned from made-up
//! traffic; the Samba test runs `/usr/bin/python3` and says why it is skipped when
//! Samba's modules are missing.

use std::collections::BTreeMap;
use std::process::Command;

mod common;

use common::{samba_python, sample_dir, PYTHON};
use kauri_traffic::learn::learn;
use kauri_traffic::model::Model;
use kauri_traffic::plan::{plan_from_model, plan_from_summary, Plan, PlanError, PlanOptions};
use kauri_traffic::summary::{self, Packet};

/// Made-up traffic: several LDAP clients binding, searching and unbinding, CLDAP pings,
/// Kerberos and DNS, over about a minute.
fn synthetic_summary() -> Vec<Packet> {
    let mut text = String::new();
    let mut line = |t: f64, src: u32, dst: u32, rest: &str| {
        let secs = 1_600_000_000 + t.trunc() as u64;
        let nanos = (t.fract() * 1e9).round() as u64;
        text += &format!("{secs}.{nanos:09}\t06\t\t{src}\t{dst}\t{rest}\n");
    };
    for client in 0..12u32 {
        let host = 10 + client;
        let t0 = client as f64 * 4.7;
        line(t0, host, 1, "dns\t0\tquery");
        line(t0 + 0.001, 1, host, "dns\t1\tresponse");
        line(
            t0 + 0.01,
            host,
            1,
            "cldap\t3\tsearchRequest\t\t\t\t(&(DnsDomain)(NtVer))\tNetlogon\t\t\t",
        );
        line(
            t0 + 0.012,
            1,
            host,
            "cldap\t5\tsearchResDone\t\t\t\t\t\t\t\t",
        );
        line(t0 + 0.02, host, 1, "kerberos\t\t\t");
        line(t0 + 0.03, 1, host, "kerberos\t\t\t");
        line(
            t0 + 0.05,
            host,
            1,
            "ldap\t0\tbindRequest\t\t\t\t\t\t\tsasl\t1.2.840.48018.1.2.2",
        );
        line(t0 + 0.06, 1, host, "ldap\t1\tbindResponse\t\t\t\t\t\t\t\t");
        for (i, gap) in [0.02, 0.3, 0.01, 1.5].iter().enumerate() {
            let t = t0 + 0.1 + i as f64 * 0.4 + gap;
            let scope = if i % 2 == 0 { "2" } else { "0" };
            line(
                t,
                host,
                1,
                &format!("ldap\t3\tsearchRequest\t{scope}\tDC,DC\t\t(objectSid)\tobjectSid\t\t\t"),
            );
            line(t + 0.004, 1, host, "ldap\t5\tsearchResDone\t\t\t\t\t\t\t\t");
        }
        line(t0 + 4.0, host, 1, "ldap\t2\tunbindRequest\t\t\t\t\t\t\t\t");
    }
    summary::read(text.as_bytes()).unwrap()
}

/// Samba's sample model when present, else a model learned from the made-up traffic.
fn sample_model() -> Model {
    let path = sample_dir().join("traffic-sample-very-short.model");
    match Model::load(&path) {
        Ok(m) => m,
        Err(e) => {
            println!("note: Samba's sample model unavailable ({e}); using a model learned here");
            learn(&[synthetic_summary()]).unwrap()
        }
    }
}

fn options(duration: f64) -> PlanOptions {
    PlanOptions {
        duration,
        seed: 7,
        ..PlanOptions::default()
    }
}

/// Every packet inside the run, conversations and packets in time order, numbering
/// unique, totals consistent.
fn check_shape(plan: &Plan) {
    let mut ids = std::collections::HashSet::new();
    let mut total = 0;
    for c in &plan.conversations {
        assert!(ids.insert(c.id), "conversation {} twice", c.id);
        assert!(!c.packets.is_empty());
        assert_eq!(c.start, c.packets[0].at);
        for p in &c.packets {
            assert!(
                (0.0..=plan.duration).contains(&p.at),
                "{} outside [0, {}]",
                p.at,
                plan.duration
            );
        }
        assert!(c.packets.windows(2).all(|w| w[0].at <= w[1].at));
        total += c.packets.len() as u64;
    }
    assert!(plan
        .conversations
        .windows(2)
        .all(|w| w[0].start <= w[1].start));
    assert_eq!(total, plan.packets);
    assert!((plan.offered_rate - plan.packets as f64 / plan.duration).abs() < 1e-9);
}

#[test]
fn same_seed_same_plan() {
    let model = sample_model();
    let a = plan_from_model(&model, &options(20.0)).unwrap();
    let b = plan_from_model(&model, &options(20.0)).unwrap();
    assert_eq!(a, b);
    let c = plan_from_model(
        &model,
        &PlanOptions {
            seed: 8,
            ..options(20.0)
        },
    )
    .unwrap();
    assert_ne!(a, c);
    check_shape(&a);
    check_shape(&c);
}

#[test]
fn target_rate_is_met_within_ten_percent() {
    let model = sample_model();
    for rate in [20.0, 100.0, 400.0] {
        let plan = plan_from_model(
            &model,
            &PlanOptions {
                target_rate: Some(rate),
                ..options(60.0)
            },
        )
        .unwrap();
        check_shape(&plan);
        assert!(
            (plan.offered_rate - rate).abs() <= 0.1 * rate,
            "planned {} per second for a target of {rate}",
            plan.offered_rate
        );
        assert!(plan.packets >= (rate * 60.0) as u64);
    }
}

#[test]
fn scale_multiplies_the_learned_rate() {
    let model = sample_model();
    let base = model.base_rate().unwrap();
    let one = plan_from_model(&model, &options(60.0)).unwrap();
    let two = plan_from_model(
        &model,
        &PlanOptions {
            scale: Some(2.0),
            ..options(60.0)
        },
    )
    .unwrap();
    check_shape(&one);
    check_shape(&two);
    assert!((one.offered_rate - base).abs() <= 0.1 * base);
    let ratio = two.packets as f64 / one.packets as f64;
    assert!((1.8..=2.2).contains(&ratio), "scale 2 gave {ratio} times");
}

#[test]
fn plans_carry_the_learned_details() {
    let model = learn(&[synthetic_summary()]).unwrap();
    let plan = plan_from_model(
        &model,
        &PlanOptions {
            target_rate: Some(50.0),
            ..options(30.0)
        },
    )
    .unwrap();
    check_shape(&plan);
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for p in plan.conversations.iter().flat_map(|c| &c.packets) {
        *kinds
            .entry(format!("{}:{}", p.protocol, p.opcode))
            .or_default() += 1;
        let learned = &model.query_details[&format!("{}:{}", p.protocol, p.opcode)];
        let extra = if p.extra.is_empty() {
            "-".to_string()
        } else {
            p.extra.join("\t")
        };
        assert!(learned.contains_key(&extra), "{extra:?} was never learned");
    }
    // Only client requests are planned; DNS is not part of the model's conversations.
    let known = ["cldap:3", "kerberos:", "ldap:0", "ldap:2", "ldap:3"];
    assert!(
        kinds.keys().all(|k| known.contains(&k.as_str())),
        "{kinds:?}"
    );
    assert!(kinds["ldap:3"] > kinds["ldap:0"]);
}

#[test]
fn summary_plans_keep_recorded_order_and_timing() {
    let packets = synthetic_summary();
    let replay_rate = 2.0;
    let plan = plan_from_summary(
        &packets,
        &PlanOptions {
            replay_rate,
            ..options(60.0)
        },
    )
    .unwrap();
    check_shape(&plan);
    let first = packets[0].timestamp.as_secs_f64();
    // One conversation per client host; each holds that host's requests in order, at
    // the recorded times (from the summary's first packet) halved.
    assert_eq!(plan.conversations.len(), 12);
    for (i, c) in plan.conversations.iter().enumerate() {
        // Conversations are in start order, as the hosts began.
        let host = 10 + i as u32;
        let recorded: Vec<&Packet> = packets
            .iter()
            .filter(|p| {
                p.src == host
                    && kauri_traffic::model::is_replayable(&p.protocol, &p.opcode)
                    && (p.timestamp.as_secs_f64() - first) / replay_rate <= 60.0
            })
            .collect();
        assert_eq!(recorded.len(), c.packets.len());
        for (r, p) in recorded.iter().zip(&c.packets) {
            assert_eq!(
                (&r.protocol, &r.opcode, &r.extra),
                (&p.protocol, &p.opcode, &p.extra)
            );
            let at = (r.timestamp.as_secs_f64() - first) / replay_rate;
            assert!((at - p.at).abs() < 1e-6, "{at} vs {}", p.at);
        }
    }
    // A shorter run keeps the packets that fall inside it.
    let short = plan_from_summary(&packets, &options(10.0)).unwrap();
    check_shape(&short);
    assert!(short.packets < plan.packets);
}

#[test]
fn bad_inputs_are_errors() {
    let model = sample_model();
    for duration in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            plan_from_model(&model, &options(duration)),
            Err(PlanError::Duration(_))
        ));
        assert!(matches!(
            plan_from_summary(&synthetic_summary(), &options(duration)),
            Err(PlanError::Duration(_))
        ));
    }
    assert!(matches!(
        plan_from_summary(&[], &options(10.0)),
        Err(PlanError::EmptySummary)
    ));
    let dns_answers = summary::read("1.0\t11\t\t1\t3\tdns\t1\tresponse\n".as_bytes()).unwrap();
    assert!(matches!(
        plan_from_summary(&dns_answers, &options(10.0)),
        Err(PlanError::EmptySummary)
    ));
    assert!(matches!(
        plan_from_model(
            &model,
            &PlanOptions {
                scale: Some(0.0),
                ..options(10.0)
            }
        ),
        Err(PlanError::Scale(_))
    ));
    assert!(matches!(
        plan_from_model(
            &model,
            &PlanOptions {
                target_rate: Some(-3.0),
                ..options(10.0)
            }
        ),
        Err(PlanError::TargetRate(_))
    ));
    let empty = Model::parse(
        r#"{"ngrams": {}, "query_details": {}, "cumulative_duration": 0,
            "packet_rate": [5, 1], "version": 2}"#,
    )
    .unwrap();
    assert!(matches!(
        plan_from_model(&empty, &options(10.0)),
        Err(PlanError::NoTraffic)
    ));
}

/// Shares of each `protocol:opcode` among packets.
fn mix<'a>(kinds: impl Iterator<Item = String> + 'a) -> BTreeMap<String, f64> {
    let mut counts: BTreeMap<String, f64> = BTreeMap::new();
    let mut total = 0.0;
    for k in kinds {
        *counts.entry(k).or_default() += 1.0;
        total += 1.0;
    }
    counts.values_mut().for_each(|v| *v /= total);
    counts
}

#[test]
fn samba_can_plan_from_kauri_model() {
    if !samba_python() {
        return;
    }
    let model = learn(&[synthetic_summary()]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("kauri.model");
    model.save(&path).unwrap();
    let duration = 60.0;
    let rate = 40.0;

    // Samba loads the model and generates conversations from it, then writes them as
    // a summary (what `traffic_replay --traffic-summary` does); no network is used.
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import sys, random\n\
             from samba.emulate import traffic\n\
             random.seed(3)\n\
             model = traffic.TrafficModel()\n\
             model.load(sys.argv[1])\n\
             seqs = model.generate_conversation_sequences(float(sys.argv[2]), float(sys.argv[3]), 1, 0)\n\
             lines = []\n\
             for c in traffic.seq_to_conversations(seqs):\n\
             \x20   lines += c.replay_as_summary_lines()\n\
             lines.sort()\n\
             print('conversations', len(seqs))\n\
             for _, line in lines:\n\
             \x20   print(line)\n",
        ])
        .arg(&path)
        .arg(rate.to_string())
        .arg(duration.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Samba could not plan from Kauri's model: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (head, body) = stdout.split_once('\n').unwrap();
    let samba_conversations: usize = head.trim_start_matches("conversations ").parse().unwrap();
    let samba_packets = summary::read(body.as_bytes()).unwrap();
    assert!(samba_conversations > 0);

    let ours = plan_from_model(
        &model,
        &PlanOptions {
            target_rate: Some(rate),
            ..options(duration)
        },
    )
    .unwrap();

    // Both reach the same packet target and stay inside the run.
    let target = (rate * duration) as usize;
    assert!(
        samba_packets.len() >= target,
        "Samba planned {}",
        samba_packets.len()
    );
    assert!(ours.packets as usize >= target);
    let first = samba_packets[0].timestamp.as_secs_f64();
    let last = samba_packets[samba_packets.len() - 1]
        .timestamp
        .as_secs_f64();
    assert!(first >= 0.0 && last <= duration);

    // The same mix of packets, to within a few percent.
    let theirs = mix(samba_packets.iter().map(Packet::key));
    let kauri = mix(ours
        .conversations
        .iter()
        .flat_map(|c| &c.packets)
        .map(|p| format!("{}:{}", p.protocol, p.opcode)));
    assert_eq!(
        theirs.keys().collect::<Vec<_>>(),
        kauri.keys().collect::<Vec<_>>()
    );
    for (k, share) in &theirs {
        assert!(
            (share - kauri[k]).abs() < 0.05,
            "{k}: Samba {share:.3}, Kauri {:.3}",
            kauri[k]
        );
    }
    // Conversations of similar length.
    let samba_len = samba_packets.len() as f64 / samba_conversations as f64;
    let kauri_len = ours.packets as f64 / ours.conversations.len() as f64;
    assert!(
        (samba_len / kauri_len - 1.0).abs() < 0.25,
        "packets per conversation: Samba {samba_len:.2}, Kauri {kauri_len:.2}"
    );
}
