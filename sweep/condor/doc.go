// Package condor writes HTCondor input for a sweep's tasks, for pools
// without a shared file system: Batch writes a submit file and a DAG for a
// batch of sweep tasks, DAG and Submit describe any DAGMan workflow and its
// submit files, and CheckStatic says whether an executable can be shipped
// to an execute point on its own. Nothing here calls condor_submit.
package condor
