// Package crosscluster is an embeddable library for the experiments HPC
// researchers run across clusters and machines. It has no code of its own;
// the work is done by flat packages, each serving one of five workflows:
//
//   - Defensible cross-cluster comparisons: [github.com/crosscluster/crosscluster/regime]
//     labels jobs with workload regimes, [github.com/crosscluster/crosscluster/overlap]
//     fits a source-vs-target domain classifier and reports AUC, propensity-band
//     coverage and per-feature KS, on numerics from [github.com/crosscluster/crosscluster/stats].
//   - Scheduler matching and simulation: [github.com/crosscluster/crosscluster/matcher]
//     models rainbow's clusters, subsystems and jobspecs;
//     [github.com/crosscluster/crosscluster/matcher/experiment] reproduces its simulation experiments.
//   - Held-job decisions from HTCondor event logs: [github.com/crosscluster/crosscluster/eventlog]
//     reads user and global event logs and builds held-job tensors;
//     [github.com/crosscluster/crosscluster/lstm] trains the release-or-remove classifier;
//     [github.com/crosscluster/crosscluster/heldjobs] runs a search spec of it on any sweep
//     backend or as an HTCondor DAG, chooses the best model and decides new logs.
//   - Bounded cross-machine divergence: [github.com/crosscluster/crosscluster/divergence]
//     reads NumPy archives from every host and reports pairwise maximum divergence per key.
//   - Parameter sweeps: [github.com/crosscluster/crosscluster/sweep] expands specs,
//     keeps a durable SQLite ledger, runs locally or on Slurm (HTCondor too),
//     recovers failures, exports results and analyses training curves.
//
// Runnable programs for each workflow live under examples/; examples/tour runs
// them all on built-in data.
package crosscluster
