// Package heldjobs is the held-job workflow as pools run it: a search
// spec, a dataset built from HTCondor event logs, one training run per
// point of the search on any sweep backend (in this process, worker
// processes, Slurm) or as an HTCondor DAG, the best run chosen by a metric
// of the spec, every run tracked, and decisions on new logs with a saved
// model.
//
// It sits above eventlog, lstm and sweep and draws nothing: package plot
// draws its figures.
//
// # Pipeline
//
// LoadSpec reads a YAML search spec. Parse builds the dataset directory
// (one .npz of tensors per shape, index.json). Search drives one sweep run
// per point of the spec through a sweep.Backend, each run trained by
// TrainRun (early stopping on the spec's metric, per-epoch metrics streamed
// to the ledger, the model of the best epoch saved with SaveModel); Select
// chooses the best run with deterministic tie-breaking and WriteBest
// records it in bestmodel.info and bestmodel.json; Track exports the runs
// and their epochs as CSV and JSON Lines. WriteCondor writes the same
// search as an HTCondor DAG (parse, one training node per point, select,
// cleanup) for pools without a shared file system.
//
// # Decisions
//
// LoadModel reads a model directory and Decide decides every job on hold
// in new logs, at decision time: only events written up to each job's
// hold are used.
package heldjobs
