package redisgate

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

// An *Error reads as its kind, the operation and the host, then the cause
// when there is one.
func TestErrors_Message(t *testing.T) {
	for _, c := range []struct {
		name string
		err  *Error
		want string
	}{
		{"with cause", &Error{Op: "acquire", Host: "http://a.test:80", Kind: ErrUnavailable, Err: errors.New("dial refused")},
			"redisgate: redis unavailable (acquire http://a.test:80): dial refused"},
		{"without cause", &Error{Op: "acquire", Host: "http://a.test:80", Kind: ErrClosed},
			"redisgate: gate closed (acquire http://a.test:80)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("Error() = %q, want %q", got, c.want)
			}
		})
	}
}

// Classify sorts the error answers of a real server: those that say the
// server cannot serve now (loading, read-only replica, master down, try
// again, cluster down, too many clients) are ErrUnavailable, any other
// answer is ErrRedis.
func TestErrors_ClassifyServerAnswers(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: needRedis(t), MaxRetries: -1}) // no retries of the retryable answers
	t.Cleanup(func() { _ = c.Close() })
	const script = `return redis.error_reply(ARGV[1])`
	for _, tc := range []struct {
		answer string
		want   error
	}{
		{"LOADING Redis is loading the dataset in memory", ErrUnavailable},
		{"READONLY You can't write against a read only replica.", ErrUnavailable},
		{"MASTERDOWN Link with MASTER is down", ErrUnavailable},
		{"TRYAGAIN Multiple keys request during rehashing of slot", ErrUnavailable},
		{"CLUSTERDOWN The cluster is down", ErrUnavailable},
		{"ERR max number of clients reached", ErrUnavailable},
		{"ERR something else", ErrRedis},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", ErrRedis},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			err := c.Eval(context.Background(), script, nil, tc.answer).Err()
			if err == nil {
				t.Fatalf("the script answered no error, want %q", tc.answer)
			}
			if got := Classify(err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}
