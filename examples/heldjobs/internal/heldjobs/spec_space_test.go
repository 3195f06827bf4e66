package heldjobs

import (
	"fmt"
	"strings"
	"testing"
)

// condSpec searches the cell: LSTMs with one or two layers, GRUs with one;
// three hidden sizes from a step range and two rates from a log range.
const condSpec = `
name: cond
data: {synthetic: {jobs: 1500, seed: 3}, seed: 3}
space:
  model: [lstm, gru]
  shape: [3x6x60s]
  hidden: {range: [4, 8], step: 2}
  layers:
    - {values: [1, 2], when: {model: lstm}}
    - {values: [1], when: {model: gru}}
  lr: {range: [1e-3, 1e-2], count: 2, log: true}
  batch: [32]
epochs: 3
`

// TestSpaceExpand: ranges, a searched cell and a conditional parameter
// expand to the points worked out by hand: 2 layers × 3 hidden × 2 rates
// for the LSTM and 1 × 3 × 2 for the GRU, in the order model, shape,
// hidden, layers, lr, batch (last fastest).
func TestSpaceExpand(t *testing.T) {
	s := loadSpec(t, condSpec)
	_, pts, err := s.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range []string{"lstm", "gru"} {
		for _, h := range []string{"4", "6", "8"} {
			layers := []string{"1", "2"}
			if m == "gru" {
				layers = layers[:1]
			}
			for _, l := range layers {
				for _, lr := range []string{"0.001", "0.01"} {
					want = append(want, "base-m"+m+"-s3x6x60s-h"+h+"-l"+l+"-lr"+lr+"-b32")
				}
			}
		}
	}
	var got []string
	for _, p := range pts {
		got = append(got, p.Slug)
		pt, err := PointOf(p.Params)
		if err != nil {
			t.Fatal(err)
		}
		if pt.LearningRate != 0.001 && pt.LearningRate != 0.01 {
			t.Errorf("%s: rate %v, want exactly 0.001 or 0.01", p.Slug, pt.LearningRate)
		}
		if rc, err := runConfigOf(p.Params); err != nil || rc.Cell.String() != p.Params[ParamModel].Lit {
			t.Errorf("%s: cell %v, %v", p.Slug, rc.Cell, err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points\n%v\nwant\n%v", got, want)
	}
	if n := s.Space.Size(); n != 18 {
		t.Errorf("Size %d, want 18", n)
	}
	// Parse builds the one shape, written under a list.
	if sh := s.Space.shapes(); len(sh) != 1 || sh[0].String() != "3x6x60s" {
		t.Errorf("shapes %v", sh)
	}
}

// TestSpaceRangeIsList: a range is a list written short: the same runs,
// ids and slugs as the list it expands to, so adding a range to a search
// trains only the new points.
func TestSpaceRangeIsList(t *testing.T) {
	_, want, err := loadSpec(t, smallSpec).Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, alt := range []string{
		"hidden: {range: [4, 8], step: 4}",
		"hidden: {range: [4, 8], count: 2}",
		"hidden: {values: [4, 8]}",
	} {
		_, got, err := loadSpec(t, strings.Replace(smallSpec, "hidden: [4, 8]", alt, 1)).Sweep("x")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v\nwant %v", alt, got, want)
		}
	}
	for _, tc := range []struct {
		lo, hi, step float64
		count        int
		log, integer bool
		want         string
	}{
		{0.1, 0.5, 0.1, 0, false, false, "[0.1 0.2 0.3 0.4 0.5]"},
		{1e-4, 1e-1, 0, 4, true, false, "[0.0001 0.001 0.01 0.1]"},
		{16, 64, 16, 0, false, true, "[16 32 48 64]"},
		{10, 20, 0, 4, false, true, "[10 13 17 20]"},
		{8, 64, 0, 4, true, true, "[8 16 32 64]"},
		{3, 3, 0, 1, false, true, "[3]"},
	} {
		xs, err := expandRange(tc.lo, tc.hi, tc.step, tc.count, tc.log, tc.integer)
		if err != nil || fmt.Sprint(xs) != tc.want {
			t.Errorf("range [%v, %v] step %v count %d log %v: %v %v, want %s", tc.lo, tc.hi, tc.step, tc.count, tc.log, xs, err, tc.want)
		}
	}
}

// TestSpaceLogUniform: a log-uniform learning rate with random: N draws N
// points (the other parameters drawn from their lists), every rate in
// [lo, hi), the same for the same seed, and uniform in the logarithm:
// about half the rates of 1e-4..1e-2 fall below 1e-3 (a uniform draw would
// put 9% there).
func TestSpaceLogUniform(t *testing.T) {
	spec := strings.Replace(smallSpec, "lr: [3e-3]", "lr: {log_uniform: [1e-4, 1e-2]}", 1) + "random: 2000\n"
	s := loadSpec(t, spec)
	_, pts, err := s.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	_, again, _ := s.Sweep("x")
	if fmt.Sprint(pts) != fmt.Sprint(again) {
		t.Error("same seed, other draws")
	}
	if len(pts) != 2000 {
		t.Fatalf("%d points, want 2000 (no two draws of a continuous rate repeat)", len(pts))
	}
	below, hidden := 0, map[int]int{}
	for _, p := range pts {
		pt, err := PointOf(p.Params)
		if err != nil {
			t.Fatal(err)
		}
		if !(pt.LearningRate >= 1e-4 && pt.LearningRate < 1e-2) {
			t.Errorf("%s: rate %v outside [1e-4, 1e-2)", p.Slug, pt.LearningRate)
		}
		if pt.LearningRate < 1e-3 {
			below++
		}
		hidden[pt.Hidden]++
	}
	// Binomial(2000, 0.5): sd 22; 0.09 would give 180.
	if below < 900 || below > 1100 {
		t.Errorf("%d of 2000 rates below 1e-3, want about 1000", below)
	}
	if hidden[4] < 900 || hidden[8] < 900 || len(hidden) != 2 {
		t.Errorf("hidden drawn %v, want about 1000 each of 4 and 8", hidden)
	}
	// int_uniform draws integers within the bounds.
	s = loadSpec(t, strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: {int_uniform: [4, 6]}", 1)+"random: 50\n")
	_, pts, err = s.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, p := range pts {
		seen[p.Params[ParamHidden].Int()] = true
	}
	if len(pts) != 6 || len(seen) != 3 || !seen[4] || !seen[5] || !seen[6] {
		t.Errorf("int_uniform [4, 6] × two shapes: %d distinct points, hidden %v; want 6 and {4, 5, 6}", len(pts), seen)
	}
}

// TestSpaceErrors: a bad definition is a *SpecError naming its key.
func TestSpaceErrors(t *testing.T) {
	cond := func(old, new string) string { return strings.Replace(condSpec, old, new, 1) }
	small := func(old, new string) string { return strings.Replace(smallSpec, old, new, 1) }
	for _, tc := range []struct {
		name, text, key, msg string
	}{
		{"uncovered point", cond("    - {values: [1], when: {model: gru}}\n", ""), "space.layers", "has no layers"},
		{"condition after", small("hidden: [4, 8]", "hidden: {values: [4], when: {batch: 32}}"), "space.hidden", "only a parameter before hidden"},
		{"overlapping conditions", cond("when: {model: gru}", "when: {model: [gru, lstm]}"), "space", "also set by"},
		{"condition on a value not taken", cond("model: [lstm, gru]", "model: [lstm]"), "space", `"gru" is not a value model can take`},
		{"unknown condition key", cond("when: {model: gru}", "when: {modle: gru}"), "space.layers[1].when.modle", `did you mean "model"`},
		{"bad condition value", cond("when: {model: gru}", "when: {model: rnn}"), "space.layers[1].when.model", "want lstm or gru"},
		{"two forms", small("hidden: [4, 8]", "hidden: {values: [4], range: [1, 2]}"), "space.hidden", "want one of values, range"},
		{"fractional step on an integer", small("hidden: [4, 8]", "hidden: {range: [4, 16], step: 0.5}"), "space.hidden.range", "hidden takes integers"},
		{"step and count", small("hidden: [4, 8]", "hidden: {range: [4, 8], step: 2, count: 3}"), "space.hidden.range", "step or count"},
		{"log step", small("hidden: [4, 8]", "hidden: {range: [4, 8], step: 2, log: true}"), "space.hidden.range", "linear"},
		{"step without range", small("hidden: [4, 8]", "hidden: {values: [4], step: 2}"), "space.hidden.step", "goes with range"},
		{"reversed range", small("lr: [3e-3]", "lr: {range: [1e-2, 1e-3], count: 3}"), "space.lr.range", "lo ≤ hi"},
		{"range repeats", small("hidden: [4, 8]", "hidden: {range: [4, 5], count: 4}"), "space.hidden[1]", "4 repeats space.hidden[0]"},
		{"range out of bounds", small("hidden: [4, 8]", "hidden: {range: [0, 8], step: 4}"), "space.hidden", "want an integer from 1 to 4096"},
		{"shape range", small("shape: [3x6x60s, 2x4x120s]", "shape: {range: [1, 2], step: 1}"), "space.shape.range", "not a range"},
		{"uniform hidden", small("hidden: [4, 8]", "hidden: {uniform: [4, 8]}"), "space.hidden", "learning rate"},
		{"int_uniform lr", small("lr: [3e-3]", "lr: {int_uniform: [1, 2]}"), "space.lr", "integer parameter"},
		{"log_uniform from 0", small("lr: [3e-3]", "lr: {log_uniform: [0, 1e-2]}"), "space.lr", "0 < lo < hi"},
		{"draws without random", small("lr: [3e-3]", "lr: {log_uniform: [1e-4, 1e-2]}"), "random", "needs random: N"},
		{"model twice", condSpec + "model: gru\n", "space.model", "give one"},
		{"bad model", cond("model: [lstm, gru]", "model: [lstm, rnn]"), "space.model[1]", "want lstm or gru"},
		{"list and condition", cond("    - {values: [1], when: {model: gru}}", "    - {values: [1]}"), "space.layers", "has a list and a conditional definition"},
		{"unknown parameter", cond("  batch: [32]", "  batch: [32]\n  dropout: [0.1]"), "space.dropout", "unknown key"},
		{"bad prune rule", smallSpec + "prune: {rule: hyperband}\n", "prune.rule", `"hyperband": want asha or median`},
		{"prune without rule", smallSpec + "prune: {eta: 3}\n", "prune.rule", "missing"},
		{"prune eta 1", smallSpec + "prune: {rule: asha, eta: 1}\n", "prune.eta", "at least 2"},
		{"prune median key on asha", smallSpec + "prune: {rule: asha, warmup: 2}\n", "prune", "median rule's"},
		{"prune zero startup", smallSpec + "prune: {rule: median, startup: 0}\n", "prune.startup", "0: want at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantSpecError(t, tc.text, tc.key, tc.msg) })
	}
	// Size of an invalid extended space is 0, and of a drawn one 0.
	if n := (Space{Axes: loadSpec(t, condSpec).Space.Axes}).Size(); n != 0 {
		t.Errorf("Size of a space without lists = %d, want 0", n)
	}
}
