//go:build linux && e2e

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/tracer"
)

// BenchmarkTracingOverhead measures what tracing costs the workload and
// how much of it each tool records, ioshape beside the peers that run
// here: fio 4 KiB random direct reads (libaio at iodepth 1 and 16, and
// psync with 4 jobs), run untraced and under each tool in rounds whose
// order rotates each round. Per tool and workload it prints the median of
// the rounds' traced ÷ untraced IOPS (and their spread), completeness
// (fio's reads the tool recorded, attributed to fio, ÷ fio's own count;
// for ioshape also what it counted unfinished) and the events it said it
// lost; then the native programs' own cost per run (bpf_stats). Needs
// root, fio, bpftrace, kernel BTF; perf is a peer where installed. Run:
//
//	sudo go test -tags e2e ./internal/cli -run '^$' -bench TracingOverhead -benchtime 1x -timeout 60m
//
// IOSHAPE_OVERHEAD_ROUNDS and IOSHAPE_OVERHEAD_RUNTIME change the rounds
// per workload and each fio run's length (default 7 and 3s);
// IOSHAPE_OVERHEAD_TOOLS=summary,command runs only the tools whose names
// hold one of the words (and untraced).
func BenchmarkTracingOverhead(b *testing.B) {
	if os.Geteuid() != 0 || !onPath("bpftrace") || !onPath("fio") {
		b.Skip("needs root, bpftrace and fio")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		b.Skip("needs kernel BTF for the native backend")
	}
	rounds := 7
	if v := os.Getenv("IOSHAPE_OVERHEAD_ROUNDS"); v != "" {
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
	// The kernel keeps per-program run time only while asked to.
	if old, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled"); err == nil {
		os.WriteFile("/proc/sys/kernel/bpf_stats_enabled", []byte("1"), 0)
		defer os.WriteFile("/proc/sys/kernel/bpf_stats_enabled", old, 0)
	}
	tools := overheadTools(dir)
	if only := os.Getenv("IOSHAPE_OVERHEAD_TOOLS"); only != "" {
		// untraced, and the tools whose names hold one of the words.
		kept := tools[:1]
		for _, t := range tools[1:] {
			for _, w := range strings.Split(only, ",") {
				if w != "" && strings.Contains(t.name, w) {
					kept = append(kept, t)
					break
				}
			}
		}
		tools = kept
	}
	workloads := []struct{ name, engine, depth, jobs string }{
		{"iodepth 1", "libaio", "1", "1"}, {"iodepth 16", "libaio", "16", "1"}, {"4 psync jobs", "psync", "1", "4"},
	}
	type cell struct {
		ratios        []float64
		recorded, did int64
		unfinished    int64
		lost          int64
	}
	results := map[string]map[string]*cell{}
	costs := map[string]map[string][]float64{} // tool, program: ns per run
	for i := 0; i < b.N; i++ {
		for _, w := range workloads {
			results[w.name] = map[string]*cell{}
			for _, t := range tools {
				results[w.name][t.name] = &cell{}
			}
			for r := 0; r < rounds; r++ {
				fioArgs := []string{"--name=job", "--filename=" + file, "--size=256M", "--rw=randread", "--bs=4k",
					"--direct=1", "--ioengine=" + w.engine, "--iodepth=" + w.depth, "--numjobs=" + w.jobs,
					"--runtime=" + runtime, "--time_based", "--output-format=json"}
				got := map[string]toolRun{}
				for k := range tools {
					t := tools[(k+r)%len(tools)]
					out := filepath.Join(dir, "fio.json")
					got[t.name] = t.run(b, append(fioArgs, "--output="+out), out)
				}
				for _, t := range tools {
					c := results[w.name][t.name]
					run := got[t.name]
					c.ratios = append(c.ratios, run.iops/got["untraced"].iops)
					c.recorded += run.recorded
					c.did += run.did
					c.unfinished += run.unfinished
					c.lost += run.lost
					if w.name == "iodepth 16" && len(run.programs) > 0 {
						if costs[t.name] == nil {
							costs[t.name] = map[string][]float64{}
						}
						for _, p := range run.programs {
							costs[t.name][p.Name] = append(costs[t.name][p.Name], p.NsPerRun)
						}
					}
				}
			}
		}
	}
	fmt.Printf("\n| tool | layers | %s | %s | %s | completeness (recorded ÷ fio's reads), lost |\n|---|---|---|---|---|---|\n",
		workloads[0].name, workloads[1].name, workloads[2].name)
	for _, t := range tools[1:] {
		fmt.Printf("| %s | %s |", t.name, t.layers)
		var comp []string
		for _, w := range workloads {
			c := results[w.name][t.name]
			lo, hi := minMax(c.ratios)
			fmt.Printf(" %.2f (%.2f–%.2f) |", median(c.ratios), lo, hi)
			b.ReportMetric(median(c.ratios), strings.ReplaceAll(w.name+"-"+t.name+"-ratio", " ", "_"))
			if c.did > 0 && t.completeness {
				s := fmt.Sprintf("%s %.1f %%", w.name, 100*float64(c.recorded)/float64(c.did))
				if c.unfinished > 0 {
					s += fmt.Sprintf(" + %.2f %% unfinished", 100*float64(c.unfinished)/float64(c.did))
				}
				comp = append(comp, s)
			}
			if c.lost > 0 {
				comp = append(comp, fmt.Sprintf("%s %d lost", w.name, c.lost))
			}
		}
		fmt.Printf(" %s |\n", strings.Join(comp, "; "))
	}
	fmt.Printf("\n(medians of %d rounds of %s, spread min–max; traced ÷ untraced IOPS of the same round)\n", rounds, runtime)
	for _, t := range tools {
		byProgram := costs[t.name]
		if len(byProgram) == 0 {
			continue
		}
		fmt.Printf("\n%s, programs at iodepth 16 (bpf_stats, median ns per run over the rounds):", t.name)
		names := make([]string, 0, len(byProgram))
		for n := range byProgram {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf(" %s %.0f;", n, median(byProgram[n]))
		}
		fmt.Println()
	}
}

