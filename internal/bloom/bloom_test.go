package bloom

import (
	"fmt"
	"testing"
)

// Every key added is reported as maybe added (no false negatives), for
// filters of every start, across many layers; keys never added are
// reported as added at most 2 % of the time.
func TestFilter_NoFalseNegativesAndBoundedRate(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    *Filter
		keys int
	}{
		{"zero value, grown 200 times", &Filter{}, 200_000},
		{"New(2000), grown 100 times", New(2000), 200_000},
		{"New(100000)", New(100_000), 300_000},
		{"one key", New(1000), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.f.MayContain("http://a.test/never") {
				t.Fatal("an empty filter contains a key")
			}
			for i := range tt.keys {
				tt.f.Add(fmt.Sprintf("http://h%d.test/p/%d", i%2000, i))
			}
			for i := range tt.keys {
				if k := fmt.Sprintf("http://h%d.test/p/%d", i%2000, i); !tt.f.MayContain(k) {
					t.Fatalf("%s added, then not contained", k)
				}
			}
			if tt.f.Len() != tt.keys {
				t.Errorf("Len = %d, want %d", tt.f.Len(), tt.keys)
			}
			const probes = 200_000
			fp := 0
			for i := range probes {
				if tt.f.MayContain(fmt.Sprintf("http://other%d.test/q/%d", i%977, i)) {
					fp++
				}
			}
			if rate := float64(fp) / probes; rate > 0.02 {
				t.Errorf("false-positive rate %.4f over %d layers, want at most 0.02", rate, len(tt.f.layers))
			}
			if per := float64(tt.f.Bytes()) / float64(tt.keys); tt.keys > 1000 && per > 4.1 {
				t.Errorf("%.2f bytes a key, want at most 4.1", per)
			}
			t.Logf("%d keys, %d layers, %.2f bytes a key, %d false positives in %d", tt.keys, len(tt.f.layers), float64(tt.f.Bytes())/float64(tt.keys), fp, probes)
		})
	}
}

func FuzzFilter(f *testing.F) {
	f.Add("http://a.test/", "http://b.test/")
	f.Fuzz(func(t *testing.T, a, b string) {
		var fl Filter
		fl.Add(a)
		if !fl.MayContain(a) {
			t.Fatalf("%q added, then not contained", a)
		}
		fl.Add(b)
		if !fl.MayContain(a) || !fl.MayContain(b) {
			t.Fatalf("%q or %q added, then not contained", a, b)
		}
	})
}
