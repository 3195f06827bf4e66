package overlap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/regime"
	"github.com/crosscluster/crosscluster/stats"
)

// frescoDir holds the Stampede Feb→Mar 2018 accounting fixture; its
// SOURCES.md records the reference outputs reproduced below.
const frescoDir = "../../shared/testdata/fresco"

const (
	// aucExactTol: the reference "exact optimum" AUC comes from a Newton
	// fit like ours; AUC is a rank statistic, so only a reordering of two
	// propensities closer than the solvers' difference (~1e-12) could move
	// it, by 1/(2326·820) ≈ 5e-7 per pair.
	aucExactTol = 1e-9
	// aucSklearnTol: SOURCES.md says to compare with scikit-learn's lbfgs
	// AUC at about 1e-3, because lbfgs stops early.
	aucSklearnTol = 1e-3
	// ksStatTol: D is h/lcm(n1, n2) computed from integer counts.
	ksStatTol = 1e-12
	// ksPTol: relative tolerance of the exact p-values against SciPy's
	// printed repr (17 significant digits); both sum the same series.
	ksPTol = 1e-9
)

// stampedeXY builds the six job features of SOURCES.md with Feb as source
// (y = 0) and Mar as target (y = 1).
func stampedeXY(t testing.TB) (*mat.Dense, []int, []string) {
	t.Helper()
	feb, mar := stampedeMonths(t)
	names := regime.SafeFeatures(regime.JobFeatures(), feb, mar)
	x, err := regime.Matrix(append(append([]regime.Job(nil), feb...), mar...), names)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]int, len(feb)+len(mar))
	for i := len(feb); i < len(y); i++ {
		y[i] = Target
	}
	return x, y, names
}

func TestStampedeReference(t *testing.T) {
	x, y, names := stampedeXY(t)
	if d := cmp.Diff(regime.JobFeatures(), names); d != "" {
		t.Fatalf("safe features (-want +got):\n%s", d)
	}
	// Reference table of ../shared/testdata/fresco/SOURCES.md (numpy 1.24.2,
	// scipy 1.10.1, scikit-learn 1.2.1, Debian bookworm).
	cases := []struct {
		name               string
		cw                 stats.ClassWeight
		aucSklearn, aucOpt float64
		band               Band
		tgtIn, srcIn       int
		nTarget, nSource   int
	}{
		{"none/[0.2,0.8]", stats.ClassWeightNone, 0.5773624771931296, 0.5773640500807415, Band{0.2, 0.8}, 809, 2098, 820, 2326},
		{"none/[0.1,0.9]", stats.ClassWeightNone, 0.5773624771931296, 0.5773640500807415, Band{0.1, 0.9}, 813, 2179, 820, 2326},
		{"balanced/[0.2,0.8]", stats.ClassWeightBalanced, 0.5757969297233816, 0.5755929786297003, Band{0.2, 0.8}, 818, 2201, 820, 2326},
		{"balanced/[0.1,0.9]", stats.ClassWeightBalanced, 0.5757969297233816, 0.5755929786297003, Band{0.1, 0.9}, 818, 2207, 820, 2326},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Fit(x, y, c.band, WithFeatureNames(names...), WithClassWeight(c.cw))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.aucOpt, res.AUC, cmpopts.EquateApprox(0, aucExactTol)); d != "" {
				t.Errorf("AUC vs exact optimum (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.aucSklearn, res.AUC, cmpopts.EquateApprox(0, aucSklearnTol)); d != "" {
				t.Errorf("AUC vs scikit-learn (-want +got):\n%s", d)
			}
			type counts struct{ TgtIn, SrcIn, NTarget, NSource int }
			want := counts{c.tgtIn, c.srcIn, c.nTarget, c.nSource}
			got := counts{res.NTargetInBand, res.NSourceInBand, res.NTarget, res.NSource}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("band counts (-want +got):\n%s", d)
			}
			t.Logf("AUC %.16g, target %d/%d, source %d/%d, %d Newton iterations", res.AUC, res.NTargetInBand, res.NTarget, res.NSourceInBand, res.NSource, res.Solver.Iterations)
			if !res.Solver.Converged {
				t.Errorf("solver did not converge: %+v", res.Solver)
			}
		})
	}

	t.Run("KS", func(t *testing.T) {
		res, err := Fit(x, y, Band{0.2, 0.8}, WithFeatureNames(names...))
		if err != nil {
			t.Fatal(err)
		}
		// scipy.stats.ks_2samp(feb, mar) (method auto, so exact), SOURCES.md.
		type ks struct {
			D, P   float64
			Method stats.KSMethod
		}
		want := map[string]ks{
			"ncores":           {0.11139504645261414, 5.18936655642438e-07, stats.KSExact},
			"nhosts":           {0.11010527861082565, 7.355651880421835e-07, stats.KSExact},
			"timelimit_sec":    {0.09437011094100622, 3.7343968134893974e-05, stats.KSExact},
			"runtime_sec":      {0.06679214814504121, 0.00845713618777884, stats.KSExact},
			"queue_time_sec":   {0.06281798544554663, 0.015854720759528654, stats.KSExact},
			"runtime_fraction": {0.08467063733406036, 0.0003107742853521599, stats.KSExact},
		}
		got := make(map[string]ks)
		for _, f := range res.KS {
			got[f.Name] = ks{f.All.Statistic, f.All.PValue, f.All.Method}
		}
		opt := cmp.Comparer(func(a, b ks) bool {
			return a.Method == b.Method && abs(a.D-b.D) <= ksStatTol && abs(a.P-b.P) <= ksPTol*abs(a.P)
		})
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("KS per feature (-want +got):\n%s", d)
		}
	})
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// stampedeMonths reads the February and March 2018 accounting months,
// skipping the test when the fixture is absent.
func stampedeMonths(t testing.TB) (feb, mar []regime.Job) {
	t.Helper()
	read := func(name string) []regime.Job {
		path := filepath.Join(frescoDir, name)
		f, err := os.Open(path)
		if err != nil {
			t.Skipf("Stampede fixture absent (%v); it lives in ../shared/testdata/fresco beside the checkout", err)
		}
		defer f.Close()
		jobs, err := regime.ReadStampede(f, path)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	return read("stampede_feb_2018_job_accounting.csv"), read("stampede_mar_2018_job_accounting.csv")
}
