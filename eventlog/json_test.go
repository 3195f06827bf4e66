package eventlog_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

func jsonEvent(cluster, code int, minute int) string {
	return fmt.Sprintf("{\n    \"Cluster\": %d,\n    \"EventTime\": \"2024-05-01T08:%02d:00\",\n    \"EventTypeNumber\": %d,\n    \"Proc\": 0,\n    \"Subproc\": 0\n}\n", cluster, minute, code)
}

// readAllLenient reads everything, returning the clusters of the events
// and the damaged count.
func readJSON(t *testing.T, log string, lenient bool, maxSize int) ([]int, int, []error) {
	t.Helper()
	r := eventlog.NewReader(strings.NewReader(log))
	r.Location, r.Lenient = time.UTC, lenient
	r.SetMaxEventSize(maxSize)
	var got []int
	var errs []error
	for range 100 {
		ev, err := r.Read()
		if err == io.EOF {
			return got, r.Damaged(), errs
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, ev.Job.Cluster)
	}
	t.Fatal("reader did not reach EOF")
	return nil, 0, nil
}

// TestJSONDamageCostsOneEvent: in Lenient mode a bad object, an object cut
// short by the next one, garbage between events and an event over the
// size cap each cost that event only, and are counted; without Lenient
// each is a ParseError after which reading goes on (issue 14: one bad
// object ended the stream).
func TestJSONDamageCostsOneEvent(t *testing.T) {
	good := func(c int) string { return jsonEvent(c, 0, c%60) }
	big := strings.Replace(good(5), `"Proc": 0`, `"Notes": "`+strings.Repeat("x", 4000)+`", "Proc": 0`, 1)
	log := good(1) +
		"{\n    \"Cluster\": 2,\n    \"EventTime\": \"2024-05-01T08:02:00\" \"EventTypeNumber\": 0\n}\n" + // missing comma
		good(3) +
		"{\n    \"Cluster\": 4,\n    \"EventTime\": \"2024-05-01T08:04:00\",\n" + // cut short
		good(6) +
		"garbage here\n" +
		good(7) +
		big +
		good(8)
	got, damaged, errs := readJSON(t, log, true, 2048)
	if fmt.Sprint(got) != "[1 3 6 7 8]" || damaged != 4 || len(errs) != 0 {
		t.Errorf("lenient: events %v, damaged %d, errors %v; want [1 3 6 7 8], 4, none", got, damaged, errs)
	}
	got, _, errs = readJSON(t, log, false, 2048)
	if fmt.Sprint(got) != "[1 3 6 7 8]" || len(errs) != 4 {
		t.Fatalf("strict: events %v, %d errors %v; want [1 3 6 7 8] and 4 errors", got, len(errs), errs)
	}
	var pe *eventlog.ParseError
	for i, want := range []error{eventlog.ErrJSON, eventlog.ErrJSON, eventlog.ErrJSON, eventlog.ErrEventTooLarge} {
		if !errors.Is(errs[i], want) || !errors.As(errs[i], &pe) {
			t.Errorf("error %d: %v, want a ParseError wrapping %v", i, errs[i], want)
		}
	}
	// The array form and the default cap read the big event.
	arr := "[\n" + good(1) + ",\n" + big + "]\n"
	got, damaged, errs = readJSON(t, arr, false, 0)
	if fmt.Sprint(got) != "[1 5]" || damaged != 0 || len(errs) != 0 {
		t.Errorf("array: %v %d %v", got, damaged, errs)
	}
	// A truncated file: the last event is damaged, the others are read.
	got, damaged, _ = readJSON(t, good(1)+good(2)[:30], true, 0)
	if fmt.Sprint(got) != "[1]" || damaged != 1 {
		t.Errorf("truncated: %v, damaged %d", got, damaged)
	}
}
