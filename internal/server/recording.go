package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ioshape/ioshape/internal/recorder"
	"github.com/ioshape/ioshape/internal/tracer"
)

// RecordRequest is the body of POST /api/recordings. A command is an
// argument vector, exec'd as is — there is no shell.
type RecordRequest struct {
	Mode     string   `json:"mode"` // command, pid, name or all
	Command  []string `json:"command,omitempty"`
	Pids     []int    `json:"pids,omitempty"`
	Names    []string `json:"names,omitempty"`
	Duration string   `json:"duration,omitempty"` // Go duration: "10s"
	Launch   bool     `json:"launch,omitempty"`
	Quiet    string   `json:"quiet,omitempty"`
	Cold     bool     `json:"cold,omitempty"`
	Label    string   `json:"label,omitempty"`
	// Summary records histograms in the kernel, not each I/O (record
	// --summary).
	Summary bool `json:"summary,omitempty"`
}

// Limits on what a request may ask for.
const (
	maxArgs      = 256
	maxArgBytes  = 4096
	maxTargets   = 64
	maxLabel     = 200
	maxNameBytes = 64
	maxDuration  = 24 * time.Hour
)

func (s *Server) target(req RecordRequest) (tracer.Target, error) {
	var t tracer.Target
	parse := func(name, v string) (time.Duration, error) {
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > maxDuration {
			return 0, fmt.Errorf("%s must be a duration from 0 to 24h, like 10s", name)
		}
		return d, nil
	}
	var err error
	if t.Duration, err = parse("duration", req.Duration); err != nil {
		return t, err
	}
	if t.Quiet, err = parse("quiet", req.Quiet); err != nil {
		return t, err
	}
	if req.Launch && t.Quiet == 0 {
		t.Quiet = 2 * time.Second
	}
	t.Launch, t.Cold = req.Launch, req.Cold
	if !req.Launch {
		t.Quiet = 0
	}
	if len(req.Label) > maxLabel || !utf8.ValidString(req.Label) || strings.ContainsAny(req.Label, "\x00\n\r") {
		return t, fmt.Errorf("label: at most %d characters on one line", maxLabel)
	}
	switch req.Mode {
	case "command":
		if !s.cfg.RunAs.Set {
			return t, errors.New("this daemon has no user to run commands as: start it with sudo from your account, or with --run-as USER")
		}
		if len(req.Command) == 0 || len(req.Command) > maxArgs || req.Command[0] == "" {
			return t, fmt.Errorf("command: 1 to %d arguments, the first the program", maxArgs)
		}
		for _, a := range req.Command {
			if len(a) > maxArgBytes || strings.ContainsRune(a, 0) || !utf8.ValidString(a) {
				return t, fmt.Errorf("command: arguments of at most %d bytes, without NUL", maxArgBytes)
			}
		}
		t.Command = req.Command
	case "pid":
		if len(req.Pids) == 0 || len(req.Pids) > maxTargets {
			return t, fmt.Errorf("pids: 1 to %d", maxTargets)
		}
		for _, p := range req.Pids {
			if p <= 0 || p > 1<<22 {
				return t, fmt.Errorf("pids: %d is not a process ID", p)
			}
		}
		t.Pids = req.Pids
	case "name":
		if len(req.Names) == 0 || len(req.Names) > maxTargets {
			return t, fmt.Errorf("names: 1 to %d", maxTargets)
		}
		for _, n := range req.Names {
			if n == "" || len(n) > maxNameBytes || strings.ContainsAny(n, "/\x00\n") {
				return t, fmt.Errorf("names: process names of 1 to %d bytes, without / or newlines", maxNameBytes)
			}
		}
		t.Names = req.Names
	case "all":
		t.All = true
	default:
		return t, fmt.Errorf("mode must be command, pid, name or all, not %q", req.Mode)
	}
	return t, t.Validate()
}

// job is a recording started from the browser.
type job struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	Path  string `json:"-"`

	mu       sync.Mutex
	cancel   context.CancelFunc
	progress tracer.Progress
	done     bool
	err      string
	result   tracer.Result
}

// JobStatus is what the browser is told about a recording.
type JobStatus struct {
	ID         string  `json:"id"`
	Label      string  `json:"label,omitempty"`
	Running    bool    `json:"running"`
	Ready      bool    `json:"ready"`
	ElapsedS   float64 `json:"elapsed_s"`
	Events     int64   `json:"events"`
	Bytes      int64   `json:"bytes"`
	LostEvents int64   `json:"lost_events"`
	EndReason  string  `json:"end_reason,omitempty"`
	Error      string  `json:"error,omitempty"`
	TraceURL   string  `json:"trace_url,omitempty"`
}

