// Command ioshape records and profiles storage I/O. See README.md.
package main

import (
	"fmt"
	"os"

	"github.com/ioshape/ioshape/internal/cli"
	"github.com/ioshape/ioshape/internal/tracer"
)

func main() {
	// The recorder's helper runs as bpftrace's child; it must not go through
	// the command line parser (and its signal handling).
	if len(os.Args) > 1 && os.Args[1] == tracer.HelperCommand {
		if err := tracer.RunHelper(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
