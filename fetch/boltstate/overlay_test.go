package boltstate

import (
	"fmt"
	"testing"
)

// The layer after a checkpoint makes each bucket's map with room for the
// keys the layer before held in it, no more (a bucket it never wrote gets
// none): the hint keeps the maps from regrowing without carrying the
// buckets, or more memory than the last layer needed, into the next.
func TestLayer_NextRoomIsTheLastLayersKeys(t *testing.T) {
	l := newLayer()
	for i := range 300 {
		l.apply(change{kind: opPut, bucket: "fetched", key: fmt.Sprintf("http://a.test/%d", i), val: []byte("t")})
	}
	l.apply(change{kind: opPut, bucket: "sites", key: "http://a.test", val: []byte("1")})
	l.apply(change{kind: opPut, bucket: "sites", key: "http://a.test", val: []byte("2")})
	n := l.next()
	if len(n.buckets) != 0 || n.bytes != 0 {
		t.Fatalf("next layer holds %d buckets, %d bytes; want an empty layer", len(n.buckets), n.bytes)
	}
	for bucket, want := range map[string]int{"fetched": 300, "sites": 1, "never": 0} {
		if got := n.room[bucket]; got != want {
			t.Errorf("room for %q = %d, want %d (the keys the last layer held)", bucket, got, want)
		}
	}
	n.apply(change{kind: opPut, bucket: "fetched", key: "http://a.test/new", val: []byte("t")})
	if got, ok := n.get("fetched", "http://a.test/new"); !ok || string(got) != "t" {
		t.Errorf("next layer's write read back as %q, %v", got, ok)
	}
	if _, ok := n.get("fetched", "http://a.test/1"); ok {
		t.Error("next layer decides a key only the last layer held")
	}
}
