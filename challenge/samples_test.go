package challenge

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/internal/testenv"
)

// namedVendors are the vendors the package names; a sample labelled
// "unknown" may get any other name (or "").
var namedVendors = []string{"cloudflare", "akamai", "imperva", "sucuri", "ddos-guard", "qrator", "aws-waf",
	"datadome", "perimeterx", "kasada", "f5", "vercel", "wordfence", "anubis", "google", "amazon",
	"recaptcha", "hcaptcha", "turnstile", "radware"}

// oneOrMany decodes a JSON string, list of strings or null.
type oneOrMany []string

func (o *oneOrMany) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = nil
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]string)(o))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*o = []string{s}
	return nil
}

type sidecar struct {
	Status    *int              `json:"status"`
	Headers   map[string]string `json:"headers"`
	Blocked   bool              `json:"blocked"`
	Vendor    oneOrMany         `json:"vendor"`
	Kind      oneOrMany         `json:"kind"`
	Truncated bool              `json:"truncated"`
	BodyForm  string            `json:"body_form"`
}

type sample struct {
	name string // vendor/name
	meta sidecar
	body []byte
}

func loadSamples(t *testing.T) []sample {
	t.Helper()
	dir := testenv.Shared(t, "challenge-samples")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		testenv.Missing(t, "no samples in %s", dir)
	}
	var out []sample
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s sample
		if err := json.Unmarshal(raw, &s.meta); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if s.body, err = os.ReadFile(strings.TrimSuffix(f, ".json") + ".html"); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		s.name = strings.TrimSuffix(filepath.ToSlash(rel), ".json")
		out = append(out, s)
	}
	return out
}

func (s *sample) header() http.Header {
	h := http.Header{}
	for k, v := range s.meta.Headers {
		for _, line := range strings.Split(v, "\n") {
			h.Add(k, line)
		}
	}
	return h
}

func (s *sample) status() int {
	if s.meta.Status == nil {
		return 0
	}
	return *s.meta.Status
}

// unclassifiable lists the partial samples whose stored content does not
// carry enough evidence, and why. Every other sample must be classified.
var unclassifiable = map[string]string{
	"ddos-guard/kemono_403_headers_only": "headers only: server ddos-guard, __ddg cookies and 403 are on served responses too; the body (js-challenge path) was not quoted",
}

// TestSamples_C6_B7_H8_RealPages classifies every real sample against its
// sidecar: blocked, vendor and kind.
func TestSamples_C6_B7_H8_RealPages(t *testing.T) {
	samples := loadSamples(t)
	var complete, partial, partialOK, skipped, blocked, negative int
	for _, s := range samples {
		partialSample := s.meta.Truncated || s.meta.Status == nil
		if partialSample {
			partial++
		} else {
			complete++
		}
		if why, ok := unclassifiable[s.name]; ok {
			if !partialSample {
				t.Errorf("%s: complete sample listed as unclassifiable", s.name)
			}
			skipped++
			t.Logf("%s: not classifiable from its content: %s", s.name, why)
			continue
		}
		v := Detect(s.status(), s.header(), s.body)
		if problem := checkVerdict(s.meta, v); problem != "" {
			t.Errorf("%s (status %d, partial %v): %s; got %s by %q %q", s.name, s.status(), partialSample, problem, v, v.Rule, v.Evidence)
			continue
		}
		if partialSample {
			partialOK++
		}
		if v.Blocked {
			blocked++
		} else {
			negative++
		}
	}
	t.Logf("samples: %d complete + %d partial; classified correctly: all %d complete, %d/%d partial (%d not classifiable from content); %d blocked, %d not blocked",
		complete, partial, complete, partialOK, partial, skipped, blocked, negative)
}

func checkVerdict(want sidecar, v Verdict) string {
	if v.Blocked != want.Blocked {
		return "blocked mismatch"
	}
	if !want.Blocked {
		if v.Kind != None || v.Vendor != "" {
			return "negative verdict with kind or vendor"
		}
		return ""
	}
	if !slices.Contains(want.Kind, v.Kind.String()) {
		return "kind " + v.Kind.String() + " not in " + strings.Join(want.Kind, "/")
	}
	if slices.Contains(want.Vendor, v.Vendor) {
		return ""
	}
	for _, w := range want.Vendor {
		if w == "unknown" && !slices.Contains(namedVendors, v.Vendor) {
			return ""
		}
	}
	return "vendor " + v.Vendor + " not in " + strings.Join(want.Vendor, "/")
}

// TestSamples_MarkerDepth measures how much of each real blocked page the
// verdict needs: the shortest prefix that already gives the full verdict.
// MaxBytes must leave a wide margin over the deepest one.
func TestSamples_MarkerDepth(t *testing.T) {
	deepest, deepestName := 0, ""
	for _, s := range loadSamples(t) {
		if !s.meta.Blocked || len(s.body) == 0 {
			continue
		}
		full := Detect(s.status(), s.header(), s.body)
		if !full.Blocked {
			continue
		}
		// The smallest n such that the first n bytes, passed as a body of
		// the full length (so that MaxBody rules see the same size), give
		// the same rule.
		need := len(s.body)
		for n := 0; n <= len(s.body); n += 64 {
			b := make([]byte, len(s.body))
			copy(b, s.body[:n])
			if Detect(s.status(), s.header(), b).Rule == full.Rule {
				need = n
				break
			}
		}
		if need > deepest {
			deepest, deepestName = need, s.name
		}
	}
	t.Logf("deepest marker needed: %d bytes (%s); MaxBytes = %d", deepest, deepestName, MaxBytes)
	if deepest > MaxBytes/2 {
		t.Errorf("markers sit at %d bytes, too close to MaxBytes", deepest)
	}
}

// TestSamples_NoticeTextMargin: the real blocked pages whose verdict rests
// on their text (it changes when text does not count) are notices well
// within NoticeText: at most half of it.
func TestSamples_NoticeTextMargin(t *testing.T) {
	textless := *std
	textless.notice = -1
	most, mostName, resting := 0, "", 0
	for _, s := range loadSamples(t) {
		v := Detect(s.status(), s.header(), s.body)
		if !v.Blocked || textless.detect(s.status(), s.header(), s.body).Rule == v.Rule {
			continue
		}
		resting++
		body := s.body[:min(len(s.body), MaxBytes)]
		if n := layout(body, nil, 1<<30).visible; n > most {
			most, mostName = n, s.name
		}
	}
	t.Logf("%d blocked samples rest on their text; the most visible text among them: %d bytes (%s); NoticeText = %d", resting, most, mostName, NoticeText)
	if resting == 0 {
		t.Fatal("no sample rests on its text: the measure is broken")
	}
	if most > NoticeText/2 {
		t.Errorf("%s rests on %d bytes of text, too close to NoticeText", mostName, most)
	}
}
