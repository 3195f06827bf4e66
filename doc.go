// Package crosscluster is an embeddable library for the experiments HPC
// researchers run across clusters and machines. It has no code of its own;
// the work is done by flat packages, each serving one of five workflows:
//
//   - Defensible cross-cluster comparisons: [github.com/crosscluster/crosscluster/regime]
//     labels jobs with workload regimes and reads job tables;
//     [github.com/crosscluster/crosscluster/overlap] fits a source-versus-target
//     domain classifier and reports AUC, propensity-band coverage and per-feature KS,
//     on numerics from [github.com/crosscluster/crosscluster/stats].
//   - Scheduler matching and simulation: [github.com/crosscluster/crosscluster/matcher]
//     models rainbow's clusters, subsystems and jobspecs, matches and selects;
//     [github.com/crosscluster/crosscluster/matcher/experiment] reproduces the published
//     simulation experiments.
//   - Held-job decisions from HTCondor event logs: [github.com/crosscluster/crosscluster/eventlog]
//     reads user and global event logs and builds held-job tensors;
//     [github.com/crosscluster/crosscluster/lstm] trains and applies the release-or-remove
//     classifier.
//   - Bounded cross-machine divergence: [github.com/crosscluster/crosscluster/divergence]
//     reads NumPy archives from every host and reports pairwise maximum divergence per key.
//   - Parameter sweeps: [github.com/crosscluster/crosscluster/sweep] expands specs, keeps
//     a durable SQLite ledger, runs and prunes locally, recovers failures and exports
//     results; its sub-packages add the Slurm and HTCondor backends (sweep/slurm,
//     sweep/condor) and a live dashboard (sweep/dashboard).
//
// One program per workflow lives under examples/ (examples/overlap, rainbow,
// eventlog, heldjobs, tolerance, losssweep); examples/tour runs them all on
// built-in data. ARCHITECTURE.md describes the layers and the invariants.
package crosscluster
