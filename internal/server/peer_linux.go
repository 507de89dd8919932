package server

import (
	"bufio"
	"encoding/hex"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// socketOwner finds the uid owning the TCP socket whose local end is
// client and remote end server, in /proc/net/tcp and tcp6.
func socketOwner(client, server *net.TCPAddr) (int, bool) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		uid, err := findSocketUID(f, client, server)
		f.Close()
		if err == nil {
			return uid, true
		}
	}
	return 0, false
}

// findSocketUID reads a /proc/net/tcp table ("sl local rem st … uid …",
// addresses as the kernel's words in hex, little-endian on the machines
// ioshape runs on).
func findSocketUID(r io.Reader, local, remote *net.TCPAddr) (int, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		if sameEndpoint(f[1], local) && sameEndpoint(f[2], remote) {
			return strconv.Atoi(f[7])
		}
	}
	return 0, errNoSocket
}

// sameEndpoint compares a table's "ADDR:PORT" with an address: IPv4 as one
// word, IPv6 (and IPv4-mapped IPv6) as four.
func sameEndpoint(field string, a *net.TCPAddr) bool {
	addr, port, ok := strings.Cut(field, ":")
	if !ok {
		return false
	}
	if p, err := strconv.ParseUint(port, 16, 16); err != nil || int(p) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(addr)
	if err != nil {
		return false
	}
	for i := 0; i+4 <= len(raw); i += 4 { // each 32-bit word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.IP(raw).Equal(a.IP)
}
