//! A provisioned AD domain served on 127.0.0.1, driven by unmodified clients (python
//! ldap3 and python-ldap, ldap-utils): the root DSE of a DC, binds by DN, UPN and
//! DOMAIN\name with AD's error sub-codes, schema validation with AD's result codes,
//! principals, linked attributes and ranged retrieval, tombstones and show-deleted,
//! passwords and fine-grained policies, the access policy, and run-time schema
//! extension with schemaUpdateNow.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use kauri_db::Db;
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::{Server, ServerConfig};

const BASE: &str = "DC=samdom,DC=example,DC=com";
const ADMIN: &str = "CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com";
const PW: &str = "Adm1n.Passw0rd";

struct Running {
    port: u16,
    tls_port: u16,
    data: tempfile::TempDir,
    dir: Arc<Directory<kauri_kv::lmdb::LmdbBackend>>,
    _rt: tokio::runtime::Runtime,
}

fn server() -> &'static Running {
    static SERVER: OnceLock<Running> = OnceLock::new();
    SERVER.get_or_init(|| {
        let data = tempfile::tempdir().unwrap();
        let (schema, source) = Schema::load_default();
        let db = Db::open_lmdb(
            &data.path().join("db"),
            schema.db_config(),
            LmdbOptions::default(),
        )
        .unwrap();
        let key = SecretKey::generate().unwrap();
        let dir = Directory::new(Arc::new(db), schema, Some(key)).unwrap();
        dir.provision(
            &ProvisionParams {
                realm: "SAMDOM.EXAMPLE.COM".into(),
                netbios_domain: "SAMDOM".into(),
                dc_name: "DC1".into(),
                domain_sid: Sid::new_domain().unwrap(),
                site: "Default-First-Site-Name".into(),
            },
            PW,
            None,
        )
        .unwrap();
        // Every password set over LDAP here keeps both crypt forms, hashed before the
        // writer (the default keeps none).
        dir.set_crypt_schemes(kauri_domain::password::CryptSchemes::ALL);
        let dir = Arc::new(dir);
        let cfg = ServerConfig {
            data: data.path().to_path_buf(),
            listen: "127.0.0.1:0".into(),
            listen_tls: "127.0.0.1:0".into(),
            max_val_range: 10,
            ..ServerConfig::default()
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(Server::bind(cfg, dir.clone(), source)).unwrap();
        let port = server.local_addr().unwrap().port();
        let tls_port = server.tls_addr().unwrap().port();
        rt.spawn(server.run());
        Running {
            port,
            tls_port,
            data,
            dir,
            _rt: rt,
        }
    })
}

impl Running {
    fn ca(&self) -> PathBuf {
        self.data.path().join("tls/ca.pem")
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a python script (with `PORT`, `TLS_PORT`, `CA`, `BASE`, `ADMIN`, `PW` defined);
/// fails the test unless it prints "ok".
fn python(script: &str, what: &str) {
    python_with("python3", script, what)
}

/// [`python`] with a given interpreter (Debian's, for python-ldap).
fn python_with(interpreter: &str, script: &str, what: &str) {
    let s = server();
    let prelude = format!(
        "PORT={}\nTLS_PORT={}\nCA={:?}\nBASE={BASE:?}\nADMIN={ADMIN:?}\nPW={PW:?}\n",
        s.port,
        s.tls_port,
        s.ca().display().to_string()
    );
    let o = Command::new(interpreter)
        .args(["-c", &format!("{prelude}{script}")])
        .output()
        .unwrap_or_else(|e| panic!("{interpreter}: {e}"));
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ok"),
        "{what}: {}",
        text(&o)
    );
}

/// ldap3 helpers every script shares.
const LDAP3: &str = r#"
import ssl
from ldap3 import Server, Connection, Tls, ALL, BASE as SBASE, SUBTREE, MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE
def plain(user=ADMIN, pw=PW, auto_range=True):
    c = Connection(Server('127.0.0.1', port=PORT, get_info=None), user=user, password=pw, raise_exceptions=False, auto_range=auto_range)
    assert c.bind(), ('bind', user, c.result)
    return c
def tls(user=ADMIN, pw=PW, bind=True):
    t = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=CA)
    c = Connection(Server('localhost', port=TLS_PORT, use_ssl=True, tls=t), user=user, password=pw, raise_exceptions=False)
    if bind:
        assert c.bind(), ('bind', user, c.result)
    return c
def quoted(pw):
    return ('"%s"' % pw).encode('utf-16-le')
def code(c):
    return c.result['result']
"#;

fn ldap3(script: &str, what: &str) {
    python(&format!("{LDAP3}{script}"), what);
}

#[test]
fn root_dse_and_schema_of_a_domain_controller() {
    ldap3(
        r#"
c = Connection(Server('127.0.0.1', port=PORT, get_info=ALL), user=ADMIN, password=PW)
assert c.bind()
info = c.server.info
assert info.other['domainFunctionality'] == ['7'], info.other.get('domainFunctionality')
assert info.other['forestFunctionality'] == ['7']
assert info.other['dsServiceName'][0].startswith('CN=NTDS Settings,CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,')
assert info.other['defaultNamingContext'] == [BASE]
c.search('', '(objectClass=*)', search_scope=SBASE, attributes=['supportedCapabilities'])
assert '1.2.840.113556.1.4.800' in c.entries[0].supportedCapabilities.values
assert 'dc1.samdom.example.com' in str(info.other['dnsHostName']), info.other['dnsHostName']
# ldap3 read the schema from the subschema entry; it knows AD's attributes.
assert 'sAMAccountName' in c.server.schema.attribute_types
assert 'user' in c.server.schema.object_classes
# The schema objects are in the Schema NC.
c.search('CN=Schema,CN=Configuration,' + BASE, '(lDAPDisplayName=sAMAccountName)', attributes=['attributeID', 'isSingleValued', 'searchFlags'])
e = c.entries[0]
assert e.attributeID.value == '1.2.840.113556.1.4.221', e
# AD's other ways to name an object: its own DN as an attribute, <SID=…>, <GUID=…>, <WKGUID=…>.
c.search(BASE, '(distinguishedName=%s)' % ADMIN, attributes=['objectSid', 'objectGUID'])
assert len(c.entries) == 1 and c.entries[0].entry_dn == ADMIN, c.entries
sid = c.entries[0].objectSid.value
guid = c.entries[0].objectGUID.value.strip('{}')
for base in ['<SID=%s>' % sid, '<GUID=%s>' % guid]:
    c.search(base, '(objectClass=*)', search_scope=SBASE, attributes=['cn'])
    assert len(c.entries) == 1 and c.entries[0].entry_dn == ADMIN, (base, c.result)
c.search('<WKGUID=a9d1ca15768811d1aded00c04fd8d5cd,%s>' % BASE, '(objectClass=*)', search_scope=SBASE, attributes=['cn'])
assert c.entries[0].entry_dn == 'CN=Users,' + BASE, c.entries
domain_admins = sid.rsplit('-', 1)[0] + '-512'
c.search(BASE, '(memberOf=<SID=%s>)' % domain_admins, attributes=['cn'])
assert any(e.entry_dn == ADMIN for e in c.entries), c.entries
# Anonymous: the root DSE and nothing else.
a = Connection(Server('127.0.0.1', port=PORT, get_info=None))
a.bind()
assert a.search('', '(objectClass=*)', search_scope=SBASE, attributes=['defaultNamingContext']) and a.entries
a.search(BASE, '(objectClass=user)')
assert code(a) == 1 and '000004DC' in a.result['message'], a.result
print('ok')
"#,
        "root DSE",
    );
}

