package analysis

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// ImportRequest is one capture to store as a trace.
type ImportRequest struct {
	File   string       // the capture
	Format parse.Format // "auto": detect it
	// BlockSize turns fs_usage's and dtrace's block numbers into bytes.
	BlockSize int64
	// ID and Path are where the trace goes (ID is "" outside the store).
	ID, Path    string
	Label       string
	ToolVersion string
	CommandLine []string
	// Arch is the recording machine's, for raw bpftrace output (syscall
	// numbers and flags differ); empty: this machine's.
	Arch string
	// Platform is the recording system's (darwin, linux), for D output
	// that does not say; empty: recognised from the output.
	Platform string
	// As runs the trace file's creation and its renaming into place as
	// the store's owner (store.Owner.Do); nil: as this process.
	As func(func() error) error
	// Date is the day a capture that prints only times of day (fs_usage)
	// was made; zero: the file's modification date, said as such.
	Date         time.Time
	dateFromFile bool
}

// ImportResult is what an import saw.
type ImportResult struct {
	Format                     parse.Format
	Platform                   string // D output: the system it was recorded on
	Events, Skipped, Malformed int64
	Warnings                   []string
	Unavailable                []event.Unavailable // what the format cannot show
}

// ErrUnknownFormat is a capture in no format ioshape imports.
var ErrUnknownFormat = errors.New("not a format ioshape imports (fs_usage, blkparse text or blktrace files, biosnoop, disksnoop, iosnoop, biosnoop.bt, a fio iolog, MSR/Alibaba/Tencent CSV, or record --raw-output): --format names one")

// importStats is what an import saw besides events.
type importStats struct {
	skipped, malformed, lost int64
	unmatched, unfinished    int64
	platform                 string // the D output's, once read
	warnings                 []string
	devices                  []event.Device
	missing                  []event.Unavailable
	firstMalformed           *parse.SyntaxError
	// start is the capture's own time zero, when it says; startSource how.
	start       time.Time
	startSource string
	host        string // the machine the capture names
	corrupt     int64  // tracer records that cannot be right, dropped
}

