package experiment

import "strconv"

// Mode selects the published drivers' rules or corrected ones.
type Mode int

const (
	// Corrected uses one bound rule for matching and scoring, scores every
	// submission as its own job, never skips a job's submission because
	// another job submitted the same resource set, uses the README's compiler
	// rule and consumes capacity when told to.
	Corrected Mode = iota
	// Published reproduces the published drivers, bugs included: version
	// ranges matched inclusively but scored with strict bounds; the
	// single-subsystem loop scored every submission as one job (the last the
	// driver iterated) and kept only the last subsystem's match counts; a
	// resource set already submitted by an earlier job was skipped, so that
	// job's unmatched_at moves to its next subsystem; the build compiler rule
	// failed builds whose compiler is older than the cluster's; and the
	// "without replacement" level sent the old nodes_free, so capacity was
	// never consumed.
	Published
)

func (m Mode) String() string {
	switch m {
	case Corrected:
		return "corrected"
	case Published:
		return "published"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

func strconvFormat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
