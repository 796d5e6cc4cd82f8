//! Writes the seed corpus of every fuzz target from Kauri's own encoders, clients and a
//! freshly provisioned domain: `cargo run --example seeds -- corpus` (from `fuzz/`). The
//! seeds are kept in the repository; run this again when a format changes, then
//! minimize (`scripts/fuzz --cmin`).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kauri::backup::archive::{ArchiveWriter, DumpInfo, Kind, Manifest};
use kauri::domain::DomainFile;
use kauri_auth::crypto::nt_hash;
use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::{ad_type, name_type, padata};
use kauri_auth::krb::msg::flags::{kdc_options, KerberosFlags};
use kauri_auth::krb::msg::{
    AdPolicyInfo, ApRep, ApReq, Authenticator, AuthorizationData, AuthorizationDataEntry,
    ChangePasswdData, EncKrbPrivPart, EncTicketPart, EncryptedData, GssChecksum, GssKrb5Token,
    GssMech, KdcKind, KdcReq, KdcReqBody, KerbPaPacRequest, KerberosTime, KpasswdReply,
    KpasswdRequest, KpasswdResult, KrbError, KrbPriv, PaData, PrincipalName,
};
use kauri_auth::ntlm::{flags, AvPairs, NtlmClient, NtlmServer, NtlmSession};
use kauri_auth::spnego::{SpnegoClient, SpnegoServer, Step};
use kauri_auth::SecurityLayer;
use kauri_db::db::{TABLES, T_ENTRIES};
use kauri_db::filter::{ExtensibleMatch, Filter, SubstringFilter};
use kauri_db::{Db, Syntax};
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_fuzz::{join, names, settings, CHALLENGE, PASSWORD};
use kauri_kv::dump::write_dump;
use kauri_kv::mem::MemBackend;
use kauri_kv::{Backend, Direction, ReadTxn, WriteTxn};
use kauri_ldap_proto::controls::{self, *};
use kauri_ldap_proto::encode::{encode_filter, encode_message};
use kauri_ldap_proto::*;

struct Corpus {
    root: PathBuf,
    seeds: BTreeMap<String, Vec<Vec<u8>>>,
}

impl Corpus {
    fn add(&mut self, target: &str, seed: impl Into<Vec<u8>>) {
        self.seeds
            .entry(target.into())
            .or_default()
            .push(seed.into());
    }

    fn write(&self) -> std::io::Result<()> {
        for (target, seeds) in &self.seeds {
            let dir = self.root.join(target);
            std::fs::create_dir_all(&dir)?;
            for (i, s) in seeds.iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i:03}")), s)?;
            }
            println!("{target}: {} seeds", seeds.len());
        }
        Ok(())
    }
}

fn msg(id: i32, op: ProtocolOp, controls: Vec<Control>) -> LdapMessage {
    LdapMessage { id, op, controls }
}

fn attr(name: &str, values: &[&[u8]]) -> Attribute {
    Attribute {
        name: name.into(),
        values: values.iter().map(|v| v.to_vec()).collect(),
    }
}

const BASE: &str = "DC=samdom,DC=example,DC=com";

fn filters() -> Vec<Filter> {
    let sid = Sid::parse("S-1-5-21-1004336348-1177238915-682003330-512")
        .map(|s| s.to_bytes())
        .unwrap_or_default();
    let mut out: Vec<Filter> = [
        "(objectClass=*)",
        "(&(objectClass=user)(sAMAccountName=kiri))",
        "(|(cn=Kiri*)(sn=*ewi)(displayName=*a*b*c*))",
        "(!(userAccountControl:1.2.840.113556.1.4.803:=2))",
        "(memberOf:1.2.840.113556.1.4.1941:=CN=Demo Team,OU=Demo,DC=samdom,DC=example,DC=com)",
        "(&(objectCategory=person)(objectClass=user)(!(cn=krbtgt))(whenChanged>=20240101000000.0Z))",
        "(uSNChanged<=12345)",
        "(cn~=kiri)",
        "(cn:dn:2.5.13.5:=Users)",
        "(:caseExactMatch:=x)",
        "(cn=\\2a\\28\\29\\5c\\00)",
        "(description=caf\\c3\\a9)",
        "(&)",
        "(|)",
        "(&(|(a=1)(b=2))(!(&(c=3)(|(d=4)(e=5)))))",
        "(cn;lang-en=x)",
        "(2.5.4.3=x)",
        "cn=bare",
        "(&(DnsDomain=samdom.example.com)(Host=WS1)(NtVer=\\06\\00\\00\\00))",
    ]
    .iter()
    .filter_map(|s| Filter::parse(s).ok())
    .collect();
    out.push(Filter::eq("objectSid", &sid));
    out.push(Filter::Substrings(SubstringFilter {
        attr: "cn".into(),
        initial: Some(b"a".to_vec()),
        any: vec![b"b".to_vec(), vec![0xff, 0]],
        final_: Some(b"z".to_vec()),
    }));
    out.push(Filter::Extensible(ExtensibleMatch {
        rule: Some("1.2.840.113556.1.4.804".into()),
        attr: Some("groupType".into()),
        value: b"2147483648".to_vec(),
        dn_attributes: true,
    }));
    let mut deep = Filter::present("objectClass");
    for i in 0..40 {
        deep = if i % 2 == 0 {
            Filter::not(deep)
        } else {
            Filter::and(vec![deep, Filter::eq("cn", "x")])
        };
    }
    out.push(deep);
    out
}

fn ctl<T: ControlValue>(v: &T, critical: bool) -> Control {
    v.to_control(critical)
}

fn bare(oid: &str, critical: bool) -> Control {
    Control {
        oid: oid.into(),
        critical,
        value: None,
    }
}

fn search(id: i32, base: &str, scope: SearchScope, filter: Filter, attrs: &[&str]) -> ProtocolOp {
    let _ = id;
    ProtocolOp::SearchRequest(SearchRequest {
        base: base.into(),
        scope,
        deref: DerefAliases::Never,
        size_limit: 0,
        time_limit: 0,
        types_only: false,
        filter,
        attributes: attrs.iter().map(|a| a.to_string()).collect(),
    })
}

