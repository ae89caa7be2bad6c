package boltjournal

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"
)

// checkRecord fails unless r's JSON is json.Marshal's, byte for byte, and
// reads back as r (its strings valid UTF-8).
func checkRecord(t *testing.T, r record) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got := r.appendJSON([]byte("prefix"))
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("appendJSON(%#v) = %s, want %s after the prefix", r, got, want)
	}
	var back record
	if err := json.Unmarshal(got[len("prefix"):], &back); err != nil {
		t.Fatalf("%s does not read back: %v", got, err)
	}
	// Invalid UTF-8 reads back as U+FFFD, as encoding/json writes it.
	if back != r && utf8.ValidString(r.URL) && utf8.ValidString(r.Key) && utf8.ValidString(r.From) {
		t.Errorf("%s reads back as %#v, want %#v", got, back, r)
	}
}

func TestRecord_AppendJSONIsJSONMarshal(t *testing.T) {
	for _, r := range []record{
		{},
		{URL: "https://a.test/"},
		{URL: "https://a.test/p?q=1&r=<2>", Seq: 7},
		{URL: "https://a.test/x", Key: "https://a.test/x", Depth: 3, From: "https://a.test/", Tries: 1, Seq: math.MaxUint64},
		{URL: "https://a.test/\"quoted\"\\", From: "seed", Depth: -1, Tries: -2},
		{URL: "https://é.test/\u2028\t\x00\x7f", From: "\xff\xfe"},
		{URL: "https://a.test/", Depth: math.MaxInt, Tries: math.MinInt},
	} {
		checkRecord(t, r)
	}
}

func FuzzRecordAppendJSON(f *testing.F) {
	f.Add("https://a.test/p", "https://a.test/p", 1, "seed", 0, uint64(3))
	f.Add("https://a.test/<&>", "", 0, "\"\\\x01", 2, uint64(0))
	f.Fuzz(func(t *testing.T, u, k string, depth int, from string, tries int, seq uint64) {
		checkRecord(t, record{URL: u, Key: k, Depth: depth, From: from, Tries: tries, Seq: seq})
	})
}
