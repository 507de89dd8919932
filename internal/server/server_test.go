package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracer"
)

const port = 7878

// newTestServer serves a store holding two copies of a real trace.
func newTestServer(t *testing.T, cfg Config) (*Server, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../testdata/traces/cp-cat-dd.iotrace")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"abc234", "xyz789"}
	for _, id := range ids {
		if err := os.WriteFile(filepath.Join(dir, "traces", id+store.Ext), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A secret beside the store that traversal would reach.
	os.WriteFile(filepath.Join(dir, "secret.iotrace"), data, 0o644)
	cfg.Store = store.Open(dir)
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:7878"
	}
	s := New(cfg, port)
	t.Cleanup(s.Shutdown)
	return s, ids
}

type call struct {
	method, path, body string
	host               string
	header             map[string]string
}

func do(t *testing.T, s *Server, c call) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	r.Host = "127.0.0.1:7878"
	if c.host != "" {
		r.Host = c.host
	}
	for k, v := range c.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("status %d without a JSON error: %q", w.Code, w.Body.String())
	}
	if strings.Contains(e.Error, "\n") {
		t.Fatalf("error is not one line: %q", e.Error)
	}
	return e.Error
}

func TestPagesAndAPI(t *testing.T) {
	s, ids := newTestServer(t, Config{})
	w := do(t, s, call{method: "GET", path: "/api/traces"})
	if w.Code != 200 {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	var items []ListItem
	if err := json.Unmarshal(w.Body.Bytes(), &items); err != nil || len(items) != 2 {
		t.Fatalf("list: %v %s", err, w.Body)
	}
	for _, it := range items {
		if it.BestMatch == "" || it.Events == 0 {
			t.Errorf("list item without a best match or events: %+v", it)
		}
	}
	w = do(t, s, call{method: "GET", path: "/"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `href="/traces/`+ids[0]+`"`) || !strings.Contains(w.Body.String(), s.Token()) {
		t.Fatalf("list page: %d", w.Code)
	}
	if strings.Contains(w.Body.String(), `id="record"`) {
		t.Error("the list offers recording although the daemon cannot record")
	}
	w = do(t, s, call{method: "GET", path: "/traces/" + ids[0]})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `id="latency"`) {
		t.Fatalf("report page: %d", w.Code)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	w = do(t, s, call{method: "GET", path: "/compare?ids=" + ids[0] + "," + ids[1]})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `id="cmp_sizes"`) {
		t.Fatalf("compare page: %d", w.Code)
	}
	w = do(t, s, call{method: "GET", path: "/api/compare?ids=" + ids[0] + "," + ids[1]})
	var cmp struct {
		Traces []json.RawMessage `json:"traces"`
		Rows   []json.RawMessage `json:"rows"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &cmp) != nil || len(cmp.Traces) != 2 || len(cmp.Rows) < 10 {
		t.Fatalf("compare API: %d %s", w.Code, w.Body)
	}
	w = do(t, s, call{method: "GET", path: "/api/traces/" + ids[1]})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"classification"`) {
		t.Fatalf("trace API: %d", w.Code)
	}
	for _, bad := range []string{"/compare?ids=" + ids[0], "/api/compare?ids=", "/api/compare?ids=a,b,c,d,e,f,g,h,i"} {
		if w := do(t, s, call{method: "GET", path: bad}); w.Code != 400 {
			t.Errorf("%s: %d, want 400", bad, w.Code)
		}
	}
}

// A page on evil.example that rebinds its name to 127.0.0.1 still sends
// its own name in Host.
func TestWrongHostRefused(t *testing.T) {
	s, ids := newTestServer(t, Config{})
	for _, host := range []string{"evil.example:7878", "evil.example", "127.0.0.1:9999", "localhost.evil.example:7878", ""} {
		w := do(t, s, call{method: "GET", path: "/api/traces/" + ids[0], host: host})
		if host == "" {
			// httptest fills in example.com for an empty Host.
			continue
		}
		if w.Code != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: %d, want 421", host, w.Code)
		}
		errorOf(t, w)
	}
	for _, host := range []string{"127.0.0.1:7878", "localhost:7878", "LOCALHOST:7878", "[::1]:7878"} {
		if w := do(t, s, call{method: "GET", path: "/api/traces", host: host}); w.Code != 200 {
			t.Errorf("Host %q: %d, want 200", host, w.Code)
		}
	}
	s2, _ := newTestServer(t, Config{Addr: "0.0.0.0:7878", AllowHosts: []string{"box.lan"}})
	if w := do(t, s2, call{method: "GET", path: "/api/traces", host: "box.lan:7878"}); w.Code != 200 {
		t.Errorf("allowed host refused: %d", w.Code)
	}
}

func TestTraversalAndBadIDs(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	for _, p := range []string{
		"/traces/..%2fsecret", "/traces/%2e%2e%2fsecret", "/api/traces/..%2F..%2Fetc%2Fpasswd", "/api/traces/secret",
		"/api/traces/abc23", "/api/traces/abc2345", "/api/traces/ABC234", "/traces/abc234%00", "/api/compare?ids=abc234,../secret",
		"/api/traces/%2Fetc%2Fpasswd", "/traces/abc234.iotrace",
	} {
		w := do(t, s, call{method: "GET", path: p})
		if w.Code != 404 && w.Code != 400 {
			t.Errorf("%s: %d, want 404 or 400", p, w.Code)
			continue
		}
		if strings.Contains(w.Body.String(), "root:") || strings.Contains(w.Body.String(), "series") {
			t.Errorf("%s leaked data", p)
		}
	}
	// The router cleans dot segments by redirecting, never by serving.
	if w := do(t, s, call{method: "GET", path: "/traces/../../etc/passwd"}); w.Code == 200 {
		t.Errorf("dot segments served: %d", w.Code)
	}
}

