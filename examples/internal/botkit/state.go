package botkit

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// SchemaVersion is the version of the examples' state layout. A state file
// written by a newer version is refused (never rewritten); one from an older
// version is moved aside and a fresh one started.
//
// Versions: 1 kept robots.txt copies, validators, the fetched set and sitemap
// state as the examples' own JSON records; 2 keeps them through
// fetch/boltstate (robots/boltstore, sitemap/boltstore and fetch's stores),
// whose records version 1 files do not hold.
const SchemaVersion = 2

var (
	metaBucket = []byte("goodbot-examples")
	schemaKey  = []byte("schema")
)

// ErrStateInUse is returned when another process holds the state file.
var ErrStateInUse = errors.New("state file is in use by another run")

// ErrStateNewer is returned for a state file written by a newer version.
var ErrStateNewer = errors.New("state file was written by a newer version")

// DefaultStatePath returns the default state file for the bot name: in the
// user's cache directory, or the working directory when there is none.
func DefaultStatePath(name string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return name + ".db"
	}
	return filepath.Join(dir, "goodbot", name+".db")
}

// OpenState opens (creating if needed) the bbolt state file at path. A
// damaged file (see fetch/boltstate.OpenDB: truncated, a flipped byte, a
// panic inside bbolt) or one from an older version is never overwritten nor
// a crash: it is renamed to path+".corrupt-TIME" or path+".old-TIME", the
// log says so, and a fresh file is started, so the run still does its work
// and nothing is lost. A file from a newer version, or one locked by another
// run, is an error.
func OpenState(path string, log *slog.Logger) (*bolt.DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("state %s: %w", path, err)
		}
	}
	db, err := boltstate.OpenDB(path, &boltstate.Options{LockTimeout: time.Second, Logger: log})
	switch {
	case errors.Is(err, boltstate.ErrLocked):
		return nil, fmt.Errorf("state %s: %w", path, ErrStateInUse)
	case err != nil:
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	v, empty, err := schemaOf(db)
	if err != nil {
		db.Close()
		return reopenAside(path, "corrupt", log, "state file is corrupt; kept it aside and started a fresh one", "err", err)
	}
	switch {
	case v > SchemaVersion:
		db.Close()
		return nil, fmt.Errorf("state %s: %w (schema %d, this program reads %d); use a newer program or another -state file", path, ErrStateNewer, v, SchemaVersion)
	case v < SchemaVersion && !empty:
		db.Close()
		return reopenAside(path, "old", log, "state file is from an older version; kept it aside and started a fresh one", "schema", v)
	case v < SchemaVersion:
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(metaBucket)
			if err != nil {
				return err
			}
			return b.Put(schemaKey, []byte(strconv.Itoa(SchemaVersion)))
		})
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("state %s: %w", path, err)
		}
	}
	return db, nil
}

// reopenAside moves the closed state file at path aside (why: "corrupt",
// "old"), logs msg with attrs, and opens a fresh one.
func reopenAside(path, why string, log *slog.Logger, msg string, attrs ...any) (*bolt.DB, error) {
	moved, err := boltstate.MoveAside(path, why)
	if err != nil {
		return nil, fmt.Errorf("state %s (%s) could not be moved aside: %w", path, why, err)
	}
	log.Warn(msg, append([]any{"file", path, "kept_as", moved}, attrs...)...)
	return OpenState(path, log)
}

// schemaOf reads the schema version (0 when absent) and whether the file
// holds no bucket at all. A panic from a damaged file is turned into an error.
func schemaOf(db *bolt.DB) (v int, empty bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged file: %v", r)
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		empty = true
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			empty = false
			return nil
		}); err != nil {
			return err
		}
		b := tx.Bucket(metaBucket)
		if b == nil {
			return nil
		}
		n, err := strconv.Atoi(string(b.Get(schemaKey)))
		if err != nil {
			return fmt.Errorf("bad schema value %q", b.Get(schemaKey))
		}
		v = n
		return nil
	})
	return v, empty, err
}
