//! The connection rules against hostile clients, on the real server over 127.0.0.1: floods
//! of connections that never send a byte, clients that send a byte at a time, TLS
//! handshakes that never finish, and one request that tries to hold everyone up. In each
//! case a legitimate client still connects, binds and searches.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use kauri_db::Filter;
use kauri_ldap_proto::decode::decode_message;
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{
    BindAuth, BindRequest, DerefAliases, LdapMessage, ProtocolOp, ResultCode, SearchRequest,
    SearchScope,
};

mod common;

use common::{start, Running, ADMIN, BASE, PW};

/// The OID a notice of disconnection carries.
const NOTICE: &[u8] = b"1.3.6.1.4.1.1466.20036";

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A TCP connection from a chosen loopback address (the whole of 127/8 is this host).
fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let from: SocketAddr = format!("{source}:0").parse().unwrap();
    sock.bind(&from.into()).unwrap();
    sock.connect_timeout(&to.into(), Duration::from_secs(5))
        .unwrap();
    let s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads one LDAP message (None when the connection closed).
fn read_message(s: &mut TcpStream) -> Option<LdapMessage> {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).ok()?;
    let mut frame = head.to_vec();
    let len = if head[1] & 0x80 == 0 {
        usize::from(head[1])
    } else {
        let n = usize::from(head[1] & 0x7f);
        let mut more = vec![0u8; n];
        s.read_exact(&mut more).ok()?;
        frame.extend_from_slice(&more);
        more.iter().fold(0usize, |a, b| a << 8 | usize::from(*b))
    };
    let start = frame.len();
    frame.resize(start + len, 0);
    s.read_exact(&mut frame[start..]).ok()?;
    decode_message(&frame).ok()
}

fn send(s: &mut TcpStream, id: i32, op: ProtocolOp) {
    let bytes = encode_message(&LdapMessage {
        id,
        op,
        controls: Vec::new(),
    });
    s.write_all(&bytes).unwrap();
}

/// Binds as the administrator and searches the base: the legitimate client.
fn bind_and_search(s: &mut TcpStream, base: &str) -> ResultCode {
    send(
        s,
        1,
        ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: ADMIN.into(),
            auth: BindAuth::Simple(PW.as_bytes().to_vec()),
        }),
    );
    match read_message(s).map(|m| m.op) {
        Some(ProtocolOp::BindResponse(r)) => assert_eq!(r.result.code, ResultCode::SUCCESS),
        other => panic!("no bind response: {other:?}"),
    }
    search(s, 2, base)
}

fn search(s: &mut TcpStream, id: i32, base: &str) -> ResultCode {
    send(s, id, search_op(base, SearchScope::Base, &["objectClass"]));
    loop {
        match read_message(s).map(|m| m.op) {
            Some(ProtocolOp::SearchResultEntry(_)) => continue,
            Some(ProtocolOp::SearchResultDone(r)) => return r.code,
            other => panic!("no search result: {other:?}"),
        }
    }
}

/// A search for every object at `base` (in `scope`) asking for `attributes`.
fn search_op(base: &str, scope: SearchScope, attributes: &[&str]) -> ProtocolOp {
    ProtocolOp::SearchRequest(SearchRequest {
        base: base.into(),
        scope,
        deref: DerefAliases::Never,
        size_limit: 0,
        time_limit: 0,
        types_only: false,
        filter: Filter::parse("(objectClass=*)").unwrap(),
        attributes: attributes.iter().map(|a| a.to_string()).collect(),
    })
}

