//go:build !unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrUnsupported is wrapped by the errors of Local on systems that are not
// Unix: the launcher needs sh, setsid, process groups and signals. The
// scripts and parsers work everywhere, for launches on a Unix host.
var ErrUnsupported = errors.New("launch: local launches need a Unix system (sh, setsid, process groups)")

// Start returns an error wrapping ErrUnsupported.
func (l *Local) Start(ctx context.Context, spec Spec) (*Handle, error) {
	return nil, fmt.Errorf("%w: %s: %w", ErrLaunch, spec.Name, ErrUnsupported)
}

// Fence returns an error wrapping ErrUnsupported.
func (l *Local) Fence(name string) (*Handle, error) {
	return nil, fmt.Errorf("launch: fence %s: %w", name, ErrUnsupported)
}

// Attach returns a handle whose Poll reports Vanished.
func (l *Local) Attach(name string) *Handle {
	return &Handle{Name: name, Paths: PathsFor(l.StateDir, name, "")}
}

// Poll returns an error wrapping ErrUnsupported.
func (h *Handle) Poll() (State, error) { return Vanished, ErrUnsupported }

// Record returns an error wrapping ErrUnsupported.
func (h *Handle) Record() (Record, bool, error) { return Record{}, false, ErrUnsupported }

// Wait returns an error wrapping ErrUnsupported.
func (h *Handle) Wait(ctx context.Context) (State, error) { return Vanished, ErrUnsupported }

// Cancel returns an error wrapping ErrUnsupported.
func (h *Handle) Cancel(ctx context.Context, grace time.Duration) error { return ErrUnsupported }
