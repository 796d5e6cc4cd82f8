module clientbound

go 1.26.8

require github.com/go-asn1-ber/asn1-ber v1.5.8
