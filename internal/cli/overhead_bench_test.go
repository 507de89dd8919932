//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// BenchmarkTracingOverhead measures what recording costs the workload: fio
// 4 KiB random direct reads at iodepth 1 and 16, alternating untraced and
// traced runs (≥5 pairs), reporting the median traced/untraced IOPS ratio
// and the events lost. Needs root, bpftrace and fio. Run:
//
//	sudo go test ./internal/cli -run '^$' -bench TracingOverhead -benchtime 1x
//
// IOSHAPE_OVERHEAD_PAIRS and IOSHAPE_OVERHEAD_RUNTIME change the pair count
// and each fio run's length (default 5 and 3s).
func BenchmarkTracingOverhead(b *testing.B) {
	if os.Geteuid() != 0 || !onPath("bpftrace") || !onPath("fio") {
		b.Skip("needs root, bpftrace and fio")
	}
	pairs := 5
	if v := os.Getenv("IOSHAPE_OVERHEAD_PAIRS"); v != "" {
		fmt.Sscan(v, &pairs)
	}
	runtime := "3s"
	if v := os.Getenv("IOSHAPE_OVERHEAD_RUNTIME"); v != "" {
		runtime = v
	}
	dir, err := os.MkdirTemp("/var/tmp", "ioshape-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "data")
	if out, err := exec.Command("fio", "--name=prep", "--filename="+file, "--size=256M", "--rw=write", "--bs=1M", "--direct=1").CombinedOutput(); err != nil {
		b.Fatalf("fio prep: %v\n%s", err, out)
	}
	store := filepath.Join(dir, "store")
	for i := 0; i < b.N; i++ {
		for _, depth := range []int{1, 16} {
			var ratios, plain, traced []float64
			var lost int64
			for p := 0; p < pairs; p++ {
				args := []string{"--name=job", "--filename=" + file, "--size=256M", "--rw=randread", "--bs=4k",
					"--direct=1", "--ioengine=libaio", fmt.Sprintf("--iodepth=%d", depth), "--runtime=" + runtime,
					"--time_based", "--output-format=json"}
				u := fioIOPS(b, append(args, "--output="+filepath.Join(dir, "plain.json")), nil, filepath.Join(dir, "plain.json"))
				out := filepath.Join(dir, "traced.json")
				rec := []string{"--store", store, "record", "--json", "--", "fio"}
				t := fioIOPS(b, append(args, "--output="+out), rec, out)
				plain, traced = append(plain, u.iops), append(traced, t.iops)
				ratios = append(ratios, t.iops/u.iops)
				lost += t.lost
			}
			r := median(ratios)
			b.Logf("iodepth %2d: untraced %s IOPS, traced %s IOPS (medians of %d); traced/untraced median %.3f (%.1f%% loss); lost events %d",
				depth, fmtIOPS(median(plain)), fmtIOPS(median(traced)), pairs, r, (1-r)*100, lost)
			b.ReportMetric(r, fmt.Sprintf("qd%d-iops-ratio", depth))
			b.ReportMetric(float64(lost), fmt.Sprintf("qd%d-lost-events", depth))
		}
	}
}

type fioRun struct {
	iops float64
	lost int64
}

// fioIOPS runs fio, under `ioshape record` if rec is set, and reads its IOPS.
func fioIOPS(b *testing.B, fioArgs, rec []string, jsonPath string) fioRun {
	b.Helper()
	var c *exec.Cmd
	if rec == nil {
		c = exec.Command("fio", fioArgs...)
	} else {
		c = ioshapeCmd(nil, append(rec, fioArgs...)...)
	}
	out, err := c.Output()
	if err != nil {
		b.Fatalf("%v: %v", c.Args, err)
	}
	var run fioRun
	if rec != nil {
		var res struct {
			Lost int64 `json:"lost_events"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatalf("record --json: %v: %s", err, out)
		}
		run.lost = res.Lost
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		b.Fatal(err)
	}
	// fio may print notes before its JSON.
	if i := strings.IndexByte(string(data), '{'); i > 0 {
		data = data[i:]
	}
	var fio struct {
		Jobs []struct {
			Read struct {
				IOPS float64 `json:"iops"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &fio); err != nil || len(fio.Jobs) == 0 {
		b.Fatalf("fio json: %v", err)
	}
	run.iops = fio.Jobs[0].Read.IOPS
	return run
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fmtIOPS(v float64) string { return fmt.Sprintf("%.0f", v) }
