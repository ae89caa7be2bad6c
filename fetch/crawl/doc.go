// Package crawl is a crawling loop on top of [fetch]: a frontier of
// per-site queues and a [Crawler] that drains it, serving each site when
// its politeness allows.
//
// # Frontier
//
// A [Frontier] decides which URLs enter the crawl and holds them, one FIFO
// queue per site ([Site]: the politeness host key written as an origin, so
// every spelling of one host is one site). URLs are compared after
// normalisation ([links.Normalize], the form [fetch.Normalize] gives), so
// each URL is queued once. Scope rules decide what enters:
// [Frontier.Allowed] (which sites), [Frontier.Accept] (which URLs),
// [Frontier.MaxPerSite] (a page cap per site, counting pages fetched
// outside the frontier with [Frontier.MarkFetched]), and
// [Crawler.MaxDepth] and [Crawler.CrossSite] for followed links. The zero
// Frontier is ready to use, in memory.
//
// # Crawler
//
// A [Crawler] keeps a schedule of the sites by ready time and a fixed pool
// of [Crawler.Parallel] workers ([DefaultParallel] by default). The order
// of events for each item:
//
//  1. The item's site is due (its ready time has come; a site new to the
//     crawl is due at once) and no item of the site is in flight: a free
//     worker leases the site's head item, the site that has been due
//     longest first.
//  2. With a Fetcher, the site's robots.txt is read if the Fetcher has no
//     copy; if the site's next turn ([fetch.Fetcher.NextTurn]: its delay,
//     Crawl-delay, slow-down or pause) is still to come, the item goes back
//     to the head of its queue, due then, and the worker is free.
//  3. Get fetches it (the Fetcher, or a custom Get), then OnPage sees the
//     result.
//  4. One [Queue.Finish] records the outcome: the item leaves the queue
//     (or goes to the end of it for its one retry, or the whole site is
//     dropped) together with the links it queued, and the site is due
//     again at its next turn as the Fetcher's politeness layer reports it
//     (at once without a Fetcher). When the Finish may wait (a Journal's
//     sync, a Queue of another package: one shared over the network), the
//     worker does not: the Finish goes on beside the workers, in a pool of
//     Parallel finishers (when Parallel more wait for them, a worker
//     finishes its own item), so it holds no request slot meanwhile. The item's site stays leased
//     until its Finish returns, so the site's next item waits for it.
//
// So each site sees one request at a time from the crawler, and a slow or
// paused site holds no worker while it waits: Parallel bounds the
// requests in flight, not the sites being crawled, and the pace of a crawl
// of many sites is their politeness, not Parallel divided by their delay.
// Waiting uses one timer (the next ready time), never polling; it ends
// with the context. Cancelling the context stops the crawl: Run returns
// once every worker has finished its current item and every Finish has
// returned, and an item interrupted by the cancellation is not recorded, so
// it stays queued. A Finish that fails (a Journal that cannot write, a
// shared Queue's server gone; a lost lease aside) stops the crawl the same
// way, and Run returns an error wrapping [ErrQueue]: what was not recorded
// stays queued, and no page is fetched whose outcome would be lost.
//
// Done may be read while Run runs; OnPage, Handle and Get are called from
// the workers, for different sites at once.
//
// # Queue
//
// The Frontier keeps the admission rules; the items, the seen set, the
// per-site counts and the schedule are a [Queue]'s. The default is in
// memory ([NewMemoryQueue], with the Frontier's Journal and Spill). Set
// [Frontier.Queue] to another implementation, such as one shared by the
// processes of one crawl: a site's head item is leased to one worker at a
// time, for a time ([Crawler.LeaseTTL]) after which a worker that died
// loses it to another, and [Queue.Finish] applies a page's whole outcome
// at once. Package crawl/queuetest checks an implementation.
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
// In memory, the frontier keeps the normalised key of every URL it has
// seen and its queued items: about 330 bytes per queued URL and 85 per URL
// seen and done, plus about 200 bytes per site (BenchmarkFrontierMemory in
// boltjournal; see BENCHMARKS.md). With [Frontier.Spill] and
// [Frontier.MaxInMemory], an item is queued in memory while fewer than
// MaxInMemory are; the others wait in the Spill, in each site's order, and
// come back when their site's queue in memory runs dry, in one Spill.Pop
// per batch: as many as MaxInMemory leaves room for, and at least B =
// min(64, MaxInMemory) (or all the site has in the Spill) even when memory
// is full. So memory holds at most MaxInMemory queued items (leased ones
// included) plus, for each site, up to B of its own: at most MaxInMemory +
// B × (sites with items in memory) in all, and a site's spilled items come
// back with one Pop per B of them. (A Spill that fails keeps the items it
// could not take in memory.) A Spill that is also a [SeenStore] holds the
// seen set too once it outgrows memory: the first MaxInMemory keys stay in
// memory only (a crawl that small never writes or reads its seen set in
// the store); then they are written in one call, and from then on the
// frontier keeps in memory at most 2×MaxInMemory recently seen keys and
// the 1,024 keys not yet written (if that first write fails, the set stays
// in memory, growing, and the write is tried again 1,024 keys later); a key
// absent from those is looked up in the store, so a URL seen long ago is
// still seen and no URL is taken for seen that was not. In front of the
// store a Bloom filter of every key the set holds answers for the URLs
// never seen (the links of a crawl that finds new pages): those cost no
// store read, and a URL the filter takes for seen by mistake (under 2 %)
// costs one. The filter takes 1.3 to 4 bytes per seen URL. Package
// boltjournal's Journal is such a Spill, in the same bbolt file: the
// frontier then holds about 20 bytes per queued URL and 8 per seen one in
// memory besides the filter, whatever the crawl's size beyond MaxInMemory
// (the per-site state and batches aside); the Journal's State holds what
// was spilled since its last checkpoint too, a bound of its own (about
// twice boltstate's Options.CheckpointBytes, 32 MiB by default) whatever
// the crawl's size.
package crawl
