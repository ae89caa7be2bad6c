// Package crawl is a crawling loop on top of [fetch]: a frontier of
// per-site queues and a [Crawler] that drains it.
//
// # Frontier
//
// A [Frontier] holds the URLs still to fetch, one FIFO queue per site
// ([Site]: the politeness host key written as an origin, so every spelling
// of one host is one site). URLs are compared after normalisation
// ([links.Normalize], the form [fetch.Normalize] gives), so each URL is
// queued once. Scope rules decide what enters: [Frontier.Allowed] (which
// sites), [Frontier.Accept] (which URLs), [Frontier.MaxPerSite] (a page
// cap per site, counting pages fetched outside the frontier with
// [Frontier.MarkFetched]), and [Crawler.MaxDepth] and [Crawler.CrossSite]
// for followed links.
//
// # Crawler
//
// A [Crawler] runs one worker per site with queued items, at most
// [Crawler.Parallel] sites at once, so that many sites are crawled side by
// side while each site sees one request at a time; the politeness
// transport under the fetcher does the per-host pacing. A slow or paused
// site holds only its own worker: the others go on. For each item the
// order of events is: Get fetches it, OnPage sees the result, the
// outcome is recorded (one [Journal] step: the item leaves the queue,
// together with the links it queued, or it is queued again for a retry),
// then the next item of that site is taken. Cancelling the context stops
// the crawl: Run returns once every worker has finished its current item,
// and an item interrupted by the cancellation is not recorded, so it stays
// queued.
//
// # Persistence
//
// With a [Journal] the frontier survives the process: every queued URL is
// recorded, and a URL leaves the journal only in the step that records its
// outcome, so a crawl killed at any moment resumes where it stopped
// ([Frontier.Resume]) and marks no URL done whose outcome was not recorded.
// Package boltjournal keeps the journal in a bbolt state file.
//
// # Memory
//
// The frontier keeps in memory the normalised key of every URL it has seen
// and its queued items (together about 370 bytes per queued URL; see
// BENCHMARKS.md). With [Frontier.Spill] and
// [Frontier.MaxInMemory] at most MaxInMemory queued items stay in memory
// (plus one brought back for a site whose queue ran dry): the others wait in
// the Spill, in each site's order, and come back in batches. Package
// boltjournal's Journal is such a Spill, in the same bbolt file. The seen
// set is not spilled: bound it with MaxPerSite and Allowed.
package crawl
