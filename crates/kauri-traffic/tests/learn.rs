//! Learning gives the model Samba's learner gives, and models move between the two tools.
//!
//! Tests that need Samba's sample data look in `$KAURI_SAMBA_TRAFFIC_DIR` (default
//! `../shared/samba-tests/traffic` beside the repository); tests that need Samba's Python modules run
//! `/usr/bin/python3`. Either missing, the test says why and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{samba_python, sample_dir, PYTHON};
use kauri_traffic::learn::learn;
use kauri_traffic::model::Model;
use kauri_traffic::summary::{self, Packet};
use serde_json::Value;

/// Samba's sample directory, when it is there.
fn samba_dir() -> Option<PathBuf> {
    let dir = sample_dir();
    if dir.join("traffic-sample-very-short.txt").is_file() {
        Some(dir)
    } else {
        println!(
            "skipped: Samba's sample summary is not in {} (set KAURI_SAMBA_TRAFFIC_DIR)",
            dir.display()
        );
        None
    }
}

fn read_summary(path: &Path) -> Vec<Packet> {
    let file = std::fs::File::open(path).unwrap();
    summary::read(std::io::BufReader::new(file)).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// JSON equality with floats equal to within 1e-9 relative.
fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{at}: {x} != {y}"))
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                same(x, y, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let mut ky: Vec<&String> = y.keys().collect();
            let mut kx_sorted = kx.clone();
            kx_sorted.sort();
            ky.sort();
            if kx_sorted != ky {
                return Err(format!("{at}: keys {kx_sorted:?} != {ky:?}"));
            }
            for k in kx {
                same(&x[k], &y[k], &format!("{at}[{k:?}]"))?;
            }
            Ok(())
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} != {b}")),
    }
}

fn assert_same(a: &Value, b: &Value) {
    if let Err(e) = same(a, b, "model") {
        panic!("models differ at {e}\nours:   {a}\ntheirs: {b}");
    }
}

