#!/usr/bin/env python3
"""impacket's Kerberos client against a Kauri KDC, for crates/kauri/tests/kerberos.rs.

Usage: kerberos_impacket.py HOST PORT REALM USER PASSWORD SPN SERVICE_ACCOUNT SERVICE_PASSWORD

Gets USER's TGT twice (with the password, which impacket turns into AES keys, and with
the NT hash alone, which makes it RC4, as getTGT.py -hashes does); service tickets for
ldap/dc1.<domain>, with impacket's own TGS-REQ (getKerberosTGS, whose authenticator has
no checksum) and with one carrying the body checksum MIT and Heimdal send, and for SPN,
whose ticket it decrypts with SERVICE_ACCOUNT's key (derived from SERVICE_PASSWORD with
AD's salt) to parse its PAC and check the server signature; then tries clocks an hour
ahead (AS and TGS) and a TGS-REQ sent twice. Prints what it found as one JSON object on
standard output; the Rust test judges it. Exits 3 when impacket is not installed, so the
test can skip. impacket always dials port 88, so its sendReceive is redirected to PORT.
"""

import datetime
import json
import random
import sys
import types

try:
    from impacket.dcerpc.v5.rpcrt import TypeSerialization1
    from impacket.krb5 import constants, kerberosv5
    from impacket.krb5.asn1 import (
        AD_IF_RELEVANT,
        AP_REQ,
        AS_REP,
        TGS_REP,
        TGS_REQ,
        Authenticator,
        EncTicketPart,
        seq_set,
        seq_set_iter,
    )
    from impacket.krb5.crypto import Key, _checksum_table, _enctype_table
    from impacket.krb5.pac import (
        KERB_VALIDATION_INFO,
        PAC_INFO_BUFFER,
        PAC_SIGNATURE_DATA,
        PACTYPE,
        UPN_DNS_INFO,
    )
    from impacket.krb5.types import KerberosTime, Principal, Ticket
    from impacket.ntlm import compute_nthash
    from pyasn1.codec.der import decoder, encoder
    from pyasn1.type.univ import noValue
except ImportError as e:  # pragma: no cover - the test skips
    print(f"impacket is not importable: {e}", file=sys.stderr)
    sys.exit(3)

# PAC buffer types (MS-PAC 2.4).
LOGON_INFO = 1
SERVER_CHECKSUM = 6
PRIVSVR_CHECKSUM = 7
UPN_DNS = 12
TICKET_CHECKSUM = 16
FULL_CHECKSUM = 19
SIGNATURES = (SERVER_CHECKSUM, PRIVSVR_CHECKSUM, TICKET_CHECKSUM, FULL_CHECKSUM)
# Signature lengths by checksum type: HMAC-SHA1-96-AES128/256, HMAC-MD5.
SIGNATURE_LENGTH = {15: 12, 16: 12, -138: 16}
# Key usage of the PAC's server signature (MS-PAC 2.8), ticket part (RFC 4120).
USAGE_PAC_SIGNATURE = 17
USAGE_TICKET = 2
USAGE_TGS_REQ_CHECKSUM = 6
USAGE_TGS_AUTHENTICATOR = 7
AD_WIN2K_PAC = 128


