package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/redis/go-redis/v9"
)

var (
	// ErrUnavailable reports that Redis could not be reached or did not
	// answer (connection refused or reset, timeout, pool exhausted, server
	// loading or read-only). The gate fails closed: no lease, so no request.
	ErrUnavailable = errors.New("redisgate: redis unavailable")

	// ErrRedis reports any other error answer from Redis (a script error,
	// a wrong key type under the prefix, out of memory, no permission).
	ErrRedis = errors.New("redisgate: redis error")

	// ErrLeaseLost reports a lease that expired and was taken over (or
	// whose host was used by another holder meanwhile) before it was
	// released: the holder was cut off from Redis or frozen for longer than
	// Options.LeaseTTL. It wraps [politeness.ErrLeaseReleased].
	ErrLeaseLost = fmt.Errorf("redisgate: lease lost: %w", politeness.ErrLeaseReleased)

	// ErrBadState reports a host State in Redis that is not valid JSON (an
	// empty value is no State, as an absent key is).
	ErrBadState = errors.New("redisgate: bad state in redis")

	// ErrClosed is returned by Acquire after [Gate.Close].
	ErrClosed = errors.New("redisgate: gate closed")
)

var errNoClient = errors.New("no redis client")

// Error is the error of one gate operation on one host. errors.Is matches
// both Kind (one of the Err* sentinels) and the underlying cause (for example
// a *net.OpError or syscall.ECONNREFUSED).
type Error struct {
	Op   string // "acquire", "renew", "release"
	Host string // host key
	Kind error  // ErrUnavailable, ErrRedis, ErrLeaseLost, ErrBadState or ErrClosed
	Err  error  // the cause, if any
}

func (e *Error) Error() string {
	msg := e.Kind.Error() + " (" + e.Op + " " + e.Host + ")"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// opError wraps a Redis client error as an *Error, telling unavailability
// from other answers.
func opError(op, host string, err error) *Error {
	return &Error{Op: op, Host: host, Kind: kindOf(err), Err: err}
}

// isTimeout reports a timeout, after which a command may have run unseen.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

func kindOf(err error) error {
	var ne net.Error
	var rerr redis.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, redis.ErrClosed),
		errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, redis.ErrPoolExhausted),
		errors.Is(err, context.DeadlineExceeded),
		redis.IsLoadingError(err), redis.IsReadOnlyError(err), redis.IsMasterDownError(err),
		redis.IsTryAgainError(err), redis.IsClusterDownError(err), redis.IsMaxClientsError(err):
		return ErrUnavailable
	case errors.As(err, &rerr):
		return ErrRedis
	}
	// EOF, connection reset and friends surface as plain errors.
	return ErrUnavailable
}

// Classify tells what a Redis client error means for a fleet: [ErrUnavailable]
// when Redis could not be reached or did not answer (so nothing may be
// assumed done), [ErrRedis] for any other error answer. Packages that keep
// other fleet state in the same Redis (the crawl queue) use it so that one
// errors.Is(err, ErrUnavailable) check covers them all. It returns nil for a
// nil error.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	return kindOf(err)
}