fn messages() -> Vec<LdapMessage> {
    let users = format!("CN=Users,{BASE}");
    let kiri = format!("CN=Kiri,OU=Demo,{BASE}");
    let mut spnego = SpnegoClient::new("alice", "SAMDOM", PASSWORD, true);
    let mut ntlm = NtlmClient::new("alice", "SAMDOM", PASSWORD, true);
    let mut out = vec![
        msg(1, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Simple(Vec::new()),
        }), vec![]),
        msg(1, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: "SAMDOM\\Administrator".into(),
            auth: BindAuth::Simple(b"Adm1n.Passw0rd".to_vec()),
        }), vec![]),
        msg(2, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Sasl {
                mechanism: "GSS-SPNEGO".into(),
                credentials: Some(spnego.initial()),
            },
        }), vec![]),
        msg(2, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Sasl {
                mechanism: "EXTERNAL".into(),
                credentials: None,
            },
        }), vec![]),
        msg(3, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::SicilyDiscovery,
        }), vec![]),
        msg(3, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::SicilyNegotiate(ntlm.negotiate()),
        }), vec![]),
        msg(3, ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::SicilyResponse(b"NTLMSSP\0\x03\0\0\0".to_vec()),
        }), vec![]),
        msg(1, ProtocolOp::BindResponse(BindResponse {
            result: LdapResult::new(ResultCode::SASL_BIND_IN_PROGRESS, ""),
            server_sasl_creds: Some(vec![0xa1, 0x03, 0x30, 0x01, 0x00]),
            sicily: None,
        }), vec![]),
        msg(1, ProtocolOp::BindResponse(BindResponse {
            result: LdapResult::new(
                ResultCode::INVALID_CREDENTIALS,
                "80090308: LdapErr: DSID-0C09041C, comment: AcceptSecurityContext error, data 52e, v4563",
            ),
            server_sasl_creds: None,
            sicily: None,
        }), vec![]),
        msg(5, ProtocolOp::UnbindRequest, vec![]),
        msg(9, ProtocolOp::AbandonRequest(7), vec![]),
        msg(4, ProtocolOp::DelRequest(kiri.clone()), vec![bare(controls::TREE_DELETE, true)]),
        msg(4, ProtocolOp::DelResponse(LdapResult {
            code: ResultCode::NO_SUCH_OBJECT,
            matched_dn: BASE.into(),
            message: "0000208D: NameErr: DSID-03100241, problem 2001 (NO_OBJECT)".into(),
            referral: vec!["ldap://dc2.samdom.example.com/DC=samdom,DC=example,DC=com".into()],
        }), vec![]),
        msg(6, ProtocolOp::AddRequest(AddRequest {
            dn: kiri.clone(),
            attributes: vec![
                attr("objectClass", &[b"top", b"person", b"organizationalPerson", b"user"]),
                attr("sAMAccountName", &[b"kiri"]),
                attr("userAccountControl", &[b"512"]),
                attr("unicodePwd", &["\"Koru.Passw0rd!\"".encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>().as_slice()]),
            ],
        }), vec![]),
        msg(6, ProtocolOp::AddResponse(LdapResult::success()), vec![]),
        msg(7, ProtocolOp::ModifyRequest(ModifyRequest {
            dn: kiri.clone(),
            changes: vec![
                Change { op: ModOp::Add, attribute: attr("member", &[kiri.as_bytes()]) },
                Change { op: ModOp::Delete, attribute: attr("description", &[]) },
                Change { op: ModOp::Replace, attribute: attr("mail", &[b"kiri@samdom.example.com"]) },
                Change { op: ModOp::Increment, attribute: attr("uidNumber", &[b"1"]) },
            ],
        }), vec![bare(controls::PERMISSIVE_MODIFY, false), ctl(&SdFlags { flags: 4 }, true)]),
        msg(7, ProtocolOp::ModifyResponse(LdapResult::success()), vec![]),
        msg(8, ProtocolOp::ModifyDnRequest(ModifyDnRequest {
            dn: kiri.clone(),
            new_rdn: "CN=Kiri Rewi".into(),
            delete_old_rdn: true,
            new_superior: Some(users.clone()),
        }), vec![]),
        msg(8, ProtocolOp::ModifyDnResponse(LdapResult::success()), vec![]),
        msg(10, ProtocolOp::CompareRequest(CompareRequest {
            dn: kiri.clone(),
            attribute: "objectClass".into(),
            value: b"user".to_vec(),
        }), vec![]),
        msg(10, ProtocolOp::CompareResponse(LdapResult::new(ResultCode::COMPARE_TRUE, "")), vec![]),
        msg(11, ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: controls::START_TLS.into(),
            value: None,
        }), vec![]),
        msg(11, ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: controls::WHO_AM_I.into(),
            value: None,
        }), vec![]),
        msg(12, ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: controls::PASSWORD_MODIFY.into(),
            value: Some(PasswordModifyRequest {
                user_identity: Some(kiri.as_bytes().to_vec()),
                old_password: Some(b"old".to_vec()),
                new_password: Some(b"Koru.Passw0rd!".to_vec()),
            }.encode()),
        }), vec![]),
        msg(12, ProtocolOp::ExtendedResponse(ExtendedResponse {
            result: LdapResult::success(),
            name: None,
            value: PasswordModifyResponse { gen_passwd: Some(b"Gen3rated!".to_vec()) }.encode(),
        }), vec![]),
        msg(13, ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: controls::KAURI_BACKUP.into(),
            value: Some(vec![1]),
        }), vec![]),
        msg(13, ProtocolOp::IntermediateResponse(IntermediateResponse {
            name: Some(controls::KAURI_BACKUP.into()),
            value: Some(4096u64.to_be_bytes().to_vec()),
        }), vec![]),
        controls::notice_of_disconnection(ResultCode::PROTOCOL_ERROR, "bad framing"),
        msg(14, ProtocolOp::SearchResultEntry(SearchResultEntry {
            dn: kiri.clone(),
            attributes: vec![
                attr("objectSid", &[&[1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 2, 3, 4]]),
                attr("member;range=0-1499", &[kiri.as_bytes(), users.as_bytes()]),
                attr("cn", &[b"Kiri"]),
            ],
        }), vec![]),
        msg(14, ProtocolOp::SearchResultReference(vec![
            "ldap://samdom.example.com/CN=Configuration,DC=samdom,DC=example,DC=com".into(),
        ]), vec![]),
        msg(14, ProtocolOp::SearchResultDone(LdapResult::success()), vec![
            ctl(&PagedResults { size: 0, cookie: vec![1, 2, 3, 4] }, false),
            ctl(&SortResult { code: ResultCode::SUCCESS, attribute: Some("cn".into()) }, false),
            ctl(&VlvResponse { target_position: 3, content_count: 100, result: ResultCode::SUCCESS, context_id: Some(vec![9]) }, false),
            ctl(&AsqResponse { result: ResultCode::SUCCESS }, false),
        ]),
        msg(15, search(15, "", SearchScope::Base, Filter::present("objectClass"), &["*", "+"]), vec![]),
        msg(16, search(16, BASE, SearchScope::Subtree, Filter::eq("objectClass", "user"), &["cn", "memberOf"]), vec![
            ctl(&PagedResults { size: 1000, cookie: Vec::new() }, true),
            ctl(&SortRequest { keys: vec![SortKey { attribute: "sn".into(), ordering_rule: Some("2.5.13.3".into()), reverse: true }] }, true),
            ctl(&ExtendedDn { format: 1 }, false),
            bare(controls::SHOW_DELETED, true),
            bare(controls::DOMAIN_SCOPE, false),
        ]),
        msg(17, search(17, &users, SearchScope::OneLevel, Filter::present("cn"), &["cn"]), vec![
            ctl(&SortRequest { keys: vec![SortKey { attribute: "cn".into(), ordering_rule: None, reverse: false }] }, true),
            ctl(&VlvRequest { before: 0, after: 9, target: VlvTarget::ByOffset { offset: 1, content_count: 0 }, context_id: None }, true),
        ]),
        msg(18, search(18, &users, SearchScope::Subtree, Filter::present("cn"), &["cn"]), vec![
            ctl(&VlvRequest { before: 1, after: 1, target: VlvTarget::GreaterOrEqual(b"k".to_vec()), context_id: Some(vec![1]) }, true),
            ctl(&SearchOptions { flags: 2 }, false),
            ctl(&SdFlags { flags: 7 }, true),
        ]),
        msg(19, search(19, &format!("CN=Demo Team,OU=Demo,{BASE}"), SearchScope::Base, Filter::present("objectClass"), &["cn"]), vec![
            ctl(&Asq { source_attribute: "member".into() }, true),
            bare(controls::RANGE_RETRIEVAL_NOERR, false),
            bare(controls::SHOW_RECYCLED, false),
            bare(controls::SHOW_DEACTIVATED_LINK, false),
            bare(controls::MANAGE_DSA_IT, false),
            bare(controls::LAZY_COMMIT, false),
            bare(controls::NOTIFICATION, false),
            bare("1.2.3.4.5.6", true),
        ]),
        msg(20, search(20, &format!("<GUID=0123456789abcdef0123456789abcdef>;{BASE}"), SearchScope::Children, Filter::present("objectClass"), &["1.1"]), vec![]),
        msg(21, ProtocolOp::SearchRequest(SearchRequest {
            base: BASE.into(),
            scope: SearchScope::Subtree,
            deref: DerefAliases::Always,
            size_limit: 500,
            time_limit: 30,
            types_only: true,
            filter: Filter::present("objectClass"),
            attributes: vec![],
        }), vec![]),
    ];
    for (i, f) in filters().into_iter().enumerate() {
        out.push(msg(
            30 + i as i32,
            search(
                0,
                BASE,
                SearchScope::Subtree,
                f,
                &["cn", "member;range=0-*"],
            ),
            vec![],
        ));
    }
    out
}

