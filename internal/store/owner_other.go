//go:build !linux

package store

// Do runs fn. Only Linux lets one thread check file access as another
// user; elsewhere the paths root writes are checked instead (CheckLinks,
// and the store's lookups refuse what the owner does not own).
func (o Owner) Do(fn func() error) error { return fn() }
