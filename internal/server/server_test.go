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
	"sync"
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
	anonymous          bool // without the owner's session cookie
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
	if !c.anonymous {
		r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: s.session})
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
	// The list reads the index and classifies nothing: best matches come
	// once a trace has been classified (its report opened).
	for _, it := range items {
		if it.BestMatch != "" || it.Events == 0 {
			t.Errorf("list item classified before anything asked, or without events: %+v", it)
		}
	}
	if w := do(t, s, call{method: "GET", path: "/api/traces/" + ids[0]}); w.Code != 200 {
		t.Fatalf("trace API: %d", w.Code)
	}
	w = do(t, s, call{method: "GET", path: "/api/traces"})
	items = nil
	json.Unmarshal(w.Body.Bytes(), &items)
	for _, it := range items {
		if (it.ID == ids[0]) != (it.BestMatch != "") {
			t.Errorf("after opening %s's report: %+v", ids[0], it)
		}
	}
	if w := do(t, s, call{method: "GET", path: "/api/traces?limit=1&offset=1"}); w.Code != 200 || strings.Count(w.Body.String(), `"id"`) != 1 {
		t.Errorf("a page of the list: %d %s", w.Code, w.Body)
	}
	if w := do(t, s, call{method: "GET", path: "/api/traces?limit=-1"}); w.Code != 400 {
		t.Errorf("a bad limit: %d", w.Code)
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

// Every route the daemon serves is in docs/serve.md.
func TestAPIDocCoversRoutes(t *testing.T) {
	src, err := os.ReadFile("handlers.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(testutil.Repo(t, "docs", "serve.md"))
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
			t.Errorf("docs/serve.md does not document %s %s", r[1], path)
		}
	}
}

// Nothing answers without signing in: not the pages, not the API, not a
// read, not the script; the list page (which carries the CSRF token) least
// of all.
func TestEverythingNeedsSigningIn(t *testing.T) {
	s, ids := newTestServer(t, Config{CanRecord: true})
	for _, path := range []string{"/", "/traces/" + ids[0], "/compare?ids=" + ids[0] + "," + ids[1], "/static/app.js",
		"/api/traces", "/api/traces/" + ids[0], "/api/compare?ids=" + ids[0] + "," + ids[1], "/api/recordings/current"} {
		w := do(t, s, call{method: "GET", path: path, anonymous: true})
		if w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), s.Token()) || strings.Contains(w.Body.String(), s.Secret()) {
			t.Errorf("GET %s without signing in: %d %.80q", path, w.Code, w.Body.String())
		}
	}
	w := do(t, s, call{method: "POST", path: "/api/recordings", body: `{"mode":"all"}`, anonymous: true,
		header: map[string]string{"Content-Type": "application/json", "X-IOShape-Token": s.Token()}})
	if w.Code != http.StatusUnauthorized {
		t.Errorf("POST with the CSRF token but not signed in: %d", w.Code)
	}
	for _, bad := range []map[string]string{{"Authorization": "Bearer " + s.Token()}, {"Authorization": "Bearer nope"}, {"Cookie": s.cookieName() + "=" + s.Secret()}} {
		if w := do(t, s, call{method: "GET", path: "/api/traces", header: bad, anonymous: true}); w.Code != http.StatusUnauthorized {
			t.Errorf("%v: %d", bad, w.Code)
		}
	}
}

