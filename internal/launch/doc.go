// Package launch starts a command detached from its caller and reports, from
// files alone, whether it is still running, finished, failed or vanished.
//
// It is shared by the sweep local backend and by divergence.Replicate, and it
// is built so that the same protocol works on a remote host over ssh.
//
// # Protocol
//
// Script(spec, stateDir) returns a POSIX sh program. Run it with "sh -s" (its
// text on standard input): locally, or on another host with
// "ssh host sh -s". It
//
//  1. creates stateDir and spec.Dir if needed;
//  2. starts a monitor shell in a new session (setsid, standard streams
//     detached, SIGHUP ignored, as nohup would), so it outlives the ssh
//     connection or the controller that launched it;
//  3. the monitor claims the launch (see Fence below), writes its own pid
//     to stateDir/<Name>.pid (temp file then rename), runs spec.Argv in spec.Dir with spec.Env added to its
//     environment and both output streams appended to spec.LogPath
//     (stateDir/<Name>.log when empty), waits for it, and then writes the exit
//     record stateDir/<Name>.exit atomically: write stateDir/<Name>.exit.tmp,
//     sync it to disk, rename it over the final name;
//  4. the launching script waits (up to about 10 s) for the pid file, prints
//     "pid <n>" on standard output and exits 0. Any other output, or a non-zero
//     exit, is a failed launch.
//
// The exit record is text, exactly three lines in this order: exit=<code>,
// start=<unix seconds>, end=<unix seconds>. ParseRecord reads it strictly
// (a record with a missing or empty value is an error, never a zero). A
// command killed by a signal has the shell's code 128+signal. The monitor
// reads start before anyone can know its pid, and ignores TERM and INT once
// it has the command's status, so that no signal can interrupt the command
// substitutions that read the clock (in dash a trapped signal does, leaving
// the value empty); the record then appears by rename, whole.
//
// Poll turns the files into a State:
//
//   - an exit record with exit=0: Finished;
//   - an exit record with another code: Failed;
//   - no record, and the pid in the pid file is alive (and not a zombie):
//     Running;
//   - no record and the pid is gone: Vanished (the monitor was killed, the
//     machine rebooted, or the state directory was removed).
//
// PollScript(stateDir, name) is the same decision as a POSIX sh program whose
// output ParsePoll reads, for callers that can only run shell remotely:
// "ssh host sh -s" with PollScript's text on standard input. CancelScript
// likewise sends SIGTERM to the run's process group (the monitor and
// everything the command started), waits a grace period and sends SIGKILL.
// A cancelled command normally leaves a record with exit=143 (SIGTERM).
//
// # Fencing a launch in flight
//
// A caller that dies while a launch is under way (its wrapper still
// running, the monitor not started) leaves the next caller unsure whether
// the command will run. Local.Start publishes a token for the launch,
// stateDir/<Name>.launch, before any process of the launch exists; the
// monitor, before it writes anything, claims the token by creating the
// symbolic link stateDir/<Name>.<token>.claim pointing to its pid, which
// succeeds or fails atomically. Local.Fence creates the same link pointing
// to "fenced": if it gets there first the monitor exits without running
// the command (and the wrapper reports it), otherwise Fence returns the
// running command's handle. Either way exactly one of the two outcomes
// holds, and a later launch of the same name uses a new token.
//
// An ssh variant therefore needs nothing but this package's scripts and
// parsers: start with Script, poll with PollScript/ParsePoll, cancel with
// CancelScript, and fetch the log with "cat".
//
// Pids can be reused by the kernel after a monitor dies; a Running answer for
// a run whose monitor vanished long ago is possible in principle but needs the
// pid to be reused by an unrelated live process in the meantime.
package launch
