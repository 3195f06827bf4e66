package sh

import (
	"os/exec"
	"testing"

	"github.com/crosscluster/crosscluster/internal/testenv"
)

// TestQuoteRoundTrip runs each quoted word through a real sh and checks the
// word comes back unchanged.
func TestQuoteRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		testenv.Skip(t, "no sh on this machine")
	}
	for _, s := range []string{"", "plain", "two words", "it's", `back\slash`, "$HOME `x` $(y)", "a\nb", "#?%*[]", `"'"'`} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("sh read %q back as %q", s, out)
		}
	}
	if got, want := Join([]string{"echo", "a b"}), `'echo' 'a b'`; got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
}
