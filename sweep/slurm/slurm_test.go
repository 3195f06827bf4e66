package slurm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

func TestParseJobComp(t *testing.T) {
	// Lines as slurmctld 22.05.8 (Debian bookworm) writes them with
	// JobCompType=jobcomp/filetxt, shortened.
	log := `JobId=2 UserId=root(0) GroupId=root(0) Name=t.sh JobState=COMPLETED Partition=debug ArrayJobId=1 ArrayTaskId=0 DerivedExitCode=0:0 ExitCode=0:0 
JobId=3 UserId=root(0) GroupId=root(0) Name=t.sh JobState=FAILED Partition=debug ArrayJobId=1 ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=3:0 
JobId=1 UserId=root(0) GroupId=root(0) Name=t.sh JobState=TIMEOUT Partition=debug ArrayJobId=1 ArrayTaskId=2 DerivedExitCode=0:0 ExitCode=0:15 
JobId=9 UserId=root(0) GroupId=root(0) Name=x JobState=CANCELLED Partition=debug ArrayJobId=0 ArrayTaskId=4294967294 ExitCode=0:15
garbage`
	got := parseJobComp([]byte(log))
	want := map[string]slurmState{"1_0": {"COMPLETED", 0}, "1_1": {"FAILED", 3}, "1_2": {"TIMEOUT", 0}, "9": {"CANCELLED", 0}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
}

func TestBatchScript(t *testing.T) {
	s := &Backend{Command: []string{"w"}, Dir: "/d", MaxParallel: 4, SignalBefore: time.Minute}
	got := strings.Join(s.sbatchArgs("n", 216, sweep.Resources{}, "/d/n.sh"), " ")
	want := "--parsable --array=0-215%4 --job-name=n --output=/d/n_%a.out --signal=B:TERM@60 /d/n.sh"
	if got != want {
		t.Errorf("sbatch args\n got %s\nwant %s", got, want)
	}
	// A task's resources become sbatch options.
	res := sweep.Resources{CPUs: 4, GPUs: 2, MemoryMB: 8192, Time: 36*time.Hour + 90*time.Second, Partition: "gpu", Account: "proj1"}
	got = strings.Join(s.sbatchArgs("n", 2, res, "/d/n.sh"), " ")
	want = "--parsable --array=0-1%4 --job-name=n --output=/d/n_%a.out --partition=gpu --account=proj1 --time=1-12:01:30 --cpus-per-task=4 --mem=8192M --gres=gpu:2 --signal=B:TERM@60 /d/n.sh"
	if got != want {
		t.Errorf("sbatch args with resources\n got %s\nwant %s", got, want)
	}
	// The script selects the right line for each array index, and claims
	// the attempt for its batch.
	dir := t.TempDir()
	list := filepath.Join(dir, "l")
	os.WriteFile(list, []byte(dir+"/a\tida\t1\n"+dir+"/b\tidb\t2\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	script := batchScript([]string{"sh", "-c", `echo "$SWEEP_RUN_ID $SWEEP_ATTEMPT $(basename "$SWEEP_CONFIG") $PWD"`}, list, "batch1")
	run := func() {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_JOB_ID=7")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	run()
	b, _ := os.ReadFile(filepath.Join(dir, "b", "log"))
	if want := "slurm 7_1 on"; !strings.HasPrefix(string(b), want) || !strings.Contains(string(b), "idb 2 config.json "+dir+"/b\n") {
		t.Errorf("log %q", b)
	}
	if target, err := os.Readlink(filepath.Join(dir, "b", "claim.batch1")); err != nil || target != "7_1" {
		t.Errorf("claim %q, %v; want 7_1", target, err)
	}
	// A requeued task finds its own claim and runs again.
	run()
	b, _ = os.ReadFile(filepath.Join(dir, "b", "log"))
	if n := strings.Count(string(b), "idb 2"); n != 2 {
		t.Errorf("requeued task ran %d times, want 2:\n%s", n, b)
	}
	// A fenced attempt runs nothing.
	os.Remove(filepath.Join(dir, "b", "claim.batch1"))
	os.Symlink("fenced", filepath.Join(dir, "b", "claim.batch1"))
	run()
	b, _ = os.ReadFile(filepath.Join(dir, "b", "log"))
	if n := strings.Count(string(b), "idb 2"); n != 2 || !strings.Contains(string(b), "given up") {
		t.Errorf("fenced task ran (%d runs):\n%s", n, b)
	}
}

func FuzzParseJobComp(f *testing.F) {
	f.Add([]byte("JobId=3 UserId=root(0) Name=t.sh JobState=FAILED ArrayJobId=1 ArrayTaskId=1 ExitCode=3:0\n"))
	f.Add([]byte("JobState= ExitCode=x:y ArrayJobId=0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k, st := range parseJobComp(b) {
			if k == "" || st.state == "" {
				t.Fatalf("empty key or state in %q", b)
			}
		}
	})
}

// TestErrCommand: a Slurm command that cannot run is an error wrapping
// ErrCommand.
func TestErrCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := (&Backend{Command: []string{"w"}, Dir: t.TempDir()}).Submit(context.Background(), []sweep.Task{{RunID: "r", Dir: t.TempDir()}})
	if !errors.Is(err, ErrCommand) {
		t.Fatalf("err %v, want ErrCommand", err)
	}
}
