// Command demo is the first thing to run: it starts a small web of local
// sites on loopback (robots.txt variants, sitemaps, a site that rate-limits,
// one behind a bot challenge, a slow one, a dead one, directory listings with
// and without a backlink), runs every example bot against it with durations
// scaled down, and prints what each bot did and why, promise by promise. It
// writes timeline.html (one lane per host: each request and each pause, with
// its reason) and the readiness report into a new temporary directory, whose
// path it prints.
//
//	go run ./examples/demo
//	go run ./examples/demo -out demo-out -scale 0.1 -v
//
// The work is in examples/internal/demo; the sites are
// examples/internal/demoweb.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/demo"
)

func main() { botkit.Main(demo.Run) }
