package sitemap

import "testing"

// TestInScope_DotSegmentEscapes: no spelling of ".." (raw, percent-encoded
// in any case, mixed, behind an encoded or back slash) lets a page climb
// out of the sitemap's directory; harmless spellings stay inside.
func TestInScope_DotSegmentEscapes(t *testing.T) {
	const sm = "https://example.com/blog/sitemap.xml"
	tests := []struct {
		page string
		in   bool
	}{
		{"https://example.com/blog/post", true},
		{"https://example.com/blog/a/b.html?x=../..", true},
		{"https://example.com/blog/./post", true},
		{"https://example.com/blog/a/../post", true},
		{"https://example.com/blog/..post", true},
		{"https://example.com/blog/post..", true},
		{"https://example.com/blog/.well", true},
		{"https://example.com/blog/a/%2e%2e/b", true},
		{"https://example.com/blog/../admin", false},
		{"https://example.com/blog/..", false},
		{"https://example.com/blog/../", false},
		{"https://example.com/blog/%2e%2e/admin", false},
		{"https://example.com/blog/%2E%2E/admin", false},
		{"https://example.com/blog/.%2E/admin", false},
		{"https://example.com/blog/%2e./admin", false},
		{"https://example.com/blog/%2E./admin", false},
		{"https://example.com/blog/a/../../admin", false},
		{"https://example.com/blog/./../admin", false},
		{"https://example.com/blog/%2e/%2e%2e/admin", false},
		{"https://example.com/blog/..%2Fadmin", false},
		{"https://example.com/blog/..%2fadmin", false},
		{"https://example.com/blog/..%5Cadmin", false},
		{"https://example.com/blog/..\\admin", false},
		{"https://example.com/blog\\..\\admin", false},
		{"https://example.com/blog//../admin", false},
		{"https://example.com/blog/../admin?q=/blog/", false},
		{"https://example.com/blog/../admin#/blog/", false},
		{"https://example.com/blog/%2e%2e", false},
		{"https://example.com/blog/%2e%2e?x", false},
		{"https://example.com/admin", false},
	}
	for _, tc := range tests {
		if got := InScope(sm, tc.page); got != tc.in {
			t.Errorf("InScope(%q, %q) = %v, want %v", sm, tc.page, got, tc.in)
		}
	}
	// The sitemap's own URL is resolved too.
	if InScope("https://example.com/blog/../sitemap.xml", "https://example.com/blog2/x") != true ||
		InScope("https://example.com/a/%2e%2e/blog/sitemap.xml", "https://example.com/a/x") {
		t.Error("sitemap URL with dot segments not resolved")
	}
	// The Reader applies the same rule.
	in := `<urlset><url><loc>https://example.com/blog/ok</loc></url><url><loc>https://example.com/blog/%2e%2e/admin</loc></url>` +
		`<url><loc>https://example.com/blog/../admin</loc></url></urlset>`
	got, r := collect(t, []byte(in), &Options{Location: sm})
	if len(got) != 1 || got[0].Loc != "https://example.com/blog/ok" || r.Dropped() != 2 {
		t.Errorf("reader: %q, dropped %d", locs(got), r.Dropped())
	}
}

func TestResolvePath_NoAllocCommonCase(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = resolvePath("/blog/2024/post.html") }); n != 0 {
		t.Errorf("allocs = %v", n)
	}
}
