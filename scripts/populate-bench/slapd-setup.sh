#!/usr/bin/env bash
# slapd.conf for slapadd -q runs: $1 = directory, $2 = "basic" (the bench script's four
# indexes) or "ad" (the attributes Kauri's AD schema indexes that this data holds).
set -euo pipefail
D=$1; KIND=${2:-basic}
mkdir -p "$D/db"
S=/etc/ldap/schema
{
cat <<CONF
include $S/core.schema
include $S/cosine.schema
include $S/nis.schema
include $S/inetorgperson.schema
pidfile $D/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 8589934592
suffix "DC=samdom,DC=example,DC=com"
rootdn "cn=admin,DC=samdom,DC=example,DC=com"
directory $D/db
index objectClass eq
index uid eq
index cn eq
index member eq
CONF
if [ "$KIND" = ad ]; then
cat <<CONF
index sn,givenName,displayName,mail eq
index manager,owner eq
index employeeNumber eq
index dc eq
index entryUUID eq
CONF
fi
} > "$D/slapd.conf"
