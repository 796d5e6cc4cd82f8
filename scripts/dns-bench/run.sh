#!/usr/bin/env bash
# Measures Kauri's DNS server beside BIND 9 serving the same zones, on 127.0.0.1 with
# unprivileged ports only. See README.md in this folder.
#
#   scripts/dns-bench/run.sh [--quick] [--duration 10] [--update-duration 10] [--warmup 1]
#        [--parts "query update"] [--tests "srv a"] [--conc "1 8 64"] [--update-conc "1 8"]
#        [--no-bind] [--edns] [--client go|dnsperf] [--out FILE] [--kauri BIN] [--keep]
#
# query:  queries per second for `_ldap._tcp.dc._msdcs.samdom.example.com SRV` (srv) and
#         `dc1.samdom.example.com A` (a), each client with its own UDP socket and one query
#         in flight, against Kauri and against named with the zones transferred from Kauri.
# update: GSS-TSIG signed dynamic updates per second against Kauri (Administrator's Kerberos
#         ticket from Kauri's KDC, one key per client process, each update adds an A record);
#         and, as a reference with a DIFFERENT authentication, HMAC-SHA256 TSIG updates
#         against named.
# --quick runs every cell for 2 s (a check that the script works, not a measurement).
# Durations are in seconds. Results: a table on stdout, JSON lines in --out (default
# ${TMPDIR:-/tmp}/dns-bench-DATE.jsonl), the first line describing the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

duration=10; update_duration=10; warmup=1; parts="query update"; tests="srv a"
conc="1 8 64"; update_conc="1 8"; bind=1; edns=0; client=go; out=; kauri_bin=; keep=0
while [ $# -gt 0 ]; do case $1 in
  --quick) duration=2; update_duration=2; warmup=0.5; shift;;
  --duration) duration=$2; shift 2;; --update-duration) update_duration=$2; shift 2;;
  --warmup) warmup=$2; shift 2;; --parts) parts=$2; shift 2;; --tests) tests=$2; shift 2;;
  --conc) conc=$2; shift 2;; --update-conc) update_conc=$2; shift 2;;
  --no-bind) bind=0; shift;; --edns) edns=1; shift;; --client) client=$2; shift 2;;
  --out) out=$2; shift 2;; --kauri) kauri_bin=$2; shift 2;; --keep) keep=1; shift;;
  -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
  *) echo "run.sh: unknown option $1" >&2; exit 2;; esac; done
for p in $parts; do case $p in query|update) ;; *) echo "run.sh: unknown part $p (query, update)" >&2; exit 2;; esac; done
for t in $tests; do case $t in srv|a) ;; *) echo "run.sh: unknown test $t (srv, a)" >&2; exit 2;; esac; done
case $client in go|dnsperf) ;; *) echo "run.sh: --client go or dnsperf" >&2; exit 2;; esac
has_part() { case " $parts " in *" $1 "*) return 0;; esac; return 1; }

realm=SAMDOM.EXAMPLE.COM; zone=samdom.example.com; msdcs=_msdcs.$zone; dc=dc1.$zone
password='Passw0rd-Bench!1'
srv_q="_ldap._tcp.dc.$msdcs SRV"; a_q="$dc A"
question() { case $1 in srv) echo "$srv_q";; a) echo "$a_q";; esac; }
py=/usr/bin/python3

# --- tools -------------------------------------------------------------------------------
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
export PATH="$PATH:/usr/sbin:/sbin:/usr/local/go/bin"
missing=()
[ $bind = 1 ] && { command -v named >/dev/null 2>&1 || missing+=(bind9); }
[ $bind = 1 ] && { command -v named-checkzone >/dev/null 2>&1 && command -v tsig-keygen >/dev/null 2>&1 || missing+=(bind9-utils); }
command -v dig >/dev/null 2>&1 || missing+=(bind9-dnsutils)
[ $client = dnsperf ] && { command -v dnsperf >/dev/null 2>&1 || missing+=(dnsperf); }
if has_part update; then
  command -v kinit >/dev/null 2>&1 && command -v kvno >/dev/null 2>&1 || missing+=(krb5-user)
  $py -c 'import gssapi' >/dev/null 2>&1 || missing+=(python3-gssapi)
  $py -c 'import dns.tsig, dns.update' >/dev/null 2>&1 || missing+=(python3-dnspython)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}" >&2
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  # The package may start a system named on port 53; ours runs on its own port.
  case " ${missing[*]} " in *" bind9 "*)
    as_root service named stop >/dev/null 2>&1 || true
    if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable --now named >/dev/null 2>&1 || true; fi;;
  esac
fi
if [ $client = go ]; then command -v go >/dev/null 2>&1 || { echo "run.sh: the Go toolchain is needed (/usr/local/go/bin/go)" >&2; exit 1; }; fi

