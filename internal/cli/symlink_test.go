package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ioshape/ioshape/internal/server"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/testutil"
)

// The users of these tests: the sudo caller, and another local user who
// plants links for root to follow.
const (
	callerUID   = 1     // "daemon" on Debian: any user who is not root
	attackerUID = 65534 // nobody
)

// plant makes a world-writable sticky directory (as /tmp is) holding a
// root-only file and, owned by the attacker, a symbolic link to it.
func plant(t *testing.T) (dir, link, secret string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "planting another user's links needs root")
	}
	dir, err := os.MkdirTemp("", "ioshape-sticky-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o1777)
	private, err := os.MkdirTemp("", "ioshape-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(private) })
	secret = filepath.Join(private, "secret")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(dir, "out")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, attackerUID, attackerUID); err != nil {
		t.Fatal(err)
	}
	return dir, link, secret
}

func unchanged(t *testing.T, secret string) {
	t.Helper()
	b, err := os.ReadFile(secret)
	fi, _ := os.Stat(secret)
	if err != nil || string(b) != "root's\n" || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("the root-only file was written or handed over: %q, %v", b, err)
	}
}

// sudo ioshape … -o LINK, where another user planted LINK: refused in one
// line, the file it points at untouched.
func TestOutputRefusesAnotherUsersLink(t *testing.T) {
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	env := []string{"SUDO_UID=1", "SUDO_GID=1"}
	for _, args := range [][]string{
		{"report", "-o", "LINK", trace},
		{"compare", "-o", "LINK", trace, trace},
		{"export", "--csv", "LINK", trace},
		{"record", "-o", "LINK", "--", "true"},
		{"record", "--raw-output", "LINK", "--backend", "bpftrace", "--", "true"},
	} {
		_, link, secret := plant(t)
		for i := range args {
			if args[i] == "LINK" {
				args[i] = link
			}
		}
		r := ioshape(t, env, append([]string{"--store", t.TempDir()}, args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "refusing to follow") {
			t.Errorf("%v: exit %d, %q; want it refused", args[:2], r.code, r.stderr)
		} else {
			singleLine(t, r.stderr)
		}
		unchanged(t, secret)
	}
}

// The caller's own link is followed, as before: they could write there.
func TestOutputFollowsTheCallersLink(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "acting as sudo needs root")
	}
	home, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.Chown(home, callerUID, callerUID)
	target := filepath.Join(home, "real.html")
	os.WriteFile(target, nil, 0o644)
	os.Chown(target, callerUID, callerUID)
	link := filepath.Join(home, "link.html")
	os.Symlink(target, link)
	os.Lchown(link, callerUID, callerUID)
	trace := testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace")
	r := ioshape(t, []string{"SUDO_UID=1", "SUDO_GID=1"}, "--store", t.TempDir(), "report", "-o", link, trace)
	if r.code != 0 {
		t.Fatalf("report -o the caller's link: %s", r.stderr)
	}
	fi, err := os.Stat(target)
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != callerUID || fi.Size() == 0 {
		t.Errorf("the report is not the caller's file behind their link: %v", err)
	}
}

// serve --user U: with U's store a link to a root-only directory, the
// daemon (root) writes nothing there — no store directories, no token, no
// trace — and what it makes in U's own store is U's.
func TestServeStoreWrittenAsItsOwner(t *testing.T) {
	_, _, secret := plant(t)
	private := filepath.Dir(secret)
	home, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.Chown(home, attackerUID, attackerUID)
	u := store.Owner{UID: attackerUID, GID: attackerUID, Home: home, Set: true}

	linked := filepath.Join(home, "store")
	os.Symlink(private, linked)
	os.Lchown(linked, attackerUID, attackerUID)
	st := store.OpenAs(linked, u)
	if err := st.Ensure(); err == nil {
		t.Error("the daemon made the store's directories through U's link to a root-only directory")
	}
	srv := server.New(server.Config{Store: st, Owner: u, TokenFile: filepath.Join(linked, "serve-token")}, 0)
	if err := srv.WriteTokenFile(); err == nil {
		t.Error("the daemon wrote its token through U's link to a root-only directory")
	}
	if _, _, err := st.NewPath(); err == nil {
		t.Error("the daemon reserved a trace through U's link")
	}
	if entries, _ := os.ReadDir(private); len(entries) != 1 {
		t.Errorf("the root-only directory holds %d entries, want only the secret", len(entries))
	}
	unchanged(t, secret)

	// U's own store: everything the daemon makes there is U's.
	own := store.OpenAs(filepath.Join(home, ".local", "share", "ioshape"), u)
	if err := own.Ensure(); err != nil {
		t.Fatal(err)
	}
	srv = server.New(server.Config{Store: own, Owner: u, TokenFile: filepath.Join(own.Dir, "serve-token")}, 0)
	if err := srv.WriteTokenFile(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(home, ".local"), own.Dir, filepath.Join(own.Dir, "traces"), filepath.Join(own.Dir, "serve-token")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != attackerUID {
			t.Errorf("%s is owned by uid %d, not the store's owner", p, st.Uid)
		}
	}
}

// The daemon's lookup by ID opens only regular files its owner owns: a
// link U planted to a trace root can read is no trace of U's.
func TestStoreLookupRefusesLinks(t *testing.T) {
	_, _, secret := plant(t)
	home, err := os.MkdirTemp("", "ioshape-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.Chown(home, attackerUID, attackerUID)
	u := store.Owner{UID: attackerUID, GID: attackerUID, Set: true}
	st := store.OpenAs(filepath.Join(home, "store"), u)
	if err := st.Ensure(); err != nil {
		t.Fatal(err)
	}
	// A root-only trace elsewhere, and U's link to it in U's store.
	rootTrace := filepath.Join(filepath.Dir(secret), "root.iotrace")
	data, _ := os.ReadFile(testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace"))
	os.WriteFile(rootTrace, data, 0o600)
	link := filepath.Join(st.Dir, "traces", "abcdeg"+store.Ext)
	os.Symlink(rootTrace, link)
	os.Lchown(link, attackerUID, attackerUID)
	if _, err := st.ByID("abcdeg"); err == nil {
		t.Error("the store's lookup followed U's link to a root-only trace")
	}
	// A regular file U owns is found.
	own := filepath.Join(st.Dir, "traces", "ghjkmn"+store.Ext)
	os.WriteFile(own, data, 0o644)
	os.Chown(own, attackerUID, attackerUID)
	if e, err := st.ByID("ghjkmn"); err != nil || e.Meta.Header.Tool == "" {
		t.Errorf("U's own trace: %v", err)
	}
}
