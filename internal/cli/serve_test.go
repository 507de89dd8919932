//go:build linux && e2e

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/server"
	"github.com/ioshape/ioshape/internal/testutil"
)

// These tests record real I/O through the daemon's API, as the browser's
// recording form does.

type daemon struct {
	base, token string
	cmd         *exec.Cmd
	stderr      *lockedBuffer
}

func startDaemon(t *testing.T, store string, extra ...string) *daemon {
	t.Helper()
	base, c, errb := startServe(t, nil, append([]string{"--store", store, "--backend", testBackend}, extra...)...)
	d := &daemon{base: base, cmd: c, stderr: errb}
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="ioshape-token" content="([0-9a-f]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no token in the list page")
	}
	d.token = string(m[1])
	return d
}

func (d *daemon) post(t *testing.T, path string, body any) (int, server.JobStatus) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", d.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-IOShape-Token", d.token)
	req.Header.Set("Origin", d.base)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var st server.JobStatus
	json.Unmarshal(raw, &st)
	if res.StatusCode >= 300 {
		t.Logf("POST %s: %d %s", path, res.StatusCode, raw)
	}
	return res.StatusCode, st
}

// follow reads a recording's server-sent events until "done", returning
// the progress events seen and the final status.
func (d *daemon) follow(t *testing.T, id string, onProgress func(server.JobStatus)) ([]server.JobStatus, server.JobStatus) {
	t.Helper()
	res, err := http.Get(d.base + "/api/recordings/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, ct)
	}
	var progress []server.JobStatus
	sc := bufio.NewScanner(res.Body)
	kind := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var st server.JobStatus
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &st); err != nil {
				t.Fatalf("event data: %v", err)
			}
			if kind == "done" {
				return progress, st
			}
			progress = append(progress, st)
			if onProgress != nil {
				onProgress(st)
			}
		}
	}
	t.Fatalf("event stream ended without done: %v", sc.Err())
	return nil, server.JobStatus{}
}

