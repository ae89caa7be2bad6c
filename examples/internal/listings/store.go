package listings

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The outcomes of a listing check (D6, D13).
const (
	Verified    = "verified"     // the page links to the backlink
	LinkMissing = "link_missing" // the page was read and has no such link
	Unverified  = "unverified"   // robots.txt disallows the page (D13) or the domain is blocked (D14): not broken
	Error       = "error"        // the page could not be read (status or network error)
)

// Record is what DirectoriesBot keeps about one listing (D6): the outcome,
// the URL fetched, the response code and the single link that matched.
type Record struct {
	Listing   string    `json:"listing_url"`
	Backlink  string    `json:"backlink"`
	Directory string    `json:"directory"`
	Checked   time.Time `json:"checked"`
	Outcome   string    `json:"outcome"`
	FetchedAs string    `json:"fetched_url,omitempty"` // final URL after redirects
	Status    int       `json:"status,omitempty"`
	Matched   string    `json:"matched_link,omitempty"`
	Detail    string    `json:"detail,omitempty"` // fetch outcome and error, for errors and unverified
}

// Store keeps listing records in a bucket of the bot's bbolt state file.
type Store struct {
	DB     *bolt.DB
	Bucket string // default "directoriesbot/listings"
}

func (s *Store) bucket() []byte {
	if s.Bucket == "" {
		return []byte("directoriesbot/listings")
	}
	return []byte(s.Bucket)
}

// Key is the state key of a listing: one business page may be listed in
// several directories, each with its own record.
func Key(directory, listingURL string) string { return directory + " " + listingURL }

// Get returns the record stored under key (see [Key]), if any. A record that cannot be decoded
// is reported as an error (and treated by the caller as never checked).
func (s *Store) Get(key string) (Record, bool, error) {
	var r Record
	var found bool
	err := s.DB.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket())
		if b == nil {
			return nil
		}
		v := b.Get([]byte(key))
		if v == nil {
			return nil
		}
		found = true
		return json.Unmarshal(v, &r)
	})
	if err != nil {
		return Record{}, false, fmt.Errorf("listings: state for %s: %w", key, err)
	}
	return r, found, nil
}

// Put stores r under Key(r.Directory, r.Listing).
func (s *Store) Put(r Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.DB.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket())
		if err != nil {
			return err
		}
		return b.Put([]byte(Key(r.Directory, r.Listing)), v)
	})
}

// All returns every record, in key order; undecodable ones are skipped.
func (s *Store) All() ([]Record, error) {
	var out []Record
	err := s.DB.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket())
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var r Record
			if json.Unmarshal(v, &r) == nil {
				out = append(out, r)
			}
			return nil
		})
	})
	return out, err
}
