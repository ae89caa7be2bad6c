// Command sofyabot is SofyaBot (seed 003): an index crawler across many
// sites, keeping every promise of SofyaBot's page (S1-S11): its exact
// User-Agent, connections from one published source address (-source),
// robots.txt with SofyaBot's group first, Crawl-delay honoured, otherwise at
// most one request a second per site with jitter, 429/503/509 slowing the
// whole site, no JavaScript, forms or logins, each URL fetched once, pages
// behind a login or paywall skipped, robots.txt re-read within 24 hours, and
// throughput that grows with the number of sites.
//
// The crawl survives being stopped, even by SIGKILL: its frontier lives in
// the -state file, a URL counts as fetched only once its outcome is recorded
// there, and the next run with the same -state continues where it stopped.
//
//	go run ./examples/sofyabot -source 159.195.72.86 https://a.example/ https://b.example/
//
// The promises are its profile in examples/internal/profiles; the crawl is
// examples/internal/sofya.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
)

func main() { botkit.Main(sofya.Run) }
