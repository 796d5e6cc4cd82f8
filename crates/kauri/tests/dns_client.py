#!/usr/bin/env python3
"""dnspython against Kauri's DNS server: malformed and hostile messages get FORMERR or
silence (never a crash, never an answer larger than the request allows), truncation moves
clients to TCP, and the server keeps answering.  Usage: dns_client.py HOST PORT ZONE"""

import socket
import struct
import sys

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

host, port, zone = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def raw(data, expect_reply=True):
    """Sends bytes over UDP; returns the reply, or None after a short wait."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0 if expect_reply else 0.3)
    s.sendto(data, (host, port))
    try:
        reply, _ = s.recvfrom(65535)
        return reply
    except socket.timeout:
        return None
    finally:
        s.close()


def check(cond, what):
    if not cond:
        print("FAIL", what)
        sys.exit(1)
    print("ok  ", what)


def alive():
    q = dns.message.make_query("dc1." + zone, "A")
    r = dns.query.udp(q, host, port=port, timeout=3)
    return r.rcode() == dns.rcode.NOERROR and len(r.answer) == 1


# Garbage shorter than a header: silence.
check(raw(b"\x12", expect_reply=False) is None, "a one-byte datagram gets no reply")
# A header claiming a question that is not there: FORMERR with the same id.
r = raw(struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0))
check(r is not None and r[:2] == b"\x42\x42" and (r[3] & 0x0F) == dns.rcode.FORMERR,
      "a truncated question is FORMERR")
# A compression pointer that points at itself.
loop = struct.pack(">HHHHHH", 0x4343, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c" + struct.pack(">HH", 1, 1)
r = raw(loop)
check(r is not None and (r[3] & 0x0F) == dns.rcode.FORMERR, "a pointer loop is FORMERR")
# Huge counts with no records behind them.
r = raw(struct.pack(">HHHHHH", 0x4444, 0x0100, 1, 0xFFFF, 0xFFFF, 0xFFFF) + b"\x00\x00\x01\x00\x01")
check(r is not None and (r[3] & 0x0F) == dns.rcode.FORMERR, "impossible counts are FORMERR")
# A response sent to the server: ignored.
check(raw(struct.pack(">HHHHHH", 0x4545, 0x8180, 0, 0, 0, 0), expect_reply=False) is None,
      "a response gets no reply")
# Two questions: FORMERR.
q = dns.message.make_query("dc1." + zone, "A")
wire = bytearray(q.to_wire())
wire[5] = 2
wire += wire[12:]
r = raw(bytes(wire))
check(r is not None and (r[3] & 0x0F) == dns.rcode.FORMERR, "two questions are FORMERR")
# An unknown opcode: NOTIMP.
q = dns.message.make_query("dc1." + zone, "A")
q.set_opcode(2)
r = raw(q.to_wire())
check(r is not None and (r[3] & 0x0F) == dns.rcode.NOTIMP, "STATUS (opcode 2) is NOTIMP")
# ANY over UDP without EDNS stays within 512 bytes.
q = dns.message.make_query(zone, "ANY", use_edns=False)
r = raw(q.to_wire())
check(r is not None and len(r) <= 512, "ANY without EDNS fits 512 bytes (%d)" % len(r))
# Many records under a name: truncated over UDP, whole over TCP.
q = dns.message.make_query("_ldap._tcp." + zone, "SRV", use_edns=False)
r = dns.query.udp(q, host, port=port, timeout=3)
check(r.rcode() == dns.rcode.NOERROR, "an SRV lookup answers")
q = dns.message.make_query(zone, "ANY", use_edns=False)
r = dns.query.tcp(q, host, port=port, timeout=3)
check(r.rcode() == dns.rcode.NOERROR and len(r.answer) >= 3, "ANY over TCP answers every type")
# A query for a type the name lacks, with EDNS: NODATA with the SOA.
q = dns.message.make_query("dc1." + zone, "TXT", use_edns=0, payload=4096)
r = dns.query.udp(q, host, port=port, timeout=3)
check(r.rcode() == dns.rcode.NOERROR and not r.answer and r.authority
      and r.authority[0].rdtype == dns.rdatatype.SOA, "NODATA carries the SOA")
check(r.edns == 0 and r.payload <= 1232, "the server offers at most 1232 bytes (%d)" % r.payload)
# An update with a malformed update section changes nothing and is FORMERR.
u = struct.pack(">HHHHHH", 0x4646, 0x2800, 1, 0, 1, 0)
u += dns.name.from_text(zone).to_wire() + struct.pack(">HH", 6, 1)
u += dns.name.from_text("bad." + zone).to_wire() + struct.pack(">HHIH", 1, 1, 600, 3) + b"\x01\x02\x03"
r = raw(u)
check(r is not None and (r[3] & 0x0F) == dns.rcode.FORMERR, "an A record of 3 bytes is FORMERR")
# An update signed with a key the server never negotiated: REFUSED, unsigned, nothing
# written, even in a zone that takes unsigned updates.
import dns.tsig
import dns.tsigkeyring
import dns.update
keyring = dns.tsigkeyring.from_text({"forged.key.": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"})
u = dns.update.UpdateMessage(zone, keyring=keyring, keyname="forged.key.",
                             keyalgorithm=dns.tsig.HMAC_SHA256)
u.add("forged", 600, "A", "10.0.0.77")
r = raw(u.to_wire())
check(r is not None and (r[3] & 0x0F) == dns.rcode.REFUSED, "a forged TSIG is REFUSED")
q = dns.message.make_query("forged." + zone, "A")
r = dns.query.udp(q, host, port=port, timeout=3)
check(r.rcode() == dns.rcode.NXDOMAIN, "and nothing was written")
check(alive(), "the server still answers")
