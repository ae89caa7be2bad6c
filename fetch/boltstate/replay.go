package boltstate

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// openLog opens the state's log files and replays what they hold: onto
// the bbolt file (then emptied) for a writable state, into the active
// layer for a read-only one. A damaged log file is copied aside
// (FILE.corrupt-TIME) and what precedes the damage is replayed; a record
// cut short by a crash was never acknowledged and is dropped.
func (s *State) openLog(timeout time.Duration, betweenResets func()) error {
	readOnly := s.DB.IsReadOnly()
	logs, err := openLogFiles(s.DB.Path(), readOnly, timeout)
	if err != nil {
		return err
	}
	s.logs = logs
	type logged struct {
		logRead
		file *logFile
		n    int // its place in logs
	}
	var found []logged
	for n, l := range logs {
		if l == nil {
			continue
		}
		r, err := readLog(l.path)
		if err != nil {
			closeLogFiles(logs)
			return err
		}
		found = append(found, logged{r, l, n})
	}
	// Older first; of two files of one generation (a fresh log), the first
	// file is taken for the newer, the one to write.
	slices.SortFunc(found, func(a, b logged) int {
		if c := cmp.Compare(a.gen, b.gen); c != 0 {
			return c
		}
		return cmp.Compare(b.n, a.n)
	})
	var gen uint64
	replayed := 0
	for n, r := range found {
		l := r.file
		gen = max(gen, r.gen)
		for _, rec := range r.records {
			for _, c := range rec {
				s.active.apply(c)
			}
			replayed++
		}
		if r.damage == nil && r.torn > 0 && n+1 < len(found) && len(found[n+1].records) > 0 {
			// Only the file written last can end in a cut record.
			r.damage = &LogError{Path: l.path, Reason: "a record cut short before the newer log file"}
		}
		if r.damage != nil {
			// What follows the damage cannot be trusted to follow it: it
			// is not replayed, and every file of the log is kept aside.
			if !readOnly {
				for _, f := range found {
					kept, err := copyAside(f.file.path, "corrupt")
					if err != nil {
						closeLogFiles(logs)
						return fmt.Errorf("%w (and %s could not be copied aside: %v)", r.damage, f.file.path, err)
					}
					if f.file == l {
						r.damage.KeptAs = kept
					}
				}
			}
			s.log.Warn("the state's log is damaged; replayed the writes before the damage", "file", l.path,
				"kept_as", r.damage.KeptAs, "err", r.damage)
			break
		}
		if r.torn > 0 {
			s.log.Info("the state's log ends in a write cut by a crash (never acknowledged); dropped", "file", l.path, "bytes", r.torn)
		}
	}
	if readOnly {
		return nil
	}
	if replayed > 0 {
		if err := update(s.DB, s.active.applyTo); err != nil {
			closeLogFiles(logs)
			return fmt.Errorf("boltstate: replaying the log: %w", err)
		}
		s.log.Info("replayed the state's log", "file", s.DB.Path(), "writes", replayed)
		s.active = newLayer()
	}
	// Empty the older file first: killed between the two, the newer file's
	// writes are replayed again on top of the older's, never the other way.
	older, newer := found[0].file, found[len(found)-1].file
	if err := older.reset(gen); err != nil {
		closeLogFiles(logs)
		return fmt.Errorf("boltstate: log: %w", err)
	}
	if betweenResets != nil {
		betweenResets()
	}
	if err := newer.reset(gen + 1); err != nil {
		closeLogFiles(logs)
		return fmt.Errorf("boltstate: log: %w", err)
	}
	s.w = newLogWriter(newer)
	return nil
}

// copyAside copies the file at path to a free name path.why-TIME and
// returns that name.
func copyAside(path, why string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst := asideName(path, why)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}
