package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/tracer"
)

// The test binary doubles as ioshape: with IOSHAPE_AS_MAIN=1 it runs the
// command line, and as bpftrace's child it is the recorder's helper. So the
// tests drive the real program, signals and all.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == tracer.HelperCommand {
		if err := tracer.RunHelper(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	if urls := os.Getenv("IOSHAPE_TEST_HTTP_CLIENT"); urls != "" {
		os.Exit(httpClientMain(urls))
	}
	if os.Getenv("IOSHAPE_AS_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if file := os.Getenv("IOSHAPE_TEST_MAXRSS"); file != "" {
		os.Exit(measureMain(file))
	}
	code := m.Run()
	if plainDir != "" {
		os.RemoveAll(plainDir)
	}
	os.Exit(code)
}

// measureMain runs ioshape with this process's arguments as its child and
// writes the child's peak resident memory (KiB) to file. A child of the
// test process itself would not do: Linux carries a process's peak across
// exec from the memory it was forked from, and the tests that measure
// hold hundreds of megabytes of crafted input; this process, freshly
// executed, is small when it forks.
func measureMain(file string) int {
	c := exec.Command(os.Args[0], os.Args[1:]...)
	if plain := os.Getenv("IOSHAPE_TEST_PLAIN"); plain != "" {
		c = exec.Command(plain, os.Args[1:]...) // see plainBinary
	}
	c.Env = append(os.Environ(), "IOSHAPE_AS_MAIN=1", "IOSHAPE_TEST_MAXRSS=")
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	if c.ProcessState == nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 125
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	os.WriteFile(file, []byte(strconv.FormatInt(int64(ru.Maxrss), 10)), 0o644)
	return c.ProcessState.ExitCode()
}

type result struct {
	stdout, stderr string
	code           int
}

func ioshapeCmd(env []string, args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(append(os.Environ(), "IOSHAPE_AS_MAIN=1"), env...)
	// A traced command that outlives the recording (an app launch) keeps
	// the output pipes open; don't wait for it.
	c.WaitDelay = 3 * time.Second
	return c
}

// ioshape runs the program to completion.
func ioshape(t *testing.T, env []string, args ...string) result {
	t.Helper()
	c := ioshapeCmd(env, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func showJSON(t *testing.T, store, trace string, extra ...string) *report.Show {
	t.Helper()
	r := ioshape(t, nil, append([]string{"--store", store, "show", "--json", trace}, extra...)...)
	if r.code != 0 {
		t.Fatalf("show failed (%d): %s", r.code, r.stderr)
	}
	var s report.Show
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.stdout)
	}
	return &s
}

func singleLine(t *testing.T, stderr string) string {
	t.Helper()
	s := strings.TrimRight(stderr, "\n")
	if strings.Contains(s, "\n") || !strings.HasPrefix(s, "ioshape: ") {
		t.Fatalf("want one line starting 'ioshape: ', got %q", stderr)
	}
	if strings.Contains(s, "goroutine") || strings.Contains(s, "panic") {
		t.Fatalf("stack trace in error: %q", stderr)
	}
	return s
}

// httpClientMain makes requests as whatever user runs it (tests run a copy
// of this binary as another local user) and prints "METHOD URL STATUS" for
// each: "GET URL" or "POST URL" entries separated by newlines, with the
// bearer token from IOSHAPE_TEST_BEARER if set.
func httpClientMain(spec string) int {
	for _, line := range strings.Split(spec, "\n") {
		method, url, _ := strings.Cut(line, " ")
		req, err := http.NewRequest(method, url, strings.NewReader(`{"mode":"all","duration":"1s"}`))
		if err != nil {
			fmt.Println(line, "error", err)
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		if b := os.Getenv("IOSHAPE_TEST_BEARER"); b != "" {
			req.Header.Set("Authorization", "Bearer "+b)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(line, "error", err)
			continue
		}
		res.Body.Close()
		fmt.Println(line, res.StatusCode)
	}
	return 0
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
