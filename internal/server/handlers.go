package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"strings"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/webreport"
	"github.com/ioshape/ioshape/web"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.listPage)
	m.HandleFunc("GET /traces/{id}", s.reportPage)
	m.HandleFunc("GET /compare", s.comparePage)
	m.HandleFunc("GET /static/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write([]byte(web.AppJS))
	})
	m.HandleFunc("GET /api/traces", s.apiList)
	m.HandleFunc("GET /api/traces/{id}", s.apiTrace)
	m.HandleFunc("GET /api/compare", s.apiCompare)
	m.HandleFunc("GET /api/recordings/current", s.apiRecordingStatus)
	m.HandleFunc("POST /api/recordings", s.apiStartRecording)
	m.HandleFunc("POST /api/recordings/{id}/stop", s.apiStopRecording)
	m.HandleFunc("GET /api/recordings/{id}/events", s.apiRecordingEvents)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { httpError(w, http.StatusNotFound, "no such page") })
	s.mux = m
}

// apiError is every API error: {"error": "one line"}.
type apiError struct {
	Error string `json:"error"`
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(apiError{fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// trace finds the analysis for a trace ID from the URL. Only exact,
// well-formed IDs are accepted, and the file comes from the store's
// listing, so no request names a path.
func (s *Server) trace(w http.ResponseWriter, id string) (*report.Analysis, bool) {
	e, err := s.cfg.Store.ByID(id)
	if errors.Is(err, store.ErrNoTrace) {
		httpError(w, http.StatusNotFound, "no trace %q", id)
		return nil, false
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return nil, false
	}
	a, err := s.cache.get(e.Path)
	if err != nil {
		httpError(w, http.StatusUnprocessableEntity, "cannot read trace %s: %v", id, err)
		return nil, false
	}
	return a, true
}

// compareIDs parses ?ids=a,b,c: 2 to 8 distinct trace IDs.
func (s *Server) compared(w http.ResponseWriter, r *http.Request) ([]*report.Analysis, bool) {
	raw := r.URL.Query().Get("ids")
	ids := strings.Split(raw, ",")
	if raw == "" || len(ids) < 2 || len(ids) > 8 {
		httpError(w, http.StatusBadRequest, "give 2 to 8 trace IDs: ?ids=ID1,ID2")
		return nil, false
	}
	var as []*report.Analysis
	for _, id := range ids {
		a, ok := s.trace(w, id)
		if !ok {
			return nil, false
		}
		as = append(as, a)
	}
	return as, true
}

// ListItem is a trace in the daemon's list: ls's entry and its best match.
type ListItem struct {
	report.ListEntry
	BestMatch string  `json:"best_match,omitempty"`
	Score     float64 `json:"best_match_score,omitempty"`
}

// listAnalyseMax: traces up to this size are classified for the list on
// first view; larger ones once their report has been opened.
const listAnalyseMax = 64 << 20

func (s *Server) list() ([]ListItem, error) {
	entries, err := s.cfg.Store.List()
	if err != nil {
		return nil, err
	}
	items := make([]ListItem, 0, len(entries))
	for _, e := range entries {
		it := ListItem{ListEntry: report.NewListEntry(e)}
		if e.Err == nil && !e.Partial {
			a := s.cache.peek(e.Path)
			if a == nil {
				if fi, err := os.Stat(e.Path); err == nil && fi.Size() <= listAnalyseMax {
					a, _ = s.cache.get(e.Path)
				}
			}
			if a != nil && a.Class != nil && len(a.Class.Matches) > 0 {
				it.BestMatch, it.Score = a.Class.Matches[0].Name, a.Class.Matches[0].Score
			}
		}
		items = append(items, it)
	}
	return items, nil
}

func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	items, err := s.list()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return
	}
	writeJSON(w, http.StatusOK, items)
}

func (s *Server) apiTrace(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.trace(w, r.PathValue("id")); ok {
		writeJSON(w, http.StatusOK, a)
	}
}

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	if as, ok := s.compared(w, r); ok {
		writeJSON(w, http.StatusOK, report.Compare(as))
	}
}

func writePage(w http.ResponseWriter, p *webreport.Page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	p.Write(w)
}

