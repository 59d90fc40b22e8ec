//go:build !race

package mcptool

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = false
