package server

import (
	"net"
	"strings"
	"testing"
)

// Lines of /proc/net/tcp and tcp6 as Linux writes them (addresses in the
// kernel's little-endian words).
const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1EC6 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D431 0100007F:1EC6 01 00000000:00000000 00:00000000 00000000 65534        0 41414 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1EC6 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 41415 1 0000000000000000 20 4 30 10 -1
`

const procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:C350 0000000000000000FFFF00000100007F:1EC6 01 00000000:00000000 00:00000000 00000000  1000        0 5 1 0 20 4 30 10 -1
   1: 00000000000000000000000001000000:C351 00000000000000000000000001000000:1EC6 01 00000000:00000000 00:00000000 00000000  1001        0 6 1 0 20 4 30 10 -1
`

func TestFindSocketUID(t *testing.T) {
	server := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7878}
	for _, c := range []struct {
		table  string
		client *net.TCPAddr
		want   int
	}{
		{procNetTCP, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 54321}, 65534},
		{procNetTCP6, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, 1000},
		{procNetTCP6, &net.TCPAddr{IP: net.IPv6loopback, Port: 50001}, 1001},
	} {
		srv := server
		if c.client.IP.To4() == nil {
			srv = &net.TCPAddr{IP: net.IPv6loopback, Port: 7878}
		}
		got, err := findSocketUID(strings.NewReader(c.table), c.client, srv)
		if err != nil || got != c.want {
			t.Errorf("client %v: uid %d, %v; want %d", c.client, got, err, c.want)
		}
	}
	if _, err := findSocketUID(strings.NewReader(procNetTCP), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, server); err == nil {
		t.Error("found a socket that is not there")
	}
}