#[test]
fn binds_by_dn_upn_and_domain_name_with_ad_sub_codes() {
    ldap3(
        r#"
for name in [ADMIN, 'Administrator@samdom.example.com', 'SAMDOM\\Administrator']:
    c = Connection(Server('127.0.0.1', port=PORT), user=name, password=PW)
    assert c.bind(), (name, c.result)
    assert c.extend.standard.who_am_i() == 'u:SAMDOM\\Administrator', c.extend.standard.who_am_i()
bad = Connection(Server('127.0.0.1', port=PORT), user='SAMDOM\\Administrator', password='wrong')
assert not bad.bind()
assert bad.result['result'] == 49 and 'data 52e' in bad.result['message'], bad.result
ghost = Connection(Server('127.0.0.1', port=PORT), user='nobody@samdom.example.com', password='x')
assert not ghost.bind() and 'data 52e' in ghost.result['message']
# AD creates an account with the userAccountControl given, password or not; clearing
# PASSWD_NOTREQD of an enabled account without a password is refused (0000052D).
c0 = plain()
assert c0.add('CN=No Pw,CN=Users,' + BASE, 'user', {'sAMAccountName': 'nopw', 'userAccountControl': '512'}), c0.result
assert c0.delete('CN=No Pw,CN=Users,' + BASE), c0.result
assert c0.add('CN=No Pw,CN=Users,' + BASE, 'user', {'sAMAccountName': 'nopw'}), c0.result
c0.modify('CN=No Pw,CN=Users,' + BASE, {'userAccountControl': [(MODIFY_REPLACE, ['512'])]})
assert code(c0) == 53, c0.result
assert c0.modify('CN=No Pw,CN=Users,' + BASE, {'userAccountControl': [(MODIFY_REPLACE, ['544'])]}), c0.result
# A new account is disabled until enabled: data 533.
c = tls()
dn = 'CN=Bind Test,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'bindtest', 'unicodePwd': quoted('B1nd.Test.Pw')}), c.result
u = Connection(Server('127.0.0.1', port=PORT), user='SAMDOM\\bindtest', password='B1nd.Test.Pw')
assert not u.bind() and 'data 533' in u.result['message'], u.result
assert c.modify(dn, {'userAccountControl': [(MODIFY_REPLACE, ['512'])]}), c.result
assert c.search(dn, '(objectClass=*)', SBASE, attributes=['lastLogonTimestamp']), c.result
assert not c.entries[0].lastLogonTimestamp.values, c.entries[0]
assert u.bind(), u.result
# The first logon's time is written behind the answer, within moments.
import time
for _ in range(100):
    c.search(dn, '(objectClass=*)', SBASE, attributes=['lastLogonTimestamp'])
    if c.entries[0].lastLogonTimestamp.values:
        break
    time.sleep(0.02)
assert c.entries[0].lastLogonTimestamp.values, 'no lastLogonTimestamp after the first bind'
# Must change at next logon: data 773.
assert c.modify(dn, {'pwdLastSet': [(MODIFY_REPLACE, ['0'])]}), c.result
assert not u.bind() and 'data 773' in u.result['message'], u.result
assert c.modify(dn, {'pwdLastSet': [(MODIFY_REPLACE, ['-1'])]}), c.result
assert u.bind(), u.result
print('ok')
"#,
        "binds",
    );
}

#[test]
fn schema_rules_answer_with_ads_result_codes() {
    ldap3(
        r#"
c = plain()
u = 'CN=Rules,CN=Users,' + BASE
def add(dn, classes, attrs):
    c.add(dn, classes, attrs)
    return code(c)
assert add(u, 'user', {'sAMAccountName': 'rules', 'noSuchAttribute': 'x'}) == 16
assert add(u, 'user', {'sAMAccountName': 'rules', 'displayName': ['a', 'b']}) == 19
assert add(u, 'user', {'sAMAccountName': 'rules', 'userAccountControl': 'abc'}) == 21
assert add(u, 'user', {'sAMAccountName': 'rules', 'dc': 'x'}) == 65
assert add(u, 'user', {'sAMAccountName': 'rules', 'objectGUID': b'0123456789abcdef'}) == 53
assert add('CN=pso,CN=Password Settings Container,CN=System,' + BASE, 'msDS-PasswordSettings', {}) == 65
assert add('OU=x,CN=Users,' + BASE, 'user', {}) == 64
assert add(u, 'user', {'sAMAccountName': 'rules', 'userPrincipalName': 'rules@samdom.example.com'}) == 0
assert add('OU=below,' + u, 'organizationalUnit', {}) == 64
assert add('CN=Rules2,CN=Users,' + BASE, 'user', {'sAMAccountName': 'RULES'}) == 68
assert add('CN=Rules3,CN=Users,' + BASE, 'user', {'userPrincipalName': 'Rules@samdom.example.com'}) == 19
# AD's shorthand: a class name for objectCategory.
c.search('CN=Users,' + BASE, '(&(objectCategory=person)(sAMAccountName=rules))', attributes=['cn'])
assert len(c.entries) == 1, c.entries
c.search(u, '(objectClass=*)', search_scope=SBASE, attributes=['objectClass', 'objectCategory', 'sAMAccountType', 'primaryGroupID', 'objectSid', 'instanceType'])
e = c.entries[0]
assert e.objectClass.values == ['top', 'person', 'organizationalPerson', 'user'], e.objectClass.values
assert e.objectCategory.value.startswith('CN=Person,CN=Schema,CN=Configuration,'), e
assert int(e.sAMAccountType.value) == 805306368 and int(e.primaryGroupID.value) == 513 and int(e.instanceType.value) == 4, e
assert len(e.objectSid.raw_values[0]) == 28, e.objectSid.raw_values
c.modify(u, {'memberOf': [(MODIFY_ADD, ['CN=Domain Admins,CN=Users,' + BASE])]})
assert code(c) == 53, c.result
c.modify(u, {'objectClass': [(MODIFY_REPLACE, ['group'])]})
assert code(c) == 65, c.result
print('ok')
"#,
        "schema rules",
    );
}

