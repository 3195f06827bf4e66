// Package divergence bounds how far runs of the same program on different
// machines drift apart, and replicates one run on every host to get them.
//
// Scientific code run on two machines is rarely bit-identical: compilers,
// vector units and libraries evaluate floating-point expressions in
// different but valid orders. Instead of asking for equality, a researcher
// launches the same run everywhere, collects each machine's NumPy archive
// (.npz) and reports, for every pair of machines (a, b) and every key,
//
//	max_t ‖x_a(t) − x_b(t)‖
//
// where t runs along axis 0 and the norm is L2 (default) or L∞ over the
// remaining axes; one-dimensional arrays give |a_t − b_t|.
//
// # Sections
//
// Comparing: [Open] reads an archive, [Series] gives the per-step series of
// one key, [Pairwise] gives one [Row] per (a, b, key), and [Compare] does
// so with [Options] (the norm, tolerances, element-wise bounds) until a
// context is done. With a [Closeness] for a key, every element is also
// checked as numpy.testing.assert_allclose does, and the row says how many
// elements differ and where the largest absolute and relative differences
// are. Integers on both sides of a pair are compared exactly, as int64 or
// uint64 (NumPy compares them as float64). Problems with the data (a
// missing key, different shapes, an unreadable file) never stop a
// comparison: the row's Max is NaN and its Warning says why. A NaN on one
// side only propagates to Max; elements NaN on both sides are equal, as
// numpy.testing.assert_allclose has it by default (equal_nan=True), and are
// counted. Compare streams the members of one key from all runs in chunks,
// so memory stays bounded by a few chunks per run whatever the array sizes
// (Fortran-order members, rare in practice, are read whole). Row.String,
// [WriteJSON] and [WriteCSV] print the rows.
//
// Writing: a Go program whose runs are compared writes its archive with a
// [Writer], as a Python one calls numpy.savez.
//
// Replicating: [LoadHosts] reads a hosts registry (YAML); [Replicate] brings
// every host's checkout to one commit (when given one), launches a run stem
// on every host at once, under a launch name keyed by stem, host and run,
// records the commit each host's checkout was at, polls each until it
// finishes, fails or vanishes, and collects the newest archive each
// finished host wrote after its launch (two hosts that return one file
// both fail). Local hosts are launched with internal/launch (shared with
// sweep's local backend); ssh hosts run the same launch protocol through
// the system ssh client in batch mode, so ssh_config applies.
package divergence
