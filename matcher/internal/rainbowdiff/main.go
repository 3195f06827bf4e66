// Command rainbowdiff drives rainbow's own matching code (its memory graph
// backend and "match" algorithm, converged-computing/rainbow) case by case
// against matcher's Rules.Match, on generated worlds, rainbow's example
// files and the published experiments' samples, and reports agreement per
// category of construct.
//
//	git -C rainbow archive 075ee23 | tar -x -C /tmp/rainbow-075ee23
//	go run ./matcher/internal/rainbowdiff -rainbow /tmp/rainbow-075ee23
//
// It copies the rainbow tree to a temporary directory, adds the driver
// (driver.go.txt, which calls rainbow's Graph.Satisfies in-process as its
// gRPC server does) and builds it there; rainbow's dependencies resolve
// through the Go module proxy. Nothing of rainbow's is written inside this
// repository. Public data is read in place from $CROSSCLUSTER_TESTDATA or
// ../shared/testdata when present.
package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crosscluster/crosscluster/matcher"
)

//go:embed driver.go.txt
var driverSource []byte

func main() {
	src := flag.String("rainbow", "", "a checkout of converged-computing/rainbow (e.g. its tree at 075ee23)")
	seed := flag.Uint64("seed", 1, "seed of the generated worlds")
	n := flag.Int("n", 40, "generated variants per category")
	repeat := flag.Int("repeat", 5, "times rainbow decides each case, to see answers that change with Go's map order")
	show := flag.Int("show", 2, "disagreeing cases printed per category")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: rainbowdiff -rainbow DIR [-seed N] [-n N]")
		os.Exit(2)
	}
	if err := run(*src, *seed, *n, *repeat, *show); err != nil {
		fmt.Fprintln(os.Stderr, "rainbowdiff:", err)
		os.Exit(1)
	}
}

func run(src string, seed uint64, n, repeat, show int) error {
	bin, cleanup, err := buildDriver(src)
	if err != nil {
		return err
	}
	defer cleanup()
	cases, err := generate(seed, n)
	if err != nil {
		return err
	}
	answers, err := ask(bin, cases, repeat)
	if err != nil {
		return err
	}
	report(cases, answers, show)
	return nil
}

// buildDriver copies the rainbow tree to a temporary directory, adds the
// driver and builds it.
func buildDriver(src string) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "rainbowdiff-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	tree := filepath.Join(tmp, "rainbow")
	if err := os.CopyFS(tree, os.DirFS(src)); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying %s: %w", src, err)
	}
	if _, err := os.Stat(filepath.Join(tree, "plugins", "backends", "memory", "graph.go")); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s is not a rainbow checkout with the memory backend: %w", src, err)
	}
	dir := filepath.Join(tree, "cmd", "rainbowdiff-driver")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		cleanup()
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), driverSource, 0o644); err != nil {
		cleanup()
		return "", nil, err
	}
	bin := filepath.Join(tmp, "driver")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rainbowdiff-driver")
	cmd.Dir = tree
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building the driver in %s: %v\n%s", tree, err, out)
	}
	return bin, cleanup, nil
}

// A case is one jobspec asked of a set of clusters; every cluster is one
// comparison.
type clusterDoc struct {
	Name       string            `json:"name"`
	Nodes      string            `json:"nodes"`
	Subsystems map[string]string `json:"subsystems"`
}

type caseDoc struct {
	ID       string       `json:"id"`
	Category string       `json:"-"`
	Clusters []clusterDoc `json:"clusters"`
	Jobspec  string       `json:"jobspec"`
	Repeat   int          `json:"repeat"`
}

type answer struct {
	ID      string   `json:"id"`
	Matches []string `json:"matches"`
	Varies  bool     `json:"varies"`
	Error   string   `json:"error"`
	Panic   string   `json:"panic"`
}

