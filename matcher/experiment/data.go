package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/crosscluster/crosscluster/internal/walk"
	"github.com/crosscluster/crosscluster/matcher"
	"go.yaml.in/yaml/v3"
)

// VersionCluster is a cluster of the version-range (reliabuild) experiment:
// one exact version per dependency subsystem.
type VersionCluster struct {
	Name     string
	Versions map[string]string // subsystem -> version
}

// VersionJob is a spack build jobspec of the version-range experiment.
type VersionJob struct {
	Name    string
	Package string
	// Ranges are the job's acceptable version ranges, one InRange
	// requirement on the "version" field per dependency, sorted by
	// Subsystem.
	Ranges []matcher.Requirement
	// File is the jobspec file the job was read from, as LoadVersionWorld
	// named it ("" for a job built in memory).
	File string
}

// VersionWorld is the version-range experiment's data.
type VersionWorld struct {
	Clusters []VersionCluster // sorted by name
	Jobs     []VersionJob     // in load order
}

// BuildCluster is a cluster of the spack-build experiment.
type BuildCluster struct {
	Name            string
	Memory          float64 // bytes per node
	CostPerNodeHour float64
	Arch            string
	Compiler        string
	CompilerVersion string
}

// BuildWorld is the spack-build experiment's data.
type BuildWorld struct {
	Clusters []BuildCluster     // sorted by name
	Jobs     []matcher.BuildJob // in load order
}

// samples returns the (package, mean memory, duration) of every job, the
// training data of the published runtime models.
func (w *BuildWorld) samples() []sample {
	s := make([]sample, len(w.Jobs))
	for i, j := range w.Jobs {
		s[i] = sample{Package: j.Package, Memory: j.MemMean, Duration: j.Duration}
	}
	return s
}

// readVersionClusters reads the version experiment's cluster-features.json:
// {"<cluster>": {"<subsystem>": "<version>", ...}, ...}. Clusters come back
// sorted by name.
func readVersionClusters(r io.Reader, file string) ([]VersionCluster, error) {
	return readFeatures(r, file, func(w walk.JSON, name string, m map[string]any) (VersionCluster, error) {
		c := VersionCluster{Name: name, Versions: make(map[string]string, len(m))}
		for sub, val := range m {
			var err error
			if c.Versions[sub], err = w.Str(val, name+"."+sub); err != nil {
				return c, err
			}
		}
		return c, nil
	})
}

