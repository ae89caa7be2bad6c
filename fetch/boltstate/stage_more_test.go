package boltstate_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// While an Add reads the file, another Add claims the same URL (staged,
// not committed): the first then finds the claim and does not claim the
// URL again, so that one URL is new to one Add only.
func TestStage_AddWhileAnotherClaimsDuringItsRead(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	g := st.Stage()
	const u = "http://a.test/page"
	var inner []bool
	boltstate.SetAfterRead(g, func() {
		boltstate.SetAfterRead(g, nil)
		ok, err := g.Add(ctx, u)
		if err != nil {
			t.Error(err)
		}
		inner = append(inner, ok)
	})
	ok, err := g.Add(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if len(inner) != 1 || !inner[0] {
		t.Fatalf("the racing Add did not claim the URL (%v): the test did not run as meant", inner)
	}
	if ok {
		t.Error("Add claimed a URL another Add claimed during its read: fetched twice")
	}
}
