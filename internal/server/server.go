package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/tracer"
)

// Config is how the daemon runs.
type Config struct {
	Store *store.Store
	// Addr is the address it listens on, as given (host:port); Listener, if
	// set, is already listening on it (port 0 resolved).
	Addr string
	// AllowHosts are further names the browser may use for this daemon
	// (its LAN name when bound beyond loopback). Loopback names are always
	// allowed.
	AllowHosts []string
	// CanRecord enables recording from the browser (the daemon runs as
	// root). RunAs is the user commands run as; without it, only pid,
	// name and whole-system recordings are offered.
	CanRecord bool
	RunAs     tracer.User
	Owner     store.Owner
	Backend   string
	// ToolVersion goes into recorded traces' headers.
	ToolVersion string
	// TokenFile, if set, receives the sign-in secret, readable only by the
	// owner.
	TokenFile string
	Logf      func(format string, args ...any)
}

// Server is the daemon's state: the per-start secret, the analysis cache
// and the recording in progress.
type Server struct {
	renders atomic.Int64 // report pages rendered, for the tests
	cfg     Config
	port    int
	secret  string // signs the owner in (the printed URL, the token file)
	session string // the session cookie's value, given for the secret
	token   string // the CSRF token state changes carry (in the pages)
	hosts   map[string]bool
	cache   *cache
	mux     *http.ServeMux

	mu  sync.Mutex
	job *job // the current or last recording
	wg  sync.WaitGroup
	// ctx ends when the daemon shuts down; recordings stop with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// maxBody bounds every request body; a recording request is a few hundred
// bytes.
const maxBody = 64 << 10

// New makes a Server for a daemon listening on port.
func New(cfg Config, port int) *Server {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s := &Server{cfg: cfg, port: port, secret: newSecret(), session: newSecret(), token: newSecret(), hosts: map[string]bool{}, cache: newCache(32)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, h := range append([]string{"127.0.0.1", "localhost", "[::1]", "::1"}, cfg.AllowHosts...) {
		s.hosts[strings.ToLower(net.JoinHostPort(strings.Trim(h, "[]"), fmt.Sprint(port)))] = true
	}
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil && host != "" && host != "0.0.0.0" && host != "::" {
		s.hosts[strings.ToLower(net.JoinHostPort(host, fmt.Sprint(port)))] = true
	}
	s.routes()
	return s
}

// Token is the per-start CSRF token state-changing requests must carry.
func (s *Server) Token() string { return s.token }

// Secret is what signs the owner in: the printed URL's token.
func (s *Server) Secret() string { return s.secret }

// WriteTokenFile writes the secret to Config.TokenFile, mode 0600, owned
// by the owner.
func (s *Server) WriteTokenFile() error { return s.writeTokenFile() }

// Handler is the daemon's HTTP handler, with every protection applied.
func (s *Server) Handler() http.Handler { return s.protect(s.mux) }

// Shutdown stops a recording in progress, waits for its trace file to be
// finished, and returns.
func (s *Server) Shutdown() {
	s.cancel()
	s.wg.Wait()
}

// Serve runs the daemon on l until ctx ends, then shuts down gracefully:
// a recording in progress is stopped and its trace finished first.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnContext:       withConn,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		s.Shutdown()
		return err
	case <-ctx.Done():
	}
	s.cancel() // ends server-sent event streams and the recording
	s.wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

type nonceKey struct{}

// nonceOf is the CSP nonce protect made for this response.
func nonceOf(r *http.Request) string {
	n, _ := r.Context().Value(nonceKey{}).(string)
	return n
}

// IsLoopback reports whether a listen host reaches only this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// protect applies, before any handler runs: the Host check (a page on a
// rebinding domain resolves to 127.0.0.1 but still says its own name),
// the secret token and same origin on anything that changes state, the
// body size limit, and headers that keep pages from loading anything off
// the machine or being framed.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			// A bug answers 500 and one log line, not a stack trace.
			if v := recover(); v != nil && v != http.ErrAbortHandler {
				s.cfg.Logf("internal error serving %s: %v (please report it)", r.URL.Path, v)
				httpError(w, http.StatusInternalServerError, "internal error: %v", v)
			}
		}()
		h := w.Header()
		// Inline scripts run only with this response's nonce (the
		// report's, given to webreport); styles may be inline.
		nonce := newSecret()[:32]
		r = r.WithContext(context.WithValue(r.Context(), nonceKey{}, nonce))
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'nonce-"+nonce+"'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Cache-Control", "no-store") // pages carry the CSRF token; nothing is worth caching
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hosts[strings.ToLower(r.Host)] {
			httpError(w, http.StatusMisdirectedRequest, "unknown host %q: open the daemon at the address it printed", r.Host)
			return
		}
		if !s.authenticate(w, r) {
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost, http.MethodDelete:
			if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host {
				httpError(w, http.StatusForbidden, "cross-origin request refused")
				return
			}
			if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
				httpError(w, http.StatusForbidden, "cross-site request refused")
				return
			}
			if !same(r.Header.Get("X-IOShape-Token"), s.token) {
				httpError(w, http.StatusForbidden, "missing or wrong X-IOShape-Token")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		default:
			httpError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
			return
		}
		next.ServeHTTP(w, r)
	})
}
