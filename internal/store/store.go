package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/tracefile"
)

// Ext is a trace file's extension.
const Ext = ".iotrace"

// Store is a directory of traces.
type Store struct {
	Dir   string
	owner Owner
}

// Open returns the store at dir (created on first write).
func Open(dir string) *Store {
	return &Store{Dir: dir, owner: InvokingUser()}
}

func (s *Store) tracesDir() string { return filepath.Join(s.Dir, "traces") }

// NewPath reserves a new ID and returns it with the path its trace will have.
func (s *Store) NewPath() (id, path string, err error) {
	if err := s.Ensure(); err != nil {
		return "", "", err
	}
	for range 100 {
		id = newID()
		path = filepath.Join(s.tracesDir(), id+Ext)
		free, err := isFree(path)
		if err != nil {
			return "", "", err
		}
		if free {
			return id, path, nil
		}
	}
	return "", "", fmt.Errorf("could not find a free trace ID in %s after 100 tries", s.tracesDir())
}

// isFree reports whether neither path nor its .partial exists; any other
// answer than "does not exist" is an error worth saying.
func isFree(path string) (bool, error) {
	for _, p := range []string{path, path + tracefile.PartialSuffix} {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			return false, nil
		case !errors.Is(err, os.ErrNotExist):
			return false, fmt.Errorf("cannot use %s: %w", p, err)
		}
	}
	return true, nil
}

// Ensure makes the store's directories if they are missing — each one it
// creates, parents included, handed to the invoking user — and says which
// path is in the way if one is not a directory.
func (s *Store) Ensure() error {
	for _, d := range []string{s.Dir, s.tracesDir()} {
		if err := s.mkdirOwned(d); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) mkdirOwned(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("the trace store needs %s to be a directory, but it is a file: move it away", dir)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot use %s for the trace store: %w", dir, err)
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := s.mkdirOwned(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot create %s for the trace store: %w", dir, err)
	}
	if err := s.owner.Chown(dir); err != nil {
		return fmt.Errorf("cannot give %s to uid %d: %w", dir, s.owner.UID, err)
	}
	return nil
}

// idAlphabet avoids letters that read alike (0/o, 1/l/i).
const idAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b[:])
}

// ValidID reports whether s has the shape of a trace ID or ID prefix, which
// is what makes it safe to join onto the store's path.
func ValidID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune(idAlphabet, c) {
			return false
		}
	}
	return true
}

// Entry is one trace in the store.
type Entry struct {
	ID      string
	Path    string
	Partial bool // still recording, or cut short
	Meta    tracefile.Meta
	Err     error // the file could not be read
}

// List returns the store's traces, newest first.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.tracesDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		name := de.Name()
		partial := strings.HasSuffix(name, Ext+tracefile.PartialSuffix)
		if !partial && !strings.HasSuffix(name, Ext) {
			continue
		}
		id := strings.TrimSuffix(strings.TrimSuffix(name, tracefile.PartialSuffix), Ext)
		e := Entry{ID: id, Path: filepath.Join(s.tracesDir(), name), Partial: partial}
		if de.Type().IsRegular() {
			e.Meta, e.Err = tracefile.ReadMeta(e.Path)
		} else {
			e.Err = errors.New("not a regular file")
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Meta.Header.Start.After(out[j].Meta.Header.Start)
	})
	return out, nil
}

// Resolve finds the trace a user named: an existing file path, an ID, a
// unique ID prefix, or a label (the newest trace with it).
func (s *Store) Resolve(arg string) (string, error) {
	pathLike := strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, Ext) || strings.HasSuffix(arg, tracefile.PartialSuffix)
	if pathLike && isRegular(arg) {
		return arg, nil
	}
	entries, err := s.List()
	if err != nil {
		return "", err
	}
	if ValidID(arg) {
		var hits []Entry
		for _, e := range entries {
			if e.ID == arg {
				return e.Path, nil
			}
			if strings.HasPrefix(e.ID, arg) {
				hits = append(hits, e)
			}
		}
		if len(hits) == 1 {
			return hits[0].Path, nil
		}
		if len(hits) > 1 {
			return "", fmt.Errorf("trace ID %q is ambiguous: %d traces start with it", arg, len(hits))
		}
	}
	for _, e := range entries {
		if e.Err == nil && e.Meta.Header.Label == arg {
			return e.Path, nil
		}
	}
	if isRegular(arg) {
		return arg, nil
	}
	if pathLike {
		if _, err := os.Stat(arg); err == nil {
			return "", fmt.Errorf("%s is not a regular file", arg)
		}
		return "", fmt.Errorf("no trace file %s, and no trace in %s with that label", arg, s.Dir)
	}
	return "", fmt.Errorf("no trace %q in %s (see 'ioshape ls')", arg, s.Dir)
}

// isRegular reports whether path is a regular file (a FIFO or device named
// like a trace would block or mislead whoever opens it).
func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ErrNoTrace is returned by ByID for an ID the store does not hold.
var ErrNoTrace = errors.New("no such trace")

// ByID finds a trace by its exact ID and nothing else — no prefixes,
// labels or paths — for callers whose argument comes from the network. The
// path comes from the store's own listing, never from the argument.
func (s *Store) ByID(id string) (Entry, error) {
	if !ValidID(id) || len(id) != len(newID()) {
		return Entry{}, ErrNoTrace
	}
	entries, err := s.List()
	if err != nil {
		return Entry{}, err
	}
	for _, e := range entries {
		if e.ID == id {
			return e, nil
		}
	}
	return Entry{}, ErrNoTrace
}
