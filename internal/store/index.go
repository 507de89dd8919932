package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ioshape/ioshape/internal/tracefile"
)

// The index. Listing a store must not open every trace (thousands of them)
// nor analyse any: the store keeps one summary line per trace in
// index.tsv, appended when a trace is finished or imported, and a later
// line for the same ID (its best match, once known) supersedes earlier
// ones. Lists read it backwards — the most recently added first — holding
// a set of the IDs seen, never the summaries; the traces directory is read
// too, in batches, for traces still recording and for any finished trace
// the index lacks (copied in by hand, or finished by an older ioshape),
// which is added then. A trace whose file is gone is left out.

// Summary is a trace as lists show it.
type Summary struct {
	ID         string    `json:"id"`
	Label      string    `json:"label,omitempty"`
	Path       string    `json:"path"`
	Start      time.Time `json:"start,omitzero"`
	DurationS  float64   `json:"duration_s"`
	Target     string    `json:"target"`
	Events     int64     `json:"events"`
	LostEvents int64     `json:"lost_events"`
	Status     string    `json:"status"`
	BestMatch  string    `json:"best_match,omitempty"`
	Score      float64   `json:"best_match_score,omitempty"`
}

func (s *Store) indexPath() string { return filepath.Join(s.Dir, "index.tsv") }

// SummaryOf describes a trace from its header and footer (partial: it has
// no footer yet; err: it could not be read).
func SummaryOf(id, path string, m tracefile.Meta, partial bool, err error) Summary {
	sm := Summary{ID: id, Path: path, Status: "ok"}
	if err != nil {
		sm.Status = "unreadable: " + err.Error()
		return sm
	}
	h := m.Header
	sm.Label = h.Label
	sm.Start, _ = m.Start()
	sm.Target = h.Target.Mode
	switch {
	case len(h.Target.Command) > 0:
		// One line: a shell script given as an argument may span several.
		sm.Target = strings.Join(strings.Fields(strings.Join(h.Target.Command, " ")), " ")
	case len(h.Target.Names) > 0:
		sm.Target = "name " + strings.Join(h.Target.Names, ",")
	case len(h.Target.Pids) > 0:
		sm.Target = fmt.Sprintf("pid %v", h.Target.Pids)
	}
	if f := m.Footer; f != nil {
		sm.DurationS = float64(f.DurationNs) / 1e9
		sm.Events = f.Events
		sm.LostEvents = f.LostEvents + f.MapOverflows + f.ProbeMisses + f.ProbeErrors
		if h.Target.Summary {
			// Its I/Os, each counted in the kernel's histograms.
			sm.Events = f.SummarizedIOs
			sm.Status = "summary"
		}
		if sm.LostEvents > 0 {
			sm.Status = strings.TrimPrefix(sm.Status+", lost events", ", ")
		}
	} else if partial {
		sm.Status = "recording or cut short"
	} else {
		sm.Status = "incomplete: no footer (the file was cut short)"
	}
	return sm
}

// partialSummary describes an unfinished trace file: being written now
// (by a recording or an import, whatever its header says yet), or cut
// short, with the events it holds.
func partialSummary(id, path string) Summary {
	if tracefile.InProgress(path) {
		m, _ := tracefile.ReadMeta(path)
		sm := SummaryOf(id, path, m, true, nil)
		sm.Status = "recording"
		if m.Header.Target.Mode == "import" {
			sm.Status = "importing"
		}
		return sm
	}
	// Cut short: its header and the events it holds, in one read.
	m, n, err := tracefile.CountEvents(path)
	if m.Header.FormatVersion == 0 { // not even its header could be read
		return SummaryOf(id, path, m, true, err)
	}
	sm := SummaryOf(id, path, m, true, nil)
	sm.Events = n
	sm.Status = fmt.Sprintf("cut short: the recorder stopped before finishing; %d events readable", n)
	if err != nil {
		sm.Status += " (" + err.Error() + ")"
	}
	return sm
}

