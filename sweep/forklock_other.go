//go:build !unix

package sweep

// holdForks does nothing where processes are not forked.
func holdForks() (release func()) { return func() {} }
