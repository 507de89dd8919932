package cli

import (
	"fmt"
	"net"
	"os"
	"os/user"
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

It listens on 127.0.0.1 unless --addr says otherwise.`,
		Example: `  ioshape serve
  sudo ioshape serve --addr 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, g, o) },
	}
	f := c.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "address to listen on (host:port; port 0 picks a free one)")
	f.StringSliceVar(&o.allowHosts, "allow-host", nil, "another host name browsers may use for this daemon (with a non-loopback --addr)")
	f.StringVar(&o.runAs, "run-as", "", "user that commands recorded from the browser run as (default: the sudo caller)")
	f.StringVar(&o.backend, "backend", "auto", "tracer for recordings: auto, native, bpftrace, dtrace or fsusage")
	return c
}

func runServe(cmd *cobra.Command, g *globals, o *serveOptions) error {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr must be host:port: %w", err)}
	}
	st, err := g.store()
	if err != nil {
		return err
	}
	owner := store.InvokingUser()
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
	srv := server.New(server.Config{
		Store: st, Addr: o.addr, AllowHosts: o.allowHosts, CanRecord: os.Geteuid() == 0, RunAs: runAsUser, Owner: owner,
		Backend: o.backend, ToolVersion: Version,
		Logf: func(format string, args ...any) { fmt.Fprintf(g.stderr, format+"\n", args...) },
	}, port)
	if !server.IsLoopback(host) {
		fmt.Fprintf(g.stderr, "warning: listening on %s, beyond this machine: anyone who can reach it can read your traces", o.addr)
		if os.Geteuid() == 0 {
			fmt.Fprint(g.stderr, " and, with the page's token, start recordings as root")
		}
		fmt.Fprintln(g.stderr)
	}
	urlHost := host
	if host == "" || host == "0.0.0.0" || host == "::" {
		urlHost = "127.0.0.1"
	}
	fmt.Fprintf(g.stdout, "serving http://%s/ (Ctrl-C to stop)\n", net.JoinHostPort(urlHost, strconv.Itoa(port)))
	if f, ok := g.stdout.(*os.File); ok {
		f.Sync()
	}
	err = srv.Serve(cmd.Context(), l)
	fmt.Fprintln(g.stderr, "stopped")
	return err
}
