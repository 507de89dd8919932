//go:build linux && e2e

package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/testutil"
	"golang.org/x/sys/unix"
)

// realWork is a real program doing what people do, recorded for real, and
// the catalog families it should read as: the seeds' definitions (app
// launch: many small random reads with idle time between; scrubbing:
// random large reads one at a time with think time; a Finder-like copy:
// large sequential reads and writes at QD1; a small-file copy: small
// files, metadata, low depth), or the Linux pattern measured beside a
// macOS one where Linux's page cache makes the drive see something else.
type realWork struct {
	name     string
	needs    []string                             // programs it runs
	prep     func(t *testing.T, dir string) error // untraced: data, and the cache made cold for it
	argv     func(dir string) []string            // what is recorded
	cold     bool                                 // drop every cache first (the program's own files too)
	families []string
	layer    string // the layer the drive's work is in
}

var realWorks = []realWork{
	{name: "Chromium headless, cold start", needs: []string{"chromium"}, cold: true,
		argv: func(string) []string {
			return []string{"sh", "-c", "exec chromium --headless --no-sandbox --disable-gpu --dump-dom about:blank >/dev/null"}
		},
		families: []string{"app-launch", "app-launch-linux"}, layer: "block"},
	{name: "Python importing DuckDB, cold start", needs: []string{"python3"}, cold: true,
		prep: func(t *testing.T, _ string) error {
			return exec.Command("python3", "-c", "import duckdb").Run()
		},
		argv: func(string) []string {
			return []string{"python3", "-c", "import duckdb; duckdb.sql('select 42').fetchall()"}
		},
		families: []string{"app-launch", "app-launch-linux"}, layer: "block"},
	{name: "ffmpeg scrubbing a 1 GB video: 40 single frames", needs: []string{"ffmpeg"},
		prep: func(t *testing.T, dir string) error {
			if err := makeVideo(dir); err != nil {
				return err
			}
			// The player is warm (a scrub happens in a running editor); the
			// video is not.
			exec.Command("ffmpeg", "-loglevel", "error", "-nostdin", "-ss", "1", "-i", filepath.Join(dir, "video.mp4"), "-frames:v", "1", "-f", "null", "-").Run()
			return evict(filepath.Join(dir, "video.mp4"))
		},
		argv: func(dir string) []string {
			rng := rand.New(rand.NewPCG(40, 1))
			var b strings.Builder
			for range 40 {
				fmt.Fprintf(&b, "ffmpeg -loglevel error -nostdin -ss %d -i %s -frames:v 1 -f null - || exit 1\n", rng.IntN(430), filepath.Join(dir, "video.mp4"))
			}
			return []string{"sh", "-c", b.String()}
		},
		families: []string{"fcp-scrub", "scrub-linux"}, layer: "block"},
	{name: "cp of a 256 MiB file", needs: []string{"cp"},
		prep: func(t *testing.T, dir string) error { return bigFile(dir) },
		argv: func(dir string) []string {
			return []string{"cp", filepath.Join(dir, "big.bin"), filepath.Join(dir, "big.cp")}
		},
		families: []string{"cp-linux", "cp", "finder-copy"}, layer: "block"},
	{name: "gio copy (GLib, as GNOME Files copies) of a 256 MiB file", needs: []string{"gio"},
		prep: func(t *testing.T, dir string) error { return bigFile(dir) },
		argv: func(dir string) []string {
			return []string{"gio", "copy", filepath.Join(dir, "big.bin"), filepath.Join(dir, "big.gio")}
		},
		families: []string{"finder-copy", "cp-linux", "cp"}, layer: "block"},
	{name: "cp -r of 3,000 small files", needs: []string{"cp"},
		prep: func(t *testing.T, dir string) error { return smallTree(dir, true) },
		argv: func(dir string) []string {
			return []string{"cp", "-r", filepath.Join(dir, "tree"), filepath.Join(dir, "tree.cp")}
		},
		families: []string{"small-file-copy"}},
	{name: "tar -x of 3,000 small files, then sync", needs: []string{"tar", "sync"},
		prep: func(t *testing.T, dir string) error {
			if err := smallTree(dir, false); err != nil {
				return err
			}
			if out, err := exec.Command("tar", "-cf", filepath.Join(dir, "tree.tar"), "-C", dir, "tree").CombinedOutput(); err != nil {
				return fmt.Errorf("tar: %v: %s", err, out)
			}
			os.MkdirAll(filepath.Join(dir, "x"), 0o755)
			return evict(filepath.Join(dir, "tree.tar"))
		},
		argv: func(dir string) []string {
			return []string{"sh", "-c", "tar -xf " + filepath.Join(dir, "tree.tar") + " -C " + filepath.Join(dir, "x") + " && sync"}
		},
		families: []string{"small-file-copy"}},
	{name: "SQLite: 200 inserts, a commit each", needs: []string{"sqlite3"},
		prep: func(t *testing.T, dir string) error {
			return exec.Command("sqlite3", filepath.Join(dir, "db.sqlite"), "create table t(a integer, b text)").Run()
		},
		argv: func(dir string) []string {
			return []string{"sh", "-c", "for i in $(seq 200); do echo \"insert into t values($i, hex(randomblob(200)));\"; done | sqlite3 " + filepath.Join(dir, "db.sqlite")}
		},
		families: []string{"db-commit"}, layer: "block"},
}

