// Command tour runs every workflow's example end to end on built-in data,
// writing each one's outputs under one directory (default ./out).
//
// It first compiles the example programs into a temporary directory (on a
// new machine this downloads the modules and takes a minute or two, reported
// as it goes), then runs them in turn, saying what each does and how long it
// took, and ends with a table of what was written where. When the public
// test data is on the machine ($CROSSCLUSTER_TESTDATA, or ../shared/testdata
// beside the checkout: internal/pubdata finds it), two more steps run the
// published references on it. The temporary directory is removed when the
// tour ends, fails or is interrupted.
//
// Exit status: 0 when every workflow passed, 1 when one failed, 2 for a bad
// flag or argument, 130 after Ctrl-C (SIGINT) or SIGTERM.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// step is one run of an example: its directory under examples/, what it
// shows, the flags it gets besides -out, and for the real-data steps the
// source of the public data it reads (flags then name files relative to it
// as "{data}/...").
type step struct {
	name, example, what string
	flags               []string
	data                string
}

// steps lists the workflows in the order README.md presents them, then the
// references on the public data.
var steps = []step{
	{"overlap", "overlap", "cross-cluster comparison: regimes, domain classifier, propensity band, KS", nil, ""},
	{"rainbow", "rainbow", "scheduler matching: the two rainbow simulation experiments on synthetic worlds", nil, ""},
	{"eventlog", "eventlog", "HTCondor event logs: parse a synthetic pool log, job histories, held-job tensors", nil, ""},
	{"heldjobs", "heldjobs", "held-job decisions: train the LSTM, evaluate, decide release or remove", nil, ""},
	{"tolerance", "tolerance", "cross-machine divergence: replicate on three local boxes, compare .npz archives (bound 1e-3: one-ulp differences grow to about 7e-4 over 15 s of a chaotic pendulum; the example's default 1e-4 fails and exits 1)", []string{"-tol", "1e-3"}, ""},
	{"losssweep", "losssweep", "parameter sweep: 216 runs through the ledger, export, curve analysis", nil, ""},
	{"stampede", "overlap", "public data: Stampede February against March 2018, every regime (the reference of fresco/SOURCES.md)",
		[]string{"-regime", "all", "-source", "{data}/stampede_feb_2018_job_accounting.csv", "-target", "{data}/stampede_mar_2018_job_accounting.csv"}, "fresco"},
	{"rainbow-published", "rainbow", "public data: both rainbow experiments with the published rules",
		[]string{"-data", "{data}", "-rules", "published"}, "rainbow"},
}

func names() string {
	var n []string
	for _, s := range steps {
		n = append(n, s.name)
	}
	return strings.Join(n, ", ")
}

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `Usage: go run ./examples/tour [-out DIR] [-only NAME]

Runs every workflow's example end to end on built-in data (about a minute
once compiled; the first run on a new machine also downloads and compiles),
and the published references when the public test data is present.

Flags:
`)
		flag.PrintDefaults()
	}
	out := flag.String("out", "out", "directory that receives one sub-directory per workflow (e.g. -out /tmp/tour)")
	only := flag.String("only", "", "run just this step: "+names()+" (e.g. -only overlap)")
	flag.Parse()
	if err := validate(*out, *only, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *out, *only)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case interrupted:
		fmt.Fprintln(os.Stderr, "tour: interrupted; outputs so far are under", *out)
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}

// validate checks the flags and arguments before any work.
func validate(out, only string, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q (the tour takes only flags)", args[0])
	}
	if out == "" {
		return errors.New("-out is empty: give the directory that receives the outputs")
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return fmt.Errorf("-out %s is a file, not a directory", out)
	}
	if only != "" && !strings.Contains(", "+names()+", ", ", "+only+", ") {
		return fmt.Errorf("-only %q: no such step (want one of %s)", only, names())
	}
	if d := os.Getenv(pubdata.Env); d != "" {
		if _, err := pubdata.Root(); err != nil {
			return err
		}
	}
	return nil
}

type outcome struct {
	name    string
	ok      bool
	elapsed time.Duration
	dir     string
	files   []string
}

