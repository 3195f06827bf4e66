package synth

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// CondorLogConfig configures CondorGlobalLog: a schedd's global event log in
// HTCondor's classic text format, events of many jobs interleaved in time,
// with texts following htcondor/htcondor src/condor_utils/condor_event.cpp.
type CondorLogConfig struct {
	Seed uint64
	// Jobs is the number of jobs; when zero, jobs are added until about
	// Bytes have been written.
	Jobs int
	// Bytes is the size target when Jobs is zero; zero means 1 MiB.
	Bytes int64
	// Start is the first submit time; zero means 2023-12-31 20:00 UTC, so
	// that a log of a few thousand jobs crosses New Year.
	Start time.Time
	// Location is the zone dates are written in; nil means UTC.
	Location *time.Location
	// LegacyDates writes "MM/DD HH:MM:SS" (no year) instead of ISO dates.
	LegacyDates bool
	// HoldRate is the share of jobs held at least once; zero means 0.2,
	// negative means none. A hold's reason is one of nine real hold codes
	// with its text. Whether the owner then releases the job (and lets it
	// finish) or removes it is drawn with the code's release rate, and the
	// outcome shows, noisily, in the job's history before the first hold:
	// nine in ten jobs that will be removed fail one to three short runs
	// first (evicted 004, shadow exception 007, or disconnected 022 with a
	// failed reconnect 024, each followed by a new execute 001) and are held
	// soon after their last start, while seven in eight jobs that will be
	// released ran cleanly until the hold.
	HoldRate float64
	// JobAds writes a 028 job-ad-information event after every job event,
	// as EVENT_LOG_JOB_AD_INFORMATION_ATTRS makes HTCondor do.
	JobAds bool
	// Noise adds 006 image-size updates, 040 file-transfer events and
	// 022/023 disconnect/reconnect pairs.
	Noise bool
	// Header writes the "Global JobLog:" header event first.
	Header bool
	// MeanInterarrival is the mean time between submits; zero means 20 s.
	MeanInterarrival time.Duration
}

// CondorLogStats describes a generated log.
type CondorLogStats struct {
	Jobs, Events int
	Bytes        int64
	// Counts holds the number of events per event code (header included).
	Counts map[int]int
	// Release and Remove count the jobs the generator meant to end that way
	// (the held-job labels: released and then terminated normally; held and
	// then removed or killed). Held counts jobs held at least once.
	Held, Release, Remove int
	First, Last           time.Time
}

// condorHold is a hold reason code with a realistic reason text; the codes
// are CONDOR_HOLD_CODE values (src/condor_utils/condor_holdcodes.h).
type condorHold struct {
	code, subcode int
	reason        string
	weight        float64
	releaseP      float64 // share of the jobs first held with this code that the owner releases
}

var condorHolds = []condorHold{
	{1, 0, "via condor_hold (by user %s)", 0.15, 0.7},
	{3, 0, "The job attribute PeriodicHold expression '(JobStatus == 2) && (time() - EnteredCurrentStatus) > 86400' evaluated to TRUE", 0.1, 0.3},
	{6, 2, "Error from slot1_%d@%s: Failed to execute '/home/%s/run.sh': (errno=2: 'No such file or directory')", 0.1, 0.2},
	{12, 2, "Error from slot1_%d@%s: STARTER at 10.1.%d.%d failed to send file(s) to <10.0.0.5:9618>: error reading from /var/lib/condor/execute/dir_%d/out.dat: (errno 2) No such file or directory; SHADOW failed to receive file(s) from <10.1.0.9:37611>", 0.12, 0.6},
	{13, 2, "Error from slot1_%d@%s: SHADOW at 10.0.0.5 failed to send file(s) to <10.1.0.9:37611>: error reading from /home/%s/input.dat: (errno 2) No such file or directory; STARTER failed to receive file(s) from <10.0.0.5:9618>", 0.13, 0.5},
	{21, 102, "Error from slot1_%d@%s: Job has gone over cgroup memory limit of %d megabytes. Last measured usage: %d megabytes.  Consider resubmitting with a higher request_memory.", 0.1, 0.6},
	{26, 0, "The system macro SYSTEM_PERIODIC_HOLD expression '(NumJobStarts > 10)' evaluated to TRUE", 0.08, 0.4},
	{34, 0, "Error from slot1_%d@%s: memory usage exceeded request_memory", 0.14, 0.7},
	{46, 0, "The job exceeded allowed job duration of 2 days, 0:00:00", 0.08, 0.5},
}

