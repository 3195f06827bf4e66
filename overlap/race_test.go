//go:build race

package overlap

const raceEnabled = true
