package tracefile

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
)

func sampleEvents(n int) []event.Event {
	evs := make([]event.Event, n)
	for i := range evs {
		e := &evs[i]
		e.Layer = event.Layer(i % 2)
		e.Op = event.Read + event.Op(i%3)
		if e.Layer == event.Syscall {
			e.Call = event.CallPread64
			e.Inode = uint64(1000 + i)
		} else {
			e.Flags = event.FlagDispatched | event.FlagSync
			e.Dispatch = int64(i)*1000 + 7
		}
		e.Start = int64(i)*1000 - 5000
		e.End = e.Start + 20000 + int64(i%7)
		e.Dev = event.Dev{Major: 254, Minor: uint32(i % 3)}
		e.Offset = int64(i) * 4096
		e.Size, e.Bytes = 4096, 4096
		if i%11 == 0 {
			e.Offset, e.Errno, e.Bytes = -1, 5, 0
		}
		e.Pid, e.Tid = uint32(100+i%4), uint32(200+i%8)
		e.Comm = []string{"fio", "cp", "kworker/u8:0", "Final Cut Pro"}[i%4]
	}
	return evs
}

func writeTrace(t *testing.T, path string, evs []event.Event, finish bool) {
	t.Helper()
	w, err := Create(path, Header{Tool: "ioshape", Backend: "test", Label: "x", Start: time.Unix(1700000000, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if finish {
		if err := w.Close(Footer{LostEvents: 3, EndReason: "done"}); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.abandon()
	}
}

func readAll(t *testing.T, path string) ([]event.Event, *Reader, error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []event.Event
	for r.Next() {
		out = append(out, *r.Event())
	}
	return out, r, r.Err()
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.iotrace")
	evs := sampleEvents(70000) // crosses an automatic chunk boundary
	writeTrace(t, path, evs, true)
	if _, err := os.Stat(path + PartialSuffix); !os.IsNotExist(err) {
		t.Fatalf("partial file left behind: %v", err)
	}
	got, r, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, evs) {
		for i := range evs {
			if !reflect.DeepEqual(got[i], evs[i]) {
				t.Fatalf("event %d: got %+v, want %+v", i, got[i], evs[i])
			}
		}
		t.Fatalf("got %d events, want %d", len(got), len(evs))
	}
	m := r.Meta()
	if m.Footer == nil || m.Footer.Events != int64(len(evs)) || m.Footer.LostEvents != 3 {
		t.Fatalf("footer = %+v", m.Footer)
	}
	if m.Header.Label != "x" || m.Header.FormatVersion != 3 {
		t.Fatalf("header = %+v", m.Header)
	}
	if r.Incomplete() {
		t.Fatal("finished trace reported incomplete")
	}
}

// A recorder killed mid-way leaves a .partial file whose flushed events are
// all readable, at any cut point, without a panic.
func TestTruncatedAnywhere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.iotrace")
	evs := sampleEvents(3000)
	writeTrace(t, path, evs, false)
	full, err := os.ReadFile(path + PartialSuffix)
	if err != nil {
		t.Fatal(err)
	}
	// Chunk boundaries: after each flushed chunk, all its events are readable.
	last := -1
	var cuts []int
	for cut := 0; cut < len(full); cut += 1 + cut/50 {
		cuts = append(cuts, cut)
	}
	for _, cut := range append(cuts, len(full)) {
		p := filepath.Join(dir, "cut")
		if err := os.WriteFile(p, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		got, r, err := readAll(t, p)
		if err != nil {
			if !strings.Contains(err.Error(), "truncated") && err != ErrNotTrace && !strings.Contains(err.Error(), ErrNotTrace.Error()) {
				t.Fatalf("cut %d: unexpected error %v", cut, err)
			}
			continue
		}
		if !r.Incomplete() {
			t.Fatalf("cut %d: not reported incomplete", cut)
		}
		if len(got)%1000 != 0 || len(got) < last {
			t.Fatalf("cut %d: %d events (previous %d)", cut, len(got), last)
		}
		if len(got) > 0 && !reflect.DeepEqual(got, evs[:len(got)]) {
			t.Fatalf("cut %d: events differ", cut)
		}
		last = len(got)
	}
	if last != len(evs) {
		t.Fatalf("whole partial file gave %d events, want %d", last, len(evs))
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeTrace(t, good, sampleEvents(2500), true)
	data, _ := os.ReadFile(good)

	newer := append([]byte(nil), data...)
	binary.LittleEndian.PutUint16(newer[8:], Version+1)
	corrupt := append([]byte(nil), data...)
	corrupt[len(corrupt)/2] ^= 0xff

	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "not an ioshape trace", nil},
		{"text", "not an ioshape trace", []byte("hello world, this is not a trace\n")},
		{"newer", "newer than this ioshape reads", newer},
		{"header only cut", "truncated trace", data[:preambleLen+5]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			os.WriteFile(p, c.data, 0o644)
			_, _, err := readAll(t, p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// 1 to 15 bytes of a trace's start: truncated, not "not a trace".
	for n := 1; n < preambleLen; n++ {
		p := filepath.Join(dir, fmt.Sprintf("cut%d", n))
		os.WriteFile(p, data[:n], 0o644)
		if _, _, err := readAll(t, p); err == nil || !strings.Contains(err.Error(), "truncated trace") {
			t.Errorf("%d bytes: %v, want truncated", n, err)
		}
	}
	// A chunk damaged in a finished trace: the chunks before it stand.
	p := filepath.Join(dir, "corrupt")
	os.WriteFile(p, corrupt, 0o644)
	got, r, err := readAll(t, p)
	all := sampleEvents(2500)
	if err != nil || !strings.Contains(r.CutNote(), "failed its checksum") || !reflect.DeepEqual(got, all[:len(got)]) {
		t.Errorf("corrupt: err %v, note %q, %d events (a prefix: %v)", err, r.CutNote(), len(got), len(got) <= len(all) && reflect.DeepEqual(got, all[:len(got)]))
	}
}

func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "good")
	w, _ := Create(good, Header{Tool: "ioshape"})
	for _, e := range sampleEvents(50) {
		w.Write(&e)
	}
	w.Close(Footer{})
	data, _ := os.ReadFile(good)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, b, 0o644)
		r, err := Open(p)
		if err != nil {
			return
		}
		for r.Next() {
		}
		r.Close()
		if r, err = Open(p); err == nil {
			for r.NextBatch() != nil {
			}
			r.Close()
		}
	})
}

