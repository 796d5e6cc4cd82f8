// Command zero-server is an LDAP server that does no work: at start it binds to a real
// server, sends it one equality search and keeps the messages of the answer; from then on it
// answers every bind with success and every search with those messages, under the request's
// message id. A benchmark client run against it measures what the client itself can reach
// for answers of that size on this machine.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
)

// message wraps a protocol operation in an LDAPMessage with the given id.
func message(id int64, op *ber.Packet) []byte {
	m := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "")
	m.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, ""))
	m.AppendChild(op)
	return m.Bytes()
}

func str(class ber.Class, tag ber.Tag, v string) *ber.Packet {
	return ber.NewString(class, ber.TypePrimitive, tag, v, "")
}

func integer(tag ber.Tag, v int64) *ber.Packet {
	return ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, tag, v, "")
}

// capture binds to the upstream server and returns its bind answer and the operations
// answering one subtree equality search for attr=value, all attributes.
func capture(upstream, dn, pw, base, attr, value string) (*ber.Packet, []*ber.Packet, int, error) {
	c, err := net.Dial("tcp", upstream)
	if err != nil {
		return nil, nil, 0, err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	bind := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 0, nil, "")
	bind.AppendChild(integer(ber.TagInteger, 3))
	bind.AppendChild(str(ber.ClassUniversal, ber.TagOctetString, dn))
	bind.AppendChild(str(ber.ClassContext, 0, pw))
	if _, err := c.Write(message(1, bind)); err != nil {
		return nil, nil, 0, err
	}
	p, err := ber.ReadPacket(r)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(p.Children) < 2 {
		return nil, nil, 0, fmt.Errorf("malformed bind answer")
	}
	bound := p.Children[1]
	search := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 3, nil, "")
	search.AppendChild(str(ber.ClassUniversal, ber.TagOctetString, base))
	search.AppendChild(integer(ber.TagEnumerated, 2)) // whole subtree
	search.AppendChild(integer(ber.TagEnumerated, 0)) // never dereference
	search.AppendChild(integer(ber.TagInteger, 0))
	search.AppendChild(integer(ber.TagInteger, 0))
	search.AppendChild(ber.NewBoolean(ber.ClassUniversal, ber.TypePrimitive, ber.TagBoolean, false, ""))
	eq := ber.Encode(ber.ClassContext, ber.TypeConstructed, 3, nil, "")
	eq.AppendChild(str(ber.ClassUniversal, ber.TagOctetString, attr))
	eq.AppendChild(str(ber.ClassUniversal, ber.TagOctetString, value))
	search.AppendChild(eq)
	search.AppendChild(ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, ""))
	if _, err := c.Write(message(2, search)); err != nil {
		return nil, nil, 0, err
	}
	var answer []*ber.Packet
	size := 0
	for {
		p, err := ber.ReadPacket(r)
		if err != nil {
			return nil, nil, 0, err
		}
		if len(p.Children) < 2 {
			return nil, nil, 0, fmt.Errorf("malformed search answer")
		}
		size += len(p.Bytes())
		answer = append(answer, p.Children[1])
		if p.Children[1].Tag == 5 { // SearchResultDone
			return bound, answer, size, nil
		}
	}
}

func serve(conn net.Conn, bound *ber.Packet, answer []*ber.Packet) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		p, err := ber.ReadPacket(r)
		if err != nil || len(p.Children) < 2 {
			return
		}
		id, ok := p.Children[0].Value.(int64)
		if !ok {
			return
		}
		switch p.Children[1].Tag {
		case 0: // BindRequest
			if _, err := conn.Write(message(id, bound)); err != nil {
				return
			}
		case 3: // SearchRequest
			var out []byte
			for _, op := range answer {
				out = append(out, message(id, op)...)
			}
			if _, err := conn.Write(out); err != nil {
				return
			}
		default: // UnbindRequest and anything else end the connection
			return
		}
	}
}

func main() {
	upstream := flag.String("upstream", "127.0.0.1:389", "the real server to copy one answer from")
	listen := flag.String("listen", "127.0.0.1:3899", "where to answer")
	dn := flag.String("binddn", "", "bind DN at the real server")
	pw := flag.String("bindpw", "", "bind password")
	base := flag.String("base", "", "search base")
	filter := flag.String("filter", "", "the equality filter whose answer is kept, (attr=value)")
	flag.Parse()
	f := strings.TrimSuffix(strings.TrimPrefix(*filter, "("), ")")
	attr, value, ok := strings.Cut(f, "=")
	if !ok {
		log.Fatalf("-filter must be (attr=value), not %q", *filter)
	}
	bound, answer, size, err := capture(*upstream, *dn, *pw, *base, attr, value)
	if err != nil {
		log.Fatalf("capturing the answer: %v", err)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("answering every search with %d messages, %d bytes, on %s\n", len(answer), size, *listen)
	for {
		conn, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(conn, bound, answer)
	}
}
