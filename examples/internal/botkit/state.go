package botkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/examples/internal/crawl"
	"github.com/goodbot-go/goodbot/fetch"
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

// journal is the crawl journal kept in the state file: the queued items
// (by normalised URL) and the count admitted per site. Its steps commit the
// staged fetched marks and validators of the URLs whose outcome they record,
// in the same transaction.
type journal struct {
	db    *bolt.DB
	stage *boltstate.Stage
	done  fetch.FetchedSet // the committed marks
}

var (
	frontierBucket = []byte("frontier")
	sitesBucket    = []byte("frontier-sites")
)

// journalItem is a queued item as stored.
type journalItem struct {
	URL   string `json:"u"`
	Depth int    `json:"d,omitempty"`
	From  string `json:"f,omitempty"`
	Tries int    `json:"t,omitempty"`
	Seq   uint64 `json:"s"`
}

// Load implements crawl.Journal. With nothing queued the crawl starts afresh
// and the per-site counts of the last one are forgotten.
func (j *journal) Load(ctx context.Context) ([]crawl.Item, map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	type seqItem struct {
		seq uint64
		it  crawl.Item
	}
	var items []seqItem
	counts := map[string]int{}
	err := j.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(frontierBucket); b != nil {
			if err := b.ForEach(func(k, v []byte) error {
				var ji journalItem
				if json.Unmarshal(v, &ji) != nil {
					return nil // a damaged record: that URL is rediscovered or lost, never a crash
				}
				u, err := url.Parse(ji.URL)
				if err != nil || u.Host == "" {
					return nil
				}
				items = append(items, seqItem{ji.Seq, crawl.Item{URL: u, Key: string(k), Site: crawl.Site(u), Depth: ji.Depth, From: ji.From, Tries: ji.Tries}})
				return nil
			}); err != nil {
				return err
			}
		}
		if b := tx.Bucket(sitesBucket); b != nil {
			return b.ForEach(func(k, v []byte) error {
				n, _ := strconv.Atoi(string(v))
				counts[string(k)] = n
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("crawl journal: %w", err)
	}
	if len(items) == 0 {
		if len(counts) > 0 {
			err := j.db.Update(func(tx *bolt.Tx) error {
				if tx.Bucket(sitesBucket) == nil {
					return nil
				}
				return tx.DeleteBucket(sitesBucket)
			})
			if err != nil {
				return nil, nil, fmt.Errorf("crawl journal: %w", err)
			}
		}
		return nil, nil, nil
	}
	sort.Slice(items, func(a, b int) bool { return items[a].seq < items[b].seq })
	out := make([]crawl.Item, len(items))
	for i, si := range items {
		out[i] = si.it
	}
	return out, counts, nil
}

// Done implements crawl.Journal.
func (j *journal) Done(ctx context.Context, key string) (bool, error) {
	return j.done.Has(ctx, key)
}

// Record implements crawl.Journal: one transaction commits the staged marks
// and validators of step.Done and changes the queue.
func (j *journal) Record(ctx context.Context, step crawl.Step) error {
	return j.stage.Commit(ctx, step.Done, func(tx *bolt.Tx) error {
		fb, err := tx.CreateBucketIfNotExists(frontierBucket)
		if err != nil {
			return err
		}
		sb, err := tx.CreateBucketIfNotExists(sitesBucket)
		if err != nil {
			return err
		}
		for _, keys := range [][]string{step.Done, step.Dropped} {
			for _, k := range keys {
				if err := fb.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		for _, it := range step.Queued {
			key := []byte(it.Key)
			if fb.Get(key) == nil && it.Tries == 0 {
				n, _ := strconv.Atoi(string(sb.Get([]byte(it.Site))))
				if err := sb.Put([]byte(it.Site), []byte(strconv.Itoa(n+1))); err != nil {
					return err
				}
			}
			seq, err := fb.NextSequence()
			if err != nil {
				return err
			}
			raw, err := json.Marshal(journalItem{URL: it.URL.String(), Depth: it.Depth, From: it.From, Tries: it.Tries, Seq: seq})
			if err != nil {
				return err
			}
			if err := fb.Put(key, raw); err != nil {
				return err
			}
		}
		return nil
	})
}
