//go:build !race

package proxy

// poisonReleased overwrites a body buffer when it goes back to its pool
// (see bodybuf.go): off outside the race detector.
const poisonReleased = false
