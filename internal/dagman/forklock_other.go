//go:build !unix

package dagman

// holdForks does nothing where processes are not forked.
func holdForks() (release func()) { return func() {} }
