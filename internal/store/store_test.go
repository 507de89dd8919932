package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

func addTrace(t *testing.T, s *Store, label string, start time.Time) string {
	t.Helper()
	id, path, err := s.NewPath()
	if err != nil {
		t.Fatal(err)
	}
	// As the recorder does: made as the store's owner.
	err = s.Owner().Do(func() error {
		w, err := tracefile.Create(path, tracefile.Header{ID: id, Label: label, Start: start})
		if err != nil {
			return err
		}
		return w.Close(tracefile.Footer{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(id); err != nil {
		t.Fatal(err)
	}
	return id
}

// list collects Each's summaries.
func list(t *testing.T, s *Store) []Summary {
	t.Helper()
	var out []Summary
	if err := s.Each(func(sm Summary) bool { out = append(out, sm); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNewIDsAndList(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "store"))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := addTrace(t, s, "old", t0)
	mid := addTrace(t, s, "mid", t0.Add(time.Hour))
	newest := addTrace(t, s, "new", t0.Add(2*time.Hour))
	for _, id := range []string{old, mid, newest} {
		if len(id) != 6 || !ValidID(id) {
			t.Errorf("id %q", id)
		}
	}
	got := list(t, s)
	if len(got) != 3 {
		t.Fatalf("list: %v", got)
	}
	if got[0].ID != newest || got[1].ID != mid || got[2].ID != old {
		t.Errorf("not most recently added first: %s %s %s", got[0].ID, got[1].ID, got[2].ID)
	}
	if got[0].Path != filepath.Join(s.Dir, "traces", newest+Ext) || got[0].Label != "new" || got[0].Status != "ok" {
		t.Errorf("summary %+v", got[0])
	}
}

func TestResolve(t *testing.T) {
	s := Open(t.TempDir())
	id := addTrace(t, s, "launch cold", time.Now())
	path := filepath.Join(s.Dir, "traces", id+Ext)
	for _, arg := range []string{id, id[:3], "launch cold", path} {
		got, err := s.Resolve(arg)
		if err != nil || got != path {
			t.Errorf("Resolve(%q) = %q, %v", arg, got, err)
		}
	}
	for _, arg := range []string{"nope", "../traces/" + id, "/nonexistent/x.iotrace", ""} {
		if _, err := s.Resolve(arg); err == nil {
			t.Errorf("Resolve(%q) succeeded", arg)
		}
	}
}

func TestValidIDRejectsPaths(t *testing.T) {
	for _, bad := range []string{"", "..", "../x", "a/b", "abc.iotrace", "ABCDEF", "abc 12", strings.Repeat("a", 33)} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

// Under sudo, the store and its traces belong to the invoking user.
func TestSudoOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "handing files to another user needs root")
	}
	t.Setenv("SUDO_UID", "65534")
	t.Setenv("SUDO_GID", "65534")
	dir := filepath.Join(homeOf(t, 65534), "store")
	s := Open(dir)
	id := addTrace(t, s, "x", time.Now())
	w, err := os.Stat(filepath.Join(dir, "traces"))
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("traces dir owned by %d:%d", st.Uid, st.Gid)
	}
	e, err := s.ByID(id)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Errorf("the store directory %s is not the invoking user's: %v", dir, err)
	}
	if e.ID != id || e.Meta.Header.Label != "x" {
		t.Errorf("trace %s reads back as %+v", id, e)
	}
}

// A label may contain a slash; it resolves like any other label, and a
// path that names no file says so.
func TestResolveLabelWithSlash(t *testing.T) {
	s := Open(t.TempDir())
	id := addTrace(t, s, "cp/large", time.Now())
	got, err := s.Resolve("cp/large")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := s.ByID(id); got != e.Path {
		t.Errorf("resolved to %s, want %s", got, e.Path)
	}
	if _, err := s.Resolve("no/such"); err == nil || !strings.Contains(err.Error(), "no trace file no/such") {
		t.Errorf("error %v", err)
	}
}

// A FIFO named like a trace is listed as unreadable, never opened (opening
// it would block until a writer came).
func TestFIFOInStoreIsNotOpened(t *testing.T) {
	s := Open(t.TempDir())
	addTrace(t, s, "real", time.Now())
	fifo := filepath.Join(s.Dir, "traces", "aaaaaaaaaaaa"+Ext)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Summary, 1)
	go func() { done <- list(t, s) }()
	select {
	case es := <-done:
		if len(es) != 2 {
			t.Fatalf("%d entries", len(es))
		}
		for _, e := range es {
			if e.Path == fifo && !strings.Contains(e.Status, "not a regular file") {
				t.Errorf("the FIFO's entry: %+v", e)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listing the store blocked on a FIFO")
	}
	if _, err := s.Resolve(fifo); err == nil {
		t.Error("a FIFO resolved as a trace")
	}
}

// The index heals itself: a trace copied in by hand is listed (and added),
// one deleted is not, a later line supersedes an earlier one, and a torn
// last line (a crash mid-append) is skipped. Listing opens no finished
// trace.
func TestIndexHealsAndSupersedes(t *testing.T) {
	s := Open(t.TempDir())
	a := addTrace(t, s, "a", time.Now())
	b := addTrace(t, s, "b", time.Now())
	ea, err := s.ByID(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBestMatch(a, ea.Meta, "Finder copy", 0.8); err != nil {
		t.Fatal(err)
	}
	// A trace put in the directory without the index knowing.
	data, _ := os.ReadFile(filepath.Join(s.Dir, "traces", b+Ext))
	os.WriteFile(filepath.Join(s.Dir, "traces", "zzzzzz"+Ext), data, 0o644)
	// A deleted trace, and a torn line.
	os.Remove(filepath.Join(s.Dir, "traces", b+Ext))
	f, _ := os.OpenFile(s.indexPath(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("1\t" + b + "\tto")
	f.Close()
	got := list(t, s)
	ids := map[string]Summary{}
	for _, sm := range got {
		ids[sm.ID] = sm
	}
	if len(got) != 2 || ids["zzzzzz"].ID == "" || ids[a].BestMatch != "Finder copy" {
		t.Fatalf("listed %+v", got)
	}
	idx, _ := os.ReadFile(s.indexPath())
	if !strings.Contains(string(idx), "\tzzzzzz\t") {
		t.Error("the trace found in the directory was not added to the index")
	}
	// Labels resolve through the index; an exact ID opens one file.
	if p, err := s.Resolve("a"); err != nil || p != filepath.Join(s.Dir, "traces", a+Ext) {
		t.Errorf("Resolve(a) = %q, %v", p, err)
	}
	if _, err := s.ByID(b); err != ErrNoTrace {
		t.Errorf("ByID of a deleted trace: %v", err)
	}
}

// Reading the index backwards across its 64 KiB blocks gives every line
// once, last first.
func TestEachLineBackwards(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines")
	var want []string
	var b strings.Builder
	for i := range 20000 {
		line := strings.Repeat("x", i%97) + "-" + strings.Repeat("y", i%13) + string(rune('a'+i%26))
		want = append(want, line)
		b.WriteString(line + "\n")
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	var got []string
	eachLineBackwards(path, func(l []byte) bool { got = append(got, string(l)); return true })
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[len(want)-1-i] {
			t.Fatalf("line %d from the end: %q, want %q", i, got[i], want[len(want)-1-i])
		}
	}
}

// Index lines keep any label and target, tabs and newlines included.
func TestIndexLineRoundTrip(t *testing.T) {
	sm := Summary{ID: "abc234", Label: "a\tb\\c\nd", Start: time.Date(2026, 5, 1, 2, 3, 4, 5, time.UTC), DurationS: 1.25,
		Target: "sh -c 'x\ty'", Events: 7, LostEvents: 2, Status: "lost events", BestMatch: "Finder copy", Score: 0.81}
	line := indexLine(sm)
	if strings.Count(string(line), "\n") != 1 {
		t.Fatalf("line %q", line)
	}
	got, ok := parseIndexLine(line[:len(line)-1])
	if !ok || got != sm {
		t.Errorf("round trip: %+v, want %+v", got, sm)
	}
}

// When a store path is in the way, the message names it and says what is
// wrong (not "could not find a free trace ID").
func TestStorePathInTheWay(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "traces"), []byte("x"), 0o644)
	_, _, err := Open(dir).NewPath()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "traces")) || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("traces/ a file: %v", err)
	}
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, _, err := Open(filepath.Join(file, "store")).NewPath(); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a parent that is a file: %v", err)
	}
}

// homeOf is a directory uid owns, where it may make its store (outside
// the test's own 0700 temporary directory, which only root may enter).
func homeOf(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}
