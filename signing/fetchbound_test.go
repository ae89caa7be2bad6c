package signing_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// At most MaxFetches key sets of agents not yet seen to verify are fetched
// at once (16 by default): with 16 such fetches hanging, a request naming
// one more new agent is unverified at once (ErrFetchesBusy) without a
// connection to its host, while the stale keys of an agent that has
// verified are refreshed all the same. Once the fetches end the bound is
// whole again (a second wave is admitted as the first was), and the agent
// turned away verifies: nothing was remembered against it. A MaxFetches of
// 2 admits 2.
func TestVerifier_FetchesOfNewAgentsBounded(t *testing.T) {
	for _, tt := range []struct {
		name       string
		maxFetches int
		inFlight   int // the bound, in the verifier's promised value
	}{
		{"default", 0, 16},
		{"two", 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				key := signingtest.BothyKey()
				mem := newMem()
				dir := &signing.Directory{Keys: signers(key), MaxAge: time.Minute}
				mem.handle("known.example", dir)
				v := &signing.Verifier{Client: &http.Client{Transport: mem}, MaxFetches: tt.maxFetches}
				verify := func(host string) error {
					_, err := v.Verify(signedBy(t, key, "https://"+host, signing.Dictionary))
					return err
				}
				if err := verify("known.example"); err != nil {
					t.Fatalf("known agent: %v", err)
				}
				time.Sleep(2 * time.Minute) // its keys are stale now

				for round := range 2 {
					release := make(chan struct{})
					hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						<-release
						dir.ServeHTTP(w, r)
					})
					late := fmt.Sprintf("late%d.example", round)
					mem.handle(late, dir)
					var wg sync.WaitGroup
					for i := range tt.inFlight {
						host := fmt.Sprintf("new%d-%d.example", round, i)
						mem.handle(host, hang)
						wg.Go(func() {
							if err := verify(host); err != nil {
								t.Errorf("round %d, new agent %d, once released: %v", round, i, err)
							}
						})
					}
					synctest.Wait() // every one of them is in its fetch
					for i := range tt.inFlight {
						if n := mem.count(fmt.Sprintf("new%d-%d.example", round, i)); n != 1 {
							t.Fatalf("round %d, new agent %d: %d fetches, want 1 in flight", round, i, n)
						}
					}
					for range 3 {
						err := verify(late)
						if !errors.Is(err, signing.ErrFetchesBusy) || !errors.Is(err, signing.ErrUnverified) || reasonOf(err) != signing.ReasonDirectory {
							t.Errorf("round %d, agent past the bound: %v, want unverified, directory_unavailable, ErrFetchesBusy", round, err)
						}
					}
					if n := mem.count(late); n != 0 {
						t.Errorf("round %d, agent past the bound: its directory was fetched %d times", round, n)
					}
					if round == 0 {
						if err := verify("known.example"); err != nil {
							t.Errorf("known agent with stale keys, the bound reached: %v", err)
						}
						if n := mem.count("known.example"); n != 2 {
							t.Errorf("known agent: %d fetches, want 2 (its refresh not held back by the bound)", n)
						}
					}
					close(release)
					wg.Wait()
					if err := verify(late); err != nil {
						t.Errorf("round %d, agent past the bound, once the fetches ended: %v", round, err)
					}
					if n := mem.count(late); n != 1 {
						t.Errorf("round %d, agent past the bound, once the fetches ended: %d fetches, want 1", round, n)
					}
				}
			})
		})
	}
}
