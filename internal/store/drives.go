package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ioshape/ioshape/internal/drive"
)

// Drive profiles (what `ioshape bench` measured) live beside the traces,
// one JSON file each, named by the profile's name.

func (s *Store) drivesDir() string { return filepath.Join(s.Dir, "drives") }

var driveNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// DriveFileName makes a profile name safe as a file name.
func DriveFileName(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, name)
	safe = strings.Trim(safe, ".-_")
	if len(safe) > 64 {
		safe = safe[:64]
	}
	if safe == "" {
		safe = "drive"
	}
	return safe
}

// SaveDrive keeps a drive profile under its (file-safe) name, replacing
// one of that name; it returns the file's path.
func (s *Store) SaveDrive(p *drive.Spec) (string, error) {
	p.Name = DriveFileName(p.Name)
	if err := s.Ensure(); err != nil {
		return "", err
	}
	if err := s.owner.Do(func() error { return s.mkdirOwned(s.drivesDir()) }); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.drivesDir(), p.Name+".json")
	err = s.owner.Do(func() error {
		tmp, err := os.CreateTemp(s.drivesDir(), ".drive-*.tmp")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		_, err = tmp.Write(append(b, '\n'))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			os.Chmod(tmp.Name(), 0o644)
			s.owner.Chown(tmp.Name())
			err = os.Rename(tmp.Name(), path)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("cannot save the drive profile: %w", err)
	}
	return path, nil
}

// ErrNoDrive is a drive profile the store does not hold.
var ErrNoDrive = errors.New("no such drive profile")

// Drive reads the profile named name.
func (s *Store) Drive(name string) (*drive.Spec, error) {
	if !driveNameRe.MatchString(name) {
		return nil, fmt.Errorf("%w %q", ErrNoDrive, name)
	}
	path := filepath.Join(s.drivesDir(), name+".json")
	if !isRegular(path) {
		return nil, fmt.Errorf("no drive profile %q in %s (see 'ioshape drives'; measure one with 'sudo ioshape bench --dir DIR --label %s'): %w", name, s.drivesDir(), name, ErrNoDrive)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := drive.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Drives lists the store's drive profiles by name; ones that cannot be
// read are skipped.
func (s *Store) Drives() ([]*drive.Spec, error) {
	des, err := os.ReadDir(s.drivesDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*drive.Spec
	for _, de := range des {
		if name, ok := strings.CutSuffix(de.Name(), ".json"); ok && de.Type().IsRegular() {
			if p, err := s.Drive(name); err == nil {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
