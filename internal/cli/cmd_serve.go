package cli

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/server"
	"github.com/ioshape/ioshape/internal/store"
	"github.com/ioshape/ioshape/internal/tracer"
)

type serveOptions struct {
	addr       string
	allowHosts []string
	runAs      string
	user       string
	backend    string
}

func newServeCommand(g *globals) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the trace list, reports and comparisons in a browser; record from it when root",
		Long: `Serve runs a local web daemon: the store's traces (sortable, with their best
match), each trace's report, comparisons of selected traces, and a JSON API for
the same (/api/traces, /api/traces/ID, /api/compare?ids=A,B). Run as root
(sudo ioshape serve), it can also start and stop recordings from the browser,
with live progress; commands run as the user who ran sudo, without a shell.

It listens on 127.0.0.1 unless --addr says otherwise. As a service (systemd,
launchd), --user names whose daemon it is: that user's store, only that user
may drive it, and recordings run as that user.`,
		Example: `  ioshape serve
  sudo ioshape serve --addr 127.0.0.1:9000
  sudo ioshape serve --user alice     # as the systemd unit ioshape@alice runs it`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, g, o) },
	}
	f := c.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "address to listen on (host:port; port 0 picks a free one)")
	f.StringSliceVar(&o.allowHosts, "allow-host", nil, "another host name browsers may use for this daemon (with a non-loopback --addr)")
	f.StringVar(&o.runAs, "run-as", "", "user that commands recorded from the browser run as (default: the sudo caller)")
	f.StringVar(&o.user, "user", "", "the user whose daemon this is (a service run as root): their store, their browser only, recordings as them")
	f.StringVar(&o.backend, "backend", "auto", "tracer for recordings: auto, native, bpftrace, dtrace or fsusage")
	return c
}

func runServe(cmd *cobra.Command, g *globals, o *serveOptions) error {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr must be host:port: %w", err)}
	}
	owner := store.InvokingUser()
	if o.user != "" {
		if owner, err = store.LookupOwner(o.user); err != nil {
			return usageError{fmt.Errorf("--user: %w", err)}
		}
		if os.Geteuid() != 0 && owner.UID != os.Getuid() {
			return fmt.Errorf("--user %s: serving another user's store needs root", o.user)
		}
		if g.storeDir == "" && owner.Home != "" {
			g.storeDir = store.DirIn(owner.Home)
		}
	}
	st, err := g.store()
	if err != nil {
		return err
	}
	// The store is the owner's: under --user (a service, with no sudo
	// caller) as under sudo, what the daemon makes there is theirs and is
	// made as them.
	st = store.OpenAs(st.Dir, owner)
	runAsUser := runAs(owner)
	if o.runAs != "" {
		u, err := user.Lookup(o.runAs)
		if err != nil {
			return usageError{fmt.Errorf("--run-as: %w", err)}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		runAsUser = runAs(store.Owner{UID: uid, GID: gid, Home: u.HomeDir, Set: true})
	}
	if runAsUser.Set && runAsUser.UID == 0 {
		runAsUser = tracer.User{} // never run browser-given commands as root
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", o.addr, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := st.Ensure(); err != nil {
		return err
	}
	srv := server.New(server.Config{
		Store: st, Addr: o.addr, AllowHosts: o.allowHosts, CanRecord: os.Geteuid() == 0, RunAs: runAsUser, Owner: owner,
		Backend: o.backend, ToolVersion: Version, TokenFile: filepath.Join(st.Dir, "serve-token"),
		Logf: func(format string, args ...any) { fmt.Fprintf(g.stderr, format+"\n", args...) },
	}, port)
	if err := srv.WriteTokenFile(); err != nil {
		l.Close()
		return err
	}
	if !server.IsLoopback(host) {
		fmt.Fprintf(g.stderr, "warning: listening on %s, beyond this machine: the token in the URL below is all that guards your traces", o.addr)
		if os.Geteuid() == 0 {
			fmt.Fprint(g.stderr, " and root recordings")
		}
		fmt.Fprintln(g.stderr, "; it travels unencrypted")
	}
	urlHost := host
	if host == "" || host == "0.0.0.0" || host == "::" {
		urlHost = "127.0.0.1"
	}
	// The sign-in URL, as Jupyter prints it; the token is also in the token
	// file, readable only by the daemon's owner. A service (--user) writes
	// its output to a journal or a log file others may read: there, only
	// where the token is.
	addr := net.JoinHostPort(urlHost, strconv.Itoa(port))
	if o.user != "" {
		fmt.Fprintf(g.stdout, "serving http://%s/ for %s: sign in with the token in %s (readable only by %s)\n", addr, o.user, filepath.Join(st.Dir, "serve-token"), o.user)
	} else {
		fmt.Fprintf(g.stdout, "serving http://%s/?token=%s (Ctrl-C to stop)\n", addr, srv.Secret())
	}
	if f, ok := g.stdout.(*os.File); ok {
		f.Sync()
	}
	err = srv.Serve(cmd.Context(), l)
	fmt.Fprintln(g.stderr, "stopped")
	return err
}
