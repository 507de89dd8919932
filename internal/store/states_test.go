package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

func statusOf(t *testing.T, s *Store, id string) Summary {
	t.Helper()
	for _, sm := range list(t, s) {
		if sm.ID == id {
			return sm
		}
	}
	t.Fatalf("%s is not listed", id)
	return Summary{}
}

// A trace being written lists as recording (or importing), never as
// unreadable; one whose writer stopped lists as cut short with the events
// it holds; a finished-looking file without a footer, as incomplete.
func TestListsWhatATraceIs(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "store"))
	for _, mode := range []string{"command", "import"} {
		id, path, err := s.NewPath()
		if err != nil {
			t.Fatal(err)
		}
		w, err := tracefile.Create(path, tracefile.Header{ID: id, Target: tracefile.Target{Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"command": "recording", "import": "importing"}[mode]
		if sm := statusOf(t, s, id); sm.Status != want {
			t.Errorf("a trace being written (%s): %q, want %q", mode, sm.Status, want)
		}
		// 333 events flushed, then the writer dies (its file closed, no
		// footer): cut short, holding them.
		e := event.Event{Layer: event.Block, Op: event.Read, Start: 1, End: 2, Size: 4096, Bytes: 4096, Comm: "x"}
		for range 333 {
			w.Write(&e)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		abandonForTest(w)
		sm := statusOf(t, s, id)
		if !strings.HasPrefix(sm.Status, "cut short") || sm.Events != 333 {
			t.Errorf("a trace whose writer died (%s): %q, %d events; want cut short, 333", mode, sm.Status, sm.Events)
		}
	}
	// A finished name without a footer (copied while being written).
	id, path, _ := s.NewPath()
	w, _ := tracefile.Create(path, tracefile.Header{ID: id})
	w.Flush()
	abandonForTest(w)
	os.Rename(path+tracefile.PartialSuffix, path)
	if sm := statusOf(t, s, id); !strings.HasPrefix(sm.Status, "incomplete") {
		t.Errorf("a trace without a footer: %q", sm.Status)
	}
}

// abandonForTest closes a writer's file as a crash would: no footer.
func abandonForTest(w *tracefile.Writer) { w.Abandon() }

// Viewing a trace again appends nothing to the index; nothing appends a
// blank line.
func TestIndexAppendsOnlyChanges(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "store"))
	id := addTrace(t, s, "x", time.Now())
	e, err := s.ByID(id)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.SetBestMatch(id, e.Meta, "Finder copy", 0.8)
	}
	s.SetBestMatch(id, e.Meta, "cp", 0.7)
	b, _ := os.ReadFile(s.indexPath())
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 { // added, Finder copy, cp
		t.Errorf("index has %d lines, want 3:\n%s", len(lines), b)
	}
	if bytes.Contains(b, []byte("\n\n")) {
		t.Errorf("the index holds a blank line:\n%q", b)
	}
}

// A store with no room left: creating a trace fails in one error and
// leaves nothing behind (no empty .partial).
func TestFullStoreLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "mounting a small file system needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		testutil.Unavailable(t, "cannot mount a small tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	s := Open(filepath.Join(dir, "store"))
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	fill, _ := os.Create(filepath.Join(dir, "fill"))
	for {
		if _, err := fill.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	fill.Close()
	_, path, err := s.NewPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracefile.Create(path, tracefile.Header{}); err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("create in a full store: %v", err)
	}
	if _, err := os.Lstat(path + tracefile.PartialSuffix); err == nil {
		t.Error("a full store kept an empty .partial")
	}
}
