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

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/store"
)

// Output files. A regular file (or a new name) is written through a
// temporary beside it and renamed into place, so a failure or Ctrl-C never
// leaves half a file under the name. Anything else that exists — a device
// such as /dev/null, a FIFO, a socket — is written directly and never
// replaced (renaming over /dev/null as root would break the machine); a
// directory is refused; a symlink is followed, and its target written.

// resolveOutput follows a symlink to what it names and says whether the
// result can be replaced atomically (it is a regular file or does not
// exist yet).
func resolveOutput(path string) (resolved string, atomic bool, err error) {
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
		return writeInPlace(resolved, write)
	}
	f, err := os.CreateTemp(filepath.Dir(resolved), ".ioshape-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	err = writeTo(f, write)
	if err == nil {
		err = ctx.Err() // interrupted while writing: keep nothing
	}
	if err == nil {
		os.Chmod(f.Name(), 0o644)
		g.chownToInvoker(f.Name())
		err = os.Rename(f.Name(), resolved)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// writeInPlace writes to an existing file that is not a regular one.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		err = writeTo(f, write)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// chownToInvoker gives a file ioshape made to the user who ran sudo, and
// says so if it cannot.
func (g *globals) chownToInvoker(path string) {
	if err := store.InvokingUser().Chown(path); err != nil {
		fmt.Fprintf(g.stderr, "warning: %s stays owned by root: %v\n", path, err)
	}
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