/// Runs Samba's learner on summary files and reads the model it writes.
fn samba_learn(summaries: &[&Path], out: &Path) -> Value {
    let script = sample_dir().join("traffic_learner");
    let mut cmd = Command::new(PYTHON);
    match Some(script).filter(|s| s.is_file()) {
        Some(script) => {
            cmd.arg(script).args(summaries).arg("-o").arg(out);
        }
        None => {
            // The learner script is a thin wrapper over these calls.
            cmd.args([
                "-c",
                "import sys\n\
                 from samba.emulate import traffic\n\
                 conversations, _, _, dns = traffic.ingest_summaries(sys.argv[2:], dns_mode='count')\n\
                 model = traffic.TrafficModel()\n\
                 model.learn(conversations, dns)\n\
                 model.save(sys.argv[1])\n",
            ])
            .arg(out)
            .args(summaries);
        }
    }
    let result = cmd.output().unwrap();
    assert!(
        result.status.success(),
        "Samba's learner failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    read_json(out)
}

/// Loads a model in Samba's `TrafficModel` and saves it again.
fn samba_round_trip(model: &Path, out: &Path) -> Value {
    let result = Command::new(PYTHON)
        .args([
            "-c",
            "import sys\n\
             from samba.emulate import traffic\n\
             model = traffic.TrafficModel()\n\
             model.load(sys.argv[1])\n\
             model.save(sys.argv[2])\n",
        ])
        .arg(model)
        .arg(out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "Samba could not load {}: {}",
        model.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    read_json(out)
}

/// Two summary files of made-up traffic: LDAP binds, searches and unbinds with their
/// responses, CLDAP, DNS, Kerberos, DCE/RPC and SMB, several hosts, gaps of every wait
/// bucket, a conversation carried on in the second file and one whose votes are even.
fn synthetic() -> (String, String) {
    let base = 1_600_000_000u64;
    let line = |t: f64, ip: &str, stream: &str, src: u32, dst: u32, rest: &str| {
        let secs = base + t.trunc() as u64;
        let nanos = (t.fract() * 1e9).round() as u64;
        format!("{secs}.{nanos:09}\t{ip}\t{stream}\t{src}\t{dst}\t{rest}\n")
    };
    let bind = "ldap\t0\tbindRequest\t\t\t\t\t\t\tsasl\t1.3.6.1.5.5.2";
    let bind_simple = "ldap\t0\tbindRequest\t\t\t\t\t\t\tsimple\t";
    let bind_resp = "ldap\t1\tbindResponse\t\t\t\t\t\t\t\t";
    let search_base = "ldap\t3\tsearchRequest\t0\tDC,DC\t\t(objectClass)\tobjectSid\t\t\t";
    let search_sub =
        "ldap\t3\tsearchRequest\t2\tCN,DC,DC\t\t(&(objectClass)(sAMAccountName))\tcn,memberOf\t\t\t";
    let search_root = "ldap\t3\tsearchRequest\t0\t\t\t(objectClass)\tdefaultNamingContext\t\t\t";
    let entry = "ldap\t4\tsearchResEntry\t\t\t\t\t\t\t\t";
    let done = "ldap\t5\tsearchResDone\t\t\t\t\t\t\t\t";
    let unbind = "ldap\t2\tunbindRequest\t\t\t\t\t\t\t\t";
    let cont = "ldap\t\t\t\t\t\t\t\t\t\t";
    let cldap = "cldap\t3\tsearchRequest\t\t\t\t(&(DnsDomain)(NtVer))\tNetlogon\t\t\t";
    let cldap_done = "cldap\t5\tsearchResDone\t\t\t\t\t\t\t\t";
    let dns_q = "dns\t0\tquery";
    let dns_r = "dns\t1\tresponse";
    let krb = "kerberos\t\t\t";
    let smb = "smb\t0x72\tNegotiate Protocol (0x72)";
    let rpc_bind = "dcerpc\t11\tBind";
    let rpc_ack = "dcerpc\t12\tBind_ack";
    let getinfo = "rpc_netlogon\t29\tNetrLogonGetDomainInfo";

    let mut a = String::new();
    a += &line(0.000, "11", "", 10, 1, dns_q);
    a += &line(0.001, "11", "", 1, 10, dns_r);
    a += &line(0.002, "06", "1", 10, 1, bind);
    a += &line(0.004, "06", "1", 1, 10, bind_resp);
    a += &line(0.010, "06", "1", 10, 1, search_base);
    a += &line(0.015, "06", "1", 1, 10, entry);
    a += &line(0.016, "06", "1", 1, 10, done);
    a += &line(0.020, "11", "", 11, 1, cldap);
    a += &line(0.021, "11", "", 11, 1, cldap);
    a += &line(0.025, "11", "", 1, 11, cldap_done);
    a += &line(0.030, "06", "2", 12, 1, krb);
    a += &line(0.035, "06", "2", 1, 12, krb);
    a += &line(0.040, "06", "1", 10, 1, cont);
    a += &line(0.300, "06", "1", 10, 1, search_sub);
    a += &line(0.310, "06", "1", 1, 10, done);
    a += &line(0.500, "06", "3", 13, 1, rpc_bind);
    a += &line(0.501, "06", "3", 1, 13, rpc_ack);
    a += &line(0.502, "06", "3", 13, 1, getinfo);
    a += &line(0.503, "06", "3", 1, 13, getinfo);
    a += &line(0.600, "06", "4", 14, 1, smb);
    a += &line(1.200, "06", "1", 10, 1, search_sub);
    a += &line(1.210, "06", "1", 1, 10, entry);
    a += &line(1.211, "06", "1", 1, 10, done);
    a += &line(1.500, "06", "2", 12, 1, krb);
    a += &line(1.501, "06", "5", 1, 2, bind_simple);
    a += &line(1.502, "06", "5", 2, 1, bind_resp);
    a += &line(1.510, "06", "5", 1, 2, search_root);
    a += &line(1.511, "06", "5", 2, 1, done);
    a += &line(2.000, "11", "", 15, 1, dns_q);
    a += &line(2.001, "11", "", 1, 15, dns_r);

    let mut b = String::new();
    b += &line(4.000, "06", "1", 10, 1, search_base);
    b += &line(4.010, "06", "1", 1, 10, done);
    b += &line(9.000, "06", "1", 10, 1, unbind);
    b += &line(9.100, "11", "", 16, 1, cldap);
    b += &line(9.104, "11", "", 1, 16, cldap_done);
    b += &line(9.200, "06", "7", 16, 1, bind);
    b += &line(9.201, "06", "7", 1, 16, bind_resp);
    b += &line(9.210, "06", "7", 16, 1, search_sub);
    b += &line(9.300, "06", "7", 16, 1, search_base);
    b += &line(9.301, "06", "7", 1, 16, done);
    b += &line(30.0, "06", "7", 16, 1, unbind);
    b += &line(30.5, "06", "8", 12, 1, krb);
    b += &line(31.0, "11", "", 16, 1, dns_q);
    // Host 20 serves host 17; host 18's Kerberos packets to it cast no vote, so the
    // server of the conversation before decides: 18 is the client.
    b += &line(32.0, "06", "9", 17, 20, search_base);
    b += &line(32.1, "06", "9", 20, 17, done);
    b += &line(32.2, "06", "10", 18, 20, krb);
    (a, b)
}

#[test]
fn sample_learns_the_sample_model() {
    let Some(dir) = samba_dir() else { return };
    let packets = read_summary(&dir.join("traffic-sample-very-short.txt"));
    let ours = learn(&[packets]).unwrap().to_value().unwrap();
    let mut theirs = read_json(&dir.join("traffic-sample-very-short.model"));
    // The sample model ships with a packet_rate of [50, 0.32482] that Samba 4.17's
    // learner does not produce; its learner (and its own test's expected model,
    // traffic_learner.expected) gives [10, 0.22707200050354004] for this summary.
    assert_eq!(theirs["packet_rate"], serde_json::json!([50, 0.32482]));
    theirs["packet_rate"] = serde_json::json!([10, 0.22707200050354004]);
    assert_same(&ours, &theirs);
}

#[test]
fn learning_is_deterministic() {
    let (a, b) = synthetic();
    let a = summary::read(a.as_bytes()).unwrap();
    let b = summary::read(b.as_bytes()).unwrap();
    let first = learn(&[a.clone(), b.clone()]).unwrap().to_json().unwrap();
    let second = learn(&[a, b]).unwrap().to_json().unwrap();
    assert_eq!(first, second);
}

#[test]
fn synthetic_summary_learns_the_expected_chain() {
    let (a, b) = synthetic();
    let a = summary::read(a.as_bytes()).unwrap();
    let b = summary::read(b.as_bytes()).unwrap();
    let m = learn(&[a, b]).unwrap();
    // DNS is counted apart, both directions.
    assert_eq!(m.dns.get("0"), Some(&3));
    assert_eq!(m.dns.get("1"), Some(&2));
    // Host 10's conversation runs across both files: a search after 2.8 s waits in
    // bucket 3, the unbind after 5 s in bucket 3 too.
    assert_eq!(m.ngrams["-\t-"]["ldap:0"], 2);
    assert_eq!(m.ngrams["ldap:3\twait:3"]["ldap:3"], 1);
    assert!(m.ngrams.keys().all(|k| !k.contains("dns:")));
    // Only packets the client sends are learned: no responses, no SMB.
    for state in m.ngrams.values().flat_map(|n| n.keys()) {
        assert!(
            ![
                "ldap:1",
                "ldap:4",
                "ldap:5",
                "cldap:5",
                "dcerpc:11",
                "smb:0x72"
            ]
            .contains(&state.as_str()),
            "{state}"
        );
    }
    // Host 18 was taken for the client of its even conversation.
    assert_eq!(m.ngrams["-\t-"]["kerberos:"], 2);
    // A packet without extra columns is noted as "-".
    assert_eq!(m.query_details["rpc_netlogon:29"]["-"], 1);
    // The chain ends once, after the last conversation.
    let ends: u64 = m.ngrams.values().filter_map(|n| n.get("-")).sum();
    assert_eq!(ends, 1);
}

#[test]
fn samba_learner_agrees_on_the_sample() {
    let Some(dir) = samba_dir() else { return };
    if !samba_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sample = dir.join("traffic-sample-very-short.txt");
    let theirs = samba_learn(&[&sample], &tmp.path().join("samba.model"));
    let ours = learn(&[read_summary(&sample)]).unwrap().to_value().unwrap();
    assert_same(&ours, &theirs);
}

#[test]
fn samba_learner_agrees_on_two_synthetic_files() {
    if !samba_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = synthetic();
    let pa = tmp.path().join("a.txt");
    let pb = tmp.path().join("b.txt");
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    let theirs = samba_learn(&[&pa, &pb], &tmp.path().join("samba.model"));
    let ours = learn(&[read_summary(&pa), read_summary(&pb)])
        .unwrap()
        .to_value()
        .unwrap();
    assert_same(&ours, &theirs);

    // The files in the other order: conversations and gaps come out differently, and
    // still the same in both tools.
    let theirs = samba_learn(&[&pb, &pa], &tmp.path().join("samba-ba.model"));
    let ours = learn(&[read_summary(&pb), read_summary(&pa)])
        .unwrap()
        .to_value()
        .unwrap();
    assert_same(&ours, &theirs);
}

#[test]
fn models_move_between_kauri_and_samba() {
    if !samba_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = synthetic();
    let a = summary::read(a.as_bytes()).unwrap();
    let b = summary::read(b.as_bytes()).unwrap();
    let model = learn(&[a, b]).unwrap();
    let ours = tmp.path().join("kauri.model");
    model.save(&ours).unwrap();

    // Samba loads Kauri's model and saves it with the same content.
    let resaved = samba_round_trip(&ours, &tmp.path().join("resaved.model"));
    assert_same(&model.to_value().unwrap(), &resaved);

    // And Kauri reads what Samba wrote back to the same model.
    let back = Model::load(tmp.path().join("resaved.model")).unwrap();
    assert_eq!(back, model);
}

#[test]
fn samba_models_load_and_save_unchanged() {
    let Some(dir) = samba_dir() else { return };
    let path = dir.join("traffic-sample-very-short.model");
    let model = Model::load(&path).unwrap();
    assert_same(&model.to_value().unwrap(), &read_json(&path));
    assert_eq!(Model::parse(&model.to_json().unwrap()).unwrap(), model);
}
