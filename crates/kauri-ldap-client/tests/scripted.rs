//! The client against a scripted server speaking Kauri's codec, for what the real server
//! does not do on demand: streams of intermediate responses, notices of disconnection,
//! silence, late and misplaced responses.

use std::future::Future;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kauri_ldap_client::proto::codec::LdapCodec;
use kauri_ldap_client::proto::controls::{notice_of_disconnection, WHO_AM_I};
use kauri_ldap_client::proto::{
    ExtendedResponse, IntermediateResponse, LdapMessage, LdapResult, MessageId, ProtocolOp,
    ResultCode, SearchScope,
};
use kauri_ldap_client::{search_request, ClientError, ConnectOptions, Filter, LdapClient};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::Framed;

const STREAM_OID: &str = "1.3.6.1.4.1.99999.1";

type Peer = Framed<TcpStream, LdapCodec>;

/// Serves one connection with `script`; returns the URL and the script's task.
async fn serve<F, Fut>(script: F) -> (String, tokio::task::JoinHandle<()>)
where
    F: FnOnce(Peer) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ldap://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        script(Framed::new(stream, LdapCodec::default())).await;
    });
    (url, task)
}

async fn next(peer: &mut Peer) -> LdapMessage {
    peer.next().await.unwrap().unwrap().unwrap()
}

async fn reply(peer: &mut Peer, id: MessageId, op: ProtocolOp) {
    peer.send(LdapMessage {
        id,
        op,
        controls: Vec::new(),
    })
    .await
    .unwrap();
}

fn intermediate(value: &[u8]) -> ProtocolOp {
    ProtocolOp::IntermediateResponse(IntermediateResponse {
        name: Some(STREAM_OID.into()),
        value: Some(value.to_vec()),
    })
}

fn extended_done(value: Option<&[u8]>) -> ProtocolOp {
    ProtocolOp::ExtendedResponse(ExtendedResponse {
        result: LdapResult::success(),
        name: None,
        value: value.map(<[u8]>::to_vec),
    })
}

fn opts(timeout: Option<Duration>) -> ConnectOptions {
    ConnectOptions::default()
        .with_connect_timeout(Some(Duration::from_secs(5)))
        .with_timeout(timeout)
}

#[tokio::test]
async fn extended_stream_hands_over_every_intermediate_response() {
    let (url, server) = serve(|mut p| async move {
        // First: three pieces, then the end.
        let m = next(&mut p).await;
        let ProtocolOp::ExtendedRequest(r) = &m.op else {
            panic!("{m:?}")
        };
        assert_eq!(r.name, STREAM_OID);
        assert_eq!(r.value.as_deref(), Some(&b"go"[..]));
        for piece in [b"a", b"b", b"c"] {
            reply(&mut p, m.id, intermediate(piece)).await;
        }
        reply(&mut p, m.id, extended_done(Some(b"key"))).await;
        // Second: the client gives up after the second piece and abandons.
        let m = next(&mut p).await;
        for piece in [b"1", b"2", b"3", b"4", b"5"] {
            reply(&mut p, m.id, intermediate(piece)).await;
        }
        reply(&mut p, m.id, extended_done(None)).await;
        let a = next(&mut p).await;
        assert_eq!(a.op, ProtocolOp::AbandonRequest(m.id));
        // Third: who am I, answered after the abandoned stream's leftovers.
        let w = next(&mut p).await;
        let ProtocolOp::ExtendedRequest(r) = &w.op else {
            panic!("{w:?}")
        };
        assert_eq!(r.name, WHO_AM_I);
        reply(&mut p, w.id, extended_done(Some(b"dn:cn=someone"))).await;
        assert!(matches!(next(&mut p).await.op, ProtocolOp::UnbindRequest));
    })
    .await;

    let mut c = LdapClient::connect(&url, &opts(Some(Duration::from_secs(5))))
        .await
        .unwrap();
    let mut pieces = Vec::new();
    let done = c
        .extended_stream(STREAM_OID, Some(b"go".to_vec()), Vec::new(), |r| {
            assert_eq!(r.name.as_deref(), Some(STREAM_OID));
            pieces.extend(r.value.unwrap_or_default());
            Ok::<_, ClientError>(())
        })
        .await
        .unwrap();
    assert_eq!(pieces, b"abc");
    assert_eq!(done.value.as_deref(), Some(&b"key"[..]));

    let mut seen = 0;
    let e = c
        .extended_stream(STREAM_OID, None, Vec::new(), |_| {
            seen += 1;
            if seen == 2 {
                Err(ClientError::Invalid("stop".into()))
            } else {
                Ok(())
            }
        })
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Invalid(_)), "{e}");
    assert_eq!(seen, 2);
    let who = c.who_am_i().await.unwrap();
    assert_eq!(who.authz_id, "dn:cn=someone");
    c.unbind().await.unwrap();
    server.await.unwrap();
}

