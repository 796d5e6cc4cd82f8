#!/usr/bin/env bash
# What the benchmark client alone can reach: compare-slapd.sh's Go client (ldapbench, one
# request in flight per connection) against a server that does no work and answers every
# search with the bytes Kauri answers one user's search with (zero-server, in this folder).
# Provisions and populates a Kauri domain in a temporary folder, captures one answer, stops
# Kauri, then runs equality searches at 1 and 8 connections against the zero-work server.
#
#   cargo build --release -p kauri && scripts/client-bound/run.sh [--users 10000] [--duration 8s]
#
# Needs Go and the workplace's ldapbench (../shared/bench/ldapbench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=10000; DUR=8s
while [ $# -gt 0 ]; do case $1 in
  --users) N=$2; shift 2;; --duration) DUR=$2; shift 2;;
  *) echo "unknown option $1" >&2; exit 2;; esac; done
K=$root/target/release/kauri
[ -x "$K" ] || { echo "no $K: run cargo build --release -p kauri first" >&2; exit 2; }
bench=${LDAPBENCH_SRC:-$root/../shared/bench/ldapbench}
[ -d "$bench" ] || { echo "no ldapbench sources at $bench (set LDAPBENCH_SRC)" >&2; exit 2; }
[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
w=$(mktemp -d)
trap '[ -n "${kpid:-}" ] && kill $kpid 2>/dev/null; [ -n "${zpid:-}" ] && kill $zpid 2>/dev/null; rm -rf "$w"' EXIT
(cd "$bench" && go build -o "$w/ldapbench" .)
(cd "$here" && go build -o "$w/zero-server" .)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kp=$(port); ktp=$(port); zp=$(port)
B=DC=bench,DC=example,DC=test; D="CN=Administrator,CN=Users,$B"; P='Bench.Passw0rd!1'
"$K" domain provision --realm BENCH.EXAMPLE.TEST --domain BENCH --adminpass "$P" --targetdir "$w/kauri" >/dev/null
"$K" serve --data "$w/kauri" --listen "127.0.0.1:$kp" --listen-tls "127.0.0.1:$ktp" >"$w/serve.log" 2>&1 & kpid=$!
for _ in $(seq 50); do ldapsearch -x -H "ldap://127.0.0.1:$kp" -s base -b '' >/dev/null 2>&1 && break; sleep 0.2; done
"$w/ldapbench" populate -url "ldap://127.0.0.1:$kp" -binddn "$D" -bindpw "$P" -base "$B" -flavor ad \
  -starttls -insecure -users "$N" -groups 100 -c 4 >"$w/populate.log" 2>&1
"$w/zero-server" -upstream "127.0.0.1:$kp" -listen "127.0.0.1:$zp" -binddn "$D" -bindpw "$P" -base "$B" \
  -filter '(sAMAccountName=bu000001)' & zpid=$!
sleep 1
kill $kpid; wait $kpid 2>/dev/null || true; kpid=
for c in 1 8; do
  /usr/bin/time -f "client CPU: %U s user + %S s system" "$w/ldapbench" bench -url "ldap://127.0.0.1:$zp" \
    -binddn "$D" -bindpw "$P" -base "$B" -flavor ad -users "$N" -groups 100 -c "$c" -duration "$DUR" \
    -warmup 0s search-eq 2>&1 | grep -E '^ +search-eq +[0-9]|client CPU'
done
