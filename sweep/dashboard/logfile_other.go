//go:build !unix

package dashboard

// openNoFollow: os.Root keeps the open inside the work directory; the
// regular-file check refuses the rest.
const openNoFollow = 0
