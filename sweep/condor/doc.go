// Package condor writes HTCondor input for pools without a shared file
// system: DAG and Submit describe a DAGMan workflow and its submit files,
// and CheckStatic says whether an executable can be shipped to an execute
// point on its own. Nothing here calls condor_submit.
package condor
