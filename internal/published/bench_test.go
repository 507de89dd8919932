package published

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
)

// BenchmarkImport is 'ioshape drives import' without the store: published
// results read and built into a profile, for each kind of input.
//
//	go test ./internal/published -run '^$' -bench Import -benchmem
func BenchmarkImport(b *testing.B) {
	for _, name := range []string{"cdm8-usb-hdd.txt", "kdiskmark-1.6.0.txt", "atto-layout-vda.csv", "fio-3.33-vda.json"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "testdata", "published", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, err := Parse(name, text)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := drive.Build(name, *p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
