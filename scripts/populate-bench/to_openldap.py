#!/usr/bin/env python3
"""Turn a `kauri ldif export` of a populated domain into the same data shape in
OpenLDAP's standard schema (core, cosine, inetorgperson, nis), for `slapadd -q`.

usage: to_openldap.py DOMAIN.ldif DNS.ldif > out.ldif

Same DNs, same OUs, users, computers, groups, memberships, managers and DNS names:
users -> inetOrgPerson, computers -> inetOrgPerson (SPNs as labeledURI), groups ->
groupOfNames (an empty group lists itself, as groupOfNames needs a member), DNS names
-> dNSDomain with aRecord.
"""
import base64
import sys

SUFFIX = "DC=samdom,DC=example,DC=com"


def entries(path):
    with open(path, encoding="utf-8") as f:
        cur = []
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if cur:
                    yield parse(cur)
                    cur = []
                continue
            if line.startswith(" ") and cur:
                cur[-1] += line[1:]
            elif not line.startswith("#"):
                cur.append(line)
        if cur:
            yield parse(cur)


def parse(lines):
    attrs = {}
    dn = None
    for l in lines:
        if "::" in l.split(":", 1)[0] + ":" + l.split(":", 1)[1][:1]:
            name, v = l.split("::", 1)
            val = base64.b64decode(v.strip())
        else:
            name, v = l.split(":", 1)
            val = v[1:] if v.startswith(" ") else v
            val = val.encode()
        if name.lower() == "dn":
            dn = val.decode()
            continue
        attrs.setdefault(name.lower(), []).append(val)
    return dn, attrs


def out(dn, pairs):
    sys.stdout.write(f"dn: {dn}\n")
    for k, v in pairs:
        if isinstance(v, bytes):
            try:
                v = v.decode()
            except UnicodeDecodeError:
                sys.stdout.write(f"{k}:: {base64.b64encode(v).decode()}\n")
                continue
        sys.stdout.write(f"{k}: {v}\n")
    sys.stdout.write("\n")


def first(a, k):
    v = a.get(k)
    return v[0].decode() if v else None


def main():
    dom, dns = sys.argv[1], sys.argv[2]
    out(SUFFIX, [("objectClass", "top"), ("objectClass", "dcObject"),
                 ("objectClass", "organization"), ("dc", "samdom"), ("o", "Samdom")])
    counts = {}
    for dn, a in entries(dom):
        ocs = {o.decode().lower() for o in a.get("objectclass", [])}
        if dn == SUFFIX or "OU=" not in dn or "OU=Domain Controllers" in dn:
            continue
        if "organizationalunit" in ocs:
            out(dn, [("objectClass", "organizationalUnit"), ("ou", first(a, "ou")),
                     ("description", first(a, "description"))])
            counts["ou"] = counts.get("ou", 0) + 1
        elif "computer" in ocs:
            pairs = [("objectClass", "inetOrgPerson"), ("cn", first(a, "cn")),
                     ("sn", first(a, "cn")), ("uid", first(a, "samaccountname")),
                     ("displayName", first(a, "dnshostname")),
                     ("title", first(a, "operatingsystem")),
                     ("description", first(a, "description"))]
            pairs += [("labeledURI", s) for s in a.get("serviceprincipalname", [])]
            out(dn, pairs)
            counts["computer"] = counts.get("computer", 0) + 1
        elif "user" in ocs:
            pairs = [("objectClass", "inetOrgPerson")]
            for src, dst in [("cn", "cn"), ("sn", "sn"), ("givenname", "givenName"),
                             ("initials", "initials"), ("displayname", "displayName"),
                             ("samaccountname", "uid"), ("mail", "mail"),
                             ("title", "title"), ("department", "departmentNumber"),
                             ("company", "o"),
                             ("physicaldeliveryofficename", "physicalDeliveryOfficeName"),
                             ("streetaddress", "street"),
                             ("telephonenumber", "telephoneNumber"), ("mobile", "mobile"),
                             ("employeeid", "employeeNumber"),
                             ("employeetype", "employeeType"),
                             ("description", "description"), ("manager", "manager")]:
                for v in a.get(src, []):
                    pairs.append((dst, v))
            out(dn, pairs)
            counts["user"] = counts.get("user", 0) + 1
        elif "group" in ocs:
            members = a.get("member", []) or [dn.encode()]
            pairs = [("objectClass", "groupOfNames"), ("cn", first(a, "cn")),
                     ("description", first(a, "description"))]
            pairs += [("owner", v) for v in a.get("managedby", [])]
            pairs += [("member", v) for v in members]
            out(dn, pairs)
            counts["group"] = counts.get("group", 0) + 1
            counts["membership"] = counts.get("membership", 0) + len(a.get("member", []))
    dz = "DC=DomainDnsZones," + SUFFIX
    out(dz, [("objectClass", "dcObject"), ("objectClass", "organizationalUnit"),
             ("dc", "DomainDnsZones"), ("ou", "DomainDnsZones")])
    ms = "CN=MicrosoftDNS," + dz
    out(ms, [("objectClass", "organizationalRole"), ("cn", "MicrosoftDNS")])
    zone = "DC=samdom.example.com," + ms
    out(zone, [("objectClass", "dNSDomain"), ("dc", "samdom.example.com")])
    for dn, a in entries(dns):
        low = dn.lower()
        if not dn.endswith("," + zone) or not (low.startswith("dc=ws") or low.startswith("dc=srv")):
            continue
        rec = a.get("dnsrecord", [b""])[0]
        if len(rec) < 28 or rec[2:4] != b"\x01\x00":
            continue
        ip = ".".join(str(b) for b in rec[-4:])
        out(dn, [("objectClass", "dNSDomain"), ("dc", first(a, "dc")), ("aRecord", ip)])
        counts["dns"] = counts.get("dns", 0) + 1
    print(counts, file=sys.stderr)


main()