#[tokio::test]
async fn a_notice_of_disconnection_is_an_error_that_closes() {
    let (url, server) = serve(|mut p| async move {
        let _ = next(&mut p).await;
        p.send(notice_of_disconnection(
            ResultCode::UNAVAILABLE,
            "the server is shutting down",
        ))
        .await
        .unwrap();
    })
    .await;
    let mut c = LdapClient::connect(&url, &opts(None)).await.unwrap();
    let e = c.simple_bind("cn=x", "pw").await.unwrap_err();
    match &e {
        ClientError::Unsolicited { oid, code, message } => {
            assert_eq!(oid.as_deref(), Some("1.3.6.1.4.1.1466.20036"));
            assert_eq!(*code, ResultCode::UNAVAILABLE);
            assert_eq!(message, "the server is shutting down");
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("the server is shutting down"), "{e}");
    assert!(c.is_closed());
    assert!(matches!(c.who_am_i().await, Err(ClientError::Closed)));
    server.await.unwrap();
}

#[tokio::test]
async fn a_silent_server_times_out_and_late_answers_are_dropped() {
    let (url, server) = serve(|mut p| async move {
        let search = next(&mut p).await;
        assert!(matches!(search.op, ProtocolOp::SearchRequest(_)));
        // Silence, until the client gives up and abandons.
        let a = next(&mut p).await;
        assert_eq!(a.op, ProtocolOp::AbandonRequest(search.id));
        let del = next(&mut p).await;
        // The late answer first, then the delete's.
        reply(
            &mut p,
            search.id,
            ProtocolOp::SearchResultDone(LdapResult::success()),
        )
        .await;
        reply(
            &mut p,
            del.id,
            ProtocolOp::DelResponse(LdapResult::new(ResultCode::NO_SUCH_OBJECT, "")),
        )
        .await;
        // A response of the wrong kind.
        let add = next(&mut p).await;
        reply(
            &mut p,
            add.id,
            ProtocolOp::DelResponse(LdapResult::success()),
        )
        .await;
        // Gone in the middle of a search.
        let s = next(&mut p).await;
        reply(
            &mut p,
            s.id,
            ProtocolOp::SearchResultReference(vec!["ldap://elsewhere/".into()]),
        )
        .await;
    })
    .await;
    let mut c = LdapClient::connect(&url, &opts(Some(Duration::from_millis(300))))
        .await
        .unwrap();
    let req = search_request(
        "dc=x",
        SearchScope::Base,
        Filter::present("objectClass"),
        &[],
    );
    let e = c.search(req.clone(), Vec::new()).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout { .. }), "{e}");
    assert!(!c.is_closed());
    c.set_timeout(Some(Duration::from_secs(10)));
    let r = c.delete("cn=gone,dc=x", Vec::new()).await.unwrap();
    assert_eq!(r.code, ResultCode::NO_SUCH_OBJECT);
    let e = c
        .add("cn=y,dc=x", Vec::new(), Vec::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Protocol(_)), "{e}");
    c.set_timeout(None);
    let e = c.search(req, Vec::new()).await.unwrap_err();
    assert!(matches!(e, ClientError::Closed), "{e}");
    assert!(c.is_closed());
    server.await.unwrap();
}
