package redisgate

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// Workers whose clocks disagree pace a host together: a State's instants are
// kept on the Redis server's clock. A worker whose clock is 10 s behind
// reads the gap another worker stored as still to come (not 10 s over), and
// the gap it stores is read by the other as still to come (not 10 s away);
// the State's expiry is set on the server's clock too. Each instant comes
// at most a little late, never early.
func TestGate_C3_WorkersWithSkewedClocks(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	prefix := testPrefix()
	right := newTestGate(t, c, prefix, nil)
	behind := newTestGate(t, c, prefix, nil)
	const skewed = 10 * time.Second
	behind.now = func() time.Time { return time.Now().Add(-skewed) }
	const host = "http://skewed.test:80"
	const gap = 2 * time.Second

	// ready lets the reader go at once, or, with wait set, after a short
	// wait, so that the State it reads comes from the renewal that follows
	// the wait rather than from the acquisition.
	wait := false
	ready := func(politeness.State) (time.Duration, error) {
		if wait {
			wait = false
			return time.Millisecond, nil
		}
		return 0, nil
	}
	// hand stores a State through from's lease, with its instants gap after
	// from's now, and returns what to's lease reads, with to's now and the
	// real time between the two nows.
	hand := func(from, to *Gate) (politeness.State, time.Time, time.Duration) {
		t.Helper()
		l, err := from.Acquire(ctx, host, proceed)
		if err != nil {
			t.Fatal(err)
		}
		written := time.Now()
		at := from.clock().Add(gap)
		next := politeness.State{NotBefore: at, PauseUntil: at, DownUntil: at, GaveUpUntil: at, QuotaUntil: at,
			QuotaGap: time.Second, Strikes: 1, Expires: from.clock().Add(time.Hour)}
		if err := l.Release(next); err != nil {
			t.Fatal(err)
		}
		ttl := c.PTTL(ctx, from.stateKey(host)).Val()
		if ttl < time.Hour-5*time.Second || ttl > time.Hour+5*time.Second {
			t.Errorf("the State expires in %v, want an hour", ttl)
		}
		l, err = to.Acquire(ctx, host, ready)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(l.State())
		return l.State(), to.clock(), time.Since(written)
	}
	for _, tc := range []struct {
		name     string
		from, to *Gate
		wait     bool
	}{
		{"from the clock behind", behind, right, false},
		{"to the clock behind", right, behind, false},
		{"same clock", right, right, false},
		{"from the clock behind, read after a wait", behind, right, true},
		{"to the clock behind, read after a wait", right, behind, true},
	} {
		wait = tc.wait
		st, now, elapsed := hand(tc.from, tc.to)
		if wait {
			t.Fatalf("%s: the reader did not wait", tc.name)
		}
		for name, got := range map[string]time.Time{"NotBefore": st.NotBefore, "PauseUntil": st.PauseUntil,
			"DownUntil": st.DownUntil, "GaveUpUntil": st.GaveUpUntil, "QuotaUntil": st.QuotaUntil} {
			// Never early: at least gap after the writer's now, which was
			// elapsed before the reader's. Late by a few round trips at
			// most (100 ms allows a loaded machine).
			if left := got.Sub(now); left < gap-elapsed || left > gap+100*time.Millisecond {
				t.Errorf("%s: %s is %v after the reader's now (%v after the writer's), want %v after the writer's",
					tc.name, name, left, left+elapsed, gap)
			}
		}
		if st.Strikes != 1 || st.QuotaGap != time.Second {
			t.Errorf("%s: the State's counts changed: %+v", tc.name, st)
		}
	}
}

