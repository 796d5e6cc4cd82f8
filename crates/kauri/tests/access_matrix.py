"""Who may read and write what in a freshly provisioned domain, asked with python ldap3.

Run by crates/kauri/tests/access.rs against a served domain:
    access_matrix.py HOST:PORT BASE ADMIN_PASSWORD

Sets up, as Administrator: users alice, bob, carol, dave, erin; an OU Branch holding a user
frank; a group Helpdesk (carol) granted User-Force-Change-Password on OU=Branch's users; dave in
Account Operators; erin in Domain Admins; a confidential value (msPKIRoamingTimeStamp) on
bob. Then checks, for anonymous, an ordinary user, the user on itself, the helpdesk member, an
account operator and a Domain Admin, both what is allowed and what is refused, with the result
codes AD gives. Prints one line per check and exits non-zero when any fails.
"""

import subprocess
import sys

import ldap3
from ldap3.core.exceptions import LDAPException

HOST, BASE, ADMIN_PW = sys.argv[1], sys.argv[2], sys.argv[3]
USERS = f"CN=Users,{BASE}"
BRANCH = f"OU=Branch,{BASE}"
PW = "Matrix-Pass.1"
RESET_PASSWORD = "00299570-246d-11d0-a768-00aa006e0529"
USER_CLASS = "bf967aba-0de6-11d0-a285-00aa003049e2"

failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def connect(user=None, password=None):
    server = ldap3.Server(HOST, get_info=ldap3.NONE)
    if user is None:
        return ldap3.Connection(server, auto_bind=True, raise_exceptions=False)
    return ldap3.Connection(server, user=user, password=password, auto_bind=True,
                            raise_exceptions=False)


def pw_value(p):
    return f'"{p}"'.encode("utf-16-le")


admin = connect(f"CN=Administrator,{USERS}", ADMIN_PW)


def must(conn, ok, what):
    if not ok:
        raise SystemExit(f"setup failed: {what}: {conn.result}")


def add_user(name, parent=USERS):
    dn = f"CN={name},{parent}"
    must(admin, admin.add(dn, ["user"], {"sAMAccountName": name}), f"add {name}")
    must(admin, admin.modify(dn, {"unicodePwd": [(ldap3.MODIFY_REPLACE, [pw_value(PW)])]}),
         f"password of {name}")
    must(admin, admin.modify(dn, {"userAccountControl": [(ldap3.MODIFY_REPLACE, ["512"])]}),
         f"enable {name}")
    return dn


def sid_of(dn):
    """The object's SID in its text form (S-1-5-21-…), from the binary value."""
    admin.search(dn, "(objectClass=*)", ldap3.BASE, attributes=["objectSid"])
    raw = admin.response[0]["raw_attributes"]["objectSid"][0]
    authority = int.from_bytes(raw[2:8], "big")
    subs = [int.from_bytes(raw[8 + 4 * i:12 + 4 * i], "little") for i in range(raw[1])]
    return "-".join(["S", str(raw[0]), str(authority)] + [str(x) for x in subs])


must(admin, admin.add(BRANCH, ["organizationalUnit"]), "add OU=Branch")
alice, bob, carol, dave, erin = (add_user(n) for n in ["alice", "bob", "carol", "dave", "erin"])
frank = add_user("frank", BRANCH)
helpdesk = f"CN=Helpdesk,{USERS}"
must(admin, admin.add(helpdesk, ["group"], {"sAMAccountName": "Helpdesk", "member": [carol]}),
     "add Helpdesk")
must(admin, admin.modify(f"CN=Account Operators,CN=Builtin,{BASE}",
                         {"member": [(ldap3.MODIFY_ADD, [dave])]}), "dave in Account Operators")
must(admin, admin.modify(f"CN=Domain Admins,{USERS}", {"member": [(ldap3.MODIFY_ADD, [erin])]}),
     "erin in Domain Admins")
