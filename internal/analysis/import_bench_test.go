package analysis

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/ioshape/ioshape/internal/parse"
)

// writeMSRLines writes n lines of an MSR Cambridge CSV: 4 hosts' disks,
// reads and writes of 4–64 KiB, mostly sequential runs, 100 ns ticks.
func writeMSRLines(w *bufio.Writer, n int) error {
	ts := int64(128166372003061629)
	var off [8]int64
	buf := make([]byte, 0, 96)
	for i := 0; i < n; i++ {
		d := i % 8
		size := int64(4096 << (i % 5))
		if i%7 == 0 {
			off[d] = int64(i) * 7919 * 4096 % (1 << 40)
		}
		ts += int64(20 + i%300)
		buf = strconv.AppendInt(buf[:0], ts, 10)
		buf = append(buf, ",host"...)
		buf = strconv.AppendInt(buf, int64(d/2), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(d%2), 10)
		if i%3 == 0 {
			buf = append(buf, ",Write,"...)
		} else {
			buf = append(buf, ",Read,"...)
		}
		buf = strconv.AppendInt(buf, off[d], 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, size, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(100+i%5000), 10)
		buf = append(buf, '\n')
		off[d] += size
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return w.Flush()
}

// importLines imports n generated MSR lines through a FIFO (so that a
// 100 M-line file needs no disk) and returns the peak live heap.
func importLines(b *testing.B, n int) uint64 {
	dir := b.TempDir()
	fifo := filepath.Join(dir, "msr.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Skipf("no FIFO here: %v", err)
	}
	errc := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			errc <- err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		err = writeMSRLines(w, n)
		f.Close()
		errc <- err
	}()
	var res ImportResult
	var err error
	peak := peakHeap(func() {
		res, err = Import(context.Background(), ImportRequest{File: fifo, Format: parse.FormatMSR, Path: filepath.Join(dir, "out.iotrace")})
	})
	if err != nil {
		b.Fatal(err)
	}
	if werr := <-errc; werr != nil {
		b.Fatal(werr)
	}
	if res.Events != int64(n) {
		b.Fatalf("imported %d events of %d lines", res.Events, n)
	}
	return peak
}

// BenchmarkImportCSV measures import of a block-trace CSV (MSR format):
// parse, build events and write the trace, in lines per second, and the
// peak live heap. The import runs on one goroutine; the generator feeding
// the FIFO runs on the other core. Run:
//
//	go test ./internal/analysis -run '^$' -bench ImportCSV -benchtime 1x
//	IOSHAPE_BENCH_IMPORT_LINES=10000000,100000000 go test ./internal/analysis -run '^$' -bench ImportCSV -benchtime 1x -timeout 60m
//
// Memory that does not grow from 10 M to 100 M lines is what "bounded"
// means here.
func BenchmarkImportCSV(b *testing.B) {
	sizes := []int{1_000_000}
	if s := os.Getenv("IOSHAPE_BENCH_IMPORT_LINES"); s != "" {
		sizes = nil
		for _, f := range splitComma(s) {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("IOSHAPE_BENCH_IMPORT_LINES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			var peak uint64
			for i := 0; i < b.N; i++ {
				peak = max(peak, importLines(b, n))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
