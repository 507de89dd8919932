package cli

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/testutil"
)

// duckdb runs a query with DuckDB (its Python package, or its CLI) and
// returns the rows as JSON objects.
func duckdb(t *testing.T, query string) []map[string]any {
	t.Helper()
	var out []byte
	var err error
	if exec.Command("python3", "-c", "import duckdb").Run() == nil {
		script := "import duckdb, json, sys\nr = duckdb.sql(sys.argv[1])\ncols = r.columns\nprint(json.dumps([dict(zip(cols, row)) for row in r.fetchall()], default=str))"
		out, err = exec.Command("python3", "-c", script, query).Output()
	} else if path, lerr := exec.LookPath("duckdb"); lerr == nil {
		out, err = exec.Command(path, "-json", "-c", query).Output()
	} else {
		testutil.Unavailable(t, "DuckDB is not installed (pip install duckdb, as .ci/run does)")
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("duckdb: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	return rows
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		var f float64
		json.Unmarshal([]byte(x), &f)
		return f
	}
	return math.NaN()
}

// A Parquet export of a real capture (the fs_usage sample, both layers;
// the blkparse sample) reads back in DuckDB with the count, bytes and read
// share that show gives, per layer; and docs/export.md's fleet query runs over
// both files at once.
func TestParquetExportReadsBackInDuckDB(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	samples := map[string]string{"launch-mac": "macos_fs_usage_apfs_desktop.log", "launch-leveldb": "blkparse_leveldb_ram0_completions.txt",
		"recorded": ""}
	for label, file := range samples {
		if file == "" {
			// A trace recorded here with bpftrace (cp, cat, dd; both layers).
			file = testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
			if r := ioshape(t, nil, "--store", store, "import", "--label", label, file); r.code == 0 {
				t.Fatal("a trace file imported as a capture")
			}
			label = file
		} else if r := ioshape(t, nil, "--store", store, "import", "--label", label, testutil.Shared(t, "samples", file)); r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
		out := filepath.Join(dir, filepath.Base(label)+".parquet")
		if r := ioshape(t, nil, "--store", store, "export", label, "--parquet", out); r.code != 0 || !strings.Contains(r.stderr, "rows (one per I/O)") {
			t.Fatalf("export: %s", r.stderr)
		}
		s := showJSON(t, store, label)
		rows := duckdb(t, "SELECT layer, count(*) AS n, sum(bytes) AS bytes, sum(CASE WHEN op = 'read' THEN bytes ELSE 0 END) AS read_bytes, "+
			"sum(CASE WHEN op = 'read' THEN 1 ELSE 0 END) AS reads, sum(CASE WHEN op = 'write' THEN 1 ELSE 0 END) AS writes "+
			"FROM '"+out+"' WHERE op IN ('read', 'write') GROUP BY layer ORDER BY layer")
		for _, row := range rows {
			l := s.Block
			if row["layer"] == "syscall" {
				l = s.Syscall
			}
			if l == nil {
				t.Fatalf("%s: DuckDB has a %s layer that show does not", label, row["layer"])
			}
			if num(row["n"]) != float64(l.IOs) || num(row["bytes"]) != float64(l.ReadBytes+l.WriteBytes) || num(row["read_bytes"]) != float64(l.ReadBytes) ||
				num(row["reads"]) != float64(l.Reads) || num(row["writes"]) != float64(l.Writes) {
				t.Errorf("%s %s: DuckDB %v, show ios %d reads %d writes %d bytes %d+%d", label, row["layer"], row, l.IOs, l.Reads, l.Writes, l.ReadBytes, l.WriteBytes)
			}
			if share := num(row["read_bytes"]) / num(row["bytes"]); math.Abs(share-l.ReadFractionByBytes) > 0.0005 {
				t.Errorf("%s %s: read share %.4f, show %.4f", label, row["layer"], share, l.ReadFractionByBytes)
			}
		}
		if len(rows) == 0 || (file == label && len(rows) != 2) {
			t.Errorf("%s: DuckDB read %d layers", label, len(rows))
		}
	}
	// docs/export.md's fleet question, over every export at once: the launch
	// traces that wait longest per block I/O. The blkparse capture has no
	// latency (completions only): its latency is null, so it has no mean.
	rows := duckdb(t, "SELECT host, label, count(*) AS ios, count(latency_ns) AS timed, avg(latency_ns) / 1e3 AS mean_us "+
		"FROM '"+filepath.Join(dir, "launch-*.parquet")+"' WHERE layer = 'block' AND label LIKE 'launch%' GROUP BY host, label ORDER BY mean_us DESC NULLS LAST")
	if len(rows) != 2 || rows[0]["label"] != "launch-mac" || num(rows[0]["ios"]) != 24 || num(rows[0]["timed"]) != 24 ||
		rows[1]["label"] != "launch-leveldb" || num(rows[1]["ios"]) != 840 || num(rows[1]["timed"]) != 0 || rows[1]["mean_us"] != nil {
		t.Errorf("fleet query: %v", rows)
	}
}

// --csv writes the same columns, null as empty.
func TestCSVExport(t *testing.T) {
	dir := t.TempDir()
	if r := ioshape(t, nil, "--store", dir, "import", "--label", "bio", testutil.Shared(t, "samples", "bcc_biosnoop_example.txt")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := ioshape(t, nil, "--store", dir, "export", "bio", "--csv", "-")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 22 || strings.Join(recs[0], ",") != strings.Join(export.Columns, ",") {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	col := func(name string) int {
		for i, c := range recs[0] {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	dispatched := 0
	for _, rec := range recs[1:] {
		if rec[col("dispatch_ns")] != "" {
			dispatched++
		}
		if rec[col("op")] != "write" || rec[col("comm")] == "" || rec[col("latency_ns")] == "" {
			t.Errorf("row %v", rec)
		}
	}
	if dispatched != 6 { // the 6 rows of biosnoop -Q have a queue time
		t.Errorf("%d rows with dispatch_ns, want 6", dispatched)
	}
	if bad := ioshape(t, nil, "--store", dir, "export", "bio", "--csv", "-", "--parquet", filepath.Join(dir, "x")); bad.code != 2 {
		t.Errorf("two outputs: exit %d %s", bad.code, bad.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused export wrote a file")
	}
}