var condorOwners = []string{"alice", "bob", "carol", "dave", "erin", "frank"}

type condorEvent struct {
	t    int64 // Unix nanoseconds
	seq  int64 // tie breaker: generation order
	code int
	job  int // cluster
	body []byte
}

type condorHeap []*condorEvent

func (h condorHeap) Len() int { return len(h) }
func (h condorHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h condorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *condorHeap) Push(x any)   { *h = append(*h, x.(*condorEvent)) }
func (h *condorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type condorGen struct {
	cfg   CondorLogConfig
	rng   *rand.Rand
	loc   *time.Location
	seq   int64
	queue condorHeap
	stats CondorLogStats
	buf   []byte
	hold  float64
	wsum  float64 // sum of the hold weights
	wrel  float64 // sum of weight·releaseP: wrel/wsum of the holds end in a release
}

func newCondorGen(cfg CondorLogConfig) *condorGen {
	g := &condorGen{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x636f6e646f72))}
	g.loc = cfg.Location
	if g.loc == nil {
		g.loc = time.UTC
	}
	if g.cfg.Start.IsZero() {
		g.cfg.Start = time.Date(2023, 12, 31, 20, 0, 0, 0, time.UTC)
	}
	if g.cfg.MeanInterarrival == 0 {
		g.cfg.MeanInterarrival = 20 * time.Second
	}
	switch {
	case cfg.HoldRate == 0:
		g.hold = 0.2
	case cfg.HoldRate < 0:
		g.hold = 0
	default:
		g.hold = min(cfg.HoldRate, 1)
	}
	for _, h := range condorHolds {
		g.wsum += h.weight
		g.wrel += h.weight * h.releaseP
	}
	g.stats.Counts = make(map[int]int)
	return g
}

// expDur draws an exponential duration of the given mean, in whole
// seconds (the log's resolution), at least one second.
func (g *condorGen) expDur(mean time.Duration) int64 {
	return (int64(g.rng.ExpFloat64()*mean.Seconds()) + 1) * int64(time.Second)
}

func (g *condorGen) push(t int64, code, cluster int, body []byte) {
	g.seq++
	heap.Push(&g.queue, &condorEvent{t: t, seq: g.seq, code: code, job: cluster, body: body})
}

func (g *condorGen) host() string {
	return "node" + strconv.Itoa(1+g.rng.IntN(200)) + ".cluster.example.org"
}

func (g *condorGen) sinful() string {
	return fmt.Sprintf("<10.1.%d.%d:9618?addrs=10.1.%d.%d-9618&alias=%s&noUDP&sock=startd_%d_%04x>",
		g.rng.IntN(4), 1+g.rng.IntN(250), g.rng.IntN(4), 1+g.rng.IntN(250), g.host(), 1000+g.rng.IntN(9000), g.rng.IntN(1<<16))
}

func usage(b []byte, label string, secs int64) []byte {
	d := secs / 86400
	s := secs % 86400
	return fmt.Appendf(b, "\t\tUsr %d %02d:%02d:%02d, Sys 0 00:00:%02d  -  %s\n", d, s/3600, s/60%60, s%60, s%7, label)
}

