// Command directoriesbot is DirectoriesBot (seed 004), the reciprocal-link
// checker, keeping every promise of its page (D1-D14): the User-Agent naming
// the directory whose listing is checked, signed requests (Web Bot Auth,
// quoted Signature-Agent, thumbprint keyid), exactly the URL entered and at
// most 3 redirects, no cookies, robots.txt before every page (cached 24 h;
// an error means no fetch; a disallow means "unverified", not "broken"), one
// request per host at a time, 15 s and 5 MB per fetch, listings checked on
// their schedule or on demand, blocked domains never fetched.
//
//	go run ./examples/directoriesbot -genkey dirs.pem
//	go run ./examples/directoriesbot -key dirs.pem -listings listings.csv -blocklist blocked.txt
//	go run ./examples/directoriesbot -key dirs.pem -listings listings.csv -recheck https://biz.example/partners
//	go run ./examples/directoriesbot -key dirs.pem -list
//
// The promises are its profile in examples/internal/profiles; the checker is
// examples/internal/directories.
package main

import (
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/directories"
)

func main() { botkit.Main(directories.Run) }