/// A live NTLM exchange: Kauri's client against a server with the fixed challenge.
fn ntlm_exchange(seal: bool, target: bool) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut client = NtlmClient::new("alice", "SAMDOM", PASSWORD, seal);
    if target {
        client = client.target("ldap/dc1.samdom.example.com");
    }
    let mut server = NtlmServer::with_challenge(names(), settings(false), CHALLENGE);
    let negotiate = client.negotiate();
    let challenge = server.challenge(&negotiate).expect("a challenge");
    let (auth, _) = client.authenticate(&challenge).expect("an authenticate");
    (negotiate, challenge, auth)
}

fn ntlm_seeds(c: &mut Corpus) {
    for (seal, target) in [(false, false), (true, true)] {
        let (negotiate, challenge, auth) = ntlm_exchange(seal, target);
        c.add("ntlm", [&[0u8][..], &join(&[&negotiate, &auth])].concat());
        c.add("ntlm", [&[1u8][..], &auth].concat());
        c.add(
            "ntlm",
            [
                &[2u8 | if seal { 4 } else { 0 } | if target { 8 } else { 0 }][..],
                &challenge,
            ]
            .concat(),
        );
    }
    let pairs = AvPairs(vec![
        (
            2,
            "SAMDOM".encode_utf16().flat_map(u16::to_le_bytes).collect(),
        ),
        (6, vec![2, 0, 0, 0]),
    ]);
    c.add("ntlm", [&[1u8][..], &pairs.encode()].concat());
    let mut other = NtlmSession::client(
        &[3; 16],
        flags::SIGN | flags::SEAL | flags::EXTENDED_SESSIONSECURITY | flags::N128,
    );
    let t1 = other.wrap(b"0\x05\x02\x01\x01B\x00");
    let t2 = other.wrap(b"");
    c.add("ntlm", [&[3u8 | 4][..], &join(&[&t1, &t2])].concat());
}

fn spnego_seeds(c: &mut Corpus) {
    for seal in [false, true] {
        let mut client = SpnegoClient::new("alice", "SAMDOM", PASSWORD, seal);
        let mut server = SpnegoServer::new(names(), settings(false)).expect("a server");
        let first = client.initial();
        let Ok(Step::Continue(answer)) = server.step(&first) else {
            panic!("the server takes the first token");
        };
        let second = client
            .step(&answer)
            .expect("the client takes the challenge")
            .expect("a second token");
        let Ok(Step::Authenticate(auth)) = server.step(&second) else {
            panic!("the server takes the second token");
        };
        let (last, _) = server
            .accept(&auth, Some(&nt_hash(PASSWORD)))
            .expect("the logon verifies");
        c.add(
            "spnego",
            [&[if seal { 4 } else { 0 }][..], &join(&[&first, &second])].concat(),
        );
        c.add(
            "spnego",
            [
                &[1u8 | if seal { 2 } else { 0 }][..],
                &join(&[&answer, &last]),
            ]
            .concat(),
        );
    }
    // Raw NTLMSSP under GSS-SPNEGO, as some clients send it.
    let (negotiate, _, auth) = ntlm_exchange(true, false);
    c.add("spnego", [&[0u8][..], &join(&[&negotiate, &auth])].concat());
}

fn ldif_seeds(c: &mut Corpus) {
    let content = format!(
        "version: 1\n\
         # the demo OU\n\
         dn: OU=Demo,{BASE}\n\
         objectClass: top\n\
         objectClass: organizationalUnit\n\
         ou: Demo\n\
         \n\
         dn: CN=Kiri,OU=Demo,{BASE}\n\
         objectClass: user\n\
         sAMAccountName: kiri\n\
         description:: S2lyaSDEgSBtYW51\n\
         displayName: Kiri\n \
          Rewi\n\
         jpegPhoto:: /9j/4AAQSkZJRgABAQ==\n\
         \n"
    );
    c.add("ldif", content);
    let changes = format!(
        "version: 1\n\
         \n\
         dn: CN=Tama,OU=Demo,{BASE}\n\
         changetype: add\n\
         objectClass: user\n\
         sAMAccountName: tama\n\
         \n\
         dn: CN=Demo Team,OU=Demo,{BASE}\n\
         control: 1.2.840.113556.1.4.1413 false\n\
         changetype: modify\n\
         add: member\n\
         member: CN=Tama,OU=Demo,{BASE}\n\
         -\n\
         replace: description\n\
         description: the team\n\
         -\n\
         delete: info\n\
         -\n\
         increment: uidNumber\n\
         uidNumber: 1\n\
         -\n\
         \n\
         dn: CN=Tama,OU=Demo,{BASE}\n\
         changetype: modrdn\n\
         newrdn: CN=Tama Rewi\n\
         deleteoldrdn: 1\n\
         newsuperior: CN=Users,{BASE}\n\
         \n\
         dn: CN=Old,OU=Demo,{BASE}\n\
         control: 1.2.840.113556.1.4.805 true\n\
         changetype: delete\n\
         \n\
         dn:: Q049S2lyaSBSZXdpLE9VPURlbW8sREM9c2FtZG9tLERDPWV4YW1wbGUsREM9Y29t\n\
         changetype: moddn\n\
         newrdn: CN=Kiri\n\
         deleteoldrdn: 0\n\
         \n"
    );
    c.add("ldif", changes);
    c.add(
        "ldif",
        "dn: cn=x,dc=example\r\ncn: x\r\ncontrol: 1.2.3 true:: AAEC\r\nphoto:< file:///nonexistent/kauri-fuzz\r\n\r\n",
    );
}

fn domain() -> Directory<MemBackend> {
    let (schema, _) = Schema::load_default();
    let db = Db::in_memory(schema.db_config()).expect("a database");
    let dir = Directory::new(
        Arc::new(db),
        schema,
        Some(SecretKey::generate().expect("a key")),
    )
    .expect("a directory");
    dir.provision(
        &ProvisionParams {
            realm: "SAMDOM.EXAMPLE.COM".into(),
            netbios_domain: "SAMDOM".into(),
            dc_name: "DC1".into(),
            domain_sid: Sid::parse("S-1-5-21-1004336348-1177238915-682003330").expect("a SID"),
            site: "Default-First-Site-Name".into(),
        },
        "Adm1n.Passw0rd",
        None,
    )
    .expect("a domain");
    dir
}

