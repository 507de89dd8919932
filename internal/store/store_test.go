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
	w, err := tracefile.Create(path, tracefile.Header{ID: id, Label: label, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(tracefile.Footer{}); err != nil {
		t.Fatal(err)
	}
	return id
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
	list, err := s.List()
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %v %v", list, err)
	}
	if list[0].ID != newest || list[2].ID != old {
		t.Errorf("not newest first: %s %s %s", list[0].ID, list[1].ID, list[2].ID)
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
	dir := filepath.Join(t.TempDir(), "store")
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
	done := make(chan []Entry, 1)
	go func() {
		es, _ := s.List()
		done <- es
	}()
	select {
	case es := <-done:
		if len(es) != 2 {
			t.Fatalf("%d entries", len(es))
		}
		for _, e := range es {
			if e.Path == fifo && (e.Err == nil || !strings.Contains(e.Err.Error(), "not a regular file")) {
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
