package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/event"
)

func newEventsCommand(g *globals) *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "events <trace>",
		Short: "Print a trace's events as tab-separated text, one I/O a line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := g.resolve(args[0])
			if err != nil {
				return err
			}
			return printEvents(cmd.Context(), g, path, limit)
		},
	}
	c.Flags().IntVar(&limit, "limit", 0, "print at most this many events (0: all)")
	return c
}

func printEvents(ctx context.Context, g *globals, path string, limit int) error {
	w := bufio.NewWriter(g.stdout)
	fmt.Fprintln(w, "layer\top\tcall\tstart_ns\tdispatch_ns\tend_ns\tdev\tinode\toffset\tsize\tbytes\terrno\tpid\ttid\tcomm\tflags\tblocked_ns")
	t, err := analysis.Open(path)
	if err != nil {
		return err
	}
	defer t.Close()
	n := 0
	_, err = t.Events(ctx, "reading", nil, func(e *event.Event) error {
		if limit > 0 && n >= limit {
			return errEnough
		}
		n++
		blocked := "" // not timed
		if e.Flags&event.FlagBlocked != 0 {
			blocked = strconv.FormatInt(e.Blocked, 10)
		}
		_, err := fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n",
			e.Layer, e.Op, e.Call, e.Start, e.Dispatch, e.End, e.Dev, e.Inode, e.Offset, e.Size, e.Bytes, e.Errno, e.Pid, e.Tid, e.Comm, e.Flags, blocked)
		return err
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	return w.Flush()
}

// errEnough ends a listing at its --limit.
var errEnough = errors.New("limit reached")