/// Every pair of every table of `kv`.
fn all_pairs<B: Backend>(kv: &B) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    let r = kv.read().expect("a snapshot");
    (0..TABLES.len())
        .map(|t| {
            r.range(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                .expect("a range")
                .map(|p| {
                    let (k, v) = p.expect("a pair");
                    (k.to_vec(), v.to_vec())
                })
                .collect()
        })
        .collect()
}

/// A small store: the first `n` pairs of each table of the domain's database.
fn sample_store(pairs: &[Vec<(Vec<u8>, Vec<u8>)>], n: usize) -> MemBackend {
    let store = MemBackend::new(TABLES);
    let mut w = store.write().expect("a write");
    for (t, table) in pairs.iter().enumerate() {
        for (k, v) in table.iter().take(n) {
            w.put(t, k, v).expect("a put");
        }
    }
    w.commit().expect("a commit");
    store
}

fn dump_of(store: &MemBackend) -> (Vec<u8>, kauri_kv::dump::DumpStats) {
    let mut out = Vec::new();
    let snap = store.read().expect("a snapshot");
    let stats = write_dump(&snap, TABLES, &mut out).expect("a dump");
    (out, stats)
}

fn store_seeds(c: &mut Corpus) {
    let dir = domain();
    let pairs = all_pairs(dir.db().kv());
    // Records of every shape: the first of the tree, then spread over the rest.
    let entries = &pairs[T_ENTRIES];
    let step = (entries.len() / 40).max(1);
    for (_, v) in entries.iter().step_by(step).take(40) {
        if v.len() <= 4096 {
            c.add("record", v.clone());
        }
    }
    c.add("kv_dump", dump_of(&MemBackend::new(TABLES)).0);
    for n in [1, 3] {
        c.add("kv_dump", dump_of(&sample_store(&pairs, n)).0);
    }
    // A small backup archive, made as `kauri domain backup` makes one.
    let store = sample_store(&pairs, 3);
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let path = scratch.path().join("backup.tar.zst");
    let mut ar = ArchiveWriter::create(&path, Kind::Offline).expect("an archive");
    ar.add_file(kauri::backup::archive::SECRETS_KEY, &[0x11; 32])
        .expect("the key");
    let progress = |_| {};
    let mut w = ar.dump_writer(&progress);
    let snap = store.read().expect("a snapshot");
    let stats = write_dump(&snap, TABLES, &mut w).expect("a dump");
    let bytes = w.finish().expect("the pieces");
    let manifest = Manifest {
        format: kauri::backup::archive::FORMAT,
        kind: Kind::Offline,
        created: "20260101000000.0Z".into(),
        kauri_version: env!("CARGO_PKG_VERSION").into(),
        source: "kauri-data".into(),
        domain: DomainFile {
            realm: "SAMDOM.EXAMPLE.COM".into(),
            netbios_domain: "SAMDOM".into(),
            dc_name: "DC1".into(),
            domain_sid: "S-1-5-21-1004336348-1177238915-682003330".into(),
            domain_dn: BASE.into(),
            administrator: format!("CN=Administrator,CN=Users,{BASE}"),
            password_hash_schemes: Vec::new(),
        },
        renamed_from: None,
        highest_usn: 42,
        invocation_id: "00112233445566778899aabbccddeeff".into(),
        records: stats.per_table.get(T_ENTRIES).copied().unwrap_or(0),
        secrets: true,
        dump: DumpInfo {
            format: kauri_kv::dump::VERSION,
            tables: TABLES.iter().map(|t| t.to_string()).collect(),
            pairs: stats.pairs,
            bytes,
        },
        files: Vec::new(),
    };
    let path = ar.finish(manifest).expect("the archive");
    kauri::backup::archive::verify(&path, &|_, _| {}).expect("the seed archive verifies");
    let file = std::fs::read(&path).expect("the archive");
    let tar = zstd::decode_all(file.as_slice()).expect("its tar");
    c.add("backup_archive", [&[0u8][..], &file].concat());
    c.add("backup_archive", [&[1u8][..], &tar].concat());
}

fn cldap_seeds(c: &mut Corpus) {
    let ping = |filter: &str, attrs: &[&str]| {
        encode_message(&msg(
            1,
            search(
                1,
                "",
                SearchScope::Base,
                Filter::parse(filter).expect("a filter"),
                attrs,
            ),
            vec![],
        ))
    };
    c.add(
        "cldap",
        ping(
            "(&(DnsDomain=samdom.example.com)(Host=WS1)(NtVer=\\06\\00\\00\\00))",
            &["Netlogon"],
        ),
    );
    c.add("cldap", ping("(&(DnsDomain=samdom.example.com)(NtVer=\\16\\00\\00\\20)(AAC=\\00\\02\\00\\00)(User=WS1$))", &["Netlogon"]));
    c.add("cldap", ping("(&(DomainGuid=\\01\\02\\03\\04\\05\\06\\07\\08\\09\\0a\\0b\\0c\\0d\\0e\\0f\\10)(NtVer=\\02\\00\\00\\00))", &["netlogon"]));
    c.add("cldap", ping("(&(DomainSid=\\01\\04\\00\\00\\00\\00\\00\\05\\15\\00\\00\\00\\dc\\f4\\dc\\3b\\83\\3d\\2b\\46\\82\\8b\\a6\\28)(NtVer=\\06\\00\\00\\00))", &["Netlogon"]));
    c.add(
        "cldap",
        ping(
            "(&(DnsDomain=other.example.org)(NtVer=\\06\\00\\00\\00))",
            &["Netlogon"],
        ),
    );
    c.add(
        "cldap",
        ping(
            "(objectClass=*)",
            &["dnsHostName", "currentTime", "defaultNamingContext"],
        ),
    );
    c.add("cldap", ping("(objectClass=*)", &[]));
}

fn stream_seeds(c: &mut Corpus, msgs: &[Vec<u8>]) {
    let plain: Vec<u8> = msgs.iter().take(6).flatten().copied().collect();
    c.add("ldap_stream", [&[0u8][..], &plain].concat());
    c.add("ldap_stream", [&[3u8 << 2][..], &plain].concat());
    let mut framed = Vec::new();
    for m in msgs.iter().take(4) {
        framed.extend_from_slice(&(m.len() as u32).to_be_bytes());
        framed.extend_from_slice(m);
    }
    c.add("ldap_stream", [&[1u8 | (5 << 2)][..], &framed].concat());
    for seal in [false, true] {
        let f = flags::SIGN
            | flags::EXTENDED_SESSIONSECURITY
            | flags::N128
            | if seal { flags::SEAL } else { 0 };
        let mut client = NtlmSession::client(&[7; 16], f);
        let mut wrapped = Vec::new();
        for m in msgs.iter().take(3) {
            let t = client.wrap(m);
            wrapped.extend_from_slice(&(t.len() as u32).to_be_bytes());
            wrapped.extend_from_slice(&t);
        }
        c.add(
            "ldap_stream",
            [&[if seal { 3u8 } else { 2 }][..], &wrapped].concat(),
        );
    }
}

// Kerberos: real messages (MIT krb5 and impacket captures, MS-PAC samples) and the same
// messages with a plaintext where their ciphertext was, which the Kerberos targets read
// as the plaintext (see `kauri_fuzz::krb`).

macro_rules! fx {
    ($name:literal) => {
        include_bytes!(concat!(
            "../../crates/kauri-auth/src/krb/msg/testdata/",
            $name
        ))
        .as_slice()
    };
}

macro_rules! pac_sample {
    ($name:literal) => {
        include_bytes!(concat!("../../crates/kauri-auth/tests/data/pac/", $name)).as_slice()
    };
}

