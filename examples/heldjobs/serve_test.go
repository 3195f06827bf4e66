package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
)

// fakeCondor puts condor_release and condor_rm on PATH that append their
// name and arguments to the file it returns.
func fakeCondor(t *testing.T) string {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	for _, name := range []string{"condor_release", "condor_rm"} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + calls + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// TestServe follows a log while it is written, stops the service twice
// and starts it again on the same decisions log, and checks that every
// hold of the log was decided exactly once, with the decision
// lstm.DecideHolds makes on the whole log in one pass, and that each hold
// was acted on exactly once (a fake condor_release and condor_rm on PATH
// record their calls).
func TestServe(t *testing.T) {
	calls := fakeCondor(t)
	dir := t.TempDir()
	info := heldjobs.ModelInfo{J: 2, M: 5, FrameSeconds: 60, E: 46, Threshold: 0.5, Seed: 9}
	m := lstm.New(lstm.Architecture{Inputs: info.J * info.E, Hidden: 4, Layers: 1, NewestFirst: true}, rand.New(rand.NewPCG(1, 2)))
	modelDir := filepath.Join(dir, "model")
	if _, err := heldjobs.SaveModel(modelDir, m, info); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if _, err := synth.CondorGlobalLog(&text, synth.CondorLogConfig{Seed: 7, Jobs: 150, HoldRate: 0.4, Header: true}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "EventLog")
	o := serveOptions{model: modelDir, log: logPath, decisions: filepath.Join(dir, "decisions.jsonl"), act: true}

	// What one pass over the whole log decides.
	evs, err := eventlog.NewReader(bytes.NewReader(text.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]lstm.Decision{}
	holds := 0
	seq := func(yield func(eventlog.Event, error) bool) {
		for _, e := range evs {
			if e.Code == eventlog.Held {
				holds++
			}
			if !yield(e, nil) {
				return
			}
		}
	}
	if err := lstm.DecideHolds(t.Context(), m, info.Builder(), info.Threshold, logPath, seq, func(d lstm.Decision) error {
		want[holdID(d)] = d
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A threshold at the median probability, so that both commands run.
	var ps []float64
	for _, d := range want {
		ps = append(ps, d.P)
	}
	slices.Sort(ps)
	info.Threshold = ps[len(ps)/2]
	if _, err := heldjobs.SaveModel(modelDir, m, info); err != nil {
		t.Fatal(err)
	}
	for h, d := range want {
		d.Release = d.P >= info.Threshold
		want[h] = d
	}
	if holds < 20 || len(want) != holds {
		t.Fatalf("%d holds in the log, %d decided in one pass", holds, len(want))
	}

	// Write the log in pieces (cut anywhere, even inside an event) while
	// the service follows it; stop it after a third and after two thirds
	// of the log, then let the third run finish.
	data := text.Bytes()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := make(chan int, 100)
	go func() {
		const pieces = 24
		for i := 1; i <= pieces; i++ {
			lo, hi := (i-1)*len(data)/pieces, i*len(data)/pieces
			f.Write(data[lo:hi])
			written <- i
			time.Sleep(60 * time.Millisecond)
		}
		close(written)
	}()
	run := func(stopAt int) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		oo := o
		if stopAt == 0 {
			oo.stopAfter = 1500 * time.Millisecond
		}
		go func() { done <- serve(ctx, oo, io.Discard) }()
		if stopAt > 0 {
			for i := range written {
				if i >= stopAt {
					break
				}
			}
			time.Sleep(300 * time.Millisecond) // let it read past the cut
			cancel()
		}
		if err := <-done; err != nil && (stopAt == 0 || ctx.Err() == nil) {
			t.Fatalf("serve: %v", err)
		}
	}
	run(8)
	run(16)
	for range written { // the rest of the log is written
	}
	run(0)

	b, err := os.ReadFile(o.decisions)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	acted := map[string]int{}
	for line := range strings.Lines(string(b)) {
		var r decisionRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("decisions log line %q: %v", line, err)
		}
		switch r.Kind {
		case "decision":
			got[r.Hold]++
			d, ok := want[r.Hold]
			if !ok || r.P == nil || *r.P != d.P || r.Decision != map[bool]string{true: "release", false: "remove"}[d.Release] {
				t.Errorf("decision %+v, one pass gives %+v (found %v)", r, d, ok)
			}
		case "action":
			if r.State == "done" {
				acted[r.Hold]++
			}
		}
	}
	for h := range want {
		if got[h] != 1 || acted[h] != 1 {
			t.Errorf("hold %s: decided %d times, acted on %d times, want once each", h, got[h], acted[h])
		}
	}
	cb, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(cb), "\n"); n != len(want) {
		t.Errorf("%d condor commands ran for %d holds", n, len(want))
	}
	releases := 0
	for _, d := range want {
		if d.Release {
			releases++
		}
	}
	if n := strings.Count(string(cb), "condor_release "); n != releases {
		t.Errorf("%d condor_release calls for %d release decisions", n, releases)
	}
	t.Logf("%d holds, %d released, decided and acted on once each across three runs", len(want), releases)
}

// TestServeRecovers: a decisions log cut inside its last line (a crash
// mid-write) is truncated to its whole lines, and an action started but
// never recorded as done is not run again.
func TestServeRecovers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	lines := `{"hold":"a","kind":"decision","decision":"release"}` + "\n" +
		`{"hold":"a","kind":"action","command":["condor_release","1.0"],"state":"started"}` + "\n" +
		`{"hold":"b","kind":"deci`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := openDecisions(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.f.Close()
	if l.decided["a"] != "release" || !l.started["a"] || l.ended["a"] || len(l.decided) != 1 {
		t.Errorf("read %+v", l)
	}
	if err := l.append(decisionRecord{Hold: "b", Kind: "decision", Decision: "remove"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(b), "}\n") || strings.Contains(string(b), `"kind":"deci{`) || strings.Count(string(b), "\n") != 3 {
		t.Errorf("after recovery and one append:\n%s", b)
	}
}

// FuzzDecisionsLog: any decisions log is read or refused with an error,
// never a panic, and what is kept is whole lines.
func FuzzDecisionsLog(f *testing.F) {
	f.Add([]byte(`{"hold":"a","kind":"decision","decision":"release"}` + "\n"))
	f.Add([]byte(`{"hold":"a","kind":"action","state":"started"}` + "\n" + `{"ho`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "d.jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := openDecisions(path)
		if err != nil {
			return
		}
		defer l.f.Close()
		kept, _ := os.ReadFile(path)
		if len(kept) > 0 && kept[len(kept)-1] != '\n' {
			t.Errorf("kept %q, not whole lines", kept)
		}
	})
}
