//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package boltstate

import (
	"os"
	"syscall"
	"time"

	berrors "go.etcd.io/bbolt/errors"
)

// lock takes the advisory lock bbolt takes on f (flock, exclusive unless
// shared), waiting up to timeout, so that the file is checked while no other
// process writes it. bbolt's own flock on the same descriptor then succeeds
// at once.
func lock(f *os.File, shared bool, timeout time.Duration) error {
	how := syscall.LOCK_EX | syscall.LOCK_NB
	if shared {
		how = syscall.LOCK_SH | syscall.LOCK_NB
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EWOULDBLOCK {
			return err
		}
		if time.Now().After(deadline) {
			return berrors.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
}
