package session

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/host"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/summarize"
)

// state is what a recording has learned so far.
type state struct {
	target  Target
	sink    Sink
	base    int64 // the tracer's clock reading when tracing began
	res     Result
	devs    map[event.Dev]bool
	live    map[int]bool
	skip    map[uint32]bool // pids whose I/O is ioshape's own
	bytes   int64
	lastIO  time.Time
	ready   bool
	readyAt time.Time
	marks   map[int64]bool // CPUs whose flush mark has been read
	command int            // the pid (and process group) of the command ioshape started
	// The oldest completion among the events read since the last tick (ns
	// from base), and whether there were any: how far behind the tracer's
	// slowest output (a CPU's buffer) is.
	tickOldest int64
	tickAny    bool
	// summary, if set, makes summary rows of the tracer's events
	// (Config.Summary on a tracer that prints each I/O).
	summary *summarize.Summarizer
}

// summarizeEvents has the tracer's events summarized as they come, rows
// written in their place.
func (st *state) summarizeEvents() {
	st.summary = summarize.New(func(row *event.Summary) error {
		st.res.Summarized += row.Count
		return st.sink.WriteSummary(row)
	})
}

// closeSummary writes the summary rows still open, and says what came
// too late for its place in the order.
func (st *state) closeSummary() error {
	if st.summary == nil {
		return nil
	}
	err := st.summary.Close()
	if n := st.summary.Late(); n > 0 {
		st.warn(fmt.Sprintf("%d events came more than %v out of time order: summarized where they came, their queue depth and stream approximate", n, time.Duration(summarize.Window)))
	}
	st.summary = nil
	return err
}

func newState(t Target, sink Sink, seeds []int) *state {
	st := &state{target: t, sink: sink, devs: map[event.Dev]bool{}, live: map[int]bool{}, marks: map[int64]bool{},
		skip: map[uint32]bool{uint32(SelfPid): true}}
	for _, p := range seeds {
		st.live[p] = true
	}
	return st
}

// warnLimit is how many warnings of one kind a recording keeps verbatim;
// the rest are counted.
const warnLimit = 5

func (st *state) warn(msg string) { st.res.Warnings = append(st.res.Warnings, msg) }

// consume takes a batch of the tracer's records. ready is set when the
// batch says tracing has begun (with the tracer's clock then, 0 if it did
// not say).
func (st *state) consume(batch []parse.Record) (ready *int64, err error) {
	ownIO := false
	for i := range batch {
		r := &batch[i]
		switch r.Kind {
		case parse.KindEvent:
			e := &r.Event
			if st.skip[e.Pid] {
				continue
			}
			e.Start -= st.base
			e.End -= st.base
			if e.Flags&event.FlagDispatched != 0 {
				e.Dispatch -= st.base
			}
			st.devs[e.Dev] = true
			if !st.tickAny || e.End < st.tickOldest {
				st.tickOldest, st.tickAny = e.End, true
			}
			st.res.Events++
			st.bytes += e.Bytes
			if e.Flags&event.FlagKernel == 0 { // the target's own I/O, not the system's writeback
				ownIO = true
			}
			if st.summary != nil {
				if err := st.summary.Add(e); err != nil {
					return ready, err
				}
			} else if err := st.sink.Write(e); err != nil {
				return ready, err
			}
		case parse.KindSummary:
			row := r.Summary
			if st.skip[row.Pid] {
				continue
			}
			row.Start -= st.base
			row.First -= st.base
			row.Last -= st.base
			st.devs[row.Dev] = true
			st.res.Summarized += row.Count
			st.bytes += row.Bytes
			if !row.Kernel {
				ownIO = true
			}
			if err := st.sink.WriteSummary(row); err != nil {
				return ready, err
			}
		case parse.KindReady:
			n := r.N
			ready = &n
			if !st.ready && n != 0 {
				st.base = n // events later in this batch count from it
			}
		case parse.KindLost:
			st.res.Lost += r.N
		case parse.KindMark:
			st.marks[r.N] = true
		case parse.KindCounter:
			st.count(r)
		case parse.KindWarning:
			st.warn(r.Text)
		case parse.KindFork:
			st.live[r.Child] = true
		case parse.KindExit:
			delete(st.live, r.Pid)
		case parse.KindError:
			st.res.ParseErrors++
			if st.res.ParseErrors <= warnLimit { // the first few, to diagnose with
				st.warn("tracer output " + r.Err.Error())
			}
		}
	}
	if ownIO { // once per batch: the clock is not free at 100k events/s
		st.lastIO = time.Now()
	}
	return ready, nil
}

