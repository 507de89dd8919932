package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCommand writes man pages for every command, as packages install
// them (the release archives carry them, made by this command).
func newManCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "man <dir>",
		Short:  "Write man pages for ioshape and each of its commands into a directory",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root.DisableAutoGenTag = true
			hdr := &doc.GenManHeader{Title: "IOSHAPE", Section: "1", Source: "ioshape " + Version, Manual: "ioshape manual"}
			if err := doc.GenManTree(root, hdr, args[0]); err != nil {
				return fmt.Errorf("cannot write man pages: %w", err)
			}
			return nil
		},
	}
}
