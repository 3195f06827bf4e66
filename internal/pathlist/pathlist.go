// Package pathlist reads the comma-separated file lists of the examples'
// flags (-logs a.log,b.log) so that a path that itself holds a comma still
// names one file.
package pathlist

import (
	"os"
	"strings"
)

// Split returns the paths in v. A v that names an existing file or
// directory as a whole is one path, commas and all; otherwise v is split at
// commas, each piece trimmed of surrounding spaces, and empty pieces
// (a trailing comma, ",,") dropped. "" gives no paths.
func Split(v string) []string {
	if v == "" {
		return nil
	}
	if _, err := os.Stat(v); err == nil {
		return []string{v}
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
