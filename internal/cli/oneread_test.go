package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Every command that reads a trace opens it once and reads it once — the
// report with a prediction, a comparison with one, included — except an
// export to a fio job file, which needs the phases before it can profile
// them (two reads of the one open file). Counted by the trace reader
// itself, in process.
func TestOneOpenOneRead(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	dir := t.TempDir()
	coarse, err := drive.Coarse("test drive", []float64{3000, 1500, 800, 50}, []float64{2800, 1400, 700, 120})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(coarse)
	profile := filepath.Join(dir, "drive.json")
	if err := os.WriteFile(profile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args   []string
		opens  int
		passes int // per open
	}{
		{[]string{"show", trace}, 1, 1},
		{[]string{"show", "--json", trace}, 1, 1},
		{[]string{"classify", trace}, 1, 1},
		{[]string{"report", "-o", out + ".html", trace}, 1, 1},
		{[]string{"report", "--json", "--predict-on", profile, trace}, 1, 1},
		{[]string{"predict", "--drive", profile, trace}, 1, 1},
		{[]string{"compare", "--predict-on", profile, trace, trace}, 2, 1},
		{[]string{"events", "--limit", "3", trace}, 1, 1},
		{[]string{"export", "--parquet", out + ".parquet", trace}, 1, 1},
		{[]string{"export", "--fio-iolog", out + ".iolog", trace}, 1, 1},
		{[]string{"export", "--fio-job", out + ".fio", trace}, 1, 2},
	} {
		var mu sync.Mutex
		var got []tracefile.Access
		tracefile.Observe(func(a tracefile.Access) {
			mu.Lock()
			got = append(got, a)
			mu.Unlock()
		})
		var stdout, stderr bytes.Buffer
		args := append([]string{"--store", filepath.Join(dir, "store")}, c.args...)
		status := Main(args, nil, &stdout, &stderr)
		tracefile.Observe(nil)
		if status != 0 {
			t.Errorf("%v: exit %d: %s", c.args, status, stderr.String())
			continue
		}
		if len(got) != c.opens {
			t.Errorf("%v: opened the trace %d times, want %d: %+v", c.args, len(got), c.opens, got)
			continue
		}
		for _, a := range got {
			if a.Passes != c.passes {
				t.Errorf("%v: read the trace %d times, want %d", c.args, a.Passes, c.passes)
			}
			// Reading stops at the footer: once through is under the file's
			// size, twice is over it.
			if a.Read > int64(c.passes)*a.Size || c.args[0] != "events" && a.Read <= int64(c.passes-1)*a.Size {
				t.Errorf("%v: read %d bytes of %d in %d passes", c.args, a.Read, a.Size, c.passes)
			}
		}
	}
}
