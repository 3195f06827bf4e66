package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		val  string
		want bool
	}{{"", false}, {"true", true}, {"1", true}, {"TRUE", true}, {"false", false}, {"0", false}, {"yes", false}} {
		t.Run("CI="+c.val, func(t *testing.T) {
			t.Setenv("CI", c.val)
			if got := Required(); got != c.want {
				t.Errorf("Required() = %v, want %v", got, c.want)
			}
		})
	}
}

// recorder stands in for a test: it records a Skip or a Fatal and stops
// the goroutine as testing.T does.
type recorder struct {
	testing.TB
	skipped, fatal string
	after          bool
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = strings.TrimSuffix(fmt.Sprintln(args...), "\n")
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func run(f func(tb testing.TB)) *recorder {
	r := new(recorder)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		r.after = true
	}()
	<-done
	return r
}

func TestSkip(t *testing.T) {
	const msg = "no frobnicator on this machine (want 3 of 3.5 )"
	for _, c := range []struct {
		ci                  string
		wantSkip, wantFatal string
	}{
		{"", msg, ""},
		{"false", msg, ""},
		{"true", "", "CI=true, and this test's requirement is missing: " + msg},
	} {
		t.Run("CI="+c.ci, func(t *testing.T) {
			t.Setenv("CI", c.ci)
			for name, f := range map[string]func(testing.TB){
				"Skip":  func(tb testing.TB) { Skip(tb, "no frobnicator on this machine (want", 3, "of", 3.5, ")") },
				"Skipf": func(tb testing.TB) { Skipf(tb, "no frobnicator on this machine (want %d of %g )", 3, 3.5) },
			} {
				r := run(f)
				if r.after || r.skipped != c.wantSkip || r.fatal != c.wantFatal {
					t.Errorf("%s: skipped %q, fatal %q, returned %v; want skipped %q, fatal %q, not returned",
						name, r.skipped, r.fatal, r.after, c.wantSkip, c.wantFatal)
				}
			}
		})
	}
}
