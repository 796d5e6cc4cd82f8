//! `LDAPTLS_CACERT` names the CA file when the options give none, as for OpenLDAP's tools.
//! Alone in its own test binary, since it sets the process's environment.

mod common;

use std::time::Duration;

use common::{client_rt, start, ADMIN, PW};
use kauri_ldap_client::{CheckResult, ClientError, ConnectOptions, LdapClient, TlsOptions};

#[test]
fn the_environment_names_the_ca_when_the_options_do_not() {
    // Set before any thread of this test exists; the file is put there once the server
    // has made its authority.
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::env::set_var("LDAPTLS_CACERT", &ca);
    let s = start(|_| {});
    let other = start(|_| {});
    std::fs::copy(s.ca(), &ca).unwrap();
    let opts = ConnectOptions::default().with_connect_timeout(Some(Duration::from_secs(5)));
    client_rt().block_on(async {
        let mut c = LdapClient::connect(&s.tls_uri(), &opts).await.unwrap();
        c.simple_bind(ADMIN, PW)
            .await
            .unwrap()
            .check("bind")
            .unwrap();
        c.unbind().await.unwrap();
        // A CA file in the options wins over the environment.
        let theirs = opts
            .clone()
            .with_tls(TlsOptions::default().with_ca_file(other.ca()));
        let e = LdapClient::connect(&s.tls_uri(), &theirs)
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Tls(_)), "{e}");
    });
}