fn pac_samples() -> Vec<&'static [u8]> {
    vec![
        pac_sample!("samba_saved_pac.bin"),
        pac_sample!("win2008_s4u_pac_regular.bin"),
        pac_sample!("win2008_s4u_pac_enterprise.bin"),
        pac_sample!("win2008_s4u_pac_xrealm.bin"),
        pac_sample!("win2008_s4u_pac_ent_xrealm.bin"),
        pac_sample!("fuzz1.bin"),
        pac_sample!("fuzz2.bin"),
    ]
}

/// An EncTicketPart (the MIT TGT's) carrying `pac` as AD-IF-RELEVANT { AD-WIN2K-PAC }.
fn ticket_part_with_pac(pac: &[u8]) -> Vec<u8> {
    let mut part = EncTicketPart::decode(fx!("enc_ticket_part_tgt.der")).expect("EncTicketPart");
    let inner = AuthorizationData(vec![AuthorizationDataEntry {
        ad_type: ad_type::AD_WIN2K_PAC,
        ad_data: pac.to_vec(),
    }]);
    part.authorization_data = Some(AuthorizationData(vec![AuthorizationDataEntry {
        ad_type: ad_type::AD_IF_RELEVANT,
        ad_data: inner.encode(),
    }]));
    part.encode()
}

/// An AP-REQ with the ticket's and the authenticator's ciphertexts replaced.
fn ap_with(ap: &[u8], ticket_plain: Option<&[u8]>, auth_plain: Option<&[u8]>) -> Vec<u8> {
    let mut ap = ApReq::decode(ap).expect("AP-REQ");
    if let Some(p) = ticket_plain {
        ap.ticket.enc_part.cipher = p.to_vec();
        ap.ticket.raw = None;
    }
    if let Some(p) = auth_plain {
        ap.authenticator.cipher = p.to_vec();
    }
    ap.encode()
}

/// A KDC request with its PA-TGS-REQ's AP-REQ (when it has one) and PA-ENC-TIMESTAMP
/// opened, and PA-DATA added.
fn req_with(
    req: &[u8],
    ticket_plain: Option<&[u8]>,
    auth_plain: Option<&[u8]>,
    ts_plain: Option<&[u8]>,
    extra: &[PaData],
) -> Vec<u8> {
    let mut req = KdcReq::decode(req).expect("KDC-REQ");
    for pa in req.padata.iter_mut().flatten() {
        if pa.padata_type == padata::PA_TGS_REQ {
            pa.value = ap_with(&pa.value, ticket_plain, auth_plain);
        }
        if let (padata::PA_ENC_TIMESTAMP, Some(p)) = (pa.padata_type, ts_plain) {
            let mut ed = EncryptedData::decode(&pa.value).expect("EncryptedData");
            ed.cipher = p.to_vec();
            pa.value = ed.encode();
        }
    }
    req.padata
        .get_or_insert_with(Vec::new)
        .extend(extra.iter().cloned());
    req.encode()
}

fn krb_request_seeds(c: &mut Corpus) {
    const T: &str = "krb_kdc_request";
    for m in [
        fx!("as_req_initial.der"),
        fx!("as_req_enc_ts.der"),
        fx!("tgs_req_mit_fast.der"),
        fx!("tgs_req_impacket.der"),
    ] {
        c.add(T, m);
    }
    c.add(
        T,
        req_with(
            fx!("as_req_enc_ts.der"),
            None,
            None,
            Some(fx!("pa_enc_ts_enc.der")),
            &[
                PaData::new(
                    padata::PA_PAC_REQUEST,
                    fx!("impacket_pa_pac_request_false.der").to_vec(),
                ),
                PaData::new(
                    padata::PA_PAC_OPTIONS,
                    fx!("impacket_pa_pac_options.der").to_vec(),
                ),
            ],
        ),
    );
    c.add(
        T,
        req_with(
            fx!("tgs_req_impacket.der"),
            Some(fx!("enc_ticket_part_tgt.der")),
            Some(fx!("authenticator_tgs_req.der")),
            None,
            &[PaData::new(
                padata::PA_FOR_USER,
                fx!("impacket_pa_for_user.der").to_vec(),
            )],
        ),
    );
    c.add(
        T,
        req_with(
            fx!("tgs_req_mit_fast.der"),
            Some(fx!("enc_ticket_part_svc.der")),
            Some(fx!("authenticator_mit_fast_tgs.der")),
            None,
            &[],
        ),
    );
    for pac in pac_samples() {
        c.add(
            T,
            req_with(
                fx!("tgs_req_impacket.der"),
                Some(&ticket_part_with_pac(pac)),
                Some(fx!("authenticator_tgs_req.der")),
                None,
                &[],
            ),
        );
        c.add(T, pac);
    }
    // The plaintexts alone, which the target also reads straight.
    for m in [
        fx!("authenticator_tgs_req.der"),
        fx!("authenticator_mit_fast_tgs.der"),
        fx!("enc_ticket_part_tgt.der"),
        fx!("enc_ticket_part_svc.der"),
        fx!("pa_enc_ts_enc.der"),
        fx!("impacket_pa_for_user.der"),
    ] {
        c.add(T, m);
    }
}

/// A kpasswd request or reply with its parts' ciphertexts replaced.
fn kpasswd_with(
    msg: &[u8],
    request: bool,
    auth_plain: Option<&[u8]>,
    priv_plain: Option<&[u8]>,
    rep_plain: Option<&[u8]>,
) -> Vec<u8> {
    let priv_with = |p: &[u8]| match priv_plain {
        Some(plain) => {
            let mut k = KrbPriv::decode(p).expect("KRB-PRIV");
            k.enc_part.cipher = plain.to_vec();
            k.encode()
        }
        None => p.to_vec(),
    };
    if request {
        let mut r = KpasswdRequest::decode(msg).expect("kpasswd request");
        r.ap_req = ap_with(&r.ap_req, Some(fx!("enc_ticket_part_svc.der")), auth_plain);
        r.krb_priv = priv_with(&r.krb_priv);
        r.encode().expect("a kpasswd request")
    } else {
        let mut r = KpasswdReply::decode(msg).expect("kpasswd reply");
        if let Some(p) = rep_plain {
            let mut rep = ApRep::decode(&r.ap_rep).expect("AP-REP");
            rep.enc_part.cipher = p.to_vec();
            r.ap_rep = rep.encode();
        }
        r.body = priv_with(&r.body);
        r.encode().expect("a kpasswd reply")
    }
}

