// Package staterr defines the sentinel errors of package stats, so that
// the internal packages stats is built on (logit, rank) return errors that
// errors.Is matches against stats' own sentinels, as internal/oserror does
// for package os. The messages carry no package name: the exported
// function that returns the error adds its prefix once.
package staterr

import "errors"

var (
	// ErrEmpty: an input has fewer usable (non-NaN) values than needed.
	ErrEmpty = errors.New("too few values")
	// ErrOneClass: labels contain a single class where two are needed.
	ErrOneClass = errors.New("only one class present")
	// ErrNaN: a NaN or ±Inf where a finite number is required.
	ErrNaN = errors.New("non-finite value")
	// ErrWeight: a weight is negative, NaN or ±Inf.
	ErrWeight = errors.New("invalid weight")
)
