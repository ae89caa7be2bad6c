package sitemap

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/internal/testenv"
)

// samplesDir is ../shared/sitemap-samples relative to the repository root.
var samplesDir = filepath.Join("..", "..", "shared", "sitemap-samples")

type manifest struct {
	Files []struct {
		File          string `json:"file"`
		Format        string `json:"format"`
		Gzip          bool   `json:"gzip"`
		Count         int    `json:"expected_url_count"`
		StrictCount   *int   `json:"expected_url_count_strict"`
		AssumedURL    string `json:"assumed_sitemap_url"`
		ExpectedPairs []struct {
			Loc     string  `json:"loc"`
			LastMod *string `json:"lastmod"`
		} `json:"expected_pairs"`
	} `json:"files"`
}

// TestSamples reads the real-world files of ../shared/sitemap-samples and
// checks each against manifest.json: the lenient URL count, the sample
// (loc, lastmod) pairs, the detected format, and, where the manifest
// assumes a sitemap URL, the count under the sitemaps.org location rule.
func TestSamples(t *testing.T) {
	dir := testenv.Shared(t, "sitemap-samples")
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		testenv.Missing(t, "sitemap samples: %v", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	formats := map[string]Format{"urlset": FormatURLSet, "sitemapindex": FormatIndex, "text": FormatText,
		"rss": FormatRSS, "atom": FormatAtom, "rss1.0-rdf": FormatRDF}
	for _, f := range m.Files {
		t.Run(f.File, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				testenv.Missing(t, "sitemap sample listed in the manifest: %v", err)
			}
			got, r := collect(t, data, nil)
			if r.Err() != nil && !errors.Is(r.Err(), ErrSyntax) {
				t.Errorf("Err = %v", r.Err())
			}
			if len(got) != f.Count {
				t.Errorf("got %d URLs, want %d: %q", len(got), f.Count, locs(got))
			}
			if want, ok := formats[f.Format]; !ok || r.Format() != want {
				t.Errorf("Format = %v, manifest says %q", r.Format(), f.Format)
			}
			byLoc := make(map[string]Entry)
			for _, e := range got {
				byLoc[e.Loc] = e
				if e.IsSitemap != (f.Format == "sitemapindex") {
					t.Errorf("%s: IsSitemap = %v", e.Loc, e.IsSitemap)
				}
			}
			for _, p := range f.ExpectedPairs {
				e, ok := byLoc[p.Loc]
				if !ok {
					t.Errorf("missing %q", p.Loc)
					continue
				}
				if p.LastMod == nil || *p.LastMod == "" {
					if e.HasLastMod || e.LastModErr != nil {
						t.Errorf("%s: lastmod %v (%v), want none", p.Loc, e.LastMod, e.LastModErr)
					}
					continue
				}
				want, err := ParseLastMod(*p.LastMod)
				if err != nil {
					t.Errorf("%s: ParseLastMod(%q): %v", p.Loc, *p.LastMod, err)
				} else if !e.HasLastMod || !e.LastMod.Equal(want) {
					t.Errorf("%s: lastmod %v (%v), want %v", p.Loc, e.LastMod, e.LastModErr, want)
				}
			}
			if f.AssumedURL != "" {
				scoped, r := collect(t, data, &Options{Location: f.AssumedURL})
				want := f.Count
				if f.StrictCount != nil {
					want = *f.StrictCount
				}
				if len(scoped) != want || r.Dropped() != f.Count-want {
					t.Errorf("location rule (%s): %d URLs, %d dropped; want %d", f.AssumedURL, len(scoped), r.Dropped(), want)
				}
			}
		})
	}
}
