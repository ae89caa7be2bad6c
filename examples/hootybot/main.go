// Command hootybot is HootyBot (seeds 001 and 002): it crawls a site set up
// as a knowledge source, keeping every promise of HootyBot's page (H1-H9):
// its exact User-Agent and From, robots.txt first (RFC 9309, HootyBot's
// group), Crawl-delay and at least 0.5 s between requests, one page at a
// time, Retry-After obeyed exactly or the site given up, nothing fetched
// while robots.txt answers 5xx, dead hosts given up, HTML pages only with a
// per-site cap, no forms, logins, carts or checkouts, challenges reported and
// discarded, robots.txt changes honoured within an hour.
//
//	go run ./examples/hootybot -max-pages 200 -out pages/ https://docs.example/
//
// The promises are its profile in examples/internal/profiles; the crawl is
// examples/internal/hooty.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
)

func main() { botkit.Main(hooty.Run) }