// terminated returns a 005 body.
func (g *condorGen) terminated(normal bool, ret int, run int64, mem int) []byte {
	var b []byte
	b = append(b, "Job terminated.\n"...)
	if normal {
		b = fmt.Appendf(b, "\t(1) Normal termination (return value %d)\n", ret)
	} else {
		b = fmt.Appendf(b, "\t(0) Abnormal termination (signal %d)\n\t(0) No core file\n", ret)
	}
	cpu := run / int64(time.Second) * 9 / 10
	b = usage(b, "Run Remote Usage", cpu)
	b = usage(b, "Run Local Usage", 0)
	b = usage(b, "Total Remote Usage", cpu)
	b = usage(b, "Total Local Usage", 0)
	sent, recv := g.rng.IntN(1<<20), g.rng.IntN(1<<24)
	b = fmt.Appendf(b, "\t%d  -  Run Bytes Sent By Job\n\t%d  -  Run Bytes Received By Job\n\t%d  -  Total Bytes Sent By Job\n\t%d  -  Total Bytes Received By Job\n", sent, recv, sent, recv)
	b = append(b, "\tPartitionable Resources :    Usage  Request Allocated \n"...)
	b = fmt.Appendf(b, "\t   Cpus                 : %8.2f %8d %9d \n", float64(g.rng.IntN(100))/100, 1, 1)
	b = fmt.Appendf(b, "\t   Disk (KB)            : %8d %8d %9d \n", 20+g.rng.IntN(5000), 1024, 1048576)
	b = fmt.Appendf(b, "\t   Memory (MB)          : %8d %8d %9d \n", mem/2+g.rng.IntN(mem/2+1), mem, mem)
	if normal {
		b = fmt.Appendf(b, "\n\tJob terminated of its own accord at %s with exit-code %d.\n", "the end of its run", ret)
	}
	return b
}

// condorFate is how a held job's story goes, drawn when the job is
// submitted: whether its owner releases it (and lets it finish) or removes
// it, and how much trouble it shows in the runs before its first hold.
// Real held jobs split this way: a job whose environment or input is broken
// crashes the shadow, loses its execute node and is requeued again and
// again before a policy or transfer failure holds it, and its owner gives
// up; a job held for a policy reason (memory, run time, a manual hold) has
// usually run cleanly and is released once the owner has fixed a request.
type condorFate struct {
	held    bool
	release bool       // released after its holds; otherwise removed
	hold    condorHold // the first hold's reason
	trouble int        // failing runs (004, 007, 022+024) before the first hold
}

// condorTroubleRemoved and condorTroubleReleased give, for each fate, the
// chances of 0, 1, 2 and 3 failing runs before the first hold. They overlap
// on purpose: one removed job in ten has no failing run and one released
// job in eight has one, so the event history predicts the outcome well but
// not perfectly.
var (
	condorTroubleRemoved  = [4]float64{0.1, 0.4, 0.3, 0.2}
	condorTroubleReleased = [4]float64{0.88, 0.12, 0, 0}
)

func (g *condorGen) fate() condorFate {
	if g.rng.Float64() >= g.hold {
		return condorFate{}
	}
	f := condorFate{held: true, release: g.rng.Float64()*g.wsum < g.wrel}
	f.hold = g.pickHold(f.release)
	odds := condorTroubleRemoved
	if f.release {
		odds = condorTroubleReleased
	}
	x := g.rng.Float64()
	for k, p := range odds {
		if x < p || k == 3 {
			f.trouble = k
			break
		}
		x -= p
	}
	return f
}

