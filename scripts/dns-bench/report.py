#!/usr/bin/env python3
"""Helpers for dns-bench (run.sh); standard library only.

  report.py dnsperf --server S --test T --conc N --cpu-ticks T [--client-cpu-ticks T] < dnsperf output
        one JSON line from dnsperf's statistics (queries per second, latency, rcodes)
  report.py table [--machine-only] < results.jsonl   the machine and the result table
  report.py machine KEY=VALUE...          one JSON line describing the machine
  report.py ports N                       N free loopback ports (TCP and UDP both free)
"""
import json
import os
import re
import socket
import sys


def dnsperf(argv):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--conc", type=int, required=True)
    ap.add_argument("--cpu-ticks", type=int, default=None, help="server CPU ticks spent in the run")
    ap.add_argument("--client-cpu-ticks", type=int, default=None)
    ap.add_argument("--args", default="")
    a = ap.parse_args(argv)
    text = sys.stdin.read()

    def num(pattern, cast=float):
        m = re.search(pattern, text, re.M)
        return cast(m.group(1)) if m else None

    sent = num(r"^\s*Queries sent:\s+(\d+)", int)
    completed = num(r"^\s*Queries completed:\s+(\d+)", int)
    lost = num(r"^\s*Queries lost:\s+(\d+)", int)
    qps = num(r"^\s*Queries per second:\s+([\d.]+)")
    runtime = num(r"^\s*Run time \(s\):\s+([\d.]+)")
    m = re.search(r"^\s*Average Latency \(s\):\s+([\d.]+) \(min ([\d.]+), max ([\d.]+)\)", text, re.M)
    mean, lmin, lmax = (float(x) for x in m.groups()) if m else (None, None, None)
    stddev = num(r"^\s*Latency StdDev \(s\):\s+([\d.]+)")
    m = re.search(r"^\s*Average packet size:\s+request (\d+), response (\d+)", text, re.M)
    req_size, resp_size = (int(x) for x in m.groups()) if m else (None, None)
    rcodes = {}
    m = re.search(r"^\s*Response codes:\s+(.*)$", text, re.M)
    if m:
        for name, count in re.findall(r"([A-Z]+) (\d+) \(", m.group(1)):
            rcodes[name] = int(count)
    errors = {k: v for k, v in rcodes.items() if k != "NOERROR"}
    if lost:
        errors["lost"] = lost
    hz = os.sysconf("SC_CLK_TCK")
    ms = lambda s: round(s * 1000, 3) if s is not None else None
    out = {
        "server": a.server,
        "test": a.test,
        "conc": a.conc,
        "client": "dnsperf " + a.args,
        "transport": "udp",
        "duration_s": runtime,
        "sent": sent,
        "ok": rcodes.get("NOERROR", 0),
        "completed": completed,
        "qps": qps,
        "errors": errors,
        "rcodes": rcodes,
        "lat_mean_ms": ms(mean),
        "lat_stddev_ms": ms(stddev),
        "lat_min_ms": ms(lmin),
        "lat_max_ms": ms(lmax),
        "request_bytes": req_size,
        "response_bytes": resp_size,
        "server_cpu_us_per_op": (round(a.cpu_ticks / hz / completed * 1e6, 1)
                                 if a.cpu_ticks is not None and completed else None),
        "client_cpu_us_per_op": (round(a.client_cpu_ticks / hz / completed * 1e6, 1)
                                 if a.client_cpu_ticks is not None and completed else None),
    }
    if qps is None:
        out["first_error"] = (text.strip().splitlines() or ["no output"])[-1]
    print(json.dumps(out))


COLUMNS = [
    ("server", "server", "<"),
    ("test", "test", "<"),
    ("conc", "conc", ">"),
    ("qps", "ops/s", ">"),
    ("lat_mean_ms", "mean ms", ">"),
    ("lat_p50_ms", "p50 ms", ">"),
    ("lat_p99_ms", "p99 ms", ">"),
    ("lat_stddev_ms", "sd ms", ">"),
    ("lat_max_ms", "max ms", ">"),
    ("response_bytes", "resp B", ">"),
    ("server_cpu_us_per_op", "srv cpu us/op", ">"),
    ("client_cpu_us_per_op", "cli cpu us/op", ">"),
    ("errors", "errors", "<"),
]


def cell(key, v):
    if v is None or v == "":
        return "-"
    if key == "errors":
        return " ".join("%s=%d" % kv for kv in sorted(v.items())) if v else "0"
    if key == "qps":
        return "%.0f" % v
    if key.startswith("lat_") and isinstance(v, (int, float)):
        return "%.3f" % v if v < 10 else "%.1f" % v
    if isinstance(v, float):
        return "%.1f" % v
    return str(v)


def describe(m):
    """The machine line as two lines of text."""
    first = "machine: %s cores, %s, %s GiB, Linux %s" % (
        m.get("nproc"), m.get("cpu"), m.get("mem_gib"), m.get("kernel"))
    rest = "; ".join("%s %s" % (k, v) for k, v in m.items()
                     if k not in ("kind", "nproc", "cpu", "mem_gib", "kernel"))
    return [first, rest]


def table(argv):
    rows = []
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if d.get("kind") == "machine":
            print("\n".join(describe(d)))
            continue
        if "--machine-only" in argv:
            continue
        rows.append([cell(k, d.get(k)) for k, _, _ in COLUMNS])
    # Columns no row has (say, dnsperf's standard deviation) are left out.
    keep = [i for i in range(len(COLUMNS)) if not rows or any(r[i] != "-" for r in rows)]
    cols = [COLUMNS[i] for i in keep]
    rows = [[r[i] for i in keep] for r in rows]
    heads = [h for _, h, _ in cols]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]

    def fmt(r):
        return "  ".join(
            (c.ljust(w) if al == "<" else c.rjust(w))
            for c, w, (_, _, al) in zip(r, widths, cols)
        ).rstrip()

    if "--machine-only" in argv:
        return
    print(fmt(heads))
    for r in rows:
        print(fmt(r))


def machine(argv):
    d = {"kind": "machine", "nproc": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            d["cpu"] = m.group(1).strip() if m else None
    except OSError:
        d["cpu"] = None
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemTotal:\s+(\d+) kB", f.read(), re.M)
            d["mem_gib"] = round(int(m.group(1)) / 1024 / 1024, 1) if m else None
    except OSError:
        pass
    d["kernel"] = os.uname().release
    for kv in argv:
        k, _, v = kv.partition("=")
        d[k] = v
    print(json.dumps(d))


def ports(argv):
    want = int(argv[0]) if argv else 1
    got, held = [], []
    while len(got) < want:
        t = socket.socket()
        t.bind(("127.0.0.1", 0))
        p = t.getsockname()[1]
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", p))
        except OSError:
            t.close()
            u.close()
            continue
        held += [t, u]
        got.append(p)
    for s in held:
        s.close()
    print(" ".join(map(str, got)))


if __name__ == "__main__":
    cmds = {"dnsperf": dnsperf, "table": table, "machine": machine, "ports": ports}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]](sys.argv[2:])