/// Reads until the server closes; returns what it sent.
fn read_until_closed(s: &mut TcpStream, within: Duration) -> Vec<u8> {
    s.set_read_timeout(Some(within)).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

fn metric(r: &Running, line_start: &str) -> u64 {
    let mut s = TcpStream::connect(addr(r.metrics_port)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no metric {line_start} in\n{text}"))
}

/// More idle connections than the server takes: the longest idle make room for new ones,
/// so a client arriving after the flood still binds and searches, and the connections
/// that gave way were told why.
#[test]
fn an_idle_flood_cannot_lock_out_a_client() {
    let r = start(|c| {
        c.max_connections = 50;
        c.reserved_for_authenticated = 5;
        c.max_connections_per_address = 0;
        c.max_unauthenticated_per_address = 0;
    });
    let flood: Vec<TcpStream> = (0..150)
        .map(|_| connect_from("127.0.0.1", addr(r.port)))
        .collect();
    let started = Instant::now();
    let mut client = connect_from("127.0.0.1", addr(r.port));
    assert_eq!(bind_and_search(&mut client, BASE), ResultCode::SUCCESS);
    let took = started.elapsed();
    // The first of the flood gave way long ago, with a notice of disconnection.
    let mut first = flood.into_iter().next().unwrap();
    let got = read_until_closed(&mut first, Duration::from_secs(5));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    assert!(
        metric(
            &r,
            "kauri_connections_closed_total{service=\"ldap\",rule=\"evicted\"}"
        ) >= 100
    );
    eprintln!("a new client bound and searched in {took:?} after 150 idle connections");
}

/// One address holds at most `max_unauthenticated_per_address` unauthenticated
/// connections: a newcomer from it makes that address's longest idle connection give way
/// (with a notice), while connections from other addresses are untouched and served.
#[test]
fn one_address_cannot_take_every_connection() {
    let r = start(|c| c.max_unauthenticated_per_address = 8);
    let mut elsewhere = connect_from("127.0.0.2", addr(r.port));
    wait_for_open(&r, 1);
    let mut flood: Vec<TcpStream> = Vec::new();
    for i in 0..8 {
        flood.push(connect_from("127.0.0.1", addr(r.port)));
        wait_for_open(&r, 2 + i);
    }
    let mut newcomer = connect_from("127.0.0.1", addr(r.port));
    let got = read_until_closed(&mut flood[0], Duration::from_secs(5));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    assert_eq!(bind_and_search(&mut newcomer, BASE), ResultCode::SUCCESS);
    assert_eq!(bind_and_search(&mut elsewhere, BASE), ResultCode::SUCCESS);
    // Connections of the flood that bind no longer count against their address: two more
    // newcomers find room without closing anyone.
    let evicted = "kauri_connections_closed_total{service=\"ldap\",rule=\"evicted\"}";
    assert_eq!(metric(&r, evicted), 1);
    for s in flood.iter_mut().skip(1).take(2) {
        assert_eq!(bind_and_search(s, BASE), ResultCode::SUCCESS);
    }
    let mut more: Vec<TcpStream> = (0..2)
        .map(|_| connect_from("127.0.0.1", addr(r.port)))
        .collect();
    for s in &mut more {
        assert_eq!(bind_and_search(s, BASE), ResultCode::SUCCESS);
    }
    assert_eq!(metric(&r, evicted), 1);
}

/// Waits until the server holds `n` connections (it admits them in the order they were
/// accepted, which the tests rely on to know which one is the longest idle).
fn wait_for_open(r: &Running, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let open = metric(
            r,
            "kauri_connections_open{service=\"ldap\",state=\"unauthenticated\"}",
        ) + metric(
            r,
            "kauri_connections_open{service=\"ldap\",state=\"authenticated\"}",
        );
        if open == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{open} connections open, not {n}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Bytes a client sends after StartTLS and before its response would be read as if they
/// had come over TLS: the connection ends with a notice instead.
#[test]
fn requests_sent_behind_start_tls_end_the_connection() {
    use kauri_ldap_proto::ExtendedRequest;
    let r = start(|_| {});
    let mut s = connect_from("127.0.0.1", addr(r.port));
    let mut bytes = encode_message(&LdapMessage {
        id: 1,
        op: ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: "1.3.6.1.4.1.1466.20037".into(),
            value: None,
        }),
        controls: Vec::new(),
    });
    bytes.extend(encode_message(&LdapMessage {
        id: 2,
        op: search_op("", SearchScope::Base, &[]),
        controls: Vec::new(),
    }));
    s.write_all(&bytes).unwrap();
    let got = read_until_closed(&mut s, Duration::from_secs(5));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    // protocolError (2) in the notice, and no search answer.
    assert!(got.windows(3).any(|w| w == [0x0a, 0x01, 2]), "{got:?}");
    assert!(!got
        .windows(2)
        .any(|w| w == [0x65, 0x84] || w == [0x64, 0x84]));
    let mut client = connect_from("127.0.0.1", addr(r.port));
    assert_eq!(bind_and_search(&mut client, BASE), ResultCode::SUCCESS);
}

/// A client that sends requests and never reads the answers cannot hold the server's
/// writes forever: once a write has waited `write_timeout_secs`, the connection closes.
#[test]
fn a_client_that_never_reads_is_disconnected() {
    let r = start(|c| c.write_timeout_secs = 1);
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect_timeout(&addr(r.port).into(), Duration::from_secs(5))
        .unwrap();
    let mut s: TcpStream = sock.into();
    s.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let search = encode_message(&LdapMessage {
        id: 1,
        op: search_op("", SearchScope::Base, &["*", "+"]),
        controls: Vec::new(),
    });
    let rule = "kauri_connections_closed_total{service=\"ldap\",rule=\"write_timeout\"}";
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut closed = false;
    while Instant::now() < deadline {
        // Keep asking; writes that time out (the server stopped reading) are tried again.
        for _ in 0..100 {
            if let Err(e) = s.write_all(&search) {
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) {
                    closed = true;
                }
                break;
            }
        }
        if closed || metric(&r, rule) >= 1 {
            break;
        }
    }
    assert!(
        metric(&r, rule) >= 1,
        "the connection that never reads was not closed"
    );
    let mut client = connect_from("127.0.0.1", addr(r.port));
    assert_eq!(bind_and_search(&mut client, BASE), ResultCode::SUCCESS);
}

