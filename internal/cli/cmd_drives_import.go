package cli

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/predict"
	"github.com/ioshape/ioshape/internal/published"
	"github.com/ioshape/ioshape/internal/units"
)

type drivesImportOptions struct {
	label             string
	blackmagic        []float64
	admRead, admWrite []float64
	json              bool
}

func newDrivesImportCommand(g *globals) *cobra.Command {
	o := &drivesImportOptions{}
	c := &cobra.Command{
		Use:   "import [<file>] [--label NAME]",
		Short: "Make a drive profile from published benchmark results (CrystalDiskMark, KDiskMark, AmorphousDiskMark, ATTO, fio JSON)",
		Long: `Import reads a drive's benchmark results as they are published and keeps a
drive profile of them in the store, for 'ioshape predict --drive NAME':

  CrystalDiskMark    the text its Copy (or File > Save Text) gives, versions 3 to 8,
                     any profile (Default, Peak Performance, NVMe SSD…), with or without
                     the Mix tests, pasted as is, quoted with "> " or commented with //
  KDiskMark          its text report
  AmorphousDiskMark  the text its Copy gives
  ATTO               the Disk Benchmark's table (transfer size, write, read) as text or
                     CSV, in MB/s, GB/s or IO/s; queue depth 4 unless a line says so
  fio                its JSON output (--output-format=json), any number of jobs
  ioshape            a profile 'ioshape bench' made

--blackmagic READ,WRITE and --adm-read/--adm-write take a few numbers instead of a file.
A profile from a few numbers is built by stated rules and keeps the range those
numbers leave open (docs/drive-profile.md); predictions from it say so. Where the
numbers came from (the tool, version, profile, test size, date) is kept and shown.
A line that cannot be read is an error naming it; the store is then unchanged.`,
		Example: `  ioshape drives import sandisk-extreme.txt --label sandisk-extreme   # CrystalDiskMark's text
  ioshape drives import --blackmagic 1010,940 --label t7
  ioshape drives import --adm-read 2900,1100,450,38 --adm-write 2600,1000,400,90 --label x10pro`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDrivesImport(g, o, args) },
	}
	f := c.Flags()
	f.StringVar(&o.label, "label", "", "the profile's name (default: the drive the results name, else the file's name)")
	f.Float64SliceVar(&o.blackmagic, "blackmagic", nil, "Blackmagic Disk Speed Test's write and read MB/s: READ,WRITE")
	f.Float64SliceVar(&o.admRead, "adm-read", nil, "AmorphousDiskMark read MB/s: SEQ1M QD8,SEQ1M QD1,RND4K QD64,RND4K QD1")
	f.Float64SliceVar(&o.admWrite, "adm-write", nil, "AmorphousDiskMark write MB/s, in the same order")
	f.BoolVar(&o.json, "json", false, "print the profile as JSON")
	return c
}

func runDrivesImport(g *globals, o *drivesImportOptions, args []string) error {
	numbers := len(o.blackmagic) > 0 || len(o.admRead) > 0 || len(o.admWrite) > 0
	if numbers == (len(args) == 1) {
		return usageError{errors.New("give a results file, or --blackmagic or --adm-read/--adm-write (one of them)")}
	}
	if len(o.blackmagic) > 0 && (len(o.admRead) > 0 || len(o.admWrite) > 0) {
		return usageError{errors.New("give --blackmagic or --adm-read/--adm-write, not both")}
	}
	if numbers && o.label == "" {
		return usageError{errors.New("name the drive: --label NAME")}
	}
	var (
		p   *drive.Spec
		err error
	)
	switch {
	case len(o.blackmagic) > 0:
		p, err = blackmagicProfile(o.label, o.blackmagic)
	case numbers:
		p, err = drive.Coarse(o.label, o.admRead, o.admWrite)
	default:
		p, err = importResults(args[0], o.label)
	}
	if err != nil {
		return err
	}
	st, err := g.store()
	if err != nil {
		return err
	}
	path, err := st.SaveDrive(p)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(g.stdout, p)
	}
	writeImported(g, p, path)
	return nil
}

// importResults reads a results file into a profile: ioshape's own, or
// published figures built into one.
func importResults(path, label string) (*drive.Spec, error) {
	b, err := readSmallFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) && bytes.Contains(b, []byte(`"points"`)) {
		p, err := drive.Read(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if label != "" {
			p.Name = label
		}
		return p, nil
	}
	prov, err := published.Parse(filepath.Base(path), b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	name := label
	if name == "" {
		name = prov.Device
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	p, err := drive.Build(name, *prov)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// blackmagicProfile: Blackmagic Disk Speed Test gives two numbers, its
// sequential write and read of large transfers, queued; taken as SEQ1M at
// 8 in flight, what it does not say left to the range.
func blackmagicProfile(name string, v []float64) (*drive.Spec, error) {
	if len(v) != 2 {
		return nil, usageError{errors.New("--blackmagic takes two numbers, MB/s: READ,WRITE")}
	}
	prov := drive.Provenance{Tool: "Blackmagic Disk Speed Test", TestSize: "5 GB", TestBytes: 5e9}
	for i, op := range []string{"read", "write"} {
		prov.Tests = append(prov.Tests, drive.Test{Op: op, Access: "seq", SizeBytes: 1 << 20, Depth: 8, Threads: 1, MBs: v[i]})
	}
	p, err := drive.Build(name, prov)
	if err != nil {
		return nil, usageError{fmt.Errorf("--blackmagic: %w", err)}
	}
	return p, nil
}

func writeImported(g *globals, p *drive.Spec, path string) {
	w := g.stdout
	fmt.Fprintf(w, "drive %q: %s\n", p.Name, predict.SourceOf(p))
	if p.Provenance != nil {
		var names []string
		for _, t := range p.Provenance.Tests {
			names = append(names, fmt.Sprintf("%s %s MB/s", t.Name(), units.Num(t.MBs, 1)))
		}
		fmt.Fprintf(w, "  %d figures: %s\n", len(names), strings.Join(names, ", "))
		if len(p.Spans) > 0 {
			fmt.Fprintf(w, "  a disk: its 4 KiB random reads take %s one at a time, so its latency is taken to grow with seek distance\n",
				units.Micros(p.ServiceUs("read", "rand", 4096, 1)))
		}
		fmt.Fprintln(w, "  built by stated rules from these figures: predictions on it give a range (docs/drive-profile.md)")
	}
	fmt.Fprintf(w, "saved %s\n", path)
}
