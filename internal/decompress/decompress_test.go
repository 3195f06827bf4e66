package decompress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestGzip(t *testing.T) {
	text := strings.Repeat("000 (1.0.0) 01/02 03:04:05 Job submitted\n...\n", 200)
	plain := bufio.NewReader(strings.NewReader(text))
	if br, err := Gzip(plain, "f", "log"); err != nil || br != plain {
		t.Errorf("plain input: %v, same reader %v", err, br == plain)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text))
	zw.Close()
	br, err := Gzip(bufio.NewReader(bytes.NewReader(z.Bytes())), "f.gz", "log")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(br); err != nil || string(got) != text {
		t.Errorf("gzip input read back %d bytes of %d, %v", len(got), len(text), err)
	}
	br, err = Gzip(bufio.NewReader(bytes.NewReader(z.Bytes()[:z.Len()/2])), "cut.gz", "log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(br); err == nil || !strings.Contains(err.Error(), "cut.gz: gzip-compressed log: unexpected EOF") {
		t.Errorf("truncated gzip: %v", err)
	}
	for name, magic := range map[string]string{"bzip2": "BZh91AY&SY", "xz": "\xfd7zXZ\x00\x00", "zstd": "\x28\xb5\x2f\xfd\x00", "broken gzip header": "\x1f\x8b\x00\x00"} {
		if _, err := Gzip(bufio.NewReader(strings.NewReader(magic+"xxxxxxxxxxxxxxxx")), "f", "log"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
}