/// Authenticated connections are never closed to make room and keep a reserve: when every
/// place is taken by them, a newcomer is refused at once rather than left hanging.
#[test]
fn authenticated_connections_keep_their_places() {
    let r = start(|c| {
        c.max_connections = 10;
        c.reserved_for_authenticated = 4;
        c.max_connections_per_address = 0;
        c.max_unauthenticated_per_address = 0;
    });
    let mut bound: Vec<TcpStream> = Vec::new();
    for _ in 0..10 {
        let mut s = connect_from("127.0.0.1", addr(r.port));
        assert_eq!(bind_and_search(&mut s, BASE), ResultCode::SUCCESS);
        bound.push(s);
    }
    let mut late = connect_from("127.0.0.1", addr(r.port));
    let got = read_until_closed(&mut late, Duration::from_secs(5));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    // Every bound connection still works.
    for (i, s) in bound.iter_mut().enumerate() {
        assert_eq!(search(s, 10 + i as i32, BASE), ResultCode::SUCCESS);
    }
    // With room again, unauthenticated connections take at most 6 places: the seventh
    // makes the longest idle of them give way.
    bound.truncate(2);
    wait_for_open(&r, 2);
    let mut idle: Vec<TcpStream> = (0..7)
        .map(|_| connect_from("127.0.0.1", addr(r.port)))
        .collect();
    let got = read_until_closed(&mut idle[0], Duration::from_secs(5));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    let mut last = idle.pop().unwrap();
    assert_eq!(bind_and_search(&mut last, BASE), ResultCode::SUCCESS);
}

/// A client sending a request a byte at a time is disconnected once the request has taken
/// longer than the limit; a connection that sends nothing at all is closed when its first
/// request is overdue; a TLS handshake that never finishes likewise. Meanwhile others are
/// served.
#[test]
fn slow_senders_are_disconnected() {
    let r = start(|c| {
        c.request_timeout_secs = 1;
        c.init_timeout_secs = 2;
    });
    // The start of a bind request, then one byte every 300 ms.
    let bind = encode_message(&LdapMessage {
        id: 1,
        op: ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: ADMIN.into(),
            auth: BindAuth::Simple(PW.as_bytes().to_vec()),
        }),
        controls: Vec::new(),
    });
    let mut slow = connect_from("127.0.0.1", addr(r.port));
    slow.set_write_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let started = Instant::now();
    let mut cut = false;
    for b in &bind {
        if slow.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    let got = read_until_closed(&mut slow, Duration::from_secs(5));
    assert!(
        cut || got.windows(NOTICE.len()).any(|w| w == NOTICE),
        "the slow sender was not disconnected: {got:?}"
    );
    assert!(
        metric(
            &r,
            "kauri_connections_closed_total{service=\"ldap\",rule=\"request_timeout\"}"
        ) >= 1
    );
    // Silent connections, plain and TLS, are closed when their first request is due.
    let mut silent = connect_from("127.0.0.1", addr(r.port));
    let mut silent_tls = connect_from("127.0.0.1", addr(r.tls_port));
    let got = read_until_closed(&mut silent, Duration::from_secs(10));
    assert!(got.windows(NOTICE.len()).any(|w| w == NOTICE), "{got:?}");
    let _ = read_until_closed(&mut silent_tls, Duration::from_secs(10));
    assert!(
        metric(
            &r,
            "kauri_connections_closed_total{service=\"ldap\",rule=\"init_timeout\"}"
        ) >= 2
    );
    let mut client = connect_from("127.0.0.2", addr(r.port));
    assert_eq!(bind_and_search(&mut client, BASE), ResultCode::SUCCESS);
}

