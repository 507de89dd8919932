package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CheckLinks refuses a path that leads through a symbolic link another
// user owns: a link root follows when it is owned by root, by the user
// ioshape acts for (o) or by this process's user, and by no one else —
// as the kernel's fs.protected_symlinks would have it for that user, but
// for every directory, not only sticky ones, and before ioshape resolves
// anything itself. Components that do not exist yet end the walk.
func CheckLinks(path string, o Owner) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	trusted := func(uid uint32) bool {
		return uid == 0 || int(uid) == os.Geteuid() || int(uid) == os.Getuid() || o.Set && int(uid) == o.UID
	}
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && !trusted(st.Uid) {
			return fmt.Errorf("refusing to follow %s: a symbolic link owned by another user (uid %d)", next, st.Uid)
		}
		if hops++; hops > 40 {
			return fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		rest = append(strings.Split(strings.TrimPrefix(filepath.Clean(target), "/"), "/"), rest...)
		cur = "/"
	}
	return nil
}
