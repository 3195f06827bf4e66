package lstm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// checkpointHelperEnv makes the test binary a training process for
// TestTrainKillResume.
const checkpointHelperEnv = "LSTM_CHECKPOINT_HELPER"

// resumeRun trains the run TestTrainKillResume interrupts: the model of
// cell, 14 epochs with early stopping, checkpointing to ckpt when set.
func resumeRun(ctx context.Context, cell Cell, ckpt string, progress *os.File) (*Model, *History, error) {
	rnd := rand.New(rand.NewPCG(11, 12))
	train, valid := holdTask(rnd, 200, 5, 3, 1, 1), holdTask(rnd, 60, 5, 3, 1, 1)
	m := New(Architecture{Inputs: 3, Hidden: 5, Layers: 2, Cell: cell, NewestFirst: true}, rand.New(rand.NewPCG(1, 1)))
	cfg := Config{LearningRate: 0.02, BatchSize: 16, Epochs: 14, Patience: 6, Seed: 5, ClipNorm: 1, Checkpoint: ckpt}
	if progress != nil {
		cfg.Progress = progress
	}
	h, err := Train(ctx, m, cfg, train, valid)
	return m, h, err
}

// TestCheckpointHelper is the training process TestTrainKillResume starts
// and kills; it does nothing in a normal test run.
func TestCheckpointHelper(t *testing.T) {
	dir := os.Getenv(checkpointHelperEnv)
	if dir == "" {
		t.Skip("helper process of TestTrainKillResume")
	}
	cell := LSTM
	if strings.HasSuffix(dir, "gru") {
		cell = GRU
	}
	m, _, err := resumeRun(context.Background(), cell, filepath.Join(dir, "ckpt"), os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.json"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTrainKillResume kills a training process (SIGKILL) right after a
// random epoch, again and again, restarting it each time on the same
// checkpoint, and checks that the run it finally completes has the same
// weights, to the bit, and the same history as an uninterrupted run, and
// that checkpointing itself changes no bit.
func TestTrainKillResume(t *testing.T) {
	if os.Getenv(checkpointHelperEnv) != "" {
		t.Skip("in the helper")
	}
	for _, cell := range []Cell{LSTM, GRU} {
		t.Run(cell.String(), func(t *testing.T) {
			plain, plainHist, err := resumeRun(t.Context(), cell, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), cell.String())
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			rnd := rand.New(rand.NewPCG(uint64(cell), 99))
			var kills []int
			for start := 0; ; start++ {
				if start > 20 {
					t.Fatal("training did not finish in 20 starts")
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointHelper$", "-test.v")
				cmd.Env = append(os.Environ(), checkpointHelperEnv+"="+dir)
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); errors.Is(err, syscall.ENOEXEC) {
					// Under user-mode emulation without binfmt (go test
					// -exec qemu-aarch64) the test binary cannot start itself.
					t.Skipf("cannot start the test binary again here: %v", err)
				} else if err != nil {
					t.Fatal(err)
				}
				killAfter := 1 + rnd.IntN(3) // epochs this process may finish
				sc := bufio.NewScanner(out)
				epochs, killed := 0, false
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "epoch ") {
						epochs++
						if epochs == killAfter {
							cmd.Process.Kill()
							killed = true
							break
						}
					}
				}
				err = cmd.Wait()
				if !killed {
					if err != nil {
						t.Fatalf("helper: %v", err)
					}
					break
				}
				var last checkpoint
				if b, err := os.ReadFile(filepath.Join(dir, "ckpt")); err != nil {
					t.Fatal(err)
				} else if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&last); err != nil {
					t.Fatalf("checkpoint after a kill: %v", err)
				}
				kills = append(kills, len(last.Hist.Epochs))
			}
			t.Logf("killed after epochs %v", kills)
			if len(kills) < 2 {
				t.Fatalf("killed %d times, want at least 2", len(kills))
			}
			f, err := os.Open(filepath.Join(dir, "model.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			resumed, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range resumed.Params() {
				if v != plain.Params()[i] {
					t.Fatalf("parameter %d: resumed %v, uninterrupted %v", i, v, plain.Params()[i])
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "ckpt"))
			if err != nil {
				t.Fatal(err)
			}
			var c checkpoint
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*plainHist, c.Hist, cmpopts.IgnoreFields(EpochStats{}, "Elapsed")); diff != "" {
				t.Errorf("history (-uninterrupted +resumed):\n%s", diff)
			}

			// Checkpointing in-process changes no bit either, and a
			// finished checkpoint resumes to the same result at once.
			ckpt := filepath.Join(t.TempDir(), "ckpt")
			for range 2 {
				m, h, err := resumeRun(t.Context(), cell, ckpt, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slicesEqual(m.Params(), plain.Params()) || len(h.Epochs) != len(plainHist.Epochs) || h.BestEpoch != plainHist.BestEpoch {
					t.Errorf("in-process checkpointed run differs from the plain one")
				}
			}
		})
	}
}

func slicesEqual(a, b []float64) bool { return slices.Equal(a, b) }

// TestCheckpointMismatch checks that a checkpoint of another model or data
// set is refused, not silently loaded.
func TestCheckpointMismatch(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	rnd := rand.New(rand.NewPCG(3, 4))
	train := holdTask(rnd, 64, 4, 3, 1, 1)
	m := New(Architecture{Inputs: 3, Hidden: 4, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	if _, err := Train(t.Context(), m, Config{Epochs: 2, BatchSize: 16, Checkpoint: ckpt}, train, Data{}); err != nil {
		t.Fatal(err)
	}
	other := New(Architecture{Inputs: 3, Hidden: 5, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	if _, err := Train(t.Context(), other, Config{Epochs: 3, BatchSize: 16, Checkpoint: ckpt}, train, Data{}); !errors.Is(err, ErrFormat) {
		t.Errorf("another model: err = %v, want ErrFormat", err)
	}
	if _, err := Train(t.Context(), m.Clone(), Config{Epochs: 3, BatchSize: 16, Checkpoint: ckpt}, holdTask(rnd, 32, 4, 3, 1, 1), Data{}); !errors.Is(err, ErrFormat) {
		t.Errorf("another data set: err = %v, want ErrFormat", err)
	}
	if err := os.WriteFile(ckpt, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(t.Context(), m.Clone(), Config{Epochs: 3, BatchSize: 16, Checkpoint: ckpt}, train, Data{}); !errors.Is(err, ErrFormat) {
		t.Errorf("damaged file: err = %v, want ErrFormat", err)
	}
}

// FuzzCheckpoint feeds Train arbitrary checkpoint files: each is refused
// with ErrFormat or resumed from, never a panic.
func FuzzCheckpoint(f *testing.F) {
	rnd := rand.New(rand.NewPCG(3, 4))
	train := holdTask(rnd, 16, 3, 3, 1, 1)
	dir := f.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	m := New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	if _, err := Train(context.Background(), m, Config{Epochs: 1, BatchSize: 8, Checkpoint: ckpt}, train, Data{}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(ckpt)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("not a checkpoint"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "ckpt")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		mm := New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
		if _, err := Train(context.Background(), mm, Config{Epochs: 2, BatchSize: 8, Checkpoint: p}, train, Data{}); err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrNaN) {
			t.Fatalf("err = %v, want nil or ErrFormat", err)
		}
	})
}
