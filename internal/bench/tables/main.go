// Command tables measures examples/overlap's memory on FRESCO-style
// telemetry tables of real size (issue 13: below 300 MB of peak RSS on
// 10^6-row tables). It writes an Anvil-like source.csv and a Conte-like
// target.csv from internal/synth (seeded; every column the synthetic
// profiles write, one row per job, host and telemetry sample), each of
// exactly -rows rows, generating them in chunks so that the generator
// itself stays small; with -measure it then runs examples/overlap on them
// and prints the row counts beside the program's peak RSS (ru_maxrss of the
// child process), wall and CPU time:
//
//	go run ./internal/bench/tables -gen /tmp/tables -rows 1000000 -measure
//
// -rows takes a comma-separated list (e.g. 100000,1000000) to measure
// several sizes in one go; -bin uses an already built examples/overlap.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/synth"
)

func main() {
	dir := flag.String("gen", "", "directory to write the tables into (e.g. -gen /tmp/tables)")
	rowList := flag.String("rows", "1000000", "rows per table, or a comma-separated list of sizes (e.g. -rows 100000,1000000)")
	measure := flag.Bool("measure", false, "run examples/overlap on each pair of tables and print its peak RSS (e.g. -measure)")
	bin := flag.String("bin", "", "examples/overlap binary to measure; default: go build it into -gen (e.g. -bin /tmp/ov)")
	flag.Parse()
	if err := run(*dir, *rowList, *measure, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "tables:", err)
		os.Exit(1)
	}
}

func run(dir, rowList string, measure bool, bin string) error {
	if dir == "" {
		return fmt.Errorf("-gen DIR is required")
	}
	var sizes []int
	for _, f := range strings.Split(rowList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-rows %q: want positive row counts", rowList)
		}
		sizes = append(sizes, n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if measure && bin == "" {
		bin = filepath.Join(dir, "overlap")
		fmt.Fprintf(os.Stderr, "building examples/overlap into %s\n", bin)
		cmd := exec.Command("go", "build", "-o", bin, "./examples/overlap")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./examples/overlap (run from the module root): %w", err)
		}
	}
	if measure {
		fmt.Println("| rows per table | source jobs | target jobs | CSV MB (source + target) | peak RSS | wall | CPU |")
		fmt.Println("|---|---|---|---|---|---|---|")
	}
	for _, n := range sizes {
		sub := filepath.Join(dir, fmt.Sprintf("rows%d", n))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		var jobs [2]int
		var mb float64
		for k, c := range []struct {
			name string
			p    synth.ClusterProfile
		}{{"source.csv", synth.AnvilLike()}, {"target.csv", synth.ConteLike()}} {
			path := filepath.Join(sub, c.name)
			nj, size, err := writeTable(path, c.p, n, uint64(k+1))
			if err != nil {
				return err
			}
			jobs[k] = nj
			mb += float64(size) / 1e6
			fmt.Fprintf(os.Stderr, "%s: %d rows, %d jobs, %.1f MB\n", path, n, nj, float64(size)/1e6)
		}
		if !measure {
			continue
		}
		out := filepath.Join(sub, "out")
		// The Conte-like profile writes its timelimits in minutes.
		cmd := exec.Command(bin, "-source", filepath.Join(sub, "source.csv"), "-target", filepath.Join(sub, "target.csv"),
			"-units", "conte=60", "-out", out)
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
		}
		wall := time.Since(start)
		cpu, rss, ok := cputime.Process(cmd.ProcessState)
		rssText, cpuText := "n/a", "n/a"
		if ok {
			rssText, cpuText = fmt.Sprintf("%.0f MB", float64(rss)/1e6), cpu.Round(100*time.Millisecond).String()
		}
		fmt.Printf("| %d | %d | %d | %.0f | %s | %s | %s |\n", n, jobs[0], jobs[1], mb, rssText, wall.Round(100*time.Millisecond), cpuText)
	}
	return nil
}

// chunk is the number of jobs generated at a time.
const chunk = 1000

// writeTable writes exactly rows telemetry rows of profile p to path (the
// last job may lose some of its samples), drawing chunk jobs at a time. It
// returns the number of jobs and the file's size.
func writeTable(path string, p synth.ClusterProfile, rows int, seed uint64) (jobs int, size int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(20261124, seed))
	written := 0
	var buf bytes.Buffer
	for written < rows {
		// Rows of a job are consecutive; the last batch is cut at rows.
		batch := synth.JobTable(p, chunk, rng)
		batch = batch[:min(len(batch), rows-written)]
		// JobTable numbers its jobs from 1; renumber them after the jobs
		// already written so that every job ID is unique in the file.
		last := ""
		for i := range batch {
			if batch[i].JID != last {
				last = batch[i].JID
				jobs++
			}
			batch[i].JID = p.Name + "-" + strconv.Itoa(jobs)
		}
		buf.Reset()
		if err := synth.JobsWriteCSV(&buf, batch); err != nil {
			return 0, 0, err
		}
		b := buf.Bytes()
		if written > 0 { // the header once
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		if _, err := w.Write(b); err != nil {
			return 0, 0, err
		}
		written += len(batch)
	}
	if err := w.Flush(); err != nil {
		return 0, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return jobs, st.Size(), f.Close()
}
