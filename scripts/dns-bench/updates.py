#!/usr/bin/python3
"""Signed dynamic updates per second, for dns-bench (run.sh).

Each worker process negotiates its own key (outside the measured time), then sends RFC 2136
updates, each adding one A record at a name of its own, one in flight at a time, until the
time is up. Every answer must be NOERROR and carry a TSIG that verifies (dnspython checks
it); anything else is counted as an error by its kind. Prints one JSON line.

  --gss DNS/dc1.samdom.example.com@SAMDOM.EXAMPLE.COM   GSS-TSIG (RFC 3645): a TKEY query
        (mode 3, SPNEGO token, or bare Kerberos with --mech krb5, from the Kerberos
        ticket in $KRB5CCNAME) over TCP, the
        server's signed TKEY answer verified, then updates signed with GSS MICs.
  --hmac hmac-sha256:NAME:BASE64   TSIG with a shared secret (RFC 8945).

Needs Debian's python3-dnspython and python3-gssapi (run with /usr/bin/python3).
"""
import argparse
import json
import multiprocessing
import os
import random
import resource
import socket
import struct
import sys
import time

import dns.exception
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.TKEY
import dns.rrset
import dns.tsig
import dns.update


def tcp_exchange(server, port, wire, timeout):
    """One message over a fresh TCP connection, its answer's bytes back."""
    with socket.create_connection((server, port), timeout=timeout) as s:
        s.sendall(struct.pack("!H", len(wire)) + wire)

        def read(n):
            buf = b""
            while len(buf) < n:
                part = s.recv(n - len(buf))
                if not part:
                    raise EOFError("connection closed")
                buf += part
            return buf

        (n,) = struct.unpack("!H", read(2))
        return read(n)


def gss_key(server, port, target, key_host, timeout, mech="spnego"):
    """Negotiates a GSS-TSIG key with a TKEY exchange; returns the dnspython Key."""
    import gssapi

    flags = (
        gssapi.RequirementFlag.mutual_authentication
        | gssapi.RequirementFlag.replay_detection
        | gssapi.RequirementFlag.integrity
    )
    ctx = gssapi.SecurityContext(
        name=gssapi.Name(target, gssapi.NameType.kerberos_principal),
        mech=(gssapi.Mechanism.from_sasl_name("SPNEGO") if mech == "spnego"
              else gssapi.MechType.kerberos),
        flags=flags,
        usage="initiate",
    )
    token = ctx.step()
    keyname = dns.name.from_text(
        "%d-%d.sig-%s" % (os.getpid(), random.randrange(1 << 30), key_host)
    )
    now = int(time.time())
    tkey = dns.rdtypes.ANY.TKEY.TKEY(
        dns.rdataclass.ANY, dns.rdatatype.TKEY, dns.tsig.GSS_TSIG,
        now, now + 3600, 3, 0, token,
    )
    query = dns.message.make_query(keyname, dns.rdatatype.TKEY, dns.rdataclass.ANY)
    query.additional.append(dns.rrset.from_rdata(keyname, 0, tkey))
    key = dns.tsig.Key(keyname, ctx, dns.tsig.GSS_TSIG)
    # The adapter feeds the answer's TKEY token to the context before the answer's TSIG
    # (signed with the new context) is verified.
    answer = dns.message.from_wire(
        tcp_exchange(server, port, query.to_wire(), timeout),
        keyring=dns.tsig.GSSTSigAdapter({keyname: key}),
    )
    if answer.rcode() != dns.rcode.NOERROR:
        raise RuntimeError("TKEY answered %s" % dns.rcode.to_text(answer.rcode()))
    tkeys = [rr for rrset in answer.answer if rrset.rdtype == dns.rdatatype.TKEY for rr in rrset]
    if not tkeys or tkeys[0].error != 0:
        raise RuntimeError("TKEY answer without a key (error %s)" % (tkeys[0].error if tkeys else "-"))
    if not ctx.complete:
        raise RuntimeError("GSS context not complete after the TKEY exchange")
    if answer.tsig is None:
        raise RuntimeError("TKEY answer not signed")
    return key


def hmac_key(spec):
    alg, name, secret = spec.split(":", 2)
    return dns.tsig.Key(dns.name.from_text(name), secret, dns.name.from_text(alg))


