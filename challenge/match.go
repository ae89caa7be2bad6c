package challenge

import "encoding/binary"

// The body scan finds every marker of a rule table in one pass over the
// examined bytes, without allocating and in time linear in their length.
//
// Each marker (lower-cased) of length L ≥ gramLen has L-gramLen+1 four-byte
// grams. With s = minLen-gramLen+1 (minLen: the shortest marker; s is
// capped at maxStride), any
// occurrence of any marker covers s consecutive gram positions, and one of
// them is a multiple of s. So the scan looks only at text positions 0, s, 2s,
// …: it loads the four bytes there, folds them (OR 0x20, a superset of ASCII
// case folding), hashes them and tests a 128 Kibit filter. A marker registers
// the s grams of its least common window, each with its offset, so a filter
// hit names the candidate (marker, start) pairs, which are verified with an
// exact ASCII case-insensitive compare. Markers shorter than gramLen (only in
// user tables) are searched one by one.

const (
	gramLen    = 4
	filterBits = 17 // 128 Kibit = 16 KiB filter
	bucketBits = 13 // 8192 candidate lists
	maxStride  = 12
)

type gramEntry struct {
	gram   uint32 // the folded gram, to skip bucket-mates cheaply
	needle uint16 // index into matcher.needles
	off    uint16 // offset of the gram within the needle
}

type matcher struct {
	needles [][]byte // ASCII lower-cased markers, deduplicated
	stride  int      // 0 when there is no marker of gramLen bytes or more
	filter  [1 << filterBits / 64]uint64
	start   [1<<bucketBits + 1]uint32 // bucket b holds entries[start[b]:start[b+1]]
	entries []gramEntry
	short   []uint16 // markers shorter than gramLen
}

// hashGram maps a folded gram to its filter index; the bucket index is its
// top bucketBits bits.
func hashGram(g uint32) uint32 { return (g * 0x9E3779B1) >> (32 - filterBits) }

func foldGram(b []byte) uint32 { return binary.LittleEndian.Uint32(b) | 0x20202020 }

// byteCost estimates how common a (folded) byte is in HTML and prose, so
// that each marker is indexed by its rarest window.
func byteCost(c byte) int {
	switch {
	case c == ' ' || c == '"' || c == '*': // '*' is a folded newline/tab
		return 9
	case c == 'e' || c == 't' || c == 'a' || c == 'o' || c == 'i' || c == 'n' || c == '<' || c == '>' || c == '=':
		return 7
	case c == 's' || c == 'r' || c == 'h' || c == 'l' || c == 'd' || c == '/':
		return 5
	case c == 'c' || c == 'u' || c == 'm' || c == 'p' || c == 'f' || c == 'g' || c == 'w' || c == 'y' || c == 'b' || c == '-' || c == '.':
		return 3
	case c >= '0' && c <= '9', c == ':', c == '\'', c == ',', c == ';':
		return 2
	default:
		return 1
	}
}