# Passwords may be changed at once (the default minimum age is a day).
must(admin, admin.modify(BASE, {"minPwdAge": [(ldap3.MODIFY_REPLACE, ["0"])]}), "minPwdAge 0")
must(admin, admin.modify(bob, {"msPKIRoamingTimeStamp": [(ldap3.MODIFY_REPLACE, [b"12345678"])]}),
     "a confidential value on bob")

# The delegation: Helpdesk resets passwords of the users below OU=Branch, written by
# samba-tool dsacl (another real client).
def dsacl_set(dn, ace):
    out = subprocess.run(
        ["samba-tool", "dsacl", "set", "-H", f"ldap://{HOST}",
         f"--simple-bind-dn=CN=Administrator,{USERS}", f"--password={ADMIN_PW}",
         f"--objectdn={dn}", f"--sddl={ace}"],
        capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"samba-tool dsacl set {ace} on {dn}: {out.stdout}{out.stderr}")


helpdesk_sid = sid_of(helpdesk)
dsacl_set(BRANCH, f"(OA;CI;CR;{RESET_PASSWORD};{USER_CLASS};{helpdesk_sid})")


def read(conn, dn, attrs=("*",)):
    """(result code, attributes returned) of a base search."""
    conn.search(dn, "(objectClass=*)", ldap3.BASE, attributes=list(attrs))
    if conn.result["result"] != 0:
        return conn.result["result"], {}
    return 0, {k.lower(): v for k, v in conn.response[0]["raw_attributes"].items() if v}


def code(conn, ok):
    return 0 if ok else conn.result["result"]


def replace(conn, dn, attr, value):
    return code(conn, conn.modify(dn, {attr: [(ldap3.MODIFY_REPLACE, [value])]}))


def change_password(conn, dn, old, new):
    return code(conn, conn.modify(dn, {"unicodePwd": [(ldap3.MODIFY_DELETE, [pw_value(old)]),
                                                      (ldap3.MODIFY_ADD, [pw_value(new)])]}))


def reset_password(conn, dn, new):
    return code(conn, conn.modify(dn, {"unicodePwd": [(ldap3.MODIFY_REPLACE, [pw_value(new)])]}))


def add(conn, dn, cls="user", attrs=None):
    return code(conn, conn.add(dn, [cls], attrs or {"sAMAccountName": dn.split(",")[0][3:]}))


def delete(conn, dn):
    return code(conn, conn.delete(dn))


def count(conn, base, flt):
    conn.search(base, flt, ldap3.SUBTREE, attributes=["cn"])
    return len([r for r in conn.response if r.get("type") == "searchResEntry"])


# Anonymous: the root DSE, nothing below it.
anon = connect()
anon.search("", "(objectClass=*)", ldap3.BASE, attributes=["defaultNamingContext"])
check("anonymous reads the root DSE", anon.result["result"] == 0 and len(anon.response) == 1)
anon.search(BASE, "(objectClass=*)", ldap3.SUBTREE, attributes=["cn"])
check("anonymous cannot search the domain (operationsError)", anon.result["result"] == 1)
check("anonymous cannot add (operationsError)", add(anon, f"CN=anon1,{USERS}") == 1)

# A wrong password is refused (and logged as a failed logon).
bad = ldap3.Connection(ldap3.Server(HOST, get_info=ldap3.NONE), user=alice, password="Wrong-Pass.0",
                       raise_exceptions=False)
check("a wrong password is refused (49)", not bad.bind() and bad.result["result"] == 49)

# An ordinary user.
a = connect(alice, PW)
rc, attrs = read(a, bob)
check("user reads another user's public attributes",
      rc == 0 and "samaccountname" in attrs and "cn" in attrs)
check("user cannot read another's confidential attribute", "mspkiroamingtimestamp" not in attrs)
check("user never reads password hashes", "unicodepwd" not in attrs and "ntpwdhistory" not in attrs)
check("a filter on a confidential attribute matches nothing for the user",
      count(a, USERS, "(msPKIRoamingTimeStamp=*)") == 0)
check("a negated filter on it treats the value as absent",
      count(a, bob, "(!(msPKIRoamingTimeStamp=*))") == 1)
check("user cannot write another user's description (50)",
      replace(a, bob, "description", "x") == 50)