// The printed URL's token is exchanged for an HttpOnly, SameSite=Strict
// cookie (not the token itself) and a redirect that drops it from the
// address bar; the cookie then opens everything. Scripts may send the
// token as a bearer token.
func TestSignInWithThePrintedURL(t *testing.T) {
	s, ids := newTestServer(t, Config{})
	w := do(t, s, call{method: "GET", path: "/traces/" + ids[0] + "?token=" + s.Secret(), anonymous: true})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/traces/"+ids[0] {
		t.Fatalf("sign-in: %d to %q", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value == s.Secret() {
		t.Fatalf("cookie %+v", cookies)
	}
	r := httptest.NewRequest("GET", "/api/traces", nil)
	r.Host = "127.0.0.1:7878"
	r.AddCookie(cookies[0])
	rw := httptest.NewRecorder()
	s.Handler().ServeHTTP(rw, r)
	if rw.Code != http.StatusOK {
		t.Errorf("with the cookie: %d", rw.Code)
	}
	if w := do(t, s, call{method: "GET", path: "/api/traces", anonymous: true, header: map[string]string{"Authorization": "Bearer " + s.Secret()}}); w.Code != http.StatusOK {
		t.Errorf("bearer token: %d", w.Code)
	}
	if w := do(t, s, call{method: "GET", path: "/?token=wrong", anonymous: true}); w.Code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", w.Code)
	}
}

// Pages are not cached, and their scripts run under a CSP without
// 'unsafe-inline': each inline script carries this response's nonce.
func TestPagesUncachedAndScriptsByNonce(t *testing.T) {
	s, ids := newTestServer(t, Config{})
	for _, path := range []string{"/", "/traces/" + ids[0], "/compare?ids=" + ids[0] + "," + ids[1]} {
		w := do(t, s, call{method: "GET", path: path})
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", path, w.Code)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, cc)
		}
		csp := w.Header().Get("Content-Security-Policy")
		m := regexp.MustCompile(`script-src ([^;]*)`).FindStringSubmatch(csp)
		if m == nil || strings.Contains(m[1], "unsafe-inline") {
			t.Fatalf("%s: script-src %q", path, m)
		}
		nonce := regexp.MustCompile(`'nonce-([0-9a-f]+)'`).FindStringSubmatch(m[1])
		for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(w.Body.String(), -1) {
			if strings.Contains(tag, " src=") {
				continue // loaded from 'self'
			}
			if nonce == nil || !strings.Contains(tag, `nonce="`+nonce[1]+`"`) {
				t.Errorf("%s: inline %s without the response's nonce", path, tag)
			}
		}
	}
}

// The token file is the owner's alone.
func TestTokenFileOnlyForTheOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve-token")
	s, _ := newTestServer(t, Config{TokenFile: path})
	if err := s.WriteTokenFile(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != s.Secret() {
		t.Errorf("the file holds %q", b)
	}
}

// A burst of views of one report renders it once (per trace version);
// every response still carries its own nonce, in its policy and its
// scripts, and no other's.
func TestReportPageRenderedOnce(t *testing.T) {
	s, ids := newTestServer(t, Config{})
	const views = 100
	bodies := make([]string, views)
	csps := make([]string, views)
	var wg sync.WaitGroup
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := do(t, s, call{method: "GET", path: "/traces/" + ids[0]})
			if w.Code != http.StatusOK {
				t.Errorf("view %d: %d", i, w.Code)
			}
			bodies[i], csps[i] = w.Body.String(), w.Header().Get("Content-Security-Policy")
		}()
	}
	wg.Wait()
	if n := s.renders.Load(); n != 1 {
		t.Errorf("%d views rendered the report %d times, want once", views, n)
	}
	nonces := map[string]bool{}
	for i, body := range bodies {
		m := regexp.MustCompile(`'nonce-([0-9a-f]+)'`).FindStringSubmatch(csps[i])
		if m == nil {
			t.Fatalf("view %d: no nonce in %q", i, csps[i])
		}
		nonces[m[1]] = true
		for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
			if !strings.Contains(tag, `nonce="`+m[1]+`"`) {
				t.Fatalf("view %d: a script without the response's nonce: %s", i, tag)
			}
		}
		if strings.Contains(body, pageNonce) {
			t.Fatalf("view %d: the placeholder leaked", i)
		}
	}
	if len(nonces) != views {
		t.Errorf("%d views, %d distinct nonces", views, len(nonces))
	}
	// Another trace is rendered on its own.
	do(t, s, call{method: "GET", path: "/traces/" + ids[1]})
	if n := s.renders.Load(); n != 2 {
		t.Errorf("a second trace: %d renders, want 2", n)
	}
}