// commonText is a sample of ordinary HTML, CSS, JavaScript and English
// prose. Its grams are frequent on served pages, so a marker is better
// indexed by other parts of it.
const commonText = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Home</title>
<link rel="stylesheet" href="/assets/main.css"><script src="/assets/app.js" defer></script>
<style>.main-content .container{margin:0 auto;max-width:60rem;padding:0 1.5rem;color:#333}
body{font-family:sans-serif;background-color:#fff}.button:hover{text-decoration:underline}</style>
</head><body class="page"><header id="top"><nav><ul><li><a href="/">Home</a></li>
<li><a href="/about/">About</a></li></ul></nav></header><main><div class="content">
<span class="date">Posted on</span><img src="/images/photo.jpg" alt="A photo" width="640">
<form action="/search" method="get"><input type="text" name="q" placeholder="Search"></form>
<script>window.dataLayer = window.dataLayer || []; function track(event, value) {
var element = document.getElementById('content'); if (element !== null) { return
element.getAttribute('data-value'); } document.addEventListener('DOMContentLoaded', init);}
</script><p>The information on this page is provided for the convenience of our readers and
there is nothing here that you will not find in the library. We are going to update the
contents of the report with the results of the last meeting, and other news from the
community, as soon as they are available. Please contact the committee with any question
about the service; they will answer within a week, and the team would like to thank
everyone who has been involved in making it a success, which would not have been possible
without them. Read more about the history of the project and the people behind it.</p>
</div></main><footer><p>Copyright 2024. All rights reserved. Privacy policy.</p></footer>
</body></html>`

// commonGramList adds frequent grams the sample misses.
const commonGramList = "ing |the | the|and | and|ted | to |you | you|ion |tion|ent | of |of t|for | for| is |is a|our | our|" +
	"with|ith |e th|s th|ere |here|n th|ver |in t|at t|e to|re y|ome |ate |ight|from|ore |inte|nter|ter |er t|es a|" +
	"rom |e an|ese |est |ity | by |by t| a b|nce |ave |e co|to t|-con|tent|onte|nten|auto| aut|ding|ding|" +
	"clas|lass|ass=|ss=\"|styl|tyle|href|ref=|<div|div |</di|<spa|span|pan>|</p>|<a h| hre|src=|rc=\""

var commonGrams = func() map[uint32]bool {
	m := map[uint32]bool{}
	for i := 0; i+gramLen <= len(commonText); i++ {
		m[foldGram([]byte(commonText[i:]))] = true
	}
	for i := 0; i+gramLen <= len(commonGramList); i += gramLen + 1 {
		m[foldGram([]byte(commonGramList[i:]))] = true
	}
	return m
}()

// gramCost estimates how often a gram occurs in ordinary pages.
func gramCost(g []byte) int {
	cost, letters := 0, 0
	for _, c := range g {
		c |= 0x20
		cost += byteCost(c)
		if c >= 'a' && c <= 'z' || c == ' ' {
			letters++
		}
	}
	if letters == len(g) {
		cost += 6
	}
	if commonGrams[foldGram(g)] {
		cost += 40
	}
	return cost
}

// newMatcher indexes needles, which must be lower-case and non-empty.
func newMatcher(needles [][]byte) *matcher {
	m := &matcher{needles: needles}
	minLen := 0
	for i, n := range needles {
		if len(n) < gramLen {
			m.short = append(m.short, uint16(i))
			continue
		}
		if minLen == 0 || len(n) < minLen {
			minLen = len(n)
		}
	}
	if minLen == 0 {
		return m
	}
	s := min(minLen-gramLen+1, maxStride)
	m.stride = s
	type keyed struct {
		bucket uint32
		e      gramEntry
	}
	var all []keyed
	var load [1 << bucketBits]uint16 // entries per bucket so far
	for i, n := range needles {
		if len(n) < gramLen {
			continue
		}
		// Pick the window of s grams with the lowest total cost: common
		// bytes, and buckets that already hold candidates, cost more.
		best, bestCost := 0, -1
		for o := 0; o+s-1 <= len(n)-gramLen && o < 1<<15; o++ {
			cost := 0
			for k := o; k < o+s; k++ {
				cost += gramCost(n[k:k+gramLen]) + int(load[hashGram(foldGram(n[k:]))>>(filterBits-bucketBits)])
			}
			if bestCost < 0 || cost < bestCost {
				best, bestCost = o, cost
			}
		}
		for k := best; k < best+s; k++ {
			h := hashGram(foldGram(n[k:]))
			m.filter[h>>6] |= 1 << (h & 63)
			all = append(all, keyed{h >> (filterBits - bucketBits), gramEntry{foldGram(n[k:]), uint16(i), uint16(k)}})
			load[h>>(filterBits-bucketBits)]++
		}
	}
	// Counting sort into buckets.
	for _, k := range all {
		m.start[k.bucket+1]++
	}
	for b := 1; b < len(m.start); b++ {
		m.start[b] += m.start[b-1]
	}
	m.entries = make([]gramEntry, len(all))
	fill := m.start
	for _, k := range all {
		m.entries[fill[k.bucket]] = k.e
		fill[k.bucket]++
	}
	return m
}

// scan sets bit i of found for every needle i that occurs in b, and
// records the occurrences in occ, in the order found, until it is full; it
// returns how many it recorded.
func (m *matcher) scan(b []byte, found []uint64, occ []occurrence) int {
	nocc := 0
	if s := m.stride; s > 0 {
		n := len(b)
		for p := 0; p+gramLen <= n; p += s {
			g := foldGram(b[p:])
			h := hashGram(g)
			if m.filter[h>>6]&(1<<(h&63)) == 0 {
				continue
			}
			bk := h >> (filterBits - bucketBits)
			for _, e := range m.entries[m.start[bk]:m.start[bk+1]] {
				if e.gram != g {
					continue
				}
				id := e.needle
				if nocc == len(occ) && found[id>>6]&(1<<(id&63)) != 0 {
					continue
				}
				j := p - int(e.off)
				nd := m.needles[id]
				if j < 0 || j+len(nd) > n {
					continue
				}
				if lower(b[j]) == nd[0] && equalFold(b[j:j+len(nd)], nd) {
					found[id>>6] |= 1 << (id & 63)
					if nocc < len(occ) {
						occ[nocc] = occurrence{start: int32(j), needle: id}
						nocc++
					}
				}
			}
		}
	}
	for _, id := range m.short {
		for at := 0; at < len(b); {
			i := indexFold(b[at:], m.needles[id])
			if i < 0 {
				break
			}
			found[id>>6] |= 1 << (id & 63)
			if nocc == len(occ) {
				break
			}
			occ[nocc] = occurrence{start: int32(at + i), needle: id}
			nocc++
			at += i + 1
		}
	}
	return nocc
}

// lower folds one ASCII letter to lower case.
func lower(c byte) byte {
	if c-'A' < 26 {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether s equals the lower-case needle, ignoring ASCII case.
func equalFold(s, needle []byte) bool {
	if len(s) != len(needle) {
		return false
	}
	for i, c := range needle {
		if lower(s[i]) != c {
			return false
		}
	}
	return true
}

// indexFold is a plain ASCII case-insensitive search for a lower-case needle.
func indexFold(s, needle []byte) int {
	if len(needle) == 0 {
		return 0
	}
	for i := 0; i+len(needle) <= len(s); i++ {
		if lower(s[i]) == needle[0] && equalFold(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

// containsFoldString is indexFold for header values.
func containsFoldString(s, needle string) bool {
	if len(needle) == 0 {
		return true
	}
	for i := 0; i+len(needle) <= len(s); i++ {
		j := 0
		for j < len(needle) && lower(s[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return true
		}
	}
	return false
}

// lowerASCII returns s with ASCII letters lower-cased.
func lowerASCII(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return b
}

// bitSet reports bit i.
func bitSet(set []uint64, i uint16) bool { return set[i>>6]&(1<<(i&63)) != 0 }
