//go:build packaging

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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

// The systemd unit passes systemd-analyze verify (with its ExecStart
// pointed at this build), and runs serve for the instance's user, on
// loopback.
func TestSystemdUnit(t *testing.T) {
	sa := need(t, "systemd-analyze", "apt-get install systemd")
	unit, _ := os.ReadFile(testutil.Repo(t, "packaging", "systemd", "ioshape@.service"))
	// ioshape by name: systemd finds it in /usr/local/bin (an archive) or
	// /usr/bin (a package).
	if !strings.Contains(string(unit), "ExecStart=ioshape serve --user %i --addr 127.0.0.1:7878") {
		t.Fatalf("ExecStart is not serve --user %%i on loopback:\n%s", unit)
	}
	for _, sandbox := range []string{"ProtectSystem=", "PrivateTmp=", "IPAddressDeny=", "/home/%i"} {
		if strings.Contains(string(unit), "\n"+sandbox) || strings.Contains(string(unit), "="+sandbox) {
			t.Errorf("the unit sets %s: the commands recorded from the browser would run inside it", sandbox)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	inst := filepath.Join(dir, "ioshape@alice.service")
	os.WriteFile(inst, []byte(strings.ReplaceAll(string(unit), "ExecStart=ioshape", "ExecStart="+bin)), 0o644)
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
print(json.dumps({"label": p["Label"], "args": p["ProgramArguments"], "load": p["RunAtLoad"], "path": p["EnvironmentVariables"]["PATH"]}))`
	out, err := exec.Command(py, "-c", script, plist).CombinedOutput()
	if err != nil {
		t.Fatalf("plistlib: %v %s", err, out)
	}
	// Found on the PATH the plist sets: Homebrew's prefix on Apple silicon
	// and on Intel (where release archives go too).
	want := `{"label": "io.ioshape.serve", "args": ["/usr/bin/env", "ioshape", "serve", "--user", "USERNAME", "--addr", "127.0.0.1:7878"], "load": true, "path": "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"}`
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
		title := `.TH "` + strings.ToUpper(cmd) + `" "1"`
		if !strings.HasPrefix(string(b), ".nh\n"+title) || !strings.Contains(string(b), ".SH NAME") || !strings.Contains(string(b), ".SH OPTIONS") {
			t.Errorf("%s.1 is not a man page titled %s:\n%.200s", cmd, title, b)
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
	gr, err := goreleaserPath()
	if err != nil {
		testutil.Unavailable(t, "goreleaser is not installed (go install github.com/goreleaser/goreleaser/v2@v2.15.0, as .ci/run does)")
	}
	c := exec.Command(gr, "check")
	c.Dir = testutil.Root(t)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}

// snapshot runs goreleaser's release pipeline once for the tests that
// read what it makes (archives, packages, the formula), into a copy of the
// checkout (goreleaser writes build/ and dist/ beside the sources).
var snapshot = sync.OnceValues(func() (string, error) {
	gr, err := goreleaserPath()
	if err != nil {
		return "", err
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "ioshape-release-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("git", "clone", "-q", root, work).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git clone: %v %s", err, out)
	}
	c := exec.Command(gr, "release", "--snapshot", "--clean", "--skip=publish")
	c.Dir = work
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("goreleaser release --snapshot: %v\n%s", err, out)
	}
	return work, nil
})

func goreleaserPath() (string, error) {
	gr, err := exec.LookPath("goreleaser")
	if err != nil {
		if home, herr := os.UserHomeDir(); herr == nil {
			gr, err = exec.LookPath(filepath.Join(home, "go", "bin", "goreleaser"))
		}
	}
	return gr, err
}

func releaseDir(t *testing.T) string {
	t.Helper()
	if _, err := goreleaserPath(); err != nil {
		testutil.Unavailable(t, "goreleaser is not installed (go install github.com/goreleaser/goreleaser/v2@v2.15.0, as .ci/run does)")
	}
	dir, err := snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every archive holds the licence and the notices, and man pages stamped
// with the release's version, each titled by its command.
func TestReleaseArchives(t *testing.T) {
	dir := releaseDir(t)
	archives, _ := filepath.Glob(filepath.Join(dir, "dist", "ioshape_*.tar.gz"))
	if len(archives) != 4 {
		t.Fatalf("%d archives, want 4 (darwin and linux, amd64 and arm64)", len(archives))
	}
	version := strings.TrimPrefix(strings.SplitN(filepath.Base(archives[0]), "_", 3)[1], "v")
	for _, a := range archives {
		out, err := exec.Command("tar", "tzf", a).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"LICENSE", "NOTICE", "THIRD_PARTY_NOTICES", "man/man1/ioshape-record.1", "completions/_ioshape", "ioshape"} {
			if !regexp.MustCompile(`(?m)^(\./)?` + regexp.QuoteMeta(want) + `$`).Match(out) {
				t.Errorf("%s lacks %s", filepath.Base(a), want)
			}
		}
	}
	page, err := exec.Command("tar", "xzOf", archives[0], "man/man1/ioshape-show.1").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "IOSHAPE-SHOW" "1"`, `"ioshape ` + version + `"`, `ioshape show <trace> [flags]`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("ioshape-show.1 lacks %q:\n%.400s", want, page)
		}
	}
	if strings.Contains(string(page), "0.1.0-dev") {
		t.Error("a release's man page says 0.1.0-dev")
	}
}

