package cputime

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestSelfGrowsWithWork spins for a measured wall time and checks that the
// CPU time grew by at least part of it (the spin keeps one thread busy; the
// margin allows for a loaded machine descheduling the test).
func TestSelfGrowsWithWork(t *testing.T) {
	before, ok := Self()
	if !ok {
		if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
			t.Skipf("no getrusage on %s", runtime.GOOS)
		}
		t.Fatal("Self: not available on a Unix system")
	}
	const spin = 200 * time.Millisecond
	x := 1.0
	for start := time.Now(); time.Since(start) < spin; {
		for range 1000 {
			x = x*1.0000001 + 1e-9
		}
	}
	after, _ := Self()
	if got := after - before; got < spin/20 {
		t.Errorf("CPU time grew by %v over a %v spin (x=%g); want at least %v", got, spin, x, spin/20)
	}
	if sys, ok := System(); !ok || sys < 0 || sys > after {
		t.Errorf("System %v (ok %v), Self %v: want 0 <= System <= Self", sys, ok, after)
	}
}

func TestPeakRSSCoversAllocation(t *testing.T) {
	const n = 64 << 20
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	rss, ok := PeakRSS()
	if !ok {
		t.Skipf("no getrusage on %s", runtime.GOOS)
	}
	if rss < n {
		t.Errorf("PeakRSS = %d bytes after touching %d bytes", rss, n)
	}
	runtime.KeepAlive(b)
}

// TestProcessCoversChild runs this test binary as a child that touches
// 64 MiB and checks that Process reports at least that much.
func TestProcessCoversChild(t *testing.T) {
	if os.Getenv("CPUTIME_CHILD") == "1" {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = byte(i)
		}
		runtime.KeepAlive(b)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestProcessCoversChild$")
	cmd.Env = append(os.Environ(), "CPUTIME_CHILD=1")
	if out, err := cmd.CombinedOutput(); errors.Is(err, syscall.ENOEXEC) {
		// go test -exec qemu-aarch64 on a host without binfmt_misc: the
		// emulated binary cannot start a copy of itself.
		t.Skipf("this test binary cannot run itself here: %v", err)
	} else if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	cpu, rss, ok := Process(cmd.ProcessState)
	if !ok {
		t.Skipf("no rusage of children on %s", runtime.GOOS)
	}
	if rss < 64<<20 || cpu <= 0 {
		t.Errorf("Process = cpu %v, peak RSS %d bytes; the child touched %d bytes", cpu, rss, 64<<20)
	}
	if _, _, ok := Process(nil); ok {
		t.Error("Process(nil) reports ok")
	}
}
