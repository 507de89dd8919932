//go:build packaging

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

func need(t *testing.T, tool, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		testutil.Unavailable(t, "%s is not installed (%s)", tool, install)
	}
	return p
}

// The Homebrew formula is valid Ruby, names the four archives goreleaser
// makes, and takes a release's checksums from update-formula.sh.
func TestHomebrewFormula(t *testing.T) {
	ruby := need(t, "ruby", "apt-get install ruby")
	formula := testutil.Repo(t, "packaging", "homebrew", "ioshape.rb")
	if out, err := exec.Command(ruby, "-c", formula).CombinedOutput(); err != nil || !strings.Contains(string(out), "Syntax OK") {
		t.Fatalf("ruby -c: %v %s", err, out)
	}
	cfg, _ := os.ReadFile(testutil.Repo(t, ".goreleaser.yaml"))
	if !strings.Contains(string(cfg), `name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`) {
		t.Fatal("the archive names in .goreleaser.yaml changed: update the formula's urls")
	}
	dir := t.TempDir()
	copyOf := filepath.Join(dir, "ioshape.rb")
	b, _ := os.ReadFile(formula)
	os.WriteFile(copyOf, b, 0o644)
	var sums strings.Builder
	want := map[string]string{}
	for i, target := range []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"} {
		sum := fmt.Sprintf("%064x", i+10)
		want[target] = sum
		fmt.Fprintf(&sums, "%s  ioshape_1.4.2_%s.tar.gz\n", sum, target)
	}
	os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644)
	if out, err := exec.Command("bash", testutil.Repo(t, "scripts", "update-formula.sh"), "1.4.2", filepath.Join(dir, "checksums.txt"), copyOf).CombinedOutput(); err != nil {
		t.Fatalf("update-formula: %v %s", err, out)
	}
	got, _ := os.ReadFile(copyOf)
	if !strings.Contains(string(got), `version "1.4.2"`) {
		t.Error("version not updated")
	}
	for target, sum := range want {
		re := regexp.MustCompile(`_` + target + `\.tar\.gz"\n\s+sha256 "` + sum + `"`)
		if !re.Match(got) {
			t.Errorf("%s: checksum not placed after its url", target)
		}
	}
	if out, err := exec.Command(ruby, "-c", copyOf).CombinedOutput(); err != nil {
		t.Fatalf("ruby -c after update: %v %s", err, out)
	}
}

// The systemd unit passes systemd-analyze verify (with its ExecStart
// pointed at this build), and runs serve for the instance's user, on
// loopback.
func TestSystemdUnit(t *testing.T) {
	sa := need(t, "systemd-analyze", "apt-get install systemd")
	unit, _ := os.ReadFile(testutil.Repo(t, "packaging", "systemd", "ioshape@.service"))
	if !strings.Contains(string(unit), "ExecStart=/usr/local/bin/ioshape serve --user %i --addr 127.0.0.1:7878") {
		t.Fatalf("ExecStart is not serve --user %%i on loopback:\n%s", unit)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	inst := filepath.Join(dir, "ioshape@alice.service")
	os.WriteFile(inst, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/ioshape", bin)), 0o644)
	out, err := exec.Command(sa, "verify", "--man=no", inst).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "ioshape@alice.service:") {
		t.Errorf("systemd-analyze verify complains:\n%s", out)
	}
}

// The launchd plist is a valid property list that runs serve for one user
// on loopback.
func TestLaunchdPlist(t *testing.T) {
	py := need(t, "python3", "apt-get install python3")
	plist := testutil.Repo(t, "packaging", "launchd", "io.ioshape.serve.plist")
	script := `import plistlib, sys, json
p = plistlib.load(open(sys.argv[1], 'rb'))
print(json.dumps({"label": p["Label"], "args": p["ProgramArguments"], "load": p["RunAtLoad"]}))`
	out, err := exec.Command(py, "-c", script, plist).CombinedOutput()
	if err != nil {
		t.Fatalf("plistlib: %v %s", err, out)
	}
	want := `{"label": "io.ioshape.serve", "args": ["/usr/local/bin/ioshape", "serve", "--user", "USERNAME", "--addr", "127.0.0.1:7878"], "load": true}`
	if strings.TrimSpace(string(out)) != want {
		t.Errorf("plist: %s", out)
	}
	if plutil, err := exec.LookPath("plutil"); err == nil { // on a Mac
		if out, err := exec.Command(plutil, "-lint", plist).CombinedOutput(); err != nil {
			t.Errorf("plutil -lint: %v %s", err, out)
		}
	}
}

// Completion scripts for bash, zsh and fish parse in their shells.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []struct{ name, check string }{{"bash", "-n"}, {"zsh", "-n"}, {"fish", "--no-execute"}} {
		t.Run(sh.name, func(t *testing.T) {
			r := ioshape(t, nil, "completion", sh.name)
			if r.code != 0 || !strings.Contains(r.stdout, "ioshape") {
				t.Fatalf("completion %s: %d %s", sh.name, r.code, r.stderr)
			}
			shell := need(t, sh.name, "apt-get install "+sh.name)
			f := filepath.Join(t.TempDir(), "completion."+sh.name)
			os.WriteFile(f, []byte(r.stdout), 0o644)
			if out, err := exec.Command(shell, sh.check, f).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v %s", sh.name, sh.check, err, out)
			}
		})
	}
}

// Man pages: one per command, with a name line and the command's options.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if r := ioshape(t, nil, "man", dir); r.code != 0 {
		t.Fatalf("man: %s", r.stderr)
	}
	for _, cmd := range []string{"ioshape", "ioshape-record", "ioshape-import", "ioshape-export", "ioshape-serve", "ioshape-predict"} {
		b, err := os.ReadFile(filepath.Join(dir, cmd+".1"))
		if err != nil {
			t.Errorf("no page for %s: %v", cmd, err)
			continue
		}
		if !strings.HasPrefix(string(b), ".nh\n.TH \"IOSHAPE\" \"1\"") || !strings.Contains(string(b), ".SH NAME") || !strings.Contains(string(b), ".SH OPTIONS") {
			t.Errorf("%s.1 is not a man page:\n%.200s", cmd, b)
		}
	}
	if r := ioshape(t, nil, "man"); r.code != 2 {
		t.Errorf("man without a directory: exit %d", r.code)
	}
}

// --version prints what the build stamped: version, commit, date.
func TestVersionStamped(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ioshape")
	pkg := "github.com/ioshape/ioshape/internal/cli"
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X "+pkg+".Version=9.8.7 -X "+pkg+".Commit=0123456789abcdef0123 -X "+pkg+".Date=2026-11-24T07:00:00Z", "./cmd/ioshape")
	build.Dir = testutil.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "ioshape 9.8.7 (commit 0123456789ab, built 2026-11-24T07:00:00Z, go") {
		t.Errorf("--version: %s", out)
	}
}

// goreleaser accepts the release configuration.
func TestGoreleaserCheck(t *testing.T) {
	gr, err := exec.LookPath("goreleaser")
	if err != nil {
		if home, herr := os.UserHomeDir(); herr == nil {
			gr, err = exec.LookPath(filepath.Join(home, "go", "bin", "goreleaser"))
		}
	}
	if err != nil {
		testutil.Unavailable(t, "goreleaser is not installed (go install github.com/goreleaser/goreleaser/v2@v2.15.0, as .ci/run does)")
	}
	c := exec.Command(gr, "check")
	c.Dir = testutil.Root(t)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}