# --- work folder, cleanup ----------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/dns-bench.XXXXXX")
[ -n "$out" ] || out=${TMPDIR:-/tmp}/dns-bench-$(date +%Y%m%d-%H%M%S).jsonl
: >"$out"
kauri_pid=; named_pid=
stop() { # stop PID: TERM, then KILL after 5 s
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop "$named_pid"; stop "$kauri_pid"
  if [ $keep = 1 ]; then echo "== kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "run.sh: $*" >&2; exit 1; }

# --- Kauri -------------------------------------------------------------------------------
if [ -z "$kauri_bin" ]; then
  echo "== building Kauri (release)" >&2
  (cd "$root" && cargo build -q --release -p kauri)
  kauri_bin=$root/target/release/kauri
fi
# A copy, so a rebuild of the shared target folder during the run changes nothing.
cp "$kauri_bin" "$work/kauri"
kauri=$work/kauri
read -r kauri_port named_port < <($py "$here/report.py" ports 2)
echo "== provisioning $realm" >&2
"$kauri" domain provision --realm "$realm" --domain SAMDOM --adminpass "$password" \
  --targetdir "$work/kauri-data" >"$work/provision.log" 2>&1 || { cat "$work/provision.log" >&2; die "provision failed"; }
cat >"$work/kauri.toml" <<EOF
metrics_listen = ""

[dns]
listen = "127.0.0.1:$kauri_port"
zone_transfers = ["127.0.0.1"]
EOF
"$kauri" serve --data "$work/kauri-data" --config "$work/kauri.toml" --listen 127.0.0.1:0 \
  --listen-tls "" --listen-kdc 127.0.0.1:0 --listen-kpasswd 127.0.0.1:0 \
  --listen-dns "127.0.0.1:$kauri_port" 2>"$work/kauri.log" &
kauri_pid=$!
kdc=; dns=
for _ in $(seq 300); do
  dns=$(sed -n 's/^kauri: serving DNS at \([^ ]*\).*/\1/p' "$work/kauri.log")
  kdc=$(sed -n 's/^kauri: serving Kerberos at \([^ ]*\).*/\1/p' "$work/kauri.log")
  [ -n "$dns" ] && [ -n "$kdc" ] && break
  kill -0 "$kauri_pid" 2>/dev/null || { cat "$work/kauri.log" >&2; die "Kauri exited"; }
  sleep 0.1
done
[ -n "$dns" ] && [ -n "$kdc" ] || { cat "$work/kauri.log" >&2; die "Kauri did not start"; }
[ "$dns" = "127.0.0.1:$kauri_port" ] || die "Kauri serves DNS at $dns, not 127.0.0.1:$kauri_port"
echo "== Kauri (pid $kauri_pid): DNS at $dns, Kerberos at $kdc" >&2

# --- named, with the zones transferred from Kauri ----------------------------------------
if [ $bind = 1 ]; then
  b=$work/bind; mkdir -p "$b"
  for z in "$zone" "$msdcs"; do
    # dig ends a transfer with the SOA again: keep the first one only.
    dig @127.0.0.1 -p "$kauri_port" +tcp +noall +answer "$z" AXFR >"$b/$z.axfr" ||
      die "AXFR of $z from Kauri failed"
    awk '$4 == "SOA" { if (soa++) next } { print }' "$b/$z.axfr" >"$b/$z.zone"
    [ "$(awk '$4 == "SOA"' "$b/$z.zone" | wc -l)" = 1 ] || { cat "$b/$z.axfr" >&2; die "AXFR of $z: no SOA"; }
    # AD's _msdcs zone has an underscore in its SOA mailbox: names are not host-name checked.
    named-checkzone -q -k ignore "$z" "$b/$z.zone" || { named-checkzone -k ignore "$z" "$b/$z.zone" >&2; die "named-checkzone $z"; }
  done
  echo "== zones for named: $(cat "$b/$zone.zone" | wc -l) + $(cat "$b/$msdcs.zone" | wc -l) records" >&2
  tsig-keygen -a hmac-sha256 bench-hmac >"$b/hmac.key"
  hmac_secret=$(sed -n 's/.*secret "\(.*\)";.*/\1/p' "$b/hmac.key")
  cat >"$b/named.conf" <<EOF
include "$b/hmac.key";
options {
  directory "$b";
  pid-file "$b/named.pid";
  listen-on port $named_port { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
};
controls { };
zone "$zone" { type primary; file "$zone.zone"; allow-update { key "bench-hmac"; }; };
zone "$msdcs" { type primary; file "$msdcs.zone"; };
EOF
  named-checkconf "$b/named.conf" || die "named-checkconf"
  named -g -c "$b/named.conf" >"$b/named.log" 2>&1 &
  named_pid=$!
  for _ in $(seq 100); do
    [ -n "$(dig @127.0.0.1 -p "$named_port" +short +time=1 +tries=1 "$zone" SOA 2>/dev/null)" ] &&
      [ -n "$(dig @127.0.0.1 -p "$named_port" +short +time=1 +tries=1 "$msdcs" SOA 2>/dev/null)" ] && break
    kill -0 "$named_pid" 2>/dev/null || { cat "$b/named.log" >&2; die "named exited"; }
    sleep 0.1
  done
  grep -q "all zones loaded" "$b/named.log" || { cat "$b/named.log" >&2; die "named did not load the zones"; }
  echo "== named (pid $named_pid) at 127.0.0.1:$named_port" >&2

  # Both servers must give the same answer to the questions measured (as the load client asks:
  # recursion desired, EDNS as --edns says). Authority and additional data may differ.
  ednsflag=+noedns; [ $edns = 1 ] && ednsflag=+edns=0
  for t in $tests; do
    set -- $(question "$t")
    for s in kauri named; do
      p=$kauri_port; [ $s = named ] && p=$named_port
      dig @127.0.0.1 -p "$p" $ednsflag +nocookie "$1" "$2" >"$work/$t.$s.dig"
      { grep -o 'status: [A-Z]*' "$work/$t.$s.dig"
        grep -o 'flags: [a-z ]*;' "$work/$t.$s.dig"
        dig @127.0.0.1 -p "$p" $ednsflag +nocookie +noall +answer "$1" "$2" | sort; } >"$work/$t.$s.ans"
    done
    grep -q 'status: NOERROR' "$work/$t.kauri.ans" && [ "$(awk -v t="$2" '$4 == t' "$work/$t.kauri.ans" | wc -l)" -ge 1 ] ||
      { cat "$work/$t.kauri.dig" >&2; die "Kauri does not answer $1 $2"; }
    if ! diff -u "$work/$t.kauri.ans" "$work/$t.named.ans" >"$work/$t.diff"; then
      cat "$work/$t.diff" >&2; die "Kauri and named answer $1 $2 differently"
    fi
    echo "== $1 $2: the same answer from both: $(grep -v 'status\|flags' "$work/$t.kauri.ans" | tr -s '\t ' ' ' | paste -sd '|')" >&2
    for sec in AUTHORITY ADDITIONAL; do
      ka=$(sed -n "/^;; $sec SECTION:/,/^\$/p" "$work/$t.kauri.dig" | sed '1d;/^$/d' | tr -s '\t ' ' ' | sort | paste -sd '|')
      na=$(sed -n "/^;; $sec SECTION:/,/^\$/p" "$work/$t.named.dig" | sed '1d;/^$/d' | tr -s '\t ' ' ' | sort | paste -sd '|')
      [ "$ka" = "$na" ] || echo "   $sec differs: kauri [${ka:-none}] named [${na:-none}]" >&2
    done
  done
fi

# --- the machine -------------------------------------------------------------------------
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] || rev+="+changes"
vers=("kauri=$("$kauri" --version 2>/dev/null | head -n 1 | sed 's/^kauri //') ($rev)")
[ $bind = 1 ] && vers+=("named=$(named -v | head -n 1)")
[ $client = dnsperf ] && vers+=("dnsperf=$(dnsperf -h 2>&1 | sed -n 's/^Version //p' | head -n 1)")
[ $client = go ] && has_part query && vers+=("go=$(go version | awk '{print $3}')")
has_part update && vers+=("python=$($py -c 'import sys, dns.version; print(sys.version.split()[0], "dnspython", dns.version.version)')"
  "krb5=$(dpkg-query -W -f '${Version}' libkrb5-3 2>/dev/null || echo unknown)")
vers+=("durations=query ${duration}s (warm-up ${warmup}s), updates ${update_duration}s")
$py "$here/report.py" machine "${vers[@]}" >>"$out"
$py "$here/report.py" table --machine-only <"$out" | sed 's/^/== /' >&2

cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
record() { # record JSON-LINE: keep it and say it in one line
  echo "$1" >>"$out"
  $py -c 'import json, sys
d = json.loads(sys.argv[1]); e = d.get("errors") or {}
print("   %-6s %-12s conc %-3s %9.0f /s  mean %s ms  p99 %s ms%s" % (d["server"], d["test"], d["conc"],
      d.get("qps") or 0, d.get("lat_mean_ms"), d.get("lat_p99_ms", "-"),
      ("  errors " + json.dumps(e)) if e else ""))' "$1" >&2
}

# --- queries -----------------------------------------------------------------------------
if has_part query; then
  servers="kauri"; [ $bind = 1 ] && servers+=" named"
  if [ $client = go ]; then
    echo "== building the load client (go build -p 1)" >&2
    (cd "$here" && go build -p 1 -o "$work/dns-bench" .)
  fi
  echo "== queries: ${duration}s per cell after ${warmup}s of warm-up" >&2
  for t in $tests; do
    set -- $(question "$t")
    echo "$1 $2" >"$work/$t.query"
    for c in $conc; do for s in $servers; do
      p=$kauri_port; pid=$kauri_pid
      [ $s = named ] && { p=$named_port; pid=$named_pid; }
      if [ $client = go ]; then
        args=(-server "127.0.0.1:$p" -name "$1" -type "$2" -conc "$c" -duration "${duration}s"
          -warmup "${warmup}s" -label "$s" -test "$t" -server-pid "$pid")
        [ $edns = 1 ] && args+=(-edns)
        line=$("$work/dns-bench" "${args[@]}") || echo "run.sh: $s $t conc=$c failed" >&2
      else
        # dnsperf: c sockets and at most c queries outstanding in all (-T 1: one sending
        # thread picks the sockets in turn, so a socket may briefly hold two).
        dargs=(-s 127.0.0.1 -p "$p" -d "$work/$t.query" -c "$c" -q "$c" -T 1)
        [ $edns = 1 ] && dargs+=(-e)
        dnsperf "${dargs[@]}" -l "$warmup" >/dev/null 2>&1 || true
        c0=$(cpu_ticks "$pid")
        dnsperf "${dargs[@]}" -l "$duration" >"$work/dnsperf.out" 2>&1 || true
        c1=$(cpu_ticks "$pid")
        line=$($py "$here/report.py" dnsperf --server "$s" --test "$t" --conc "$c" \
          --cpu-ticks $((c1 - c0)) --args "${dargs[*]}" <"$work/dnsperf.out")
      fi
      [ -n "${line:-}" ] && record "$line"
      line=
    done; done
  done
fi

# --- updates -----------------------------------------------------------------------------
if has_part update; then
  echo "== updates: ${update_duration}s per cell" >&2
  cat >"$work/krb5.conf" <<EOF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  dns_canonicalize_hostname = false
  udp_preference_limit = 1
[realms]
  $realm = {
    kdc = $kdc
  }
[domain_realm]
  .$zone = $realm
  $zone = $realm
EOF
  export KRB5_CONFIG=$work/krb5.conf KRB5CCNAME=FILE:$work/krb5cc
  printf '%s\n' "$password" | kinit "Administrator@$realm" >"$work/kinit.log" 2>&1 ||
    { cat "$work/kinit.log" >&2; die "kinit Administrator at Kauri's KDC failed"; }
  # The service ticket once, so the client processes only read the cache.
  kvno "DNS/$dc@$realm" >"$work/kvno.log" 2>&1 || { cat "$work/kvno.log" >&2; die "no ticket for DNS/$dc"; }
  for c in $update_conc; do
    test=update-gss; [ "$c" = 1 ] && test=update-gss-seq
    line=$($py "$here/updates.py" --port "$kauri_port" --zone "$zone" --gss "DNS/$dc@$realm" \
      --key-host "$dc" --procs "$c" --duration "$update_duration" --label kauri --test "$test" \
      --server-pid "$kauri_pid") || echo "run.sh: kauri $test conc=$c had failures" >&2
    [ -n "$line" ] && record "$line"
    if [ $bind = 1 ]; then
      test=update-hmac; [ "$c" = 1 ] && test=update-hmac-seq
      line=$($py "$here/updates.py" --port "$named_port" --zone "$zone" \
        --hmac "hmac-sha256:bench-hmac:$hmac_secret" --procs "$c" --duration "$update_duration" \
        --label named --test "$test" --server-pid "$named_pid") ||
        echo "run.sh: named $test conc=$c had failures" >&2
      [ -n "$line" ] && record "$line"
    fi
  done
fi

kill -0 "$kauri_pid" 2>/dev/null || { tail -n 20 "$work/kauri.log" >&2; die "Kauri died during the run"; }
if grep -qi 'panic\|error' "$work/kauri.log"; then
  echo "== Kauri's log has errors:" >&2; grep -i 'panic\|error' "$work/kauri.log" | head -n 10 >&2
fi

echo
echo "queries: UDP, recursion desired, $([ $edns = 1 ] && echo EDNS0 || echo no EDNS), $([ $client = go ] && echo 'one query in flight per client socket (dns-bench, Go)' || echo 'dnsperf -c N -q N -T 1'); updates: one in flight per client process (python dnspython), each adds an A record"
echo "update-gss = GSS-TSIG (Kerberos via SPNEGO) on Kauri; update-hmac = HMAC-SHA256 TSIG on named: a different authentication, for reference only"
echo "results: $out"
$py "$here/report.py" table <"$out"