// job plans one job's events from its submit time and queues them.
func (g *condorGen) job(cluster int, t int64) {
	owner := condorOwners[g.rng.IntN(len(condorOwners))]
	mem := 1024 << g.rng.IntN(4)
	g.push(t, 0, cluster, fmt.Appendf(nil, "Job submitted from host: <10.0.0.5:9618?addrs=10.0.0.5-9618&alias=submit.example.org&noUDP&sock=schedd_1234_abcd>\n    Owner: %s\n", owner))
	f := g.fate()
	if f.held {
		g.stats.Held++
	}
	troubled := f.trouble > 0
	heldOnce := false // held, and since released: the job is labelled
	rehold := false   // a job to be removed was released once: held again at its next run
	starts := 0
	requeued := false
	for {
		if requeued {
			// Back to idle after a failed run: the job cannot match again
			// before the next negotiation cycle (NEGOTIATOR_INTERVAL, 60 s
			// by default).
			t += int64(time.Minute) + g.expDur(time.Minute)
		} else {
			t += g.expDur(2 * time.Minute) // idle in the queue
		}
		requeued = false
		starts++
		slot := 1 + g.rng.IntN(64)
		g.push(t, 1, cluster, fmt.Appendf(nil, "Job executing on host: %s\n\tSlotName: slot1_%d@%s\n\tCpus = 1\n\tDisk = 1048576\n\tMemory = %d\n", g.sinful(), slot, g.host(), mem))
		run := (int64(math.Exp(6.5+1.2*g.rng.NormFloat64())) + 60) * int64(time.Second)
		if f.held && !heldOnce && f.trouble > 0 {
			// A failing run before the first hold: broken jobs fail fast.
			f.trouble--
			t = g.trouble(cluster, slot, mem, t, g.expDur(90*time.Second))
			requeued = true
			continue
		}
		if f.held && (!heldOnce || rehold || f.release && starts < 4 && g.rng.Float64() < 0.15) {
			h := f.hold
			if heldOnce && f.release {
				h = g.pickHold(true)
			}
			t = g.heldRun(cluster, slot, mem, owner, t, run, h, troubled)
			heldOnce = true
			if f.release || !rehold && g.rng.Float64() < 0.2 {
				// Released; a job meant to be removed fails the same way
				// at its next run and is removed then.
				rehold = !f.release
				t += g.expDur(30 * time.Minute)
				g.push(t, 13, cluster, fmt.Appendf(nil, "Job was released.\n\tvia condor_release (by user %s)\n", owner))
				continue
			}
			t += g.expDur(2 * time.Hour)
			g.push(t, 9, cluster, fmt.Appendf(nil, "Job was aborted.\n\tvia condor_rm (by user %s)\n", owner))
			g.stats.Remove++
			return
		}
		switch u := g.rng.Float64(); {
		case u < 0.05 && starts < 3:
			// Background trouble: evicted, a shadow exception or a lost
			// execute node, then requeued.
			t = g.trouble(cluster, slot, mem, t, run/3)
			requeued = true
			continue
		case u < 0.07:
			g.noise(cluster, slot, mem, t, t+run/4)
			t += run / 4
			g.push(t, 9, cluster, fmt.Appendf(nil, "Job was aborted.\n\tvia condor_rm (by user %s)\n", owner))
			if heldOnce {
				g.stats.Remove++
			}
			return
		}
		g.noise(cluster, slot, mem, t, t+run-int64(2*time.Second))
		t += run
		if g.cfg.Noise {
			g.push(t-int64(2*time.Second), 40, cluster, []byte("Started transferring output files\n"))
			g.push(t-int64(time.Second), 40, cluster, []byte("Finished transferring output files\n"))
		}
		normal, ret := true, 0
		switch v := g.rng.Float64(); {
		case v < 0.03:
			normal, ret = false, 9
		case v < 0.1:
			ret = 1
		}
		g.push(t, 5, cluster, g.terminated(normal, ret, run, mem))
		if heldOnce {
			if normal {
				g.stats.Release++
			} else {
				g.stats.Remove++
			}
		}
		return
	}
}

// heldRun queues a run that started at t and ends held for reason h, and
// returns the time of the hold. Failures to execute (6) and to transfer
// input (13) hold the job seconds after it starts, output transfer failures
// (12) at the end of its run, a troubled job soon, others halfway; transfer
// and execute failures are often logged as a shadow exception first.
func (g *condorGen) heldRun(cluster, slot, mem int, owner string, t, run int64, h condorHold, troubled bool) int64 {
	var after int64
	switch {
	case h.code == 6 || h.code == 13:
		after = int64(2+g.rng.IntN(30)) * int64(time.Second)
	case troubled:
		after = g.expDur(2*time.Minute) + 20*int64(time.Second)
	case h.code == 12:
		after = run
	default:
		after = run / 2
	}
	g.noise(cluster, slot, mem, t, t+after)
	if troubled && g.rng.Float64() < 0.3 && after > 40*int64(time.Second) {
		// The connection to the execute node drops and recovers.
		g.disconnect(cluster, slot, t+after/2, false)
	}
	t += after
	reason := g.holdReason(h, owner, mem)
	if (h.code == 6 || h.code == 12 || h.code == 13) && g.rng.Float64() < 0.6 {
		g.push(t, 7, cluster, g.shadowException(reason))
	}
	g.push(t, 12, cluster, fmt.Appendf(nil, "Job was held.\n\t%s\n\tCode %d Subcode %d\n", reason, h.code, h.subcode))
	return t
}

