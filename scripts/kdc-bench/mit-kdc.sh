#!/usr/bin/env bash
# A throwaway MIT krb5kdc holding N users, for kdc-bench (see README.md in this folder).
#
#   scripts/kdc-bench/mit-kdc.sh start [--dir DIR] [--port 18888] [--realm KAURI.TEST]
#        [--domain kauri.test] [--users 100000] [--password PW] [--user-prefix user]
#        [--hosts 100] [--workers 2] [--foreground]
#   scripts/kdc-bench/mit-kdc.sh stop [--dir DIR]
#
# start wipes DIR (default /tmp/kdc-bench-mit), creates a realm there with user1..userN (one
# password, aes256 + aes128 + rc4 keys, +requires_preauth) and the service principals
# ldap/dc1.DOMAIN, host/dc1.DOMAIN and host/c1..cM.DOMAIN, starts krb5kdc on 127.0.0.1:PORT
# (TCP and UDP) with DIR/kdc.pid, and prints the krb5.conf a client needs (DIR/krb5.conf).
#
# Users are not added one by one (kadmin.local's addprinc takes ~6 ms each, ~10 minutes for
# 100,000): kdc-bench keygen derives the users' keys once into a key file kept in the cache
# folder (${KDC_BENCH_CACHE:-~/.cache/kauri-kdc-bench}, reused and extended by later runs and
# by the load client), kadmin.local creates user1 as a template, and kdc-bench mitdump writes
# a kdb5_util dump with users 1..N that kdb5_util load reads in seconds.
#
# krb5kdc runs with -w WORKERS (default 2: one worker process per core, as an administrator
# would run it on a 2-core machine; --workers 0 runs the single-process KDC).
# Needs Debian's krb5-kdc and krb5-admin-server (kdb5_util, kadmin.local, krb5kdc), kinit and Go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

cmd=${1:-}; [ $# -gt 0 ] && shift
dir=${TMPDIR:-/tmp}/kdc-bench-mit; port=18888; realm=KAURI.TEST; domain=
users=100000; password=Kdc.Bench-Passw0rd; prefix=user; hosts=100; workers=2; foreground=0
while [ $# -gt 0 ]; do case $1 in
  --dir) dir=$2; shift 2;; --port) port=$2; shift 2;; --realm) realm=$2; shift 2;;
  --domain) domain=$2; shift 2;; --users) users=$2; shift 2;; --password) password=$2; shift 2;;
  --user-prefix) prefix=$2; shift 2;; --hosts) hosts=$2; shift 2;; --workers) workers=$2; shift 2;;
  --foreground) foreground=1; shift;;
  *) echo "unknown option $1" >&2; exit 2;; esac; done
[ -n "$domain" ] || domain=$(echo "$realm" | tr '[:upper:]' '[:lower:]')

stop() {
  if [ -f "$dir/kdc.pid" ]; then
    pid=$(cat "$dir/kdc.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$dir/kdc.pid"
  fi
}

case $cmd in
  stop) stop; exit 0;;
  start) ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2;;
esac

for t in kdb5_util kadmin.local krb5kdc kinit go; do
  command -v $t >/dev/null || [ -x /usr/sbin/$t ] || { echo "mit-kdc.sh: $t not found" >&2; exit 2; }
