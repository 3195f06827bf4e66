// Package dagman runs, on the local machine, the DAGs that package
// sweep/condor writes, as DAGMan and a pool without a shared file system
// would: a stand-in for HTCondor where none is installed, for tests and for
// the held-job example's -backend condor-local. It is not public API.
package dagman