func (j *job) status() JobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := JobStatus{ID: j.ID, Label: j.Label, Running: !j.done, Ready: j.progress.Ready, ElapsedS: j.progress.Elapsed.Seconds(),
		Events: j.progress.Events, Bytes: j.progress.Bytes, LostEvents: j.progress.Lost, Error: j.err}
	if j.done {
		st.Events, st.LostEvents, st.EndReason = j.result.Events, recorder.Lost(j.result), j.result.EndReason
		st.ElapsedS = j.result.Duration.Seconds()
		if j.result.Events > 0 {
			st.TraceURL = "/traces/" + j.ID
		}
	}
	return st
}

func (s *Server) status() *JobStatus {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil {
		return nil
	}
	st := j.status()
	return &st
}

func (s *Server) apiStartRecording(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.CanRecord {
		httpError(w, http.StatusForbidden, "recording needs the daemon to run as root (sudo ioshape serve)")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "send JSON (Content-Type: application/json)")
		return
	}
	var req RecordRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes", maxBody)
			return
		}
		httpError(w, http.StatusBadRequest, "bad request body: %v", err)
		return
	}
	t, err := s.target(req)
	if err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// Claim the one recording slot, then prepare without holding the lock:
	// loading a tracer takes a while, and the list page needs the lock.
	j := &job{Label: req.Label}
	s.mu.Lock()
	prev := s.job
	if prev != nil && prev.status().Running {
		s.mu.Unlock()
		httpError(w, http.StatusConflict, "a recording is already running (%s): stop it first", prev.ID)
		return
	}
	s.job = j
	s.mu.Unlock()
	giveBack := func() {
		s.mu.Lock()
		if s.job == j {
			s.job = prev
		}
		s.mu.Unlock()
	}
	cfg := tracer.Config{Target: t, Backend: s.cfg.Backend, RunAs: s.cfg.RunAs, MapKeys: 1 << 16, PerfPages: 1 << 10, Summary: req.Summary,
		Progress: func(p tracer.Progress) { j.mu.Lock(); j.progress = p; j.mu.Unlock() }}
	rec, err := recorder.Prepare(recorder.Request{Tracer: cfg, Label: req.Label, Owner: s.cfg.Owner, Store: s.cfg.Store,
		ToolVersion: s.cfg.ToolVersion, CommandLine: append([]string{"ioshape serve: record"}, req.Command...)})
	if err != nil {
		giveBack()
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	id, path, err := s.cfg.Store.NewPath()
	if err != nil {
		rec.Close() // the tracer's kernel resources, now
		giveBack()
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	j.mu.Lock()
	j.ID, j.Path = id, path
	j.mu.Unlock()
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	j.cancel = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := rec.Run(ctx, id, path)
		if res.Events > 0 && s.ctx.Err() == nil {
			// Classified now, so the list shows its best match.
			a, _, _ := s.cache.get(s.ctx, path)
			s.noteBestMatch(id, a)
		}
		j.mu.Lock()
		j.done, j.result = true, res
		if err != nil {
			j.err = err.Error()
		}
		j.mu.Unlock()
		s.cfg.Logf("recording %s ended (%s): %d events, %d lost", id, res.EndReason, res.Events, recorder.Lost(res))
	}()
	s.cfg.Logf("recording %s started from the browser: %s", id, t.Mode())
	writeJSON(w, http.StatusCreated, j.status())
}

func (s *Server) currentJob(w http.ResponseWriter, id string) *job {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil || j.status().ID != id {
		httpError(w, http.StatusNotFound, "no recording %q", id)
		return nil
	}
	return j
}

func (s *Server) apiStopRecording(w http.ResponseWriter, r *http.Request) {
	j := s.currentJob(w, r.PathValue("id"))
	if j == nil {
		return
	}
	s.mu.Lock()
	cancel := j.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	writeJSON(w, http.StatusAccepted, j.status())
}

func (s *Server) apiRecordingStatus(w http.ResponseWriter, r *http.Request) {
	st := s.status()
	if st == nil {
		st = &JobStatus{} // none yet: not running
	}
	writeJSON(w, http.StatusOK, st)
}

// apiRecordingEvents streams a recording's progress as server-sent
// events: "progress" twice a second, then one "done".
func (s *Server) apiRecordingEvents(w http.ResponseWriter, r *http.Request) {
	j := s.currentJob(w, r.PathValue("id"))
	if j == nil {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		st := j.status()
		kind := "progress"
		if !st.Running {
			kind = "done"
		}
		b, _ := json.Marshal(st)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b); err != nil {
			return
		}
		fl.Flush()
		if kind == "done" {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
