package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioshape/ioshape/internal/testutil"
)

// The commands that write a file, with a placeholder for the output path.
func outputCommands(t *testing.T) map[string][]string {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	capture := testutil.Repo(t, "internal", "parse", "testdata", "bpftrace-cp-cat-dd.txt")
	return map[string][]string{
		"report":  {"report", "-o", "OUT", trace},
		"compare": {"compare", "-o", "OUT", trace, trace},
		"import":  {"import", "-o", "OUT", capture},
	}
}

func withOutput(args []string, out string) []string {
	res := append([]string(nil), args...)
	for i, a := range res {
		if a == "OUT" {
			res[i] = out
		}
	}
	return res
}

// As root, -o onto a character device writes to it and leaves it a device
// (renaming a temporary over /dev/null made it a regular file for the
// whole machine). The device here is a private null device.
func TestOutputOntoDeviceKeepsIt(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "making a device node needs root")
	}
	for name, args := range outputCommands(t) {
		t.Run(name, func(t *testing.T) {
			dev := filepath.Join(t.TempDir(), "null")
			if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				t.Fatal(err)
			}
			r := ioshape(t, nil, append([]string{"--store", t.TempDir()}, withOutput(args, dev)...)...)
			fi, err := os.Lstat(dev)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&os.ModeCharDevice == 0 {
				t.Fatalf("%s is no longer a character device (mode %v)", dev, fi.Mode())
			}
			if name == "import" {
				// A trace is written through a temporary and renamed: a
				// device is refused, clearly.
				if r.code == 0 || !strings.Contains(r.stderr, "not a regular file") {
					t.Errorf("exit %d, stderr %q", r.code, r.stderr)
				}
			} else if r.code != 0 {
				t.Errorf("exit %d: %s", r.code, r.stderr)
			}
		})
	}
}

// A FIFO is written into (the reader gets the page), or refused for a
// trace; a directory is refused; a symlink is followed and stays a link;
// "-" is standard output.
func TestOutputTargets(t *testing.T) {
	for name, args := range outputCommands(t) {
		t.Run(name+"/fifo", func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			// The reader is there before ioshape opens the FIFO (a FIFO
			// nobody reads is refused at once): opened without waiting
			// for a writer, it reads until ioshape has exited and the
			// FIFO is empty.
			f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			var exited atomic.Bool
			got := make(chan int, 1)
			go func() {
				defer f.Close()
				n, buf := 0, make([]byte, 64<<10)
				for {
					k, err := f.Read(buf)
					n += k
					if k == 0 && (err == io.EOF || err == nil) {
						if exited.Load() {
							got <- n
							return
						}
						time.Sleep(10 * time.Millisecond)
					} else if err != nil && err != io.EOF {
						got <- -1
						return
					}
				}
			}()
			r := ioshape(t, nil, append([]string{"--store", t.TempDir()}, withOutput(args, fifo)...)...)
			exited.Store(true)
			if name == "import" {
				if r.code == 0 || !strings.Contains(r.stderr, "not a regular file") {
					t.Errorf("exit %d, stderr %q", r.code, r.stderr)
				}
				<-got
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if n := <-got; n < 10_000 {
				t.Errorf("the reader got %d bytes", n)
			}
			if fi, _ := os.Lstat(fifo); fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced (mode %v)", fi.Mode())
			}
		})
		t.Run(name+"/directory", func(t *testing.T) {
			dir := t.TempDir()
			r := ioshape(t, nil, append([]string{"--store", t.TempDir()}, withOutput(args, dir)...)...)
			if r.code == 0 || !strings.Contains(r.stderr, "directory") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q: want one line refusing the directory", r.code, r.stderr)
			}
		})
		t.Run(name+"/symlink", func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "real.out")
			if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "link.out")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			r := ioshape(t, nil, append([]string{"--store", t.TempDir()}, withOutput(args, link)...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the symlink was replaced: %v %v", fi, err)
			}
			if b, _ := os.ReadFile(target); len(b) < 100 {
				t.Errorf("the link's target holds %d bytes", len(b))
			}
		})
		if name == "import" {
			continue // a trace goes to a file, not a pipe
		}
		t.Run(name+"/stdout", func(t *testing.T) {
			r := ioshape(t, nil, append([]string{"--store", t.TempDir()}, withOutput(args, "-")...)...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") {
				t.Errorf("exit %d, stdout starts %.40q", r.code, r.stdout)
			}
		})
	}
}

// report's default file is named after the trace's ID, as its help says,
// not its label.
func TestReportDefaultNameIsTheID(t *testing.T) {
	store := t.TempDir()
	capture := testutil.Repo(t, "internal", "parse", "testdata", "bpftrace-cp-cat-dd.txt")
	r := ioshape(t, nil, "--store", store, "import", "--label", "my/label", capture)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	id := strings.Fields(r.stdout)[0]
	dir := t.TempDir()
	cmd := ioshapeCmd(nil, "--store", store, "report", "my/label")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ioshape-"+id+".html")); err != nil {
		t.Errorf("no ioshape-%s.html: %v (%s)", id, err, out)
	}
}

// Under sudo, what import and report write — the trace, the report, and
// every store directory made on the way — belongs to the invoking user.
func TestFilesBelongToTheSudoCaller(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "acting as sudo needs root")
	}
	env := []string{"SUDO_UID=65534", "SUDO_GID=65534"}
	// A directory the sudo caller owns, as their home is: ioshape writes
	// as them, nowhere they could not.
	base, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chown(base, 65534, 65534)
	store := filepath.Join(base, "made", "on", "the", "way")
	capture := testutil.Repo(t, "internal", "parse", "testdata", "bpftrace-cp-cat-dd.txt")
	r := ioshape(t, env, "--store", store, "import", capture)
	if r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	trace := strings.Fields(r.stdout)[1]
	html := filepath.Join(base, "report.html")
	if r := ioshape(t, env, "--store", store, "report", "-o", html, trace); r.code != 0 {
		t.Fatalf("report: %s", r.stderr)
	}
	for _, p := range []string{filepath.Join(base, "made"), filepath.Join(base, "made", "on"), store, filepath.Join(store, "traces"), trace, html} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("%s is owned by %d:%d, not the sudo caller", p, st.Uid, st.Gid)
		}
	}
}
