//go:build tools

// Package deps pins the module's third-party dependencies while the
// packages that use them are being written. It is never built.
package deps

import (
	_ "github.com/Masterminds/semver/v3"
	_ "github.com/expr-lang/expr"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/parquet-go/parquet-go"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
	_ "gopkg.in/yaml.v3"
	_ "gorgonia.org/gorgonia"
	_ "gorgonia.org/tensor"
	_ "modernc.org/sqlite"
)
