//go:build packaging

package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/parquet-go/parquet-go"
)

// writeFleetTrace writes a generated trace into the store's directory.
func writeFleetTrace(t *testing.T, store, id, host string, day time.Time, n, seed int) {
	t.Helper()
	dir := filepath.Join(store, "traces")
	os.MkdirAll(dir, 0o755)
	if err := testutil.WriteFleetTrace(filepath.Join(dir, id+".iotrace"), id, host, day, n, seed); err != nil {
		t.Fatal(err)
	}
}

type fleetRow map[string]any

// fleetID is the i-th trace ID of a generated fleet (a store's ID
// alphabet, six letters).
func fleetID(i int) string {
	const a = "23456789abcdefghjkmnpqrstuvwxyz"
	return "fq" + string(a[i/len(a)/len(a)%len(a)]) + string(a[i/len(a)%len(a)]) + string(a[i%len(a)]) + "z"
}

func fleetQueries(t *testing.T, engine, root string) []fleetRow {
	t.Helper()
	script := testutil.Repo(t, "testdata", "fleet", "queries.py")
	out, err := exec.Command("python3", script, engine, root).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		if strings.Contains(msg, "No module named") {
			testutil.Unavailable(t, "%s is not installed (.ci/run packaging installs it): %s", engine, msg)
		}
		t.Fatalf("%s: %v\n%s", engine, err, msg)
	}
	var rows []fleetRow
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r fleetRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s printed %q: %v", engine, line, err)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
	return rows
}

// A fleet of traces is one Parquet dataset (host=…/date=…/trace=…) that
// grows as traces are added, and DuckDB and Spark give the same answers to
// the same two fleet questions: a size histogram per process and the p99
// latency per device.
func TestFleetDatasetDuckDBAndSpark(t *testing.T) {
	store, dataset := t.TempDir(), filepath.Join(t.TempDir(), "fleet")
	hosts := []string{"mac-01", "mac-02", "studio/3"} // a host with a slash is escaped in its path
	for i := range 12 {
		day := time.Date(2026, 11, 20+i%3, 9, 0, 0, 0, time.UTC)
		writeFleetTrace(t, store, fleetID(i), hosts[i%3], day, 3000+i*100, i)
	}
	r := ioshape(t, nil, "--store", store, "export", "--parquet", dataset, "--dataset", "--all")
	if r.code != 0 || !strings.Contains(r.stderr, "12 traces added") {
		t.Fatalf("export --dataset --all: exit %d, %s", r.code, r.stderr)
	}
	parts, _ := filepath.Glob(filepath.Join(dataset, "host=*", "date=*", "trace=*", "part-0.parquet"))
	if len(parts) != 12 || !strings.Contains(strings.Join(parts, " "), "host=studio%2F3") {
		t.Fatalf("parts: %v", parts)
	}
	// Each part names its maker with its version.
	f, err := os.Open(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if cb := pf.Metadata().CreatedBy; !strings.HasPrefix(cb, "ioshape version ") || strings.HasSuffix(cb, "version ") {
		t.Errorf("created_by %q: want ioshape and its version", cb)
	}
	f.Close()
	// It grows: one more trace is added, the twelve kept.
	writeFleetTrace(t, store, fleetID(999), "mac-01", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), 2000, 99)
	r = ioshape(t, nil, "--store", store, "export", "--parquet", dataset, "--dataset", "--all")
	if r.code != 0 || !strings.Contains(r.stderr, "1 traces added") || !strings.Contains(r.stderr, "12 already there") {
		t.Fatalf("export --dataset again: exit %d, %s", r.code, r.stderr)
	}
	duck := fleetQueries(t, "duckdb", dataset)
	spark := fleetQueries(t, "spark", dataset)
	if len(duck) == 0 || len(duck) != len(spark) {
		t.Fatalf("DuckDB %d rows, Spark %d", len(duck), len(spark))
	}
	var total float64
	for i := range duck {
		d, s := duck[i], spark[i]
		if dp, ok := d["p99_ns"].(float64); ok {
			sp, _ := s["p99_ns"].(float64)
			if math.Abs(dp-sp) > 1e-6*math.Max(1, math.Abs(dp)) {
				t.Errorf("p99 of %v: DuckDB %v, Spark %v", d, dp, sp)
			}
			delete(d, "p99_ns")
			delete(s, "p99_ns")
		}
		if !reflect.DeepEqual(d, s) {
			t.Errorf("row %d: DuckDB %v, Spark %v", i, d, s)
		}
		if d["query"] == "sizes" {
			total += d["ios"].(float64)
		}
	}
	if total == 0 {
		t.Error("the size histogram is empty")
	}
	// The first I/O's time, as both engines read the time column: the
	// trace's start (9:00 UTC of its day) to the microsecond.
	for _, d := range duck {
		if d["query"] == "first" {
			first := time.UnixMicro(int64(d["first_us"].(float64))).UTC()
			if first.Hour() != 9 || first.Minute() != 0 {
				t.Errorf("%v: first I/O at %v, want 09:00 UTC", d["host"], first)
			}
		}
	}
	t.Logf("%d answer rows agree; %0.f block I/Os in the size histogram", len(duck), total)
}
