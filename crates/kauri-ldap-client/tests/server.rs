//! The client against the real Kauri server: every transport, TLS trust, paging, writes.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{client_rt, start, ADMIN, BASE, PEOPLE, PW, USER_PW};
use kauri_ldap_client::proto::controls::{ControlValue, PagedResults};
use kauri_ldap_client::proto::{ModOp, ResultCode, SearchScope};
use kauri_ldap_client::{
    change, search_request, CheckResult, ClientError, ConnectOptions, Filter, LdapClient,
    TlsOptions,
};

fn opts() -> ConnectOptions {
    ConnectOptions::default()
        .with_connect_timeout(Some(Duration::from_secs(5)))
        .with_timeout(Some(Duration::from_secs(10)))
}

fn with_ca(ca: std::path::PathBuf) -> ConnectOptions {
    opts().with_tls(TlsOptions::default().with_ca_file(ca))
}

fn people_search(filter: &str, attributes: &[&str]) -> kauri_ldap_client::proto::SearchRequest {
    search_request(
        &format!("ou=People,{BASE}"),
        SearchScope::Subtree,
        Filter::parse(filter).unwrap(),
        attributes,
    )
}

async fn admin_bind(c: &mut LdapClient) {
    c.simple_bind(ADMIN, PW)
        .await
        .unwrap()
        .check("admin bind")
        .unwrap();
}

#[test]
fn plain_bind_search_and_who_am_i() {
    let s = start(|_| {});
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.uri(), &opts()).await.unwrap();
        assert!(!c.is_encrypted());
        // A wrong password is a result, not an error.
        let r = c.simple_bind(ADMIN, "nope").await.unwrap();
        assert_eq!(r.code, ResultCode::INVALID_CREDENTIALS);
        let e = r.check("bind").unwrap_err();
        assert!(
            matches!(&e, ClientError::Result { code, .. } if *code == ResultCode::INVALID_CREDENTIALS),
            "{e}"
        );
        admin_bind(&mut c).await;
        let who = c.who_am_i().await.unwrap().check("who am I").unwrap();
        assert_eq!(who.authz_id, format!("dn:{ADMIN}"));

        let out = c
            .search(people_search("(uid=user3)", &["uid"]), Vec::new())
            .await
            .unwrap()
            .check("search")
            .unwrap();
        assert_eq!(out.entries.len(), 1);
        let e = &out.entries[0];
        assert_eq!(e.dn, format!("cn=User 3,ou=People,{BASE}"));
        assert_eq!(e.attributes[0].name, "uid");
        assert_eq!(e.attributes[0].values, vec![b"user3".to_vec()]);

        let all = c
            .search(people_search("(objectClass=person)", &["1.1"]), Vec::new())
            .await
            .unwrap();
        assert_eq!(all.entries.len(), PEOPLE);

        // A user binds with the password in userPassword.
        let user = format!("cn=User 4,ou=People,{BASE}");
        c.simple_bind(&user, USER_PW)
            .await
            .unwrap()
            .check("user bind")
            .unwrap();
        assert_eq!(c.who_am_i().await.unwrap().authz_id, format!("dn:{user}"));
        c.unbind().await.unwrap();
    });
}

#[test]
fn ldaps_with_the_servers_ca_by_address_and_by_name() {
    let s = start(|_| {});
    client_rt().block_on(async {
        for url in [s.tls_uri(), format!("ldaps://localhost:{}", s.tls_port)] {
            let mut c = LdapClient::connect(&url, &with_ca(s.ca()))
                .await
                .unwrap_or_else(|e| panic!("{url}: {e}"));
            assert!(c.is_encrypted());
            admin_bind(&mut c).await;
            assert_eq!(c.who_am_i().await.unwrap().authz_id, format!("dn:{ADMIN}"));
            c.unbind().await.unwrap();
        }
    });
}

