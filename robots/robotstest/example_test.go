package robotstest_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/robotstest"
)

func ExampleNewServer() {
	srv := robotstest.NewServer("User-agent: *\nDisallow: /private/\n")
	defer srv.Close()

	c := &robots.Cache{Transport: srv.Client().Transport}
	u, _ := url.Parse(srv.URL + "/private/page")
	fmt.Println(c.Check(context.Background(), robots.Agent{Token: "NewsBot"}, u) != nil)
	// Output: true
}

func ExampleTransport() {
	c := &robots.Cache{Transport: robotstest.Transport(robotstest.Handler("User-agent: NewsBot\nDisallow: /\n"))}
	u, _ := url.Parse("https://any.example/page")
	r, _ := c.Get(context.Background(), u)
	fmt.Println(r.Allowed(robots.Agent{Token: "NewsBot"}, "/page"))
	// Output: false
}