def main():
    host, port, realm, user, password, spn, svc_user, svc_password = sys.argv[1:9]
    port = int(port)
    send = kerberosv5.sendReceive
    # impacket always dials port 88: send to the test server's port instead.
    kerberosv5.sendReceive = lambda data, h, kdc, p=88: send(data, h, kdc, port)
    out = {}

    client = Principal(user, type=constants.PrincipalNameType.NT_PRINCIPAL.value)
    # With the password: impacket asks for AES first.
    tgt, cipher, _, session_key = kerberosv5.getKerberosTGT(
        client, password, realm, "", "", "", host
    )
    as_rep = decoder.decode(tgt, asn1Spec=AS_REP())[0]
    out["as_aes_etype"] = int(as_rep["enc-part"]["etype"])
    out["as_aes_ticket_etype"] = int(as_rep["ticket"]["enc-part"]["etype"])

    # With the NT hash only (getTGT.py -hashes :NTHASH): RC4.
    tgt_rc4, cipher_rc4, _, session_rc4 = kerberosv5.getKerberosTGT(
        client, "", realm, b"", compute_nthash(password), "", host
    )
    as_rep_rc4 = decoder.decode(tgt_rc4, asn1Spec=AS_REP())[0]
    out["as_rc4_etype"] = int(as_rep_rc4["enc-part"]["etype"])

    ldap = service(f"ldap/dc1.{realm.lower()}")
    # impacket's own TGS-REQ (getST.py, every impacket tool): its authenticator carries
    # no checksum of the request body.
    try:
        tgs, _, _, _ = kerberosv5.getKerberosTGS(ldap, realm, host, tgt, cipher, session_key)
        out["stock_tgs"] = sname_of(tgs)
    except Exception as e:
        out["stock_tgs_error"] = str(e)

    # The same request with the body checksum RFC 4120 asks for.
    out["ldap_ticket_sname"] = sname_of(tgs_req(ldap, realm, host, tgt, cipher, session_key))
    out["ldap_ticket_sname_rc4_tgt"] = sname_of(
        tgs_req(ldap, realm, host, tgt_rc4, cipher_rc4, session_rc4)
    )

    # A service ticket for the service account, decrypted with its key.
    rep = decoder.decode(
        tgs_req(service(spn), realm, host, tgt, cipher, session_key), asn1Spec=TGS_REP()
    )[0]
    etype = int(rep["ticket"]["enc-part"]["etype"])
    out["service_ticket_etype"] = etype
    if etype == constants.EncryptionTypes.rc4_hmac.value:
        key = Key(etype, compute_nthash(svc_password))
    else:
        key = _enctype_table[etype].string_to_key(
            svc_password, realm.upper() + svc_user, None
        )
    plain = _enctype_table[etype].decrypt(
        key, USAGE_TICKET, bytes(rep["ticket"]["enc-part"]["cipher"])
    )
    part = decoder.decode(plain, asn1Spec=EncTicketPart())[0]
    out["ticket_cname"] = "/".join(str(c) for c in part["cname"]["name-string"])
    out.update(read_pac(find_pac(part), key))

    # Clocks an hour apart: the encrypted timestamp of an AS-REQ and the authenticator of
    # a TGS-REQ are refused with KRB_AP_ERR_SKEW.
    real_datetime = kerberosv5.datetime
    kerberosv5.datetime = types.SimpleNamespace(
        datetime=_Skewed, timezone=datetime.timezone, timedelta=datetime.timedelta
    )
    try:
        out["as_skew_error"] = error_code(
            lambda: kerberosv5.getKerberosTGT(client, password, realm, "", "", "", host)
        )
    finally:
        kerberosv5.datetime = real_datetime
    hour = datetime.timedelta(hours=1)
    out["tgs_skew_error"] = error_code(
        lambda: kerberosv5.sendReceive(
            build_tgs_req(ldap, realm, tgt, cipher, session_key, hour), realm, host
        )
    )

    # The same TGS-REQ twice: the second must not buy a new ticket (a replay error, or
    # the first reply again from a cache of answered requests).
    request = build_tgs_req(ldap, realm, tgt, cipher, session_key)
    first = kerberosv5.sendReceive(request, realm, host)
    try:
        again = kerberosv5.sendReceive(request, realm, host)
        out["replay"] = "same reply" if again == first else "new reply"
    except kerberosv5.KerberosError as e:
        out["replay"] = int(e.getErrorCode())
    print(json.dumps(out))


def inside_tag(der):
    """The contents of a DER element (here, an explicit tag's inner element)."""
    n = der[1]
    return der[2:] if n < 0x80 else der[2 + (n & 0x7F):]