#[test]
fn start_tls_then_bind_and_change_a_password() {
    let s = start(|c| c.require_strong_auth = true);
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.uri(), &with_ca(s.ca()))
            .await
            .unwrap();
        // The server wants TLS before a password.
        let r = c.simple_bind(ADMIN, PW).await.unwrap();
        assert_eq!(r.code, ResultCode::STRONGER_AUTH_REQUIRED);
        c.start_tls().await.unwrap();
        assert!(c.is_encrypted());
        assert!(matches!(c.start_tls().await, Err(ClientError::Invalid(_))));
        admin_bind(&mut c).await;
        let user = format!("cn=User 5,ou=People,{BASE}");
        c.password_modify(Some(&user), None, Some(b"reset-pw"))
            .await
            .unwrap()
            .check("password reset")
            .unwrap();
        let generated = c
            .password_modify(Some(&user), None, None)
            .await
            .unwrap()
            .check("password generation")
            .unwrap()
            .generated
            .expect("a generated password");
        assert!(!generated.is_empty());
        let r = c.simple_bind(&user, "reset-pw").await.unwrap();
        assert_eq!(r.code, ResultCode::INVALID_CREDENTIALS);
        c.simple_bind(&user, &generated)
            .await
            .unwrap()
            .check("bind with the generated password")
            .unwrap();
        c.unbind().await.unwrap();
    });
}

#[test]
fn ldapi_with_sasl_external() {
    let socket_dir = tempfile::tempdir().unwrap();
    let socket = socket_dir.path().join("ldapi");
    let sock = socket.clone();
    let s = start(move |c| c.listen_ldapi = sock);
    let url = format!(
        "ldapi://{}",
        socket.display().to_string().replace('/', "%2F")
    );
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&url, &opts()).await.unwrap();
        assert!(c.is_encrypted());
        assert!(matches!(c.start_tls().await, Err(ClientError::Invalid(_))));
        c.sasl_external().await.unwrap().check("EXTERNAL").unwrap();
        let who = c.who_am_i().await.unwrap().authz_id;
        assert!(who.contains("cn=peercred,cn=external,cn=auth"), "{who}");
        // This process is the server's own user, so it administers.
        c.add(
            &format!("cn=Local,{BASE}"),
            vec![
                ("objectClass".into(), vec![b"person".to_vec()]),
                ("cn".into(), vec![b"Local".to_vec()]),
            ],
            Vec::new(),
        )
        .await
        .unwrap()
        .check("add over ldapi")
        .unwrap();
        c.unbind().await.unwrap();
        // EXTERNAL means nothing over TCP.
        let mut tcp = LdapClient::connect(&s.uri(), &opts()).await.unwrap();
        let r = tcp.sasl_external().await.unwrap();
        assert_ne!(r.code, ResultCode::SUCCESS);
    });
}

#[test]
fn a_foreign_ca_is_refused_and_insecure_accepts_anything() {
    let s = start(|_| {});
    let other = start(|_| {});
    client_rt().block_on(async {
        let wrong = with_ca(other.ca());
        let e = LdapClient::connect(&s.tls_uri(), &wrong).await.unwrap_err();
        assert!(matches!(e, ClientError::Tls(_)), "{e}");
        assert!(e.to_string().contains("handshake"), "{e}");
        // StartTLS: the refused handshake leaves the connection closed.
        let mut c = LdapClient::connect(&s.uri(), &wrong).await.unwrap();
        let e = c.start_tls().await.unwrap_err();
        assert!(matches!(e, ClientError::Tls(_)), "{e}");
        assert!(c.is_closed());
        assert!(matches!(
            c.simple_bind(ADMIN, PW).await,
            Err(ClientError::Closed)
        ));
        // A CA file that is not one.
        let junk = s.data.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = LdapClient::connect(&s.tls_uri(), &with_ca(junk))
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Tls(_)), "{e}");

        let insecure = opts().with_tls(TlsOptions::default().with_insecure(true));
        let mut c = LdapClient::connect(&s.tls_uri(), &insecure).await.unwrap();
        assert!(c.is_encrypted());
        admin_bind(&mut c).await;
        c.unbind().await.unwrap();
        let mut c = LdapClient::connect(&s.uri(), &insecure).await.unwrap();
        c.start_tls().await.unwrap();
        admin_bind(&mut c).await;
        c.unbind().await.unwrap();
    });
}

