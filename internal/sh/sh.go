// Package sh builds POSIX shell command lines: the one quoting rule of the
// module, used for ssh remote commands, Slurm batch scripts and launch
// wrappers.
package sh

import "strings"

// Quote returns s as one single-quoted sh word: every byte stands for
// itself, and a single quote is written as '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each argument and joins them with spaces.
func Join(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}