// readFeatures reads a cluster-features.json, an object of clusters each
// an object, and returns one cluster per key, sorted by name.
func readFeatures[C any](r io.Reader, file string, cluster func(w walk.JSON, name string, m map[string]any) (C, error)) ([]C, error) {
	w := walk.NewJSON(file, parseError)
	top, err := w.DecodeObject(r)
	if err != nil {
		return nil, err
	}
	out := make([]C, 0, len(top))
	for _, name := range slices.Sorted(maps.Keys(top)) {
		m, err := w.Obj(top[name], name)
		if err != nil {
			return nil, err
		}
		c, err := cluster(w, name, m)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// WriteVersionClusters writes clusters in the format ReadVersionClusters reads.
func WriteVersionClusters(w io.Writer, clusters []VersionCluster) error {
	m := make(map[string]map[string]string, len(clusters))
	for _, c := range clusters {
		m[c.Name] = c.Versions
	}
	return writeJSON(w, m)
}

// readBuildClusters reads the spack-build experiment's cluster-features.json:
// {"<cluster>": {"memory", "cost_per_node_hour", "arch", "compiler",
// "compiler_version"}, ...}. Clusters come back sorted by name.
func readBuildClusters(r io.Reader, file string) ([]BuildCluster, error) {
	return readFeatures(r, file, func(w walk.JSON, name string, m map[string]any) (BuildCluster, error) {
		c := BuildCluster{Name: name}
		var err error
		if c.Memory, err = w.Num(m["memory"], name+".memory"); err != nil {
			return c, err
		}
		if c.CostPerNodeHour, err = w.Num(m["cost_per_node_hour"], name+".cost_per_node_hour"); err != nil {
			return c, err
		}
		if c.Arch, err = w.Str(m["arch"], name+".arch"); err != nil {
			return c, err
		}
		if c.Compiler, err = w.Str(m["compiler"], name+".compiler"); err != nil {
			return c, err
		}
		if c.CompilerVersion, err = w.Str(m["compiler_version"], name+".compiler_version"); err != nil {
			return c, err
		}
		return c, nil
	})
}

// WriteBuildClusters writes clusters in the format ReadBuildClusters reads.
func WriteBuildClusters(w io.Writer, clusters []BuildCluster) error {
	m := make(map[string]map[string]any, len(clusters))
	for _, c := range clusters {
		m[c.Name] = map[string]any{"memory": c.Memory, "cost_per_node_hour": c.CostPerNodeHour,
			"arch": c.Arch, "compiler": c.Compiler, "compiler_version": c.CompilerVersion}
	}
	return writeJSON(w, m)
}

// readVersionJobs reads a YAML list of version-experiment jobspecs:
// - {name, package, package_version, resources: {<dep>: {min, max}}}
// YAML anchors and aliases resolve. Ranges come back sorted by subsystem.
func readVersionJobs(r io.Reader, file string) ([]VersionJob, error) {
	w := walk.NewYAML(file, parseError)
	b, err := walk.ReadAll(r, file, parseError)
	if err != nil {
		return nil, err
	}
	items, err := w.List(b)
	if err != nil {
		return nil, err
	}
	out := make([]VersionJob, 0, len(items))
	for i, it := range items {
		p := walk.Idx("", i)
		m, err := w.Mapping(it, p)
		if err != nil {
			return nil, err
		}
		j := VersionJob{File: file}
		if j.Name, err = w.Field(m, it, p, "name"); err != nil {
			return nil, err
		}
		if j.Package, err = w.Field(m, it, p, "package"); err != nil {
			return nil, err
		}
		if n := walk.Get(m, "package_version"); n != nil {
			if _, err = w.Scalar(n, walk.Dot(p, "package_version")); err != nil {
				return nil, err
			}
		}
		if rn := walk.Deref(walk.Get(m, "resources")); rn != nil && !(rn.Kind == yaml.ScalarNode && rn.Tag == "!!null") {
			rp := walk.Dot(p, "resources")
			deps, err := w.Mapping(rn, rp)
			if err != nil {
				return nil, err
			}
			for _, d := range deps {
				dp := walk.Dot(rp, d[0].Value)
				dm, err := w.Mapping(d[1], dp)
				if err != nil {
					return nil, err
				}
				dr := matcher.Requirement{Subsystem: d[0].Value, Field: "version", Op: matcher.InRange}
				if dr.Min, err = w.Field(dm, d[1], dp, "min"); err != nil {
					return nil, err
				}
				if dr.Max, err = w.Field(dm, d[1], dp, "max"); err != nil {
					return nil, err
				}
				j.Ranges = append(j.Ranges, dr)
			}
			slices.SortFunc(j.Ranges, func(a, b matcher.Requirement) int { return strings.Compare(a.Subsystem, b.Subsystem) })
			for k := 1; k < len(j.Ranges); k++ {
				if j.Ranges[k].Subsystem == j.Ranges[k-1].Subsystem {
					return nil, w.Err(rn, rp, matcher.ErrSchema, "duplicate dependency %q", j.Ranges[k].Subsystem)
				}
			}
		}
		out = append(out, j)
	}
	return out, nil
}

// LoadVersionWorld loads the layout of rainbow-experiments'
// simulation-reliabuild data: dir/cluster-features.json and
// dir/jobspecs/*.yaml (files in JobFiles order, parsed concurrently).
func LoadVersionWorld(ctx context.Context, dir string) (*VersionWorld, error) {
	cs, err := loadFile(filepath.Join(dir, "cluster-features.json"), readVersionClusters)
	if err != nil {
		return nil, err
	}
	files, err := jobFiles(filepath.Join(dir, "jobspecs"))
	if err != nil {
		return nil, err
	}
	jobs, err := readVersionJobFiles(ctx, files)
	if err != nil {
		return nil, err
	}
	return &VersionWorld{Clusters: cs, Jobs: jobs}, nil
}

// LoadBuildWorld loads the layout of rainbow-experiments'
// simulation-spack-build data: dir/cluster-features.json and
// dir/jobspecs/*.yaml, as LoadVersionWorld does.
func LoadBuildWorld(ctx context.Context, dir string) (*BuildWorld, error) {
	cs, err := loadFile(filepath.Join(dir, "cluster-features.json"), readBuildClusters)
	if err != nil {
		return nil, err
	}
	files, err := jobFiles(filepath.Join(dir, "jobspecs"))
	if err != nil {
		return nil, err
	}
	jobs, err := readBuildJobFiles(ctx, files)
	if err != nil {
		return nil, err
	}
	return &BuildWorld{Clusters: cs, Jobs: jobs}, nil
}

// readVersionJobFiles reads the files with ReadVersionJobs concurrently
// (at most GOMAXPROCS at a time) and concatenates the jobs in file order.
func readVersionJobFiles(ctx context.Context, files []string) ([]VersionJob, error) {
	return readFiles(ctx, files, readVersionJobs)
}

// readBuildJobFiles is ReadVersionJobFiles for spack-build jobspecs.
func readBuildJobFiles(ctx context.Context, files []string) ([]matcher.BuildJob, error) {
	return readFiles(ctx, files, matcher.ReadBuildJobs)
}

// jobFiles lists dir/*.yaml in the numeric order of the last number in
// each name (jobspecs-2.yaml before jobspecs-10.yaml). An empty directory
// is an error.
func jobFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("matcher: no *.yaml jobspec files in %s", dir)
	}
	slices.SortFunc(files, func(a, b string) int {
		na, nb := fileNumber(a), fileNumber(b)
		if na != nb {
			return na - nb
		}
		return strings.Compare(a, b)
	})
	return files, nil
}

func loadFile[T any](path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}

func readFiles[T any](ctx context.Context, files []string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	parts := make([][]T, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			parts[i], errs[i] = loadFile(f, read)
		}()
	}
	wg.Wait()
	var out []T
	for i := range files {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, parts[i]...)
	}
	return out, nil
}

// fileNumber is the last run of digits in a file's base name, or -1.
func fileNumber(path string) int {
	base := filepath.Base(path)
	end := -1
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] >= '0' && base[i] <= '9' {
			if end < 0 {
				end = i + 1
			}
		} else if end >= 0 {
			n, _ := strconv.Atoi(base[i+1 : end])
			return n
		}
	}
	if end >= 0 {
		n, _ := strconv.Atoi(base[:end])
		return n
	}
	return -1
}

// parseError is the walk.ErrorFunc of this package's readers: their
// errors are *matcher.ParseError values, as the model's readers give.
func parseError(file, path string, line int, err error) error {
	return &matcher.ParseError{File: file, Path: path, Line: line, Err: err}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
