//go:build !race

package overlap

const raceEnabled = false
