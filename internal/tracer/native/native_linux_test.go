//go:build linux && (amd64 || arm64)

package native

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/tracer/bpftrace"
	"github.com/ioshape/ioshape/internal/tracer/session"
)

// A kernel without BTF gets one clear line that names the way out.
func TestNativeWithoutBTF(t *testing.T) {
	old := btfPath
	btfPath = "/nonexistent/vmlinux"
	defer func() { btfPath = old }()
	_, err := Prepare(session.Config{Target: session.Target{All: true}})
	if err == nil || !strings.Contains(err.Error(), "BTF") || !strings.Contains(err.Error(), "--backend bpftrace") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v", err)
	}
	if Available() {
		t.Fatal("native reported available without BTF")
	}
}

// The Go decoder's layout is the C struct's, as bpf2go read it from BTF.
func TestNativeRecordLayout(t *testing.T) {
	var r ioshapeRecord
	if unsafe.Sizeof(r) != parse.NativeRecordSize {
		t.Fatalf("struct record is %d bytes, the decoder reads %d", unsafe.Sizeof(r), parse.NativeRecordSize)
	}
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"pid", unsafe.Offsetof(r.Pid), 4}, {"tid", unsafe.Offsetof(r.Tid), 8}, {"call", unsafe.Offsetof(r.Call), 12},
		{"start", unsafe.Offsetof(r.Start), 16}, {"dispatch", unsafe.Offsetof(r.Dispatch), 24}, {"end", unsafe.Offsetof(r.End), 32},
		{"offset", unsafe.Offsetof(r.Offset), 40}, {"size", unsafe.Offsetof(r.Size), 48}, {"ret", unsafe.Offsetof(r.Ret), 56},
		{"ino", unsafe.Offsetof(r.Ino), 64}, {"dev", unsafe.Offsetof(r.Dev), 72}, {"fflags", unsafe.Offsetof(r.Fflags), 76},
		{"comm", unsafe.Offsetof(r.Comm), 80},
	} {
		if f.got != f.want {
			t.Errorf("%s at %d, decoder reads %d", f.name, f.got, f.want)
		}
	}
}

// Every syscall the bpftrace script traces is in the native table.
func TestNativeCallTableMatchesScript(t *testing.T) {
	table := nativeCallTable()
	calls := map[uint8]bool{}
	for _, cs := range table {
		calls[cs.Call] = true
	}
	for _, sc := range bpftrace.ScriptCalls {
		if !calls[uint8(sc.ID)] {
			t.Errorf("%s is traced by the bpftrace script but not the native backend", sc.Name)
		}
	}
}

// Every program is named, so that its cost and recursion misses are
// reported.
func TestEveryProgramNamed(t *testing.T) {
	names := programNames(&ioshapePrograms{})
	if got, want := len(names), reflect.TypeOf(ioshapePrograms{}).NumField(); got != want {
		t.Fatalf("%d programs named, %d loaded", got, want)
	}
	for _, n := range []string{"on_switch", "on_waking", "on_irq_entry", "sweep_rq"} {
		if _, ok := names[n]; !ok {
			t.Errorf("%s not named", n)
		}
	}
}

func TestRingBytes(t *testing.T) {
	for _, pages := range []int{1, 3, 1024} {
		n := ringBytes(pages)
		if n&(n-1) != 0 || n < 4096 {
			t.Errorf("ringBytes(%d) = %d: not a power of two of at least a page", pages, n)
		}
	}
}

// The tracepoints the programs read have the arguments they expect on this
// kernel (the io_uring ones are optional).
func TestNativeTracepointSignatures(t *testing.T) {
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	for name, want := range nativeTracepointArgs {
		if got := tracepointArgs(kernel, name); got != want {
			t.Errorf("%s passes %d arguments, the program reads %d", name, got, want)
		}
	}
	if tracepointArgs(kernel, "no_such_tracepoint") != -1 {
		t.Error("unknown tracepoint not reported as such")
	}
}

// A refusal says why: the verifier's last line, or, where the kernel
// refused the program before verifying it (the log only counts what it
// checked: nothing), the error it returned.
func TestFirstLineSaysWhy(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&ebpf.VerifierError{Cause: syscall.EACCES, Log: []string{"0: (b7) r0 = 0", "R1 invalid mem access 'scalar'"}}, "R1 invalid mem access 'scalar'"},
		{&ebpf.VerifierError{Cause: syscall.EPERM, Log: []string{"processed 0 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0"}}, "operation not permitted"},
		{fmt.Errorf("program sweep_rq: %w", &ebpf.VerifierError{Cause: syscall.EPERM}), "operation not permitted"},
		{errors.New("map rqs: too big\nmore"), "map rqs: too big"},
	} {
		if got := firstLine(c.err); got != c.want {
			t.Errorf("firstLine(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
