// Package slurm runs a sweep's tasks as Slurm job arrays: Backend is a
// sweep.Backend that submits with sbatch, follows tasks with squeue, the
// job-completion log or sacct, and cancels with scancel.
package slurm
