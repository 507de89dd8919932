package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
)

// Authentication. Loopback is no boundary between the users of one
// machine, so the daemon answers only its owner:
//
//   - A secret is made at each start and written to a file only the owner
//     can read (TokenFile, mode 0600), and printed as a URL
//     (http://127.0.0.1:7878/?token=…), as Jupyter does.
//   - Opening that URL exchanges the token for a session cookie (HttpOnly,
//     SameSite=Strict; a value distinct from the token, since cookies are
//     not scoped by port) and redirects to the page without it. Scripts can
//     send "Authorization: Bearer TOKEN" instead.
//   - Every page and API call needs one of the two, read-only ones too;
//     state changes also need the page's CSRF token (see protect).
//   - On Linux, a loopback connection from a socket another local user owns
//     is refused before anything else, whatever it carries.

// newSecret is 32 random bytes, hex.
func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// cookieName is per port, so two daemons of one user do not log each other
// out.
func (s *Server) cookieName() string { return fmt.Sprintf("ioshape_session_%d", s.port) }

// writeTokenFile writes the secret where only the owner can read it,
// replacing whatever is there only if it is a regular file.
func (s *Server) writeTokenFile() error {
	path := s.cfg.TokenFile
	if path == "" {
		return nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: remove it", path)
	}
	// Written as the owner: a link or directory they swapped in leads
	// nowhere they could not write themselves.
	var f *os.File
	err := s.cfg.Owner.Do(func() (err error) {
		os.Remove(path)
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	_, err = fmt.Fprintln(f, s.secret)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.cfg.Owner.Chown(path)
	}
	return err
}

// authenticate lets the owner's requests through. It answers every other
// request itself (redirect, 401 or 403) and returns false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if uid, ok := peerUID(r); ok && !s.allowedUID(uid) {
		httpError(w, http.StatusForbidden, "this daemon belongs to another user (uid %d): run your own 'ioshape serve'", s.ownerUID())
		return false
	}
	if t := r.URL.Query().Get("token"); t != "" {
		if r.Method != http.MethodGet || !same(t, s.secret) {
			httpError(w, http.StatusUnauthorized, "wrong token: open the URL 'ioshape serve' printed")
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if c, err := r.Cookie(s.cookieName()); err == nil && same(c.Value, s.session) {
		return true
	}
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(a, s.secret) {
		return true
	}
	where := ""
	if s.cfg.TokenFile != "" {
		where = " (the token is also in " + s.cfg.TokenFile + ", readable only by the daemon's owner)"
	}
	httpError(w, http.StatusUnauthorized, "not signed in: open the URL 'ioshape serve' printed%s", where)
	return false
}

// ownerUID is the user the daemon answers: the sudo caller, else whoever
// runs it.
func (s *Server) ownerUID() int {
	if s.cfg.Owner.Set {
		return s.cfg.Owner.UID
	}
	return os.Geteuid()
}

// allowedUID: the owner, and root (who can read the token anyway).
func (s *Server) allowedUID(uid int) bool { return uid == s.ownerUID() || uid == 0 }

type connKey struct{}

// withConn keeps each request's connection in its context, for peerUID.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// peerUID is the uid owning the client's end of a loopback TCP connection,
// where the system says (Linux: /proc/net/tcp).
func peerUID(r *http.Request) (int, bool) {
	c, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return 0, false
	}
	client, ok1 := c.RemoteAddr().(*net.TCPAddr)
	server, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || !client.IP.IsLoopback() {
		return 0, false
	}
	return socketOwner(client, server)
}

var errNoSocket = errors.New("no such socket")