#[test]
fn groups_links_ranges_chains_and_tokens() {
    ldap3(
        r#"
c = plain()
ou = 'OU=Links,' + BASE
assert c.add(ou, 'organizationalUnit'), c.result
users = []
for i in range(25):
    dn = 'CN=L%02d,%s' % (i, ou)
    assert c.add(dn, 'user', {'sAMAccountName': 'links%02d' % i}), c.result
    users.append(dn)
g = 'CN=Big,' + ou
assert c.add(g, 'group', {'member': users}), c.result
# member comes in ranges of 10 (the server's MaxValRange); ldap3 follows the ranges.
import subprocess
def ranged(attr):
    out = subprocess.run(['ldapsearch', '-LLL', '-x', '-H', 'ldap://127.0.0.1:%d' % PORT, '-D', ADMIN, '-w', PW,
        '-b', g, '-s', 'base', '(objectClass=*)', attr], capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.lower().startswith('member;')]
    assert lines, (out.returncode, out.args, out.stdout, out.stderr)
    return lines
first = ranged('member')
assert len(first) == 10 and first[0].startswith('member;range=0-9:'), first
last = ranged('member;range=20-*')
assert len(last) == 5 and last[0].startswith('member;range=20-*:'), last
c.search(g, '(objectClass=*)', search_scope=SBASE, attributes=['member'])
assert len(c.entries[0].member.values) == 25
c.search(ou, '(memberOf=%s)' % g, attributes=['cn'])
assert len(c.entries) == 25
# Nested groups: ten levels, and the in-chain rule finds every level.
prev = users[0]
chain = []
for i in range(10):
    dn = 'CN=Level%d,%s' % (i, ou)
    assert c.add(dn, 'group', {'member': [prev]}), c.result
    chain.append(dn)
    prev = dn
c.search(ou, '(member:1.2.840.113556.1.4.1941:=%s)' % users[0], attributes=['cn'])
assert len(c.entries) == 11, len(c.entries)
c.search(ou, '(memberOf:1.2.840.113556.1.4.1941:=%s)' % chain[-1], attributes=['cn'])
assert len(c.entries) == 10, len(c.entries)
# A cycle ends the walk.
assert c.modify(chain[0], {'member': [(MODIFY_ADD, [chain[-1]])]}), c.result
c.search(ou, '(member:1.2.840.113556.1.4.1941:=%s)' % users[0], attributes=['cn'])
assert len(c.entries) == 11
# tokenGroups: every group, transitively, with the primary group; base scope only.
c.search(users[0], '(objectClass=*)', search_scope=SBASE, attributes=['tokenGroups'])
sids = c.entries[0].tokenGroups.values
assert len(sids) >= 12 and any(int.from_bytes(s[-4:], 'little') == 513 for s in sids), sids
# Nesting rules: a global group cannot hold a universal one.
assert c.add('CN=Uni,' + ou, 'group', {'groupType': '-2147483640'}), c.result
c.modify(chain[1], {'member': [(MODIFY_ADD, ['CN=Uni,' + ou])]})
assert code(c) == 53, c.result
# Deleting a member removes it from its groups.
assert c.delete(users[24]), c.result
assert len(ranged('member;range=20-*')) == 4
print('ok')
"#,
        "links",
    );
}

#[test]
fn tombstones_and_show_deleted() {
    ldap3(
        r#"
c = plain()
dn = 'CN=Gone,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'gone', 'description': 'soon'}), c.result
assert c.delete(dn), c.result
c.search(BASE, '(sAMAccountName=gone)', attributes=['cn'])
assert len(c.entries) == 0
c.search(BASE, '(sAMAccountName=gone)', attributes=['isDeleted', 'lastKnownParent', 'description', 'distinguishedName'], controls=[('1.2.840.113556.1.4.417', True, None)])
e = c.entries[0]
assert e.isDeleted.value is True or e.isDeleted.value == 'TRUE', e
assert e.lastKnownParent.value == 'CN=Users,' + BASE
# A subtree search of the domain also answers with a reference to the configuration NC.
found = [r for r in c.response if r['type'] == 'searchResEntry']
refs = [r for r in c.response if r['type'] == 'searchResRef']
assert any('CN=Configuration,' in u for r in refs for u in r['uri']), refs
assert not found[0]['raw_attributes'].get('description'), found[0]['raw_attributes']
assert '\\0ADEL:' in e.entry_dn and e.entry_dn.endswith('CN=Deleted Objects,' + BASE), e.entry_dn
# The name is free again; a tree delete removes a subtree in one go.
assert c.add(dn, 'user', {'sAMAccountName': 'gone'}), c.result
ou = 'OU=Tree,' + BASE
assert c.add(ou, 'organizationalUnit') and c.add('CN=t,' + ou, 'user', {'sAMAccountName': 'treeuser'})
c.delete(ou)
assert code(c) == 66, c.result
assert c.delete(ou, controls=[('1.2.840.113556.1.4.805', True, None)]), c.result
c.search(BASE, '(sAMAccountName=treeuser)')
assert len(c.entries) == 0
c.delete(BASE, controls=[('1.2.840.113556.1.4.805', True, None)])
assert code(c) == 53, c.result
print('ok')
"#,
        "tombstones",
    );
}