func ask(bin string, cases []caseDoc, repeat int) (map[string]answer, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for i := range cases {
		cases[i].Repeat = repeat
		if err := enc.Encode(&cases[i]); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = nil // rainbow's progress output
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("driver: %w", err)
	}
	answers := map[string]answer{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("driver answer %q: %w", sc.Text(), err)
		}
		answers[a.ID] = a
	}
	return answers, sc.Err()
}

// ours answers a case with the given rules: the clusters whose
// Match verdict is Matched (no state is given, so capacity plays no part).
// A document our readers refuse says why; it matches nothing under the
// default rules, and what the reader returned with its error is matched
// under the Rainbow rules, as the readers document.
func ours(c caseDoc, rules matcher.Rules) (matched map[string]bool, refused string) {
	matched = map[string]bool{}
	job, err := matcher.ReadJobspec(strings.NewReader(c.Jobspec), c.ID+".yaml")
	if err != nil {
		refused = "jobspec: " + err.Error()
		if !rules.Rainbow {
			return matched, refused
		}
	}
	for _, cd := range c.Clusters {
		cl, err := matcher.ReadCluster(strings.NewReader(cd.Nodes), cd.Name)
		if err != nil {
			refused = "cluster: " + err.Error()
			if !rules.Rainbow {
				continue
			}
		}
		cl.Subsystems = map[string]*matcher.Subsystem{}
		for name, doc := range cd.Subsystems {
			s, err := matcher.ReadSubsystem(strings.NewReader(doc), name, name)
			if err != nil {
				refused = "subsystem: " + err.Error()
			}
			cl.Subsystems[name] = &s
		}
		if rules.Match(&job, &cl).Verdict == matcher.Matched {
			matched[cd.Name] = true
		}
	}
	return matched, refused
}

type tally struct {
	cases, comparisons, agree int
	agreeCompat               int
	panics, varies, errors    int
	refusedByUs               int
	shown                     int
}

func report(cases []caseDoc, answers map[string]answer, show int) {
	byCat := map[string]*tally{}
	var cats []string
	total := tally{}
	for _, c := range cases {
		t := byCat[c.Category]
		if t == nil {
			t = &tally{}
			byCat[c.Category] = t
			cats = append(cats, c.Category)
		}
		a, ok := answers[c.ID]
		t.cases++
		total.cases++
		switch {
		case !ok:
			t.errors++
			total.errors++
			continue
		case a.Panic != "":
			t.panics++
			total.panics++
			continue
		case a.Error != "":
			t.errors++
			total.errors++
			continue
		case a.Varies:
			t.varies++
			total.varies++
			continue
		}
		theirs := map[string]bool{}
		for _, m := range a.Matches {
			theirs[m] = true
		}
		mine, refused := ours(c, matcher.Rules{})
		compat, _ := ours(c, matcher.Rules{Rainbow: true})
		if refused != "" {
			t.refusedByUs++
			total.refusedByUs++
		}
		for _, cd := range c.Clusters {
			t.comparisons++
			total.comparisons++
			if theirs[cd.Name] == compat[cd.Name] {
				t.agreeCompat++
				total.agreeCompat++
			} else if t.shown < show {
				t.shown++
				fmt.Printf("--- %s %s, cluster %s: rainbow %v, rainbow mode %v %s\n%s\n", c.Category, c.ID, cd.Name, theirs[cd.Name], compat[cd.Name], refused, c.Jobspec)
			}
			if theirs[cd.Name] == mine[cd.Name] {
				t.agree++
				total.agree++
			}
		}
	}
	sort.Strings(cats)
	fmt.Println("| category | cases | rainbow panics | answer varies | rainbow error | deterministic comparisons | agree (default mode) | agree (Rainbow mode) |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range cats {
		t := byCat[k]
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %d |\n", k, t.cases, t.panics, t.varies, t.errors, t.comparisons, t.agree, t.agreeCompat)
	}
	fmt.Printf("| total | %d | %d | %d | %d | %d | %d | %d |\n", total.cases, total.panics, total.varies, total.errors, total.comparisons, total.agree, total.agreeCompat)
}
