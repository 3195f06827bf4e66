package launch

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name, in string
		want     int
		wantErr  bool
	}{
		{"ok", "exit=0\nstart=1700000000\nend=1700000001\n", 0, false},
		{"signal", "exit=143\nstart=1700000000\nend=1700000000\n", 143, false},
		{"empty", "", 0, true},
		{"empty start (interrupted substitution)", "exit=143\nstart=\nend=1700000001\n", 0, true},
		{"empty end", "exit=0\nstart=1700000000\nend=\n", 0, true},
		{"exit only", "exit=137\n", 0, true},
		{"no final newline", "exit=0\nstart=1\nend=2", 0, true},
		{"order", "start=1\nexit=0\nend=2\n", 0, true},
		{"extra line", "exit=0\nstart=1\nend=2\nx=3\n", 0, true},
		{"duplicate", "exit=0\nexit=0\nend=2\n", 0, true},
		{"not a number", "exit=x\nstart=1\nend=2\n", 0, true},
		{"plus sign", "exit=+0\nstart=1\nend=2\n", 0, true},
		{"space", "exit= 0\nstart=1\nend=2\n", 0, true},
		{"exit out of range", "exit=256\nstart=1\nend=2\n", 0, true},
		{"negative exit", "exit=-1\nstart=1\nend=2\n", 0, true},
		{"zero time", "exit=0\nstart=0\nend=2\n", 0, true},
		{"garbage", "garbage\n", 0, true},
		{"crlf", "exit=0\r\nstart=1\r\nend=2\r\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("%q: err %v, want error %v", tc.in, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrRecord) {
				t.Errorf("%q: error %v does not wrap ErrRecord", tc.in, err)
			}
			if err == nil && r.Exit != tc.want {
				t.Errorf("%q: exit %d want %d", tc.in, r.Exit, tc.want)
			}
		})
	}
}

func TestParsePoll(t *testing.T) {
	rec := "exit=3\nstart=1700000000\nend=1700000002\n"
	tests := []struct {
		name, in string
		want     State
		wantErr  bool
	}{
		{"record", rec, Failed, false},
		{"trimmed record (ssh output)", strings.TrimSpace(rec), Failed, false},
		{"finished", "exit=0\nstart=1\nend=2", Finished, false},
		{"running", "running 42\n", Running, false},
		{"gone", "gone\n", Vanished, false},
		{"empty start", "exit=143\nstart=\nend=2", 0, true},
		{"empty", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, r, err := ParsePoll([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrRecord) {
					t.Errorf("error %v does not wrap ErrRecord", err)
				}
				return
			}
			if st != tc.want || (st.Done() && st != Vanished) != (r != nil) {
				t.Errorf("ParsePoll = %v, %+v; want %v", st, r, tc.want)
			}
		})
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte("exit=0\nstart=1700000000\nend=1700000001\n"))
	f.Add([]byte("exit=143\n"))
	f.Add([]byte("running 12"))
	f.Add([]byte("gone"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ParseRecord(b); err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("untyped error %v", err)
		}
		if _, _, err := ParsePoll(b); err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
