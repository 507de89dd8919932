package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
)

type showOptions struct {
	json      bool
	writeback string
}

func newShowCommand(g *globals) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show <trace>",
		Short: "Profile a trace: sizes, queue depth, latency, gaps, per process and device",
		Long: `Show profiles a trace at both layers: what the application asked for (syscall)
and what the drive saw (block). <trace> is a trace ID, a unique ID prefix, a
label, or a file path.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runShow(cmd.Context(), g, o, args[0]) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the profile as JSON")
	c.Flags().StringVar(&o.writeback, "writeback", "include", "block I/O issued by kernel threads on behalf of processes: include or exclude")
	return c
}

func runShow(ctx context.Context, g *globals, o *showOptions, arg string) error {
	opts, err := profileOptions(o.writeback)
	if err != nil {
		return err
	}
	s, err := loadShow(ctx, g, arg, opts)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, s)
	}
	return report.WriteText(g.stdout, s)
}

func profileOptions(writeback string) (profile.Options, error) {
	switch writeback {
	case "include":
		return profile.Options{}, nil
	case "exclude":
		return profile.Options{ExcludeWriteback: true}, nil
	}
	return profile.Options{}, usageError{fmt.Errorf("--writeback must be include or exclude, not %q", writeback)}
}

// loadShow resolves a trace argument and profiles it.
func loadShow(ctx context.Context, g *globals, arg string, opts profile.Options) (*report.Show, error) {
	t, err := g.open(arg)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return analysis.Show(ctx, t, opts, g.watch)
}