// IDOf is the ID of a finished trace file in this store.
func (s *Store) IDOf(path string) (string, bool) {
	dir, name := filepath.Split(path)
	id, ok := strings.CutSuffix(name, Ext)
	if !ok || !ValidID(id) {
		return "", false
	}
	a, err1 := filepath.Abs(dir)
	b, err2 := filepath.Abs(s.tracesDir())
	return id, err1 == nil && err2 == nil && filepath.Clean(a) == filepath.Clean(b)
}

// Add puts a finished trace in the index, from its header and footer.
func (s *Store) Add(id string) error {
	path := filepath.Join(s.tracesDir(), id+Ext)
	if !isRegular(path) {
		return fmt.Errorf("%s is not a trace file", path)
	}
	m, err := tracefile.ReadMeta(path)
	return s.appendSummary(SummaryOf(id, path, m, false, err))
}

// SetBestMatch records a trace's best match, once it has been classified,
// for the lists to show without classifying it again.
func (s *Store) SetBestMatch(id string, m tracefile.Meta, name string, score float64) error {
	if !ValidID(id) {
		return nil // a file outside the store
	}
	path := filepath.Join(s.tracesDir(), id+Ext)
	sm := SummaryOf(id, path, m, false, nil)
	sm.BestMatch, sm.Score = name, score
	if last, ok := s.indexed(id); ok && bytes.Equal(indexLine(last), indexLine(sm)) {
		return nil // every view of a trace would add a line
	}
	return s.appendSummary(sm)
}

// Index lines are tab-separated (a list reads thousands of them: JSON
// would be the bulk of its time), led by the line format's version:
//
//	1 ID LABEL START_UNIX_NS DURATION_S TARGET EVENTS LOST STATUS BEST SCORE
//
// with \, tab, newline and CR escaped in the strings. The path is not
// stored: it follows from the ID, wherever the store is.
var (
	escaper   = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)
	unescaper = strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n", `\r`, "\r")
)

func indexLine(sm Summary) []byte {
	start := int64(0) // not known
	if !sm.Start.IsZero() {
		start = sm.Start.UnixNano()
	}
	f := []string{"1", sm.ID, escaper.Replace(sm.Label), strconv.FormatInt(start, 10),
		strconv.FormatFloat(sm.DurationS, 'g', -1, 64), escaper.Replace(sm.Target), strconv.FormatInt(sm.Events, 10),
		strconv.FormatInt(sm.LostEvents, 10), escaper.Replace(sm.Status), escaper.Replace(sm.BestMatch),
		strconv.FormatFloat(sm.Score, 'g', -1, 64)}
	return []byte(strings.Join(f, "\t") + "\n")
}

// parseIndexLine reads a line; ok is false for one it cannot (torn by a
// crash, or of a newer format).
func parseIndexLine(line []byte) (sm Summary, ok bool) {
	f := strings.Split(string(line), "\t")
	if len(f) != 11 || f[0] != "1" || !ValidID(f[1]) {
		return sm, false
	}
	un := func(s string) string {
		if strings.IndexByte(s, '\\') < 0 {
			return s
		}
		return unescaper.Replace(s)
	}
	start, err1 := strconv.ParseInt(f[3], 10, 64)
	dur, err2 := strconv.ParseFloat(f[4], 64)
	events, err3 := strconv.ParseInt(f[6], 10, 64)
	lost, err4 := strconv.ParseInt(f[7], 10, 64)
	score, err5 := strconv.ParseFloat(f[10], 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return sm, false
	}
	sm = Summary{ID: f[1], Label: un(f[2]), DurationS: dur, Target: un(f[5]),
		Events: events, LostEvents: lost, Status: un(f[8]), BestMatch: un(f[9]), Score: score}
	if start != 0 {
		sm.Start = time.Unix(0, start).UTC()
	}
	return sm, true
}

