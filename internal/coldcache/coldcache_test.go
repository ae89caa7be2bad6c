package coldcache

import "testing"

// One Touch writes 512 bytes on 512 pages of its own, and the next Touch
// goes on where it stopped (the pages it writes are others).
func TestDisturber_TouchesPages(t *testing.T) {
	var d Disturber
	pages := func() map[int]int {
		m := map[int]int{}
		for i, b := range d.buf {
			if b != 0 {
				m[i/4096] += int(b)
			}
		}
		return m
	}
	d.Touch()
	first := pages()
	if len(first) != 512 {
		t.Fatalf("one Touch wrote %d pages; want 512", len(first))
	}
	d.Touch()
	if n := len(pages()); n != 1024 {
		t.Errorf("two Touches wrote %d pages; want 1,024", n)
	}
}
