package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/tracefile"
	"github.com/ioshape/ioshape/internal/units"
)

// WriteText prints a profile for a terminal.
func WriteText(w io.Writer, s *Show) error {
	ew := &errWriter{w: w}
	writeHeader(ew, s)
	writeLayers(ew, s.Block, s.Syscall)
	if s.Block != nil && len(s.Block.SizeBytes.Histogram) > 0 && !s.Block.LacksField("size_bytes") {
		writeSizes(ew, "Block sizes at the drive", s.Block.SizeBytes)
	}
	if s.Syscall != nil && len(s.Syscall.SizeBytes.Histogram) > 0 && !s.Syscall.LacksField("size_bytes") {
		writeSizes(ew, "Request sizes asked for by the application", s.Syscall.SizeBytes)
	}
	writeCache(ew, s.Profile)
	writeDevices(ew, s.Devices)
	writeProcesses(ew, s.Processes)
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

func writeHeader(w *errWriter, s *Show) {
	t := s.Trace
	name := t.ID
	if name == "" {
		name = t.Path
	}
	if t.Label != "" {
		name += fmt.Sprintf(" %q", t.Label)
	}
	w.printf("Trace %s\n", name)
	when := "at a time the capture does not say"
	if t.Start != nil {
		when = t.Start.Local().Format(time.DateTime)
		if t.StartSource != "" && t.StartSource != tracefile.StartTracerReady && t.StartSource != tracefile.StartRecorder {
			when += " (" + t.StartSource + ")"
		}
	}
	if t.Imported != nil {
		when += ", imported " + t.Imported.Local().Format(time.DateTime)
	}
	if t.Host != "" {
		w.printf("  recorded  %s on %s (%s), %s\n", when, t.Host, kernelText(t.Kernel), backendText(t))
	} else {
		w.printf("  recorded  %s, %s\n", when, backendText(t))
	}
	w.printf("  target    %s\n", TargetText(t))
	status := fmt.Sprintf("%s, %s events", units.Micros(t.DurationS*1e6), units.Count(t.Events))
	if t.Target.Summary {
		status = fmt.Sprintf("%s, a summary: %s I/Os counted in the kernel, in %s rows of a second", units.Micros(t.DurationS*1e6), units.Count(t.SummarizedIOs), units.Count(t.SummaryRows))
	}
	if t.EndReason != "" {
		status += ", ended: " + t.EndReason
	}
	w.printf("  recording %s\n", status)
	// One account of loss: what the tracer said it lost, what it lost
	// without a word (more requests never completed than a drive keeps in
	// flight), records dropped as corrupt, and what is only in flight.
	silent := t.UnfinishedRequests > event.InFlightAllowance
	switch {
	case t.LostEvents > 0 || t.ParseErrors > 0:
		w.printf("  LOST DATA %s events lost (tracer buffers %s, full maps %s, probes skipped by the kernel %s), %s unreadable tracer lines\n",
			units.Count(t.LostEvents), units.Count(t.TracerLostEvents), units.Count(t.MapOverflows), units.Count(t.ProbeMisses), units.Count(t.ParseErrors))
		if silent {
			w.printf("  LOST DATA and up to %s block requests or asynchronous calls more: issued, never seen to complete\n", units.Count(t.UnfinishedRequests))
		}
	case silent:
		w.printf("  LOST DATA the tracer reported no loss, but %s block requests or asynchronous calls were issued and never seen to complete: more than a drive keeps in flight, so their completions were lost\n", units.Count(t.UnfinishedRequests))
	case !t.Complete:
		w.printf("  INCOMPLETE the recording was cut short; what follows is what it wrote\n")
	default:
		w.printf("  no events lost\n")
	}
	if t.UnfinishedRequests > 0 && !silent {
		w.printf("  in flight %s requests issued and not seen to complete: in flight when the trace ended\n", units.Count(t.UnfinishedRequests))
	}
	if t.HostStealS > 0 {
		share := ""
		if t.CPUs > 0 && t.DurationS > 0 {
			share = fmt.Sprintf(" (%.1f %% of %d CPUs over %s)", 100*t.HostStealS/(float64(t.CPUs)*t.DurationS), t.CPUs, units.Micros(t.DurationS*1e6))
		}
		w.printf("  host      the virtual machine's host took %s of the CPUs' time while recording%s: what ran on them then took longer\n", units.Micros(t.HostStealS*1e6), share)
	}
	if t.CorruptRecords > 0 {
		w.printf("  dropped   %s corrupted records from the tracer: they describe no I/O that happened (see the warning)\n", units.Count(t.CorruptRecords))
	}
	if t.UnmatchedCompletions > 0 {
		w.printf("  unmatched %s completions without an issue (requests already in flight when recording began, parts of requests the kernel split, or issues the tracer lost)\n", units.Count(t.UnmatchedCompletions))
	}
	for _, x := range t.Warnings {
		w.printf("  warning:  %s\n", x)
	}
	for _, x := range t.Fidelity {
		w.printf("  note:     %s\n", x)
	}
	for _, u := range t.Unavailable {
		w.printf("  n/a:      %s: %s\n", u.Metric, u.Why)
	}
	w.printf("\n")
}

func kernelText(k string) string {
	if k == "" {
		return "kernel unknown"
	}
	return "kernel " + k
}

func backendText(t TraceInfo) string {
	if t.BackendVersion != "" {
		return t.BackendVersion
	}
	return t.Backend
}

// TargetText describes what a trace recorded, in a line.
func TargetText(t TraceInfo) string {
	tg := t.Target
	var s string
	switch tg.Mode {
	case "command":
		s = "command: " + strings.Join(strings.Fields(strings.Join(tg.Command, " ")), " ")
	case "pid":
		s = fmt.Sprintf("pids %v and their children", tg.Pids)
	case "name":
		s = "processes named " + strings.Join(tg.Names, ", ")
	case "pid+name":
		s = fmt.Sprintf("pids %v and processes named %s", tg.Pids, strings.Join(tg.Names, ", "))
	case "all":
		s = "the whole system"
	case "import":
		s = "imported from " + strings.Join(tg.Command, " ")
	default:
		s = tg.Mode
	}
	if tg.Launch {
		s += " (app launch"
		if tg.Cold {
			s += ", cold cache"
		}
		s += ")"
	} else if tg.Cold {
		s += " (cold cache)"
	}
	if t.ExitStatus != nil {
		s += fmt.Sprintf(", exit status %d", *t.ExitStatus)
	}
	return s
}

// writeLayers prints the two layers side by side: what was asked for and
// what the drive saw.
func writeLayers(w *errWriter, block, sys *profile.Layer) {
	if block == nil && sys == nil {
		w.printf("No I/O was recorded.\n\n")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\tSYSCALL (asked for)\tBLOCK (the drive saw)\n")
	field := ""
	row := func(name string, f func(l *profile.Layer) string) {
		g := f
		if field != "" {
			g = func(l *profile.Layer) string {
				if l.LacksField(field) {
					return "n/a"
				}
				return f(l)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, cell(sys, g), cell(block, g))
	}
	// of sets the JSON field a row shows, so that a metric the capture
	// cannot show reads "n/a", not zero.
	of := func(f string) { field = f }
	row("I/Os", func(l *profile.Layer) string { return units.Count(l.IOs) })
	of("reads")
	row("reads / writes", func(l *profile.Layer) string {
		return fmt.Sprintf("%s / %s", units.Count(l.Reads), units.Count(l.Writes))
	})
	of("read_fraction")
	row("read share (count, bytes)", func(l *profile.Layer) string {
		return fmt.Sprintf("%s, %s", units.Percent(l.ReadFraction), units.Percent(l.ReadFractionByBytes))
	})
	of("read_bytes")
	row("bytes read / written", func(l *profile.Layer) string {
		return fmt.Sprintf("%s / %s", units.Bytes(l.ReadBytes), units.Bytes(l.WriteBytes))
	})
	of("")
	row("flushes", func(l *profile.Layer) string { return units.Count(l.Flushes) })
	if sys != nil && sys.Clones > 0 {
		// A clone within one APFS volume (Finder, cp -c) copies no data:
		// the trace is nearly empty because the copy was.
		row("clones (no data copied)", func(l *profile.Layer) string { return units.Count(l.Clones) })
	}
	of("iops")
	row("IOPS, throughput", func(l *profile.Layer) string {
		return fmt.Sprintf("%s, %s MB/s over %s", units.Num(l.IOPS, 0), units.Num(l.ThroughputMBs, 1), units.Micros(l.SpanS*1e6))
	})
	of("size_bytes")
	row("size p50 (by count)", func(l *profile.Layer) string { return units.Bytes(l.SizeBytes.P50) })
	row("size p50 (by bytes)", func(l *profile.Layer) string { return units.Bytes(l.SizeBytes.P50ByBytes) })
	row("size min / max", func(l *profile.Layer) string {
		return fmt.Sprintf("%s / %s", units.Bytes(l.SizeBytes.Min), units.Bytes(l.SizeBytes.Max))
	})
	of("queue_depth")
	row("queue depth p50 / p90 / max", func(l *profile.Layer) string {
		return fmt.Sprintf("%s / %s / %d", units.Num(l.QueueDepth.P50, 0), units.Num(l.QueueDepth.P90, 0), l.QueueDepth.Max)
	})
	row("  time-weighted (busy)", func(l *profile.Layer) string {
		return fmt.Sprintf("%s (Little's law %s)", units.Num(l.QueueDepth.MeanTimeWeighted, 2), units.Num(l.QueueDepth.LittlesLaw, 2))
	})
	if block != nil && block.DeviceQueueDepth != nil && !block.LacksField("device_queue_depth") {
		fmt.Fprintf(tw, "  in the device p50 / max\t\t%s / %d\n", units.Num(block.DeviceQueueDepth.P50, 0), block.DeviceQueueDepth.Max)
	}
	of("latency_us")
	row("latency p50 / p99 / max", func(l *profile.Layer) string {
		return fmt.Sprintf("%s / %s / %s", units.Micros(l.LatencyUs.P50), units.Micros(l.LatencyUs.P99), units.Micros(l.LatencyUs.Max))
	})
	of("idle_gap_us")
	row("idle gaps p50 (count)", func(l *profile.Layer) string {
		if l.IdleGapUs.Count == 0 {
			return "none"
		}
		return fmt.Sprintf("%s (%s, %s idle)", units.Micros(l.IdleGapUs.P50), units.Count(l.IdleGapUs.Count), units.Micros(l.IdleS*1e6))
	})
	of("sequential_fraction")
	row("sequential", func(l *profile.Layer) string { return units.Percent(l.SequentialFraction) })
	of("service_fit")
	row("service time fit", func(l *profile.Layer) string {
		f := l.ServiceFit
		if f == nil || f.Note != "" && f.RateMBs == 0 {
			return "–"
		}
		return fmt.Sprintf("%s + size at %s MB/s", units.Micros(f.OverheadUs), units.Num(f.RateMBs, 0))
	})
	tw.Flush()
	w.printf("\n")
}

func cell(l *profile.Layer, f func(*profile.Layer) string) string {
	if l == nil {
		return "–"
	}
	return f(l)
}

func writeSizes(w *errWriter, title string, s profile.SizeStats) {
	w.printf("%s\n", title)
	var maxBytes, total int64
	for _, b := range s.Histogram {
		maxBytes = max(maxBytes, b.Bytes)
		total += b.Count
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  size\tI/Os\t\tbytes\t\n")
	for _, b := range s.Histogram {
		label := "0"
		if b.From > 0 {
			label = fmt.Sprintf("%s–%s", units.Bytes(b.From), units.Bytes(2*b.From))
		}
		bar := 0
		if maxBytes > 0 {
			bar = int(30 * b.Bytes / maxBytes)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t %s\n", label, units.Count(b.Count), units.Percent(float64(b.Count)/float64(total)), units.Bytes(b.Bytes), strings.Repeat("█", bar))
	}
	tw.Flush()
	w.printf("\n")
}

func writeCache(w *errWriter, p *profile.Profile) {
	pc := p.PageCache
	if p.Syscall != nil && p.Block != nil {
		w.printf("Page cache: asked to read %s, the drive read %s; asked to write %s, the drive wrote %s\n",
			units.Bytes(pc.SyscallReadBytes), units.Bytes(pc.BlockReadBytes), units.Bytes(pc.SyscallWriteBytes), units.Bytes(pc.BlockWriteBytes))
	}
	if p.Writeback.IOs > 0 {
		inc := "included above"
		if !p.Writeback.Included {
			inc = "excluded above (--writeback exclude)"
		}
		w.printf("Writeback: kernel threads issued %s I/Os, %s, on behalf of processes: %s\n", units.Count(p.Writeback.IOs), units.Bytes(p.Writeback.Bytes), inc)
	}
	w.printf("\n")
}

func writeDevices(w *errWriter, devs []profile.DeviceProfile) {
	if len(devs) == 0 {
		return
	}
	w.printf("Devices\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	// The data's content, where the tracer sampled it (the native backend).
	sampled := slices.ContainsFunc(devs, func(d profile.DeviceProfile) bool { return d.Content != nil })
	header := "  device\tmount\tsyscall I/Os\tblock I/Os\tblock bytes\tblock size p50\tblock QD p50"
	if sampled {
		header += "\tcompression saves"
	}
	fmt.Fprintf(tw, "%s\n", header)
	for _, d := range devs {
		sys, blk, bb, bs, qd := "–", "–", "–", "–", "–"
		if d.Syscall != nil {
			sys = units.Count(d.Syscall.IOs)
		}
		if d.Block != nil {
			blk, bb = units.Count(d.Block.IOs), units.Bytes(d.Block.ReadBytes+d.Block.WriteBytes)
			bs, qd = units.Bytes(d.Block.SizeBytes.P50), units.Num(d.Block.QueueDepth.P50, 0)
			if d.Block.LacksField("size_bytes") {
				bb, bs = "n/a", "n/a"
			}
			if d.Block.LacksField("queue_depth") {
				qd = "n/a"
			}
		}
		fmt.Fprintf(tw, "  %s (%d:%d)\t%s\t%s\t%s\t%s\t%s\t%s", d.Device, d.Major, d.Minor, OrDash(d.Mount), sys, blk, bb, bs, qd)
		if sampled {
			saves := "–"
			if d.Content != nil {
				saves = fmt.Sprintf("%.0f%% (%s samples)", 100*d.Content.SavedShare(), units.Count(d.Content.Samples))
			}
			fmt.Fprintf(tw, "\t%s", saves)
		}
		fmt.Fprintf(tw, "\n")
	}
	tw.Flush()
	w.printf("\n")
}

func writeProcesses(w *errWriter, procs []profile.Process) {
	if len(procs) == 0 {
		return
	}
	w.printf("Processes (by bytes)\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  pid\tname\tsyscall I/Os\tread\twritten\tblock I/Os\tread\twritten\n")
	const shown = 15
	for i, p := range procs {
		if i == shown {
			fmt.Fprintf(tw, "  …\t%d more\n", len(procs)-shown)
			break
		}
		name := p.Comm
		if p.Kernel {
			name += " (kernel)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", units.Pid(p.Pid), name, units.Count(p.SyscallIOs), units.Bytes(p.SyscallReadBytes), units.Bytes(p.SyscallWriteBytes),
			units.Count(p.BlockIOs), units.Bytes(p.BlockReadBytes), units.Bytes(p.BlockWriteBytes))
	}
	tw.Flush()
}

// OrDash shows an empty string as a dash.
func OrDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