#[test]
fn paged_search_returns_every_entry_once() {
    const EXTRA: usize = 120;
    // Without paging, the server's size limit stops the search.
    let s = start(|c| c.size_limit = 100);
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.uri(), &opts()).await.unwrap();
        admin_bind(&mut c).await;
        c.add(
            &format!("ou=Paged,{BASE}"),
            vec![("objectClass".into(), vec![b"organizationalUnit".to_vec()])],
            Vec::new(),
        )
        .await
        .unwrap()
        .check("adding the OU")
        .unwrap();
        for i in 0..EXTRA {
            let cn = format!("paged{i:03}");
            c.add(
                &format!("cn={cn},ou=Paged,{BASE}"),
                vec![
                    ("objectClass".into(), vec![b"person".to_vec()]),
                    ("cn".into(), vec![cn.into_bytes()]),
                ],
                Vec::new(),
            )
            .await
            .unwrap()
            .check("adding an entry")
            .unwrap();
        }
        let req = search_request(
            &format!("ou=Paged,{BASE}"),
            SearchScope::OneLevel,
            Filter::present("objectClass"),
            &["cn"],
        );
        let r = c.search(req.clone(), Vec::new()).await.unwrap();
        assert_eq!(r.result.code, ResultCode::SIZE_LIMIT_EXCEEDED);

        let mut seen = Vec::new();
        let done = c
            .search_paged(req.clone(), Vec::new(), 50, |e| {
                seen.push(e.dn);
                Ok::<_, ClientError>(())
            })
            .await
            .unwrap()
            .check("paged search")
            .unwrap();
        assert_eq!(seen.len(), EXTRA);
        let unique: HashSet<_> = seen.iter().collect();
        assert_eq!(unique.len(), EXTRA);
        let last = done
            .controls
            .iter()
            .find(|c| c.oid == PagedResults::OID)
            .map(|c| PagedResults::from_control(c).unwrap())
            .expect("the last page's control");
        assert!(last.cookie.is_empty());

        // A failing callback stops the search; the connection goes on cleanly.
        let mut taken = 0;
        let e = c
            .search_paged(req.clone(), Vec::new(), 50, |_| {
                taken += 1;
                if taken == 60 {
                    Err(ClientError::Invalid("enough".into()))
                } else {
                    Ok(())
                }
            })
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Invalid(_)), "{e}");
        assert_eq!(taken, 60);
        let mut again = 0;
        c.search_paged(req, Vec::new(), 7, |_| {
            again += 1;
            Ok::<_, ClientError>(())
        })
        .await
        .unwrap()
        .check("paged search again")
        .unwrap();
        assert_eq!(again, EXTRA);
        assert!(matches!(
            c.search_paged(
                people_search("(objectClass=*)", &[]),
                Vec::new(),
                0,
                |_| Ok::<_, ClientError>(())
            )
            .await,
            Err(ClientError::Invalid(_))
        ));
        c.unbind().await.unwrap();
    });
}

#[test]
fn add_modify_rename_delete_with_result_codes() {
    let s = start(|_| {});
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.uri(), &opts()).await.unwrap();
        admin_bind(&mut c).await;
        let dn = format!("cn=New,ou=People,{BASE}");
        let attrs = vec![
            ("objectClass".to_string(), vec![b"person".to_vec()]),
            ("cn".to_string(), vec![b"New".to_vec()]),
            ("uid".to_string(), vec![b"new".to_vec()]),
        ];
        let r = c.add(&dn, attrs.clone(), Vec::new()).await.unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
        let r = c.add(&dn, attrs, Vec::new()).await.unwrap();
        assert_eq!(r.code, ResultCode::ENTRY_ALREADY_EXISTS);
        let e = r.check("adding New").unwrap_err();
        assert!(e.to_string().contains("entryAlreadyExists (68)"), "{e}");

        let r = c
            .modify(
                &dn,
                vec![
                    change(ModOp::Add, "mail", &["new@example.com"]),
                    change(ModOp::Replace, "description", &["fresh"]),
                ],
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
        let r = c
            .modify(
                &dn,
                vec![change(ModOp::Delete, "mail", &["other@example.com"])],
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::NO_SUCH_ATTRIBUTE);
        assert!(c
            .compare(&dn, "mail", "NEW@example.com", Vec::new())
            .await
            .unwrap());
        assert!(!c
            .compare(&dn, "description", "stale", Vec::new())
            .await
            .unwrap());
        let e = c
            .compare(&format!("cn=Nobody,{BASE}"), "cn", "x", Vec::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ClientError::Result { code, .. } if *code == ResultCode::NO_SUCH_OBJECT),
            "{e}"
        );

        // Rename, then move.
        let r = c
            .modify_dn(&dn, "cn=Newer", true, None, Vec::new())
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
        let r = c
            .modify_dn(
                &format!("cn=Newer,ou=People,{BASE}"),
                "cn=Newer",
                true,
                Some(BASE),
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
        let moved = format!("cn=Newer,{BASE}");
        let mut base = search_request(
            &moved,
            SearchScope::Base,
            Filter::present("objectClass"),
            &["cn", "description"],
        );
        let out = c.search(base.clone(), Vec::new()).await.unwrap();
        assert_eq!(out.entries.len(), 1);
        let cn = out.entries[0]
            .attributes
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case("cn"))
            .unwrap();
        assert_eq!(cn.values, vec![b"Newer".to_vec()]);
        base.base = dn.clone();
        let gone = c.search(base, Vec::new()).await.unwrap();
        assert_eq!(gone.result.code, ResultCode::NO_SUCH_OBJECT);
        assert!(gone.entries.is_empty());

        // Delete: a non-leaf is refused; the entry goes, then is not there.
        let r = c
            .delete(&format!("ou=People,{BASE}"), Vec::new())
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::NOT_ALLOWED_ON_NON_LEAF);
        let r = c.delete(&moved, Vec::new()).await.unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
        let r = c.delete(&moved, Vec::new()).await.unwrap();
        assert_eq!(r.code, ResultCode::NO_SUCH_OBJECT);
        c.unbind().await.unwrap();
    });
}

