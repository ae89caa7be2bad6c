package challenge

import (
	"bytes"
	"net/http"
	"testing"
)

// FuzzDetect: Detect never panics, its verdict is consistent, and it
// depends on the first MaxBytes of the body only (with MaxBody counting the
// whole length). Time is linear in MaxBytes by construction; see
// TestDetect_C6_LinearWorkBound and BenchmarkDetect_Adversarial.
func FuzzDetect(f *testing.F) {
	for _, name := range []string{"challenge/cf_managed.html", "challenge/px_captcha.html", "challenge/imperva_stub.html", "normal/login_recaptcha.html"} {
		f.Add(403, "challenge", readFixture(f, name))
	}
	f.Add(200, "", []byte("error code: 1020"))
	f.Add(429, "captcha", []byte{})
	f.Add(0, "", []byte("\xff\xfe<title>JUST A MOMENT...</title>._CF_CHL_OPT"))
	f.Fuzz(func(t *testing.T, status int, hv string, body []byte) {
		h := http.Header{}
		for _, k := range []string{"Cf-Mitigated", "X-Amzn-Waf-Action", "Set-Cookie", "Server", "X-Dd-B", "X-Datadome"} {
			h.Set(k, hv)
		}
		for _, hh := range []http.Header{nil, h} {
			v := Detect(status, hh, body)
			if v.Blocked != (v.Kind != None) || v.Blocked != (v.Rule != "") || v.Blocked != (len(v.Evidence) > 0) {
				t.Fatalf("inconsistent verdict %+v", v)
			}
			if !v.Blocked && v.Vendor != "" {
				t.Fatalf("vendor on a negative verdict: %+v", v)
			}
			// Two bodies of the same length that agree on the first
			// MaxBytes get the same verdict.
			head := make([]byte, MaxBytes)
			copy(head, body)
			a := append(append([]byte(nil), head...), body...)
			b := append(append([]byte(nil), head...), bytes.Repeat([]byte{'x'}, len(body))...)
			va, vb := Detect(status, hh, a), Detect(status, hh, b)
			if va.Rule != vb.Rule || va.Blocked != vb.Blocked {
				t.Fatalf("verdict depends on bytes beyond MaxBytes: %+v vs %+v", va, vb)
			}
		}
	})
}

// TestDetect_C6_LinearWorkBound: per sampled position the scan verifies at
// most one bucket of candidates, each at most one marker long, so the work
// is at most (MaxBytes/stride) * maxBucket * maxMarker byte comparisons plus
// the filter probes: linear in MaxBytes with a constant fixed by the table.
func TestDetect_C6_LinearWorkBound(t *testing.T) {
	m := std.m
	maxBucket, maxLen := 0, 0
	for b := 0; b+1 < len(m.start); b++ {
		maxBucket = max(maxBucket, int(m.start[b+1]-m.start[b]))
	}
	for _, n := range m.needles {
		maxLen = max(maxLen, len(n))
	}
	perPosition := maxBucket * maxLen
	t.Logf("stride %d, %d markers, %d gram entries, largest bucket %d, longest marker %d: at most %d byte compares per sampled position",
		m.stride, len(m.needles), len(m.entries), maxBucket, maxLen, perPosition)
	if maxBucket > 24 || perPosition > 2500 {
		t.Errorf("work per position %d (bucket %d) too large", perPosition, maxBucket)
	}
	if len(m.short) != 0 {
		t.Errorf("default table has %d markers scanned one by one", len(m.short))
	}
}

// adversarialPage repeats every marker of the default table minus its last
// byte, so that filter hits and long verifications are as frequent as the
// table allows, without any marker matching.
func adversarialPage() []byte {
	var b []byte
	for len(b) < 60_000 {
		for _, n := range std.m.needles {
			b = append(b, n[:len(n)-1]...)
			b = append(b, '~')
		}
	}
	return b[:60_000]
}

// BenchmarkDetect_Adversarial is the worst case the default table allows;
// compare with BenchmarkDetect_C6_Typical60KB in the same run.
func BenchmarkDetect_Adversarial(b *testing.B) {
	page := adversarialPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Detect(200, nil, page)
	}
}

// FuzzLayout: the layout pass never panics, gives every occurrence a
// place, whatever the bytes, and stopping early changes no place and
// reports more text than the bound it stopped at.
func FuzzLayout(f *testing.F) {
	for _, name := range []string{"challenge/cf_managed.html", "challenge/recaptcha_interstitial.html", "normal/article_quoting.html"} {
		f.Add(readFixture(f, name), uint8(7), uint16(50))
	}
	f.Add([]byte(`<table><tr><td>a<td>“b”<pre><!--x<script type=json>"</script>`), uint8(1), uint16(0))
	f.Add([]byte(`<meta name=x content="a`), uint8(2), uint16(3))
	f.Fuzz(func(t *testing.T, body []byte, step uint8, enough uint16) {
		if len(body) > MaxBytes {
			body = body[:MaxBytes]
		}
		mk := func() []occurrence {
			var occ []occurrence
			for at := 0; at < len(body) && len(occ) < maxOccurrences; at += int(step) + 1 {
				occ = append(occ, occurrence{start: int32(at), needle: uint16(len(occ)), place: 99})
			}
			return occ
		}
		full, early := mk(), mk()
		ff := layout(body, full, 1<<30)
		fe := layout(body, early, int(enough))
		for i := range full {
			if full[i].place > placeCode {
				t.Fatalf("occurrence at %d has no place", full[i].start)
			}
			if early[i].place != full[i].place {
				t.Fatalf("occurrence at %d: place %d with an early stop, %d without", full[i].start, early[i].place, full[i].place)
			}
		}
		if ff.visible > len(body) || ff.forms > len(body) || ff.fields > len(body) {
			t.Fatalf("facts %+v for %d bytes", ff, len(body))
		}
		if fe != ff && fe.visible <= int(enough) {
			t.Fatalf("stopped early at %d visible bytes, bound %d (full %+v)", fe.visible, enough, ff)
		}
	})
}