func run(ctx context.Context, out, only string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	var todo []step
	for _, s := range steps {
		if only != "" && s.name != only {
			continue
		}
		if s.data != "" {
			d, err := pubdata.Dir(s.data)
			if err != nil {
				fmt.Printf("skipping %s: %v\n", s.name, err)
				if only != "" {
					return err
				}
				continue
			}
			flags := make([]string, len(s.flags))
			for i, f := range s.flags {
				flags[i] = strings.ReplaceAll(f, "{data}", d)
			}
			s.flags = flags
		}
		todo = append(todo, s)
	}
	bin, err := os.MkdirTemp("", "crosscluster-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	var pkgs []string
	seen := map[string]bool{}
	for _, s := range todo {
		if !seen[s.example] {
			seen[s.example] = true
			pkgs = append(pkgs, "./examples/"+s.example)
		}
	}
	if err := compile(ctx, root, bin, pkgs); err != nil {
		return err
	}

	var results []outcome
	for k, s := range todo {
		dir := filepath.Join(absOut, s.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		args := append([]string{"-out", dir}, s.flags...)
		fmt.Printf("\n=== [%d/%d] %s: %s\n    %s %s\n", k+1, len(todo), s.name, s.what,
			filepath.Join("examples", s.example), strings.Join(args, " "))
		start := time.Now()
		cmd := command(ctx, filepath.Join(bin, s.example), args...)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o := outcome{name: s.name, ok: err == nil, elapsed: time.Since(start), dir: dir, files: listFiles(dir)}
		if err != nil {
			fmt.Printf("--- %s FAILED after %s: %v\n", s.name, o.elapsed.Round(time.Millisecond), err)
		} else {
			fmt.Printf("--- %s ok in %s\n", s.name, o.elapsed.Round(time.Millisecond))
		}
		results = append(results, o)
	}
	summary(os.Stdout, absOut, results)
	var failed []string
	for _, o := range results {
		if !o.ok {
			failed = append(failed, o.name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d workflows failed: %s", len(failed), len(results), strings.Join(failed, ", "))
	}
	return nil
}

// command returns a command that, when ctx ends, gets SIGINT (an example
// then stops as after Ctrl-C and removes its partial files) and, if it has
// not exited 10 s later, SIGKILL.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// compile builds the example programs into bin, reporting the packages it
// compiles (go build -v lists each one it builds) and the modules it
// downloads, with the elapsed time, so that a first run is never silent.
func compile(ctx context.Context, root, bin string, pkgs []string) error {
	fmt.Printf("compiling %s (the first run on a new machine downloads modules and takes a minute or two)\n", plural(len(pkgs), "example program"))
	start := time.Now()
	cmd := command(ctx, "go", append([]string{"build", "-v", "-o", bin + string(os.PathSeparator)}, pkgs...)...)
	cmd.Dir = root
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting go build: %w", err)
	}
	var (
		mu       sync.Mutex
		built    int
		download int
		lastLine string
		tail     []string
	)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				mu.Lock()
				fmt.Fprintf(os.Stderr, "  ... %s: %d packages compiled, %d modules downloaded (last: %s)\n",
					time.Since(start).Round(time.Second), built, download, lastLine)
				mu.Unlock()
			}
		}
	}()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		mu.Lock()
		switch {
		case strings.HasPrefix(line, "go: downloading "):
			download++
		case !strings.Contains(line, " ") && line != "":
			built++
		default:
			tail = append(tail, line)
		}
		lastLine = line
		mu.Unlock()
	}
	err = cmd.Wait()
	close(done)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("go build failed: %w\n%s", err, strings.Join(tail, "\n"))
	}
	fmt.Printf("compiled in %s (%d packages built, %d modules downloaded)\n", time.Since(start).Round(100*time.Millisecond), built, download)
	return nil
}

// listFiles returns the files under dir, relative to it, sorted.
func listFiles(dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, err := filepath.Rel(dir, p); err == nil {
				files = append(files, rel)
			}
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// summary prints, per workflow, its status, time and what it wrote: the
// files at the top of its directory by name, and deeper ones counted by
// their first directory.
func summary(w io.Writer, out string, results []outcome) {
	fmt.Fprintf(w, "\nsummary (outputs under %s)\n", out)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workflow\tstatus\ttime\tfiles\twritten")
	for _, o := range results {
		status := "ok"
		if !o.ok {
			status = "FAILED"
		}
		var top []string
		deeper := map[string]int{}
		var order []string
		for _, f := range o.files {
			d, _, found := strings.Cut(filepath.ToSlash(f), "/")
			if !found {
				top = append(top, d)
				continue
			}
			if deeper[d] == 0 {
				order = append(order, d)
			}
			deeper[d]++
		}
		for _, d := range order {
			top = append(top, fmt.Sprintf("%s/ (%d files)", d, deeper[d]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", o.name, status, o.elapsed.Round(100*time.Millisecond), len(o.files),
			filepath.Join(filepath.Base(out), o.name)+"/: "+strings.Join(top, ", "))
	}
	tw.Flush()
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory; run tour from inside the crosscluster checkout")
		}
		dir = parent
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
