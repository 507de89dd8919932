package dtrace

import (
	"github.com/ioshape/ioshape/internal/testutil"
	"github.com/ioshape/ioshape/internal/tracer/session"

	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ioshape/ioshape/internal/parse"
)

// The D script cannot run here (no DTrace on Linux CI), so it is checked
// against what the reference documents for macOS: every probe, every
// translated argument field and every option it uses must appear in
// ../shared/reference/tracing.md, and every line it prints must be one
// the parser reads.
func TestDScriptFollowsReference(t *testing.T) {
	ref, err := os.ReadFile(testutil.Shared(t, "reference", "tracing.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(ref)
	sc, err := render(session.Target{Pids: []int{42}}, []int{42}, true)
	if err != nil {
		t.Fatal(err)
	}
	sc.Text = stripComments(sc.Text)
	probes := regexp.MustCompile(`(?m)^(\w+):(\w*):(\w*):(\w+)`).FindAllStringSubmatch(sc.Text, -1)
	if len(probes) < 20 {
		t.Fatalf("only %d probes found", len(probes))
	}
	for _, p := range probes {
		provider, fn, name := p[1], p[3], p[4]
		switch provider {
		case "syscall":
			if !strings.Contains(doc, "`"+fn+"`") && !strings.Contains(doc, "syscall::"+fn+":") {
				t.Errorf("syscall %s is not in the reference's syscall table", fn)
			}
		case "io":
			if !strings.Contains(doc, "io:::"+name) {
				t.Errorf("io:::%s is not documented", name)
			}
		case "dtrace":
			if name != "BEGIN" && name != "END" {
				t.Errorf("unexpected dtrace probe %s", name)
			}
		default:
			t.Errorf("provider %s is not one the reference covers", provider)
		}
	}
	for _, f := range regexp.MustCompile(`args\[\d\]->(\w+)`).FindAllStringSubmatch(sc.Text, -1) {
		if !strings.Contains(doc, "args[0]->"+f[1]) && !strings.Contains(doc, "args[1]->"+f[1]) && !strings.Contains(doc, "`"+f[1]+"`") {
			t.Errorf("field %s is not in the reference's translator table", f[1])
		}
	}
	for _, o := range regexp.MustCompile(`#pragma D option (\w+)`).FindAllStringSubmatch(sc.Text, -1) {
		if !strings.Contains(doc, "`"+o[1]+"`") && !strings.Contains(doc, o[1]+"=") {
			t.Errorf("option %s is not documented", o[1])
		}
	}
	// dev_statname is "??" on macOS: the script must key devices on major/minor.
	if strings.Contains(sc.Text, "dev_statname") || strings.Contains(sc.Text, "fi_pathname") {
		t.Error("the script uses a field that is '??' on macOS")
	}
	// At io:::done, pid and execname are the completing context's: they are
	// taken at start only.
	done := sc.Text[strings.Index(sc.Text, "io:::done"):strings.Index(sc.Text, "io:::done\n/io_ts[arg0] == 0/")]
	if regexp.MustCompile(`[^_]pid|execname`).MatchString(strings.ReplaceAll(done, "io_pid", "")) {
		t.Error("io:::done reads pid or execname")
	}
	for _, c := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(strings.Join(callExprs(), " "), -1) {
		if !parse.KnownDTraceCall(c[1]) {
			t.Errorf("the script prints call %q, which the parser does not know", c[1])
		}
	}
	// The printf formats have the fields the parser reads.
	for prefix, want := range map[string]int{`"I `: 12, `"C `: 11} {
		i := strings.Index(sc.Text, `printf(`+prefix)
		line := sc.Text[i : i+strings.Index(sc.Text[i:], `\n"`)]
		if got := strings.Count(line, "%"); got != want {
			t.Errorf("%s line prints %d fields, the parser reads %d", prefix, got, want)
		}
	}
}

var comments = regexp.MustCompile(`(?s)/\*.*?\*/`)

func stripComments(s string) string { return comments.ReplaceAllString(s, "") }

func callExprs() []string {
	var out []string
	for _, c := range dCalls {
		out = append(out, c.Call)
	}
	return out
}

func TestDScriptModes(t *testing.T) {
	sys, err := render(session.Target{Names: []string{"Final Cut Pro"}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if text := stripComments(sys.Text); strings.Contains(text, "io:::") || strings.Contains(text, "@unmatched") {
		t.Error("without the io provider (SIP), the script must not use it")
	}
	if !strings.Contains(sys.Text, `/(execname == "Final Cut Pro")/`) {
		t.Error("name filter missing")
	}
	all, _ := render(session.Target{All: true}, nil, true)
	if !strings.Contains(all.Text, "/(1)/") || !strings.Contains(all.Text, "io:::start") {
		t.Error("whole-system script")
	}
	pid, _ := render(session.Target{Pids: []int{7, 9}}, []int{7, 9}, true)
	if !strings.Contains(pid.Text, "progenyof(7) || progenyof(9)") {
		t.Error("pid filter must follow children with progenyof")
	}
}
