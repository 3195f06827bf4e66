// Package experiment reproduces rainbow's two published simulation
// experiments (converged-computing/rainbow-experiments,
// simulation-reliabuild and simulation-spack-build) on the scheduling model
// of package matcher: their data formats and loaders, the levels of each
// experiment, their scores, and the published drivers' bugs as an option.
//
// [RunVersions] (version ranges, "reliabuild") and [RunBuilds] (spack
// builds) score each level twice: once by a seeded random draw, as the
// published driver did with a live rainbow server, and once in "expected"
// mode, which averages every score exactly over the random choice of
// cluster, so the figures carry no sampling noise. Expected standard
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
// The loaders return *[matcher.ParseError] values wrapping
// [matcher.ErrSyntax] or [matcher.ErrSchema], as the model's readers do.
package experiment
