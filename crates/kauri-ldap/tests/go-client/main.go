// A go-ldap client run by the server's tests: bind, add, search with paging, modify,
// compare, rename, delete, StartTLS; prints "ok" when every step behaved.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: go-client URI ADMIN PASSWORD BASE CAFILE")
		os.Exit(2)
	}
	uri, admin, password, base, caFile := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	conn, err := ldap.DialURL(uri)
	check(err, "dial")
	defer conn.Close()

	pem, err := os.ReadFile(caFile)
	check(err, "read CA")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	check(conn.StartTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}), "StartTLS")
	check(conn.Bind(admin, password), "bind")

	dn := "cn=Go Client," + base
	add := ldap.NewAddRequest(dn, nil)
	add.Attribute("objectClass", []string{"top", "person"})
	add.Attribute("cn", []string{"Go Client"})
	add.Attribute("sn", []string{"Client"})
	check(conn.Add(add), "add")

	res, err := conn.SearchWithPaging(ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		0, 0, false, "(objectClass=*)", []string{"cn"}, nil), 3)
	check(err, "paged search")
	seen := map[string]bool{}
	for _, e := range res.Entries {
		if seen[e.DN] {
			fmt.Fprintln(os.Stderr, "duplicate", e.DN)
			os.Exit(1)
		}
		seen[e.DN] = true
	}
	if !seen[dn] {
		fmt.Fprintln(os.Stderr, "added entry not found by the paged search")
		os.Exit(1)
	}

	mod := ldap.NewModifyRequest(dn, nil)
	mod.Replace("description", []string{"from go-ldap"})
	check(conn.Modify(mod), "modify")
	ok, err := conn.Compare(dn, "description", "FROM GO-LDAP")
	check(err, "compare")
	if !ok {
		fmt.Fprintln(os.Stderr, "compare: expected true")
		os.Exit(1)
	}

	check(conn.ModifyDN(ldap.NewModifyDNRequest(dn, "cn=Go Renamed", true, "")), "modify DN")
	err = conn.Del(ldap.NewDelRequest("cn=Go Client,"+base, nil))
	if err == nil || !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		fmt.Fprintln(os.Stderr, "delete of the old name: expected noSuchObject, got", err)
		os.Exit(1)
	}
	check(conn.Del(ldap.NewDelRequest("cn=Go Renamed,"+base, nil)), "delete")

	who, err := conn.WhoAmI(nil)
	check(err, "who am I")
	if !strings.EqualFold(who.AuthzID, "dn:"+admin) {
		fmt.Fprintln(os.Stderr, "who am I:", who.AuthzID)
		os.Exit(1)
	}
	fmt.Println("ok")
}