// overheadTool is one way of running the workload: untraced, under
// ioshape, or under a peer tool.
type overheadTool struct {
	name, layers string
	completeness bool // whether its output says which process issued each I/O
	run          func(b *testing.B, fioArgs []string, fioJSON string) toolRun
}

type toolRun struct {
	iops             float64
	did, recorded    int64
	unfinished, lost int64
	programs         []tracer.ProgramCost
}

func overheadTools(dir string) []overheadTool {
	fioPath, _ := exec.LookPath("fio")
	store := filepath.Join(dir, "store")
	ioshapeTool := func(name, layers string, args ...string) overheadTool {
		return overheadTool{name: name, layers: layers, completeness: true, run: func(b *testing.B, fioArgs []string, fioJSON string) toolRun {
			c := ioshapeCmd(nil, append(append([]string{"--store", store, "record", "--json"}, args...), append([]string{"--", fioPath}, fioArgs...)...)...)
			out, err := c.Output()
			if err != nil {
				b.Fatalf("%v: %v", c.Args, err)
			}
			var res struct {
				Path       string               `json:"path"`
				Lost       int64                `json:"lost_events"`
				Unfinished int64                `json:"unfinished_requests"`
				Programs   []tracer.ProgramCost `json:"programs"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				b.Fatalf("record --json: %v: %s", err, out)
			}
			run := readFioRun(b, fioJSON)
			run.lost, run.unfinished, run.programs = res.Lost, res.Unfinished, res.Programs
			run.recorded = fioBlockIOs(b, res.Path)
			os.Remove(res.Path)
			return run
		}}
	}
	tools := []overheadTool{
		{name: "untraced", run: func(b *testing.B, fioArgs []string, fioJSON string) toolRun {
			if out, err := exec.Command(fioPath, fioArgs...).CombinedOutput(); err != nil {
				b.Fatalf("fio: %v %s", err, out)
			}
			return readFioRun(b, fioJSON)
		}},
		ioshapeTool("ioshape native, command", "both", "--backend", "native"),
		ioshapeTool("ioshape native, --layers block", "block", "--backend", "native", "--layers", "block"),
		ioshapeTool("ioshape native, --summary", "both (histograms)", "--backend", "native", "--summary"),
		{name: "ioshape native, --all", layers: "both", completeness: true, run: func(b *testing.B, fioArgs []string, fioJSON string) toolRun {
			// The whole system: record runs beside fio and is stopped by
			// Ctrl-C (SIGINT) once fio is done.
			c := ioshapeCmd(nil, "--store", store, "record", "--json", "--backend", "native", "--all")
			var stdout bytes.Buffer
			var stderr lockedBuffer
			c.Stdout, c.Stderr = &stdout, &stderr
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "tracing started"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					c.Process.Kill()
					b.Fatalf("record --all did not start: %s", stderr.String())
				}
			}
			if out, err := exec.Command(fioPath, fioArgs...).CombinedOutput(); err != nil {
				b.Fatalf("fio: %v %s", err, out)
			}
			c.Process.Signal(os.Interrupt)
			c.Wait()
			var res struct {
				Path       string `json:"path"`
				Lost       int64  `json:"lost_events"`
				Unfinished int64  `json:"unfinished_requests"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				b.Fatalf("record --all --json: %v: %s %s", err, stdout.String(), stderr.String())
			}
			run := readFioRun(b, fioJSON)
			run.lost, run.unfinished = res.Lost, res.Unfinished
			run.recorded = fioBlockIOs(b, res.Path)
			os.Remove(res.Path)
			return run
		}},
		ioshapeTool("ioshape --backend bpftrace", "both (block after degrading)", "--backend", "bpftrace"),
		{name: "bpftrace biosnoop (tracepoints)", layers: "block", completeness: true, run: func(b *testing.B, fioArgs []string, fioJSON string) toolRun {
			script, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "peers", "biosnoop-tp.bt"))
			c := exec.Command("bpftrace", script, "-c", strings.Join(append([]string{fioPath}, fioArgs...), " "))
			out, _ := c.CombinedOutput()
			run := readFioRun(b, fioJSON)
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Fields(line)
				if len(f) == 4 && f[1] == "fio" {
					run.recorded++
				}
				if len(f) >= 2 && f[0] == "Lost" {
					var n int64
					fmt.Sscan(f[1], &n)
					run.lost += n
				}
			}
			return run
		}},
	}
	if onPath("perf") {
		tools = append(tools, overheadTool{name: "perf record (block_rq_issue, block_rq_complete)", layers: "block", completeness: true,
			run: func(b *testing.B, fioArgs []string, fioJSON string) toolRun {
				data := filepath.Join(dir, "perf.data")
				c := exec.Command("perf", append([]string{"record", "-q", "-o", data, "-e", "block:block_rq_issue", "-e", "block:block_rq_complete", "-a", "--", fioPath}, fioArgs...)...)
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("perf record: %v %s", err, out)
				}
				run := readFioRun(b, fioJSON)
				// perf keeps every issue but drops completions silently:
				// completeness counts the issues of fio's requests.
				script, err := exec.Command("perf", "script", "-i", data, "-F", "comm,event").Output()
				if err != nil {
					b.Fatalf("perf script: %v", err)
				}
				for _, line := range strings.Split(string(script), "\n") {
					if f := strings.Fields(line); len(f) == 2 && f[0] == "fio" && strings.HasPrefix(f[1], "block:block_rq_issue") {
						run.recorded++
					}
				}
				os.Remove(data)
				return run
			}})
	}
	return tools
}

// readFioRun reads fio's JSON report: its IOPS and its reads.
func readFioRun(b *testing.B, jsonPath string) toolRun {
	b.Helper()
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
				IOPS     float64 `json:"iops"`
				TotalIOs int64   `json:"total_ios"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &fio); err != nil || len(fio.Jobs) == 0 {
		b.Fatalf("fio json: %v", err)
	}
	var run toolRun
	for _, j := range fio.Jobs {
		run.iops += j.Read.IOPS
		run.did += j.Read.TotalIOs
	}
	return run
}

// fioBlockIOs is how many block requests a trace attributes to fio.
func fioBlockIOs(b *testing.B, path string) int64 {
	b.Helper()
	out, err := ioshapeCmd(nil, "show", "--json", path).Output()
	if err != nil {
		b.Fatalf("show %s: %v", path, err)
	}
	var s struct {
		Processes []struct {
			Comm     string `json:"comm"`
			BlockIOs int64  `json:"block_ios"`
		} `json:"processes"`
	}
	json.Unmarshal(out, &s)
	var n int64
	for _, p := range s.Processes {
		if p.Comm == "fio" {
			n += p.BlockIOs
		}
	}
	return n
}

func minMax(v []float64) (lo, hi float64) {
	for i, x := range v {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
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
