package redisqueue

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// stored is an item as kept in Redis: JSON with short names, the URL as a
// string.
type stored struct {
	URL   string `json:"u"`
	Key   string `json:"k"`
	Site  string `json:"s"`
	Depth int    `json:"d,omitempty"`
	From  string `json:"f,omitempty"`
	Tries int    `json:"t,omitempty"`
}

func encodeItem(it crawl.Item) string {
	s := stored{Key: it.Key, Site: it.Site, Depth: it.Depth, From: it.From, Tries: it.Tries}
	if it.URL != nil {
		s.URL = it.URL.String()
	}
	b, _ := json.Marshal(s) // plain strings and ints: cannot fail
	return string(b)
}

// decodeItem reads an item back; site and key are the queue and the key it
// was found under, which must be the item's own. Anything else is an error wrapping ErrBadItem.
func decodeItem(site, key, raw string) (crawl.Item, error) {
	var s stored
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return crawl.Item{}, fmt.Errorf("%w: %d bytes: %v", ErrBadItem, len(raw), err)
	}
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		return crawl.Item{}, fmt.Errorf("%w: url: %v", ErrBadItem, err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return crawl.Item{}, fmt.Errorf("%w: %q is not an http(s) URL", ErrBadItem, u.Redacted())
	case s.Key == "" || s.Key != key || s.Site != site:
		return crawl.Item{}, fmt.Errorf("%w: key %q, site %q in the queue of %q", ErrBadItem, s.Key, s.Site, site)
	case s.Depth < 0 || s.Tries < 0:
		return crawl.Item{}, fmt.Errorf("%w: depth %d, tries %d", ErrBadItem, s.Depth, s.Tries)
	}
	return crawl.Item{URL: u, Key: s.Key, Site: s.Site, Depth: s.Depth, From: s.From, Tries: s.Tries}, nil
}
