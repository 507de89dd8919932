//go:build !darwin && !linux

package fsusage

import "errors"

func scanProcesses() (threads, parents map[uint32]uint32, err error) {
	return nil, nil, errors.New("no process table on this system")
}
