// Command bothybot is BothyBot (seed 000): it crawls a site for its owner,
// keeping every promise of BothyBot's page (B1-B12): its exact User-Agent,
// signed requests (Web Bot Auth), robots.txt including the former names
// CleatBot and UnvarnishedCrawler, Crawl-delay up to 60 s, one request at a
// time and at least 2 s apart, Retry-After up to an hour, sitemap and public
// links only, conditional refetches, and the freshness check (-fresh).
//
//	go run ./examples/bothybot -genkey bothy.pem     # once: prints the JWKS to publish
//	go run ./examples/bothybot -key bothy.pem -out crawl/ https://parish.example/
//	go run ./examples/bothybot -key bothy.pem -fresh https://parish.example/
//
// The promises are its profile in examples/internal/profiles; the crawl is
// examples/internal/bothy.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
)

func main() { botkit.Main(bothy.Run) }