fn krb_kpasswd_seeds(c: &mut Corpus) {
    const T: &str = "krb_kpasswd";
    for m in [
        fx!("kpasswd_req_change_mit.bin"),
        fx!("kpasswd_req_set_impacket.bin"),
        fx!("kpasswd_rep_soft_error_mit.bin"),
        fx!("kpasswd_rep_access_denied_mit.bin"),
    ] {
        c.add(T, m);
    }
    c.add(
        T,
        kpasswd_with(
            fx!("kpasswd_req_change_mit.bin"),
            true,
            Some(fx!("authenticator_kpasswd.der")),
            Some(fx!("enc_krb_priv_part_chpw.der")),
            None,
        ),
    );
    c.add(
        T,
        kpasswd_with(
            fx!("kpasswd_req_set_impacket.bin"),
            true,
            Some(fx!("authenticator_kpasswd.der")),
            Some(fx!("impacket_enc_krb_priv_part.der")),
            None,
        ),
    );
    let set_part = EncKrbPrivPart {
        user_data: fx!("impacket_change_passwd_data.der").to_vec(),
        timestamp: None,
        usec: None,
        seq_number: Some(7),
        s_address: None,
        r_address: None,
    };
    c.add(
        T,
        kpasswd_with(
            fx!("kpasswd_req_set_impacket.bin"),
            true,
            Some(fx!("authenticator_kpasswd.der")),
            Some(&set_part.encode()),
            None,
        ),
    );
    c.add(
        T,
        kpasswd_with(
            fx!("kpasswd_rep_soft_error_mit.bin"),
            false,
            None,
            Some(fx!("enc_krb_priv_part_result.der")),
            Some(fx!("enc_ap_rep_part.der")),
        ),
    );
    // AD's soft error: the policy blob, in a KRB-PRIV and in a KRB-ERROR's e-data.
    let policy = KpasswdResult {
        code: 4,
        string: AdPolicyInfo {
            min_length: 7,
            history: 24,
            properties: 1,
            max_age: 36_288_000_000_000,
            min_age: 864_000_000_000,
        }
        .encode()
        .to_vec(),
    };
    let result_part = EncKrbPrivPart {
        user_data: policy.encode(),
        timestamp: None,
        usec: Some(1),
        seq_number: Some(7),
        s_address: None,
        r_address: None,
    };
    c.add(
        T,
        kpasswd_with(
            fx!("kpasswd_rep_soft_error_mit.bin"),
            false,
            None,
            Some(&result_part.encode()),
            Some(fx!("enc_ap_rep_part.der")),
        ),
    );
    let mut err = KrbError::decode(fx!("krb_error_preauth_required.der")).expect("KRB-ERROR");
    err.e_data = Some(policy.encode());
    c.add(
        T,
        KpasswdReply::error(err.encode())
            .encode()
            .expect("a kpasswd reply"),
    );
}

/// A SPNEGO NegTokenInit in its InitialContextToken, listing `mechs`, with `token`.
fn spnego_init(mechs: &[&[u8]], token: &[u8]) -> Vec<u8> {
    fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let n = body.len();
        if n < 0x80 {
            out.push(n as u8);
        } else if n < 0x100 {
            out.extend([0x81, n as u8]);
        } else {
            out.extend([0x82, (n >> 8) as u8, n as u8]);
        }
        out.extend_from_slice(body);
        out
    }
    let oids: Vec<u8> = mechs.iter().flat_map(|m| tlv(0x06, m)).collect();
    let mut fields = tlv(0xa0, &tlv(0x30, &oids));
    fields.extend(tlv(0xa2, &tlv(0x04, token)));
    let init = tlv(0xa0, &tlv(0x30, &fields));
    let mut body = tlv(0x06, kauri_auth::spnego::OID_SPNEGO);
    body.extend(init);
    tlv(0x60, &body)
}

fn krb_gss_seeds(c: &mut Corpus) {
    const T: &str = "krb_gss_token";
    use kauri_auth::krb::msg::gss::{
        OID_KRB5, OID_MS_KRB5, TOK_ID_AP_REP, TOK_ID_AP_REQ, TOK_ID_KRB_ERROR,
    };
    let initial = fx!("gss_initial_token_ap_req_mit.bin");
    c.add(T, initial);
    c.add(T, fx!("gss_token_ap_rep_mit.bin"));
    let t = GssKrb5Token::decode(initial).expect("GSS token");
    // The AP-REQ with its plaintexts: a ticket with a PAC, and MIT's authenticator with
    // its 0x8003 checksum; the acceptor target seals them for real.
    let mut opened = Vec::new();
    for part in [
        fx!("enc_ticket_part_svc.der").to_vec(),
        // MIT's TGT part: its PAC names the ticket's client.
        fx!("enc_ticket_part_tgt.der").to_vec(),
        ticket_part_with_pac(pac_sample!("samba_saved_pac.bin")),
    ] {
        for mech in [GssMech::Krb5, GssMech::MsKrb5] {
            let mut t2 = GssKrb5Token::new(
                TOK_ID_AP_REQ,
                ap_with(
                    &t.message,
                    Some(&part),
                    Some(fx!("gss_authenticator_mit.der")),
                ),
            );
            t2.mech = mech;
            opened.push(t2.encode());
        }
    }
    for o in &opened {
        c.add(T, o.clone());
    }
    let rep = GssKrb5Token::decode(fx!("gss_token_ap_rep_mit.bin")).expect("GSS token");
    let mut ap_rep = ApRep::decode(&rep.message).expect("AP-REP");
    ap_rep.enc_part.cipher = fx!("enc_ap_rep_part.der").to_vec();
    c.add(
        T,
        GssKrb5Token::new(TOK_ID_AP_REP, ap_rep.encode()).encode(),
    );
    for e in [
        fx!("krb_error_preauth_required.der"),
        fx!("krb_error_tgs_bad_integrity.der"),
        fx!("impacket_krb_error_full.der"),
    ] {
        c.add(T, GssKrb5Token::new(TOK_ID_KRB_ERROR, e.to_vec()).encode());
    }
    // GSS-SPNEGO carrying Kerberos (Windows lists the Microsoft OID first), and NTLMSSP
    // preferred with Kerberos second.
    let ntlm = kauri_auth::spnego::OID_NTLMSSP;
    c.add(T, spnego_init(&[OID_MS_KRB5, OID_KRB5, ntlm], &opened[0]));
    c.add(T, spnego_init(&[OID_KRB5, ntlm], initial));
    c.add(T, spnego_init(&[ntlm, OID_KRB5], initial));
    // The 0x8003 checksum alone, MIT's and one with delegated credentials.
    let auth = Authenticator::decode(fx!("gss_authenticator_mit.der")).expect("Authenticator");
    let cksum = auth.cksum.expect("a checksum").checksum;
    c.add(T, cksum.clone());
    let mut g = GssChecksum::decode(&cksum).expect("GSS checksum");
    g.flags |= 1;
    g.delegation = Some((1, fx!("impacket_pa_for_user.der").to_vec()));
    g.exts = vec![0, 0, 0, 0, 0, 0, 0, 2, 0xaa, 0xbb];
    c.add(T, g.encode());
}

fn krb_context_seeds(c: &mut Corpus) {
    const T: &str = "krb_gss_context";
    let wrap = |op: u8, ec: u16, rrc: u16, data: &[u8]| {
        [&[op][..], &ec.to_be_bytes(), &rrc.to_be_bytes(), data].concat()
    };
    for (mode, key_len) in [(1u8, 32), (0, 16), (3, 32)] {
        let key = vec![0x11; key_len];
        let msgs = [
            wrap(2, 0, 0, &encode_message(&messages()[0])),
            wrap(6, 0, 28, b"a sealed LDAP message"),
            [&[3u8][..], b"the mechanism list"].concat(),
            wrap(6 | 8 | 0x30, 5, 3, b"out of sequence"),
        ];
        let refs: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
        c.add(T, [&[mode][..], &key, &join(&refs)].concat());
    }
    // Tokens as they arrive, unforged: a Wrap header alone, a MIC.
    let raw = [
        [
            &[0u8, 0x05, 0x04, 0x02, 0xff, 0, 0, 0, 0][..],
            &[0u8; 8],
            &[0x5a; 44],
        ]
        .concat(),
        [
            &[1u8, 0x04, 0x04, 0x00][..],
            &[0xff; 5],
            &[0u8; 7],
            &[1],
            &[0x5a; 12],
        ]
        .concat(),
    ];
    let refs: Vec<&[u8]> = raw.iter().map(|m| m.as_slice()).collect();
    c.add(T, [&[1u8][..], &[0x22; 32], &join(&refs)].concat());
}