// FORMAT.md's call table names every event.Call with its number, so the
// format's documentation cannot fall behind the model again.
func TestFormatDocListsEveryCall(t *testing.T) {
	doc, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	for c := event.Call(1); c.Valid(); c++ {
		if !regexp.MustCompile(fmt.Sprintf(`\| %d \| %s \|`, c, regexp.QuoteMeta(c.String()))).Match(doc) {
			t.Errorf("FORMAT.md does not list call %d (%s)", c, c)
		}
	}
}

// A power cut can leave an unfinished file whose tail is zeros (the file
// grew, its data never reached the disk): the chunks before it are read,
// and the reader says what it cut. A zero-filled tail in the middle of a
// chunk, or after several, is handled alike.
func TestZeroFilledTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.iotrace")
	evs := sampleEvents(3000)
	writeTrace(t, path, evs, false)
	full, err := os.ReadFile(path + PartialSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int{len(full), len(full) - 100} {
		p := filepath.Join(dir, "zeros")
		data := append(append([]byte(nil), full[:keep]...), make([]byte, 256<<10)...)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, r, err := readAll(t, p)
		if err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		if !r.Incomplete() || r.Cut() < 256<<10 || !strings.Contains(r.CutNote(), "zeros") {
			t.Errorf("keep %d: incomplete %v, cut %d, note %q", keep, r.Incomplete(), r.Cut(), r.CutNote())
		}
		if len(got) == 0 || len(got)%1000 != 0 || !reflect.DeepEqual(got, evs[:len(got)]) {
			t.Errorf("keep %d: %d events, not a prefix of whole chunks", keep, len(got))
		}
	}
	// A finished trace damaged inside a chunk: read up to that chunk,
	// and said (a damaged frame is an error).
	finished := filepath.Join(dir, "f.iotrace")
	writeTrace(t, finished, evs, true)
	b, _ := os.ReadFile(finished)
	for i := len(b) / 2; i < len(b)/2+64; i++ {
		b[i] = 0
	}
	os.WriteFile(finished, b, 0o644)
	got, r, err := readAll(t, finished)
	if err == nil && (!strings.Contains(r.CutNote(), "failed its checksum") || !reflect.DeepEqual(got, evs[:len(got)])) {
		t.Errorf("a damaged finished trace: note %q, %d events", r.CutNote(), len(got))
	}
}

// TestVarintsAsEncodingBinary checks the reader's varints, eight bytes at
// a time where it can, against encoding/binary's, with any bytes after.
func TestVarintsAsEncodingBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 200_000; k++ {
		v := rng.Uint64() >> rng.IntN(64)
		b := binary.AppendUvarint(nil, v)
		n := len(b)
		for pad := rng.IntN(10); pad > 0; pad-- {
			b = append(b, byte(rng.IntN(256)))
		}
		if got, i := uvSlow(b, 0); got != v || i != n {
			t.Fatalf("%#x (% x): read %#x, %d bytes", v, b, got, i)
		}
	}
}