class Udp:
    """A connected UDP socket sending one message at a time."""

    def __init__(self, server, port, timeout):
        self.addr = (server, port)
        self.timeout = timeout
        self.open()

    def open(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect(self.addr)
        self.sock.settimeout(self.timeout)

    def exchange(self, msg, key):
        wire = msg.to_wire()
        self.sock.send(wire)
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise dns.exception.Timeout()
            self.sock.settimeout(left)
            data = self.sock.recv(65535)
            if len(data) >= 2 and struct.unpack("!H", data[:2])[0] == msg.id:
                return dns.message.from_wire(data, keyring=key, request_mac=msg.mac)
            # An answer to an earlier update that timed out: skip it.


def worker(i, args, tag, barrier, results):
    rnd = random.Random(os.getpid())
    random.seed(rnd.random())
    try:
        if args.gss:
            key = gss_key(args.server, args.port, args.gss, args.key_host, args.timeout, args.mech)
        else:
            key = hmac_key(args.hmac)
    except Exception as e:  # the whole worker fails; reported by the parent
        barrier.wait()
        results.put({"worker": i, "setup_error": "%s: %s" % (type(e).__name__, e)})
        return
    zone = dns.name.from_text(args.zone)
    udp = Udp(args.server, args.port, args.timeout)
    lat = []
    errors = {}
    first_error = None
    names = []
    barrier.wait()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    end = start + args.duration
    n = 0
    while True:
        now = time.monotonic()
        if now >= end or (args.max and n >= args.max):
            break
        n += 1
        name = "%s-w%d-%d" % (tag, i, n)
        addr = "10.%d.%d.%d" % (i % 250, (n >> 8) & 255, n & 255)
        upd = dns.update.UpdateMessage(zone, keyring=key, keyname=key.name,
                                       keyalgorithm=key.algorithm)
        upd.add(name, 600, "A", addr)
        t = time.monotonic()
        try:
            ans = udp.exchange(upd, key)
            rc = ans.rcode()
            if rc != dns.rcode.NOERROR:
                kind = dns.rcode.to_text(rc)
            elif ans.tsig is None:
                kind = "unsigned_answer"
            else:
                kind = None
        except dns.exception.Timeout:
            kind = "timeout"
        except Exception as e:  # bad signature, bad message, socket error ...
            kind = type(e).__name__
            if first_error is None:
                first_error = "%s: %s" % (kind, e)
            udp.sock.close()
            udp.open()
        if kind is None:
            lat.append(time.monotonic() - t)
            if len(names) < 1:
                names.append((name, addr))
            else:
                names[1:] = [(name, addr)]
        else:
            errors[kind] = errors.get(kind, 0) + 1
            if first_error is None:
                first_error = kind
    elapsed = time.monotonic() - start
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    # The first and last names written must now answer with their address.
    missing = []
    for name, addr in names:
        q = dns.message.make_query(dns.name.from_text(name, zone), dns.rdatatype.A)
        try:
            a = dns.message.from_wire(tcp_exchange(args.server, args.port, q.to_wire(), args.timeout))
            got = [rr.address for rrset in a.answer if rrset.rdtype == dns.rdatatype.A for rr in rrset]
        except Exception as e:
            got = [type(e).__name__]
        if got != [addr]:
            missing.append("%s A %s: got %s" % (name, addr, got or dns.rcode.to_text(a.rcode())))
    results.put({"worker": i, "lat": lat, "errors": errors, "elapsed": elapsed, "cpu": cpu,
                 "first_error": first_error, "missing": missing})


def cpu_ticks(pid):
    if not pid:
        return None
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def pct(sorted_lat, p):
    if not sorted_lat:
        return None
    k = min(len(sorted_lat) - 1, max(0, int(round(p / 100.0 * len(sorted_lat) + 0.5)) - 1))
    return round(sorted_lat[k] * 1000, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--zone", default="samdom.example.com")
    auth = ap.add_mutually_exclusive_group(required=True)
    auth.add_argument("--gss", metavar="PRINCIPAL", help="GSS-TSIG with a ticket for this service")
    auth.add_argument("--hmac", metavar="ALG:NAME:SECRET", help="TSIG with a shared key")
    ap.add_argument("--key-host", default="dc1.samdom.example.com",
                    help="host part of the TKEY key name (the key is NUMBER.sig-HOST)")
    ap.add_argument("--mech", choices=("spnego", "krb5"), default="spnego",
                    help="GSS mechanism of the TKEY token: SPNEGO (as nsupdate -g and Windows) or bare Kerberos")
    ap.add_argument("--procs", type=int, default=1, help="worker processes, each with its own key")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of updates")
    ap.add_argument("--max", type=int, default=0, help="at most this many updates per worker")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--tag", default="", help="prefix of the names added (default: random)")
    ap.add_argument("--label", default="server")
    ap.add_argument("--test", default="update")
    ap.add_argument("--server-pid", type=int, default=0, help="for the server's CPU time")
    args = ap.parse_args()
    tag = args.tag or "upd%06x" % random.randrange(1 << 24)

    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(args.procs + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(i, args, tag, barrier, results)) for i in range(args.procs)]
    for p in procs:
        p.start()
    barrier.wait()  # every worker has its key
    t0 = time.monotonic()
    c0 = cpu_ticks(args.server_pid)
    done = [results.get() for _ in procs]
    c1 = cpu_ticks(args.server_pid)
    wall = time.monotonic() - t0
    for p in procs:
        p.join()

    setup = [d["setup_error"] for d in done if "setup_error" in d]
    lat = sorted(x for d in done for x in d.get("lat", []))
    errors = {}
    for d in done:
        for k, v in d.get("errors", {}).items():
            errors[k] = errors.get(k, 0) + v
    if setup:
        errors["key_setup_failed"] = len(setup)
    elapsed = max([d["elapsed"] for d in done if "elapsed" in d] or [wall])
    ok = len(lat)
    firsts = [d["first_error"] for d in done if d.get("first_error")] + setup
    missing = [m for d in done for m in d.get("missing", [])]
    out = {
        "server": args.label,
        "test": args.test,
        "conc": args.procs,
        "auth": ("gss-tsig (%s)" % args.mech) if args.gss else args.hmac.split(":", 1)[0] + " tsig",
        "transport": "udp",
        "duration_s": round(elapsed, 3),
        "ok": ok,
        "qps": round(ok / elapsed, 1) if elapsed > 0 else 0,
        "errors": errors,
        "lat_mean_ms": round(sum(lat) / ok * 1000, 3) if ok else None,
        "lat_p50_ms": pct(lat, 50),
        "lat_p99_ms": pct(lat, 99),
        "lat_max_ms": round(lat[-1] * 1000, 3) if ok else None,
        "client_cpu_us_per_op": round(sum(d.get("cpu", 0) for d in done) / ok * 1e6, 1) if ok else None,
        "server_cpu_us_per_op": (round((c1 - c0) / os.sysconf("SC_CLK_TCK") / ok * 1e6, 1)
                                 if ok and c0 is not None else None),
        "names": tag + "-wN-M",
        "check_written": "ok" if not missing else missing[:4],
    }
    if firsts:
        out["first_error"] = firsts[0]
    print(json.dumps(out))
    return 0 if ok and not errors and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
