#!/usr/bin/env python3
"""A stand-in upstream DNS server for the forwarding test: answers every A question over
UDP with 192.0.2.44 (and NXDOMAIN for names starting with "missing"). Prints its port on
the first line, then serves until killed.  Usage: dns_upstream.py"""

import socket
import sys

import dns.flags
import dns.message
import dns.rcode
import dns.rrset

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
while True:
    data, peer = s.recvfrom(65535)
    try:
        q = dns.message.from_wire(data)
    except Exception:
        continue
    r = dns.message.make_response(q)
    r.flags |= dns.flags.RA
    name = q.question[0].name
    if name.to_text().startswith("missing"):
        r.set_rcode(dns.rcode.NXDOMAIN)
    elif q.question[0].rdtype == 1:
        r.answer.append(dns.rrset.from_text(name, 300, "IN", "A", "192.0.2.44"))
    s.sendto(r.to_wire(), peer)
