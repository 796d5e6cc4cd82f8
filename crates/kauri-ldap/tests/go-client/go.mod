module kauri.test/go-client

go 1.26.0

require github.com/go-ldap/ldap/v3 v3.4.15

require (
	github.com/Azure/go-ntlmssp v0.1.1 // indirect
	github.com/go-asn1-ber/asn1-ber v1.5.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
)
