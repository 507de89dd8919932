//go:build e2e

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// fio replays the iolog export of a real trace: every read and write the
// applications issued, on the files the export names.
func TestExportIologReplaysInFio(t *testing.T) {
	fio, err := exec.LookPath("fio")
	if err != nil {
		testutil.Unavailable(t, "fio is not installed")
	}
	dir := t.TempDir()
	iolog := filepath.Join(dir, "replay.iolog")
	r := ioshape(t, nil, "--store", t.TempDir(), "export", "--fio-iolog", iolog, testutil.Repo(t, "testdata", "traces", "cp-cat-dd.iotrace"))
	if r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	log, _ := os.ReadFile(iolog)
	var reads, writes int
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "add" {
			if err := os.WriteFile(filepath.Join(dir, f[1]), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Truncate(filepath.Join(dir, f[1]), 4<<20)
		}
		if len(f) == 5 {
			reads += map[bool]int{true: 1}[f[2] == "read"]
			writes += map[bool]int{true: 1}[f[2] == "write"]
		}
	}
	cmd := exec.Command(fio, "--name=replay", "--read_iolog="+iolog, "--ioengine=psync", "--replay_no_stall=1", "--output-format=json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	var res struct {
		Jobs []struct {
			Read, Write struct {
				TotalIOs int `json:"total_ios"`
			}
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &res); err != nil || len(res.Jobs) != 1 {
		t.Fatalf("fio's report: %v", err)
	}
	if got := res.Jobs[0]; got.Read.TotalIOs != reads || got.Write.TotalIOs != writes || reads < 300 {
		t.Errorf("fio replayed %d reads and %d writes; the export holds %d and %d", got.Read.TotalIOs, got.Write.TotalIOs, reads, writes)
	}
}
