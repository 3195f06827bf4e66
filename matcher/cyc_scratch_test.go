package matcher

import (
	"strings"
	"testing"
)

func TestCycleScratch(t *testing.T) {
	_, err := ReadJobspec(strings.NewReader("resources:\n- &a\n  count: 1\n  type: node\n  with: [*a]\n"), "x")
	t.Log(err)
}
