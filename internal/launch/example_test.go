//go:build unix

package launch_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
)

func Example() {
	dir, err := os.MkdirTemp("", "launch-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	l := &launch.Local{StateDir: dir}
	h, err := l.Start(context.Background(), launch.Spec{Name: "run-1", Argv: []string{"sh", "-c", "exit 2"}})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := h.Wait(ctx)
	if err != nil {
		panic(err)
	}
	rec, _, _ := h.Record()
	fmt.Println(st, rec.Exit)
	// Output: FAILED 2
}
