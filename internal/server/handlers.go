package server

import (
	"context"
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
func (s *Server) trace(w http.ResponseWriter, r *http.Request, id string) (*report.Analysis, bool) {
	e, err := s.cfg.Store.ByID(id)
	if errors.Is(err, store.ErrNoTrace) {
		httpError(w, http.StatusNotFound, "no trace %q", id)
		return nil, false
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return nil, false
	}
	a, err := s.cache.get(r.Context(), e.Path)
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
		a, ok := s.trace(w, r, id)
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

func (s *Server) list(ctx context.Context) ([]ListItem, error) {
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
					a, _ = s.cache.get(ctx, e.Path)
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
	items, err := s.list(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return
	}
	writeJSON(w, http.StatusOK, items)
}

func (s *Server) apiTrace(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.trace(w, r, r.PathValue("id")); ok {
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
	if a, ok := s.trace(w, r, r.PathValue("id")); ok {
		writePage(w, webreport.Report(a, webreport.Options{Nav: true, Nonce: nonceOf(r)}))
	}
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	if as, ok := s.compared(w, r); ok {
		writePage(w, webreport.Compare(as, report.Compare(as), webreport.Options{Nav: true, Nonce: nonceOf(r)}))
	}
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	items, err := s.list(r.Context())
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

// listTemplate is web/html/list.html, parsed once.
var listTemplate = template.Must(template.New("list.html").Funcs(template.FuncMap{
	"bytes": report.Bytes, "count": report.Count, "micros": report.Micros,
	"secs": func(f float64) string { return report.Micros(f * 1e6) },
}).ParseFS(web.HTML, "html/list.html"))
