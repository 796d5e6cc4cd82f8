#!/usr/bin/env bash
# `kauri traffic populate --local` beside OpenLDAP's `slapadd -q` on the same entries.
#
# Provisions a domain, loads --users users, --computers computers and --groups groups into
# it with populate --local (--runs times, each into a fresh copy; the best is reported),
# checks the result with `kauri dbcheck`, exports it, converts the export to the same DNs
# in OpenLDAP's standard schema (to_openldap.py) and loads that with `slapadd -q`, once with
# four indexes and once with the twelve attributes Kauri indexes that the data holds.
#
# Usage: cargo build --release -p kauri && scripts/populate-bench/run.sh [--users 100000]
#          [--computers N] [--groups N] [--runs 3] [--work DIR]
# Needs Debian's slapd (slapadd) for the comparison; without it only Kauri is measured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
users=100000 computers= groups= runs=3 work=/var/tmp/populate-bench
while [ $# -gt 0 ]; do
    case $1 in
    --users) users=$2; shift 2 ;;
    --computers) computers=$2; shift 2 ;;
    --groups) groups=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "populate-bench: unknown option $1" >&2; exit 2 ;;
    esac
done
computers=${computers:-$users}
groups=${groups:-$((users / 20))}
K=${KAURI_BIN:-$repo/target/release/kauri}
[ -x "$K" ] || { echo "build first: cargo build --release -p kauri" >&2; exit 2; }
mkdir -p "$work"
pass=Passw0rd.Admin
say() { echo "populate-bench: $*" >&2; }
# best LIST: the smallest of the numbers given.
best() { printf '%s\n' "$@" | sort -g | head -1; }

rm -rf "$work/fresh"
"$K" domain provision --realm SAMDOM.EXAMPLE.COM --domain SAMDOM --adminpass "$pass" \
    --targetdir "$work/fresh" --json >/dev/null
times=()
for r in $(seq "$runs"); do
    rm -rf "$work/local"
    cp -a "$work/fresh" "$work/local"
    "$K" traffic populate --local "$work/local" --users "$users" --computers "$computers" \
        --groups "$groups" --json >"$work/local-$r.json"
    t=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"])' \
        "$work/local-$r.json")
    say "populate --local run $r: $t s ($(uptime | sed 's/.*load/load/'))"
    times+=("$t")
done
"$K" dbcheck -H "$work/local" >"$work/dbcheck.txt"
say "dbcheck: $(tail -1 "$work/dbcheck.txt")"
echo "populate --local ($users users, $computers computers, $groups groups): best $(best "${times[@]}") s of ${times[*]}"

if ! [ -x /usr/sbin/slapadd ]; then
    say "no /usr/sbin/slapadd (Debian's slapd): the comparison is left out"
    exit 0
fi
"$K" ldif export -H "$work/local" --base DC=samdom,DC=example,DC=com -o "$work/export.ldif"
"$K" ldif export -H "$work/local" --base DC=DomainDnsZones,DC=samdom,DC=example,DC=com \
    -o "$work/dns.ldif"
python3 "$here/to_openldap.py" "$work/export.ldif" "$work/dns.ldif" >"$work/openldap.ldif"
for kind in basic ad; do
    times=()
    for r in $(seq "$runs"); do
        rm -rf "$work/slapd-$kind"
        "$here/slapd-setup.sh" "$work/slapd-$kind" "$kind"
        start=$(date +%s.%N)
        /usr/sbin/slapadd -q -f "$work/slapd-$kind/slapd.conf" -l "$work/openldap.ldif"
        t=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' \
            "$start" "$(date +%s.%N)")
        say "slapadd -q ($kind indexes) run $r: $t s"
        times+=("$t")
    done
    echo "slapadd -q, $kind indexes: best $(best "${times[@]}") s of ${times[*]}"
done
