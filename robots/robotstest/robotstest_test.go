package robotstest_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/robotstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTransportInSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			status  int
			allowed bool
		}{{200, false}, {404, true}, {503, false}} {
			c := &robots.Cache{Transport: robotstest.Transport(robotstest.StatusHandler(tc.status, "User-agent: *\nDisallow: /\n"))}
			u, _ := url.Parse("https://example.com/x")
			err := c.Check(context.Background(), robots.Agent{Token: "a"}, u)
			if (err == nil) != tc.allowed {
				t.Errorf("status %d: Check = %v", tc.status, err)
			}
			if tc.status == 503 && !errors.Is(err, robots.ErrUnreachable) {
				t.Errorf("503 not unreachable: %v", err)
			}
		}
	})
}

func TestHandlerOtherPaths(t *testing.T) {
	srv := robotstest.NewServer("x")
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d", resp.StatusCode)
	}
}