done
export PATH=$PATH:/usr/sbin
port_free() {
  python3 - "$1" <<'EOF'
import socket, sys
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as krb5kdc does: TIME_WAIT is no obstacle
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
    except OSError:
        sys.exit(1)
    finally:
        s.close()
EOF
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

stop
port_free "$port" || { echo "mit-kdc.sh: 127.0.0.1:$port (TCP or UDP) is in use; choose --port" >&2; exit 1; }
t0=$(now)
rm -rf "$dir"; mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
cache=${KDC_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kauri-kdc-bench}
mkdir -p "$cache"
bin=$cache/kdc-bench
(cd "$here" && go build -p 1 -o "$bin" .)

cat >"$dir/kdc.conf" <<EOF
[kdcdefaults]
    kdc_listen = 127.0.0.1:$port
    kdc_tcp_listen = 127.0.0.1:$port
[realms]
    $realm = {
        database_name = $dir/principal
        key_stash_file = $dir/stash
        acl_file = $dir/kadm5.acl
        master_key_type = aes256-cts-hmac-sha1-96
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal arcfour-hmac:normal
        max_life = 10h 0m 0s
        max_renewable_life = 7d 0h 0m 0s
    }
[logging]
    kdc = FILE:$dir/kdc.log
EOF
# allow_rc4: Debian's 1.20.1 carries krb5 1.21's allow_rc4 (default false); without it the
# KDC answers ETYPE_NOSUPP to an RC4-only request although the users hold RC4 keys.
cat >"$dir/krb5.conf" <<EOF
[libdefaults]
    default_realm = $realm
    dns_lookup_kdc = false
    dns_lookup_realm = false
    rdns = false
    allow_rc4 = true
[realms]
    $realm = {
        kdc = 127.0.0.1:$port
    }
[domain_realm]
    .$domain = $realm
    $domain = $realm
EOF
: >"$dir/kadm5.acl"
export KRB5_CONFIG=$dir/krb5.conf KRB5_KDC_PROFILE=$dir/kdc.conf KRB5CCNAME=FILE:$dir/ccache

t=$(now)
kdb5_util create -s -r "$realm" -P "$(head -c 24 /dev/urandom | base64)" >"$dir/setup.log" 2>&1
{
  echo "addprinc -randkey ldap/dc1.$domain"
  echo "addprinc -randkey host/dc1.$domain"
  for i in $(seq 1 "$hosts"); do echo "addprinc -randkey host/c$i.$domain"; done
  echo "addprinc +requires_preauth -pw \"$password\" ${prefix}1"
} | kadmin.local -r "$realm" >>"$dir/setup.log" 2>&1
echo "realm and $((hosts + 2)) service principals: $(since "$t")" >&2

t=$(now)
keys=$cache/keys-$realm-$prefix-$(printf %s "$password" | sha256sum | cut -c1-12).txt
"$bin" keygen -realm "$realm" -users "$users" -password "$password" -user-prefix "$prefix" -out "$keys"
echo "user keys ($keys): $(since "$t")" >&2

t=$(now)
kdb5_util dump "$dir/template.dump"
"$bin" mitdump -in "$dir/template.dump" -stash "$dir/stash" -keys "$keys" -realm "$realm" \
  -users "$users" -password "$password" -user-prefix "$prefix" -out "$dir/users.dump"
kdb5_util load "$dir/users.dump"
rm -f "$dir"/template.dump* "$dir"/users.dump*
echo "dump and load of $users users: $(since "$t")" >&2
echo "setup: $(since "$t0")" >&2

kdcargs=(-P "$dir/kdc.pid")
[ "$workers" -gt 0 ] && kdcargs+=(-w "$workers")
echo "$workers" >"$dir/workers"
if [ $foreground = 1 ]; then
  echo "starting krb5kdc ${kdcargs[*]} -n in the foreground on 127.0.0.1:$port (TCP+UDP); KRB5_CONFIG=$dir/krb5.conf" >&2
  cat "$dir/krb5.conf"
  exec krb5kdc "${kdcargs[@]}" -n
fi
krb5kdc "${kdcargs[@]}"
for _ in $(seq 100); do
  [ -s "$dir/kdc.pid" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
# Check that the loaded keys are right: a password login of the last user and a service ticket.
printf '%s\n' "$password" | kinit "$prefix$users@$realm" >/dev/null
kvno -q "ldap/dc1.$domain@$realm" >/dev/null
kdestroy -q
echo "krb5kdc ${kdcargs[*]} running, pid $(cat "$dir/kdc.pid"), 127.0.0.1:$port TCP+UDP; logs $dir/kdc.log" >&2
echo "stop: $0 stop --dir $dir; krb5.conf ($dir/krb5.conf):" >&2
cat "$dir/krb5.conf"
