package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioshape/ioshape/internal/parse"
	"github.com/ioshape/ioshape/internal/store"
)

// Completion beyond commands and flags: the store's trace IDs and labels
// where a command takes a trace, drive profile names where a flag takes a
// drive, and every flag's fixed set of values. Shells ask through cobra's
// hidden __complete command, so bash, zsh and fish complete the same.

// traceArgs are the commands whose arguments are traces.
var traceArgs = map[string]bool{"show": true, "classify": true, "report": true, "compare": true, "events": true,
	"export": true, "predict": true, "replay": true}

// flagValues are the flags with a fixed set of values.
var flagValues = map[string][]string{
	"backend":   {"auto", "native", "bpftrace", "dtrace", "fsusage"},
	"layers":    {"both", "block", "syscall"},
	"writeback": {"include", "exclude"},
	"by":        {"phase", "program"},
	"mode":      {"job", "iolog"},
}

// driveFlags take a drive profile's name (or a file).
var driveProfileFlags = map[string]bool{"predict-on": true, "from": true}

func registerCompletions(g *globals, root *cobra.Command) {
	formats := append([]string{"auto"}, func() []string {
		var out []string
		for _, f := range parse.Formats {
			out = append(out, string(f))
		}
		return out
	}()...)
	for _, c := range root.Commands() {
		if traceArgs[c.Name()] {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if cmd.Name() != "compare" && cmd.Name() != "export" && len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return completeTraces(g, toComplete)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name := f.Name
			switch {
			case flagValues[name] != nil:
				values := flagValues[name]
				c.RegisterFlagCompletionFunc(name, fixedValues(values))
			case name == "format" && c.Name() == "import":
				c.RegisterFlagCompletionFunc(name, fixedValues(formats))
			case driveProfileFlags[name] || name == "drive" && c.Name() == "predict":
				c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return completeDrives(g), cobra.ShellCompDirectiveDefault // a file too
				})
			}
		})
	}
}

func fixedValues(values []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTraces offers the store's trace IDs, each described by its
// label and target, and the labels themselves; files too when nothing in
// the store matches.
func completeTraces(g *globals, prefix string) ([]string, cobra.ShellCompDirective) {
	st, err := g.store()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []string
	labels := map[string]bool{}
	st.Each(func(sm store.Summary) bool {
		if strings.HasPrefix(sm.ID, prefix) {
			desc := strings.TrimSpace(sm.Label + " " + sm.Target)
			out = append(out, sm.ID+"\t"+strings.ReplaceAll(desc, "\t", " "))
		}
		if sm.Label != "" && !labels[sm.Label] && strings.HasPrefix(sm.Label, prefix) && !strings.ContainsAny(sm.Label, " \t") {
			labels[sm.Label] = true
			out = append(out, sm.Label+"\tlabel")
		}
		return len(out) < 500
	})
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeDrives offers the store's drive profiles by name.
func completeDrives(g *globals) []string {
	st, err := g.store()
	if err != nil {
		return nil
	}
	drives, err := st.Drives()
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range drives {
		out = append(out, d.Name+"\t"+strings.TrimSpace(d.Device+" "+d.Host))
	}
	return out
}
