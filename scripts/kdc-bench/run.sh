#!/usr/bin/env bash
# Measures MIT's krb5kdc (and, with --kauri-kdc, Kauri's KDC) under the same loads: full
# password logins (as) and service-ticket requests (tgs) at several concurrencies. See
# README.md in this folder.
#
#   scripts/kdc-bench/run.sh [--users 100000] [--duration 10s] [--warmup 1s] [--conc "1 8 64"]
#        [--modes "as tgs"] [--etype aes256|aes128|rc4] [--udp] [--realm KAURI.TEST]
#        [--domain kauri.test] [--password PW] [--user-prefix user] [--service SPN]
#        [--services N] [--port 18888] [--workers 2] [--no-mit] [--out results.jsonl]
#        [--kauri-kdc HOST:PORT] [--kauri-pid PID[,PID...]] [--kauri-service SPN]
#        [--kauri-ldap HOST:PORT] [--layer conf|integ|none] [--with-kauri]
#
# MIT's KDC is set up by mit-kdc.sh in a temporary folder, started, measured and stopped.
# --with-kauri builds Kauri (release), creates its benchmark domain once (`kauri bench
# kdc-domain`: the same users and password, kept in the cache folder), serves it, and runs
# the same loads against it beside MIT's (the realm becomes SAMDOM.EXAMPLE.COM for both).
# --kauri-kdc instead runs them against a KDC already running at that address with the
# same realm, users and password; --kauri-pid lets the table show its CPU time per operation.
# LDAP modes (--modes "ldap-simple ldap-gssapi"; ldap-gssapi also runs ldap-gssapi-cached)
# measure a client's whole life on Kauri's LDAP port, Kauri only (MIT has no LDAP): with
# --with-kauri, or --kauri-ldap with --kauri-kdc for a Kauri already running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

users=100000; duration=10s; warmup=1s; conc="1 8 64"; modes="as tgs"; etype=aes256; proto=-tcp
realm=KAURI.TEST; domain=; password=Kdc.Bench-Passw0rd; prefix=user; service=; services=1
port=18888; workers=2; mit=1; out=; kauri=; kauri_pid=; kauri_service=; with_kauri=0
kauri_ldap=; layer=conf; layer_checked=
while [ $# -gt 0 ]; do case $1 in
  --users) users=$2; shift 2;; --duration) duration=$2; shift 2;; --warmup) warmup=$2; shift 2;;
  --conc) conc=$2; shift 2;; --modes) modes=$2; shift 2;; --etype) etype=$2; shift 2;;
  --udp) proto=-udp; shift;; --tcp) proto=-tcp; shift;;
  --realm) realm=$2; shift 2;; --domain) domain=$2; shift 2;; --password) password=$2; shift 2;;
  --user-prefix) prefix=$2; shift 2;; --service) service=$2; shift 2;; --services) services=$2; shift 2;;
  --port) port=$2; shift 2;; --workers) workers=$2; shift 2;; --no-mit) mit=0; shift;;
  --out) out=$2; shift 2;;
  --kauri-kdc) kauri=$2; shift 2;; --kauri-pid) kauri_pid=$2; shift 2;;
  --kauri-service) kauri_service=$2; shift 2;;
  --kauri-ldap) kauri_ldap=$2; shift 2;; --layer) layer=$2; shift 2;;
  --with-kauri) with_kauri=1; shift;;
  -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
  *) echo "unknown option $1" >&2; exit 2;; esac; done
[ $with_kauri = 1 ] && realm=SAMDOM.EXAMPLE.COM
[ -n "$domain" ] || domain=$(echo "$realm" | tr '[:upper:]' '[:lower:]')
[ -n "$service" ] || service=ldap/dc1.$domain
[ -n "$kauri_service" ] || kauri_service=$service
# Kerberos modes run against both KDCs, LDAP modes against Kauri only; ldap-gssapi brings
# its variant with one service ticket per worker.
krb_modes=; ldap_modes=
for m in $modes; do case $m in
  as|tgs) krb_modes+=" $m";;
  ldap-gssapi) ldap_modes+=" ldap-gssapi ldap-gssapi-cached";;
  ldap-simple|ldap-gssapi-cached) ldap_modes+=" $m";;
  *) echo "run.sh: unknown mode $m (as, tgs, ldap-simple, ldap-gssapi, ldap-gssapi-cached)" >&2; exit 2;;
esac; done
if [ -n "$ldap_modes" ] && [ $with_kauri = 0 ] && [ -z "$kauri_ldap" ]; then
  echo "run.sh: LDAP modes need --with-kauri or --kauri-ldap (MIT has no LDAP)" >&2; exit 2
fi
if [ -n "$ldap_modes" ] && [ $with_kauri = 0 ] && [ -z "$kauri" ]; then
  echo "run.sh: --kauri-ldap needs --kauri-kdc too (the GSSAPI modes get tickets there)" >&2; exit 2
fi
if [ $mit = 1 ] && [ -z "$krb_modes" ]; then
  echo "== only LDAP modes: MIT's KDC is not set up" >&2; mit=0
fi
[ $mit = 1 ] || [ -n "$kauri" ] || [ $with_kauri = 1 ] || { echo "run.sh: --no-mit without --kauri-kdc measures nothing" >&2; exit 2; }

cache=${KDC_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kauri-kdc-bench}
mkdir -p "$cache"
bin=$cache/kdc-bench
work=$(mktemp -d "${TMPDIR:-/tmp}/kdc-bench.XXXXXX")
[ -n "$out" ] || out=$work/results.jsonl
: >"$out"
mitdir=$work/mit
kauri_server=
cleanup() {
  [ -n "$kauri_server" ] && kill "$kauri_server" 2>/dev/null || true
  if [ $mit = 1 ]; then "$here/mit-kdc.sh" stop --dir "$mitdir" || true; fi
  rm -rf "$mitdir"
  [ "$out" = "$work/results.jsonl" ] || rm -rf "$work"
}
trap cleanup EXIT

