package matcher

import (
	"io"

	"github.com/crosscluster/crosscluster/internal/walk"
	"go.yaml.in/yaml/v3"
)

// BuildJob is a successful spack build turned into a jobspec.
type BuildJob struct {
	Name                            string
	Package                         string
	Arch, Compiler, CompilerVersion string
	MemMin, MemMean, MemMax         float64 // bytes
	Duration                        float64 // seconds
	// MemoryBestRuntime is the published memory_global_best_runtime, the
	// mean memory of the package's fastest build.
	MemoryBestRuntime float64
	// MemoryTopTenth is the published memory_of_top_ten_percent_runtime.
	MemoryTopTenth float64
}

// list reads r whole and returns the items of its top-level sequence.
func list(w walk.YAML, r io.Reader, file string) ([]*yaml.Node, error) {
	b, err := walk.ReadAll(r, file, parseError)
	if err != nil {
		return nil, err
	}
	return w.List(b)
}

// ReadBuildJobs reads a YAML list of spack-build jobspecs:
// - {name, package, attributes: {duration, memory_global_best_runtime,
// memory_of_top_ten_percent_runtime}, resources: {arch: {arch}, compiler:
// {compiler_name, compiler_version}, memory: {mem_max, mem_mean, mem_min}}}
func ReadBuildJobs(r io.Reader, file string) ([]BuildJob, error) {
	w := walk.NewYAML(file, parseError)
	items, err := list(w, r, file)
	if err != nil {
		return nil, err
	}
	out := make([]BuildJob, 0, len(items))
	for i, it := range items {
		p := walk.Idx("", i)
		m, err := w.Mapping(it, p)
		if err != nil {
			return nil, err
		}
		var j BuildJob
		if j.Name, err = w.Field(m, it, p, "name"); err != nil {
			return nil, err
		}
		if j.Package, err = w.Field(m, it, p, "package"); err != nil {
			return nil, err
		}
		sub := func(key string) ([][2]*yaml.Node, string, error) {
			n := walk.Get(m, key)
			if n == nil {
				return nil, "", w.Err(it, p, ErrSchema, "missing %q", key)
			}
			mm, err := w.Mapping(n, walk.Dot(p, key))
			return mm, walk.Dot(p, key), err
		}
		attrs, ap, err := sub("attributes")
		if err != nil {
			return nil, err
		}
		res, rp, err := sub("resources")
		if err != nil {
			return nil, err
		}
		nums := []struct {
			m    [][2]*yaml.Node
			path string
			key  string
			dst  *float64
		}{
			{attrs, ap, "duration", &j.Duration},
			{attrs, ap, "memory_global_best_runtime", &j.MemoryBestRuntime},
			{attrs, ap, "memory_of_top_ten_percent_runtime", &j.MemoryTopTenth},
		}
		for _, f := range nums {
			n := walk.Get(f.m, f.key)
			if n == nil {
				return nil, w.Err(it, f.path, ErrSchema, "missing %q", f.key)
			}
			if *f.dst, err = w.Number(n, walk.Dot(f.path, f.key)); err != nil {
				return nil, err
			}
		}
		group := func(name string) ([][2]*yaml.Node, string, error) {
			n := walk.Get(res, name)
			if n == nil {
				return nil, "", w.Err(it, rp, ErrSchema, "missing %q", name)
			}
			gm, err := w.Mapping(n, walk.Dot(rp, name))
			return gm, walk.Dot(rp, name), err
		}
		am, amp, err := group("arch")
		if err != nil {
			return nil, err
		}
		if j.Arch, err = w.Field(am, it, amp, "arch"); err != nil {
			return nil, err
		}
		cm, cmp, err := group("compiler")
		if err != nil {
			return nil, err
		}
		if j.Compiler, err = w.Field(cm, it, cmp, "compiler_name"); err != nil {
			return nil, err
		}
		if j.CompilerVersion, err = w.Field(cm, it, cmp, "compiler_version"); err != nil {
			return nil, err
		}
		mm, mmp, err := group("memory")
		if err != nil {
			return nil, err
		}
		for _, f := range []struct {
			key string
			dst *float64
		}{{"mem_min", &j.MemMin}, {"mem_mean", &j.MemMean}, {"mem_max", &j.MemMax}} {
			n := walk.Get(mm, f.key)
			if n == nil {
				return nil, w.Err(it, mmp, ErrSchema, "missing %q", f.key)
			}
			if *f.dst, err = w.Number(n, walk.Dot(mmp, f.key)); err != nil {
				return nil, err
			}
		}
		out = append(out, j)
	}
	return out, nil
}