def service(name):
    return Principal(name, type=constants.PrincipalNameType.NT_SRV_INST.value)


def sname_of(tgs):
    rep = decoder.decode(tgs, asn1Spec=TGS_REP())[0]
    return "/".join(str(c) for c in rep["ticket"]["sname"]["name-string"])


def tgs_req(server, realm, host, tgt, cipher, session_key):
    """impacket's getKerberosTGS, but with the authenticator's checksum over the request
    body (key usage 6) that MIT and Heimdal clients send. Returns the TGS-REP's bytes."""
    return kerberosv5.sendReceive(
        build_tgs_req(server, realm, tgt, cipher, session_key), realm, host
    )


def error_code(f):
    """The Kerberos error code `f()` raises, or None when it succeeds."""
    try:
        f()
        return None
    except kerberosv5.KerberosError as e:
        return int(e.getErrorCode())


class _Skewed(datetime.datetime):
    """datetime.datetime whose now() is an hour ahead."""

    @classmethod
    def now(cls, tz=None):
        return datetime.datetime.now(tz) + datetime.timedelta(hours=1)


def build_tgs_req(server, realm, tgt, cipher, session_key, skew=datetime.timedelta(0)):
    """The bytes of a TGS-REQ (see tgs_req), its authenticator's time moved by `skew`."""
    as_rep = decoder.decode(tgt, asn1Spec=AS_REP())[0]
    ticket = Ticket()
    ticket.from_asn1(as_rep["ticket"])

    req = TGS_REQ()
    req["pvno"] = 5
    req["msg-type"] = int(constants.ApplicationTagNumbers.TGS_REQ.value)
    body = seq_set(req, "req-body")
    opts = [
        constants.KDCOptions.forwardable.value,
        constants.KDCOptions.renewable.value,
        constants.KDCOptions.canonicalize.value,
    ]
    body["kdc-options"] = constants.encodeFlags(opts)
    seq_set(body, "sname", server.components_to_asn1)
    body["realm"] = realm.upper()
    till = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    body["till"] = KerberosTime.to_asn1(till)
    body["nonce"] = random.getrandbits(31)
    seq_set_iter(body, "etype", (int(cipher.enctype), int(constants.EncryptionTypes.rc4_hmac.value)))

    checksum_type = {
        17: constants.ChecksumTypes.hmac_sha1_96_aes128.value,
        18: constants.ChecksumTypes.hmac_sha1_96_aes256.value,
        23: constants.ChecksumTypes.hmac_md5.value,
    }[int(cipher.enctype)]
    # The component encodes with its [4] context tag around it: checksum what is inside.
    checksum = _checksum_table[checksum_type].checksum(
        session_key, USAGE_TGS_REQ_CHECKSUM, inside_tag(encoder.encode(body))
    )

    auth = Authenticator()
    auth["authenticator-vno"] = 5
    auth["crealm"] = as_rep["crealm"].asOctets()
    client = Principal()
    client.from_asn1(as_rep, "crealm", "cname")
    seq_set(auth, "cname", client.components_to_asn1)
    now = datetime.datetime.now(datetime.timezone.utc) + skew
    auth["cusec"] = now.microsecond
    auth["ctime"] = KerberosTime.to_asn1(now)
    auth["cksum"] = noValue
    auth["cksum"]["cksumtype"] = checksum_type
    auth["cksum"]["checksum"] = checksum

    ap = AP_REQ()
    ap["pvno"] = 5
    ap["msg-type"] = int(constants.ApplicationTagNumbers.AP_REQ.value)
    ap["ap-options"] = constants.encodeFlags([])
    seq_set(ap, "ticket", ticket.to_asn1)
    ap["authenticator"] = noValue
    ap["authenticator"]["etype"] = cipher.enctype
    ap["authenticator"]["cipher"] = cipher.encrypt(
        session_key, USAGE_TGS_AUTHENTICATOR, encoder.encode(auth), None
    )
    req["padata"] = noValue
    req["padata"][0] = noValue
    req["padata"][0]["padata-type"] = int(constants.PreAuthenticationDataTypes.PA_TGS_REQ.value)
    req["padata"][0]["padata-value"] = encoder.encode(ap)
    return encoder.encode(req)


