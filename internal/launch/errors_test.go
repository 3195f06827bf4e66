//go:build unix

package launch

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestErrors: each documented error, produced through the API, is named
// by errors.Is, and carries the package prefix once.
func TestErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		err  func() error
		is   error
	}{
		{"record", func() error { _, err := ParseRecord([]byte("exit=0\nstart=\nend=1\n")); return err }, ErrRecord},
		{"poll", func() error { _, _, err := ParsePoll([]byte("exit=x")); return err }, ErrRecord},
		{"launch cancelled", func() error {
			_, err := (&Local{StateDir: t.TempDir()}).Start(cancelled, Spec{Name: "x", Argv: []string{"true"}})
			return err
		}, ErrLaunch},
		{"launch cancelled is context.Canceled", func() error {
			_, err := (&Local{StateDir: t.TempDir()}).Start(cancelled, Spec{Name: "x", Argv: []string{"true"}})
			return err
		}, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			if n := strings.Count(err.Error(), "launch:"); n != 1 {
				t.Errorf("%q has the package prefix %d times, want once", err, n)
			}
		})
	}
}
