// Package matcher models rainbow-style scheduling across clusters: clusters
// whose subsystems carry compatibility metadata, jobs that state requirements
// on that metadata, matching with a reason for every failed requirement,
// selection strategies as values, and a pool of clusters that jobs are
// submitted to and released from. Package matcher/experiment reproduces the two published
// rainbow simulation experiments on this model.
//
// The semantics follow converged-computing/rainbow (Go): a requirement names a
// subsystem and a field; it is met when any vertex of that subsystem carries a
// satisfying value, and a job matches a cluster when every requirement is met
// (AND across requirements, ANY across vertices). Range bounds are inclusive
// by default, as rainbow's range matcher has been since 2024-03-31; [Rules]
// Exclusive excludes them. Versions are parsed tolerantly (see [ParseVersion]).
//
// # Errors
//
// Readers return a *[ParseError] naming the file, the line and the path
// inside it (for example "[12].resources.cmake.min"); it wraps [ErrSyntax],
// [ErrSchema], [ErrTooLarge] or [ErrTooComplex]. Every reader caps the
// document at 16 MiB and the work YAML aliases can cause at 16 times the
// document's nodes (at least 10,000, as yaml.v3 bounds alias expansion by a
// ratio to the document's size): a 1 KB document whose aliases fan out 10
// ways over 10 levels is refused with ErrTooComplex in about a millisecond.
// Versions that do not parse
// wrap [ErrVersion]; a job naming a subsystem no cluster provides,
// [ErrUnknownSubsystem]. What [ReadJobspec], [ReadCluster] and
// [ReadSubsystem] return with an error counts for nothing under the default
// [Rules]; under Rules.Rainbow it counts as rainbow decides on a document
// its own readers load.
// Caller mistakes (a nil generator) panic with constant messages.
package matcher