// The .deb installs the binary in /usr/bin, the man pages, the vendor
// completions and a systemd unit that systemd accepts, and removes them;
// the .rpm is made beside it.
func TestDebInstallsAndRemoves(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "installing a package needs root")
	}
	dpkg := need(t, "dpkg", "a Debian system")
	sa := need(t, "systemd-analyze", "apt-get install systemd")
	dir := releaseDir(t)
	debs, _ := filepath.Glob(filepath.Join(dir, "dist", "*_amd64.deb"))
	rpms, _ := filepath.Glob(filepath.Join(dir, "dist", "*.x86_64.rpm"))
	if len(debs) != 1 || len(rpms) != 1 {
		t.Fatalf("debs %v, rpms %v", debs, rpms)
	}
	if out, err := exec.Command(dpkg, "-i", debs[0]).CombinedOutput(); err != nil {
		t.Fatalf("dpkg -i: %v %s", err, out)
	}
	installed := true
	defer func() {
		if installed {
			exec.Command(dpkg, "-r", "ioshape").Run()
		}
	}()
	files := []string{"/usr/bin/ioshape", "/usr/share/man/man1/ioshape-record.1", "/usr/share/bash-completion/completions/ioshape",
		"/usr/share/zsh/vendor-completions/_ioshape", "/usr/share/fish/vendor_completions.d/ioshape.fish",
		"/usr/lib/systemd/system/ioshape@.service", "/usr/share/doc/ioshape/LICENSE", "/usr/share/doc/ioshape/THIRD_PARTY_NOTICES"}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the package did not install %s", f)
		}
	}
	if out, err := exec.Command("/usr/bin/ioshape", "--version").Output(); err != nil || strings.Contains(string(out), "0.1.0-dev") {
		t.Errorf("/usr/bin/ioshape --version: %s %v", out, err)
	}
	unit, _ := os.ReadFile("/usr/lib/systemd/system/ioshape@.service")
	inst := filepath.Join(t.TempDir(), "ioshape@alice.service")
	os.WriteFile(inst, unit, 0o644)
	if out, err := exec.Command(sa, "verify", "--man=no", inst).CombinedOutput(); err != nil || strings.Contains(string(out), "ioshape@alice.service:") {
		t.Errorf("systemd-analyze verify of the installed unit: %v\n%s", err, out)
	}
	if out, err := exec.Command(dpkg, "-r", "ioshape").CombinedOutput(); err != nil {
		t.Fatalf("dpkg -r: %v %s", err, out)
	}
	installed = false
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("dpkg -r left %s", f)
		}
	}
}

// The Homebrew formula goreleaser writes parses, carries the licence, a
// livecheck and a service run as root, and its test block's commands do
// what the block asserts, on this build.
func TestHomebrewFormula(t *testing.T) {
	ruby := need(t, "ruby", "apt-get install ruby")
	dir := releaseDir(t)
	formula := filepath.Join(dir, "dist", "homebrew", "Formula", "ioshape.rb")
	b, err := os.ReadFile(formula)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ruby, "-c", formula).CombinedOutput(); err != nil || !strings.Contains(string(out), "Syntax OK") {
		t.Fatalf("ruby -c: %v %s", err, out)
	}
	for _, want := range []string{`license "Apache-2.0"`, "livecheck do", "service do", "require_root true", "test do", "sha256 ", "darwin_arm64.tar.gz", "linux_amd64.tar.gz"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the formula lacks %q", want)
		}
	}
	// What test do asserts, run against this build.
	if r := ioshape(t, nil, "--version"); !strings.Contains(r.stdout, "ioshape ") {
		t.Errorf("--version: %s", r.stdout)
	}
	if r := ioshape(t, nil, "import", "--help"); !strings.Contains(r.stdout, "fs_usage") {
		t.Error("import --help does not mention fs_usage, as the formula's test expects")
	}
	bad := filepath.Join(t.TempDir(), "missing")
	os.WriteFile(bad, []byte("not a trace\n"), 0o644)
	if r := ioshape(t, nil, "show", bad); r.code != 1 || !strings.Contains(r.stderr, "not an ioshape trace") {
		t.Errorf("show of a non-trace: exit %d, %q", r.code, r.stderr)
	}
}

// The same commit builds the same binary twice: no build time in it.
func TestReproducibleBuild(t *testing.T) {
	gr, err := goreleaserPath()
	if err != nil {
		testutil.Unavailable(t, "goreleaser is not installed")
	}
	dir := releaseDir(t)
	var sums []string
	for range 2 {
		c := exec.Command(gr, "build", "--snapshot", "--clean", "--single-target", "--id", "ioshape")
		c.Dir = dir
		c.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("goreleaser build: %v %s", err, out)
		}
		bins, _ := filepath.Glob(filepath.Join(dir, "dist", "ioshape_linux_amd64*", "ioshape"))
		if len(bins) != 1 {
			t.Fatalf("built %v", bins)
		}
		out, err := exec.Command("sha256sum", bins[0]).Output()
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, strings.Fields(string(out))[0])
	}
	if sums[0] != sums[1] {
		t.Errorf("two builds of one commit differ: %s, %s", sums[0], sums[1])
	}
}

// THIRD_PARTY_NOTICES names every module linked into the binary
// (scripts/third-party-notices.sh writes it).
func TestNoticesNameEveryModule(t *testing.T) {
	notices, err := os.ReadFile(testutil.Repo(t, "THIRD_PARTY_NOTICES"))
	if err != nil {
		t.Fatal(err)
	}
	for _, goos := range []string{"linux", "darwin"} {
		c := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{with .Module}}{{.Path}} {{.Version}}{{end}}{{end}}", "./cmd/ioshape")
		c.Dir = testutil.Root(t)
		c.Env = append(os.Environ(), "GOOS="+goos)
		out, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) == 0 || f[0] == "github.com/ioshape/ioshape" {
				continue
			}
			if !strings.Contains(string(notices), line) {
				t.Errorf("THIRD_PARTY_NOTICES lacks %s (%s): run scripts/third-party-notices.sh", line, goos)
			}
		}
	}
}
