//go:build race

package matcher

const raceEnabled = true