// Import reads a capture and writes it as a trace at req.Path. The trace
// exists only if the whole capture was read: on any error, or Ctrl-C,
// nothing is left behind.
func Import(ctx context.Context, req ImportRequest) (ImportResult, error) {
	res := ImportResult{Format: req.Format}
	f, err := openInterruptibly(ctx, req.File)
	if err != nil {
		return res, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return res, err
	}
	br := bufio.NewReaderSize(ctxReader{ctx, f}, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// A gzipped capture, as the shared DTrace samples are.
		zr, err := gzip.NewReader(br)
		if err != nil {
			return res, fmt.Errorf("%s: %w", req.File, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	var tarMore func() bool
	if h, _ := br.Peek(512); len(h) == 512 && string(h[257:262]) == "ustar" {
		// A tar archive (Tencent's traces come as .tgz): its first file.
		tr := tar.NewReader(br)
		for {
			hdr, err := tr.Next()
			if err != nil {
				return res, fmt.Errorf("%s: a tar archive with no file in it: %w", req.File, err)
			}
			if hdr.Typeflag == tar.TypeReg {
				res.Warnings = append(res.Warnings, fmt.Sprintf("read %s from the tar archive", hdr.Name))
				break
			}
		}
		br = bufio.NewReaderSize(tr, 1<<20)
		tarMore = func() bool {
			for {
				hdr, err := tr.Next()
				if err != nil {
					return false
				}
				if hdr.Typeflag == tar.TypeReg {
					return true
				}
			}
		}
	}
	if res.Format == "auto" || res.Format == "" {
		head, _ := br.Peek(64 << 10)
		if parse.IsBlktrace(head) {
			res.Format = parse.FormatBlktrace
		} else if res.Format = parse.Detect(strings.Split(string(head), "\n")); res.Format == parse.FormatUnknown {
			if summary := parse.SummaryTool(head); summary != "" {
				return res, fmt.Errorf("%s: %s output is a summary (histograms or per-interval totals), not one line per I/O: ioshape needs per-I/O output (iosnoop, biosnoop, blktrace)", req.File, summary)
			}
			return res, fmt.Errorf("%s: %w", req.File, ErrUnknownFormat)
		}
	}
	info, ok := parse.Info(res.Format)
	read := importers[res.Format]
	if !ok || read == nil {
		return res, fmt.Errorf("%s: %w", req.File, ErrUnknownFormat)
	}
	// When the capture was made is what its own clock says, if anything
	// (the footer's start); the file's date dates only a time of day.
	h := tracefile.Header{
		ID: req.ID, Label: req.Label, Tool: "ioshape", ToolVersion: req.ToolVersion,
		Backend: string(res.Format) + " (imported)", Target: tracefile.Target{Mode: "import", Command: []string{req.File}},
		CommandLine: req.CommandLine, Imported: time.Now().UTC(), Fidelity: info.Fidelity, OS: info.Platform,
	}
	if req.Date.IsZero() {
		req.Date, req.dateFromFile = st.ModTime(), true
	}
	if res.Format == parse.FormatDTrace {
		h.OS = req.Platform
	}
	as := req.As
	if as == nil {
		as = func(fn func() error) error { return fn() }
	}
	var w *tracefile.Writer
	err = as(func() (err error) {
		w, err = tracefile.Create(req.Path, h)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("cannot create the trace file: %w", err)
	}
	var stats importStats
	var first, last int64
	sink := func(e *event.Event) error {
		if res.Events%checkEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if res.Events == 0 || e.Start < first {
			first = e.Start
		}
		last = max(last, e.End)
		res.Events++
		return w.Write(e)
	}
	err = read(importInput{r: br, req: req, info: info, sink: sink, stats: &stats})
	if tarMore != nil && err == nil && tarMore() {
		stats.warnings = append(stats.warnings, "the tar archive holds more files: only the first was imported (extract them and import each)")
	}
	res.Skipped, res.Malformed, res.Unavailable = stats.skipped, stats.malformed, stats.missing
	res.Warnings = append(res.Warnings, stats.warnings...)
	res.Platform = stats.platform
	ft := tracefile.Footer{
		DurationNs: last - first, LostEvents: stats.lost, ParseErrors: stats.malformed,
		UnmatchedCompletions: stats.unmatched, UnfinishedRequests: stats.unfinished, CorruptRecords: stats.corrupt,
		Warnings: stats.warnings, EndReason: "imported", Devices: stats.devices, Unavailable: stats.missing,
		Start: stats.start, StartSource: stats.startSource, Host: stats.host,
	}
	if cerr := as(func() error { return w.Close(ft) }); cerr != nil && err == nil {
		err = cerr
	}
	if err == nil && res.Events == 0 {
		switch {
		case stats.firstMalformed != nil:
			err = fmt.Errorf("%s (not %s output?)", stats.firstMalformed, res.Format)
		case res.Format == parse.FormatFsUsage:
			err = fmt.Errorf("%s: no I/O found (%d lines skipped): for fs_usage, capture with 'fs_usage -w -f filesys -f diskio'", req.File, stats.skipped)
		default:
			err = fmt.Errorf("%s: no I/O found in this %s output (%d lines skipped)", req.File, res.Format, stats.skipped)
		}
	}
	if err != nil {
		os.Remove(req.Path)
		os.Remove(req.Path + tracefile.PartialSuffix)
		return res, err
	}
	return res, nil
}

// malformed notes a bad line; the first few are kept with their file and
// line numbers, the rest counted (see the footer's parse errors).
func (s *importStats) malformedLine(err *parse.SyntaxError) {
	if s.firstMalformed == nil {
		s.firstMalformed = err
	}
	s.malformed++
	if s.malformed <= 10 {
		s.warnings = append(s.warnings, "malformed "+err.Error())
	}
}

func importFsUsage(r io.Reader, req ImportRequest, sink func(*event.Event) error, st *importStats) error {
	p := parse.NewFsUsageReader(r, req.File, req.BlockSize)
	err := importRecords(p, sink, st) // an overrun is one loss of an unknown number of events
	// fs_usage prints the time of day (the Mac's local time): the date is
	// the one given, or the file's, and said to be so.
	d := req.Date.Local()
	st.start = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.Local).Add(time.Duration(p.FirstTimeOfDay())).UTC()
	st.startSource = tracefile.StartCaptureDated + ", dated by --date"
	if req.dateFromFile {
		st.startSource = tracefile.StartCaptureDated + ", dated by the file's modification time"
	}
	if st.lost > 0 { // one warning, however many overruns
		st.warnings = append(st.warnings, fmt.Sprintf("fs_usage reported %d buffer overruns: events were dropped (an unknown number each time)", st.lost))
	}
	if p.PageIns > 0 {
		st.warnings = append(st.warnings, parse.PageInNote(p.PageIns))
	}
	for i, name := range p.Devices() {
		st.devices = append(st.devices, event.Device{Major: 0, Minor: uint32(i + 1), Name: name})
	}
	return err
}

func importBpftrace(r io.Reader, file, arch string, sink func(*event.Event) error, st *importStats) error {
	var rb rebase // raw times are CLOCK_MONOTONIC: start at the first event
	return importRecords(rebased{parse.NewBpftraceReader(r, file, arch), &rb}, sink, st)
}

// rebase shifts raw tracer clocks so the first event starts at zero.
type rebase struct {
	base  int64
	based bool
}

func (b *rebase) apply(e *event.Event) {
	if !b.based {
		b.base, b.based = e.Start, true
	}
	e.Start -= b.base
	e.End -= b.base
	if e.Flags&event.FlagDispatched != 0 {
		e.Dispatch -= b.base
	}
}

func importDTrace(r io.Reader, file string, blockSize int64, platform string, sink func(*event.Event) error, st *importStats) error {
	p := parse.NewDTraceReader(r, file, blockSize)
	p.Platform = platform
	var rb rebase
	corrupt := map[string]int64{}
	for p.Scan() {
		rec := p.Record()
		switch rec.Kind {
		case parse.KindReady:
			// Time zero is when tracing began, as a recording's is; the
			// script's walltimestamp there dates it.
			if rec.N != 0 && !rb.based {
				rb.base, rb.based = rec.N, true
				if !p.ReadyWall.IsZero() {
					st.start, st.startSource = p.ReadyWall, tracefile.StartCapture
				}
			}
		case parse.KindEvent:
			rb.apply(&rec.Event)
			if err := sink(&rec.Event); err != nil {
				return err
			}
		case parse.KindCounter:
			switch rec.Name {
			case parse.CounterUnmatched:
				st.unmatched += rec.N
			case parse.CounterUnfinished:
				st.unfinished += rec.N
			case parse.CounterCorrupt:
				corrupt[rec.Text] += rec.N
				st.corrupt += rec.N
			}
		case parse.KindError:
			st.malformedLine(rec.Err)
		default:
			st.skipped++
		}
	}
	st.platform = p.Platform
	if text := parse.CorruptText(corrupt); text != "" {
		st.warnings = append(st.warnings, text)
	}
	st.warnings = append(st.warnings, parse.DTraceLossText(st.unfinished)...)
	return p.Err()
}

// importInput is what a format's importer reads and where it puts it.
type importInput struct {
	r     *bufio.Reader
	req   ImportRequest
	info  parse.FormatInfo
	sink  func(*event.Event) error
	stats *importStats
}

// importers read each format into events, looked up by Import; what else
// a format needs to know is in parse's table (parse.Info).
var importers = map[parse.Format]func(importInput) error{
	parse.FormatFsUsage: func(in importInput) error {
		return importFsUsage(in.r, in.req, in.sink, in.stats)
	},
	parse.FormatDTrace: func(in importInput) error {
		return importDTrace(in.r, in.req.File, in.req.BlockSize, in.req.Platform, in.sink, in.stats)
	},
	parse.FormatBlkparse: func(in importInput) error {
		p := parse.NewBlkparseReader(in.r, in.req.File)
		err := importRecords(p, in.sink, in.stats)
		in.stats.blk(p.Counts(), "blkparse")
		in.stats.warnings = append(in.stats.warnings, p.Warnings()...)
		return err
	},
	parse.FormatBlktrace: func(in importInput) error {
		return importBlktrace(in.req.File, in.r, in.sink, in.stats)
	},
	parse.FormatFioIolog: func(in importInput) error {
		p := parse.NewFioIologReader(in.r, in.req.File)
		err := importRecords(p, in.sink, in.stats)
		in.stats.devices, in.stats.missing = p.Devices(), p.Missing()
		return err
	},
	parse.FormatMSR:         importBlockCSV,
	parse.FormatAlibaba:     importBlockCSV,
	parse.FormatTencent:     importBlockCSV,
	parse.FormatBiosnoop:    importSnoop,
	parse.FormatDisksnoop:   importSnoop,
	parse.FormatIosnoop:     importSnoop,
	parse.FormatPerfIosnoop: importSnoop,
	parse.FormatBiosnoopBT:  importSnoop,
	parse.FormatBpftrace: func(in importInput) error {
		arch := in.req.Arch
		if arch == "" {
			arch = runtime.GOARCH
		}
		return importBpftrace(in.r, in.req.File, arch, in.sink, in.stats)
	},
}

func importBlockCSV(in importInput) error {
	p := parse.NewBlockCSVReader(in.r, in.req.File, in.info.Name)
	err := importRecords(p, in.sink, in.stats)
	if t, ok := p.Origin(); ok {
		in.stats.start, in.stats.startSource = t, tracefile.StartCapture
	}
	in.stats.host = p.Host()
	in.stats.devices, in.stats.missing = p.Devices(), p.Missing()
	return err
}

func importSnoop(in importInput) error {
	p := parse.NewSnoopReader(in.r, in.req.File, in.info.Name, in.req.BlockSize)
	err := importRecords(p, in.sink, in.stats)
	if why := p.BlockUnit(); why != "" {
		in.stats.warnings = append(in.stats.warnings, why)
	}
	if p.Format() == "" && err == nil {
		err = fmt.Errorf("%s: no %s table found: want a header line such as '%s'", in.req.File, in.info.Name, in.info.Header)
	}
	in.stats.devices, in.stats.missing = p.Devices(), p.Missing()
	return err
}

// recordScanner is what every capture reader offers.
type recordScanner interface {
	Scan() bool
	Record() *parse.Record
	Err() error
}

// importRecords takes every record of p: events to sink, the rest counted.
func importRecords(p recordScanner, sink func(*event.Event) error, st *importStats) error {
	for p.Scan() {
		rec := p.Record()
		switch rec.Kind {
		case parse.KindEvent:
			if err := sink(&rec.Event); err != nil {
				return err
			}
		case parse.KindLost:
			st.lost += max(rec.N, 1) // 0: a loss of unknown size
		case parse.KindError:
			st.malformedLine(rec.Err)
		case parse.KindNotice:
		default:
			st.skipped++
		}
	}
	return p.Err()
}

// blk keeps what rebuilding requests from blktrace events saw.
func (s *importStats) blk(c parse.BlkCounts, tool string) {
	s.unmatched += c.Unmatched
	s.unfinished += c.Unfinished
	s.missing = append(s.missing, c.Missing(tool)...)
	if c.Dropped > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: %d bios or requests were never completed and were dropped to bound memory (lost events?)", tool, c.Dropped))
	}
	if s.lost > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s lost %d events while tracing: requests whose events were lost are missing or counted unmatched", tool, s.lost))
	}
}

// blktraceRun matches one CPU's file of a blktrace run: NAME.blktrace.CPU.
var blktraceRun = regexp.MustCompile(`^(.*)\.blktrace\.\d+$`)

// importBlktrace reads every per-CPU file of the run file belongs to
// (blkparse -i NAME reads them so), first already open as br.
func importBlktrace(file string, br io.Reader, sink func(*event.Event) error, st *importStats) error {
	files := []string{file}
	if m := blktraceRun.FindStringSubmatch(file); m != nil {
		all, _ := filepath.Glob(m[1] + ".blktrace.*")
		for _, f := range all {
			if f == file || !blktraceRun.MatchString(f) {
				continue
			}
			// A FIFO would hold the open for ever, a device read for
			// ever: only regular files are a run's per-CPU files.
			if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
				st.warnings = append(st.warnings, fmt.Sprintf("blktrace: skipped %s: not a regular file", f))
				continue
			}
			files = append(files, f)
		}
	}
	readers := []io.Reader{br}
	for _, f := range files[1:] {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		defer fh.Close()
		readers = append(readers, fh)
	}
	if len(files) > 1 {
		st.warnings = append(st.warnings, fmt.Sprintf("blktrace: read %d per-CPU files of the run: %s", len(files), strings.Join(files, ", ")))
	}
	p := parse.NewBlktraceReader(readers, files)
	var rb rebase // blktrace's clock: start at the first event
	err := importRecords(rebased{p, &rb}, sink, st)
	st.blk(p.Counts(), "blktrace")
	return err
}

// rebased shifts a reader's events with rb.
type rebased struct {
	recordScanner
	rb *rebase
}

func (r rebased) Scan() bool {
	if !r.recordScanner.Scan() {
		return false
	}
	if rec := r.Record(); rec.Kind == parse.KindEvent {
		r.rb.apply(&rec.Event)
	}
	return true
}

// openInterruptibly opens a capture for reading; a FIFO's open waits for
// its writer, and Ctrl-C ends the wait (the open is left to the process's
// exit).
func openInterruptibly(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, o.err
		}
		return o.f, nil
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// ctxReader stops reading once ctx is done: a capture that yields no
// event (a device of zeros, one endless line) still ends on Ctrl-C.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
