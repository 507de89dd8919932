//go:build linux && e2e

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
// 4 KiB random direct reads at iodepth 1 and 16, run untraced, under the
// native backend and under bpftrace, in rounds (≥5; the order rotates each
// round so neither backend always follows the untraced run). It reports,
// per backend, the median of each round's traced/untraced IOPS ratio, and
// the events lost. Needs root, bpftrace, kernel BTF and fio. Run:
//
//	sudo go test ./internal/cli -run '^$' -bench TracingOverhead -benchtime 1x
//
// IOSHAPE_OVERHEAD_PAIRS and IOSHAPE_OVERHEAD_RUNTIME change the round
// count and each fio run's length (default 5 and 3s).
func BenchmarkTracingOverhead(b *testing.B) {
	if os.Geteuid() != 0 || !onPath("bpftrace") || !onPath("fio") {
		b.Skip("needs root, bpftrace and fio")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		b.Skip("needs kernel BTF for the native backend")
	}
	rounds := 5
	if v := os.Getenv("IOSHAPE_OVERHEAD_PAIRS"); v != "" {
		fmt.Sscan(v, &rounds)
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
	modes := []string{"untraced", "native", "bpftrace"}
	for i := 0; i < b.N; i++ {
		for _, depth := range []int{1, 16} {
			iops := map[string][]float64{}
			ratios := map[string][]float64{}
			lost := map[string]int64{}
			for r := 0; r < rounds; r++ {
				args := []string{"--name=job", "--filename=" + file, "--size=256M", "--rw=randread", "--bs=4k",
					"--direct=1", "--ioengine=libaio", fmt.Sprintf("--iodepth=%d", depth), "--runtime=" + runtime,
					"--time_based", "--output-format=json"}
				got := map[string]fioRun{}
				for k := range modes {
					mode := modes[(k+r)%len(modes)]
					out := filepath.Join(dir, mode+".json")
					var rec []string
					if mode != "untraced" {
						rec = []string{"--store", store, "record", "--backend", mode, "--json", "--", "fio"}
					}
					got[mode] = fioIOPS(b, append(args, "--output="+out), rec, out)
				}
				for _, mode := range modes {
					iops[mode] = append(iops[mode], got[mode].iops)
					ratios[mode] = append(ratios[mode], got[mode].iops/got["untraced"].iops)
					lost[mode] += got[mode].lost
				}
			}
			for _, mode := range modes[1:] {
				r := median(ratios[mode])
				b.Logf("iodepth %2d, %-8s: untraced %s IOPS, traced %s IOPS (medians of %d); traced/untraced median %.3f (%.1f%% loss); lost events %d",
					depth, mode, fmtIOPS(median(iops["untraced"])), fmtIOPS(median(iops[mode])), rounds, r, (1-r)*100, lost[mode])
				b.ReportMetric(r, fmt.Sprintf("qd%d-%s-iops-ratio", depth, mode))
				b.ReportMetric(float64(lost[mode]), fmt.Sprintf("qd%d-%s-lost", depth, mode))
			}
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