/// A base DN of tens of thousands of RDNs is refused at once as too many parts (AD's
/// ERROR_DS_NAME_TOO_MANY_PARTS) or too long, and never holds up another connection.
#[test]
fn a_monstrous_dn_holds_up_nobody() {
    let r = start(|_| {});
    let deep = "ou=x,".repeat(40_000) + BASE;
    let deep_short = "ou=x,".repeat(300) + BASE;
    let mut attacker = connect_from("127.0.0.1", addr(r.port));
    let mut client = connect_from("127.0.0.2", addr(r.port));
    assert_eq!(bind_and_search(&mut attacker, BASE), ResultCode::SUCCESS);
    assert_eq!(bind_and_search(&mut client, BASE), ResultCode::SUCCESS);
    for (i, base) in [&deep, &deep_short].into_iter().enumerate() {
        assert_eq!(
            search(&mut attacker, 10 + i as i32, base),
            ResultCode::INVALID_DN_SYNTAX
        );
    }
    // Many of them pipelined, with the other client's searches in between.
    for i in 0..20 {
        send(
            &mut attacker,
            100 + i,
            search_op(&deep, SearchScope::Subtree, &[]),
        );
        assert_eq!(search(&mut client, 100 + i, BASE), ResultCode::SUCCESS);
    }
    for _ in 0..20 {
        match read_message(&mut attacker).map(|m| m.op) {
            Some(ProtocolOp::SearchResultDone(r)) => {
                assert_eq!(r.code, ResultCode::INVALID_DN_SYNTAX);
                assert!(r.message.starts_with("0000209"), "{}", r.message);
            }
            other => panic!("{other:?}"),
        }
    }
}

/// An entry of 50,000 values is refused with AD's adminLimitExceeded before it costs the
/// writer anything worth mentioning, and the other clients' writes go on; the largest entry
/// allowed (5,000 values) is written whole.
#[test]
fn an_oversized_entry_is_refused_and_writes_go_on() {
    use kauri_ldap_proto::{AddRequest, Attribute, Change, ModOp, ModifyRequest};
    let r = start(|c| c.max_pdu = 64 << 20);
    let mut big = connect_from("127.0.0.1", addr(r.port));
    let mut other = connect_from("127.0.0.2", addr(r.port));
    assert_eq!(bind_and_search(&mut big, BASE), ResultCode::SUCCESS);
    assert_eq!(bind_and_search(&mut other, BASE), ResultCode::SUCCESS);
    let add = |dn: &str, n: usize| {
        ProtocolOp::AddRequest(AddRequest {
            dn: dn.into(),
            attributes: vec![
                Attribute {
                    name: "objectClass".into(),
                    values: vec![b"top".to_vec(), b"organizationalUnit".to_vec()],
                },
                Attribute {
                    name: "description".into(),
                    values: (0..n)
                        .map(|i| format!("value number {i}").into_bytes())
                        .collect(),
                },
            ],
        })
    };
    send(&mut big, 5, add(&format!("ou=huge,{BASE}"), 50_000));
    send(
        &mut other,
        5,
        ProtocolOp::ModifyRequest(ModifyRequest {
            dn: BASE.into(),
            changes: vec![Change {
                op: ModOp::Replace,
                attribute: Attribute {
                    name: "description".into(),
                    values: vec![b"still writing".to_vec()],
                },
            }],
        }),
    );
    match read_message(&mut other).map(|m| m.op) {
        Some(ProtocolOp::ModifyResponse(r)) => assert_eq!(r.code, ResultCode::SUCCESS),
        other => panic!("{other:?}"),
    }
    match read_message(&mut big).map(|m| m.op) {
        Some(ProtocolOp::AddResponse(r)) => {
            assert_eq!(r.code, ResultCode::ADMIN_LIMIT_EXCEEDED, "{}", r.message);
            assert!(r.message.starts_with("00002024"), "{}", r.message);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        search(&mut big, 6, &format!("ou=huge,{BASE}")),
        ResultCode::NO_SUCH_OBJECT
    );
    // Within the limit (the object classes, the RDN's value and the USNs count too).
    send(&mut big, 7, add(&format!("ou=large,{BASE}"), 4_990));
    match read_message(&mut big).map(|m| m.op) {
        Some(ProtocolOp::AddResponse(r)) => {
            assert_eq!(r.code, ResultCode::SUCCESS, "{}", r.message)
        }
        other => panic!("{other:?}"),
    }
}