func TestServeRecordsACommand(t *testing.T) {
	requireTracing(t)
	dir, store := workdir(t), t.TempDir()
	os.Chmod(dir, 0o755)
	file := filepath.Join(dir, "data")
	prepFile(t, file, 8)
	os.Chmod(file, 0o644)
	d := startDaemon(t, store, "--run-as", "nobody")

	// An argument vector, no shell: the ';' is dd's argument, not a command separator.
	code, st := d.post(t, "/api/recordings", map[string]any{
		"mode": "command", "label": "dd from the browser",
		"command": []string{"dd", "if=" + file, "of=/dev/null", "bs=64k", "iflag=direct", "status=none"},
	})
	if code != http.StatusCreated || !st.Running {
		t.Fatalf("start: %d %+v; daemon: %s", code, st, d.stderr.String())
	}
	if code, _ := d.post(t, "/api/recordings", map[string]any{"mode": "all", "duration": "1s"}); code != http.StatusConflict {
		t.Errorf("a second recording at once: %d, want 409", code)
	}
	progress, done := d.follow(t, st.ID, nil)
	if len(progress) == 0 || done.Running || done.Error != "" || done.Events == 0 || done.TraceURL != "/traces/"+st.ID {
		t.Fatalf("%d progress events; done %+v; daemon: %s", len(progress), done, d.stderr.String())
	}
	res, err := http.Get(d.base + "/api/traces/" + st.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a report.Analysis
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	s := a.Show
	if s.Trace.Label != "dd from the browser" || s.Trace.Target.Mode != "command" || s.Trace.ExitStatus == nil || *s.Trace.ExitStatus != 0 {
		t.Errorf("trace %+v", s.Trace)
	}
	var ddRead int64
	var ddSeen bool
	for _, p := range s.Processes {
		if p.Comm == "dd" {
			ddRead += p.SyscallReadBytes
			ddSeen = true
		}
	}
	// 8 MiB of the file, plus the few KiB the dynamic loader reads at exec.
	if !ddSeen || ddRead < 8<<20 || ddRead > 8<<20+64<<10 {
		t.Errorf("dd read %d bytes through syscalls, want %d and the loader's few KiB", ddRead, 8<<20)
	}
	// The new trace is in the list.
	res2, err := http.Get(d.base + "/api/traces")
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	var items []server.ListItem
	json.NewDecoder(res2.Body).Decode(&items)
	if len(items) != 1 || items[0].ID != st.ID || items[0].Events == 0 || items[0].BestMatch == "" {
		t.Errorf("list %+v", items)
	}
	fi, err := os.Stat(filepath.Join(store, "traces", st.ID+".iotrace"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 {
		t.Logf("trace owned by uid %d", uid)
	}
}

// Stopping the daemon finishes a recording in progress: the trace is
// complete, not a .partial.
func TestServeShutdownFinishesRecording(t *testing.T) {
	requireTracing(t)
	dir, store := workdir(t), t.TempDir()
	d := startDaemon(t, store)
	code, st := d.post(t, "/api/recordings", map[string]any{"mode": "all", "label": "until shutdown"})
	if code != http.StatusCreated {
		t.Fatalf("start: %d; daemon: %s", code, d.stderr.String())
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var cur server.JobStatus
		if res, err := http.Get(d.base + "/api/recordings/current"); err == nil {
			json.NewDecoder(res.Body).Decode(&cur)
			res.Body.Close()
		}
		if cur.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording never became ready; daemon: %s", d.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if b, err := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, "out"), "bs=256k", "count=8", "oflag=direct").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr: %s", err, d.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop within 60 s")
	}
	if _, err := os.Stat(filepath.Join(store, "traces", st.ID+".iotrace")); err != nil {
		t.Fatalf("no finished trace after shutdown: %v; stderr: %s", err, d.stderr.String())
	}
	s := showJSON(t, store, st.ID)
	if !s.Trace.Complete || s.Trace.Events == 0 {
		t.Errorf("trace after shutdown: complete=%v events=%d end=%q", s.Trace.Complete, s.Trace.Events, s.Trace.EndReason)
	}
}

// A recording whose trace file cannot be made fails with one message, and
// gives back both the recording slot (the next request is not told one is
// running) and the tracer's kernel resources (no eBPF program stays
// loaded until the garbage collector runs).
func TestServeFailedStartReleasesEverything(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	d := startDaemon(t, store)
	defer d.cmd.Process.Signal(syscall.SIGTERM)
	// The traces directory becomes a file: no trace path can be made.
	os.RemoveAll(filepath.Join(store, "traces"))
	if err := os.WriteFile(filepath.Join(store, "traces"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		code, _ := d.post(t, "/api/recordings", map[string]any{"mode": "all", "duration": "1s"})
		if code != http.StatusInternalServerError {
			t.Fatalf("attempt %d: status %d, want 500 (and never 409: the slot must be free again)", i+1, code)
		}
	}
	if testBackend == "native" {
		deadline := time.Now().Add(5 * time.Second) // the kernel frees programs shortly after the last close
		for left := tracerLeft(t); left != ""; left = tracerLeft(t) {
			if time.Now().After(deadline) {
				t.Fatalf("after the failed start: %s", left)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// A second local user can neither read a page, read the API nor start a
// recording on a root daemon — not even holding the secret, which it
// cannot read from the token file anyway; the owner signs in with the
// printed URL.
func TestServeRefusesOtherLocalUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "running a client as another user needs root")
	}
	store := storeWithTraces(t, "abc234")
	base, _, _ := startServe(t, nil, "--store", store)
	secret, err := os.ReadFile(filepath.Join(store, "serve-token"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(store, "serve-token")); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
	// A copy of this binary that user nobody may run.
	dir, err := os.MkdirTemp("", "ioshape-client-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	bin, _ := os.ReadFile(self)
	client := filepath.Join(dir, "client")
	if err := os.WriteFile(client, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(env ...string) string {
		c := exec.Command(client)
		c.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("client as nobody: %v %s", err, out)
		}
		return string(out)
	}
	reqs := strings.Join([]string{"GET " + base + "/", "GET " + base + "/api/traces", "GET " + base + "/traces/abc234",
		"GET " + base + "/?token=" + strings.TrimSpace(string(secret)), "POST " + base + "/api/recordings"}, "\n")
	for _, env := range [][]string{nil, {"IOSHAPE_TEST_BEARER=" + strings.TrimSpace(string(secret))}} {
		out := asNobody(append(env, "IOSHAPE_TEST_HTTP_CLIENT="+reqs)...)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasSuffix(line, " 403") {
				t.Errorf("as nobody (%v): %s, want 403", env, line)
			}
		}
	}
	// nobody cannot read the secret.
	c := exec.Command("cat", filepath.Join(store, "serve-token"))
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := c.CombinedOutput(); err == nil {
		t.Errorf("nobody read the token file: %s", out)
	}
	// The owner (here root, who started it) is in, through the printed URL.
	res, err := http.Get(base + "/api/traces")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the owner after signing in: %v %v", res.Status, err)
	}
	res.Body.Close()
}

// The daemon's stop button ends the command it started, and once the
// recording is over its eBPF programs and maps are closed — not left to
// the garbage collector, which kept ~40 MB of locked kernel memory.
func TestServeStopEndsCommandAndReleasesTracer(t *testing.T) {
	requireTracing(t)
	store := t.TempDir()
	d := startDaemon(t, store, "--run-as", "nobody")
	defer d.cmd.Process.Signal(syscall.SIGTERM)
	sleep, argv := uniqueSleep(t)
	code, st := d.post(t, "/api/recordings", map[string]any{"mode": "command", "command": argv})
	if code != http.StatusCreated {
		t.Fatalf("start: %d %+v", code, st)
	}
	if !sleep.started(30 * time.Second) {
		t.Fatal("the command did not start")
	}
	if code, _ := d.post(t, "/api/recordings/"+st.ID+"/stop", map[string]any{}); code != http.StatusAccepted {
		t.Fatalf("stop: %d", code)
	}
	_, done := d.follow(t, st.ID, nil)
	if done.Running || done.EndReason != "interrupted" {
		t.Errorf("done: %+v", done)
	}
	if !sleep.gone(6 * time.Second) {
		t.Error("the command outlived the daemon's stop")
	}
	if testBackend == "native" {
		deadline := time.Now().Add(5 * time.Second)
		for left := tracerLeft(t); left != ""; left = tracerLeft(t) {
			if time.Now().After(deadline) {
				t.Fatalf("after the recording: %s", left)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// A daemon shutting down ends the command it was recording.
func TestServeShutdownEndsCommand(t *testing.T) {
	requireTracing(t)
	d := startDaemon(t, t.TempDir(), "--run-as", "nobody")
	sleep, argv := uniqueSleep(t)
	if code, st := d.post(t, "/api/recordings", map[string]any{"mode": "command", "command": argv}); code != http.StatusCreated {
		t.Fatalf("start: %d %+v", code, st)
	}
	if !sleep.started(30 * time.Second) {
		t.Fatal("the command did not start")
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
	if !sleep.gone(6 * time.Second) {
		t.Error("the command outlived the daemon")
	}
}

// serve --user, as the systemd unit and the launchd plist run it: the
// named user's store, their token file (0600, theirs), and a one-line
// error for a user that does not exist.
func TestServeForANamedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "serve --user for another user needs root")
	}
	// The user's own directory (outside the test's 0700 temporary one):
	// the daemon writes there as them.
	home, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chown(home, 65534, 65534)
	store := filepath.Join(home, "nobody-store")
	c := ioshapeCmd(nil, "--store", store, "serve", "--user", "nobody", "--addr", "127.0.0.1:0")
	stdout, _ := c.StdoutPipe()
	var errb lockedBuffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	// A service's output goes to a journal or log others may read: it
	// names the token file, never the token.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.Contains(line, "token=") || !strings.Contains(line, filepath.Join(store, "serve-token")) {
		t.Fatalf("serve --user nobody printed %q (%v); stderr %s", line, err, errb.String())
	}
	fi, err := os.Stat(filepath.Join(store, "serve-token"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file uid %d mode %v, want 65534 and 0600", st.Uid, fi.Mode().Perm())
	}
	// The store the daemon made is theirs: their own import works in it.
	for _, p := range []string{store, filepath.Join(store, "traces")} {
		if fi, err := os.Stat(p); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
			t.Errorf("%s is not the user's: %v", p, err)
		}
	}
	r := ioshape(t, nil, "--store", store, "serve", "--user", "no-such-user-here", "--addr", "127.0.0.1:0")
	if r.code != 2 || !strings.Contains(singleLine(t, r.stderr), "--user: ") {
		t.Errorf("unknown user: exit %d %q", r.code, r.stderr)
	}
}
