// Package rank holds the rank statistics behind package stats' KS2Samp,
// AUC, Median and Quantile, and the fast paths package overlap takes
// through them: a radix sort of float64 by their bits, the two-sample
// Kolmogorov–Smirnov test on sorted keys or on groups of one column
// (without sorting it), the Kolmogorov and Smirnov distributions, and the
// AUC of per-class sorted scores. stats documents the statistics; the
// functions here compute the same numbers bit for bit, and overlap uses
// them where stats' own entry points would sort or copy again.
package rank

import (
	"math"
	"slices"
	"unsafe"
)

// Sorting for the KS statistic, AUC ranks, medians and quantiles. Large
// inputs use a least-significant-digit radix sort on the IEEE-754 bits,
// which is several times faster than a comparison sort for float64; small
// ones use slices.Sort.

// radixMin: below this length a comparison sort is faster.
const radixMin = 4096

const (
	radixBits    = 11
	radixBuckets = 1 << radixBits
	radixPasses  = (64 + radixBits - 1) / radixBits
)

// Key maps a float64 to a uint64 whose unsigned order is the float
// order (-Inf < … < -0 < +0 < … < +Inf). NaNs must have been removed.
//
// It is branch-free (flip all bits of negatives, the sign bit of the rest):
// the radix passes call it for every value, and a sign test would be
// mispredicted on data of mixed sign.
func Key(f float64) uint64 {
	b := math.Float64bits(f)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

// KeyFloat is the inverse of Key.
func KeyFloat(k uint64) float64 {
	// Keys with the top bit set came from non-negative floats.
	return math.Float64frombits(k ^ (uint64(int64(^k)>>63) | 1<<63))
}

// Floats sorts x (no NaNs) in increasing order, in place.
func Floats(x []float64) {
	var s Sorter
	s.Sort(x)
}

// Sorter sorts float64 slices in increasing order, in place, by a radix
// sort on the order-preserving bit patterns (11-bit digits, least
// significant first within the top digits and then within each run of
// keys that share those; a pass is skipped when every value shares its
// digit, as for small integers stored as floats), which is several times
// faster than a comparison sort for large inputs; inputs shorter than 4096
// use slices.Sort. It keeps its scratch memory between calls, so one sorter
// serves many slices without allocating. The zero value is ready to use;
// a Sorter must not be used by several goroutines at once.
//
// The slices must not contain NaN (where NaNs end up is unspecified);
// ±Inf are ordinary values, and -0 sorts before +0 on the radix path
// (the two compare equal, so any order is sorted).
type Sorter struct {
	tmp []float64
}

// SetScratch makes s use buf (its first len(buf) elements) as scratch
// memory, which spares an allocation and its page faults when the caller
// has memory to spare. Sort allocates its own when buf is too short. buf's
// contents are overwritten by later calls to Sort, and buf must not be
// used for anything else meanwhile.
func (s *Sorter) SetScratch(buf []float64) { s.tmp = buf[:len(buf):len(buf)] }

// Sort sorts x in increasing order.
//
// The radix passes sort by the top digits first: keys are ordered by their
// bits from radixTopShift up (sign, exponent and the leading mantissa
// bits: a relative resolution of about 2⁻¹⁹), which on spread-out data
// leaves only short runs of keys that agree there; each such run is then
// put in order by its full keys, small runs by insertion and long ones by
// the low digits' passes. Data whose values agree in their leading bits
// (all within a relative 2⁻¹⁹ of each other) end as one long run and take
// the low passes, so no input costs more than the plain least-significant-
// digit sort's passes plus one scan.
func (s *Sorter) Sort(x []float64) {
	n := len(x)
	if n < radixMin || uint64(n) > math.MaxUint32 {
		slices.Sort(x)
		return
	}
	if cap(s.tmp) < n {
		s.tmp = make([]float64, n)
	}
	tmp := s.tmp[:n]
	// The passes move the order-preserving keys, not the floats, so that
	// each pass reads a digit without converting again: the first pass
	// (the digit counts) turns x into keys in place, and the keys become
	// floats again at the end.
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(&x[0])), n)
	tmpKeys := unsafe.Slice((*uint64)(unsafe.Pointer(&tmp[0])), n)
	// 32-bit counts (n < 2³² here) halve the tables the first pass
	// scatters into.
	var counts [radixPasses][radixBuckets]uint32
	for i, v := range x {
		k := Key(v)
		keys[i] = k
		for p := radixTopPass; p < radixPasses; p++ {
			counts[p][(k>>(p*radixBits))&(radixBuckets-1)]++
		}
	}
	// The passes end in either slice; the other is the runs' scratch.
	src := radixPassesCounted(keys, tmpKeys, &counts, radixTopPass, radixPasses)
	scratch := tmpKeys
	if &src[0] != &keys[0] {
		scratch = keys
	}
	// Runs of keys equal in the top digits, put in order by the others.
	for a := 0; a < n; {
		top := src[a] >> radixTopShift
		b := a + 1
		for b < n && src[b]>>radixTopShift == top {
			b++
		}
		if b-a > 1 {
			sortLow(src[a:b], scratch[:b-a])
		}
		a = b
	}
	for i, k := range src {
		x[i] = KeyFloat(k)
	}
}

