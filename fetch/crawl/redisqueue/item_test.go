package redisqueue

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestItem_RoundTrip(t *testing.T) {
	for _, raw := range []string{"http://a.test/", "https://b.test:8443/x?y=1", "http://c.test/%C3%A9"} {
		it := item(raw)
		it.Depth, it.Tries, it.From = 3, 1, "link"
		got, err := decodeItem(it.Site, it.Key, encodeItem(it))
		if err != nil || got.URL.String() != it.URL.String() || got.Key != it.Key || got.Site != it.Site ||
			got.Depth != 3 || got.Tries != 1 || got.From != "link" {
			t.Errorf("%s: round trip = %+v, %v", raw, got, err)
		}
	}
}

// Whatever is stored under a key, reading it back gives an item of that
// site and key or an error matching ErrBadItem, never a panic, and never
// a password in the message.
func FuzzDecodeItem(f *testing.F) {
	for _, s := range []string{
		encodeItem(item("http://a.test/x")), `{"u":"http://u:secret@a.test/x","k":"k","s":"http://b.test"}`,
		`{"u":"ftp://a.test/","k":"http://a.test/x","s":"http://a.test"}`, "{", "", "null", `{"d":-1}`,
	} {
		f.Add("http://a.test", "http://a.test/x", s)
	}
	f.Fuzz(func(t *testing.T, site, key, raw string) {
		it, err := decodeItem(site, key, raw)
		if err != nil {
			if !errors.Is(err, ErrBadItem) {
				t.Fatalf("error %v does not match ErrBadItem", err)
			}
			var s stored
			if json.Unmarshal([]byte(raw), &s) == nil {
				if u, perr := url.Parse(s.URL); perr == nil && u.User != nil {
					if p, ok := u.User.Password(); ok && p != "" && strings.Contains(err.Error(), u.User.String()+"@") {
						t.Fatalf("error leaks a password: %v", err)
					}
				}
			}
			return
		}
		if it.Site != site || it.Key != key || it.URL == nil || it.Depth < 0 || it.Tries < 0 {
			t.Fatalf("decoded %+v from %q under %s %s", it, raw, site, key)
		}
		if again, err := decodeItem(site, key, encodeItem(it)); err != nil || again.URL.String() != it.URL.String() {
			t.Fatalf("re-encoding %+v: %+v, %v", it, again, err)
		}
	})
}

// Each check of decodeItem on its own: an entry wrong in one way only is
// refused.
func TestItem_DecodeRefusesEachFault(t *testing.T) {
	const site, key = "http://a.test", "http://a.test/x"
	for _, c := range []struct{ name, raw string }{
		{"not http", `{"u":"ftp://a.test/x","k":"http://a.test/x","s":"http://a.test"}`},
		{"no host", `{"u":"http:///x","k":"http://a.test/x","s":"http://a.test"}`},
		{"other key", `{"u":"http://a.test/x","k":"http://a.test/y","s":"http://a.test"}`},
		{"other site", `{"u":"http://a.test/x","k":"http://a.test/x","s":"http://b.test"}`},
		{"negative depth", `{"u":"http://a.test/x","k":"http://a.test/x","s":"http://a.test","d":-1}`},
		{"negative tries", `{"u":"http://a.test/x","k":"http://a.test/x","s":"http://a.test","t":-1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if it, err := decodeItem(site, key, c.raw); !errors.Is(err, ErrBadItem) {
				t.Errorf("decodeItem = %+v, %v; want ErrBadItem", it, err)
			}
		})
	}
	if _, err := decodeItem(site, key, `{"u":"https://a.test/x","k":"http://a.test/x","s":"http://a.test"}`); err != nil {
		t.Errorf("https item refused: %v", err)
	}
}
