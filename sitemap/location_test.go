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

// TestResolvePath_NoAllocCommonCase: a path with nothing to resolve (no
// "." or ".." segment, no encoded or back slash, no empty segment) is
// returned as is without allocating (resolvePath's doc). Dots inside a
// segment, or a segment that merely starts or ends with dots, are not dot
// segments (RFC 3986 section 5.2.4 removes only "." and "..").
func TestResolvePath_NoAllocCommonCase(t *testing.T) {
	for _, p := range []string{
		"/blog/2024/post.html",
		"/.well-known/security.txt",
		"/blog/.hidden",
		"/blog/v1./post",
		"/blog/post.",
		"/blog/post..",
		"/blog/..post",
		"/blog/.../post",
		"/",
		"",
	} {
		if got := resolvePath(p); got != p {
			t.Errorf("resolvePath(%q) = %q, want it unchanged", p, got)
		}
		if n := testing.AllocsPerRun(100, func() { _ = resolvePath(p) }); n != 0 {
			t.Errorf("resolvePath(%q): allocs = %v, want 0", p, n)
		}
	}
}

// TestInScope_EmptyAuthority: a page URL whose authority is empty
// ("https:///...", RFC 3986 section 3.2) has no host, so it is on no
// sitemap's site, whatever follows the empty authority, even a '@' that
// would read as userinfo if the path were taken for the authority.
func TestInScope_EmptyAuthority(t *testing.T) {
	for _, page := range []string{
		"https:///@a.test",
		"https:///@a.test/x",
		"https:///a.test/x",
		"https://",
		"://a.test/x",
	} {
		if InScope("https://a.test/sitemap.xml", page) {
			t.Errorf("InScope(%q) = true, want false: no host", page)
		}
	}
	if !InScope("https://a.test/sitemap.xml", "https://u@a.test/x") {
		t.Error("userinfo before the host: want in scope")
	}
}
