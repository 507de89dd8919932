package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ioshape/ioshape/internal/tracefile"
)

// Ext is a trace file's extension.
const Ext = ".iotrace"

// Store is a directory of traces.
type Store struct {
	Dir   string
	owner Owner
}

// Open returns the store at dir (created on first write), owned by the
// user who ran sudo, if any.
func Open(dir string) *Store {
	return &Store{Dir: dir, owner: InvokingUser()}
}

// OpenAs returns the store at dir owned by o: root creates and writes
// nothing there that o could not (Owner.Do), and the daemon reads only
// the traces o owns.
func OpenAs(dir string, o Owner) *Store {
	return &Store{Dir: dir, owner: o}
}

// Owner is whose store this is.
func (s *Store) Owner() Owner { return s.owner }

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
	return s.owner.Do(func() error {
		for _, d := range []string{s.Dir, s.tracesDir()} {
			if err := s.mkdirOwned(d); err != nil {
				return err
			}
		}
		return nil
	})
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

// Entry is one trace in the store, read from its file.
type Entry struct {
	ID      string
	Path    string
	Partial bool // still recording, or cut short
	Meta    tracefile.Meta
}

// Resolve finds the trace a user named: an existing file path, an ID, a
// unique ID prefix, or a label (the most recently added trace with it). It
// opens no trace but the one it finds (a label is looked up in the index).
func (s *Store) Resolve(arg string) (string, error) {
	pathLike := strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, Ext) || strings.HasSuffix(arg, tracefile.PartialSuffix)
	if pathLike && isRegular(arg) {
		return arg, nil
	}
	if ValidID(arg) {
		if path, ok := s.byExactID(arg); ok {
			return path, nil
		}
		d, err := s.readDisk()
		if err != nil {
			return "", err
		}
		var hits []string
		for id := range d.finished {
			if strings.HasPrefix(id, arg) {
				hits = append(hits, s.pathOf(id, false))
			}
		}
		for _, id := range d.partial {
			if strings.HasPrefix(id, arg) {
				hits = append(hits, s.pathOf(id, true))
			}
		}
		if len(hits) == 1 {
			return hits[0], nil
		}
		if len(hits) > 1 {
			return "", fmt.Errorf("trace ID %q is ambiguous: %d traces start with it", arg, len(hits))
		}
	}
	var found string
	if err := s.Each(func(sm Summary) bool {
		if sm.Label == arg && !strings.HasPrefix(sm.Status, "unreadable") {
			found = sm.Path
		}
		return found == ""
	}); err != nil {
		return "", err
	}
	if found != "" {
		return found, nil
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

func (s *Store) pathOf(id string, partial bool) string {
	p := filepath.Join(s.tracesDir(), id+Ext)
	if partial {
		p += tracefile.PartialSuffix
	}
	return p
}

// byExactID is the path of the trace with this exact ID, without opening
// it: the command that asked opens it once, to read it.
func (s *Store) byExactID(id string) (string, bool) {
	if len(id) != len(newID()) {
		return "", false
	}
	for _, partial := range []bool{false, true} {
		if path := s.pathOf(id, partial); s.owned(path) {
			return path, true
		}
	}
	return "", false
}

// owned reports whether path is a regular file — not a link to one — and
// the store owner's (without one, this process's user's): a trace root
// reads for the daemon is never one the owner linked in from elsewhere.
// (A store written as root by an older ioshape: chown -R it to its owner.)
func (s *Store) owned(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	if s.owner.Set {
		return int(st.Uid) == s.owner.UID
	}
	return int(st.Uid) == os.Geteuid()
}

// ErrNoTrace is returned by ByID for an ID the store does not hold.
var ErrNoTrace = errors.New("no such trace")

// ByID finds a trace by its exact ID and nothing else — no prefixes,
// labels or paths — for callers whose argument comes from the network. The
// path is made from the validated ID, never taken from the argument, and
// only that one file is opened.
func (s *Store) ByID(id string) (Entry, error) {
	path, err := s.PathByID(id)
	if err != nil {
		return Entry{}, err
	}
	m, err := tracefile.ReadMeta(path)
	if err != nil {
		return Entry{}, err
	}
	return Entry{ID: id, Path: path, Partial: strings.HasSuffix(path, tracefile.PartialSuffix), Meta: m}, nil
}

// PathByID is ByID's path alone, without opening the trace: for a caller
// that reads it once itself (the daemon's cache).
func (s *Store) PathByID(id string) (string, error) {
	if !ValidID(id) || len(id) != len(newID()) {
		return "", ErrNoTrace
	}
	if path, ok := s.byExactID(id); ok {
		return path, nil
	}
	return "", ErrNoTrace
}