func (s *Server) reportPage(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.trace(w, r.PathValue("id")); ok {
		writePage(w, webreport.Report(a, webreport.Options{Nav: true}))
	}
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	if as, ok := s.compared(w, r); ok {
		writePage(w, webreport.Compare(as, report.Compare(as), webreport.Options{Nav: true}))
	}
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	items, err := s.list()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	listTemplate.Execute(w, map[string]any{
		"Items": items, "Token": s.token, "CanRecord": s.cfg.CanRecord, "CanRunCommands": s.cfg.RunAs.Set,
		"CSS": template.CSS(web.CSS), "Store": s.cfg.Store.Dir, "Job": s.status(),
	})
}

var listTemplate = template.Must(template.New("list").Funcs(template.FuncMap{
	"bytes": report.Bytes, "count": report.Count, "micros": report.Micros,
	"secs": func(f float64) string { return report.Micros(f * 1e6) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="ioshape-token" content="{{.Token}}">
<title>Traces — ioshape</title>
<link rel="icon" href="data:,">
<style>{{.CSS}}</style>
<script src="/static/app.js" defer></script>
</head>
<body>
<header class="top"><a class="brand" href="/">ioshape</a><a href="/">traces</a></header>
<main>
<h1>Traces</h1>
<p class="sub">{{len .Items}} in {{.Store}}. Click a column to sort; tick two or more to compare.</p>
<p><button id="compare" disabled>Compare selected</button></p>
<table id="traces">
<thead><tr><th></th><th class="sortable" data-key="label">label</th><th class="sortable" data-key="id">ID</th><th class="sortable" data-key="target">target</th><th class="sortable" data-key="start">date</th><th class="sortable num" data-key="duration">duration</th><th class="sortable num" data-key="events">events</th><th class="sortable num" data-key="lost">lost</th><th class="sortable" data-key="match">best match</th></tr></thead>
<tbody>
{{range .Items}}<tr data-id="{{.ID}}" data-label="{{.Label}}" data-target="{{.Target}}" data-start="{{.Start.Unix}}" data-duration="{{.DurationS}}" data-events="{{.Events}}" data-lost="{{.LostEvents}}" data-match="{{.BestMatch}}">
<td><input type="checkbox" class="pick" value="{{.ID}}" aria-label="select {{.ID}}"></td>
<td>{{.Label}}</td><td><a href="/traces/{{.ID}}">{{.ID}}</a></td><td>{{.Target}}</td><td>{{.Start.UTC.Format "2006-01-02 15:04:05"}}</td>
<td class="num">{{secs .DurationS}}</td><td class="num">{{count .Events}}</td><td class="num">{{if .LostEvents}}<b>{{count .LostEvents}}</b>{{else}}0{{end}}</td>
<td>{{if .BestMatch}}{{.BestMatch}} <span class="muted">({{printf "%.2f" .Score}})</span>{{else if ne .Status "ok"}}<span class="muted">{{.Status}}</span>{{else}}<span class="muted">open to classify</span>{{end}}</td></tr>
{{else}}<tr><td colspan="9">No traces yet.</td></tr>
{{end}}</tbody>
</table>
{{if .CanRecord}}
<h2>Record</h2>
<form class="record" id="record">
<label for="mode">what</label>
<select id="mode" name="mode">{{if .CanRunCommands}}<option value="command">a command</option>{{end}}<option value="pid">processes by pid</option><option value="name">processes by name</option><option value="all">the whole system</option></select>
<label for="target">command, pids or names</label>
<input id="target" name="target" placeholder="{{if .CanRunCommands}}cp big.mov /mnt/x/ — split on spaces, no shell{{else}}1234 5678{{end}}">
<label for="duration">stop after</label>
<input id="duration" name="duration" placeholder="10s (empty: when the target ends, or Stop)">
<label for="launch">app launch</label>
<span><input type="checkbox" id="launch" name="launch"> stop once I/O has been quiet for <input id="quiet" name="quiet" value="2s" size="5"> <input type="checkbox" id="cold" name="cold"> drop the page cache first</span>
<label for="label">label</label>
<input id="label" name="label">
<span></span>
<span><button type="submit" id="start">Start recording</button> <button type="button" id="stop" disabled>Stop</button></span>
</form>
<p id="live" aria-live="polite">{{with .Job}}{{if .Running}}recording {{.ID}}…{{end}}{{end}}</p>
{{if not .CanRunCommands}}<p class="sub">Commands are run as the user who started the daemon with sudo; this daemon has none, so only pid, name and whole-system recordings are offered (start it with sudo from your account, or with --run-as USER).</p>{{end}}
{{else}}
<p class="sub">Recording from the browser needs the daemon to run as root (sudo ioshape serve).</p>
{{end}}
</main>
</body>
</html>
`))
