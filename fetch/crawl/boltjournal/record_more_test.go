package boltjournal

import "testing"

// Each byte encoding/json escapes or passes is judged on its own, not only
// beside another that needs the slow path: a string holding just one of
// them, and the printable ASCII at either end of the range.
func TestRecord_AppendJSONEachSpecialByte(t *testing.T) {
	for _, s := range []string{"<", ">", "&", `"`, `\`, "\x1f", "\x20", "\x7e", "\x7f", "\x00", "\u2028", "a<b", "a>b", "a&b", `a"b`, `a\b`} {
		checkRecord(t, record{URL: "https://a.test/" + s, Key: s, From: s + "x"})
	}
}
