//! Run reports compared as PNG, SVG, HTML and text.

use std::collections::BTreeMap;

use kauri_traffic::report::{self, ReportError};
use kauri_traffic::run::{OpStats, RunReport, RUN_FORMAT};

fn op(
    protocol: &str,
    opcode: &str,
    description: &str,
    count: u64,
    failed: u64,
    median: f64,
    p95: f64,
) -> OpStats {
    OpStats {
        protocol: protocol.into(),
        opcode: opcode.into(),
        description: description.into(),
        count,
        failed,
        mean: median * 1.1,
        median,
        p95,
        p99: p95 * 1.5,
        min: median / 3.0,
        max: p95 * 3.0,
    }
}

fn run(label: &str, offered: f64, achieved: f64, operations: Vec<OpStats>) -> RunReport {
    let successful: u64 = operations.iter().map(|o| o.count - o.failed).sum();
    let failed: u64 = operations.iter().map(|o| o.failed).sum();
    let mut failures = BTreeMap::new();
    if failed > 0 {
        failures.insert("timeout".to_string(), failed);
    }
    RunReport {
        version: RUN_FORMAT,
        label: label.into(),
        server: "ldap://127.0.0.1:3389".into(),
        started: "2025-01-01T00:00:00Z".into(),
        source: "model.json".into(),
        duration: 60.0,
        offered_rate: offered,
        achieved_rate: achieved,
        planned_conversations: 1000,
        planned_operations: successful + failed,
        conversations: 990,
        unfinished_conversations: 10,
        successful,
        failed,
        skipped: 0,
        failures,
        max_sleep_miss: 0.02,
        p95_sleep_miss: 0.001,
        p95_client_lag: 0.0,
        client_cpu: 0.4,
        client_bound: false,
        operations,
    }
}

/// Kauri and Samba at the same rate, and a third run with an awkward label, a kind of
/// its own and some kinds missing.
fn runs() -> Vec<RunReport> {
    let kauri = run(
        "kauri 5000/s",
        5000.0,
        4985.0,
        vec![
            op("ldap", "3", "searchRequest", 200_000, 0, 0.000_8, 0.004),
            op("ldap", "0", "bindRequest", 20_000, 2, 0.002, 0.009),
            op("cldap", "3", "searchRequest", 30_000, 0, 0.000_2, 0.000_9),
            op("dns", "0", "query", 50_000, 0, 0.000_05, 0.000_3),
            op("kerberos", "10", "AS-REQ", 10_000, 0, 0.004, 0.02),
        ],
    );
    let mut samba = run(
        "samba 5000/s",
        5000.0,
        3120.0,
        vec![
            op("ldap", "3", "searchRequest", 125_000, 40, 0.003, 0.05),
            op("ldap", "0", "bindRequest", 12_000, 300, 0.012, 0.2),
            op("cldap", "3", "searchRequest", 19_000, 0, 0.001, 0.004),
            op("dns", "0", "query", 31_000, 0, 0.000_4, 0.002),
            op("kerberos", "10", "AS-REQ", 6_000, 12, 0.03, 0.4),
        ],
    );
    samba.client_bound = true;
    let odd = run(
        "a<b & c",
        5000.0,
        4100.0,
        vec![
            op("ldap", "3", "searchRequest", 150_000, 0, 0.001, 0.006),
            op("ldap", "2", "unbindRequest", 9_000, 0, 0.000_1, 0.000_4),
        ],
    );
    vec![kauri, samba, odd]
}

const KINDS: [&str; 6] = [
    "ldap searchRequest",
    "ldap bindRequest",
    "cldap searchRequest",
    "dns query",
    "kerberos AS-REQ",
    "ldap unbindRequest",
];

fn decode(path: &std::path::Path) -> (u32, u32, Vec<u8>, png::ColorType) {
    let file = std::fs::File::open(path).expect("open png");
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf, info.color_type)
}

#[test]
fn png_is_written_at_the_asked_size_and_is_not_blank() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.png");
    report::png(&runs(), &path, 1000, 640).expect("png");

    let bytes = std::fs::read(&path).expect("read png");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(
        u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]),
        1000
    );
    assert_eq!(
        u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]),
        640
    );

    let (w, h, pixels, colour) = decode(&path);
    assert_eq!((w, h, colour), (1000, 640, png::ColorType::Rgb));
    let colours: std::collections::HashSet<&[u8]> = pixels.chunks(3).collect();
    assert!(colours.len() > 20, "only {} colours", colours.len());
    // The first three runs' colours fill their bars.
    for run_colour in [[0u8, 114, 178], [213, 94, 0], [0, 158, 115]] {
        let n = pixels.chunks(3).filter(|p| *p == run_colour).count();
        assert!(n > 200, "{run_colour:?} drawn on {n} pixels");
    }
    let white = pixels.chunks(3).filter(|p| *p == [255, 255, 255]).count();
    assert!(white > pixels.len() / 3 / 3, "background mostly white");
}

