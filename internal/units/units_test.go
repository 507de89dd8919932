package units

import "testing"

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(4096), "4 KiB"}, {Bytes(1536 << 10), "1.5 MiB"},
		{Bytes(512 << 20), "512 MiB"}, {Bytes(3 << 40), "3 TiB"},
		{Count(0), "0"}, {Count(999), "999"}, {Count(1000), "1,000"}, {Count(-1234567), "-1,234,567"},
		{Micros(0.5), "0.5 µs"}, {Micros(150), "150 µs"}, {Micros(1500), "1.5 ms"}, {Micros(2.5e6), "2.5 s"},
		{Percent(0.953), "95.3%"}, {Percent(1), "100%"}, {Num(3.14159, 2), "3.14"}, {Num(2, 2), "2"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
