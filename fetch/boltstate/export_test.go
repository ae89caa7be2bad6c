package boltstate

// SetAfterRead makes g's Add run f between its read of the file and its
// claim (nil: nothing).
func SetAfterRead(g *Stage, f func()) { g.afterRead = f }
