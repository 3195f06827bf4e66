package divergence

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const hostsYAML = `hosts:
  - name: laptop
    ssh: me@laptop.local
    ssh_options: [-p, "2222"]
    repo: ~/src/model
    command: python3 run.py --stem {stem}
    output: out
  - name: here
    repo: .
    command: ./run.sh {stem}
`

func TestLoadHosts(t *testing.T) {
	got, err := LoadHosts(strings.NewReader(hostsYAML))
	if err != nil {
		t.Fatal(err)
	}
	want := []Host{
		{Name: "laptop", SSH: "me@laptop.local", SSHOptions: []string{"-p", "2222"}, Repo: "~/src/model", Command: "python3 run.py --stem {stem}", Output: "out"},
		{Name: "here", Repo: ".", Command: "./run.sh {stem}"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Host{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadHostsErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "empty document"},
		{"no hosts", "hosts: []\n", "no hosts"},
		{"unknown field", "hosts:\n  - name: a\n    repo: r\n    command: c\n    comand: x\n", "field comand not found"},
		{"bad name", "hosts:\n  - name: a/b\n    repo: r\n    command: c\n", `host 1 ("a/b"): name must match`},
		{"duplicate", "hosts:\n  - {name: a, repo: r, command: c}\n  - {name: a, repo: r, command: c}\n", `host 2 ("a"): duplicate name`},
		{"duplicate but for case", "hosts:\n  - {name: box, repo: r, command: c}\n  - {name: Box, repo: r, command: c}\n", `host 2 ("Box"): duplicate name`},
		{"no repo", "hosts:\n  - {name: a, command: c}\n", "repo is empty"},
		{"no command", "hosts:\n  - {name: a, repo: r}\n", "command is empty"},
		{"option as destination", "hosts:\n  - {name: a, repo: r, command: c, ssh: -oProxyCommand=x}\n", "starts with '-'"},
		{"not yaml", "hosts: [\n", "did not find expected"},
		{"absolute archive", "hosts:\n  - {name: a, repo: r, command: c, archive: /tmp/x.npz}\n", `archive "/tmp/x.npz" must be a pattern under the output`},
		{"archive outside", "hosts:\n  - {name: a, repo: r, command: c, archive: \"../{host}.npz\"}\n", "no leading / or .."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadHosts(strings.NewReader(tc.doc))
			if !errors.Is(err, ErrHosts) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrHosts mentioning %q", err, tc.want)
			}
		})
	}
}

func FuzzLoadHosts(f *testing.F) {
	f.Add([]byte(hostsYAML))
	f.Add([]byte("hosts:\n  - {name: a, repo: r, command: c}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		hosts, err := LoadHosts(strings.NewReader(string(b)))
		if err != nil {
			if !errors.Is(err, ErrHosts) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, h := range hosts {
			if h.Name == "" || h.Repo == "" || h.Command == "" {
				t.Fatalf("accepted %+v", h)
			}
		}
	})
}

func TestCdScript(t *testing.T) {
	for in, want := range map[string]string{
		"~/src/m": `cd "$HOME" && cd -- 'src/m'`,
		"~":       `cd "$HOME"`,
		"/a b/c'": `cd -- '/a b/c'\'''`,
	} {
		if got := cdScript(in); got != want {
			t.Errorf("cdScript(%q) = %q, want %q", in, got, want)
		}
	}
}