fn krb_crypto_seeds(c: &mut Corpus) {
    const T: &str = "krb_crypto";
    let header = |mode: u8, key: &Key, usage: u32, cksumtype: i32| {
        let mut out = vec![mode];
        out.extend_from_slice(key.bytes());
        out.extend_from_slice(&usage.to_be_bytes());
        out.extend_from_slice(&cksumtype.to_be_bytes());
        out.extend_from_slice(&0x1234u16.to_be_bytes());
        out
    };
    // A real ciphertext: MIT kinit's PA-ENC-TIMESTAMP under user's AES256 key.
    let user =
        Key::from_password(Enctype::Aes256Sha1, "userpass", "TEST.REALMuser").expect("a key");
    let req = KdcReq::decode(fx!("as_req_enc_ts.der")).expect("AS-REQ");
    let ts = req
        .find_padata(padata::PA_ENC_TIMESTAMP)
        .expect("PA-ENC-TIMESTAMP");
    let ed = EncryptedData::decode(&ts.value).expect("EncryptedData");
    if user.decrypt(1, &ed.cipher).is_ok() {
        let sum = user.checksum(1, b"kauri").expect("a checksum");
        c.add(
            T,
            [
                header(0, &user, 1, user.etype().checksum_type()),
                join(&[&ed.cipher, b"kauri", &sum]),
            ]
            .concat(),
        );
    }
    for (i, &etype) in Enctype::ALL.iter().enumerate() {
        let key =
            Key::from_password(etype, "Koru.Passw0rd!", "SAMDOM.EXAMPLE.COMalice").expect("a key");
        for (mode, usage, plain) in [
            (0u8, 7u32, &b""[..]),
            (4, 11, b"kauri"),
            (8, 17, b"a longer plaintext, more than one AES block long"),
            (12, 1024, &[0u8; 16][..]),
        ] {
            let cipher = key.encrypt(usage, plain).expect("encrypting");
            let sum = key.checksum(usage, plain).expect("a checksum");
            c.add(
                T,
                [
                    header(mode | i as u8, &key, usage, etype.checksum_type()),
                    join(&[&cipher, plain, &sum]),
                ]
                .concat(),
            );
        }
    }
}

/// The KDC target's inputs: requests for the provisioned domain (SAMDOM.EXAMPLE.COM,
/// Administrator), raw and as the templates its AS, TGS and kpasswd modes complete.
fn kdc_seeds(c: &mut Corpus) {
    const T: &str = "kdc";
    const REALM: &str = "SAMDOM.EXAMPLE.COM";
    let body = |cname: Option<&[&str]>, sname: &[&str], options: u32, etype: Vec<i32>| KdcReqBody {
        kdc_options: KerberosFlags(options),
        cname: cname.map(|n| PrincipalName::new(name_type::NT_PRINCIPAL, n)),
        realm: REALM.into(),
        sname: Some(PrincipalName::new(
            if sname.len() == 1 {
                name_type::NT_PRINCIPAL
            } else {
                name_type::NT_SRV_INST
            },
            sname,
        )),
        from: None,
        till: KerberosTime(2_136_422_885),
        rtime: Some(KerberosTime(2_136_422_885)),
        nonce: 0x2a2a_2a2a,
        etype,
        addresses: None,
        enc_authorization_data: None,
        additional_tickets: None,
        raw: None,
    };
    let req = |kind, padata: Vec<PaData>, req_body| {
        KdcReq {
            kind,
            padata: Some(padata),
            req_body,
        }
        .encode()
    };
    let fwd = kdc_options::FORWARDABLE | kdc_options::RENEWABLE | kdc_options::CANONICALIZE;
    let pac_req = |b: bool| {
        PaData::new(
            padata::PA_PAC_REQUEST,
            KerbPaPacRequest { include_pac: b }.encode(),
        )
    };
    let admin: &[&str] = &["Administrator"];
    let krbtgt: &[&str] = &["krbtgt", REALM];
    let changepw: &[&str] = &["kadmin", "changepw"];
    // Raw: the first AS-REQ of a logon, a stranger, and the captured requests.
    c.add(
        T,
        [
            &[0u8][..],
            &req(
                KdcKind::As,
                vec![pac_req(true)],
                body(Some(admin), krbtgt, fwd, vec![18, 17, 23]),
            ),
        ]
        .concat(),
    );
    c.add(
        T,
        [
            &[0u8][..],
            &req(
                KdcKind::As,
                vec![],
                body(Some(&["nobody"]), krbtgt, 0, vec![23]),
            ),
        ]
        .concat(),
    );
    for m in [
        fx!("as_req_initial.der"),
        fx!("as_req_enc_ts.der"),
        fx!("tgs_req_impacket.der"),
    ] {
        c.add(T, [&[0u8][..], m].concat());
    }
    // AS with a valid timestamp, under each of the three keys.
    for (mode, sname, options, pa) in [
        (1u8, krbtgt, fwd, vec![pac_req(true)]),
        (5, krbtgt, kdc_options::RENEWABLE_OK, vec![pac_req(false)]),
        (9, changepw, 0, vec![]),
        (1, &["DC1$"][..], fwd, vec![]),
        (1, &["ldap", "dc1.samdom.example.com"][..], fwd, vec![]),
    ] {
        c.add(
            T,
            [
                &[mode][..],
                &req(
                    KdcKind::As,
                    pa,
                    body(Some(admin), sname, options, vec![18, 17, 23]),
                ),
            ]
            .concat(),
        );
    }
    c.add(
        T,
        [
            &[1u8][..],
            &req(
                KdcKind::As,
                vec![],
                body(Some(&["administrator"]), krbtgt, 0, vec![23]),
            ),
        ]
        .concat(),
    );
    // TGS with the real TGT: service tickets, a renewal, a referral, U2U.
    let pac_opts = PaData::new(
        padata::PA_PAC_OPTIONS,
        fx!("impacket_pa_pac_options.der").to_vec(),
    );
    for (mode, sname, options) in [
        (2u8, &["ldap", "dc1.samdom.example.com"][..], fwd),
        (6, &["host", "DC1"][..], kdc_options::FORWARDABLE),
        (2, &["cifs", "dc1.samdom.example.com"][..], 0),
        (2, &["DC1$"][..], fwd),
        (2, krbtgt, fwd),
        (6, krbtgt, kdc_options::RENEW | kdc_options::RENEWABLE),
        (2, &["krbtgt", "OTHER.EXAMPLE.ORG"][..], 0),
        (10, &["Administrator"][..], kdc_options::ENC_TKT_IN_SKEY),
        (2, &["ldap", "nowhere.example.com"][..], 0),
    ] {
        c.add(
            T,
            [
                &[mode][..],
                &req(
                    KdcKind::Tgs,
                    vec![pac_opts.clone()],
                    body(None, sname, options, vec![18, 17, 23]),
                ),
            ]
            .concat(),
        );
    }
    // kpasswd: the captured requests raw; the Administrator's own password changed (a
    // day has not passed since it was set) in both versions.
    for m in [
        fx!("kpasswd_req_change_mit.bin"),
        fx!("kpasswd_req_set_impacket.bin"),
    ] {
        c.add(T, [&[3u8][..], m].concat());
    }
    c.add(T, [&[7u8, 0, 1][..], b"N3w.Passw0rd!"].concat());
    let set = ChangePasswdData {
        newpasswd: b"N3w.Passw0rd!".to_vec(),
        targname: Some(PrincipalName::new(name_type::NT_PRINCIPAL, admin)),
        targrealm: Some(REALM.into()),
    };
    c.add(T, [&[7u8, 0xff, 0x80][..], &set.encode()].concat());
}

