// Package plot draws the figures of every workflow on gonum/plot.
//
// The analysis packages (stats, regime, overlap, matcher, eventlog, lstm,
// divergence, sweep) return data and link no plotting; this package sits on
// the floor above them, so that a program that only computes never links the
// plotting modules. Each workflow's figures live in a file of their own
// (overlap.go, sweep.go, ...); this file's helpers give them one look: a
// margin so that titles are never clipped, legends placed beside the data
// rather than over it, integer ticks for counts and epochs, and files written
// whole or not at all.
package plot
