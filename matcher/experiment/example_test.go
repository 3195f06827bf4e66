package experiment_test

import (
	"context"
	"fmt"

	"github.com/crosscluster/crosscluster/matcher"
	"github.com/crosscluster/crosscluster/matcher/experiment"
)

func ExampleRunVersions() {
	w := &experiment.VersionWorld{
		Clusters: []experiment.VersionCluster{
			{Name: "c1", Versions: map[string]string{"m4": "1.4.19", "zlib": "1.2.11"}},
			{Name: "c2", Versions: map[string]string{"m4": "1.4.18", "zlib": "1.2.13"}},
		},
		Jobs: []experiment.VersionJob{
			{Name: "j1", Package: "xz", Ranges: []matcher.Requirement{{Subsystem: "m4", Field: "version", Op: matcher.InRange, Min: "1.4.19", Max: "1.4.20"}, {Subsystem: "zlib", Field: "version", Op: matcher.InRange, Min: "1.2.0", Max: "1.3.0"}}},
			{Name: "j2", Package: "xz", Ranges: []matcher.Requirement{{Subsystem: "m4", Field: "version", Op: matcher.InRange, Min: "1.4.0", Max: "1.4.18"}, {Subsystem: "zlib", Field: "version", Op: matcher.InRange, Min: "1.2.12", Max: "1.3.0"}}},
		},
	}
	rep, err := experiment.RunVersions(context.Background(), w, experiment.VersionConfig{Order: []string{"m4", "zlib"}, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range rep.Levels {
		e := l.Expected
		fmt.Printf("%-20s jobs %d  build success %.2f ± %.2f  matched clusters %.1f\n",
			l.Name, e.Jobs, e.BuildSuccess.Mean, e.BuildSuccess.SE, e.MatchedClusters.Mean)
	}
	// Output:
	// none                 jobs 2  build success 0.50 ± 0.35  matched clusters 2.0
	// single-subsystem     jobs 4  build success 0.88 ± 0.12  matched clusters 1.2
	// expanded-subsystems  jobs 4  build success 1.00 ± 0.00  matched clusters 1.0
}