// radixTopPass is the first digit of the top digits Sort orders by first,
// and radixTopShift the lowest bit they hold.
const (
	radixTopPass  = 3
	radixTopShift = radixTopPass * radixBits
)

// radixPassesCounted runs the least-significant-digit passes for digits
// [from, to) of keys, whose digit counts are in counts, between keys and
// tmp, skipping digits that every key shares, and returns the one that
// holds the result.
func radixPassesCounted(keys, tmp []uint64, counts *[radixPasses][radixBuckets]uint32, from, to int) []uint64 {
	n := len(keys)
	k0 := keys[0]
	src, dst := keys, tmp
	for p := from; p < to; p++ {
		c := &counts[p]
		shift := uint(p * radixBits)
		if int(c[(k0>>shift)&(radixBuckets-1)]) == n {
			continue // every value has the same digit here
		}
		var sum uint32
		for b := range c {
			c[b], sum = sum, sum+c[b]
		}
		for _, k := range src {
			d := (k >> shift) & (radixBuckets - 1)
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	return src
}

// sortLow sorts keys that agree in their top digits (from radixTopShift
// up) by their low digits, using tmp (as long) as scratch: insertion for
// short runs, a check for runs already in order (such as ties), the low
// digits' radix passes for long ones.
func sortLow(keys, tmp []uint64) {
	n := len(keys)
	if n <= 16 {
		for i := 1; i < n; i++ {
			k := keys[i]
			j := i
			for ; j > 0 && keys[j-1] > k; j-- {
				keys[j] = keys[j-1]
			}
			keys[j] = k
		}
		return
	}
	if slices.IsSorted(keys) {
		return
	}
	if n < radixMin {
		slices.Sort(keys)
		return
	}
	var counts [radixPasses][radixBuckets]uint32
	for _, k := range keys {
		for p := range radixTopPass {
			counts[p][(k>>(p*radixBits))&(radixBuckets-1)]++
		}
	}
	src := radixPassesCounted(keys, tmp, &counts, 0, radixTopPass)
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// Keys sorts keys in increasing order, in place.
func Keys(keys []uint64) {
	if len(keys) < radixMin || uint64(len(keys)) > math.MaxUint32 {
		slices.Sort(keys)
		return
	}
	var counts [radixPasses][radixBuckets]uint32
	for _, k := range keys {
		for p := range radixPasses {
			counts[p][(k>>(p*radixBits))&(radixBuckets-1)]++
		}
	}
	sorted := radixPassesCounted(keys, make([]uint64, len(keys)), &counts, 0, radixPasses)
	if &sorted[0] != &keys[0] {
		copy(keys, sorted)
	}
}

// radixSortKeysIdx sorts keys and idx alongside, stably, using the scratch
// slices tmp and tmpIdx of the same lengths, and returns the slices holding
// the result (either the inputs or the scratch slices).
func radixSortKeysIdx(keys, tmp []uint64, idx, tmpIdx []int32) ([]uint64, []int32) {
	var counts [radixPasses][radixBuckets]int
	for _, k := range keys {
		for p := 0; p < radixPasses; p++ {
			counts[p][(k>>(p*radixBits))&(radixBuckets-1)]++
		}
	}
	n := len(keys)
	for p := 0; p < radixPasses; p++ {
		c := &counts[p]
		// Skip a pass where every key has the same digit.
		if c[(keys[0]>>(p*radixBits))&(radixBuckets-1)] == n {
			continue
		}
		sum := 0
		for b := range c {
			c[b], sum = sum, sum+c[b]
		}
		shift := uint(p * radixBits)
		for i, k := range keys {
			d := (k >> shift) & (radixBuckets - 1)
			tmp[c[d]] = k
			tmpIdx[c[d]] = idx[i]
			c[d]++
		}
		idx, tmpIdx = tmpIdx, idx
		keys, tmp = tmp, keys
	}
	return keys, idx
}

// KeysPayload sorts keys in increasing order carrying pay alongside
// (stably), and returns the sorted slices (the inputs or new ones).
func KeysPayload(keys []uint64, pay []int32) ([]uint64, []int32) {
	return keysPayload(keys, pay, nil, nil)
}

// keysPayload is KeysPayload with scratch tk and tp for the radix sort
// (used when their capacity is at least len(keys), else new ones are
// made); the sorted slices it returns are the inputs or the scratch.
func keysPayload(keys []uint64, pay []int32, tk []uint64, tp []int32) ([]uint64, []int32) {
	n := len(keys)
	if n >= radixMin {
		if cap(tk) < n || cap(tp) < n {
			tk, tp = make([]uint64, n), make([]int32, n)
		}
		return radixSortKeysIdx(keys, tk[:n], pay, tp[:n])
	}
	type kp struct {
		k uint64
		p int32
	}
	pairs := make([]kp, n)
	for i := range pairs {
		pairs[i] = kp{keys[i], pay[i]}
	}
	slices.SortStableFunc(pairs, func(a, b kp) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	for i, e := range pairs {
		keys[i], pay[i] = e.k, e.p
	}
	return keys, pay
}