/// A tree larger than one step goes in one request (in steps between which other writes
/// go), and the limited tree delete control (TREE_DELETE_EX) takes one step of the client's
/// size per request, answering adminLimitExceeded (ERROR_DS_TREE_DELETE_NOT_FINISHED)
/// until the tree is gone, the root last.
#[test]
fn large_trees_are_deleted_in_steps() {
    ldap3(
        r#"
from ldap3 import ASYNC
def fill(ou, n):
    a = Connection(Server('127.0.0.1', port=PORT, get_info=None), user=ADMIN, password=PW, client_strategy=ASYNC)
    a.bind()
    assert a.add(ou, 'organizationalUnit') is not None
    sub = 'OU=Sub,' + ou
    a.add(sub, 'organizationalUnit')
    ids = [a.add('CN=c%d,%s' % (i, sub if i % 2 else ou), 'contact') for i in range(n)]
    for m in ids:
        r = a.get_response(m)[1]
        assert r['result'] == 0, r
    a.unbind()
c = plain()
ou = 'OU=Wide,' + BASE
fill(ou, 2500)
assert c.delete(ou, controls=[('1.2.840.113556.1.4.805', True, None)]), c.result
c.search(BASE, '(objectClass=contact)', attributes=['cn'])
assert not [e for e in c.entries if 'Wide' in e.entry_dn], 'left behind'
c.search(ou, '(objectClass=*)', search_scope=SBASE)
assert code(c) == 32, c.result
# A critical system object anywhere in the tree refuses the whole tree delete before
# anything goes, however far down the walk it comes.
ou = 'OU=Guarded,' + BASE
fill(ou, 1500)
assert c.add('CN=dc9,' + ou, 'computer', {'sAMAccountName': 'dc9$', 'userAccountControl': '532480'}), c.result
for ctl in [None, b'\x30\x04\x02\x02\x01\x2c']:
    oid = '1.2.840.113556.1.4.805' if ctl is None else '1.2.840.113556.1.4.2204'
    c.delete(ou, controls=[(oid, True, ctl)])
    assert code(c) == 53 and c.result['message'].startswith('000020CE'), c.result
    c.search(ou, '(objectClass=contact)', attributes=['cn'], paged_size=1000)
    n = len(c.entries)
    while c.result['controls']['1.2.840.113556.1.4.319']['value']['cookie']:
        c.search(ou, '(objectClass=contact)', attributes=['cn'], paged_size=1000, paged_cookie=c.result['controls']['1.2.840.113556.1.4.319']['value']['cookie'])
        n += len(c.entries)
    assert n == 1500, n
# The limited control: 300 per request.
ou = 'OU=Limited,' + BASE
fill(ou, 700)
ex = [('1.2.840.113556.1.4.2204', True, b'\x30\x04\x02\x02\x01\x2c')]
rounds = 0
while True:
    done = c.delete(ou, controls=ex)
    rounds += 1
    if done:
        break
    assert code(c) == 11, c.result
    assert c.result['message'].startswith('000020CD'), c.result
    c.search(ou, '(objectClass=*)', search_scope=SBASE)
    assert code(c) == 0, ('the root went before its tree', c.result)
assert rounds == 3, rounds
c.search(ou, '(objectClass=*)', search_scope=SBASE)
assert code(c) == 32, c.result
print('ok')
"#,
        "tree delete in steps",
    );
}

#[test]
fn passwords_policies_and_access() {
    ldap3(
        r#"
c = tls()
dn = 'CN=Pat,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'pat', 'userAccountControl': '512', 'unicodePwd': quoted('Sunny.Passw0rd')}), c.result
# Not over a plain connection; the domain policy applies (length, complexity).
p = plain()
p.modify(dn, {'unicodePwd': [(MODIFY_REPLACE, [quoted('Other.Passw0rd')])]})
assert code(p) == 53, p.result
c.modify(dn, {'unicodePwd': [(MODIFY_REPLACE, [quoted('short')])]})
assert code(c) == 19 and '0000052D' in c.result['message'], c.result
# Secrets are never returned, not even to the administrator, nor matched.
c.search(dn, '(objectClass=*)', search_scope=SBASE, attributes=['*', 'unicodePwd', 'supplementalCredentials', 'userPassword'])
attrs = c.response[0]['raw_attributes']
assert not any(v for a, v in attrs.items() if a.lower() in ('unicodepwd', 'supplementalcredentials', 'userpassword')), attrs
c.search(BASE, '(supplementalCredentials=*)')
assert len(c.entries) == 0
# The account reads, changes its own password, and nothing else.
u = tls('SAMDOM\\pat', 'Sunny.Passw0rd')
assert u.search(BASE, '(sAMAccountName=Administrator)', attributes=['cn']) and len(u.entries) == 1
u.modify(dn, {'description': [(MODIFY_REPLACE, ['mine'])]})
assert code(u) == 50, u.result
u.add('CN=Nope,CN=Users,' + BASE, 'user', {})
assert code(u) == 50, u.result
# The domain's minimum password age (1 day) refuses an immediate change.
u.modify(dn, {'unicodePwd': [(MODIFY_DELETE, [quoted('Sunny.Passw0rd')]), (MODIFY_ADD, [quoted('Sunny.Newer.Pw1')])]})
assert code(u) == 19, u.result
# A fine-grained policy for pat: no minimum age, longer passwords.
pso = 'CN=PatPolicy,CN=Password Settings Container,CN=System,' + BASE
assert c.add(pso, 'msDS-PasswordSettings', {
    'msDS-PasswordSettingsPrecedence': '5', 'msDS-PasswordReversibleEncryptionEnabled': 'FALSE',
    'msDS-PasswordHistoryLength': '3', 'msDS-PasswordComplexityEnabled': 'TRUE',
    'msDS-MinimumPasswordLength': '14', 'msDS-MinimumPasswordAge': '0',
    'msDS-MaximumPasswordAge': '-36288000000000', 'msDS-LockoutThreshold': '0',
    'msDS-LockoutObservationWindow': '-18000000000', 'msDS-LockoutDuration': '-18000000000',
    'msDS-PSOAppliesTo': [dn]}), c.result
c.search(dn, '(objectClass=*)', search_scope=SBASE, attributes=['msDS-ResultantPSO'])
assert c.entries[0]['msDS-ResultantPSO'].value == pso, c.entries
u.modify(dn, {'unicodePwd': [(MODIFY_DELETE, [quoted('Wrong.Passw0rd')]), (MODIFY_ADD, [quoted('Sunny.Newer.Passw0rd')])]})
assert code(u) == 19, u.result
u.modify(dn, {'unicodePwd': [(MODIFY_DELETE, [quoted('Sunny.Passw0rd')]), (MODIFY_ADD, [quoted('Sun.New1')])]})
assert code(u) == 19, u.result
assert u.modify(dn, {'unicodePwd': [(MODIFY_DELETE, [quoted('Sunny.Passw0rd')]), (MODIFY_ADD, [quoted('Sunny.Newer.Passw0rd')])]}), u.result
assert tls('pat@samdom.example.com', 'Sunny.Newer.Passw0rd')
# History: the old one cannot come back.
u2 = tls('SAMDOM\\pat', 'Sunny.Newer.Passw0rd')
u2.modify(dn, {'unicodePwd': [(MODIFY_DELETE, [quoted('Sunny.Newer.Passw0rd')]), (MODIFY_ADD, [quoted('Sunny.Passw0rd')])]})
assert code(u2) == 19, u2.result
print('ok')
"#,
        "passwords",
    );
}

