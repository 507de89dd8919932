package published

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// fio's JSON output (--output-format=json): a job a figure, its shape from
// the job's options (or the global ones), its rate from the direction it
// did. Jobs reported apart (no group_reporting) are summed by name.
type fioOutput struct {
	Version string            `json:"fio version"`
	Time    string            `json:"time"`
	Global  map[string]string `json:"global options"`
	Jobs    []fioJob          `json:"jobs"`
}

type fioJob struct {
	Name    string            `json:"jobname"`
	Group   int               `json:"groupid"`
	Error   int               `json:"error"`
	Options map[string]string `json:"job options"`
	Read    fioDirection      `json:"read"`
	Write   fioDirection      `json:"write"`
}

type fioDirection struct {
	IOBytes int64   `json:"io_bytes"`
	BwBytes float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
	Lat     struct {
		Mean float64 `json:"mean"`
	} `json:"lat_ns"`
}

func parseFio(text []byte) (*drive.Provenance, error) {
	start := bytes.IndexByte(text, '{')
	var out fioOutput
	dec := json.NewDecoder(bytes.NewReader(text[start:]))
	if err := dec.Decode(&out); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, syntaxf(lineAt(text, start+int(se.Offset)), "fio JSON: %v", se)
		case errors.As(err, &te):
			return nil, syntaxf(lineAt(text, start+int(te.Offset)), "fio JSON: %s is %s, expected %s", te.Field, te.Value, te.Type)
		}
		return nil, syntaxf(lineAt(text, len(text)), "fio JSON: %v", err)
	}
	p := &drive.Provenance{Tool: "fio", Version: strings.TrimPrefix(out.Version, "fio-"), Date: out.Time}
	opt := func(j fioJob, key string) string {
		if v, ok := j.Options[key]; ok {
			return v
		}
		return out.Global[key]
	}
	type key struct {
		name  string
		group int
	}
	sums := map[key]*drive.Test{}
	var order []key
	jobLine := jobLines(text)
	// Without group_reporting, each of a job's numjobs copies is reported
	// apart under its name; with it, once for all.
	entries := map[key]int{}
	for _, j := range out.Jobs {
		entries[key{j.Name, j.Group}]++
	}
	for i, j := range out.Jobs {
		if j.Name == "" {
			continue // fio's summary of a group
		}
		if j.Error != 0 {
			return nil, syntaxf(jobLine(i), "fio job %q ended with error %d: its figures are not a drive's", j.Name, j.Error)
		}
		rw := strings.ToLower(cmpOr(opt(j, "rw"), opt(j, "readwrite"), "read"))
		var op, access string
		switch rw {
		case "read", "write":
			op, access = rw, "seq"
		case "randread", "randwrite":
			op, access = strings.TrimPrefix(rw, "rand"), "rand"
		default:
			continue // a mix (rw, randrw, trim) is no one direction's figure
		}
		d := j.Read
		if op == "write" {
			d = j.Write
		}
		bs, err := fioSize(cmpOr(opt(j, "bs"), opt(j, "blocksize"), "4k"), op)
		if err != nil {
			return nil, syntaxf(jobLine(i), "fio job %q: bs %v", j.Name, err)
		}
		depth, threads := 1, 1
		if v := opt(j, "iodepth"); v != "" {
			if depth, err = strconv.Atoi(v); err != nil || depth < 1 {
				return nil, syntaxf(jobLine(i), "fio job %q: iodepth %q, expected a number of at least 1", j.Name, v)
			}
		}
		if v := opt(j, "numjobs"); v != "" {
			if threads, err = strconv.Atoi(v); err != nil || threads < 1 {
				return nil, syntaxf(jobLine(i), "fio job %q: numjobs %q, expected a number of at least 1", j.Name, v)
			}
		}
		grouped := entries[key{j.Name, j.Group}] == 1
		if !(d.BwBytes > 0) {
			continue // the job did nothing in that direction
		}
		k := key{j.Name, j.Group}
		t := sums[k]
		if t == nil {
			t = &drive.Test{Op: op, Access: access, SizeBytes: bs, Depth: depth, Threads: threads, Line: jobLine(i)}
			if !grouped {
				t.Threads = 0
			}
			sums[k] = t
			order = append(order, k)
			if s := opt(j, "size"); s != "" && p.TestSize == "" {
				p.TestSize = s
				p.TestBytes, _ = fioSize(s, "read")
			}
		}
		if !grouped {
			t.Threads++
		}
		n := float64(t.Threads)
		if !grouped {
			t.LatUs = (t.LatUs*(n-1) + d.Lat.Mean/1e3) / n
		} else {
			t.LatUs = d.Lat.Mean / 1e3
		}
		t.MBs += d.BwBytes / 1e6
	}
	sort.SliceStable(order, func(a, b int) bool { return sums[order[a]].Line < sums[order[b]].Line })
	for _, k := range order {
		p.Tests = append(p.Tests, *sums[k])
	}
	return p, nil
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// fioSize reads fio's sizes: "4k", "1M", "128KiB", "4096", and a bs of
// "4k,64k" (reads, writes).
func fioSize(s, op string) (int64, error) {
	if r, w, ok := strings.Cut(s, ","); ok {
		s = r
		if op == "write" && w != "" {
			s = w
		}
	}
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, "b"
	if i >= 0 {
		num, unit = s[:i], strings.TrimSuffix(strings.ToLower(s[i:]), "b")
		if unit == "" {
			unit = "b"
		}
		unit = strings.TrimSuffix(unit, "i")
	}
	b, ok := sizeBytes(num, unit)
	if !ok {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return b, nil
}

// lineAt is the line holding byte offset off.
func lineAt(text []byte, off int) int {
	return bytes.Count(text[:min(max(off, 0), len(text))], []byte("\n")) + 1
}

// jobLines finds where each job's entry begins, for errors and figures.
func jobLines(text []byte) func(i int) int {
	var at []int
	rest, base := text, 0
	for {
		k := bytes.Index(rest, []byte(`"jobname"`))
		if k < 0 {
			break
		}
		at = append(at, lineAt(text, base+k))
		base += k + 1
		rest = text[base:]
	}
	return func(i int) int {
		if i < len(at) {
			return at[i]
		}
		return 1
	}
}
