package redisgate

import (
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// A State is written by one process and read by others, whose clocks may
// disagree. Its instants (NotBefore, PauseUntil...) are therefore kept on
// the Redis server's clock. Each script that hands a State out also returns
// the server's time, from which the process bounds the offset between the
// server's clock and its own ([skew]); it moves the State's instants onto
// its own clock when it reads the State, and onto the server's when it
// stores the next one. So a process whose clock is behind does not read a
// gap as over before it is, and one whose clock is ahead does not wait for
// nothing.
//
// One call bounds the offset only to within half its round trip (and the
// millisecond of the server's time), so each move errs on the late side:
// an instant may come a few milliseconds late, never early (and one carried
// from State to State, such as the end of a long pause, drifts that much
// later at each hand-over while the clocks disagree). When the bounds
// include zero the clocks may agree, and nothing is moved, so the States
// of processes whose clocks do agree are exactly what they wrote.

// clock returns the process's time (tests set g.now to a clock that is off).
func (g *Gate) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// skew bounds the server's clock minus the process's: it lies between lo
// and hi. The zero skew means the clocks may agree.
type skew struct{ lo, hi time.Duration }

// skewOf bounds the offset from the server time v (unix milliseconds, as
// the scripts return it, cut to the millisecond) of a call sent at sent
// and answered at recv, both on the process's clock: the server read its
// time somewhere in between. Without a time in the reply it is the zero
// skew.
func skewOf(v any, sent, recv time.Time) skew {
	ms, ok := v.(int64)
	if !ok {
		return skew{}
	}
	half := max(recv.Sub(sent), 0) / 2
	m := time.UnixMilli(ms).Sub(sent.Add(half))
	s := skew{lo: m - half, hi: m + half + time.Millisecond}
	if s.lo <= 0 && s.hi >= 0 {
		return skew{}
	}
	return s
}

// toLocal returns st, read from the server, on the process's clock: each
// instant as late as the skew allows.
func (s skew) toLocal(st politeness.State) politeness.State { return shift(st, -s.lo) }

// toServer returns st, on the process's clock, on the server's: each
// instant as late as the skew allows.
func (s skew) toServer(st politeness.State) politeness.State { return shift(st, s.hi) }

// shift returns st with each of its instants that is set moved by d (a
// zero instant means "none" and stays zero).
func shift(st politeness.State, d time.Duration) politeness.State {
	if d == 0 {
		return st
	}
	for _, t := range []*time.Time{&st.NotBefore, &st.PauseUntil, &st.DownUntil, &st.GaveUpUntil, &st.QuotaUntil, &st.Expires} {
		if !t.IsZero() {
			*t = t.Add(d)
		}
	}
	return st
}
