package main

// LDAP modes: a client's whole short life on a DC's LDAP port — connect, bind, one search,
// unbind — with a simple bind (ldap-simple) or a SASL GSSAPI bind (RFC 4752) that
// negotiates a security layer and then seals (or signs) every message in RFC 4121 Wrap
// tokens (ldap-gssapi: a fresh service ticket from the KDC for every connection, as a new
// client process gets one; ldap-gssapi-cached: one service ticket per worker, reused, as a
// long-running client keeps it in its cache).
//
// go-ldap carries the LDAP side, its GSSAPIBindRequest the SASL token exchange. Its own
// GSSAPI client (ldap/v3/gssapi) always chooses "no security layer" and go-ldap does not
// wrap messages after a bind, so the GSSAPI client here is our own on gokrb5's messages
// (AP-REQ with an initiator subkey and a sequence number, AP-REP checked, the layer
// negotiated), and saslConn below the go-ldap connection wraps and unwraps every LDAP
// message once the layer is on.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// SASL GSSAPI security layers (RFC 4752 §3.3).
const (
	layerNone  byte = 1
	layerInteg byte = 2
	layerConf  byte = 4
)

var layerNames = map[string]byte{"none": layerNone, "integ": layerInteg, "conf": layerConf}

func layerString(b byte) string {
	var s []string
	for _, n := range []string{"none", "integ", "conf"} {
		if b&layerNames[n] != 0 {
			s = append(s, n)
		}
	}
	if len(s) == 0 {
		return fmt.Sprintf("0x%02x", b)
	}
	return strings.Join(s, "+")
}

// Wrap token flags (RFC 4121 §4.2.2).
const (
	wrapSentByAcceptor byte = 0x01
	wrapSealed         byte = 0x02
	wrapAcceptorSubkey byte = 0x04
)

// ldapTarget is the LDAP server under test and what the operations ask of it.
type ldapTarget struct {
	addr     string        // host:port to connect to
	host     string        // the GSSAPI target host: the service is ldap/<host>
	base     string        // the domain's DN, the search base
	layer    byte          // the security layer a GSSAPI bind chooses
	bindName string        // simple binds: "dn" or "upn"
	upnHost  string        // the UPN suffix
	timeout  time.Duration // per connection
}

func (t *ldapTarget) spn() string { return "ldap/" + t.host }

func (t *ldapTarget) userDN(user string) string { return "CN=" + user + ",CN=Users," + t.base }

// ldapFail classifies an error go-ldap returned: network failures as the KDC modes do,
// LDAP result codes by name (ldap_invalid_credentials, ...).
func ldapFail(step string, err error) error {
	var oe *opError
	if errors.As(err, &oe) {
		return err
	}
	var le *ldap.Error
	if errors.As(err, &le) {
		if le.ResultCode == ldap.ErrorNetwork {
			if le.Err != nil && !strings.HasPrefix(le.Err.Error(), "ldap:") {
				return netFail(fmt.Errorf("%s: %w", step, le.Err))
			}
			return fail("closed_early", fmt.Errorf("%s: %v", step, err))
		}
		name := strings.ToLower(strings.ReplaceAll(ldap.LDAPResultCodeMap[le.ResultCode], " ", "_"))
		if name == "" {
			name = fmt.Sprintf("result_%d", le.ResultCode)
		}
		return fail("ldap_"+name, fmt.Errorf("%s: %v", step, err))
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) {
		return netFail(err)
	}
	return fail("ldap_error", fmt.Errorf("%s: %v", step, err))
}

func (t *ldapTarget) connect(wrap bool) (*ldap.Conn, *saslConn, error) {
	c, err := net.DialTimeout("tcp", t.addr, t.timeout)
	if err != nil {
		return nil, nil, netFail(err)
	}
	c.SetDeadline(time.Now().Add(t.timeout))
	var nc net.Conn = c
	var sc *saslConn
	if wrap {
		sc = &saslConn{Conn: c}
		nc = sc
	}
	l := ldap.NewConn(nc, false)
	l.Start()
	l.SetTimeout(t.timeout)
	return l, sc, nil
}

