package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
)

// A vector taken from an MIT krb5 1.20 database: realm KAURI.TEST, AES-256 master key (from
// the stash), and user5's AES-256 key data as kdb5_util dump printed it; the user's password
// was "Passw0rd".
const (
	mitMasterKey = "734e80d10f881eba5a075adef81deb31ca7ae4b9ea8f2adf90d734261ac9026d"
	mitUser5Key  = "a18254369b6016112f939bd41e5cb81d54e3defd6d1f716442261be963c9ec22"
	mitUser5Data = "2000210b2bda3c8d5a936f2e862dc640b64a6c605ba552a7928412263fbaba7a0a5c26d9624fd46d62d6962ea566c4a5ca47643467a8622759777049a854"
	mitUser5Line = "princ\t38\t16\t4\t3\t0\tuser5@KAURI.TEST\t128\t86400\t0\t0\t0\t0\t0\t0\t3\t24\t12345c010000000000000000000000000000000200000000\t2\t26\td690086b726f6f742f61646d696e404b415552492e5445535400\t8\t2\t0100\t1\t4\td690086b\t1\t1\t18\t62\t" + mitUser5Data + "\t1\t1\t17\t46\t1000cc907e8710136ad17a4987f81f8d1ba02105d055d760812e46b53964cfb49631cb93d00292b331e5f38aef4f\t1\t1\t23\t46\t1000484c2b83c3826db87365354a48c81cb39f1ab5cd7cfbced8dc03568e2ceb15e29be9b1a787c2fc0c5175f13b\t-1;"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDeriveUserKeysMatchesMIT(t *testing.T) {
	k, err := deriveUserKeys("Passw0rd", "KAURI.TESTuser5")
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(k[0]); got != mitUser5Key {
		t.Fatalf("aes256 key %s, MIT has %s", got, mitUser5Key)
	}
	if err := checkDerivation("Passw0rd", "KAURI.TESTuser5"); err != nil {
		t.Fatal(err)
	}
}

func TestMasterKeyUnwrapOfMITKeyData(t *testing.T) {
	met, _ := crypto.GetEtype(18)
	data := unhex(t, mitUser5Data)
	if n := binary.LittleEndian.Uint16(data); n != 32 {
		t.Fatalf("length prefix %d", n)
	}
	plain, err := met.DecryptMessage(unhex(t, mitMasterKey), data[2:], 0)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(plain) != mitUser5Key {
		t.Fatalf("unwrapped %x", plain)
	}
}

func TestRenderWrapsKeysAsMITDoes(t *testing.T) {
	rec, err := parsePrinc(mitUser5Line)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.keys) != 3 {
		t.Fatalf("%d keys", len(rec.keys))
	}
	keys, err := deriveUserKeys("Passw0rd", "KAURI.TESTuser42")
	if err != nil {
		t.Fatal(err)
	}
	met, _ := crypto.GetEtype(18)
	mkey := unhex(t, mitMasterKey)
	line, err := rec.render("user42@KAURI.TEST", keys, met, mkey)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(line, "\t")
	orig := strings.Split(mitUser5Line, "\t")
	if len(f) != len(orig) || f[2] != "17" || f[6] != "user42@KAURI.TEST" {
		t.Fatalf("fields: %d (want %d), name length %s, name %s", len(f), len(orig), f[2], f[6])
	}
	// Everything but the name, its length and the key contents is the template's.
	for i := range f {
		if i == 2 || i == 6 || strings.HasPrefix(orig[i], "2000") || strings.HasPrefix(orig[i], "1000") {
			continue
		}
		if f[i] != orig[i] {
			t.Fatalf("field %d: %q, template %q", i, f[i], orig[i])
		}
	}
	// Unwrap each key and compare.
	p := len(f) - 1 - 3*5
	for j := 0; j < 3; j++ {
		kd := f[p+5*j : p+5*j+5] // ver kvno type len contents
		c := unhex(t, kd[4])
		plain, err := met.DecryptMessage(mkey, c[2:], 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := keys[etypeIndex(int32(atoi(t, kd[2])))]; !bytes.Equal(plain, want) || int(binary.LittleEndian.Uint16(c)) != len(want) {
			t.Fatalf("key %d: unwrapped %x, want %x", j, plain, want)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
