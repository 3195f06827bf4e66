// Package matcher models rainbow-style scheduling across clusters: clusters
// whose subsystems carry compatibility metadata, jobs that state requirements
// on that metadata, matching with a reason for every failed requirement,
// selection strategies as values, runtime and cost models, and the two
// published rainbow simulation experiments (version ranges, "reliabuild", and
// spack builds) with their scores.
//
// The semantics follow converged-computing/rainbow (Go): a requirement names a
// subsystem and a field; it is met when any vertex of that subsystem carries a
// satisfying value, and a job matches a cluster when every requirement is met
// (AND across requirements, ANY across vertices). Range bounds are inclusive
// by default, as rainbow's range matcher has been since 2024-03-31; Exclusive
// is an explicit option. Versions are parsed tolerantly (see [ParseVersion]).
//
// # Experiments
//
// [RunVersions] and [RunBuilds] reproduce the two experiments of
// converged-computing/rainbow-experiments (simulation-reliabuild and
// simulation-spack-build). Each level is scored twice: once by a seeded
// random draw, as the published driver did with a live rainbow server, and
// once in "expected" mode, which averages every score exactly over the random
// choice of cluster, so the figures carry no sampling noise. Expected standard
// deviations are the square root of the expected population variance, and
// each expected mean carries the standard error a single draw would have
// around it, which is what tests use as the tolerance against published
// numbers.
//
// The published drivers had bugs (strict score bounds against inclusive
// matching, a single-subsystem loop that scored every submission as the last
// job, a cross-job prefix de-duplication that shifts unmatched_at, a compiler
// rule that is the reverse of its README, a capacity update that sent the old
// value). [Published] reproduces them; [Corrected] fixes them. Every
// difference is documented on the option that controls it.
//
// # Errors
//
// Loaders return a *[ParseError] naming the file and the path inside it
// (for example "[12].resources.cmake.min"); it wraps one of the sentinel
// errors ([ErrSyntax], [ErrSchema], [ErrVersion], [ErrUnknownSubsystem]).
// Caller mistakes (a nil generator, k < 1) panic with constant messages.
package matcher