fn keytab_seeds(c: &mut Corpus) {
    use kauri::keytab::{encode, Entry, NT_PRINCIPAL};
    let entry = |components: &[&str], kvno: u32, enctype: u16, key: &[u8]| Entry {
        realm: "SAMDOM.EXAMPLE.COM".into(),
        components: components.iter().map(|c| c.to_string()).collect(),
        name_type: NT_PRINCIPAL,
        timestamp: 0x5f00_0001,
        kvno,
        enctype,
        key: key.to_vec(),
    };
    let a = entry(&["HOST", "dc1.samdom.example.com"], 2, 18, &[1; 32]);
    let b = entry(&["alice"], 300, 17, &[2; 16]);
    let d = entry(&["DC1$"], 1, 23, &[3; 16]);
    c.add(
        "keytab",
        encode(&[a.clone(), b.clone(), d]).expect("a keytab"),
    );
    // A hole, an entry without the 32-bit key version, the end marker and junk.
    let mut bytes = encode(std::slice::from_ref(&a)).expect("a keytab");
    bytes.extend_from_slice(&(-10i32).to_be_bytes());
    bytes.extend_from_slice(&[0; 10]);
    let body = encode(std::slice::from_ref(&b)).expect("a keytab");
    let record = &body[6..body.len() - 4];
    bytes.extend_from_slice(&(record.len() as i32).to_be_bytes());
    bytes.extend_from_slice(record);
    bytes.extend_from_slice(&[0, 0, 0, 0, 9, 9]);
    c.add("keytab", bytes);
    c.add("keytab", vec![0x05, 0x02]);
}

fn krb_seeds(c: &mut Corpus) {
    keytab_seeds(c);
    krb_request_seeds(c);
    krb_kpasswd_seeds(c);
    krb_gss_seeds(c);
    krb_context_seeds(c);
    krb_crypto_seeds(c);
    kdc_seeds(c);
}

/// Security descriptors: every distinct `defaultSecurityDescriptor` of the schema
/// (Microsoft's, from Debian's samba-ad-provision, when installed), as SDDL and in both
/// binary layouts, and a few forms the schema does not use.
fn security_seeds(c: &mut Corpus) {
    use kauri_domain::security::descriptor::Layout;
    use kauri_domain::security::SecurityDescriptor;
    let dom = Sid::parse("S-1-5-21-2457507606-2709100691-398136650").expect("a SID");
    let (schema, _) = Schema::load_default();
    let mut texts: Vec<String> = schema
        .classes()
        .filter_map(|c| c.default_security_descriptor.clone())
        .collect();
    texts.sort();
    texts.dedup();
    texts.extend(
        [
            "D:NO_ACCESS_CONTROL",
            "D:S:",
            "O:BAG:BAD:P(A;CIOI;GRGX;;;BU)(A;CIOI;GA;;;BA)(A;CIOI;GA;;;SY)(A;CIOI;GA;;;CO)\
             S:P(AU;FA;GR;;;WD)",
            "O:S-1-5-21-1-2-3-512G:S-1-0x123456789abc-7D:PARAI(D;NP;0x1200a9;;;LA)\
             (A; OICI ;FA;;; S-1-5-32-544)(OD;IOID;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;PS)",
            "D:(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;\
             bf967a86-0de6-11d0-a285-00aa003049e2;CO)(A;;KA;;;OW)(A;;01234567;;;AN)",
            "S:AI(OU;CIIDSA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;\
             bf967aa5-0de6-11d0-a285-00aa003049e2;WD)(AU;FA;0xffffffff;;;EA)",
        ]
        .map(String::from),
    );
    for text in &texts {
        c.add("sddl", text.as_str());
        let Ok(sd) = SecurityDescriptor::from_sddl(text, &dom) else {
            continue;
        };
        for layout in [Layout::Windows, Layout::OwnerFirst] {
            if let Ok(bytes) = sd.to_bytes_in(layout) {
                c.add("security_descriptor", bytes);
            }
        }
    }
    // An ACE type SDDL has no letters for (a mandatory label, 0x11), kept as raw bytes.
    let mut sd = SecurityDescriptor::from_sddl("O:SYD:(A;;RP;;;WD)S:", &dom).expect("SDDL");
    let mut body = vec![1, 0, 0, 0];
    body.extend_from_slice(&Sid::parse("S-1-16-8192").expect("a SID").to_bytes());
    let label = kauri_domain::security::Ace::new(
        kauri_domain::security::AceKind::Unknown {
            ace_type: 0x11,
            body,
        },
        0,
        0,
        Sid::parse("S-1-0-0").expect("a SID"),
    );
    if let Some(sacl) = sd.sacl.as_mut() {
        sacl.aces.push(label);
    }
    c.add("security_descriptor", sd.to_bytes().expect("writes"));
}

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let mut c = Corpus {
        root: Path::new(&root).to_path_buf(),
        seeds: BTreeMap::new(),
    };
    let msgs: Vec<Vec<u8>> = messages().iter().map(encode_message).collect();
    for m in &msgs {
        c.add("ldap_message", m.clone());
    }
    stream_seeds(&mut c, &msgs);
    for f in filters() {
        c.add("filter", f.to_string());
        c.add("filter_ber", encode_filter(&f));
    }
    for dn in [
        "",
        BASE,
        "CN=Kiri Rewi,OU=Demo,DC=samdom,DC=example,DC=com",
        "cn=Smith\\, John+uid=jsmith,ou=People;o=Example",
        "CN=Kiri\\0ADEL:0123abcd-0000-1111-2222-333344445555,CN=Deleted Objects,DC=samdom,DC=example,DC=com",
        "OID.2.5.4.3=#04024869,O=Test",
        "cn=#0c03616263,2.5.4.11=\" quoted, value \"",
        "cn=\\ lead\\#x trail\\ ,dc=\\c3\\a4rger",
        "CN=Ä İ ß 中,DC=X",
        "uid=a+cn=b+sn=c",
    ] {
        c.add("dn", dn);
    }
    for (i, syntax) in Syntax::ALL.iter().enumerate() {
        for value in [
            &b"Kiri Rewi"[..],
            b"  Kiri   REWI ",
            b"+64 9 555-0100",
            b"0042",
            b"-9223372036854775808",
            b"TRUE",
            b"20260101120000.5+1300",
            b"260101120000Z",
            b"CN=Kiri,OU=Demo,DC=samdom,DC=example,DC=com",
            b"2.5.4.3",
            b"objectClass",
            b"{0123abcd-0000-1111-2222-333344445555}",
            b"S-1-5-21-1004336348-1177238915-682003330-512",
            b"S-1-0x123456789abc-1",
            &[1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0],
            &[0xff; 16],
        ] {
            c.add("syntax", [&[i as u8][..], value].concat());
        }
        let _ = syntax;
    }
    ldif_seeds(&mut c);
    ntlm_seeds(&mut c);
    spnego_seeds(&mut c);
    cldap_seeds(&mut c);
    store_seeds(&mut c);
    krb_seeds(&mut c);
    security_seeds(&mut c);
    c.write().expect("writing the corpus");
}