// trouble queues a run that started at t and fails after d: the job is
// evicted (004), the shadow fails (007), or the execute node is lost (022
// and, after the job lease runs out or the startd is found gone, 024). The
// job is then idle again; trouble returns when.
func (g *condorGen) trouble(cluster, slot, mem int, t, d int64) int64 {
	end := t + d
	g.noise(cluster, slot, mem, t, end)
	switch x := g.rng.Float64(); {
	case x < 0.4:
		g.push(end, 4, cluster, fmt.Appendf(nil, "Job was evicted.\n\t(0) CPU times\n\t\tUsr 0 00:00:%02d, Sys 0 00:00:00  -  Run Remote Usage\n\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n", g.rng.IntN(60)))
	case x < 0.75:
		var msg string
		switch g.rng.IntN(3) {
		case 0:
			msg = fmt.Sprintf("Can no longer talk to condor_starter <10.1.%d.%d:9618>", g.rng.IntN(4), 1+g.rng.IntN(250))
		case 1:
			msg = fmt.Sprintf("Error from slot1_%d@%s: Failed to open '/var/lib/condor/execute/dir_%d/_condor_stdout' as standard output: No space left on device (errno 28)", slot, g.host(), g.rng.IntN(100000))
		default:
			msg = fmt.Sprintf("Error from slot1_%d@%s: STARTER at 10.1.%d.%d failed to receive file(s) from <10.0.0.5:9618>; SHADOW at 10.0.0.5 failed to send file(s) to <10.1.0.9:37611>: connection timed out", slot, g.host(), g.rng.IntN(4), 1+g.rng.IntN(250))
		}
		g.push(end, 7, cluster, g.shadowException(msg))
	default:
		end = g.disconnect(cluster, slot, end, true)
	}
	return end
}

// disconnect queues a 022 at t followed by a 023 reconnect, or by a 024
// when failed, and returns the time of the last.
func (g *condorGen) disconnect(cluster, slot int, t int64, failed bool) int64 {
	host := g.host()
	g.push(t, 22, cluster, fmt.Appendf(nil, "Job disconnected, attempting to reconnect\n    Socket between submit and execute hosts closed unexpectedly\n    Trying to reconnect to slot1_%d@%s <10.1.0.9:9618>\n", slot, host))
	if !failed {
		t += 10 * int64(time.Second)
		g.push(t, 23, cluster, fmt.Appendf(nil, "Job reconnected to slot1_%d@%s\n    startd address: <10.1.0.9:9618>\n    starter address: <10.1.0.9:41234>\n", slot, host))
		return t
	}
	if g.rng.IntN(2) == 0 {
		lease := 60 + 30*g.rng.IntN(5)
		t += int64(lease) * int64(time.Second)
		g.push(t, 24, cluster, fmt.Appendf(nil, "Job reconnection failed\n    Job disconnected too long: JobLeaseDuration (%d seconds) expired\n    Can not reconnect to slot1_%d@%s, rescheduling job\n", lease, slot, host))
		return t
	}
	t += g.expDur(20 * time.Second)
	g.push(t, 24, cluster, fmt.Appendf(nil, "Job reconnection failed\n    Startd is no longer at old port, job must have been killed\n    Can not reconnect to slot1_%d@%s, rescheduling job\n", slot, host))
	return t
}