// search looks the user up by sAMAccountName under the domain and checks the one entry.
func (t *ldapTarget) search(l *ldap.Conn, user string) error {
	res, err := l.Search(ldap.NewSearchRequest(t.base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		0, 0, false, "(sAMAccountName="+user+")", []string{"cn", "memberOf"}, nil))
	if err != nil {
		return ldapFail("search", err)
	}
	if len(res.Entries) != 1 || res.Entries[0].GetAttributeValue("cn") != user ||
		len(res.Entries[0].GetAttributeValues("memberOf")) == 0 {
		return fail("search_wrong_entry", fmt.Errorf("search for %s: %d entries", user, len(res.Entries)))
	}
	return nil
}

// simpleOp is one connection's life with a simple bind.
func (t *ldapTarget) simpleOp(user, password string) error {
	l, _, err := t.connect(false)
	if err != nil {
		return err
	}
	defer l.Close()
	name := t.userDN(user)
	if t.bindName == "upn" {
		name = user + "@" + t.upnHost
	}
	if err := l.Bind(name, password); err != nil {
		return ldapFail("bind", err)
	}
	if err := t.search(l, user); err != nil {
		return err
	}
	if err := l.Unbind(); err != nil {
		return ldapFail("unbind", err)
	}
	return nil
}

// gssapiOp is one connection's life with a SASL GSSAPI bind on the given service ticket.
func (t *ldapTarget) gssapiOp(user string, cname types.PrincipalName, realm string, tkt messages.Ticket, skey types.EncryptionKey) error {
	l, sc, err := t.connect(true)
	if err != nil {
		return err
	}
	defer l.Close()
	gc := &gssClient{cname: cname, realm: realm, tkt: tkt, skey: skey, layer: t.layer}
	if err := l.GSSAPIBindRequest(gc, &ldap.GSSAPIBindRequest{ServicePrincipalName: t.spn()}); err != nil {
		if gc.err != nil {
			return gc.err
		}
		return ldapFail("gssapi bind", err)
	}
	if gc.chosen == 0 {
		return fail("gssapi_incomplete", errors.New("bind succeeded before the layer was negotiated"))
	}
	if gc.chosen != layerNone {
		sc.start(&gc.ctx, gc.chosen == layerConf)
	}
	if err := t.search(l, user); err != nil {
		if e := sc.failure(); e != nil {
			return e
		}
		return err
	}
	if err := l.Unbind(); err != nil {
		return ldapFail("unbind", err)
	}
	if e := sc.failure(); e != nil {
		return e
	}
	return nil
}

// ---------------------------------------------------------------- the GSS-API context

// gssCtx is an established Kerberos context on the initiator's side (RFC 4121).
type gssCtx struct {
	key            types.EncryptionKey
	acceptorSubkey bool // the AP-REP carried a subkey: tokens use it and say so
	sendSeq        uint64
	recvSeq        uint64
}

func (g *gssCtx) header(flags byte, ec, rrc uint16, seq uint64) []byte {
	h := make([]byte, 16, 16)
	h[0], h[1], h[2], h[3] = 0x05, 0x04, flags, 0xff
	binary.BigEndian.PutUint16(h[4:], ec)
	binary.BigEndian.PutUint16(h[6:], rrc)
	binary.BigEndian.PutUint64(h[8:], seq)
	return h
}