def find_pac(part):
    """The PAC inside AD-IF-RELEVANT in the ticket's authorization data."""
    for ad in part["authorization-data"]:
        if int(ad["ad-type"]) != constants.AuthorizationDataType.AD_IF_RELEVANT.value:
            continue
        inner = decoder.decode(bytes(ad["ad-data"]), asn1Spec=AD_IF_RELEVANT())[0]
        for e in inner:
            if int(e["ad-type"]) == AD_WIN2K_PAC:
                return bytes(e["ad-data"])
    raise SystemExit("the ticket carries no PAC")


def read_pac(pac, key):
    """The PAC's facts, and whether its server signature verifies with `key`."""
    out = {"pac_buffer_types": [], "signature_types": {}}
    header = PACTYPE(pac)
    buffers = header["Buffers"]
    # The server signature is a checksum with the service key over the PAC whose server
    # and KDC signature values are zeroed (MS-PAC 2.8.1).
    zeroed = bytearray(pac)
    server_sig = None
    for _ in range(header["cBuffers"]):
        info = PAC_INFO_BUFFER(buffers)
        buffers = buffers[len(info):]
        kind, offset, size = info["ulType"], info["Offset"], info["cbBufferSize"]
        out["pac_buffer_types"].append(kind)
        data = pac[offset:offset + size]
        if kind == LOGON_INFO:
            ts = TypeSerialization1(data)
            # Skip the top-level pointer's referent id.
            body = data[len(ts) + 4:]
            vi = KERB_VALIDATION_INFO()
            vi.fromString(body)
            vi.fromStringReferents(body[len(vi.getData()):])
            out["user_rid"] = vi["UserId"]
            out["primary_group"] = vi["PrimaryGroupId"]
            out["group_rids"] = [g["RelativeId"] for g in vi["GroupIds"]]
            out["logon_domain"] = str(vi["LogonDomainName"])
            out["effective_name"] = str(vi["EffectiveName"])
            out["logon_domain_sid"] = vi["LogonDomainId"].formatCanonical()
            out["extra_sids"] = [s["Sid"].formatCanonical() for s in vi["ExtraSids"]]
        elif kind == UPN_DNS:
            upn = UPN_DNS_INFO(data)
            at = upn["UpnOffset"]
            out["upn"] = data[at:at + upn["UpnLength"]].decode("utf-16-le")
            at = upn["DnsDomainNameOffset"]
            out["dns_domain"] = data[at:at + upn["DnsDomainNameLength"]].decode("utf-16-le")
        elif kind in SIGNATURES:
            sig = PAC_SIGNATURE_DATA(data)
            out["signature_types"][str(kind)] = sig["SignatureType"]
            n = SIGNATURE_LENGTH.get(sig["SignatureType"], len(sig["Signature"]))
            value = data[4:4 + n]
            if kind == SERVER_CHECKSUM:
                server_sig = (sig["SignatureType"], value)
            if kind in (SERVER_CHECKSUM, PRIVSVR_CHECKSUM):
                zeroed[offset + 4:offset + 4 + n] = bytes(n)
    if server_sig is not None:
        kind, value = server_sig
        try:
            _checksum_table[kind].verify(key, USAGE_PAC_SIGNATURE, bytes(zeroed), value)
            out["server_signature_valid"] = True
        except Exception as e:  # impacket's InvalidChecksum
            out["server_signature_valid"] = False
            out["server_signature_error"] = repr(e)
    return out


if __name__ == "__main__":
    main()