/// With crypt forms configured, a password set over LDAP is stored with them (hashed on
/// the connection's blocking thread before the change is queued), and binds with it.
#[test]
fn passwords_keep_the_configured_crypt_forms() {
    ldap3(
        r#"
c = tls()
dn = 'CN=Crypto,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'crypto', 'userAccountControl': '512', 'unicodePwd': quoted('Crypt.Passw0rd.1')}), c.result
assert tls('SAMDOM\\crypto', 'Crypt.Passw0rd.1')
c.modify(dn, {'unicodePwd': [(MODIFY_REPLACE, [quoted('Crypt.Passw0rd.2')])]})
assert code(c) == 0, c.result
print('ok')
"#,
        "crypt forms",
    );
    let dir = &server().dir;
    let r = dir.db().read().unwrap();
    let id = r
        .lookup(&kauri_db::Dn::parse(&format!("CN=Crypto,CN=Users,{BASE}")).unwrap())
        .unwrap()
        .unwrap();
    let secrets = dir.stored_secrets(&r, id).unwrap().unwrap();
    assert!(secrets.verify("Crypt.Passw0rd.2") && secrets.in_history("Crypt.Passw0rd.1"));
    assert!(kauri_domain::password::verify_crypt(
        "Crypt.Passw0rd.2",
        secrets.sha512_crypt()
    ));
    assert!(kauri_domain::password::verify_crypt(
        "Crypt.Passw0rd.2",
        secrets.sha256_crypt()
    ));
}

#[test]
fn lockout_after_bad_passwords() {
    ldap3(
        r#"
c = tls()
pso = 'CN=Lockout,CN=Password Settings Container,CN=System,' + BASE
g = 'CN=Lockable,CN=Users,' + BASE
dn = 'CN=Locky,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'locky', 'userAccountControl': '512', 'unicodePwd': quoted('L0cky.Passw0rd')}), c.result
assert c.add(g, 'group', {'member': [dn]}), c.result
assert c.add(pso, 'msDS-PasswordSettings', {
    'msDS-PasswordSettingsPrecedence': '7', 'msDS-PasswordReversibleEncryptionEnabled': 'FALSE',
    'msDS-PasswordHistoryLength': '0', 'msDS-PasswordComplexityEnabled': 'FALSE',
    'msDS-MinimumPasswordLength': '1', 'msDS-MinimumPasswordAge': '0',
    'msDS-MaximumPasswordAge': '-36288000000000', 'msDS-LockoutThreshold': '2',
    'msDS-LockoutObservationWindow': '-18000000000', 'msDS-LockoutDuration': '-18000000000',
    'msDS-PSOAppliesTo': [g]}), c.result
for i in range(2):
    b = Connection(Server('127.0.0.1', port=PORT), user='SAMDOM\\locky', password='bad')
    assert not b.bind() and 'data 52e' in b.result['message']
b = Connection(Server('127.0.0.1', port=PORT), user='SAMDOM\\locky', password='L0cky.Passw0rd')
assert not b.bind() and 'data 775' in b.result['message'], b.result
c.search(dn, '(objectClass=*)', search_scope=SBASE, attributes=['badPwdCount', 'lockoutTime'])
assert c.entries[0].badPwdCount.value == 2, c.entries
assert c.modify(dn, {'lockoutTime': [(MODIFY_REPLACE, ['0'])]}), c.result
assert b.bind(), b.result
print('ok')
"#,
        "lockout",
    );
}

