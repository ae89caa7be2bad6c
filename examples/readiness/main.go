// Command readiness is BothyBot's readiness check (seed 000, B10): a site's
// home page, /robots.txt, the files AI assistants look for (/llms.txt,
// /llms-full.txt), its sitemap and a few of its pages (-full: a crawl capped
// at a few hundred pages), under BothyBot's name, signature and pacing
// (B1-B6, B12). It writes a report, Markdown and a self-contained HTML page,
// saying what was found, what is blocked (robots, challenge, errors) and why.
//
//	go run ./examples/readiness -key bothy.pem -report parish https://parish.example/
//
// The work is in examples/internal/readiness.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/readiness"
)

func main() { botkit.Main(readiness.Run) }
