package classify

import (
	"testing"

	"github.com/ioshape/ioshape/internal/event"
)

// summaryRow is one second of one program's reads, both layers alike: n
// I/Os of size bytes at depth, each taking lat ns, sequential or not.
func summaryRows(second int64, comm string, pid uint32, n, size, depth, lat int64, sequential bool) []event.Summary {
	var rows []event.Summary
	for _, layer := range []event.Layer{event.Syscall, event.Block} {
		r := event.Summary{Start: second * 1e9, Layer: layer, Op: event.Read, Dev: event.Dev{Major: 254}, Pid: pid, Comm: comm,
			First: second*1e9 + 1, Last: (second + 1) * 1e9, Count: n, Bytes: n * size, SizeSum: n * size, LatencyNs: n * lat,
			BusyNs: 1e9, Located: n,
			Size: []event.HistCount{{int64(event.HistBucket(size)), n}}, Lat: []event.HistCount{{int64(event.HistBucket(lat)), n}},
			Depth: []event.HistCount{{int64(event.HistBucket(depth)), n}}}
		if layer == event.Syscall {
			r.Call = event.CallPread64
		}
		if sequential {
			r.Sequential = n
		}
		rows = append(rows, r)
	}
	return rows
}

func summarySlice(rows []event.Summary) SummarySource {
	return func(emit func(*event.Summary)) error {
		for i := range rows {
			r := rows[i] // emit may keep nothing
			emit(&r)
		}
		return nil
	}
}

// A summary trace is ranked, split into phases and a mixture, and its
// programs told apart, as a trace of events is.
func TestClassifySummary(t *testing.T) {
	var rows []event.Summary
	for s := int64(0); s < 8; s++ {
		rows = append(rows, summaryRows(s, "launcher", 10, 5000, 4096, 1, 190_000, false)...)
	}
	for s := int64(8); s < 16; s++ {
		rows = append(rows, summaryRows(s, "copier", 20, 2000, 1<<20, 8, 4_000_000, true)...)
	}
	res, err := ClassifySummary(summarySlice(rows), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 2 || res.Phases[0].Best.Family != "rnd4k-q1" || res.Phases[1].Best.Family != "seq1m-q8" {
		t.Fatalf("phases: %+v", res.Phases)
	}
	if res.Phases[0].EndS > res.Phases[1].StartS+1e-9 || res.Phases[1].EndS < 15 {
		t.Errorf("phase times: %+v", res.Phases)
	}
	shares := map[string]Share{}
	for _, s := range res.Mixture {
		shares[s.Family] = s
	}
	if shares["seq1m-q8"].BytesShare < 0.95 || shares["rnd4k-q1"].TimeShare < 0.4 {
		t.Errorf("mixture: %+v", res.Mixture)
	}
	actors := map[string]Actor{}
	for _, a := range res.Actors {
		actors[a.Name] = a
	}
	if actors["launcher"].Best.Family != "rnd4k-q1" || actors["copier"].Best.Family != "seq1m-q8" || actors["copier"].StartS < 7.9 {
		t.Errorf("actors: %+v", res.Actors)
	}
	if res.Verdict.Text == "" || len(res.Matches) == 0 {
		t.Errorf("no verdict or matches: %+v", res)
	}
}

func TestClassifySummaryEmpty(t *testing.T) {
	if _, err := ClassifySummary(summarySlice(nil), Options{}); err != ErrNoIO {
		t.Errorf("an empty summary: %v, want ErrNoIO", err)
	}
}