// count takes a counter the tracer reported.
func (st *state) count(r *parse.Record) {
	switch r.Name {
	case parse.CounterUnmatched:
		st.res.Unmatched += r.N
	case parse.CounterMapFull:
		st.res.MapOverflows += r.N
	case parse.CounterStale, parse.CounterUnfinished, parse.CounterUnreaped:
		st.res.Unfinished += r.N
	case parse.CounterCorrupt:
		if st.res.Corrupt == nil {
			st.res.Corrupt = map[string]int64{}
		}
		st.res.Corrupt[r.Text] += r.N
	case parse.CounterProbeError:
		st.res.ProbeErrors += r.N
		if st.res.ProbeErrors <= warnLimit && r.Text != "" {
			st.warn(r.Text)
		}
	}
}

// applyStatus takes a helper status line: "pid N" (the command started),
// "exit N" (it ended: exited is true), "error MSG" (it could not start).
func (st *state) applyStatus(line string) (exited bool, err error) {
	switch {
	case strings.HasPrefix(line, "pid "):
		if p, err := strconv.Atoi(line[4:]); err == nil {
			st.live[p] = true
			st.command = p
		}
	case strings.HasPrefix(line, "exit "):
		if c, err := strconv.Atoi(line[5:]); err == nil {
			st.res.ExitStatus = &c
		}
		return true, nil
	case strings.HasPrefix(line, "error "):
		return false, fmt.Errorf("cannot start %s: %s", st.target.Command[0], line[6:])
	}
	return false, nil
}

// targetGone says why a recording whose target is gone should stop: a
// launch that has gone quiet, or attached pids that have all exited.
func (st *state) targetGone() string {
	t := st.target
	if t.Launch && time.Since(st.lastIO) >= t.Quiet {
		return "quiet"
	}
	if len(t.Pids) > 0 && len(t.Names) == 0 {
		for p := range st.live {
			if !host.ProcessExists(p) {
				delete(st.live, p)
			}
		}
		if len(st.live) == 0 {
			return "target exited"
		}
	}
	return ""
}

// describeDevices adds, to the devices the tracer named itself, the system's
// description of every other device the events used, in order.
func (st *state) describeDevices(named []event.Device) []event.Device {
	have := map[event.Dev]bool{}
	for _, d := range named {
		have[event.Dev{Major: d.Major, Minor: d.Minor}] = true
	}
	var devs []event.Dev
	for d := range st.devs {
		if !have[d] {
			devs = append(devs, d)
		}
	}
	sort.Slice(devs, func(i, j int) bool {
		return devs[i].Major < devs[j].Major || devs[i].Major == devs[j].Major && devs[i].Minor < devs[j].Minor
	})
	return append(host.DescribeDevices(devs), named...)
}

// finishWarnings explains every loss the recording counted.
func (st *state) finishWarnings(tracer, remedy string) {
	r := &st.res
	if r.Lost > 0 {
		st.warn(fmt.Sprintf("%s lost %d events: its output buffers overflowed (%s)", tracer, r.Lost, remedy))
	}
	if r.ProbeMisses > 0 {
		st.warn(fmt.Sprintf("the kernel skipped %d probe firings (a probe fired while another BPF program was running on the same CPU, e.g. a completion interrupt during a syscall probe): that many I/O events are missing or incomplete", r.ProbeMisses))
	}
	if r.ProbeErrors > 0 {
		st.warn(fmt.Sprintf("%d probe actions failed at run time: their events are missing", r.ProbeErrors))
	}
	if text := parse.CorruptText(r.Corrupt); text != "" {
		st.warn(text)
	}
	if r.Unfinished > 0 {
		st.warn(fmt.Sprintf("up to %d block requests or asynchronous calls may be missing: they were issued, but their completion was not seen or could not be confirmed (a completion firing the kernel skipped is counted here as well as among the skipped firings, and a map delete can fail under contention, so this is an upper bound)", r.Unfinished))
	}
	if r.MapOverflows > 0 {
		st.warn(fmt.Sprintf("%d in-flight I/Os could not be tracked: the tracer had no room for them", r.MapOverflows))
	}
	if r.ParseErrors > 0 {
		st.warn(fmt.Sprintf("%d tracer lines could not be parsed", r.ParseErrors))
	}
}