// wrap makes an initiator's Wrap token: sealed (encrypted, EC 0, RRC 0, as MIT sends) or
// only signed (gokrb5's WrapToken).
func (g *gssCtx) wrap(data []byte, seal bool) ([]byte, error) {
	seq := g.sendSeq
	g.sendSeq++
	var fl byte
	if g.acceptorSubkey {
		fl |= wrapAcceptorSubkey
	}
	et, err := crypto.GetEtype(g.key.KeyType)
	if err != nil {
		return nil, err
	}
	if !seal {
		wt := gssapi.WrapToken{Flags: fl, EC: uint16(et.GetHMACBitLength() / 8), SndSeqNum: seq, Payload: data}
		if err := wt.SetCheckSum(g.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
			return nil, err
		}
		return wt.Marshal()
	}
	h := g.header(fl|wrapSealed, 0, 0, seq)
	plain := make([]byte, 0, len(data)+16)
	plain = append(append(plain, data...), h...)
	_, ct, err := et.EncryptMessage(g.key.KeyValue, plain, keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, err
	}
	return append(h, ct...), nil
}

// unwrap checks an acceptor's Wrap token and returns its contents and whether it was sealed.
func (g *gssCtx) unwrap(tok []byte) ([]byte, bool, error) {
	if len(tok) < 16 || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != 0xff {
		return nil, false, errors.New("not a Wrap token")
	}
	fl := tok[2]
	if fl&wrapSentByAcceptor == 0 || fl&^byte(0x07) != 0 {
		return nil, false, fmt.Errorf("unexpected Wrap token flags 0x%02x", fl)
	}
	if (fl&wrapAcceptorSubkey != 0) != g.acceptorSubkey {
		return nil, false, fmt.Errorf("Wrap token flags 0x%02x disagree with the AP-REP about the acceptor subkey", fl)
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	seq := binary.BigEndian.Uint64(tok[8:16])
	body := append([]byte(nil), tok[16:]...)
	if len(body) > 0 && rrc%len(body) != 0 {
		r := rrc % len(body)
		body = append(body[r:], body[:r]...)
	}
	et, err := crypto.GetEtype(g.key.KeyType)
	if err != nil {
		return nil, false, err
	}
	var data []byte
	sealed := fl&wrapSealed != 0
	if sealed {
		plain, err := et.DecryptMessage(g.key.KeyValue, body, keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil {
			return nil, true, fmt.Errorf("sealed Wrap token: %v", err)
		}
		if len(plain) < 16+ec {
			return nil, true, errors.New("sealed Wrap token too short")
		}
		inner := plain[len(plain)-16:]
		if !bytes.Equal(inner, g.header(fl, uint16(ec), 0, seq)) {
			return nil, true, errors.New("sealed Wrap token: the encrypted header differs")
		}
		data = plain[:len(plain)-16-ec]
	} else {
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(append(g.header(fl, uint16(ec), 0, seq), body...), true); err != nil {
			return nil, false, err
		}
		if ok, err := wt.Verify(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
			return nil, false, fmt.Errorf("signed Wrap token: %v", err)
		}
		data = wt.Payload
	}
	if seq != g.recvSeq {
		return nil, sealed, fmt.Errorf("Wrap token sequence number %d, want %d", seq, g.recvSeq)
	}
	g.recvSeq++
	return data, sealed, nil
}

// gssClient is go-ldap's GSSAPIClient over one service ticket: it makes the AP-REQ (mutual
// authentication, integrity and, for the confidentiality layer, confidentiality asked
// for), checks the AP-REP and negotiates the layer (RFC 4752 §3.1).
type gssClient struct {
	cname types.PrincipalName
	realm string
	tkt   messages.Ticket
	skey  types.EncryptionKey
	layer byte

	auth    types.Authenticator
	ctx     gssCtx
	offered byte  // the layers the server offered
	maxBuf  int   // the server's largest buffer
	chosen  byte  // the layer chosen, once the last token is out
	err     error // a classified failure, for the operation's error code
}

func (g *gssClient) setErr(code string, err error) error {
	g.err = fail(code, err)
	return g.err
}

func (g *gssClient) InitSecContext(target string, token []byte) ([]byte, bool, error) {
	return g.InitSecContextWithOptions(target, token, nil)
}

func (g *gssClient) InitSecContextWithOptions(target string, token []byte, apOptions []int) ([]byte, bool, error) {
	if token == nil {
		return g.apReq(apOptions)
	}
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(token); err != nil {
		return nil, false, g.setErr("gssapi_bad_reply", fmt.Errorf("server token: %v", err))
	}
	if kt.IsKRBError() {
		return nil, false, g.setErr(krbErrName(kt.KRBError.ErrorCode), fmt.Errorf("server sent KRB-ERROR: %s", kt.KRBError.EText))
	}
	if !kt.IsAPRep() {
		return nil, false, g.setErr("gssapi_bad_reply", errors.New("server token is not an AP-REP"))
	}
	plain, err := crypto.DecryptEncPart(kt.APRep.EncPart, g.skey, keyusage.AP_REP_ENCPART)
	if err != nil {
		return nil, false, g.setErr("reply_decrypt_failed", fmt.Errorf("AP-REP: %v", err))
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return nil, false, g.setErr("gssapi_bad_reply", fmt.Errorf("AP-REP: %v", err))
	}
	if part.CTime.Unix() != g.auth.CTime.Unix() || part.Cusec != g.auth.Cusec {
		return nil, false, g.setErr("gssapi_mutual_failed", errors.New("AP-REP time differs from the authenticator's"))
	}
	// RFC 4121 §2: the acceptor's subkey if it sent one, else the initiator's.
	g.ctx = gssCtx{key: g.auth.SubKey, sendSeq: uint64(g.auth.SeqNumber), recvSeq: uint64(part.SequenceNumber)}
	if len(part.Subkey.KeyValue) > 0 {
		g.ctx.key, g.ctx.acceptorSubkey = part.Subkey, true
	}
	return []byte{}, false, nil
}

// apReq makes the initial context token: an AP-REQ whose authenticator carries the GSS
// checksum with the context flags, a subkey and a sequence number (as MIT's library does).
func (g *gssClient) apReq(apOptions []int) ([]byte, bool, error) {
	auth, err := types.NewAuthenticator(g.realm, g.cname)
	if err != nil {
		return nil, false, g.setErr("client_error", err)
	}
	et, err := crypto.GetEtype(g.skey.KeyType)
	if err != nil {
		return nil, false, g.setErr("client_error", err)
	}
	if err := auth.GenerateSeqNumberAndSubKey(g.skey.KeyType, et.GetKeyByteSize()); err != nil {
		return nil, false, g.setErr("client_error", err)
	}
	fl := uint32(gssapi.ContextFlagMutual | gssapi.ContextFlagSequence | gssapi.ContextFlagInteg)
	if g.layer == layerConf {
		fl |= gssapi.ContextFlagConf
	}
	ck := make([]byte, 24) // RFC 4121 §4.1.1: Lgth 16, zero channel bindings, flags
	binary.LittleEndian.PutUint32(ck[0:], 16)
	binary.LittleEndian.PutUint32(ck[20:], fl)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: ck}
	g.auth = auth
	req, err := messages.NewAPReq(g.tkt, g.skey, auth)
	if err != nil {
		return nil, false, g.setErr("client_error", err)
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	for _, o := range apOptions {
		types.SetFlag(&req.APOptions, o)
	}
	rb, err := req.Marshal()
	if err != nil {
		return nil, false, g.setErr("client_error", err)
	}
	oid, _ := asn1.Marshal(gssapi.OIDKRB5.OID())
	b := append(append(oid, 0x01, 0x00), rb...) // TOK_ID KRB_AP_REQ
	return asn1tools.AddASNAppTag(b, 0), true, nil
}

// NegotiateSaslAuth reads the server's offer (a signed Wrap token: layers and largest
// buffer) and answers with the chosen layer, our largest buffer and no authzid.
func (g *gssClient) NegotiateSaslAuth(token []byte, authzid string) ([]byte, error) {
	offer, _, err := g.ctx.unwrap(token)
	if err != nil {
		return nil, g.setErr("gssapi_bad_offer", fmt.Errorf("layer offer: %v", err))
	}
	if len(offer) != 4 {
		return nil, g.setErr("gssapi_bad_offer", fmt.Errorf("layer offer of %d bytes", len(offer)))
	}
	g.offered = offer[0]
	g.maxBuf = int(offer[1])<<16 | int(offer[2])<<8 | int(offer[3])
	if g.offered&g.layer == 0 {
		return nil, g.setErr("gssapi_layer_not_offered",
			fmt.Errorf("server offers %s, we want %s", layerString(g.offered), layerString(g.layer)))
	}
	choice := []byte{g.layer, 0x01, 0x00, 0x00} // we take buffers up to 64 KiB, as OpenLDAP does
	choice = append(choice, authzid...)
	out, err := g.ctx.wrap(choice, false)
	if err != nil {
		return nil, g.setErr("client_error", err)
	}
	g.chosen = g.layer
	return out, nil
}

func (g *gssClient) DeleteSecContext() error { return nil }

// ---------------------------------------------------------------- the security layer

// saslConn is the connection under go-ldap: plain until start, then every Write is one
// SASL buffer (4-byte length, Wrap token) and Read returns the unwrapped stream. go-ldap
// writes each message with one Write, so each buffer holds one LDAP message.
type saslConn struct {
	net.Conn
	on    atomic.Bool
	ctx   *gssCtx
	seal  bool
	raw   []byte // received bytes not yet unwrapped
	plain []byte // unwrapped bytes not yet read
	err   atomic.Pointer[opError]
	// What went over the wire once the layer was on (for the layer check).
	tokensIn, tokensOut, sealedIn int
	record                        bool
	rawIn                         []byte
}

// start turns the layer on. The server sends nothing between its bind response and our
// next request, so bytes a Read already waiting receives after this are wrapped.
func (s *saslConn) start(ctx *gssCtx, seal bool) {
	s.ctx, s.seal = ctx, seal
	s.on.Store(true)
}

func (s *saslConn) failure() error {
	if s == nil {
		return nil
	}
	if e := s.err.Load(); e != nil {
		return e
	}
	return nil
}

func (s *saslConn) Write(p []byte) (int, error) {
	if !s.on.Load() {
		return s.Conn.Write(p)
	}
	tok, err := s.ctx.wrap(p, s.seal)
	if err != nil {
		s.err.CompareAndSwap(nil, &opError{"client_error", err})
		return 0, err
	}
	s.tokensOut++
	buf := make([]byte, 4+len(tok))
	binary.BigEndian.PutUint32(buf, uint32(len(tok)))
	copy(buf[4:], tok)
	if _, err := s.Conn.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *saslConn) Read(p []byte) (int, error) {
	if len(s.plain) > 0 {
		n := copy(p, s.plain)
		s.plain = s.plain[n:]
		return n, nil
	}
	if !s.on.Load() {
		n, err := s.Conn.Read(p)
		if !s.on.Load() {
			return n, err
		}
		s.raw = append(s.raw, p[:n]...) // the layer came on while this read waited
		if s.record {
			s.rawIn = append(s.rawIn, p[:n]...)
		}
		if err != nil && len(s.raw) == 0 {
			return 0, err
		}
	}
	var tmp [8192]byte
	for {
		if len(s.raw) >= 4 {
			l := int(binary.BigEndian.Uint32(s.raw))
			if l > 1<<24 {
				err := fmt.Errorf("SASL buffer of %d bytes", l)
				s.err.CompareAndSwap(nil, &opError{"bad_reply", err})
				return 0, err
			}
			if len(s.raw) >= 4+l {
				data, sealed, err := s.ctx.unwrap(s.raw[4 : 4+l])
				s.raw = s.raw[4+l:]
				if err != nil {
					s.err.CompareAndSwap(nil, &opError{"layer_unwrap_failed", err})
					return 0, err
				}
				s.tokensIn++
				if sealed {
					s.sealedIn++
				} else if s.seal {
					err := errors.New("the server's Wrap token is not sealed on a confidentiality layer")
					s.err.CompareAndSwap(nil, &opError{"layer_not_sealed", err})
					return 0, err
				}
				n := copy(p, data)
				s.plain = data[n:]
				if n > 0 {
					return n, nil
				}
				continue
			}
		}
		n, err := s.Conn.Read(tmp[:])
		s.raw = append(s.raw, tmp[:n]...)
		if s.record {
			s.rawIn = append(s.rawIn, tmp[:n]...)
		}
		if err != nil {
			if err == io.EOF && len(s.raw) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
}

// ---------------------------------------------------------------- checking the layer

// ldapMsg encodes one LDAP message with go-ldap's BER package.
func ldapMsg(id int64, op *ber.Packet) []byte {
	env := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "LDAP Request")
	env.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, "MessageID"))
	env.AppendChild(op)
	return env.Bytes()
}

func saslBindMsg(id int64, cred []byte) []byte {
	req := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationBindRequest, nil, "Bind Request")
	req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 3, "Version"))
	req.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "User Name"))
	auth := ber.Encode(ber.ClassContext, ber.TypeConstructed, 3, "", "authentication")
	auth.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "GSSAPI", "SASL Mech"))
	if cred != nil {
		auth.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, string(cred), "Credentials"))
	}
	req.AppendChild(auth)
	return ldapMsg(id, req)
}