// TestRealWork records real programs doing real work, cold, and checks
// that each reads as its family from the layer that carries its I/O. It
// prints the table docs/classify.md shows:
//
//	sudo go test -tags e2e ./internal/cli -run RealWork -v
func TestRealWork(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	var table []string
	for _, w := range realWorks {
		t.Run(w.name, func(t *testing.T) {
			for _, p := range w.needs {
				if !onPath(p) {
					testutil.Unavailable(t, "%s is not installed (.ci/run installs it)", p)
				}
			}
			dir := workdir(t)
			exec.Command("sync").Run() // others' dirty pages are not this work's writeback
			if w.prep != nil {
				if err := w.prep(t, dir); err != nil {
					testutil.Unavailable(t, "cannot prepare %s: %v", w.name, err)
				}
			}
			exec.Command("sync").Run()
			args := []string{"--label", w.name}
			if w.cold {
				args = append(args, "--cold")
			}
			// A program that fails after its I/O (Chromium headless now and then) is still its I/O.
			id, _ := recordAllowingStatus(t, store, append(append(args, "--"), w.argv(dir)...)...)
			r := ioshape(t, nil, "--store", store, "classify", "--json", id)
			if r.code != 0 {
				t.Fatalf("classify: %s", r.stderr)
			}
			var res classify.Result
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatal(err)
			}
			s, top := res.Shape, res.Matches[0]
			verdict := "ok"
			if !slices.Contains(w.families, top.Family) || w.layer != "" && s.Layer != w.layer {
				verdict = "WRONG"
				t.Errorf("%s: best %s (%s, %.2f) from the %s layer (%s); want %v from the %s layer\nshape %+v\nverdict %s",
					w.name, top.ID, top.Family, top.Score, s.Layer, s.LayerReason, w.families, w.layer, s, res.Verdict.Text)
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s | %s, %s, QD %g, %.0f%% reads, %.0f%% idle | %s (%.2f) | %s |",
				w.name, strings.Join(w.families, " or "), s.Layer, s.Access, sizeLabel(s.BlockSizeBytes), s.QueueDepth,
				s.ReadFraction*100, s.IdleFraction*100, top.Family, top.Score, verdict))
		})
	}
	t.Logf("real work, recorded here\n| workload | expected family | layer | shape | best family (score) | |\n|---|---|---|---|---|---|\n%s", strings.Join(table, "\n"))
}

// evict drops files from the page cache, so that reading them reads the
// drive without dropping everyone's cache.
func evict(paths ...string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = fadviseDontNeed(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// makeVideo writes a 440 s, ~1 GB H.264 video: 10 s encoded once, then
// joined 44 times without re-encoding (seconds, not minutes).
func makeVideo(dir string) error {
	seg, list := filepath.Join(dir, "seg.mp4"), filepath.Join(dir, "list.txt")
	if out, err := exec.Command("ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
		"-t", "10", "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-b:v", "60M", "-maxrate", "60M", "-bufsize", "60M", seg).CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, out)
	}
	if err := os.WriteFile(list, []byte(strings.Repeat("file 'seg.mp4'\n", 44)), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("ffmpeg", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i", list, "-c", "copy", filepath.Join(dir, "video.mp4")).CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg concat: %v: %s", err, out)
	}
	return nil
}

func bigFile(dir string) error {
	p := filepath.Join(dir, "big.bin")
	if out, err := exec.Command("fio", "--name=prep", "--filename="+p, "--size=256M", "--rw=write", "--bs=1M", "--direct=1",
		"--refill_buffers", "--output=/dev/null").CombinedOutput(); err != nil {
		return fmt.Errorf("fio: %v: %s", err, out)
	}
	return evict(p)
}

// smallTree writes 3,000 files of 1–32 KiB in 30 directories; cold
// evicts them from the cache.
func smallTree(dir string, cold bool) error {
	rng := rand.New(rand.NewPCG(7, 9))
	sizes := []int{1024, 2048, 4096, 8192, 12288, 16384, 32768}
	buf := make([]byte, 32768)
	var files []string
	for d := range 30 {
		sub := filepath.Join(dir, "tree", fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := range 100 {
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			p := filepath.Join(sub, fmt.Sprintf("f%03d", f))
			if err := os.WriteFile(p, buf[:sizes[rng.IntN(len(sizes))]], 0o644); err != nil {
				return err
			}
			files = append(files, p)
		}
	}
	exec.Command("sync").Run()
	if !cold {
		return nil
	}
	return evict(files...)
}

func fadviseDontNeed(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