// skewOf bounds the offset between the server's clock and the process's:
// zero while the bounds include zero (the clocks may agree), else the
// bounds, which contain the true offset. toLocal and toServer move every
// instant of a State that is set, late rather than early, and no other
// field; a zero State stays zero.
func TestSkew(t *testing.T) {
	sent := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	recv := sent.Add(4 * time.Millisecond) // a 4 ms round trip
	for _, tc := range []struct {
		name   string
		server time.Time // the server's reading
		want   skew
	}{
		{"agree", sent.Add(2 * time.Millisecond), skew{}},
		{"within the round trip", sent.Add(3 * time.Millisecond), skew{}},
		{"read as the answer came", recv, skew{}},                                  // lo is 0
		{"read a millisecond before sending", sent.Add(-time.Millisecond), skew{}}, // hi is 0 (the reading is cut to the millisecond)
		{"a millisecond after the answer", recv.Add(time.Millisecond), skew{lo: time.Millisecond, hi: 6 * time.Millisecond}},
		{"2 ms before sending", sent.Add(-2 * time.Millisecond), skew{lo: -6 * time.Millisecond, hi: -time.Millisecond}},
		{"server 10 s ahead", sent.Add(10*time.Second + 2*time.Millisecond), skew{lo: 10*time.Second - 2*time.Millisecond, hi: 10*time.Second + 3*time.Millisecond}},
		{"server 10 s behind", sent.Add(-10*time.Second + 2*time.Millisecond), skew{lo: -10*time.Second - 2*time.Millisecond, hi: -10*time.Second + 3*time.Millisecond}},
	} {
		if got := skewOf(tc.server.UnixMilli(), sent, recv); got != tc.want {
			t.Errorf("%s: skew %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := skewOf(nil, sent, recv); got != (skew{}) {
		t.Errorf("no server time: skew %+v, want zero", got)
	}
	// A reply without the server's time (an older script) has none.
	if got := skewOf(element([]any{int64(1), "{}"}, 2), sent, recv); got != (skew{}) {
		t.Errorf("a reply of two elements: skew %+v, want zero", got)
	}
	// A clock set back during the call: no round trip, not a negative one.
	if got := skewOf(sent.UnixMilli(), sent, sent.Add(-4*time.Millisecond)); got != (skew{}) {
		t.Errorf("answered before it was sent: skew %+v, want zero", got)
	}

	sk := skew{lo: -3 * time.Second, hi: 5 * time.Second}
	if st := sk.toLocal(politeness.State{}); !st.IsZero() {
		t.Errorf("a zero State read as %+v", st)
	}
	if st := sk.toServer(politeness.State{}); !st.IsZero() {
		t.Errorf("a zero State stored as %+v", st)
	}
	// Every instant of a State, found by reflection so that a field added
	// later is not forgotten, moves; nothing else does.
	var full politeness.State
	fv := reflect.ValueOf(&full).Elem()
	instants := 0
	for i := range fv.NumField() {
		switch f := fv.Field(i); f.Interface().(type) {
		case time.Time:
			f.Set(reflect.ValueOf(sent.Add(time.Duration(i) * time.Minute)))
			instants++
		case time.Duration:
			f.SetInt(int64(time.Duration(i) * time.Second))
		case int:
			f.SetInt(int64(i))
		default:
			t.Fatalf("State field %s of type %s: add it to this test", fv.Type().Field(i).Name, f.Type())
		}
	}
	if instants < 6 {
		t.Fatalf("%d instants in a State, want at least 6", instants)
	}
	for _, move := range []struct {
		name string
		st   politeness.State
		by   time.Duration
	}{
		{"toLocal", sk.toLocal(full), 3 * time.Second}, // -lo: later
		{"toServer", sk.toServer(full), 5 * time.Second},
	} {
		got := reflect.ValueOf(move.st)
		for i := range fv.NumField() {
			name := fv.Type().Field(i).Name
			if w, ok := fv.Field(i).Interface().(time.Time); ok {
				if g := got.Field(i).Interface().(time.Time); !g.Equal(w.Add(move.by)) {
					t.Errorf("%s: %s = %v, want %v", move.name, name, g, w.Add(move.by))
				}
			} else if got.Field(i).Interface() != fv.Field(i).Interface() {
				t.Errorf("%s: %s changed", move.name, name)
			}
		}
	}
}