check("user cannot add users in CN=Users (50)", add(a, f"CN=alice2,{USERS}") == 50)
check("user cannot delete another user (50)", delete(a, bob) == 50)
check("user cannot reset another user's password (50)", reset_password(a, bob, "Other-Pass.2") == 50)
check("user cannot add members to a group (50)",
      code(a, a.modify(helpdesk, {"member": [(ldap3.MODIFY_ADD, [bob])]})) == 50)

# The user on itself.
check("user writes its own telephone number (Personal-Information)",
      replace(a, alice, "telephoneNumber", "555-0100") == 0)
check("user cannot write its own description (50)", replace(a, alice, "description", "me") == 50)
check("user cannot write its own group memberships (50)",
      code(a, a.modify(helpdesk, {"member": [(ldap3.MODIFY_ADD, [alice])]})) == 50)
check("user changes its own password knowing the old one",
      change_password(a, alice, PW, "Changed-Pass.7") == 0)
rc, attrs = read(connect(bob, PW), bob, ["msPKIRoamingTimeStamp"])
check("a user reads its own confidential attribute (Private-Information)",
      "mspkiroamingtimestamp" in attrs)

# A member of a group delegated password resets on one OU.
c = connect(carol, PW)
check("helpdesk resets a password in OU=Branch", reset_password(c, frank, "Branch-Reset.9") == 0)
check("helpdesk cannot reset a password outside OU=Branch (50)",
      reset_password(c, bob, "Bob-New.2") == 50)
check("helpdesk cannot write other attributes in OU=Branch (50)",
      replace(c, frank, "description", "x") == 50)
check("the reset password works", connect(frank, "Branch-Reset.9").bound)

# An account operator.
d = connect(dave, PW)
check("account operator creates a user in CN=Users", add(d, f"CN=dave1,{USERS}") == 0)
check("account operator creates a user in an OU", add(d, f"CN=dave2,{BRANCH}") == 0)
check("account operator writes a user's description", replace(d, bob, "description", "ok") == 0)
check("account operator cannot write the domain object (50)",
      replace(d, BASE, "description", "x") == 50)
# Account Operators hold full control of user objects (the class default), control access
# included, so they read confidential attributes of users as AD lets them.
check("account operator reads a user's confidential attribute (full control of users)",
      "mspkiroamingtimestamp" in read(d, bob, ["msPKIRoamingTimeStamp"])[1])
check("account operator deletes the user it created", delete(d, f"CN=dave1,{USERS}") == 0)

# A Domain Admin.
e = connect(erin, PW)
check("domain admin reads a confidential attribute",
      "mspkiroamingtimestamp" in read(e, bob, ["msPKIRoamingTimeStamp"])[1])
check("domain admin writes the domain object", replace(e, BASE, "description", "domain") == 0)
check("domain admin resets any password", reset_password(e, bob, "Reset-Other.4") == 0)
check("domain admin creates and deletes anywhere",
      add(e, f"CN=erin1,{BRANCH}") == 0 and delete(e, f"CN=erin1,{BRANCH}") == 0)
check("domain admin reads descriptors with SACL",
      "ntsecuritydescriptor" in read(e, bob, ["nTSecurityDescriptor"])[1])
check("an ordinary user reads no descriptor without SD flags (SACL asked)",
      "ntsecuritydescriptor" not in read(a, bob, ["nTSecurityDescriptor"])[1])

# Hiding a container's contents from one user: deny alice list contents on OU=Branch.
dsacl_set(BRANCH, f"(D;;LC;;;{sid_of(alice)})")
check("objects below an OU the user may not list are invisible in a subtree search",
      count(a, BRANCH, "(objectClass=user)") == 0)
rc, _ = read(a, frank)
check("a base search of an invisible object is noSuchObject (32)", rc == 32)
check("an administrator still sees them", count(admin, BRANCH, "(objectClass=user)") >= 1)
check("another user still sees them", count(connect(bob, "Reset-Other.4"), BRANCH, "(objectClass=user)") >= 1)

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
