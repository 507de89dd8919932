package store

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
)

// Owner is the user files should belong to: the sudo caller if ioshape runs
// under sudo, else nobody in particular (files keep the process's owner).
type Owner struct {
	UID, GID int
	Home     string
	Set      bool
}

// InvokingUser returns the user who ran sudo, if ioshape runs under sudo.
func InvokingUser() Owner {
	if os.Geteuid() != 0 {
		return Owner{}
	}
	uid, err1 := strconv.Atoi(os.Getenv("SUDO_UID"))
	gid, err2 := strconv.Atoi(os.Getenv("SUDO_GID"))
	if err1 != nil || err2 != nil || uid == 0 {
		return Owner{}
	}
	o := Owner{UID: uid, GID: gid, Set: true}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		o.Home = u.HomeDir
	}
	return o
}

// Chown hands path to the owner, if there is one.
func (o Owner) Chown(path string) error {
	if !o.Set {
		return nil
	}
	return os.Lchown(path, o.UID, o.GID)
}

// DefaultDir is where traces live by default.
func DefaultDir() (string, error) {
	owner := InvokingUser()
	home := owner.Home
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = h
	}
	// Under sudo XDG_DATA_HOME is usually root's or unset; the caller's
	// default is the right place.
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && !owner.Set && filepath.IsAbs(x) && runtime.GOOS != "darwin" {
		return filepath.Join(x, "ioshape"), nil
	}
	return DirIn(home), nil
}

// DirIn is the default store of the user whose home is home.
func DirIn(home string) string {
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "ioshape")
	}
	return filepath.Join(home, ".local", "share", "ioshape")
}

// LookupOwner finds a user by name (or numeric ID) as an Owner.
func LookupOwner(name string) (Owner, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if u2, err2 := user.LookupId(name); err2 == nil {
			u, err = u2, nil
		} else {
			return Owner{}, err
		}
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return Owner{}, fmt.Errorf("user %s has no numeric IDs", name)
	}
	return Owner{UID: uid, GID: gid, Home: u.HomeDir, Set: uid != 0}, nil
}
