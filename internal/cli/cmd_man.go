package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCommand writes man pages for every command, as packages install
// them (the release archives carry them, made by the released binary
// itself, so each page carries its version).
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
			// The date is the build's (its commit's), not today's: a
			// release's pages are the same whenever they are made.
			date := time.Now()
			if t, err := time.Parse(time.RFC3339, buildDate()); err == nil {
				date = t
			}
			if err := writeManPages(root, args[0], date); err != nil {
				return fmt.Errorf("cannot write man pages: %w", err)
			}
			return nil
		},
	}
}

// writeManPages writes a page for c and each command under it, each
// titled by its own name (IOSHAPE-RECORD(1)), with the arguments of its
// synopsis kept (md2man reads "<trace>" as an HTML tag and drops it).
func writeManPages(c *cobra.Command, dir string, date time.Time) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManPages(sub, dir, date); err != nil {
			return err
		}
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	hdr := &doc.GenManHeader{Title: strings.ToUpper(name), Section: "1", Date: &date, Source: "ioshape " + Version, Manual: "ioshape manual"}
	use := c.Use
	c.Use = strings.NewReplacer("<", `\<`, ">", `\>`).Replace(use)
	defer func() { c.Use = use }()
	var b bytes.Buffer
	if err := doc.GenMan(c, hdr, &b); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".1"), b.Bytes(), 0o644)
}
