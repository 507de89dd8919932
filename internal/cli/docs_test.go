package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/ioshape/ioshape/internal/testutil"
)

// jsonKeys collects every object key in a JSON document.
func jsonKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[k] = true
			jsonKeys(e, into)
		}
	case []any:
		for _, e := range x {
			jsonKeys(e, into)
		}
	}
}

// Every field 'show --json' and 'classify --json' print is documented, so
// the reference cannot fall behind the output again.
func TestJSONDocsCoverOutput(t *testing.T) {
	for _, c := range []struct{ doc, golden string }{
		{"show-json.md", "show-cp-cat-dd.json"},
		{"classify.md", "classify-cp-cat-dd.json"},
	} {
		raw, err := os.ReadFile(testutil.Repo(t, "testdata", "golden", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		jsonKeys(v, keys)
		doc, err := os.ReadFile(testutil.Repo(t, "docs", c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for k := range keys {
			if !regexp.MustCompile("[`\"]" + regexp.QuoteMeta(k) + "[`\"]").Match(doc) {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("docs/%s does not document %v (from %s)", c.doc, missing, c.golden)
		}
	}
}