func TestStateChangesNeedTokenAndSameOrigin(t *testing.T) {
	s, _ := newTestServer(t, Config{CanRecord: true})
	json := map[string]string{"Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Content-Type": "application/json"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	body := `{"mode":"all","duration":"1s"}`
	cases := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", json, 403},
		{"wrong token", with(map[string]string{"X-IOShape-Token": strings.Repeat("0", 48)}), 403},
		{"token in another case", with(map[string]string{"X-IOShape-Token": strings.ToUpper(s.Token())}), 403},
		{"cross origin", with(map[string]string{"X-IOShape-Token": s.Token(), "Origin": "http://evil.example"}), 403},
		{"cross site", with(map[string]string{"X-IOShape-Token": s.Token(), "Sec-Fetch-Site": "cross-site"}), 403},
	}
	for _, c := range cases {
		w := do(t, s, call{method: "POST", path: "/api/recordings", body: body, header: c.header})
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
		errorOf(t, w)
	}
	if w := do(t, s, call{method: "POST", path: "/api/recordings/abc234/stop", header: json}); w.Code != 403 {
		t.Errorf("stop without token: %d", w.Code)
	}
	if w := do(t, s, call{method: "PUT", path: "/api/recordings", header: json}); w.Code != 405 {
		t.Errorf("PUT: %d", w.Code)
	}
	// GETs change nothing, so they need no token; a form post can't reach the API.
	if w := do(t, s, call{method: "POST", path: "/api/recordings", body: "mode=all", header: map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-IOShape-Token": s.Token()}}); w.Code != 415 {
		t.Errorf("form post: %d, want 415", w.Code)
	}
}

func TestRecordingRequestValidation(t *testing.T) {
	s, _ := newTestServer(t, Config{CanRecord: true})
	h := map[string]string{"Content-Type": "application/json", "X-IOShape-Token": s.Token(), "Origin": "http://127.0.0.1:7878"}
	for _, c := range []struct{ body, want string }{
		{`{"mode":"command","command":["cp","a","b"]}`, "no user to run commands as"},
		{`{"mode":"shell","command":["sh"]}`, "mode must be"},
		{`{"mode":"pid","pids":[-1]}`, "not a process ID"},
		{`{"mode":"pid","pids":[]}`, "pids: 1 to"},
		{`{"mode":"name","names":["../x"]}`, "names:"},
		{`{"mode":"all","duration":"forever"}`, "duration must be"},
		{`{"mode":"all","duration":"48h"}`, "duration must be"},
		{`{"mode":"all","label":"a\nb"}`, "label"},
		{`{"mode":"all","extra":1}`, "unknown field"},
		{`{"mode":`, "bad request body"},
	} {
		w := do(t, s, call{method: "POST", path: "/api/recordings", body: c.body, header: h})
		if w.Code != 400 || !strings.Contains(errorOf(t, w), c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.body, w.Code, w.Body, c.want)
		}
	}
	big := `{"mode":"all","label":"` + strings.Repeat("x", 2*maxBody) + `"}`
	if w := do(t, s, call{method: "POST", path: "/api/recordings", body: big, header: h}); w.Code != 413 {
		t.Errorf("oversized body: %d, want 413", w.Code)
	}
	// A user to run as: argument vectors pass validation (the tracer
	// itself then needs root, which Prepare checks).
	s2, _ := newTestServer(t, Config{CanRecord: true, RunAs: tracer.User{UID: 65534, GID: 65534, Set: true}})
	h["X-IOShape-Token"] = s2.Token()
	w := do(t, s2, call{method: "POST", path: "/api/recordings", body: `{"mode":"command","command":["sh","-c","rm -rf /; echo \u0000"]}`, header: h})
	if w.Code != 400 || !strings.Contains(errorOf(t, w), "without NUL") {
		t.Errorf("NUL in argument: %d %s", w.Code, w.Body)
	}
}

func TestRecordingNeedsRootDaemon(t *testing.T) {
	s, _ := newTestServer(t, Config{CanRecord: false})
	h := map[string]string{"Content-Type": "application/json", "X-IOShape-Token": s.Token()}
	w := do(t, s, call{method: "POST", path: "/api/recordings", body: `{"mode":"all","duration":"1s"}`, header: h})
	if w.Code != 403 || !strings.Contains(errorOf(t, w), "root") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if w := do(t, s, call{method: "GET", path: "/api/recordings/abc234/events"}); w.Code != 404 {
		t.Errorf("events of no recording: %d", w.Code)
	}
}

func TestStaticScript(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	w := do(t, s, call{method: "GET", path: "/static/app.js"})
	b, _ := io.ReadAll(w.Body)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") || !strings.Contains(string(b), "X-IOShape-Token") {
		t.Fatalf("app.js: %d %s", w.Code, w.Header())
	}
	if w := do(t, s, call{method: "GET", path: "/static/../../etc/passwd"}); w.Code == 200 {
		t.Errorf("static traversal served")
	}
}

// Every route the daemon serves is in docs/serve-api.md.
func TestAPIDocCoversRoutes(t *testing.T) {
	src, err := os.ReadFile("handlers.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(testutil.Repo(t, "docs", "serve-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`HandleFunc\("(GET|POST) ([^"]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in handlers.go", len(routes))
	}
	for _, r := range routes {
		path := strings.NewReplacer("{$}", "", "{id}", "ID").Replace(r[2])
		if !strings.Contains(string(doc), "`"+r[1]+" "+path) {
			t.Errorf("docs/serve-api.md does not document %s %s", r[1], path)
		}
	}
}
