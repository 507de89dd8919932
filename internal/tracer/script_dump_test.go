package tracer

import (
	"os"
	"testing"
)

func TestDumpScript(t *testing.T) {
	out := os.Getenv("IOSHAPE_DUMP_SCRIPT")
	if out == "" {
		t.Skip("set IOSHAPE_DUMP_SCRIPT")
	}
	s, err := renderBpftrace(Target{All: true}, nil, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(out, []byte(s.Text), 0o644)
}