#[test]
fn schema_extension_over_ldap_with_schema_update_now() {
    ldap3(
        r#"
c = plain()
schema = 'CN=Schema,CN=Configuration,' + BASE
assert c.add('CN=kauri-Shoe-Size,' + schema, 'attributeSchema', {
    'lDAPDisplayName': 'kauriShoeSize', 'attributeID': '1.3.6.1.4.1.99999.7.1',
    'attributeSyntax': '2.5.5.9', 'oMSyntax': '2', 'isSingleValued': 'TRUE', 'searchFlags': '1'}), c.result
assert c.add('CN=kauri-Walker,' + schema, 'classSchema', {
    'lDAPDisplayName': 'kauriWalker', 'governsID': '1.3.6.1.4.1.99999.7.2', 'subClassOf': 'top',
    'objectClassCategory': '3', 'mayContain': ['kauriShoeSize']}), c.result
import subprocess
def root_modify(attr, user=ADMIN, pw=PW):
    return subprocess.run(['ldapmodify', '-x', '-H', 'ldap://127.0.0.1:%d' % PORT, '-D', user, '-w', pw],
        input='dn:\nchangetype: modify\nadd: %s\n%s: 1\n' % (attr, attr), capture_output=True, text=True)
r = root_modify('schemaUpdateNow')
assert r.returncode == 0, r.stderr
assert c.add('CN=Walker,CN=Users,' + BASE, ['user', 'kauriWalker'], {'sAMAccountName': 'walker', 'kauriShoeSize': '44'}), c.result
c.search(BASE, '(kauriShoeSize>=40)', attributes=['kauriShoeSize', 'objectClass'])
assert len(c.entries) == 1 and 'kauriWalker' in c.entries[0].objectClass.values, c.entries
# The subschema entry shows the new attribute.
c.search('CN=Aggregate,' + schema, '(objectClass=*)', search_scope=SBASE, attributes=['attributeTypes'])
assert any('kauriShoeSize' in v for v in c.response[0]['attributes']['attributeTypes'])
# A clashing definition is refused.
c.add('CN=kauri-Dup,' + schema, 'attributeSchema', {
    'lDAPDisplayName': 'kauriShoeSize', 'attributeID': '1.3.6.1.4.1.99999.7.3',
    'attributeSyntax': '2.5.5.9', 'oMSyntax': '2', 'isSingleValued': 'TRUE'})
assert code(c) == 53, c.result
# The root DSE takes schemaUpdateNow only.
assert root_modify('description').returncode == 53
# An existing class takes a new optional attribute (a LAPS-style update): computers may
# then hold it, and the attribute is confidential (searchFlags 0x80) from the start.
assert c.add('CN=kauri-Admin-Secret,' + schema, 'attributeSchema', {
    'lDAPDisplayName': 'kauriAdminSecret', 'attributeID': '1.3.6.1.4.1.99999.7.4',
    'attributeSyntax': '2.5.5.12', 'oMSyntax': '64', 'isSingleValued': 'TRUE', 'searchFlags': '128'}), c.result
ws = 'CN=WS7,CN=Computers,' + BASE
assert c.add(ws, 'computer', {'sAMAccountName': 'ws7$'}), c.result
c.modify(ws, {'kauriAdminSecret': [(MODIFY_REPLACE, ['s3cret'])]})
assert code(c) == 65, c.result
assert c.modify('CN=Computer,' + schema, {'mayContain': [(MODIFY_ADD, ['kauriAdminSecret'])]}), c.result
assert root_modify('schemaUpdateNow').returncode == 0
assert c.modify(ws, {'kauriAdminSecret': [(MODIFY_REPLACE, ['s3cret'])]}), c.result
c.search(ws, '(objectClass=*)', search_scope=SBASE, attributes=['kauriAdminSecret'])
assert c.entries[0].kauriAdminSecret.value == 's3cret', c.entries
# Only those changes: a class's superclass, an attribute's syntax stay as they are.
c.modify('CN=Computer,' + schema, {'subClassOf': [(MODIFY_REPLACE, ['top'])]})
assert code(c) in (19, 53), c.result
c.modify('CN=kauri-Shoe-Size,' + schema, {'attributeSyntax': [(MODIFY_REPLACE, ['2.5.5.12'])]})
assert code(c) in (19, 53), c.result
c.modify('CN=Computer,' + schema, {'description': [(MODIFY_REPLACE, ['a computer'])], 'lDAPDisplayName': [(MODIFY_REPLACE, ['pc'])]})
assert code(c) in (19, 53), c.result
# An attribute gains an index: searches on it are indexed after the update.
assert c.modify('CN=kauri-Shoe-Size,' + schema, {'searchFlags': [(MODIFY_REPLACE, ['0'])]}), c.result
print('ok')
"#,
        "schema extension",
    );
}