// shadowException returns a 007 body as ShadowExceptionEvent writes it.
func (g *condorGen) shadowException(msg string) []byte {
	return fmt.Appendf(nil, "Shadow exception!\n\t%s\n\t%d  -  Run Bytes Sent By Job\n\t%d  -  Run Bytes Received By Job\n", msg, 0, g.rng.IntN(1<<16))
}

// noise queues 040 input transfers, 006 image-size updates and a 022/023
// pair for a run from start to end, all before end.
func (g *condorGen) noise(cluster, slot, mem int, start, end int64) {
	if !g.cfg.Noise {
		return
	}
	t1 := start + int64(time.Second)
	if t2 := t1 + g.expDur(10*time.Second); t2 < end {
		g.push(t1, 40, cluster, fmt.Appendf(nil, "Started transferring input files\n\tTransferring to host: %s\n", g.sinful()))
		g.push(t2, 40, cluster, []byte("Finished transferring input files\n"))
	}
	for u := start + 5*int64(time.Minute); u < end; u += 20 * int64(time.Minute) {
		g.push(u, 6, cluster, fmt.Appendf(nil, "Image size of job updated: %d\n\t%d  -  MemoryUsage of job (MB)\n\t%d  -  ResidentSetSize of job (KB)\n", 10000+g.rng.IntN(1<<20), g.rng.IntN(mem), g.rng.IntN(mem*1024)))
	}
	if d := start + (end-start)/2; g.rng.Float64() < 0.02 && d+int64(10*time.Second) < end {
		g.disconnect(cluster, slot, d, false)
	}
}

// pickHold draws a hold reason given whether the hold ends in a release:
// code c with probability weight·releaseP (or weight·(1−releaseP)) over its
// sum, so that over both outcomes each code keeps its weight's share of the
// holds and releaseP as its release rate.
func (g *condorGen) pickHold(release bool) condorHold {
	w := func(h condorHold) float64 {
		if release {
			return h.weight * h.releaseP
		}
		return h.weight * (1 - h.releaseP)
	}
	total := g.wrel
	if !release {
		total = g.wsum - g.wrel
	}
	x := g.rng.Float64() * total
	for _, h := range condorHolds {
		if x < w(h) {
			return h
		}
		x -= w(h)
	}
	return condorHolds[len(condorHolds)-1]
}

func (g *condorGen) holdReason(h condorHold, owner string, mem int) string {
	switch h.code {
	case 1:
		return fmt.Sprintf(h.reason, owner)
	case 6:
		return fmt.Sprintf(h.reason, 1+g.rng.IntN(64), g.host(), owner)
	case 12:
		return fmt.Sprintf(h.reason, 1+g.rng.IntN(64), g.host(), g.rng.IntN(4), 1+g.rng.IntN(250), g.rng.IntN(100000))
	case 13:
		return fmt.Sprintf(h.reason, 1+g.rng.IntN(64), g.host(), owner)
	case 21:
		return fmt.Sprintf(h.reason, 1+g.rng.IntN(64), g.host(), mem, mem+g.rng.IntN(mem))
	case 34:
		return fmt.Sprintf(h.reason, 1+g.rng.IntN(64), g.host())
	}
	return h.reason
}

var condorEventNames = map[int]string{
	0: "ULOG_SUBMIT", 1: "ULOG_EXECUTE", 4: "ULOG_JOB_EVICTED", 5: "ULOG_JOB_TERMINATED",
	6: "ULOG_IMAGE_SIZE", 7: "ULOG_SHADOW_EXCEPTION", 9: "ULOG_JOB_ABORTED", 12: "ULOG_JOB_HELD", 13: "ULOG_JOB_RELEASED",
	22: "ULOG_JOB_DISCONNECTED", 23: "ULOG_JOB_RECONNECTED", 24: "ULOG_JOB_RECONNECT_FAILED", 40: "ULOG_FILE_TRANSFER",
}

