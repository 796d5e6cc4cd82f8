// Command kdc-bench is a load client for Kerberos KDCs. It measures a KDC's AS exchange (a
// full password login with PA-ENC-TIMESTAMP pre-authentication, as kinit does it) and TGS
// exchange (service tickets requested with a TGT), reporting throughput, latency percentiles
// and errors by Kerberos error code.
//
// It builds and checks messages with gokrb5's messages and crypto packages and does its own
// transport (one TCP connection, or one UDP socket, per exchange, as MIT's and Windows'
// clients do), so each operation really goes over the wire and no ticket is cached.
//
//	kdc-bench as      -kdc 127.0.0.1:18888 -realm KAURI.TEST -users 100000 -password P -conc 8
//	kdc-bench tgs     -kdc 127.0.0.1:18888 -realm KAURI.TEST -service ldap/dc1.kauri.test -conc 8
//	kdc-bench ldap-simple -ldap 127.0.0.1:389 -realm SAMDOM.EXAMPLE.COM -users 2000 -conc 8
//	kdc-bench ldap-gssapi -ldap 127.0.0.1:389 -kdc 127.0.0.1:88 -realm SAMDOM.EXAMPLE.COM -conc 8
//	kdc-bench keygen  -realm KAURI.TEST -users 100000 -password P -out keys.txt
//	kdc-bench mitdump -in template.dump -stash stash -keys keys.txt -users 100000 -out users.dump
//
// keygen derives every user's long-term keys once (PBKDF2 costs about 1.5 ms per AES-256
// key) so that neither the load client nor MIT's database loader spends that time again;
// mitdump turns a kdb5_util dump holding one template user into a dump holding users 1..N
// with those keys, wrapped in the realm's master key.
package main

