//! The bundled sample (`examples/traffic`, recorded by `scripts/traffic-capture`): the
//! capture summarizes to the bundled summary exactly, the summary learns the bundled model
//! exactly, and Samba's own learner makes the same model from the same summary.

use std::process::Command;

mod common;

use common::{bundled, samba_python, sample_dir, PYTHON};

use kauri_traffic::learn::learn;
use kauri_traffic::model::Model;
use kauri_traffic::summarize::summarize_capture;
use kauri_traffic::summary;

#[test]
fn the_capture_summarizes_to_the_bundled_summary() {
    let capture = std::fs::read(bundled("demo.pcapng")).unwrap();
    let got = summarize_capture(&capture).unwrap();
    let text: String = got.packets.iter().map(|p| format!("{p}\n")).collect();
    let want = std::fs::read_to_string(bundled("demo.summary")).unwrap();
    assert_eq!(text, want);
    assert_eq!(got.stats.malformed, 0);
    assert_eq!(got.stats.truncated, 0);
    // Every protocol the sample was recorded for is there.
    for p in ["dns", "cldap", "kerberos", "ldap"] {
        assert!(
            got.packets.iter().any(|x| x.protocol == p),
            "no {p} in the sample"
        );
    }
}

#[test]
fn the_summary_learns_the_bundled_model() {
    let f = std::fs::File::open(bundled("demo.summary")).unwrap();
    let packets = summary::read(std::io::BufReader::new(f)).unwrap();
    let model = learn(&[packets]).unwrap();
    let bundled_model = Model::load(bundled("demo.model")).unwrap();
    assert_eq!(model.to_value().unwrap(), bundled_model.to_value().unwrap());
    // The file is byte for byte what learning writes.
    let text = std::fs::read_to_string(bundled("demo.model")).unwrap();
    assert_eq!(model.to_json().unwrap(), text);
}

#[test]
fn samba_learns_the_same_model_from_the_bundled_summary() {
    let learner = sample_dir().join("traffic_learner");
    if !learner.is_file() {
        println!(
            "skipped: Samba's traffic_learner is not in {}",
            learner.display()
        );
        return;
    }
    if !samba_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("samba.model");
    let status = Command::new(PYTHON)
        .arg(&learner)
        .arg(bundled("demo.summary"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let samba_model = Model::load(&out).unwrap();
    let ours = Model::load(bundled("demo.model")).unwrap();
    assert_eq!(samba_model.to_value().unwrap(), ours.to_value().unwrap());
}

#[test]
fn the_root_dse_model_plans_only_root_dse_reads() {
    use kauri_traffic::plan::{plan_from_model, PlanOptions};
    let model = Model::load(bundled("rootdse.model")).unwrap();
    let plan = plan_from_model(
        &model,
        &PlanOptions {
            duration: 2.0,
            target_rate: Some(1000.0),
            seed: 7,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert!(plan.packets > 1000, "{} packets", plan.packets);
    for p in plan.conversations.iter().flat_map(|c| &c.packets) {
        assert_eq!((p.protocol.as_str(), p.opcode.as_str()), ("ldap", "3"));
        // The root DSE (no scope, no DN recorded), asking for dnsHostName.
        assert_eq!(p.extra.first().map(String::as_str), Some(""));
        assert_eq!(p.extra.get(1).map(String::as_str), Some(""));
        assert!(p.extra.iter().any(|x| x == "dnsHostName"), "{:?}", p.extra);
    }
}
