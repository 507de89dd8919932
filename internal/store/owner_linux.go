package store

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Do runs fn with the file system's permission checks made as the owner:
// files and directories fn creates are theirs, and root writes nothing
// the owner could not — a link the owner (or anyone) planted leads only
// where the owner may write. Without an owner, or not as root, fn runs as
// it is.
//
// Linux keeps the identity file access is checked with (fsuid, fsgid and
// the supplementary groups) per thread, so fn runs on its goroutine's
// thread, locked to it and given the owner's identity; path operations
// in fn must stay on that goroutine (what fn starts elsewhere runs as
// root). A thread whose identity cannot be restored is never reused: the
// runtime ends it with its goroutine.
func (o Owner) Do(fn func() error) error {
	if !o.Set || os.Geteuid() != 0 {
		return fn()
	}
	runtime.LockOSThread()
	groups, err := unix.Getgroups()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	restored := false
	defer func() {
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	// setgroups(2) itself is per thread; glibc and Go's syscall package
	// apply it to every thread, so the raw call is made here.
	gids := []uint32{uint32(o.GID)}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafePointer(&gids[0])), 0); e != 0 {
		return fmt.Errorf("cannot act as uid %d: setgroups: %w", o.UID, e)
	}
	unix.Setfsgid(o.GID)
	unix.Setfsuid(o.UID)
	if cur, _ := unix.SetfsuidRetUid(-1); cur != o.UID {
		return fmt.Errorf("cannot act as uid %d: setfsuid", o.UID)
	}
	err = fn()
	unix.Setfsuid(0)
	unix.Setfsgid(0)
	back := make([]uint32, len(groups))
	for i, g := range groups {
		back[i] = uint32(g)
	}
	var p uintptr
	if len(back) > 0 {
		p = uintptr(unsafePointer(&back[0]))
	}
	_, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(back)), p, 0)
	cur, _ := unix.SetfsuidRetUid(-1)
	restored = e == 0 && cur == 0
	return err
}
