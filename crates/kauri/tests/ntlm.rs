//! Kauri's own LDAP client binding with NTLM (GSS-SPNEGO) to a served domain: sealed and
//! signed connections, the identity they carry, AD's refusals, and passwords accepted
//! only where the connection is sealed.

mod common;

use common::{provision, serve, PASSWORD};
use kauri_ldap_client::proto::{ModOp, ResultCode, SearchScope};
use kauri_ldap_client::{change, search_request, ConnectOptions, Filter, LdapClient};

fn quoted(pw: &str) -> Vec<u8> {
    format!("\"{pw}\"")
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect()
}

#[test]
fn ntlm_binds_seal_and_sign_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let server = serve(&data);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let url = server.ldap();
        let connect = || async {
            LdapClient::connect(&url, &ConnectOptions::default())
                .await
                .unwrap()
        };
        for seal in [true, false] {
            let mut c = connect().await;
            let r = c
                .ntlm_bind("Administrator", "SAMDOM", PASSWORD, seal)
                .await
                .unwrap();
            assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
            assert_eq!(
                c.who_am_i().await.unwrap().authz_id,
                "u:SAMDOM\\Administrator"
            );
            let found = c
                .search(
                    search_request(
                        "CN=Users,DC=samdom,DC=example,DC=com",
                        SearchScope::OneLevel,
                        Filter::parse("(objectClass=user)").unwrap(),
                        &["sAMAccountName"],
                    ),
                    Vec::new(),
                )
                .await
                .unwrap();
            assert_eq!(found.entries.len(), 3);
            // A password set: accepted on the sealed connection, refused on the signed one.
            let set = c
                .modify(
                    "CN=Guest,CN=Users,DC=samdom,DC=example,DC=com",
                    vec![change(
                        ModOp::Replace,
                        "unicodePwd",
                        &[quoted("Gu3st.Passw0rd")],
                    )],
                    Vec::new(),
                )
                .await
                .unwrap();
            let want = if seal {
                ResultCode::SUCCESS
            } else {
                ResultCode::UNWILLING_TO_PERFORM
            };
            assert_eq!(set.code, want, "{set:?}");
        }
        // A wrong password is AD's SASL logon failure.
        let mut c = connect().await;
        let r = c
            .ntlm_bind("Administrator", "SAMDOM", "wrong", true)
            .await
            .unwrap();
        assert_eq!(r.code, ResultCode::INVALID_CREDENTIALS);
        assert!(
            r.message.contains("8009030C") && r.message.contains("data 52e"),
            "{r:?}"
        );
    });
}