func searchMsg(id int64, base, filter string, attrs []string) ([]byte, error) {
	req := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationSearchRequest, nil, "Search Request")
	req.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, base, "Base DN"))
	req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, uint64(ldap.ScopeWholeSubtree), "Scope"))
	req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, uint64(ldap.NeverDerefAliases), "Deref Aliases"))
	req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, uint64(0), "Size Limit"))
	req.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, uint64(0), "Time Limit"))
	req.AppendChild(ber.NewBoolean(ber.ClassUniversal, ber.TypePrimitive, ber.TagBoolean, false, "Types Only"))
	f, err := ldap.CompileFilter(filter)
	if err != nil {
		return nil, err
	}
	req.AppendChild(f)
	as := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "Attributes")
	for _, a := range attrs {
		as.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, a, "Attribute"))
	}
	req.AppendChild(as)
	return ldapMsg(id, req), nil
}

// bindReply reads a bind response: result code, diagnostic message, serverSaslCreds.
func bindReply(r io.Reader) (int64, string, []byte, error) {
	p, err := ber.ReadPacket(r)
	if err != nil {
		return 0, "", nil, err
	}
	if len(p.Children) < 2 || p.Children[1].Tag != ldap.ApplicationBindResponse || len(p.Children[1].Children) < 3 {
		return 0, "", nil, errors.New("not a bind response")
	}
	op := p.Children[1]
	code, _ := op.Children[0].Value.(int64)
	msg, _ := op.Children[2].Value.(string)
	var creds []byte
	for _, c := range op.Children[3:] {
		if c.ClassType == ber.ClassContext && c.Tag == 7 {
			creds = c.Data.Bytes()
		}
	}
	return code, msg, creds, nil
}