#[test]
fn python_ldap_and_ldap_utils_on_the_domain() {
    let s = server();
    python_with(
        "/usr/bin/python3",
        r#"
import ldap
c = ldap.initialize('ldap://127.0.0.1:%d' % PORT)
c.simple_bind_s('SAMDOM\\Administrator', PW)
r = c.search_s(BASE, ldap.SCOPE_SUBTREE, '(sAMAccountName=krbtgt)', ['userAccountControl', 'objectSid'])
assert r and r[0][1]['userAccountControl'] == [b'514'], r
try:
    c.add_s('CN=X,CN=Users,' + BASE, [('objectClass', [b'user']), ('bogusAttr', [b'1'])])
    raise SystemExit('no error')
except ldap.NO_SUCH_ATTRIBUTE:
    pass
print('ok')
"#,
        "python-ldap",
    );
    // ldappasswd (the password modify extended operation) over StartTLS: an account
    // changes its own password with the old one.
    let ca = s.ca();
    let uri = format!("ldap://localhost:{}", s.port);
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .env("LDAPTLS_CACERT", &ca)
            .output()
            .unwrap()
    };
    let ldif = format!(
        "dn: CN=Pwd Modify,CN=Users,{BASE}\nobjectClass: user\nsAMAccountName: pwdmodify\nuserAccountControl: 512\nuserPassword: Initial.Passw0rd\n"
    );
    let mut child = Command::new("ldapadd")
        .args(["-ZZ", "-x", "-H", &uri, "-D", ADMIN, "-w", PW])
        .env("LDAPTLS_CACERT", &ca)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ldif.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // The minimum password age stops an immediate change by the user…
    let o = run(&[
        "ldappasswd",
        "-ZZ",
        "-x",
        "-H",
        &uri,
        "-D",
        "pwdmodify@samdom.example.com",
        "-w",
        "Initial.Passw0rd",
        "-a",
        "Initial.Passw0rd",
        "-s",
        "Changed.Passw0rd1",
    ]);
    assert!(
        text(&o).contains("Constraint violation (19)"),
        "{}",
        text(&o)
    );
    // …an administrator resets it.
    let o = run(&[
        "ldappasswd",
        "-ZZ",
        "-x",
        "-H",
        &uri,
        "-D",
        ADMIN,
        "-w",
        PW,
        "-s",
        "Reset.Passw0rd1",
        &format!("CN=Pwd Modify,CN=Users,{BASE}"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&[
        "ldapwhoami",
        "-ZZ",
        "-x",
        "-H",
        &uri,
        "-D",
        "SAMDOM\\pwdmodify",
        "-w",
        "Reset.Passw0rd1",
    ]);
    assert!(text(&o).contains("u:SAMDOM\\pwdmodify"), "{}", text(&o));
}

#[test]
fn hidden_values_stay_hidden_and_protected_objects_stay_put() {
    ldap3(
        r#"
from ldap3.protocol.rfc2696 import paged_search_control
c = tls()
dn = 'CN=Quinn,CN=Users,' + BASE
assert c.add(dn, 'user', {'sAMAccountName': 'quinn', 'userAccountControl': '512', 'unicodePwd': quoted('Sunny.Passw0rd')}), c.result
u = tls('SAMDOM\\quinn', 'Sunny.Passw0rd')
# Sorting by a hidden attribute would order by its values: refused.
u.search(BASE, '(objectClass=user)', attributes=['cn'], controls=[('1.2.840.113556.1.4.473', True, b'0\x1b0\x19\x04\x17supplementalCredentials')])
assert code(u) == 50, u.result
# An extensible match without an attribute would test hidden values: it matches nothing.
import subprocess
r = subprocess.run(['ldapsearch', '-LLL', '-x', '-H', 'ldap://127.0.0.1:%d' % PORT, '-D', 'SAMDOM\\quinn',
    '-w', 'Sunny.Passw0rd', '-b', BASE, '(:caseExactMatch:=Administrator)', 'cn'], capture_output=True, text=True)
assert r.returncode == 0 and 'dn:' not in r.stdout, (r.returncode, r.stdout, r.stderr)
# Deleted objects are for administrators.
assert c.add('CN=Gone2,CN=Users,' + BASE, 'user', {'sAMAccountName': 'gone2'}) and c.delete('CN=Gone2,CN=Users,' + BASE)
u.search(BASE, '(sAMAccountName=gone2)', attributes=['cn'], controls=[('1.2.840.113556.1.4.417', True, None)])
assert len(u.entries) == 0, u.entries
c.search(BASE, '(sAMAccountName=gone2)', attributes=['cn'], controls=[('1.2.840.113556.1.4.417', True, None)])
assert len(c.entries) == 1, c.entries
# A password by OID or with an option still is a password (so not over plain LDAP).
p = plain()
p.modify(dn, {'1.2.840.113556.1.4.90': [(MODIFY_REPLACE, [quoted('Other.Passw0rd')])]})
assert code(p) == 53, p.result
p.modify(dn, {'unicodePwd;binary': [(MODIFY_REPLACE, [quoted('Other.Passw0rd')])]})
assert code(p) == 53, p.result
# Password material is never written directly (AD: unwillingToPerform), and only
# accounts have passwords.
c.modify(dn, {'supplementalCredentials': [(MODIFY_REPLACE, [b'x'])]})
assert code(c) == 53, c.result
c.modify('OU=Domain Controllers,' + BASE, {'unicodePwd': [(MODIFY_REPLACE, [quoted('Other.Passw0rd')])]})
assert code(c) == 65, c.result
# A range that ends before it starts gets nothing, and the server carries on.
c.search('CN=Domain Admins,CN=Users,' + BASE, '(objectClass=*)', search_scope=SBASE, attributes=['member;range=5-3'])
assert code(c) == 0, c.result
# Naming-context heads do not move or change name (a new name above the contexts held here
# has no parent object: AD's other, 80); nothing moves to another partition.
c.modify_dn(BASE, 'DC=other')
assert code(c) == 80, c.result
c.modify_dn(BASE, 'DC=other', new_superior='CN=Users,' + BASE)
assert code(c) == 53, c.result
c.modify_dn(dn, 'CN=Quinn', new_superior='CN=Configuration,' + BASE)
assert code(c) == 71, c.result
# A tombstone is no one's member.
c.search('CN=Deleted Objects,' + BASE, '(sAMAccountName=gone2)', attributes=['objectGUID'], controls=[('1.2.840.113556.1.4.417', True, None)])
guid = c.entries[0].objectGUID.value.strip('{}')
c.modify('CN=Domain Admins,CN=Users,' + BASE, {'member': [(MODIFY_ADD, ['<GUID=%s>' % guid])]})
assert code(c) == 32, c.result
# Compare works on linked attributes.
assert c.compare('CN=Domain Admins,CN=Users,' + BASE, 'member', ADMIN) is True, c.result
assert c.compare('CN=Domain Admins,CN=Users,' + BASE, 'member', dn) is False, c.result
assert c.compare(ADMIN, 'memberOf', 'CN=Domain Admins,CN=Users,' + BASE) is True, c.result
assert c.compare('CN=Domain Admins,CN=Users,' + BASE, 'member', 'CN=Nobody,' + BASE) is False, c.result
# A group without members has no member attribute to compare.
assert c.add('CN=Empty,CN=Users,' + BASE, 'group'), c.result
c.compare('CN=Empty,CN=Users,' + BASE, 'member', ADMIN)
assert code(c) == 16, c.result
# Existing schema definitions take only additive changes.
c.modify('CN=Given-Name,CN=Schema,CN=Configuration,' + BASE, {'rangeUpper': [(MODIFY_REPLACE, ['10'])]})
assert code(c) in (19, 53), c.result
print('ok')
"#,
        "hidden values and protected objects",
    );
}

#[test]
fn paging_names_and_metadata_as_ad_answers() {
    ldap3(
        r#"
import struct
c = plain()
users = 'CN=Users,' + BASE
for i in range(5):
    assert c.add('CN=Pager %d,%s' % (i, users), 'user', {'sAMAccountName': 'pager%d' % i, 'givenName': 'Ann', 'sn': 'Lee%d' % i}), c.result
# A paged search continues only with the request it started with.
c.search(users, '(sAMAccountName=pager*)', paged_size=2, attributes=['cn'])
cookie = c.result['controls']['1.2.840.113556.1.4.319']['value']['cookie']
assert cookie
c.search(users, '(sAMAccountName=pager1)', paged_size=2, paged_cookie=cookie, attributes=['cn'])
assert code(c) == 12, c.result
# Ambiguous name resolution: a prefix of any ANR attribute, or first and last name.
c.search(users, '(anr=pager3)', attributes=['cn'])
assert [e.cn.value for e in c.entries] == ['Pager 3'], c.entries
c.search(users, '(anr=ann lee2)', attributes=['cn'])
assert [e.cn.value for e in c.entries] == ['Pager 2'], c.entries
# Every account has a key version; replPropertyMetaData counts changes per attribute.
dn = 'CN=Pager 0,' + users
c.search(dn, '(objectClass=*)', search_scope=SBASE, attributes=['msDS-KeyVersionNumber', 'replPropertyMetaData'])
raw = c.response[0]['raw_attributes']
assert raw['msDS-KeyVersionNumber'] == [b'1'], raw
blob = raw['replPropertyMetaData'][0]
version, _, count, _ = struct.unpack('<IIII', blob[:16])
assert version == 1 and count > 0 and len(blob) == 16 + 48 * count, (version, count, len(blob))
lines = {struct.unpack('<II', blob[16 + 48 * i:24 + 48 * i])[0]: struct.unpack('<II', blob[16 + 48 * i:24 + 48 * i])[1] for i in range(count)}
assert lines.get(0x2000d) is None and lines.get(0x90001) == 1, lines  # name, version 1
c.modify(dn, {'displayName': [(MODIFY_REPLACE, ['One'])]})
c.modify(dn, {'displayName': [(MODIFY_REPLACE, ['Two'])]})
c.search(dn, '(objectClass=*)', search_scope=SBASE, attributes=['replPropertyMetaData', '*'])
raw = c.response[0]['raw_attributes']
assert 'msDS-KeyVersionNumber' not in raw, sorted(raw)
blob = raw['replPropertyMetaData'][0]
count = struct.unpack('<I', blob[8:12])[0]
lines = {struct.unpack('<II', blob[16 + 48 * i:24 + 48 * i])[0]: struct.unpack('<II', blob[16 + 48 * i:24 + 48 * i])[1] for i in range(count)}
assert lines.get(0x2000d) == 2, lines  # displayName changed twice
# An attribute an administrator defined can be renamed; its values follow.
schema = 'CN=Schema,CN=Configuration,' + BASE
attr = 'CN=kauri-Nick,' + schema
assert c.add(attr, 'attributeSchema', {'attributeID': '1.3.6.1.4.1.7165.4.6.1.6.77.1', 'attributeSyntax': '2.5.5.12', 'oMSyntax': '64', 'isSingleValued': 'TRUE', 'lDAPDisplayName': 'kauriNick'}), c.result
c.search(attr, '(objectClass=*)', search_scope=SBASE, attributes=['msDS-IntId'])
assert int(c.entries[0]['msDS-IntId'].value) < 0, c.entries  # drawn from 0x80000000 up
assert c.add('CN=kauri-Nicked,' + schema, 'classSchema', {'governsID': '1.3.6.1.4.1.7165.4.6.2.6.77.1', 'subClassOf': 'top', 'objectClassCategory': '3', 'mayContain': 'kauriNick', 'lDAPDisplayName': 'kauriNicked'}), c.result
assert c.modify(dn, {'objectClass': [(MODIFY_ADD, ['kauriNicked'])], 'kauriNick': [(MODIFY_ADD, ['zed'])]}), c.result
assert c.modify(attr, {'lDAPDisplayName': [(MODIFY_REPLACE, ['kauriAlias'])]}), c.result
c.search(users, '(kauriAlias=zed)', attributes=['kauriAlias'])
assert [e.entry_dn for e in c.entries] == [dn] and c.entries[0].kauriAlias.value == 'zed', c.entries
# An attribute scoped query runs over a group's members.
asq = ('1.2.840.113556.1.4.1504', True, bytes.fromhex('30080406') + b'member')
c.search('CN=Domain Admins,' + users, '(objectClass=user)', search_scope=SBASE, attributes=['cn'], controls=[asq])
assert code(c) == 0 and [e.entry_dn for e in c.entries] == ['CN=Administrator,' + users], (c.result, c.entries)
c.search('CN=Domain Admins,' + users, '(objectClass=*)', attributes=['cn'], controls=[asq])
assert code(c) == 53, c.result
# Subnets are named by their network.
subnets = 'CN=Subnets,CN=Sites,CN=Configuration,' + BASE
assert c.add('CN=10.9.0.0/16,' + subnets, 'subnet'), c.result
c.add('CN=10.9.0.1/16,' + subnets, 'subnet')
assert code(c) == 34, c.result
# The name of a base-schema attribute stays.
c.modify('CN=Common-Name,' + schema, {'lDAPDisplayName': [(MODIFY_REPLACE, ['commonName2'])]})
assert code(c) == 53, c.result
print('ok')
"#,
        "paging, names and metadata",
    );
}

/// python ldap3's NTLM bind (Sicily, MS-ADTS 5.1.1.1.3), unmodified: the same identity, token
/// and refusals as any other bind.
#[test]
fn ldap3_binds_with_ntlm() {
    ldap3(
        r#"
from ldap3 import NTLM
def ntlm(pw):
    return Connection(Server('127.0.0.1', port=PORT, get_info=None), user='SAMDOM\\Administrator', password=pw, authentication=NTLM, raise_exceptions=False)
c = ntlm(PW)
assert c.bind(), c.result
assert c.extend.standard.who_am_i() == 'u:SAMDOM\\Administrator', c.extend.standard.who_am_i()
c.search(BASE, '(sAMAccountName=Administrator)', attributes=['cn'])
assert len(c.entries) == 1, c.entries
c.search('', '(objectClass=*)', search_scope=SBASE, attributes=['tokenGroups'])
sids = c.response[0]['raw_attributes']['tokenGroups']
assert b'\x01\x02\x00\x00\x00\x00\x00\x05\x40\x00\x00\x00\x0a\x00\x00\x00' in sids, 'no NTLM authentication SID (S-1-5-64-10)'
bad = ntlm('wrong')
assert not bad.bind()
assert 'data 52e' in bad.result['message'], bad.result
print('ok')
"#,
        "ldap3 with NTLM",
    );
}
