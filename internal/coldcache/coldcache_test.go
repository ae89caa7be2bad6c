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

// EachHost visits every host in turn, not in memory order, once a loop,
// whatever the number of hosts (7 divides 14, and 8 shares a factor with it).
func TestEachHost_EveryHostInTurn(t *testing.T) {
	for _, hosts := range []int{10, 14} {
		var seen []int
		var n int
		testing.Benchmark(func(b *testing.B) {
			seen = seen[:0]
			EachHost(b, hosts, func(h int) { seen = append(seen, h) })
			n = b.N
		})
		if len(seen) != n || n < hosts {
			t.Fatalf("%d hosts: %d calls for b.N %d", hosts, len(seen), n)
		}
		first := map[int]bool{}
		for _, h := range seen[:hosts] {
			first[h] = true
		}
		if len(first) != hosts || seen[1] == 1 {
			t.Errorf("%d hosts: the first %d calls visit %v", hosts, hosts, seen[:hosts])
		}
	}
}
