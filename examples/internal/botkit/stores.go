package botkit

import (
	"context"
	"crypto/ed25519"
	"sort"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/sitemap"
	bolt "go.etcd.io/bbolt"
)

// stores are the crawl-state stores of a session: fetch/boltstate over the
// session's state file, or memory when there is none.
type stores struct {
	robots     robots.Store
	validators fetch.ValidatorStore
	fetched    fetch.FetchedSet
	sitemaps   sitemap.Store
	journal    *boltjournal.Journal // nil unless the bot resumes its crawls
	state      *boltstate.State     // nil without a state file
}

// openStores returns the stores over db; with resume, the fetched set and
// validators are staged and committed by the crawl journal with each
// outcome.
func openStores(db *bolt.DB, resume bool) (stores, error) {
	if db == nil {
		return stores{robots: &robots.MemoryStore{}, validators: &fetch.MemoryValidators{},
			fetched: &fetch.MemorySet{}, sitemaps: &sitemap.MemoryStore{}}, nil
	}
	st, err := boltstate.New(db)
	if err != nil {
		return stores{}, err
	}
	s := stores{robots: st.Robots, validators: st.Validators, fetched: st.Fetched, sitemaps: st.Sitemaps, state: st}
	if resume {
		g := st.Stage()
		s.validators, s.fetched = g, g
		if s.journal, err = boltjournal.New(st, g); err != nil {
			st.Close()
			return stores{}, err
		}
	}
	return s, nil
}

// SitemapStore returns the sitemap.Store kept in the session's state file.
func (s *Session) SitemapStore() sitemap.Store {
	return s.stores.sitemaps
}

func pubThumb(k ed25519.PrivateKey) (string, error) {
	return signing.Thumbprint(k.Public().(ed25519.PublicKey))
}

// SitemapPages returns the page URLs of the last sitemap read of site kept
// in w's Store, sorted.
func SitemapPages(ctx context.Context, w *sitemap.Walker, site string) []string {
	if w.Store == nil {
		return nil
	}
	st, err := w.Store.Load(ctx, site)
	if err != nil || st == nil {
		return nil
	}
	snap := st.Snapshot()
	pages := make([]string, 0, len(snap.Pages))
	for p := range snap.Pages {
		pages = append(pages, p)
	}
	sort.Strings(pages)
	return pages
}
