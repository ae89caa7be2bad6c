package crawl

// NewSpillingQueue returns the Frontier's in-memory queue with an
// in-memory Spill beyond maxInMem items, for the queue kit.
func NewSpillingQueue(maxInMem int) Queue {
	return newMemQueue(nil, newMapSpill(), maxInMem, memSeen{})
}
