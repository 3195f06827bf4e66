package regime

import (
	"bytes"
	"os"
	"testing"
)

func TestZZHarness(t *testing.T) {
	f := os.Getenv("HARNESS_FILE")
	if f == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(f)
	_, err := ReadParquet(bytes.NewReader(data), int64(len(data)), "x", "c")
	t.Log(err)
}