import (
	"bufio"
	"bytes"
	"crypto/pbkdf2"
	crand "crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/common"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/iana/patype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

const usage = `usage: kdc-bench MODE [flags]

modes:
  as       full logins: AS-REQ, PREAUTH_REQUIRED, AS-REQ with PA-ENC-TIMESTAMP, AS-REP
  tgs      each worker logs in once, then requests service tickets in a loop
  ldap-simple         LDAP: connect, simple bind, one search, unbind (one operation)
  ldap-gssapi         the same with a SASL GSSAPI bind and a security layer; each worker
                      logs in once, then gets a fresh service ticket for every operation
  ldap-gssapi-cached  the same, one service ticket per worker, reused
  keygen   derive the users' long-term keys into a key file (reused by as/tgs and mitdump)
  mitdump  write a kdb5_util dump holding users 1..N from a template dump and a key file
  table    read -json results (one per line) on standard input, print them as a table

run "kdc-bench MODE -h" for the flags of a mode
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "as", "tgs", "ldap-simple", "ldap-gssapi", "ldap-gssapi-cached":
		err = benchMain(os.Args[1], os.Args[2:])
	case "keygen":
		err = keygenMain(os.Args[2:])
	case "mitdump":
		err = mitdumpMain(os.Args[2:])
	case "table":
		err = tableMain(os.Stdin, os.Stdout)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kdc-bench:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- encryption types

var etypeNames = map[string]int32{
	"aes256": etypeID.AES256_CTS_HMAC_SHA1_96,
	"aes128": etypeID.AES128_CTS_HMAC_SHA1_96,
	"rc4":    etypeID.RC4_HMAC,
}

// keyEtypes are the key types a key file holds, in its column order.
var keyEtypes = []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96, etypeID.RC4_HMAC}

func etypeIndex(id int32) int {
	for i, e := range keyEtypes {
		if e == id {
			return i
		}
	}
	return -1
}

// ---------------------------------------------------------------- key files

// A key file is text: a header line naming realm, user prefix and a hash of the password,
// then one line per user: "i aes256-hex aes128-hex rc4-hex", keys derived with the default
// salt REALM + prefix + i (what MIT's "normal" salt and Active Directory's user salt give).

type userKeys [3][]byte

func keyHeader(realm, prefix, password string) string {
	h := sha256.Sum256([]byte(password))
	return fmt.Sprintf("# kdc-bench keys v1 realm=%s prefix=%s pwsha256=%s", realm, prefix, hex.EncodeToString(h[:8]))
}

func defaultSalt(realm, prefix string, i int) string {
	return realm + prefix + strconv.Itoa(i)
}

// readKeyFile returns the keys of users 1..len(result), at most max users (0: all).
func readKeyFile(path, realm, prefix, password string, max int) ([]userKeys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: empty key file", path)
	}
	if want := keyHeader(realm, prefix, password); sc.Text() != want {
		return nil, fmt.Errorf("%s: key file is for another realm, prefix or password (%q, want %q)", path, sc.Text(), want)
	}
	var keys []userKeys
	for sc.Scan() {
		if max > 0 && len(keys) >= max {
			break
		}
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != strconv.Itoa(len(keys)+1) {
			return nil, fmt.Errorf("%s: bad line %d", path, len(keys)+2)
		}
		var k userKeys
		for j := range k {
			if k[j], err = hex.DecodeString(f[j+1]); err != nil {
				return nil, fmt.Errorf("%s: bad line %d: %v", path, len(keys)+2, err)
			}
		}
		keys = append(keys, k)
	}
	return keys, sc.Err()
}

func stringToKey(password, salt string, id int32, params string) ([]byte, error) {
	et, err := crypto.GetEtype(id)
	if err != nil {
		return nil, err
	}
	if params == "" {
		params = et.GetDefaultStringToKeyParams()
	}
	return et.StringToKey(password, salt, params)
}

// deriveUserKeys returns a user's AES-256, AES-128 and RC4 keys (RFC 3962, RFC 4757) with
// the default iteration count. PBKDF2's output blocks are computed independently, so the
// 16 bytes AES-128 takes from PBKDF2 are the first half of the 32 AES-256 takes: one PBKDF2
// run serves both, which makes keygen a third cheaper than two string-to-key calls.
func deriveUserKeys(password, salt string) (userKeys, error) {
	var k userKeys
	tk, err := pbkdf2.Key(sha1.New, password, []byte(salt), 4096, 32)
	if err != nil {
		return k, err
	}
	for j, n := range []int{32, 16} {
		et, err := crypto.GetEtype(keyEtypes[j])
		if err != nil {
			return k, err
		}
		if k[j], err = et.DeriveKey(tk[:n], []byte("kerberos")); err != nil {
			return k, err
		}
	}
	k[2], err = stringToKey(password, salt, etypeID.RC4_HMAC, "")
	return k, err
}

// checkDerivation compares deriveUserKeys with gokrb5's string-to-key for one salt.
func checkDerivation(password, salt string) error {
	k, err := deriveUserKeys(password, salt)
	if err != nil {
		return err
	}
	for j, id := range keyEtypes {
		want, err := stringToKey(password, salt, id, "")
		if err != nil {
			return err
		}
		if !bytes.Equal(k[j], want) {
			return fmt.Errorf("key derivation self-check failed for etype %d", id)
		}
	}
	return nil
}

func keygenMain(args []string) error {
	fs := flag.NewFlagSet("keygen", flag.ExitOnError)
	realm := fs.String("realm", "KAURI.TEST", "Kerberos realm")
	users := fs.Int("users", 100000, "number of users (user1..userN)")
	password := fs.String("password", defaultPassword, "the users' password")
	prefix := fs.String("user-prefix", "user", "user name prefix")
	out := fs.String("out", "", "key file to write; an existing file for the same realm, prefix and password is extended")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines deriving keys")
	fs.Parse(args)
	if *out == "" {
		return errors.New("keygen: -out is required")
	}
	have, err := readKeyFile(*out, *realm, *prefix, *password, *users)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "keygen: starting afresh: %v\n", err)
		have = nil
	}
	if len(have) >= *users {
		fmt.Fprintf(os.Stderr, "keygen: %s already holds the keys of users 1..%d\n", *out, *users)
		return nil
	}
	if err := checkDerivation(*password, defaultSalt(*realm, *prefix, 1)); err != nil {
		return err
	}
	start := time.Now()
	keys := make([]userKeys, *users)
	copy(keys, have)
	var next atomic.Int64
	next.Store(int64(len(have)))
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < max(1, *workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) // user number, 1-based
				if i > *users {
					return
				}
				k, err := deriveUserKeys(*password, defaultSalt(*realm, *prefix, i))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				keys[i-1] = k
			}
		}()
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return e
	}
	tmp := *out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, keyHeader(*realm, *prefix, *password))
	for i, k := range keys {
		fmt.Fprintf(w, "%d %x %x %x\n", i+1, k[0], k[1], k[2])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "keygen: derived keys of %d users (%d kept) in %.1fs\n",
		*users-len(have), len(have), time.Since(start).Seconds())
	return nil
}

// ---------------------------------------------------------------- MIT dump

// mitdumpMain reads a "kdb5_util load_dump version 7" dump, replaces the record of the
// template principal (prefix+"1"@realm, created with kadmin.local addprinc -pw) by records
// for users 1..N that differ from it only in name and keys, and writes the result. Each key
// is wrapped as MIT's krb5_dbe_def_encrypt_key_data does: a 2-byte little-endian key length
// followed by the key encrypted in the master key (from the stash) with key usage 0.
func mitdumpMain(args []string) error {
	fs := flag.NewFlagSet("mitdump", flag.ExitOnError)
	in := fs.String("in", "", "dump written by kdb5_util dump")
	stash := fs.String("stash", "", "the realm's stash file (holds the master key)")
	keyFile := fs.String("keys", "", "key file written by keygen")
	realm := fs.String("realm", "KAURI.TEST", "Kerberos realm")
	users := fs.Int("users", 100000, "number of users")
	password := fs.String("password", defaultPassword, "the users' password (checks the key file)")
	prefix := fs.String("user-prefix", "user", "user name prefix")
	out := fs.String("out", "", "dump to write")
	fs.Parse(args)
	if *in == "" || *stash == "" || *keyFile == "" || *out == "" {
		return errors.New("mitdump: -in, -stash, -keys and -out are required")
	}
	start := time.Now()
	keys, err := readKeyFile(*keyFile, *realm, *prefix, *password, *users)
	if err != nil {
		return err
	}
	if len(keys) < *users {
		return fmt.Errorf("mitdump: %s holds %d users, want %d", *keyFile, len(keys), *users)
	}
	kt, err := keytab.Load(*stash)
	if err != nil {
		return fmt.Errorf("reading stash: %v", err)
	}
	if len(kt.Entries) == 0 {
		return errors.New("stash holds no key")
	}
	mkey := kt.Entries[len(kt.Entries)-1].Key
	met, err := crypto.GetEtype(mkey.KeyType)
	if err != nil {
		return fmt.Errorf("master key: %v", err)
	}
	src, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "kdb5_util load_dump version 7") {
		return errors.New("mitdump: input is not a kdb5_util load_dump version 7 dump")
	}
	tmplName := *prefix + "1@" + *realm
	tmplAt := -1
	for i, l := range lines {
		if f := strings.SplitN(l, "\t", 8); len(f) >= 7 && f[0] == "princ" && f[6] == tmplName {
			tmplAt = i
		}
	}
	if tmplAt < 0 {
		return fmt.Errorf("mitdump: no record of %s in %s", tmplName, *in)
	}
	rec, err := parsePrinc(lines[tmplAt])
	if err != nil {
		return err
	}
	for _, k := range rec.keys {
		if k.ver != 1 || etypeIndex(k.etype) < 0 {
			return fmt.Errorf("mitdump: template key of type %d version %d is not supported (want aes256, aes128, rc4 with normal salt)", k.etype, k.ver)
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i, l := range lines {
		if i != tmplAt {
			fmt.Fprintln(w, l)
			continue
		}
		// Generate in parallel, write in order.
		const chunk = 1024
		nw := max(1, runtime.GOMAXPROCS(0))
		for base := 0; base < *users; base += chunk * nw {
			var wg sync.WaitGroup
			outs := make([]string, nw)
			errs := make([]error, nw)
			for g := 0; g < nw; g++ {
				lo := base + g*chunk
				hi := min(lo+chunk, *users)
				if lo >= hi {
					break
				}
				wg.Add(1)
				go func(g, lo, hi int) {
					defer wg.Done()
					var sb strings.Builder
					for u := lo; u < hi; u++ {
						line, err := rec.render(fmt.Sprintf("%s%d@%s", *prefix, u+1, *realm), keys[u], met, mkey.KeyValue)
						if err != nil {
							errs[g] = err
							return
						}
						sb.WriteString(line)
						sb.WriteByte('\n')
					}
					outs[g] = sb.String()
				}(g, lo, hi)
			}
			wg.Wait()
			for g := range outs {
				if errs[g] != nil {
					f.Close()
					return errs[g]
				}
				w.WriteString(outs[g])
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mitdump: wrote %d users in %.1fs\n", *users, time.Since(start).Seconds())
	return nil
}

type dumpKey struct {
	ver, kvno int
	etype     int32
}

// princRecord is a parsed "princ" line of a version 7 dump: the fields before the name, the
// fields between the name and the key data, the key data, and the fields after it.
type princRecord struct {
	head []string // "princ", "38", name length, n_tl_data, n_key_data, e_length
	mid  []string // attributes .. fail count, then the tl_data triples
	keys []dumpKey
	tail []string // e_data and the closing ";"
}

func parsePrinc(line string) (*princRecord, error) {
	f := strings.Split(line, "\t")
	bad := func(why string) (*princRecord, error) {
		return nil, fmt.Errorf("mitdump: cannot parse template record (%s): %.80s", why, line)
	}
	if len(f) < 15 || f[0] != "princ" || f[1] != "38" {
		return bad("not a version 38 princ record")
	}
	ntl, err1 := strconv.Atoi(f[3])
	nkey, err2 := strconv.Atoi(f[4])
	if err1 != nil || err2 != nil {
		return bad("counts")
	}
	r := &princRecord{head: f[:6]}
	p := 7 + 8 + 3*ntl
	if p > len(f) {
		return bad("tl_data")
	}
	r.mid = f[7:p]
	for k := 0; k < nkey; k++ {
		if p+2 > len(f) {
			return bad("key data")
		}
		ver, _ := strconv.Atoi(f[p])
		kvno, _ := strconv.Atoi(f[p+1])
		if ver < 1 || p+2+3*ver > len(f) {
			return bad("key data")
		}
		t, _ := strconv.Atoi(f[p+2])
		r.keys = append(r.keys, dumpKey{ver: ver, kvno: kvno, etype: int32(t)})
		p += 2 + 3*ver
	}
	r.tail = f[p:]
	return r, nil
}

// encryptUsage0 is RFC 3961 simplified-profile encryption with key usage 0, as MIT wraps
// database keys in the master key: confounder, CTS encryption under DK(key, 0|0xAA), HMAC
// under DK(key, 0|0x55). gokrb5's EncryptMessage skips the key derivation for usage 0 (it
// means "no usage" there), so the primitives are called directly.
func encryptUsage0(met etype.EType, key, plain []byte) ([]byte, error) {
	conf := make([]byte, met.GetConfounderByteSize())
	if _, err := crand.Read(conf); err != nil {
		return nil, err
	}
	msg := append(conf, plain...)
	ke, err := met.DeriveKey(key, common.GetUsageKe(0))
	if err != nil {
		return nil, err
	}
	_, ct, err := met.EncryptData(ke, msg)
	if err != nil {
		return nil, err
	}
	mac, err := common.GetIntegrityHash(msg, key, 0, met)
	if err != nil {
		return nil, err
	}
	return append(ct, mac...), nil
}

func (r *princRecord) render(name string, k userKeys, met etype.EType, mkey []byte) (string, error) {
	f := make([]string, 0, len(r.head)+1+len(r.mid)+5*len(r.keys)+len(r.tail))
	f = append(f, r.head...)
	f[2] = strconv.Itoa(len(name))
	f = append(f, name)
	f = append(f, r.mid...)
	for _, dk := range r.keys {
		plain := k[etypeIndex(dk.etype)]
		ct, err := encryptUsage0(met, mkey, plain)
		if err != nil {
			return "", err
		}
		contents := make([]byte, 2+len(ct))
		binary.LittleEndian.PutUint16(contents, uint16(len(plain)))
		copy(contents[2:], ct)
		f = append(f, "1", strconv.Itoa(dk.kvno), strconv.Itoa(int(dk.etype)),
			strconv.Itoa(len(contents)), hex.EncodeToString(contents))
	}
	f = append(f, r.tail...)
	return strings.Join(f, "\t"), nil
}

// ---------------------------------------------------------------- key lookup for logins

// keyStore gives the client's long-term key for a salt the KDC names in ETYPE-INFO2: from
// the key file when the salt is a user's default salt, else derived once and remembered.
type keyStore struct {
	password string
	bySalt   map[string]userKeys
	mu       sync.Mutex
	derived  map[string][]byte
	nDerived atomic.Int64
}

func (ks *keyStore) key(id int32, salt, params string) (types.EncryptionKey, error) {
	j := etypeIndex(id)
	if j >= 0 && params == "" {
		if k, ok := ks.bySalt[salt]; ok {
			return types.EncryptionKey{KeyType: id, KeyValue: k[j]}, nil
		}
	}
	ck := fmt.Sprintf("%d\x00%s\x00%s", id, salt, params)
	ks.mu.Lock()
	v, ok := ks.derived[ck]
	ks.mu.Unlock()
	if !ok {
		var err error
		if v, err = stringToKey(ks.password, salt, id, params); err != nil {
			return types.EncryptionKey{}, err
		}
		ks.nDerived.Add(1)
		ks.mu.Lock()
		ks.derived[ck] = v
		ks.mu.Unlock()
	}
	return types.EncryptionKey{KeyType: id, KeyValue: v}, nil
}

// ---------------------------------------------------------------- transport

// opError is a failed operation, classified by Kerberos error name or network failure.
type opError struct {
	code string
	err  error
}

func (e *opError) Error() string { return e.code + ": " + e.err.Error() }

func fail(code string, err error) error { return &opError{code, err} }

func krbErrName(code int32) string {
	s := errorcode.Lookup(code) // "(25) KDC_ERR_PREAUTH_REQUIRED Additional ..."
	if f := strings.Fields(s); len(f) >= 2 && strings.HasPrefix(f[0], "(") {
		return f[1]
	}
	return fmt.Sprintf("KRB_ERROR_%d", code)
}

func netFail(err error) error {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fail("timeout", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fail("conn_refused", err)
	case errors.Is(err, syscall.ECONNRESET):
		return fail("conn_reset", err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fail("no_local_port", err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fail("closed_early", err)
	}
	return fail("net_error", err)
}

type transport struct {
	addr    string
	udp     bool
	timeout time.Duration
}

// exchange sends one request and returns the reply and the number of round trips (2 when
// a UDP reply was RESPONSE_TOO_BIG and the request was repeated over TCP).
func (t *transport) exchange(req []byte) ([]byte, int, error) {
	if t.udp {
		rep, err := t.udpExchange(req)
		if err != nil {
			return nil, 1, err
		}
		if isKRBError(rep) {
			var ke messages.KRBError
			if ke.Unmarshal(rep) == nil && ke.ErrorCode == errorcode.KRB_ERR_RESPONSE_TOO_BIG {
				rep, err = t.tcpExchange(req)
				return rep, 2, err
			}
		}
		return rep, 1, nil
	}
	rep, err := t.tcpExchange(req)
	return rep, 1, err
}

func (t *transport) tcpExchange(req []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", t.addr, t.timeout)
	if err != nil {
		return nil, netFail(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(t.timeout))
	msg := make([]byte, 4+len(req))
	binary.BigEndian.PutUint32(msg, uint32(len(req)))
	copy(msg[4:], req)
	if _, err := c.Write(msg); err != nil {
		return nil, netFail(err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, netFail(err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<20 {
		return nil, fail("bad_reply", fmt.Errorf("reply length %d", n))
	}
	rep := make([]byte, n)
	if _, err := io.ReadFull(c, rep); err != nil {
		return nil, netFail(err)
	}
	return rep, nil
}

func (t *transport) udpExchange(req []byte) ([]byte, error) {
	c, err := net.Dial("udp", t.addr)
	if err != nil {
		return nil, netFail(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(t.timeout))
	if _, err := c.Write(req); err != nil {
		return nil, netFail(err)
	}
	buf := make([]byte, 65536)
	n, err := c.Read(buf)
	if err != nil {
		return nil, netFail(err)
	}
	return buf[:n], nil
}

// Application tags of the first byte: [APPLICATION 11] AS-REP, 13 TGS-REP, 30 KRB-ERROR.
func isKRBError(b []byte) bool { return len(b) > 0 && b[0] == 0x7e }
func isASRep(b []byte) bool    { return len(b) > 0 && b[0] == 0x6b }
func isTGSRep(b []byte) bool   { return len(b) > 0 && b[0] == 0x6d }

func krbError(b []byte) error {
	var ke messages.KRBError
	if err := ke.Unmarshal(b); err != nil {
		return fail("bad_reply", err)
	}
	return fail(krbErrName(ke.ErrorCode), fmt.Errorf("%s", ke.EText))
}

// ---------------------------------------------------------------- exchanges

type client struct {
	realm  string
	prefix string
	users  int
	etype  int32
	cfg    *config.Config
	tr     *transport
	keys   *keyStore
	snames []types.PrincipalName
}

// login performs a full password login of user i and returns the TGT and its session key,
// and the number of KDC round trips it took.
func (c *client) login(i int) (messages.Ticket, types.EncryptionKey, types.PrincipalName, int, error) {
	cname := types.PrincipalName{NameType: nametype.KRB_NT_PRINCIPAL, NameString: []string{c.prefix + strconv.Itoa(i)}}
	var none messages.Ticket
	var nokey types.EncryptionKey
	req, err := messages.NewASReqForTGT(c.realm, c.cfg, cname)
	if err != nil {
		return none, nokey, cname, 0, fail("client_error", err)
	}
	b, err := req.Marshal()
	if err != nil {
		return none, nokey, cname, 0, fail("client_error", err)
	}
	rep, rtts, err := c.tr.exchange(b)
	if err != nil {
		return none, nokey, cname, rtts, err
	}
	var key types.EncryptionKey
	haveKey := false
	if isKRBError(rep) {
		var ke messages.KRBError
		if err := ke.Unmarshal(rep); err != nil {
			return none, nokey, cname, rtts, fail("bad_reply", err)
		}
		if ke.ErrorCode != errorcode.KDC_ERR_PREAUTH_REQUIRED {
			return none, nokey, cname, rtts, fail(krbErrName(ke.ErrorCode), fmt.Errorf("%s", ke.EText))
		}
		var pas types.PADataSequence
		if err := pas.Unmarshal(ke.EData); err != nil {
			return none, nokey, cname, rtts, fail("bad_reply", fmt.Errorf("PREAUTH_REQUIRED e-data: %v", err))
		}
		if key, err = c.keyFor(pas, cname, c.etype); err != nil {
			return none, nokey, cname, rtts, err
		}
		haveKey = true
		ts, err := types.GetPAEncTSEncAsnMarshalled()
		if err != nil {
			return none, nokey, cname, rtts, fail("client_error", err)
		}
		ed, err := crypto.GetEncryptedData(ts, key, keyusage.AS_REQ_PA_ENC_TIMESTAMP, 0)
		if err != nil {
			return none, nokey, cname, rtts, fail("client_error", err)
		}
		pb, err := ed.Marshal()
		if err != nil {
			return none, nokey, cname, rtts, fail("client_error", err)
		}
		req.PAData = append(req.PAData, types.PAData{PADataType: patype.PA_ENC_TIMESTAMP, PADataValue: pb})
		if b, err = req.Marshal(); err != nil {
			return none, nokey, cname, rtts, fail("client_error", err)
		}
		var n int
		rep, n, err = c.tr.exchange(b)
		rtts += n
		if err != nil {
			return none, nokey, cname, rtts, err
		}
		if isKRBError(rep) {
			return none, nokey, cname, rtts, krbError(rep)
		}
	}
	if !isASRep(rep) {
		return none, nokey, cname, rtts, fail("bad_reply", errors.New("neither AS-REP nor KRB-ERROR"))
	}
	var asRep messages.ASRep
	if err := asRep.Unmarshal(rep); err != nil {
		return none, nokey, cname, rtts, fail("bad_reply", err)
	}
	if !haveKey || key.KeyType != asRep.EncPart.EType {
		if key, err = c.keyFor(asRep.PAData, cname, asRep.EncPart.EType); err != nil {
			return none, nokey, cname, rtts, err
		}
	}
	plain, err := crypto.DecryptEncPart(asRep.EncPart, key, keyusage.AS_REP_ENCPART)
	if err != nil {
		return none, nokey, cname, rtts, fail("reply_decrypt_failed", err)
	}
	var enc messages.EncKDCRepPart
	if err := enc.Unmarshal(plain); err != nil {
		return none, nokey, cname, rtts, fail("bad_reply", err)
	}
	if enc.Nonce != req.ReqBody.Nonce {
		return none, nokey, cname, rtts, fail("nonce_mismatch", errors.New("AS-REP nonce differs from the request's"))
	}
	return asRep.Ticket, enc.Key, cname, rtts, nil
}

// keyFor finds the salt and string-to-key parameters for etype id in PA-ETYPE-INFO2 (or
// PA-ETYPE-INFO, or the default salt) and returns the user's key.
func (c *client) keyFor(pas types.PADataSequence, cname types.PrincipalName, id int32) (types.EncryptionKey, error) {
	salt, params, found := "", "", false
	for _, pa := range pas {
		switch pa.PADataType {
		case patype.PA_ETYPE_INFO2:
			info, err := pa.GetETypeInfo2()
			if err != nil {
				return types.EncryptionKey{}, fail("bad_reply", err)
			}
			for _, e := range info {
				if e.EType == id {
					salt, found = e.Salt, true
					if len(e.S2KParams) > 0 {
						params = hex.EncodeToString(e.S2KParams)
					}
				}
			}
		case patype.PA_ETYPE_INFO:
			if found {
				continue
			}
			info, err := pa.GetETypeInfo()
			if err != nil {
				return types.EncryptionKey{}, fail("bad_reply", err)
			}
			for _, e := range info {
				if e.EType == id {
					salt, found = string(e.Salt), true
				}
			}
		}
	}
	if salt == "" {
		salt = cname.GetSalt(c.realm)
	}
	if et, err := crypto.GetEtype(id); err == nil && params == et.GetDefaultStringToKeyParams() {
		params = ""
	}
	k, err := c.keys.key(id, salt, params)
	if err != nil {
		return k, fail("client_error", err)
	}
	return k, nil
}

// serviceTicket performs one TGS exchange and returns the number of KDC round trips.
func (c *client) serviceTicket(cname types.PrincipalName, tgt messages.Ticket, skey types.EncryptionKey, sname types.PrincipalName) (int, error) {
	_, _, rtts, err := c.getServiceTicket(cname, tgt, skey, sname)
	return rtts, err
}

// getServiceTicket performs one TGS exchange and returns the ticket, its session key and
// the number of KDC round trips.
func (c *client) getServiceTicket(cname types.PrincipalName, tgt messages.Ticket, skey types.EncryptionKey, sname types.PrincipalName) (messages.Ticket, types.EncryptionKey, int, error) {
	var none messages.Ticket
	var nokey types.EncryptionKey
	req, err := messages.NewTGSReq(cname, c.realm, c.cfg, tgt, skey, sname, false)
	if err != nil {
		return none, nokey, 0, fail("client_error", err)
	}
	b, err := req.Marshal()
	if err != nil {
		return none, nokey, 0, fail("client_error", err)
	}
	rep, rtts, err := c.tr.exchange(b)
	if err != nil {
		return none, nokey, rtts, err
	}
	if isKRBError(rep) {
		return none, nokey, rtts, krbError(rep)
	}
	if !isTGSRep(rep) {
		return none, nokey, rtts, fail("bad_reply", errors.New("neither TGS-REP nor KRB-ERROR"))
	}
	var tgsRep messages.TGSRep
	if err := tgsRep.Unmarshal(rep); err != nil {
		return none, nokey, rtts, fail("bad_reply", err)
	}
	if err := tgsRep.DecryptEncPart(skey); err != nil {
		return none, nokey, rtts, fail("reply_decrypt_failed", err)
	}
	if tgsRep.DecryptedEncPart.Nonce != req.ReqBody.Nonce {
		return none, nokey, rtts, fail("nonce_mismatch", errors.New("TGS-REP nonce differs from the request's"))
	}
	return tgsRep.Ticket, tgsRep.DecryptedEncPart.Key, rtts, nil
}

// ---------------------------------------------------------------- the load

const defaultPassword = "Kdc.Bench-Passw0rd"

type workerStats struct {
	lat   []time.Duration
	errs  map[string]int
	rtts  int64
	ok    int64
	first error
}

// Result is what one run reports (the -json object).
type Result struct {
	Target         string         `json:"target,omitempty"`
	Mode           string         `json:"mode"`
	KDC            string         `json:"kdc"`
	Proto          string         `json:"proto"`
	Etype          string         `json:"etype"`
	Realm          string         `json:"realm"`
	Users          int            `json:"users"`
	Service        string         `json:"service,omitempty"`
	LDAP           string         `json:"ldap,omitempty"`
	Layer          string         `json:"layer,omitempty"`
	LayerCheck     string         `json:"layer_check,omitempty"`
	Conc           int            `json:"conc"`
	DurationS      float64        `json:"duration_s"`
	Ops            int64          `json:"ops"`
	OpsPerS        float64        `json:"ops_per_s"`
	P50ms          float64        `json:"p50_ms"`
	P95ms          float64        `json:"p95_ms"`
	P99ms          float64        `json:"p99_ms"`
	MaxMs          float64        `json:"max_ms"`
	MeanMs         float64        `json:"mean_ms"`
	Errors         int64          `json:"errors"`
	ErrorsByCode   map[string]int `json:"errors_by_code"`
	FirstError     string         `json:"first_error,omitempty"`
	RoundTrips     int64          `json:"kdc_round_trips"`
	RoundTripsOp   float64        `json:"round_trips_per_op"`
	KeyDerivations int64          `json:"client_key_derivations"`
	ClientCPUs     float64        `json:"client_cpu_s"`
	ServerCPUs     *float64       `json:"server_cpu_s,omitempty"`
}

func benchMain(mode string, args []string) error {
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	kdc := fs.String("kdc", "127.0.0.1:88", "KDC address host:port")
	realm := fs.String("realm", "KAURI.TEST", "Kerberos realm")
	users := fs.Int("users", 100000, "users user1..userN exist; as picks one at random per login")
	password := fs.String("password", defaultPassword, "the users' password")
	prefix := fs.String("user-prefix", "user", "user name prefix")
	service := fs.String("service", "", `tgs: service principal, or a comma-separated list, or a pattern with %d (with -services N: host/c%d.kauri.test); default ldap/dc1.<realm in lower case>`)
	services := fs.Int("services", 1, "tgs: with a %d pattern in -service, principals 1..N, one picked at random per request")
	conc := fs.Int("conc", 1, "workers, each with one exchange in flight")
	duration := fs.Duration("duration", 10*time.Second, "measured time")
	warmup := fs.Duration("warmup", 0, "unmeasured load before the measured time")
	etypeName := fs.String("etype", "aes256", "encryption type requested: aes256, aes128 or rc4")
	tcp := fs.Bool("tcp", true, "use TCP (false: UDP, falling back to TCP on RESPONSE_TOO_BIG)")
	udp := fs.Bool("udp", false, "use UDP (same as -tcp=false)")
	timeout := fs.Duration("timeout", 5*time.Second, "per-exchange timeout")
	keyFile := fs.String("keys", "", "key file from keygen; without it each user's key is derived on first use")
	jsonOut := fs.Bool("json", false, "print a JSON object instead of a line of text")
	label := fs.String("label", "", "name of the KDC under test, carried into the output (e.g. mit, kauri)")
	serverPids := fs.String("server-pid", "", "comma-separated pids of the KDC's processes: report their CPU time during the measured time")
	seed := fs.Uint64("seed", 0, "random seed (0: from the clock)")
	ldapAddr := fs.String("ldap", "", "ldap modes: the LDAP server's address host:port")
	ldapHost := fs.String("ldap-host", "", "ldap-gssapi: the GSSAPI target host, the service being ldap/<host> (default dc1.<realm in lower case>)")
	ldapBase := fs.String("base", "", "ldap modes: the domain's DN, the search base (default from the realm: DC=...)")
	layerName := fs.String("layer", "conf", "ldap-gssapi: the SASL security layer to choose: conf (sealed), integ (signed) or none")
	bindName := fs.String("bind-name", "dn", "ldap-simple: bind as the user's dn or upn")
	noCheck := fs.Bool("no-layer-check", false, "ldap-gssapi: skip the check, before the load, that the security layer is on")
	cpuProfile := fs.String("cpuprofile", "", "write the client's CPU profile to this file")
	fs.Parse(args)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	id, ok := etypeNames[*etypeName]
	if !ok {
		return fmt.Errorf("unknown -etype %q (aes256, aes128, rc4)", *etypeName)
	}
	if *users < 1 || *conc < 1 {
		return errors.New("-users and -conc must be at least 1")
	}
	if *service == "" {
		*service = "ldap/dc1." + strings.ToLower(*realm)
	}
	isLDAP := strings.HasPrefix(mode, "ldap-")
	isGSSAPI := strings.HasPrefix(mode, "ldap-gssapi")
	var lt *ldapTarget
	if isLDAP {
		if *ldapAddr == "" {
			return fmt.Errorf("%s: -ldap is required", mode)
		}
		if *ldapHost == "" {
			*ldapHost = "dc1." + strings.ToLower(*realm)
		}
		if *ldapBase == "" {
			*ldapBase = "DC=" + strings.Join(strings.Split(strings.ToLower(*realm), "."), ",DC=")
		}
		layer, ok := layerNames[*layerName]
		if !ok {
			return fmt.Errorf("unknown -layer %q (conf, integ, none)", *layerName)
		}
		if *bindName != "dn" && *bindName != "upn" {
			return fmt.Errorf("unknown -bind-name %q (dn, upn)", *bindName)
		}
		lt = &ldapTarget{addr: *ldapAddr, host: *ldapHost, base: *ldapBase, layer: layer,
			bindName: *bindName, upnHost: strings.ToLower(*realm), timeout: *timeout}
		*service = lt.spn()
	}
	cfg := config.New()
	cfg.LibDefaults.DefaultRealm = *realm
	cfg.LibDefaults.DefaultTktEnctypeIDs = []int32{id}
	cfg.LibDefaults.DefaultTGSEnctypeIDs = []int32{id}
	cfg.LibDefaults.PermittedEnctypeIDs = []int32{id}
	cfg.LibDefaults.NoAddresses = true
	cfg.LibDefaults.Forwardable = true
	cfg.LibDefaults.TicketLifetime = 10 * time.Hour

	ks := &keyStore{password: *password, derived: map[string][]byte{}, bySalt: map[string]userKeys{}}
	if *keyFile != "" {
		keys, err := readKeyFile(*keyFile, *realm, *prefix, *password, *users)
		if err != nil {
			return err
		}
		for i, k := range keys {
			ks.bySalt[defaultSalt(*realm, *prefix, i+1)] = k
		}
	}
	c := &client{realm: *realm, prefix: *prefix, users: *users, etype: id, cfg: cfg, keys: ks,
		tr: &transport{addr: *kdc, udp: *udp || !*tcp, timeout: *timeout}}
	if mode == "tgs" {
		var names []string
		if strings.Contains(*service, "%d") {
			for i := 1; i <= *services; i++ {
				names = append(names, fmt.Sprintf(*service, i))
			}
		} else {
			names = strings.Split(*service, ",")
		}
		for _, n := range names {
			pn, _ := types.ParseSPNString(strings.TrimSpace(n))
			c.snames = append(c.snames, pn)
		}
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}

	// TGS and GSSAPI workers log in first, outside the measured time (and, for
	// ldap-gssapi-cached, get their one service ticket). LDAP workers bind as user w+1.
	type session struct {
		cname types.PrincipalName
		tgt   messages.Ticket
		key   types.EncryptionKey
		user  string
		stkt  messages.Ticket     // ldap-gssapi-cached: the service ticket
		skey  types.EncryptionKey // and its session key
	}
	sessions := make([]session, *conc)
	var sname types.PrincipalName
	if isGSSAPI {
		sname, _ = types.ParseSPNString(lt.spn())
	}
	for w := range sessions {
		u := w%*users + 1
		sessions[w].user = *prefix + strconv.Itoa(u)
		if mode != "tgs" && !isGSSAPI {
			continue
		}
		tgt, key, cname, _, err := c.login(u)
		if err != nil {
			return fmt.Errorf("%s: login of %s%d failed: %v", mode, *prefix, u, err)
		}
		sessions[w].cname, sessions[w].tgt, sessions[w].key = cname, tgt, key
		if mode == "ldap-gssapi-cached" {
			st, sk, _, err := c.getServiceTicket(cname, tgt, key, sname)
			if err != nil {
				return fmt.Errorf("%s: service ticket for %s%d failed: %v", mode, *prefix, u, err)
			}
			sessions[w].stkt, sessions[w].skey = st, sk
		}
	}
	layerCheck := ""
	if isGSSAPI && !*noCheck {
		s := &sessions[0]
		st, sk, _, err := c.getServiceTicket(s.cname, s.tgt, s.key, sname)
		if err != nil {
			return fmt.Errorf("%s: service ticket for the layer check failed: %v", mode, err)
		}
		if layerCheck, err = lt.checkLayer(s.user, s.cname, *realm, st, sk); err != nil {
			layerCheck = "FAILED: " + err.Error()
		}
		fmt.Fprintf(os.Stderr, "kdc-bench: %s layer check (%s): %s\n", mode, *layerName, layerCheck)
	}

	stats := make([]*workerStats, *conc)
	begin := time.Now()
	measureFrom := begin.Add(*warmup)
	end := measureFrom.Add(*duration)
	// CPU time is sampled at the start and the end of the measured time.
	var cpu0, cpu1 cpuSample
	var self0, self1 float64
	sampled := make(chan struct{})
	go func() {
		time.Sleep(time.Until(measureFrom))
		cpu0, self0 = sampleCPU(*serverPids), selfCPU()
		time.Sleep(time.Until(end))
		cpu1, self1 = sampleCPU(*serverPids), selfCPU()
		close(sampled)
	}()
	var wg sync.WaitGroup
	for w := 0; w < *conc; w++ {
		st := &workerStats{errs: map[string]int{}}
		stats[w] = st
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(w)))
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				var err error
				var rtts int
				switch {
				case mode == "as":
					_, _, _, rtts, err = c.login(rng.IntN(*users) + 1)
				case mode == "ldap-simple":
					err = lt.simpleOp(sessions[w].user, *password)
				case mode == "ldap-gssapi-cached":
					s := &sessions[w]
					err = lt.gssapiOp(s.user, s.cname, *realm, s.stkt, s.skey)
				case mode == "ldap-gssapi":
					s := &sessions[w]
					var tk messages.Ticket
					var sk types.EncryptionKey
					tk, sk, rtts, err = c.getServiceTicket(s.cname, s.tgt, s.key, sname)
					if err == nil {
						err = lt.gssapiOp(s.user, s.cname, *realm, tk, sk)
					}
				default:
					s := &sessions[w]
					sn := c.snames[0]
					if len(c.snames) > 1 {
						sn = c.snames[rng.IntN(len(c.snames))]
					}
					rtts, err = c.serviceTicket(s.cname, s.tgt, s.key, sn)
				}
				// An operation counts when it completes inside the measured time.
				t1 := time.Now()
				if t1.Before(measureFrom) || t1.After(end) {
					continue
				}
				st.rtts += int64(rtts)
				if err != nil {
					code := "error"
					var oe *opError
					if errors.As(err, &oe) {
						code = oe.code
					}
					st.errs[code]++
					if st.first == nil {
						st.first = err
					}
					continue
				}
				st.ok++
				st.lat = append(st.lat, t1.Sub(t0))
			}
		}(w)
	}
	wg.Wait()
	<-sampled

	r := Result{Target: *label, Mode: mode, KDC: *kdc, Proto: map[bool]string{true: "udp", false: "tcp"}[c.tr.udp],
		Etype: *etypeName, Realm: *realm, Users: *users, Conc: *conc, DurationS: duration.Seconds(),
		ErrorsByCode: map[string]int{}, KeyDerivations: ks.nDerived.Load(), ClientCPUs: self1 - self0}
	if mode == "tgs" {
		r.Service = *service
		if strings.Contains(*service, "%d") {
			r.Service = fmt.Sprintf("%s (1..%d)", *service, *services)
		}
	}
	if isLDAP {
		r.LDAP = lt.addr
		if isGSSAPI {
			r.Service, r.Layer, r.LayerCheck = lt.spn(), *layerName, layerCheck
		} else {
			r.Layer = "simple bind (" + *bindName + ")"
		}
	}
	var all []time.Duration
	for _, st := range stats {
		all = append(all, st.lat...)
		r.Ops += st.ok
		r.RoundTrips += st.rtts
		for k, v := range st.errs {
			r.ErrorsByCode[k] += v
			r.Errors += int64(v)
		}
		if st.first != nil && r.FirstError == "" {
			r.FirstError = st.first.Error()
		}
	}
	if *serverPids != "" && cpu0.ok && cpu1.ok {
		v := float64(cpu1.ticks-cpu0.ticks) / 100
		r.ServerCPUs = &v
	}
	r.OpsPerS = float64(r.Ops) / duration.Seconds()
	if n := r.Ops + r.Errors; n > 0 {
		r.RoundTripsOp = float64(r.RoundTrips) / float64(n)
	}
	if len(all) > 0 {
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		pct := func(p float64) float64 {
			i := int(p*float64(len(all))+0.5) - 1
			i = max(0, min(i, len(all)-1))
			return ms(all[i])
		}
		r.P50ms, r.P95ms, r.P99ms, r.MaxMs = pct(0.50), pct(0.95), pct(0.99), ms(all[len(all)-1])
		var sum time.Duration
		for _, d := range all {
			sum += d
		}
		r.MeanMs = ms(sum / time.Duration(len(all)))
	}
	if *jsonOut {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	} else {
		fmt.Println(r.text())
	}
	if r.Ops == 0 {
		return fmt.Errorf("no operation succeeded (first error: %s)", r.FirstError)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r Result) text() string {
	var b strings.Builder
	if r.Target != "" {
		fmt.Fprintf(&b, "%s ", r.Target)
	}
	fmt.Fprintf(&b, "%s kdc=%s %s %s conc=%d users=%d", r.Mode, r.KDC, r.Proto, r.Etype, r.Conc, r.Users)
	if r.Service != "" {
		fmt.Fprintf(&b, " service=%s", r.Service)
	}
	if r.LDAP != "" {
		fmt.Fprintf(&b, " ldap=%s layer=%s", r.LDAP, r.Layer)
	}
	fmt.Fprintf(&b, ": %.1f ops/s p50=%.2fms p95=%.2fms p99=%.2fms max=%.2fms ops=%d errors=%d",
		r.OpsPerS, r.P50ms, r.P95ms, r.P99ms, r.MaxMs, r.Ops, r.Errors)
	if r.Errors > 0 {
		codes := make([]string, 0, len(r.ErrorsByCode))
		for k, v := range r.ErrorsByCode {
			codes = append(codes, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(codes)
		fmt.Fprintf(&b, " [%s]", strings.Join(codes, ","))
	}
	fmt.Fprintf(&b, " round_trips=%d (%.2f/op) client_key_derivations=%d client_cpu=%.1fs",
		r.RoundTrips, r.RoundTripsOp, r.KeyDerivations, r.ClientCPUs)
	if r.ServerCPUs != nil {
		fmt.Fprintf(&b, " server_cpu=%.1fs", *r.ServerCPUs)
	}
	return b.String()
}

// ---------------------------------------------------------------- CPU accounting

type cpuSample struct {
	ticks int64 // user+system clock ticks (USER_HZ = 100) of the listed processes
	ok    bool
}

func sampleCPU(pids string) cpuSample {
	if pids == "" {
		return cpuSample{}
	}
	var s cpuSample
	s.ok = true
	for _, p := range strings.Split(pids, ",") {
		b, err := os.ReadFile("/proc/" + strings.TrimSpace(p) + "/stat")
		if err != nil {
			s.ok = false
			continue
		}
		// Fields after the parenthesised command name; utime and stime are fields 14 and 15.
		str := string(b)
		f := strings.Fields(str[strings.LastIndexByte(str, ')')+1:])
		if len(f) < 13 {
			s.ok = false
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		s.ticks += u + st
	}
	return s
}

func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// tableMain prints -json results as an aligned table.
func tableMain(in io.Reader, out io.Writer) error {
	rows := [][]string{{"kdc", "mode", "conc", "ops/s", "p50 ms", "p95 ms", "p99 ms", "errors", "rt/op", "kdc cpu us/op", "client cpu us/op", "client s2k"}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return err
		}
		target := r.Target
		if target == "" {
			target = r.KDC
		}
		perOp := func(cpu float64) string {
			if r.Ops == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", cpu*1e6/float64(r.Ops))
		}
		srv := "-"
		if r.ServerCPUs != nil {
			srv = perOp(*r.ServerCPUs)
		}
		errs := strconv.FormatInt(r.Errors, 10)
		if r.Errors > 0 {
			var codes []string
			for k, v := range r.ErrorsByCode {
				codes = append(codes, fmt.Sprintf("%s=%d", k, v))
			}
			sort.Strings(codes)
			errs += " (" + strings.Join(codes, ",") + ")"
		}
		rows = append(rows, []string{target, r.Mode, strconv.Itoa(r.Conc), fmt.Sprintf("%.0f", r.OpsPerS),
			fmt.Sprintf("%.2f", r.P50ms), fmt.Sprintf("%.2f", r.P95ms), fmt.Sprintf("%.2f", r.P99ms), errs,
			fmt.Sprintf("%.2f", r.RoundTripsOp), srv, perOp(r.ClientCPUs), strconv.FormatInt(r.KeyDerivations, 10)})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	width := []int{5, 4, 4, 6, 7, 7, 8, 6, 5, 0, 0, 0} // so that rows printed one at a time line up
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			if i < 2 || i == 7 {
				fmt.Fprintf(&b, "%-*s", width[i], c)
			} else {
				fmt.Fprintf(&b, "%*s", width[i], c)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
	return nil
}