// header appends "NNN (cluster.proc.subproc) date " to b.
func (g *condorGen) header(b []byte, code, cluster int, t int64) []byte {
	tm := time.Unix(0, t).In(g.loc)
	b = append(b, byte('0'+code/100), byte('0'+code/10%10), byte('0'+code%10), ' ', '(')
	if cluster < 0 {
		b = append(b, "-01.-01.-01) "...)
	} else {
		b = appendPad(b, cluster, 3)
		b = append(b, ".000.000) "...)
	}
	y, mo, d := tm.Date()
	hh, mm, ss := tm.Clock()
	if !g.cfg.LegacyDates {
		b = appendPad(b, y, 4)
		b = append(b, '-')
		b = appendPad(b, int(mo), 2)
		b = append(b, '-')
	} else {
		b = appendPad(b, int(mo), 2)
		b = append(b, '/')
	}
	b = appendPad(b, d, 2)
	b = append(b, ' ')
	b = appendPad(b, hh, 2)
	b = append(b, ':')
	b = appendPad(b, mm, 2)
	b = append(b, ':')
	b = appendPad(b, ss, 2)
	return append(b, ' ')
}

func appendPad(b []byte, v, width int) []byte {
	s := strconv.AppendInt(nil, int64(v), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// write formats one event (and its 028 companion) into g.buf.
func (g *condorGen) write(ev *condorEvent) {
	g.buf = g.header(g.buf, ev.code, ev.job, ev.t)
	g.buf = append(g.buf, ev.body...)
	g.buf = append(g.buf, "...\n"...)
	g.stats.Events++
	g.stats.Counts[ev.code]++
	if g.stats.First.IsZero() {
		g.stats.First = time.Unix(0, ev.t).In(g.loc)
	}
	g.stats.Last = time.Unix(0, ev.t).In(g.loc)
	if g.cfg.JobAds && ev.job >= 0 {
		g.buf = g.header(g.buf, 28, ev.job, ev.t)
		g.buf = fmt.Appendf(g.buf, "Job ad information event triggered.\nProc = 0\nEventTime = \"%s\"\nTriggerEventTypeName = \"%s\"\nTriggerEventTypeNumber = %d\nCluster = %d\nSubproc = 0\nEventTypeNumber = 28\nJobStatus = %d\n...\n",
			time.Unix(0, ev.t).In(g.loc).Format("2006-01-02T15:04:05"), condorEventNames[ev.code], ev.code, ev.job, condorJobStatus(ev.code))
		g.stats.Events++
		g.stats.Counts[28]++
	}
}

func condorJobStatus(code int) int {
	switch code {
	case 1, 6, 22, 23, 40:
		return 2 // running
	case 12:
		return 5 // held
	case 9:
		return 3 // removed
	case 5:
		return 4 // completed
	}
	return 1 // idle
}

// GlobalHeader returns the text of a global-log header event as
// WriteUserLogHeader::GenerateEvent writes it (padded to 256 characters).
func condorHeaderBody(ctime time.Time, seq, maxRotation int, offset, events int64) []byte {
	b := fmt.Appendf(nil, "Global JobLog: ctime=%d id=synth.%d.%d sequence=%d size=0 events=%d offset=%d event_off=%d max_rotation=%d creator_name=<schedd@submit.example.org>",
		ctime.Unix(), seq, ctime.Unix(), seq, events, offset, events, maxRotation)
	for len(b) < 256 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// generate runs the simulation and calls each with every formatted event
// (followed by its 028 when JobAds is set) and its time, until the job or
// size target is met. The slice is reused after each returns.
func (g *condorGen) generate(each func(b []byte, t int64) error) error {
	arrival := g.cfg.Start.UnixNano()
	target := g.cfg.Bytes
	if g.cfg.Jobs == 0 && target == 0 {
		target = 1 << 20
	}
	var written, emitted int64
	cluster := 1000
	for {
		// Queued events count towards the size at the mean size so far.
		pending := int64(len(g.queue)) * 300
		if emitted > 0 {
			pending = int64(len(g.queue)) * written / emitted
		}
		more := (g.cfg.Jobs > 0 && g.stats.Jobs < g.cfg.Jobs) || (g.cfg.Jobs == 0 && written+pending < target)
		if more {
			g.job(cluster, arrival)
			cluster++
			g.stats.Jobs++
		} else if len(g.queue) == 0 {
			break
		}
		// Emit everything due before the next arrival.
		next := arrival + g.expDur(g.cfg.MeanInterarrival)
		for len(g.queue) > 0 && (!more || g.queue[0].t < next) {
			ev := heap.Pop(&g.queue).(*condorEvent)
			g.buf = g.buf[:0]
			g.write(ev)
			written += int64(len(g.buf))
			emitted++
			if err := each(g.buf, ev.t); err != nil {
				return err
			}
		}
		arrival = next
	}
	g.stats.Bytes += written
	return nil
}

func (g *condorGen) headerEvent(t int64, seq, maxRotation int, offset, events int64) []byte {
	b := g.header(nil, 8, -1, t)
	b = append(b, condorHeaderBody(time.Unix(0, t), seq, maxRotation, offset, events)...)
	b = append(b, "...\n"...)
	g.stats.Events++
	g.stats.Counts[8]++
	return b
}

// CondorGlobalLog writes a synthetic global event log to w and describes
// it. The same configuration gives the same bytes.
func CondorGlobalLog(w io.Writer, cfg CondorLogConfig) (CondorLogStats, error) {
	g := newCondorGen(cfg)
	bw := bufio.NewWriterSize(w, 64<<10)
	if cfg.Header {
		h := g.headerEvent(g.cfg.Start.UnixNano(), 1, 1, 0, 0)
		g.stats.Bytes += int64(len(h))
		if _, err := bw.Write(h); err != nil {
			return g.stats, err
		}
	}
	err := g.generate(func(b []byte, _ int64) error {
		_, err := bw.Write(b)
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	return g.stats, err
}

// CondorRotated writes a synthetic global event log as HTCondor's rotation
// leaves it in dir: files named base.N, ..., base.1 (base.old when files is
// 2), then base, oldest first, each starting with a "Global JobLog:" header.
// Each file after the first repeats the last overlap events (with their 028
// companions) of the previous one, as a copy taken while the log rotated
// would. It returns the paths oldest first; the stats count each event
// once, plus the headers. cfg.Header is ignored. It keeps the whole log in
// memory: use it for test-sized logs.
func CondorRotated(dir, base string, cfg CondorLogConfig, files, overlap int) ([]string, CondorLogStats, error) {
	if files < 1 || overlap < 0 {
		panic("synth: CondorRotated needs files >= 1 and overlap >= 0")
	}
	g := newCondorGen(cfg)
	var events [][]byte
	var times []int64
	if err := g.generate(func(b []byte, t int64) error {
		events = append(events, append([]byte(nil), b...))
		times = append(times, t)
		return nil
	}); err != nil {
		return nil, g.stats, err
	}
	names := make([]string, files)
	for k := range files {
		switch age := files - 1 - k; {
		case age == 0:
			names[k] = filepath.Join(dir, base)
		case files == 2:
			names[k] = filepath.Join(dir, base+".old")
		default:
			names[k] = filepath.Join(dir, base+"."+strconv.Itoa(age))
		}
	}
	maxRot := max(files-1, 1)
	g.stats.Bytes = 0
	per := (len(events) + files - 1) / files
	var offset int64
	for k := range files {
		lo, hi := min(k*per, len(events)), min((k+1)*per, len(events))
		from := lo
		if k > 0 {
			from = max(0, lo-overlap)
		}
		ct := g.cfg.Start.UnixNano()
		if from < len(times) {
			ct = times[from]
		}
		b := g.headerEvent(ct, k+1, maxRot, offset, int64(lo))
		for _, e := range events[from:hi] {
			b = append(b, e...)
		}
		offset += int64(len(b))
		g.stats.Bytes += int64(len(b))
		if err := os.WriteFile(names[k], b, 0o644); err != nil {
			return nil, g.stats, err
		}
	}
	return names, g.stats, nil
}
