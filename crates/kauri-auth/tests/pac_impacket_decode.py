#!/usr/bin/env python3
"""Independent decoder check: decode a PAC with impacket and print its fields.

Usage: impacket_decode.py PAC_FILE

Prints one `key=value` line per field (UTF-8). Exits 3 if impacket is not
importable, so the Rust test can skip with a note. Used by
tests/impacket.rs, which compares the output with what it encoded.
"""
import struct
import sys

try:
    from impacket.krb5.pac import (
        PACTYPE, PAC_INFO_BUFFER, KERB_VALIDATION_INFO, VALIDATION_INFO,
        PAC_CLIENT_INFO, UPN_DNS_INFO, UPN_DNS_INFO_FULL, PAC_SIGNATURE_DATA,
        PAC_ATTRIBUTE_INFO, PAC_REQUESTOR,
    )
    from impacket.dcerpc.v5.rpcrt import TypeSerialization1
    from impacket.dcerpc.v5.dtypes import SID
except ImportError as e:  # pragma: no cover
    print("impacket not available: %s" % e, file=sys.stderr)
    sys.exit(3)


def filetime(ft):
    return (ft['dwHighDateTime'] << 32) | ft['dwLowDateTime']


def ustr(s):
    # RPC_UNICODE_STRING fields decode to str (or '' for null buffers).
    return s if isinstance(s, str) else str(s)


def sid_bytes_to_str(b):
    s = SID(bytes(b))
    return s.formatCanonical()


def out(key, value):
    sys.stdout.write("%s=%s\n" % (key, value))


def decode_logon_info(data):
    # Header checks done by hand, then the structure via impacket's NDR.
    version, endian, hdrlen, filler = struct.unpack_from('<BBHI', data, 0)
    objlen, filler2 = struct.unpack_from('<II', data, 8)
    out('logon.ndr_header', '%d,%#x,%d,%#x,%d,%d' % (version, endian, hdrlen, filler, objlen, filler2))
    # Full decode through TypeSerialization1 (header + top-level pointer).
    vi = VALIDATION_INFO()
    vi.fromString(data)
    vi.fromStringReferents(data[len(vi.getData()):])
    k = vi['Data']
    # Cross-check with the describeTicket.py way (skip header + referent).
    type1 = TypeSerialization1(data)
    newdata = data[len(type1) + 4:]
    k2 = KERB_VALIDATION_INFO()
    k2.fromString(newdata)
    k2.fromStringReferents(newdata[len(k2.getData()):])
    assert k2['EffectiveName'] == k['EffectiveName']
    assert k2['GroupCount'] == k['GroupCount']

    for f in ('LogonTime', 'LogoffTime', 'KickOffTime', 'PasswordLastSet',
              'PasswordCanChange', 'PasswordMustChange',
              'LastSuccessfulILogon', 'LastFailedILogon'):
        out('logon.' + f, filetime(k[f]))
    for f in ('EffectiveName', 'FullName', 'LogonScript', 'ProfilePath',
              'HomeDirectory', 'HomeDirectoryDrive', 'LogonServer',
              'LogonDomainName'):
        out('logon.' + f, ustr(k[f]))
    for f in ('LogonCount', 'BadPasswordCount', 'UserId', 'PrimaryGroupId',
              'GroupCount', 'UserFlags', 'UserAccountControl', 'SubAuthStatus',
              'FailedILogonCount', 'Reserved3', 'SidCount', 'ResourceGroupCount'):
        out('logon.' + f, k[f])
    out('logon.UserSessionKey', bytes(k['UserSessionKey']).hex())
    out('logon.GroupIds', ','.join('%d:%d' % (g['RelativeId'], g['Attributes']) for g in k['GroupIds']))
    out('logon.LogonDomainId', k['LogonDomainId'].formatCanonical())
    out('logon.ExtraSids', ','.join('%s:%d' % (e['Sid'].formatCanonical(), e['Attributes']) for e in k['ExtraSids']))
    rsid = k['ResourceGroupDomainSid']
    out('logon.ResourceGroupDomainSid', rsid.formatCanonical() if rsid != b'' and rsid is not None and len(rsid.getData()) > 4 else '')
    out('logon.ResourceGroupIds', ','.join('%d:%d' % (g['RelativeId'], g['Attributes']) for g in k['ResourceGroupIds']))


def main():
    raw = open(sys.argv[1], 'rb').read()
    pac = PACTYPE(raw)
    out('pac.cBuffers', pac['cBuffers'])
    out('pac.Version', pac['Version'])
    kinds = []
    buff = pac['Buffers']
    for i in range(pac['cBuffers']):
        info = PAC_INFO_BUFFER(buff[i * 16:])
        kinds.append(info['ulType'])
        off, size = info['Offset'], info['cbBufferSize']
        assert off % 8 == 0
        data = raw[off:off + size]
        t = info['ulType']
        if t == 1:
            decode_logon_info(data)
        elif t == 10:
            ci = PAC_CLIENT_INFO(data)
            out('client.ClientId', ci['ClientId'])
            out('client.Name', ci['Name'].decode('utf-16-le'))
        elif t == 12:
            u = UPN_DNS_INFO(data)
            out('upn.Flags', u['Flags'])
            out('upn.Upn', data[u['UpnOffset']:u['UpnOffset'] + u['UpnLength']].decode('utf-16-le'))
            out('upn.DnsDomainName', data[u['DnsDomainNameOffset']:u['DnsDomainNameOffset'] + u['DnsDomainNameLength']].decode('utf-16-le'))
            if u['Flags'] & 2:
                f = UPN_DNS_INFO_FULL(data)
                out('upn.SamName', data[f['SamNameOffset']:f['SamNameOffset'] + f['SamNameLength']].decode('utf-16-le'))
                out('upn.Sid', sid_bytes_to_str(data[f['SidOffset']:f['SidOffset'] + f['SidLength']]))
        elif t == 17:
            a = PAC_ATTRIBUTE_INFO(data)
            out('attributes.FlagsLength', a['FlagsLength'])
            out('attributes.Flags', a['Flags'])
        elif t == 18:
            r = PAC_REQUESTOR(data)
            out('requestor.Sid', r['UserSid'].formatCanonical())
        elif t in (6, 7, 16, 19):
            s = PAC_SIGNATURE_DATA(data)
            out('sig%d.SignatureType' % t, s['SignatureType'])
            out('sig%d.Signature' % t, bytes(s['Signature']).hex())
    out('pac.types', ','.join(str(k) for k in kinds))


if __name__ == '__main__':
    sys.stdout.reconfigure(encoding='utf-8')
    main()
