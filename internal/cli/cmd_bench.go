package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/bench"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/units"
)

type benchOptions struct {
	dir, file, label string
	size             string
	runtime          time.Duration
	json             bool
}

func newBenchCommand(g *globals) *cobra.Command {
	o := &benchOptions{}
	c := &cobra.Command{
		Use:   "bench (--dir DIR | --file FILE)",
		Short: "Measure a drive with fio and keep it as a drive profile for predictions",
		Long: `Bench measures a drive with fio, on a file it creates and removes: reads and writes,
sequential and random, 4 KiB to 1 MiB, 1, 4 and 32 requests in flight, and
CrystalDiskMark's RND4K Q32T16 — direct I/O, one short run each — then random
reads and writes within 1, 16 and 128 MiB and the whole file (a disk's seek
grows with the distance; its read cache serves only reads), then 4 KiB writes each followed by fdatasync (the flush an fsync
waits for, and the write after it; beside the random 4 KiB reads one at a time,
the device's own time from its counters: what waiting costs beyond it), then, as root, the CPU a buffered read from a cold cache costs per MiB there (a slow
drive makes the page cache's copies dearer; predict uses it) and the CPU
reading 500 small files from a cold cache costs beyond a warm one, per
read (the reader runs cold after each wait). It prints a line
per test, then the CrystalDiskMark-style summary, and keeps the result in the
store as a drive profile ('ioshape drives'; 'ioshape predict --drive').`,
		Example: `  sudo ioshape bench --dir /mnt/external --label external
  sudo ioshape bench --file /var/tmp/bench.dat --size 512M --runtime 60s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBench(cmd.Context(), g, o) },
	}
	f := c.Flags()
	f.StringVar(&o.dir, "dir", "", "measure the drive under this directory (a test file is made there and removed)")
	f.StringVar(&o.file, "file", "", "measure on this file (made and removed if it does not exist)")
	f.StringVar(&o.size, "size", "1G", "the test file's size (K, M, G)")
	f.DurationVar(&o.runtime, "runtime", bench.DefaultRuntime, "the whole measurement's time")
	f.StringVarP(&o.label, "label", "l", "", "the profile's name (default: the device's)")
	f.BoolVar(&o.json, "json", false, "print the profile as JSON")
	return c
}

func runBench(ctx context.Context, g *globals, o *benchOptions) error {
	size, err := parseSize(o.size)
	if err != nil {
		return usageError{err}
	}
	if o.runtime <= 0 {
		return usageError{errors.New("--runtime must be positive")}
	}
	st, err := g.store()
	if err != nil {
		return err
	}
	cfg := bench.Config{Dir: o.dir, File: o.file, Size: size, Runtime: o.runtime, Label: o.label,
		Progress: func(done, total int, t bench.Test, p drive.Point) {
			fmt.Fprintf(g.stderr, "%2d/%d  %-22s %9s MB/s %10s IOPS  %s\n", done, total, t, units.Num(p.MBs, 1),
				units.Num(p.IOPS, 0), units.Micros(p.LatUs))
		}}
	if o.dir == "" && o.file == "" || o.dir != "" && o.file != "" {
		return usageError{errors.New("give --dir DIR (a test file is made there and removed) or --file FILE")}
	}
	p, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	path, err := st.SaveDrive(p)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, p)
	}
	writeDriveSummary(g, p)
	fmt.Fprintf(g.stdout, "drive profile %q: %s\n", p.Name, path)
	return nil
}

// writeDriveSummary prints CrystalDiskMark's four tests, read and write,
// as the profile gives them.
func writeDriveSummary(g *globals, p *drive.Spec) {
	fmt.Fprintf(g.stdout, "%-12s %12s %12s\n", "", "read MB/s", "write MB/s")
	for _, t := range []struct {
		name   string
		access string
		size   int64
		depth  float64
	}{{"SEQ1M Q8T1", "seq", 1 << 20, 8}, {"SEQ1M Q1T1", "seq", 1 << 20, 1}, {"RND4K Q32T1", "rand", 4096, 32}, {"RND4K Q1T1", "rand", 4096, 1}} {
		fmt.Fprintf(g.stdout, "%-12s %12s %12s\n", t.name, units.Num(p.MBs("read", t.access, t.size, t.depth), 1), units.Num(p.MBs("write", t.access, t.size, t.depth), 1))
	}
	if sw := p.SyncWrite; sw != nil {
		fmt.Fprintf(g.stdout, "flush %s; a 4 KiB write right after it %s\n", units.Micros(sw.FlushUs), units.Micros(sw.WriteUs))
	}
	if p.WaitUs != nil {
		fmt.Fprintf(g.stdout, "a read waited for costs %s beyond the drive's own time (submission, sleep, wake-up)\n", units.Micros(*p.WaitUs))
	}
	if p.WakeUs != nil {
		fmt.Fprintf(g.stdout, "and %s more of the reader's computation after it (it runs cold)\n", units.Micros(*p.WakeUs))
	}
	if w := p.IdleWake; w != nil && len(w.Points) > 0 {
		last := w.Points[len(w.Points)-1]
		fmt.Fprintf(g.stdout, "this machine starts a process in %s, %s more after %s idle", units.Micros(w.TaskUs), units.Micros(last.ExtraUs), units.Micros(last.IdleUs))
		if w.LongTaskUs > 0 {
			fmt.Fprintf(g.stdout, " (a shell starting three: %s, %s more)", units.Micros(w.LongTaskUs), units.Micros(last.LongExtraUs))
		}
		fmt.Fprintln(g.stdout)
	}
}

// parseSize reads 512M, 1G, 4096.
func parseSize(s string) (int64, error) {
	var n int64
	var unit string
	if _, err := fmt.Sscanf(s, "%d%s", &n, &unit); err != nil {
		if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
			return 0, fmt.Errorf("--size %q: give a size such as 512M or 1G", s)
		}
	}
	mult := map[string]int64{"": 1, "K": 1 << 10, "KB": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GiB": 1 << 30}[unit]
	if mult == 0 || n <= 0 {
		return 0, fmt.Errorf("--size %q: give a size such as 512M or 1G", s)
	}
	return n * mult, nil
}
