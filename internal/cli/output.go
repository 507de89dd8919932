package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/store"
)

// Output files. A regular file (or a new name) is written through a
// temporary beside it and renamed into place, so a failure or Ctrl-C never
// leaves half a file under the name. Anything else that exists — a device
// such as /dev/null, a FIFO, a socket — is written directly and never
// replaced (renaming over /dev/null as root would break the machine); a
// directory is refused; a symlink is followed, and its target written —
// only a symlink owned by root or by the user ioshape acts for (the sudo
// caller): one another user planted (in /tmp, say) is refused, and every
// file is opened, made and renamed as the sudo caller, never as root.

// resolveOutput follows a symlink to what it names and says whether the
// result can be replaced atomically (it is a regular file or does not
// exist yet).
func resolveOutput(path string) (resolved string, atomic bool, err error) {
	if err := store.CheckLinks(path, store.InvokingUser()); err != nil {
		return "", false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	resolved = path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		resolved = real
	}
	st, err := os.Stat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return resolved, true, nil
	case err != nil:
		return "", false, fmt.Errorf("cannot write %s: %w", path, err)
	case st.IsDir():
		return "", false, fmt.Errorf("cannot write %s: it is a directory", path)
	}
	return resolved, st.Mode().IsRegular(), nil
}

// checkOutput refuses a path that a trace cannot be written to: a trace is
// always written through a temporary and renamed, so only a regular file
// or a new name will do.
func checkOutput(path string) error {
	_, atomic, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if !atomic {
		return fmt.Errorf("cannot write a trace to %s: it is not a regular file (a device, FIFO or socket); name a file", path)
	}
	return nil
}

// writeOutput writes a command's output to path ("-": standard output),
// owned by the sudo caller when it makes a new file.
func (g *globals) writeOutput(ctx context.Context, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(g.stdout)
	}
	resolved, atomic, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if !atomic {
		return writeInPlace(ctx, resolved, write)
	}
	invoker := store.InvokingUser()
	var f *os.File
	err = invoker.Do(func() (err error) {
		f, err = os.CreateTemp(filepath.Dir(resolved), ".ioshape-*.tmp")
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	err = writeTo(f, write)
	if err == nil {
		err = ctx.Err() // interrupted while writing: keep nothing
	}
	if err == nil {
		err = invoker.Do(func() error {
			os.Chmod(f.Name(), 0o644)
			return os.Rename(f.Name(), resolved)
		})
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// writeInPlace writes to an existing file that is not a regular one (a
// device, a FIFO), as the sudo caller. A FIFO with no reader would block
// the open for ever: it is opened without waiting, and is refused then.
func writeInPlace(ctx context.Context, path string, write func(io.Writer) error) error {
	var f *os.File
	err := store.InvokingUser().Do(func() (err error) {
		f, err = openWriteNoWait(path)
		return err
	})
	if err == nil {
		err = writeTo(f, write)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return ctx.Err()
}

// openWriteNoWait opens path (not a regular file) for writing without
// following a final symbolic link and without waiting for a FIFO's
// reader: a FIFO nobody reads is an error at once, not a hang that
// ignores Ctrl-C.
func openWriteNoWait(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err == syscall.ENXIO {
		return nil, errors.New("a FIFO with no reader: start what reads it first")
	}
	if err != nil {
		return nil, err
	}
	// Writes block again, as a writer expects.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// writeTo writes through a buffer and closes f, with the first error.
func writeTo(f *os.File, write func(io.Writer) error) error {
	w := bufio.NewWriter(f)
	err := write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// resolve finds the trace a command's argument names, in the store.
func (g *globals) resolve(arg string) (string, error) {
	st, err := g.store()
	if err != nil {
		return "", err
	}
	return st.Resolve(arg)
}

// writeJSON prints v as indented JSON, as every --json output is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// open resolves a trace argument and opens the trace, once for the whole
// command: the caller closes it.
func (g *globals) open(arg string) (*analysis.Trace, error) {
	path, err := g.resolve(arg)
	if err != nil {
		return nil, err
	}
	return analysis.Open(path)
}

// maxSmallFile bounds a drive profile or benchmark results file: they are
// kilobytes.
const maxSmallFile = 16 << 20

// readSmallFile reads a file a flag names — a drive profile, benchmark
// results — which must be a regular file of at most maxSmallFile bytes: a
// FIFO would hold the open for ever and /dev/zero read for ever.
func readSmallFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxSmallFile {
		return nil, fmt.Errorf("%s is %d bytes: not a drive profile or benchmark results (at most %d)", path, fi.Size(), maxSmallFile)
	}
	// Opened without waiting, in case it became a FIFO since.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSmallFile+1))
	if err == nil && len(b) > maxSmallFile {
		err = fmt.Errorf("%s is over %d bytes: not a drive profile or benchmark results", path, maxSmallFile)
	}
	return b, err
}
