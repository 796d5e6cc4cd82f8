#!/usr/bin/env bash
# Starts an OpenLDAP slapd (back_mdb) holding the users-only benchmark directory, for
# `kauri bench ldap --against slapd|both`.
#
#   scripts/slapd-bench/run.sh DIR [PORT]     set up DIR and start slapd in the background
#   scripts/slapd-bench/run.sh stop DIR       stop the slapd started for DIR
#
# DIR/data.ldif is loaded; when it is missing it is written with
# `${KAURI:-target/release/kauri} bench ldap --write-ldif DIR/data.ldif --users ${USERS:-100000}`.
# Installs Debian's slapd when missing and stops the system instance the package starts.
# The database is rebuilt from the LDIF on every start. slapd runs as the invoking user.
set -euo pipefail

if [[ "${1:-}" == "stop" ]]; then
    dir=$(cd "${2:?usage: run.sh stop DIR}" && pwd)
    if [[ -f "$dir/slapd.pid" ]]; then
        pid=$(cat "$dir/slapd.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$dir/slapd.pid"
    fi
    exit 0
fi

dir=${1:?usage: run.sh DIR [PORT]}
port=${2:-3890}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
password=${SLAPD_PASSWORD:-bench-admin-pw}
suffix="dc=samdom,dc=example,dc=com"
rootdn="cn=admin,$suffix"

if ! command -v slapd >/dev/null 2>&1 && [[ ! -x /usr/sbin/slapd ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q slapd ldap-utils
fi
export PATH="$PATH:/usr/sbin"
# The package starts a system instance; ours uses its own configuration and port.
service slapd stop >/dev/null 2>&1 || true
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now slapd >/dev/null 2>&1 || true; fi

"$0" stop "$dir"

if [[ ! -f "$dir/data.ldif" ]]; then
    kauri=${KAURI:-target/release/kauri}
    "$kauri" bench ldap --write-ldif "$dir/data.ldif" --users "${USERS:-100000}"
fi

rm -rf "$dir/db"
mkdir -p "$dir/db"
cat > "$dir/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema

modulepath /usr/lib/ldap
moduleload back_mdb
# {SSHA512} password hashes, the form Kauri stores.
moduleload pw-sha2

pidfile $dir/slapd.pid
argsfile $dir/slapd.args
loglevel none
sizelimit unlimited

database mdb
suffix "$suffix"
rootdn "$rootdn"
rootpw $password
directory $dir/db
maxsize 8589934592
index objectClass eq
index cn,sn,mail,uid eq
CONF

echo "loading $dir/data.ldif" >&2
slapadd -q -f "$dir/slapd.conf" -l "$dir/data.ldif"
slapd -f "$dir/slapd.conf" -h "ldap://127.0.0.1:$port"
for _ in $(seq 50); do [[ -f "$dir/slapd.pid" ]] && break; sleep 0.1; done
[[ -f "$dir/slapd.pid" ]] || { echo "slapd did not start" >&2; exit 1; }
echo "slapd running (pid $(cat "$dir/slapd.pid")); measure with:" >&2
echo "  kauri bench ldap --against both --slapd-uri ldap://127.0.0.1:$port --slapd-bind-dn $rootdn --slapd-password $password --slapd-base $suffix" >&2