// rawGSSAPIBind binds on a bare connection, token by token, and returns the context.
func rawGSSAPIBind(c net.Conn, br io.Reader, g *gssClient) error {
	tok, _, err := g.InitSecContext("", nil)
	if err != nil {
		return err
	}
	steps := []string{"AP-REQ", "empty token", "layer choice"}
	for i, step := range steps {
		if _, err := c.Write(saslBindMsg(int64(i+1), tok)); err != nil {
			return fmt.Errorf("sending the %s: %v", step, err)
		}
		code, msg, creds, err := bindReply(br)
		if err != nil {
			return fmt.Errorf("reply to the %s: %v", step, err)
		}
		want := int64(ldap.LDAPResultSaslBindInProgress)
		if i == 2 {
			want = ldap.LDAPResultSuccess
		}
		if code != want {
			return fmt.Errorf("reply to the %s: result %d %q: %s", step, code, ldap.LDAPResultCodeMap[uint16(code)], msg)
		}
		switch i {
		case 0:
			if tok, _, err = g.InitSecContext("", creds); err != nil {
				return err
			}
			tok = nil // the empty response, without credentials, as go-ldap sends it
		case 1:
			if tok, err = g.NegotiateSaslAuth(creds, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLayer shows, on three connections of its own, that the security layer is really
// on after a GSSAPI bind that chose one: (1) a wrapped search gets a wrapped answer whose
// tokens are sealed (for conf) and whose bytes on the wire do not contain the entry's DN
// or attribute names, which the unwrapped answer does; (2) a plain search after the bind
// gets no plain answer; (3) for conf, a search in a signed-only token is refused.
func (t *ldapTarget) checkLayer(user string, cname types.PrincipalName, realm string, tkt messages.Ticket, skey types.EncryptionKey) (string, error) {
	if t.layer == layerNone {
		return "no layer chosen", nil
	}
	dial := func() (net.Conn, *gssClient, error) {
		c, err := net.DialTimeout("tcp", t.addr, t.timeout)
		if err != nil {
			return nil, nil, err
		}
		c.SetDeadline(time.Now().Add(t.timeout))
		g := &gssClient{cname: cname, realm: realm, tkt: tkt, skey: skey, layer: t.layer}
		if err := rawGSSAPIBind(c, c, g); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("GSSAPI bind: %v", err)
		}
		return c, g, nil
	}
	search, err := searchMsg(4, t.base, "(sAMAccountName="+user+")", []string{"cn", "memberOf"})
	if err != nil {
		return "", err
	}
	var notes []string

	// (1) A wrapped search.
	c, g, err := dial()
	if err != nil {
		return "", err
	}
	notes = append(notes, fmt.Sprintf("offered %s, chose %s, server max buffer %d", layerString(g.offered), layerString(g.chosen), g.maxBuf))
	sc := &saslConn{Conn: c, record: true}
	sc.start(&g.ctx, t.layer == layerConf)
	if _, err := sc.Write(search); err != nil {
		c.Close()
		return "", fmt.Errorf("wrapped search: %v", err)
	}
	var plain []byte
	for {
		p, err := ber.ReadPacket(sc)
		if err != nil {
			c.Close()
			if e := sc.failure(); e != nil {
				return "", fmt.Errorf("wrapped search: %v", e)
			}
			return "", fmt.Errorf("wrapped search: reading the answer: %v", err)
		}
		plain = append(plain, p.Bytes()...)
		if len(p.Children) >= 2 && p.Children[1].Tag == ldap.ApplicationSearchResultDone {
			if rc, _ := p.Children[1].Children[0].Value.(int64); rc != 0 {
				c.Close()
				return "", fmt.Errorf("wrapped search: result %d", rc)
			}
			break
		}
	}
	c.Close()
	dn := []byte(t.userDN(user))
	if !bytes.Contains(plain, dn) || !bytes.Contains(plain, []byte("memberOf")) {
		return "", errors.New("wrapped search: the unwrapped answer lacks the entry")
	}
	if t.layer == layerConf {
		if sc.sealedIn != sc.tokensIn {
			return "", fmt.Errorf("wrapped search: %d of %d answer tokens sealed", sc.sealedIn, sc.tokensIn)
		}
		if bytes.Contains(sc.rawIn, dn) || bytes.Contains(sc.rawIn, []byte("memberOf")) {
			return "", errors.New("wrapped search: the entry is readable on the wire")
		}
		notes = append(notes, fmt.Sprintf("search answer: %d sealed tokens, %d bytes on the wire, entry not readable there", sc.tokensIn, len(sc.rawIn)))
	} else {
		notes = append(notes, fmt.Sprintf("search answer: %d signed tokens", sc.tokensIn))
	}

	// (2) A plain search after the bind.
	c, g, err = dial()
	if err != nil {
		return "", err
	}
	c.Write(search)
	got, rerr := io.ReadAll(io.LimitReader(c, 1<<16))
	c.Close()
	if bytes.Contains(got, dn) {
		return "", fmt.Errorf("SERVER PROBLEM: a plain search after the layer was negotiated was answered in plain (%d bytes)", len(got))
	}
	switch {
	case len(got) == 0 && rerr == nil:
		notes = append(notes, "plain search after the bind: connection closed, no answer")
	case len(got) == 0:
		notes = append(notes, fmt.Sprintf("plain search after the bind: no answer (%v)", rerr))
	default:
		notes = append(notes, fmt.Sprintf("plain search after the bind: %d bytes back, not the entry: %s", len(got), describeReply(got, &g.ctx)))
	}

	// (3) For conf: a search in a signed-only token.
	if t.layer == layerConf {
		c, g, err = dial()
		if err != nil {
			return "", err
		}
		tok, _ := g.ctx.wrap(search, false)
		buf := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
		c.Write(append(buf, tok...))
		got, rerr := io.ReadAll(io.LimitReader(c, 1<<16))
		c.Close()
		if len(got) >= 4 {
			if l := int(binary.BigEndian.Uint32(got)); len(got) >= 4+l {
				cc := g.ctx // describeReply below unwraps the same token
				if data, _, err := cc.unwrap(got[4 : 4+l]); err == nil && bytes.Contains(data, dn) {
					return "", errors.New("SERVER PROBLEM: a signed-only search on a confidentiality layer was answered")
				}
			}
		}
		if len(got) == 0 && rerr == nil {
			notes = append(notes, "signed-only search on the conf layer: connection closed, no answer")
		} else {
			notes = append(notes, fmt.Sprintf("signed-only search on the conf layer: %d bytes back, no entry: %s", len(got), describeReply(got, &g.ctx)))
		}
	}
	return strings.Join(notes, "; "), nil
}

// describeReply says what a server sent back: SASL buffers (unwrapped with ctx) or plain
// LDAP messages, each as its operation and result.
func describeReply(b []byte, ctx *gssCtx) string {
	var out []string
	for len(b) > 0 {
		var msg []byte
		how := "plain"
		if len(b) >= 4 && b[0] != 0x30 {
			l := int(binary.BigEndian.Uint32(b))
			if len(b) < 4+l {
				out = append(out, fmt.Sprintf("%d bytes, a cut SASL buffer", len(b)))
				break
			}
			data, sealed, err := ctx.unwrap(b[4 : 4+l])
			b = b[4+l:]
			if err != nil {
				out = append(out, fmt.Sprintf("a SASL buffer that does not unwrap (%v)", err))
				continue
			}
			msg, how = data, map[bool]string{true: "sealed", false: "signed"}[sealed]
		} else {
			p, err := ber.DecodePacketErr(b)
			if err != nil {
				out = append(out, fmt.Sprintf("%d bytes, not LDAP (%v)", len(b), err))
				break
			}
			n := len(p.Bytes())
			msg, b = b[:n], b[n:]
		}
		p, err := ber.DecodePacketErr(msg)
		if err != nil || len(p.Children) < 2 {
			out = append(out, how+" bytes that are not an LDAP message")
			continue
		}
		op := p.Children[1]
		d := fmt.Sprintf("%s LDAP message %v, op [APPLICATION %d]", how, p.Children[0].Value, op.Tag)
		if len(op.Children) >= 3 {
			code, _ := op.Children[0].Value.(int64)
			text, _ := op.Children[2].Value.(string)
			d += fmt.Sprintf(" result %d %q %q", code, ldap.LDAPResultCodeMap[uint16(code)], text)
		}
		for _, c := range op.Children[3:] {
			if c.ClassType == ber.ClassContext && c.Tag == 10 { // responseName
				d += " name " + c.Data.String()
			}
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}
