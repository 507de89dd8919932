package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/ioshape/ioshape/internal/report"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/units"
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

// entry finds a trace in the store by its exact ID, answering the request
// itself when there is none.
func (s *Server) entry(w http.ResponseWriter, id string) (path string, ok bool) {
	path, err := s.cfg.Store.PathByID(id)
	if errors.Is(err, store.ErrNoTrace) {
		httpError(w, http.StatusNotFound, "no trace %q", id)
		return "", false
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return "", false
	}
	return path, true
}

// trace finds the analysis for a trace ID from the URL. Only exact,
// well-formed IDs are accepted, and the file comes from the store's
// listing, so no request names a path.
func (s *Server) trace(w http.ResponseWriter, r *http.Request, id string) (*report.Analysis, bool) {
	path, ok := s.entry(w, id)
	if !ok {
		return nil, false
	}
	a, fresh, err := s.cache.get(r.Context(), path)
	if err != nil {
		httpError(w, http.StatusUnprocessableEntity, "cannot read trace %s: %v", id, err)
		return nil, false
	}
	if fresh {
		s.noteBestMatch(id, a) // once per analysis, not per view
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

// ListItem is a trace in the daemon's list: its summary from the store's
// index, best match included once it has been classified.
type ListItem = store.Summary

// pageSize is how many traces a list page shows.
const pageSize = 200

// list reads one page of the store's index — never a trace, never an
// analysis — holding only that page. more says a next page exists.
func (s *Server) list(offset, limit int) (items []ListItem, more bool, err error) {
	n := 0
	err = s.cfg.Store.Each(func(sm store.Summary) bool {
		n++
		switch {
		case n <= offset:
			return true
		case len(items) == limit:
			more = true
			return false
		}
		items = append(items, sm)
		return true
	})
	return items, more, err
}

// intParam reads a non-negative integer query parameter.
func intParam(r *http.Request, name string, def, max int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > max {
		return 0, false
	}
	return n, true
}

func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	offset, ok1 := intParam(r, "offset", 0, 1<<30)
	limit, ok2 := intParam(r, "limit", 1000, 10000)
	if !ok1 || !ok2 {
		httpError(w, http.StatusBadRequest, "offset and limit must be whole numbers (limit at most 10000)")
		return
	}
	items, _, err := s.list(offset, limit)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return
	}
	if items == nil {
		items = []ListItem{}
	}
	writeJSON(w, http.StatusOK, items)
}

// noteBestMatch keeps a classified trace's best match in the store's
// index, for the list.
func (s *Server) noteBestMatch(id string, a *report.Analysis) {
	if a != nil && a.Class != nil && len(a.Class.Matches) > 0 {
		m := a.Class.Matches[0]
		e, err := s.cfg.Store.ByID(id)
		if err == nil {
			err = s.cfg.Store.SetBestMatch(id, e.Meta, m.Name, m.Score)
		}
		if err != nil {
			s.cfg.Logf("cannot note %s's best match in the index: %v", id, err)
		}
	}
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
	id := r.PathValue("id")
	path, ok := s.entry(w, id)
	if !ok {
		return
	}
	page, a, fresh, err := s.cache.page(r.Context(), path, func(a *report.Analysis) []byte {
		s.renders.Add(1)
		var b bytes.Buffer
		webreport.Report(a, webreport.Options{Nav: true, Nonce: pageNonce}).Write(&b)
		return b.Bytes()
	})
	if err != nil {
		httpError(w, http.StatusUnprocessableEntity, "cannot read trace %s: %v", id, err)
		return
	}
	if fresh {
		s.noteBestMatch(id, a)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(bytes.ReplaceAll(page, []byte(pageNonce), []byte(nonceOf(r))))
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	if as, ok := s.compared(w, r); ok {
		writePage(w, webreport.Compare(as, report.Compare(as), webreport.Options{Nav: true, Nonce: nonceOf(r)}))
	}
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	page, ok := intParam(r, "page", 0, 1<<20)
	if !ok {
		httpError(w, http.StatusBadRequest, "page must be a whole number")
		return
	}
	items, more, err := s.list(page*pageSize, pageSize)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot read the store: %v", err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	data := map[string]any{
		"Items": items, "Token": s.token, "CanRecord": s.cfg.CanRecord, "CanRunCommands": s.cfg.RunAs.Set,
		"CSS": template.CSS(web.CSS), "Store": s.cfg.Store.Dir, "Job": s.status(),
		"Page": page, "From": page*pageSize + 1, "More": more,
	}
	if page > 0 {
		data["Prev"] = page - 1
	}
	if more {
		data["Next"] = page + 1
	}
	listTemplate.Execute(w, data)
}

// listTemplate is web/html/list.html, parsed once.
var listTemplate = template.Must(template.New("list.html").Funcs(template.FuncMap{
	"bytes": units.Bytes, "count": units.Count, "micros": units.Micros,
	"add": func(a ...int) int {
		t := 0
		for _, v := range a {
			t += v
		}
		return t
	},
	"secs": func(f float64) string { return units.Micros(f * 1e6) },
}).ParseFS(web.HTML, "html/list.html"))