#[test]
fn pipelined_requests_get_their_own_responses() {
    let s = start(|_| {});
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.uri(), &opts()).await.unwrap();
        admin_bind(&mut c).await;
        use kauri_ldap_client::proto::ProtocolOp;
        let ids: Vec<_> = {
            let mut ids = Vec::new();
            for i in [1, 7, 9] {
                let op =
                    ProtocolOp::SearchRequest(people_search(&format!("(uid=user{i})"), &["uid"]));
                ids.push((i, c.send(op, Vec::new()).await.unwrap()));
            }
            ids
        };
        // Read them in reverse order: the others' responses wait in the client.
        for (i, id) in ids.into_iter().rev() {
            let mut entries = Vec::new();
            loop {
                let msg = c.recv(id).await.unwrap();
                assert_eq!(msg.id, id);
                match msg.op {
                    ProtocolOp::SearchResultEntry(e) => entries.push(e.dn),
                    ProtocolOp::SearchResultDone(r) => {
                        assert_eq!(r.code, ResultCode::SUCCESS);
                        break;
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(entries, vec![format!("cn=User {i},ou=People,{BASE}")]);
            assert!(matches!(c.recv(id).await, Err(ClientError::Invalid(_))));
        }
        // call() refuses what has more than one response.
        let op = ProtocolOp::SearchRequest(people_search("(uid=user1)", &[]));
        assert!(matches!(
            c.call(op, Vec::new()).await,
            Err(ClientError::Invalid(_))
        ));
        let msg = c
            .call(
                ProtocolOp::DelRequest(format!("cn=Nobody,{BASE}")),
                Vec::new(),
            )
            .await
            .unwrap();
        let r = kauri_ldap_client::response_result(&msg.op).unwrap();
        assert_eq!(r.code, ResultCode::NO_SUCH_OBJECT);
        c.unbind().await.unwrap();
    });
}

#[test]
fn bad_urls_and_unreachable_servers_are_errors() {
    client_rt().block_on(async {
        for bad in [
            "http://127.0.0.1",
            "127.0.0.1:389",
            "ldap://host/dc=x",
            "ldapi://",
        ] {
            let e = LdapClient::connect(bad, &opts()).await.unwrap_err();
            assert!(matches!(e, ClientError::Url(_)), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
        // A port nobody listens on.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let e = LdapClient::connect(&format!("ldap://127.0.0.1:{port}"), &opts())
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ClientError::Connect { addr, .. } if *addr == format!("127.0.0.1:{port}")),
            "{e}"
        );
        let e = LdapClient::connect("ldapi://%2Fnonexistent%2Fkauri.sock", &opts())
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Connect { .. }), "{e}");
    });
}
