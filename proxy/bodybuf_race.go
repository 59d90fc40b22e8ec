//go:build race

package proxy

// poisonReleased overwrites a body buffer when it goes back to its pool
// (see bodybuf.go): on under the race detector.
const poisonReleased = true
