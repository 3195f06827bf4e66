// Command tables writes two FRESCO-style telemetry CSVs of n jobs each
// (every column the synthetic profiles write, one row per job, host and
// telemetry sample: an Anvil-like source and a Conte-like target from
// internal/synth, seeded), for measuring examples/overlap's memory on
// tables of real size (issue 13's target: below 300 MB at 10^6 rows):
//
//	go run ./bench/tables -gen /tmp/tables -n 100000
//	go build -o /tmp/ov ./examples/overlap && /usr/bin/time -v /tmp/ov \
//	    -source /tmp/tables/source.csv -target /tmp/tables/target.csv -out /tmp/ovt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/crosscluster/crosscluster/internal/synth"
)

func main() {
	dir := flag.String("gen", "", "directory to write source.csv and target.csv into (e.g. -gen /tmp/tables)")
	n := flag.Int("n", 100000, "jobs per table; each has several telemetry rows (e.g. -n 20000)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "tables: -gen DIR is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "tables:", err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewPCG(20261124, 1))
	for _, c := range []struct {
		name string
		p    synth.ClusterProfile
	}{{"source.csv", synth.AnvilLike()}, {"target.csv", synth.ConteLike()}} {
		path := filepath.Join(*dir, c.name)
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tables:", err)
			os.Exit(1)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if err := synth.JobsWriteCSV(w, synth.JobTable(c.p, *n, rng)); err != nil {
			fmt.Fprintln(os.Stderr, "tables:", err)
			os.Exit(1)
		}
		if err := w.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "tables:", err)
			os.Exit(1)
		}
		f.Close()
		st, _ := os.Stat(path)
		fmt.Printf("%s: %d jobs, %.1f MB\n", path, *n, float64(st.Size())/1e6)
	}
}
