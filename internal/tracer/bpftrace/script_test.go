package bpftrace

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/tracer/session"

	"github.com/ioshape/ioshape/internal/event"
)

func TestRenderModes(t *testing.T) {
	cases := []struct {
		name    string
		target  session.Target
		seeds   []int
		want    []string
		notWant []string
	}{
		{"command", session.Target{Command: []string{"cp", "a", "b"}}, nil,
			[]string{"@root[cpid] = 1;", "/@track[args->parent_pid] || @root[args->parent_pid]/", "/(@track[pid]) && @sysoff == 0/", "args->pid == 0"},
			[]string{"sched_process_exec", "pid != "}},
		{"pids", session.Target{Pids: []int{42, 43}, Duration: time.Second}, []int{42, 43},
			[]string{"@track[42] = 1;", "@track[43] = 1;"},
			[]string{"@root", "sched_process_exec"}},
		{"names", session.Target{Names: []string{"firefox", "a-very-long-process-name"}}, nil,
			[]string{"sched_process_exec", `comm == "firefox" || comm == "a-very-long-pro"`},
			[]string{"@root"}},
		{"all", session.Target{All: true}, nil, []string{"/(pid != 777) && @sysoff == 0/", "pid != 777 || $kthread"}, []string{"@track[pid]/"}},
		{"block only", session.Target{All: true, Layers: session.LayersBlock}, nil, []string{"block_rq_complete", "clear(@rqd)", "sys_enter_getpgid"},
			[]string{"sys_enter_pread64", "io_submit", "io_uring", "@sysoff", "clear(@sc)", "clear(@rq);"}},
		{"syscall only", session.Target{All: true, Layers: session.LayersSyscall}, nil, []string{"sys_enter_pread64", "io_submit", "@sysoff"},
			[]string{"block_rq", "clear(@rqd)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Render(c.target, c.seeds, 777)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(sc.Text, w) {
					t.Errorf("script lacks %q", w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(sc.Text, w) {
					t.Errorf("script has %q", w)
				}
			}
			if len(sc.SHA256) != 64 || strings.Contains(sc.Text, "{{") {
				t.Errorf("bad render: sha %q", sc.SHA256)
			}
		})
	}
}

// Every syscall family has its entry and exit probe, and every call ID the
// script prints is one the parser knows.
func TestScriptCoversCalls(t *testing.T) {
	sc, err := Render(session.Target{All: true}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range callsOn(runtime.GOARCH) {
		for _, p := range []string{"tracepoint:syscalls:sys_enter_" + c.Name, "tracepoint:syscalls:sys_exit_" + c.Name} {
			if !strings.Contains(sc.Text, p) {
				t.Errorf("no probe %s", p)
			}
		}
		if !event.Call(c.ID).Valid() {
			t.Errorf("%s: call ID %d unknown to the event model", c.Name, c.ID)
		}
	}
	for _, p := range []string{"block_rq_insert", "block_rq_issue", "block_rq_complete", "block_rq_merge", "block_rq_requeue",
		"sys_enter_io_submit", "sys_exit_io_getevents", "io_uring_submit_req", "io_uring_complete"} {
		if !strings.Contains(sc.Text, p) {
			t.Errorf("no probe for %s", p)
		}
	}
}

func TestMissingTracepoints(t *testing.T) {
	base := t.TempDir()
	for _, tp := range RequiredTracepoints[1:] {
		os.MkdirAll(filepath.Join(base, tp), 0o755)
	}
	got := missingTracepointsIn(base)
	if len(got) != 1 || got[0] != "block:block_rq_insert" {
		t.Fatalf("missing = %v", got)
	}
}
