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
    c.write().expect("writing the corpus");
}