if [ $with_kauri = 1 ]; then
  root=$(cd "$here/../.." && pwd)
  echo "== building Kauri (release)" >&2
  (cd "$root" && cargo build -q --release -p kauri)
  kbin=$root/target/release/kauri
  kdata=$cache/kauri-$users-$(printf %s "$password" | sha256sum | cut -c1-12)
  if [ ! -f "$kdata/kdc-bench.json" ]; then
    echo "== creating Kauri's benchmark domain ($users users; kept in $kdata)" >&2
    rm -rf "$kdata"
    "$kbin" bench kdc-domain --users "$users" --password "$password" --data "$kdata" >&2
  fi
  printf 'metrics_listen = ""\nlisten_tls = ""\nlisten_kpasswd = ""\n' >"$work/kauri.toml"
  "$kbin" serve --config "$work/kauri.toml" --data "$kdata" --listen 127.0.0.1:0 \
    --listen-kdc 127.0.0.1:0 2>"$work/kauri.log" &
  kauri_server=$!
  for _ in $(seq 1 600); do
    kauri=$(sed -n 's/^kauri: serving Kerberos at \([^ ]*\).*/\1/p' "$work/kauri.log")
    kauri_ldap=$(sed -n 's|^kauri: serving ldap://\([^ /]*\).*|\1|p' "$work/kauri.log" | head -n 1)
    [ -n "$kauri" ] && [ -n "$kauri_ldap" ] && break
    kill -0 "$kauri_server" 2>/dev/null || { cat "$work/kauri.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$kauri" ] && [ -n "$kauri_ldap" ] || { echo "run.sh: Kauri did not start" >&2; cat "$work/kauri.log" >&2; exit 1; }
  kauri_pid=$kauri_server
  echo "== Kauri's KDC at $kauri, LDAP at $kauri_ldap" >&2
fi

echo "== building the load client (go build -p 1)" >&2
(cd "$here" && go build -p 1 -o "$bin" .)
keys=$cache/keys-$realm-$prefix-$(printf %s "$password" | sha256sum | cut -c1-12).txt

# One load: $1 label, $2 address, $3 mode, $4 concurrency, $5 server pids, $6 service.
load() {
  local args=(-label "$1" -kdc "$2" -conc "$4" -realm "$realm" -users "$users" -password "$password"
    -user-prefix "$prefix" -duration "$duration" -warmup "$warmup" -etype "$etype" "$proto"
    -keys "$keys" -json)
  [ -n "$5" ] && args+=(-server-pid "$5")
  [ "$3" = tgs ] && args+=(-service "$6" -services "$services")
  case $3 in ldap-*) args+=(-ldap "$kauri_ldap" -layer "$layer");; esac
  # The GSSAPI modes check once per mode that the security layer is on (three connections).
  case $3 in ldap-gssapi*)
    case " $layer_checked " in *" $3 "*) args+=(-no-layer-check);; *) layer_checked+=" $3";; esac;; esac
  local line
  if line=$("$bin" "$3" "${args[@]}"); then :; else echo "run.sh: $1 $3 conc=$4 failed" >&2; fi
  if [ -n "$line" ]; then
    echo "$line" >>"$out"
    echo "$line" | "$bin" table | tail -n 1 >&2
  fi
}

"$bin" table </dev/null >&2
if [ $mit = 1 ]; then
  if ! python3 -c 'import socket,sys
for k in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    s=socket.socket(socket.AF_INET,k); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(("127.0.0.1",int(sys.argv[1])))' "$port" 2>/dev/null; then
    port=$(python3 -c 'import socket
while True:
    t=socket.socket(); t.bind(("127.0.0.1",0)); p=t.getsockname()[1]
    u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1",p)); print(p); break
    except OSError: pass
    finally: t.close(); u.close()')
    echo "== port 18888 in use, MIT KDC gets port $port" >&2
  fi
  echo "== setting up MIT krb5kdc with $users users (workers: $workers)" >&2
  t0=$(date +%s.%N)
  "$here/mit-kdc.sh" start --dir "$mitdir" --port "$port" --realm "$realm" --domain "$domain" \
    --users "$users" --password "$password" --user-prefix "$prefix" --workers "$workers" >/dev/null
  echo "== MIT setup took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')" >&2
  kpid=$(cat "$mitdir/kdc.pid")
  pids=$(printf '%s\n' "$kpid" $(pgrep -P "$kpid" || true) | paste -sd, -)
  for m in $krb_modes; do for c in $conc; do
    load mit "127.0.0.1:$port" "$m" "$c" "$pids" "$service"
  done; done
  "$here/mit-kdc.sh" stop --dir "$mitdir"
fi
if [ -n "$kauri" ]; then
  "$bin" keygen -realm "$realm" -users "$users" -password "$password" -user-prefix "$prefix" -out "$keys"
  echo "== Kauri KDC at $kauri" >&2
  for m in $krb_modes $ldap_modes; do for c in $conc; do
    load kauri "$kauri" "$m" "$c" "$kauri_pid" "$kauri_service"
  done; done
fi

echo
summary="users=$users duration=$duration warmup=$warmup etype=$etype ${proto#-}"
[ $mit = 1 ] && summary+=" mit: krb5kdc -w $workers"
echo "$summary; results: $out"
"$bin" table <"$out"
