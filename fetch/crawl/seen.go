package crawl

// seenSet is the set of keys a queue has seen.
type seenSet interface {
	has(key string) bool
	add(key string)
}

// memSeen is a seenSet in memory.
type memSeen map[string]struct{}

func (m memSeen) has(key string) bool { _, ok := m[key]; return ok }
func (m memSeen) add(key string)      { m[key] = struct{}{} }

// newSeen returns the seen set of the in-memory queue.
func (f *Frontier) newSeen() seenSet { return memSeen{} }