func (s *Store) appendSummary(sm Summary) error {
	line := indexLine(sm)
	if err := s.Ensure(); err != nil {
		return err
	}
	ip := s.indexPath()
	if fi, err := os.Lstat(ip); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("the store's index %s is not a regular file: remove it", ip)
	}
	var f *os.File
	err := s.owner.Do(func() (err error) {
		f, err = os.OpenFile(ip, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot update the store's index: %w", err)
	}
	s.owner.Chown(ip)
	// One write per line: appends from two processes do not interleave.
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// onDisk is what the traces directory holds, read in batches.
type onDisk struct {
	finished map[string]bool // IDs with a finished trace file
	partial  []string        // IDs still recording or cut short
	bad      []string        // IDs whose file is not a regular file
}

func (s *Store) readDisk() (onDisk, error) {
	d := onDisk{finished: map[string]bool{}}
	f, err := os.Open(s.tracesDir())
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	defer f.Close()
	for {
		des, err := f.ReadDir(1024)
		for _, de := range des {
			name := de.Name()
			id, partial := strings.CutSuffix(name, Ext+tracefile.PartialSuffix)
			if !partial {
				var ok bool
				if id, ok = strings.CutSuffix(name, Ext); !ok {
					continue
				}
			}
			switch {
			case !ValidID(id):
			case !de.Type().IsRegular():
				d.bad = append(d.bad, id)
			case partial:
				d.partial = append(d.partial, id)
			default:
				d.finished[id] = true
			}
		}
		if errors.Is(err, io.EOF) || len(des) == 0 {
			return d, nil
		}
		if err != nil {
			return d, err
		}
	}
}

// Each calls fn with the store's traces: those still recording (or cut
// short) first, then the finished ones, most recently added first. It
// stops when fn returns false.
func (s *Store) Each(fn func(Summary) bool) error {
	d, err := s.readDisk()
	if err != nil {
		return err
	}
	for _, id := range d.partial {
		path := filepath.Join(s.tracesDir(), id+Ext+tracefile.PartialSuffix)
		if !fn(partialSummary(id, path)) {
			return nil
		}
	}
	for _, id := range d.bad {
		path := filepath.Join(s.tracesDir(), id+Ext)
		if !fn(SummaryOf(id, path, tracefile.Meta{}, false, errors.New("not a regular file"))) {
			return nil
		}
	}
	seen := make(map[string]bool, len(d.finished))
	stopped := false
	err = eachLineBackwards(s.indexPath(), func(line []byte) bool {
		sm, ok := parseIndexLine(line)
		if !ok || seen[sm.ID] || !d.finished[sm.ID] {
			return true // a torn line, superseded, or its file is gone
		}
		seen[sm.ID] = true
		sm.Path = filepath.Join(s.tracesDir(), sm.ID+Ext)
		stopped = !fn(sm)
		return !stopped
	})
	if err != nil || stopped {
		return err
	}
	// Finished traces the index lacks: add them now.
	for id := range d.finished {
		if seen[id] {
			continue
		}
		path := filepath.Join(s.tracesDir(), id+Ext)
		m, err := tracefile.ReadMeta(path)
		sm := SummaryOf(id, path, m, false, err)
		if err == nil {
			s.appendSummary(sm)
		}
		sm.Path = path
		if !fn(sm) {
			return nil
		}
	}
	return nil
}

// indexed is the index's latest line for id.
func (s *Store) indexed(id string) (Summary, bool) {
	var found Summary
	ok := false
	eachLineBackwards(s.indexPath(), func(line []byte) bool {
		if sm, good := parseIndexLine(line); good && sm.ID == id {
			found, ok = sm, true
			return false
		}
		return true
	})
	return found, ok
}

// eachLineBackwards calls fn with each line of a file, last first, reading
// it in blocks from the end: memory is one block and one line.
func eachLineBackwards(path string, fn func([]byte) bool) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("the store's index %s is not a regular file", path)
	}
	const block = 64 << 10
	var rest []byte // the start of a line whose end was in a later block
	for off := fi.Size(); off > 0; {
		n := int64(block)
		if off < n {
			n = off
		}
		off -= n
		buf := make([]byte, n, n+int64(len(rest)))
		if _, err := f.ReadAt(buf, off); err != nil {
			return err
		}
		buf = append(buf, rest...)
		for {
			i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
			if i < 0 {
				break
			}
			if line := bytes.TrimSpace(buf[i+1:]); len(line) > 0 && !fn(line) {
				return nil
			}
			buf = buf[:i+1]
		}
		rest = buf
	}
	if line := bytes.TrimSpace(rest); len(line) > 0 {
		fn(line)
	}
	return nil
}