#[test]
fn svg_and_html_name_every_run_and_kind_and_escape_labels() {
    let runs = runs();
    let svg = report::svg(&runs).expect("svg");
    assert!(svg.starts_with("<svg"));
    let html = report::html(&runs).expect("html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for doc in [&svg, &html] {
        assert!(doc.contains("kauri 5000/s"));
        assert!(doc.contains("samba 5000/s"));
        assert!(doc.contains("a&lt;b &amp; c"), "label escaped");
        assert!(!doc.contains("a<b & c"), "label not raw");
        for kind in KINDS {
            assert!(doc.contains(kind), "{kind} missing");
        }
    }
    // Self-contained: no scripts, nothing loaded from elsewhere.
    assert!(!html.contains("<script"));
    assert!(!html.contains("<link"));
    assert!(!html.contains("src="));
    assert!(html.contains("<svg"));
    assert!(html.contains("<style>"));
    // The odd run lacks most kinds: its cells are there but empty.
    assert!(html.contains(r#"class="n group missing"></td>"#));
    // Totals name failure reasons and the client-bound run.
    assert!(html.contains("failed: timeout"));
    assert!(html.contains(r#"<td class="n warn">yes</td>"#));
}

#[test]
fn table_has_a_row_per_kind() {
    let text = report::table(&runs());
    for kind in KINDS {
        let rows = text.lines().filter(|l| l.starts_with(kind)).count();
        assert!(rows >= 1, "no row for {kind}:\n{text}");
    }
    assert!(text.contains("samba 5000/s"));
    assert!(text.contains("Achieved rate (ops/s)"));
    assert!(text.contains("4,985"));
    let header = text
        .lines()
        .find(|l| l.starts_with("Operation"))
        .expect("header");
    for column in ["Count", "Failed", "Median", "95%", "Max"] {
        assert!(header.contains(column));
    }
    // A kind a run lacks is an empty row for that run.
    let unbind = text
        .lines()
        .position(|l| l.starts_with("ldap unbindRequest"))
        .expect("unbind row");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[unbind].contains("kauri 5000/s"));
    assert_eq!(
        lines[unbind].split_whitespace().count(),
        4,
        "{}",
        lines[unbind]
    );
}

#[test]
fn no_runs_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("none.png");
    assert!(matches!(
        report::png(&[], &path, 800, 600),
        Err(ReportError::NoRuns)
    ));
    assert!(!path.exists());
    assert!(matches!(report::svg(&[]), Err(ReportError::NoRuns)));
    assert!(matches!(report::html(&[]), Err(ReportError::NoRuns)));
    assert!(report::table(&[]).contains("No runs"));
}

#[test]
fn zero_latencies_and_rates_are_drawn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let all_failed = run(
        "all failed",
        0.0,
        0.0,
        vec![
            op("ldap", "3", "searchRequest", 10, 10, 0.0, 0.0),
            op("dns", "0", "query", 0, 0, 0.0, 0.0),
        ],
    );
    let empty = run("no operations", 100.0, 0.0, Vec::new());
    for runs in [
        vec![all_failed.clone()],
        vec![empty.clone()],
        vec![all_failed, empty],
    ] {
        let path = dir.path().join("zero.png");
        report::png(&runs, &path, 640, 480).expect("png");
        let (w, h, _, _) = decode(&path);
        assert_eq!((w, h), (640, 480));
        report::svg(&runs).expect("svg");
        report::html(&runs).expect("html");
        report::table(&runs);
    }
}

#[test]
fn sizes_out_of_range_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tiny.png");
    assert!(matches!(
        report::png(&runs(), &path, 10, 10),
        Err(ReportError::Size { .. })
    ));
    assert!(matches!(
        report::png(&runs(), &path, 800, 100_000),
        Err(ReportError::Size { .. })
    ));
}

#[test]
fn unwritable_path_is_an_io_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("missing").join("report.png");
    assert!(matches!(
        report::png(&runs(), &path, 800, 600),
        Err(ReportError::Io { .. })
    ));
}
