package main

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

func testKey(t *testing.T) types.EncryptionKey {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	return types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: k}
}

// acceptorSealed builds an acceptor's sealed Wrap token as RFC 4121 §4.2.4 describes it,
// rotated right by rrc.
func acceptorSealed(t *testing.T, key types.EncryptionKey, seq uint64, data []byte, ec, rrc uint16) []byte {
	t.Helper()
	var g gssCtx
	et, _ := crypto.GetEtype(key.KeyType)
	plain := append(append(append([]byte{}, data...), make([]byte, ec)...), g.header(wrapSentByAcceptor|wrapSealed, ec, 0, seq)...)
	_, ct, err := et.EncryptMessage(key.KeyValue, plain, keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		t.Fatal(err)
	}
	r := int(rrc) % len(ct)
	ct = append(ct[len(ct)-r:], ct[:len(ct)-r]...)
	return append(g.header(wrapSentByAcceptor|wrapSealed, ec, rrc, seq), ct...)
}

func TestUnwrapAcceptorTokens(t *testing.T) {
	key := testKey(t)
	msg := []byte("0\x0c\x02\x01\x04d\x07\x04\x05hello")
	for _, c := range []struct{ ec, rrc uint16 }{{0, 0}, {0, 28}, {5, 0}, {3, 1000}} {
		g := gssCtx{key: key, recvSeq: 77}
		data, sealed, err := g.unwrap(acceptorSealed(t, key, 77, msg, c.ec, c.rrc))
		if err != nil || !sealed || !bytes.Equal(data, msg) {
			t.Fatalf("ec %d rrc %d: %q %v %v", c.ec, c.rrc, data, sealed, err)
		}
		if g.recvSeq != 78 {
			t.Fatalf("sequence not advanced")
		}
	}
	g := gssCtx{key: key, recvSeq: 5}
	if _, _, err := g.unwrap(acceptorSealed(t, key, 6, msg, 0, 0)); err == nil {
		t.Fatal("a token out of sequence was taken")
	}
	tok := acceptorSealed(t, key, 5, msg, 0, 0)
	tok[len(tok)-1] ^= 1
	if _, _, err := g.unwrap(tok); err == nil {
		t.Fatal("a tampered token was taken")
	}
	// A signed token, as the server's layer offer is.
	wt := gssapi.WrapToken{Flags: wrapSentByAcceptor, EC: 12, SndSeqNum: 5, Payload: []byte{7, 0, 1, 0}}
	if err := wt.SetCheckSum(key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		t.Fatal(err)
	}
	b, _ := wt.Marshal()
	data, sealed, err := g.unwrap(b)
	if err != nil || sealed || !bytes.Equal(data, []byte{7, 0, 1, 0}) {
		t.Fatalf("signed token: %v %v %v", data, sealed, err)
	}
	// Our own tokens are not taken back: they lack the acceptor flag.
	out := gssCtx{key: key, sendSeq: 6}
	mine, _ := out.wrap(msg, true)
	if _, _, err := g.unwrap(mine); err == nil {
		t.Fatal("an initiator's token was taken as the acceptor's")
	}
}

func TestWrapInitiatorSealed(t *testing.T) {
	key := testKey(t)
	g := gssCtx{key: key, sendSeq: 41}
	msg := []byte("a search request")
	tok, err := g.wrap(msg, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tok[:16], g.header(wrapSealed, 0, 0, 41)) || g.sendSeq != 42 {
		t.Fatalf("header % x", tok[:16])
	}
	if bytes.Contains(tok, msg) {
		t.Fatal("the message is readable in the token")
	}
	et, _ := crypto.GetEtype(key.KeyType)
	plain, err := et.DecryptMessage(key.KeyValue, tok[16:], keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, append(append([]byte{}, msg...), tok[:16]...)) {
		t.Fatalf("plaintext %q", plain)
	}
}
