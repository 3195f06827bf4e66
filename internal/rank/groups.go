package rank

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// GroupPair names two samples of a grouped column for Groups.Compare: the
// values whose group label g has bit g set in X form the first sample,
// those with bit g set in Y the second. A group may belong to both.
type GroupPair struct{ X, Y uint8 }

// members reports whether group g belongs to the pair's X and Y samples.
func (p GroupPair) members(g uint8) (inX, inY bool) {
	return p.X>>g&1 != 0, p.Y>>g&1 != 0
}

// ksBucketTarget is the number of values per bucket Compare aims for;
// ksCellBits is the number of leading key bits (sign, exponent and the
// first four mantissa bits: sixteenths of an octave) of its coarse cells.
const (
	ksBucketTarget = 128
	ksCellBits     = 16
	ksCellShift    = 64 - ksCellBits
	ksMaxSubBits   = 16
	// ksPartShift: gather's parts of a cell are its keys' next six bits.
	ksPartShift = ksCellShift - 6
)

// Groups runs the two-sample KS test (stats.KS2Samp) for pairs of samples
// drawn from one column by group label, with the same statistics,
// locations, signs and p-values, without sorting the column, and keeps
// its scratch memory (tables of 256 and 32 KiB, about 1.5 bytes per value
// for the buckets of four groups, and the gathered values) between calls,
// so that one Groups compares many columns without allocating. The zero
// value is ready to use; a Groups must not be used by several goroutines
// at once.
//
// How: the values' order-preserving keys are cut into buckets, ranges of
// keys holding about 128 values each (each sixteenth of an octave that a
// sample of every 8th value reaches is split into equal key ranges in
// proportion to its count, so the buckets follow the data). Counting each
// group's values per bucket gives both samples' empirical CDFs exactly at
// every bucket's end, and bounds them inside it (F_x − F_y can rise inside
// a bucket by at most its x-count over n1 and fall by at most its y-count
// over n2). Only buckets where the bound reaches the largest or smallest
// difference seen at bucket ends (less a margin covering floating-point
// rounding) can hold the extremes; a bucket holding one distinct value is
// visited from its counts, the values of the others are gathered in a
// second pass (but for the copies of a bucket's most frequent value, which
// are counted), sorted and walked as stats.KS2Samp walks the whole samples.
// On continuous data that is a few buckets and on discrete data none, so
// the cost is one or two passes over the column plus a small sort, instead
// of sorting both samples. When the sample repeats almost no value, the
// counting pass does not record which buckets hold one value (it then
// costs a third less), and every candidate bucket is gathered.
type Groups struct {
	b      ksBuckets
	tracks []ksPairTrack
	keys   []uint64
	labels []int32
}

// Compare runs the KS test for each pair of samples of v (see GroupPair).
// group[i] is value v[i]'s label, below 8. NaNs are dropped, as
// stats.KS2Samp does. A pair with an empty sample is an error wrapping
// ErrEmpty that names the pair. It panics if alt or method is unknown, the
// lengths differ, there are more than 8 pairs or a label is 8 or more.
func (g *Groups) Compare(v []float64, group []uint8, pairs []GroupPair, alt Alternative, method Method) ([]Result, error) {
	if alt < TwoSided || alt > Greater {
		panic("rank: unknown Alternative")
	}
	if method < Auto || method > Asymp {
		panic("rank: unknown Method")
	}
	if len(group) != len(v) {
		panic("rank: Groups.Compare: len(group) != len(v)")
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	if len(pairs) > 8 {
		panic("rank: Groups.Compare: more than 8 pairs")
	}
	b := &g.b
	b.count(v, group)
	res := make([]Result, len(pairs))
	if cap(g.tracks) < len(pairs) {
		g.tracks = make([]ksPairTrack, len(pairs))
	}
	g.tracks = g.tracks[:len(pairs)]
	for p, pr := range pairs {
		t := &g.tracks[p]
		t.pair = pr
		b.sizes(t)
		if t.n1 == 0 || t.n2 == 0 {
			return nil, fmt.Errorf("pair %d: sample sizes %d and %d: %w", p, t.n1, t.n2, ErrEmpty)
		}
		b.boundaryExtremes(t)
		b.flagBuckets(t, uint8(1)<<p)
	}
	keys, labels := b.gather(v, group, g.keys[:0], g.labels[:0])
	for p := range pairs {
		ext := b.walk(&g.tracks[p], keys, labels)
		res[p] = ks2Samp(ext, int(g.tracks[p].n1), int(g.tracks[p].n2), alt, method)
	}
	g.keys, g.labels = keys[:0], labels[:0]
	return res, nil
}

// ksBuckets holds a column's per-bucket group counts. A key k lies in
// bucket cell[k>>ksCellShift]>>6 + (k&(1<<ksCellShift-1))>>(cell[…]&63):
// its cell's first bucket plus its sub-bucket in the cell.
type ksBuckets struct {
	cell   []uint32 // per cell: first bucket << 6 | shift of the sub-bucket
	nb     int
	gshift uint // log2 of the groups per bucket in slots
	// slots[b<<gshift + g] counts group g's values in bucket b and holds
	// the last one seen.
	slots []ksSlot
	flags []uint8 // per bucket, bit p: pair p must look inside
	mixed []bool  // per flagged bucket: it holds more than one value
	// pivot: per mixed bucket, 1 + the index in pivots of its most
	// frequent value, or 0 (see gather).
	pivot  []int32
	pivots []ksPivot
	// fine: per cell, a bit for each 64th of its key range that a mixed
	// bucket overlaps (see gather).
	fine []uint64
	// distinct: the sample repeated almost no value, so the counting
	// pass only counted (no slot knows its last value or whether its
	// values differ) and every flagged bucket with values is gathered.
	distinct bool
	// seen: the sample's keys by a hash of their bits, to tell repeats
	// (see count).
	seen *[ksSeenSize]uint64
	// sortKeys and sortLabels: the radix sort's scratch in gather, kept
	// for the next call.
	sortKeys   []uint64
	sortLabels []int32

	// Per group: its values' shift (see count) and count, and in four
	// lanes (rows i mod 4) the sums of their differences from the shift
	// and of the squares.
	shift  [8]float64
	n      [8]int
	s1, s2 [4][8]float64
}

// ksSlot is one group's values in one bucket: their count, with the
// ksMixed bit set once they are not all the same, and the last key seen
// (side by side, so that counting touches one cache line).
type ksSlot struct {
	n    uint32
	last uint64
}

// ksMixed marks a count whose values differ.
const ksMixed = 1 << 31

// ksPivot is a mixed bucket's most frequent value (as far as the counting
// pass could tell: the last value of its largest group) with its count in
// each group. gather counts its copies instead of collecting them: a
// bucket with a spike (runtimes equal to their limit, a fraction of
// exactly 1, a queue time of 0) and a few other values would otherwise
// sort every copy of the spike.
type ksPivot struct {
	key uint64
	n   [8]int64
}

// ksPivotMin: a bucket's largest group must count at least this many
// values for its value to become the pivot.
const ksPivotMin = 256

// ksSample: the cells are sized from every ksSample-th value.
const ksSample = 8

// The sample's repeats (see count): its keys go into a table of
// ksSeenSize places; a column whose sample of at least ksDistinctMin
// values finds at most one repeat in ksDistinctRatio is counted as
// distinct. A value repeated more rarely than that costs at most its
// copies gathered and sorted where a bucket holding it is a candidate.
const (
	ksSeenBits      = 12
	ksSeenSize      = 1 << ksSeenBits
	ksDistinctMin   = 1024
	ksDistinctRatio = 256
)

// bucket returns key k's bucket.
func (b *ksBuckets) bucket(k uint64) uint64 {
	return bucketOf((*[1 << ksCellBits]uint32)(b.cell), k)
}

// bucketOf returns key k's bucket in the cell table cells (see
// ksBuckets), an array so that the counting loops index it without a
// bounds check.
func bucketOf(cells *[1 << ksCellBits]uint32, k uint64) uint64 {
	c := uint64(cells[k>>ksCellShift])
	return c>>6 + (k&(1<<ksCellShift-1))>>(c&63)
}

// count counts the non-NaN values of v per bucket and group, reusing b's
// memory.
//
// The cells are sized from a sample, every ksSample-th value: a sampled
// cell with c of them gets about ksSample·c/ksBucketTarget buckets, a
// power of two, and each run of cells without a sampled value shares one
// bucket (they hold few values, or the sample would have met them).
//
// The slots per bucket come from the union of the labels' bits (eight
// labels a word: see labelBits), which has the largest label's top bit; the
// groups' shifts from the sample, and a label with values but none in the
// sample has its moments taken again around its first value (remoment:
// rare, and the same sums as knowing the labels first).
func (b *ksBuckets) count(v []float64, group []uint8) {
	if uint64(len(v)) >= ksMixed {
		panic("rank: Groups.Compare: 2³¹ values or more")
	}
	union := labelBits(group)
	if union >= 8 {
		panic("rank: Groups.Compare: group label 8 or more")
	}
	if b.cell == nil {
		b.cell = make([]uint32, 1<<ksCellBits)
	} else {
		clear(b.cell)
	}
	cell := b.cell
	if b.seen == nil {
		b.seen = new([ksSeenSize]uint64)
	} else {
		clear(b.seen[:])
	}
	seen := b.seen
	var sampleSum [8]float64
	var sampleN [8]int
	// Repeats among the sampled keys, counted where a key finds itself
	// in its place of seen (a key that is never repeated only takes the
	// place of another; the empty place holds 0, no key of a value but
	// -NaN's).
	repeats, sampled := 0, 0
	for i := 0; i < len(v); i += ksSample {
		if x := v[i]; x == x {
			k := Key(x + 0)
			cell[k>>ksCellShift]++
			h := k * 0x9e3779b97f4a7c15 >> (64 - ksSeenBits)
			if seen[h] == k {
				repeats++
			}
			seen[h] = k
			sampled++
			g := group[i] & 7
			sampleSum[g] += x
			sampleN[g]++
		}
	}
	b.distinct = sampled >= ksDistinctMin && repeats*ksDistinctRatio <= sampled
	for g := range b.shift {
		b.shift[g] = 0
		if m := sampleSum[g] / float64(sampleN[g]); sampleN[g] > 0 && !math.IsInf(m, 0) && !math.IsNaN(m) {
			b.shift[g] = m // the mean of the sampled values (a sum of finite values can overflow)
		}
	}
	b.nb = 0
	gap := false // the previous cell is unsampled and has its bucket
	for c, cnt := range cell {
		if cnt == 0 {
			if !gap {
				b.nb++
				gap = true
			}
			cell[c] = uint32(b.nb-1)<<6 | ksCellShift // one sub-bucket
			continue
		}
		gap = false
		sub := min(bits.Len32((ksSample*cnt-1)/ksBucketTarget), ksMaxSubBits)
		cell[c] = uint32(b.nb)<<6 | uint32(ksCellShift-sub)
		b.nb += 1 << sub
	}
	b.flags = reuse(b.flags, b.nb)
	b.mixed = reuse(b.mixed, b.nb)
	b.pivot = reuse(b.pivot, b.nb)
	b.pivots = b.pivots[:0]
	b.countValues(v, group, uint(bits.Len8(union)))
	gs := 1 << b.gshift
	b.n = [8]int{}
	for k, sl := range b.slots {
		b.n[k&(gs-1)] += int(sl.n &^ ksMixed)
	}
	var unsampled uint8
	for g, n := range b.n {
		if n > 0 && sampleN[g] == 0 {
			unsampled |= 1 << g
		}
	}
	if unsampled != 0 {
		b.remoment(v, group, unsampled)
	}
}

// countValues runs count's pass over v with 1<<gshift slots per bucket
// (every label is below that): per bucket and group the count and, unless
// the column's values are distinct, whether the values differ, and per
// group the shifted sums.
func (b *ksBuckets) countValues(v []float64, group []uint8, gshift uint) {
	b.gshift = gshift
	b.slots = reuse(b.slots, b.nb<<gshift)
	slots, shift := b.slots, b.shift
	cells := (*[1 << ksCellBits]uint32)(b.cell)
	if b.distinct {
		b.s1, b.s2 = countOnly(v, group[:len(v)], cells, slots, gshift&63, &shift)
		return
	}
	// The groups' counts come from the buckets' afterwards: counting them
	// here too would add a third dependent update per value.
	var s1, s2 [4][8]float64
	group = group[:len(v)] // one bounds check for the loop's
	for i, x := range v {
		if x != x {
			continue
		}
		g, lane := group[i]&7, i&3
		dev := x - shift[g]
		s1[lane][g] += dev
		s2[lane][g] += dev * dev
		k := Key(x + 0)
		sl := &slots[bucketOf(cells, k)<<(gshift&63)|uint64(g)]
		// Without branches, which continuous data would mispredict.
		c := sl.n
		var d uint32
		if sl.last != k {
			d = ksMixed
		}
		if c == 0 {
			d = 0
		}
		sl.n = (c | d) + 1
		sl.last = k
	}
	b.s1, b.s2 = s1, s2
}

// countOnly is countValues' loop for distinct values: the counts and the
// shifted sums, without each slot's last value, which costs a third of
// the loop.
func countOnly(v []float64, group []uint8, cells *[1 << ksCellBits]uint32, slots []ksSlot, gshift uint, shift *[8]float64) (s1, s2 [4][8]float64) {
	group = group[:len(v)]
	for i, x := range v {
		if x != x {
			continue
		}
		g, lane := group[i]&7, i&3
		dev := x - shift[g]
		s1[lane][g] += dev
		s2[lane][g] += dev * dev
		slots[bucketOf(cells, Key(x+0))<<gshift|uint64(g)].n++
	}
	return s1, s2
}

// labelBits returns the union of the labels' bits, reading eight labels a
// word into four independent accumulators: a label-by-label scan for the
// labels that occur took 6% of a comparison.
func labelBits(group []uint8) uint8 {
	var w0, w1, w2, w3 uint64
	i := 0
	for ; i+32 <= len(group); i += 32 {
		g := group[i : i+32]
		w0 |= binary.LittleEndian.Uint64(g[0:])
		w1 |= binary.LittleEndian.Uint64(g[8:])
		w2 |= binary.LittleEndian.Uint64(g[16:])
		w3 |= binary.LittleEndian.Uint64(g[24:])
	}
	u := w0 | w1 | w2 | w3
	for ; i < len(group); i++ {
		u |= uint64(group[i])
	}
	u |= u >> 32
	u |= u >> 16
	u |= u >> 8
	return uint8(u)
}

// remoment takes the shifted sums again for the labels in mask (a bit per
// label), which hold values the sample did not meet: around the label's
// first non-NaN value (the shifted-data algorithm loses no digits to
// cancellation when the shift is near the mean; 0 when that value is not
// finite), in the same order and lanes as countValues, so the sums are
// those countValues would have taken with that shift.
func (b *ksBuckets) remoment(v []float64, group []uint8, mask uint8) {
	todo := mask
	for i := 0; todo != 0 && i < len(v); i++ {
		if g := group[i] & 7; todo>>g&1 != 0 && v[i] == v[i] {
			b.shift[g] = v[i]
			if math.IsInf(v[i], 0) {
				b.shift[g] = 0
			}
			todo &^= 1 << g
		}
	}
	for lane := range b.s1 {
		for g := range b.shift {
			if mask>>g&1 != 0 {
				b.s1[lane][g], b.s2[lane][g] = 0, 0
			}
		}
	}
	for i, x := range v {
		g := group[i] & 7
		if x != x || mask>>g&1 == 0 {
			continue
		}
		dev := x - b.shift[g]
		b.s1[i&3][g] += dev
		b.s2[i&3][g] += dev * dev
	}
}

// moments returns the size, mean and sum of squared deviations of the
// values whose group is in mask: each group's from its shifted sums, and
// groups combined by Chan, Golub and LeVeque's pairwise update.
func (b *ksBuckets) moments(mask uint8) (n int, mean, m2 float64) {
	for g := range b.shift {
		if mask>>g&1 == 0 {
			continue
		}
		ng := b.n[g]
		var s1, s2 float64
		for lane := range b.s1 {
			s1 += b.s1[lane][g]
			s2 += b.s2[lane][g]
		}
		if ng == 0 {
			continue
		}
		fg := float64(ng)
		mg, m2g := b.shift[g]+s1/fg, s2-s1*s1/fg
		if n == 0 {
			n, mean, m2 = ng, mg, m2g
			continue
		}
		nt := float64(n + ng)
		delta := mg - mean
		mean += delta * fg / nt
		m2 += m2g + delta*delta*float64(n)*fg/nt
		n += ng
	}
	return n, mean, m2
}

// SampleMoments are a sample's size, mean and sample variance (NaN for
// fewer than two values).
type SampleMoments struct {
	N         int
	Mean, Var float64
}

// Moments returns the moments of pair p's two samples from the last call
// of Compare, NaN dropped. They come from the same passes over the column
// (each group's sums relative to a shift near its mean, groups combined
// pairwise), and agree with the two-pass mean and variance of the split
// samples (as stats.SMD and stats.VarianceRatio compute them) to rounding. It panics
// if p is not a pair of the last Compare.
func (g *Groups) Moments(p int) (x, y SampleMoments) {
	pr := g.tracks[p].pair
	return g.b.sampleMoments(pr.X), g.b.sampleMoments(pr.Y)
}

func (b *ksBuckets) sampleMoments(mask uint8) SampleMoments {
	n, mean, m2 := b.moments(mask)
	if n == 0 {
		return SampleMoments{Mean: math.NaN(), Var: math.NaN()}
	}
	return SampleMoments{N: n, Mean: mean, Var: m2 / float64(n-1)}
}

// reuse returns s resized to n and zeroed, reallocating only when it is
// too short, then with room for a quarter more: the next column's buckets
// are usually a few more or fewer, and fresh memory costs a page fault per
// 4 KiB touched.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	s = s[:n]
	clear(s)
	return s
}

// ksPairTrack is one pair's sample sizes, the extremes of n1·n2·(F_x − F_y)
// at bucket ends, and the flagged buckets' cumulative counts before them.
type ksPairTrack struct {
	pair         GroupPair
	cx, cy       []uint32 // per bucket, the x and y counts
	n1, n2       int64
	hiEnd, loEnd int64
	cands        []ksCandidate
}

// ksCandidate is a bucket in which a pair's extremes may lie, with the
// pair's counts before it.
type ksCandidate struct{ bucket, x, y int64 }

// sizes sets t's per-bucket and total sample sizes.
func (b *ksBuckets) sizes(t *ksPairTrack) {
	var inX, inY [8]uint32
	for g := range inX {
		x, y := t.pair.members(uint8(g))
		if x {
			inX[g] = ^uint32(0)
		}
		if y {
			inY[g] = ^uint32(0)
		}
	}
	t.cx, t.cy = reuse(t.cx, b.nb), reuse(t.cy, b.nb)
	t.cands = t.cands[:0]
	gs := 1 << b.gshift
	var n1, n2 int64
	for k := range b.nb {
		var cx, cy uint32
		for g, sl := range b.slots[k*gs : (k+1)*gs] {
			c := sl.n &^ ksMixed
			cx += c & inX[g]
			cy += c & inY[g]
		}
		t.cx[k], t.cy[k] = cx, cy
		n1 += int64(cx)
		n2 += int64(cy)
	}
	t.n1, t.n2 = n1, n2
}

// boundaryExtremes sets the largest and smallest n1·n2·(F_x − F_y) at the
// ends of non-empty buckets.
func (b *ksBuckets) boundaryExtremes(t *ksPairTrack) {
	hi, lo := int64(math.MinInt64), int64(math.MaxInt64)
	var d int64
	for k, cx := range t.cx {
		cy := t.cy[k]
		if cx+cy == 0 {
			continue
		}
		d += int64(cx)*t.n2 - int64(cy)*t.n1
		hi, lo = max(hi, d), min(lo, d)
	}
	t.hiEnd, t.loEnd = hi, lo
}

// flagBuckets marks with bit the buckets in which the difference can come
// within the rounding margin of the extremes at bucket ends, and records
// the counts before each.
//
// SciPy compares the floating-point differences i/n1 − j/n2, each within
// 1.5 ulp of 1 (3.4e-16) of the exact value, so a value whose difference
// ties or beats another's in floating point is at most 6.7e-16 below it
// exactly; the margin, 2⁻⁴⁰ (9e-13) of n1·n2 plus one, covers twice that.
func (b *ksBuckets) flagBuckets(t *ksPairTrack, bit uint8) {
	margin := t.n1*t.n2>>40 + 1
	var d, bx, by int64
	for k := range b.nb {
		cx, cy := int64(t.cx[k]), int64(t.cy[k])
		if cx+cy == 0 {
			continue
		}
		if d+cx*t.n2 >= t.hiEnd-margin || d-cy*t.n1 <= t.loEnd+margin {
			b.flags[k] |= bit
			t.cands = append(t.cands, ksCandidate{int64(k), bx, by})
		}
		d += cx*t.n2 - cy*t.n1
		bx += cx
		by += cy
	}
}

// gather finds which flagged buckets hold more than one distinct value,
// and returns the keys and group labels of their values, sorted by key.
func (b *ksBuckets) gather(v []float64, group []uint8, keys []uint64, labels []int32) ([]uint64, []int32) {
	gs := 1 << b.gshift
	var m int
	for k, f := range b.flags {
		if f == 0 {
			continue
		}
		if b.distinct {
			// No slot knows whether its values differ: gather them all
			// (on distinct data they do).
			n := 0
			for _, sl := range b.slots[k*gs : (k+1)*gs] {
				n += int(sl.n)
			}
			if n > 0 {
				b.mixed[k] = true
				m += n
			}
			continue
		}
		key, mixed, n := uint64(0), false, 0
		var big ksSlot
		for _, sl := range b.slots[k*gs : (k+1)*gs] {
			if sl.n == 0 {
				continue
			}
			if sl.n&ksMixed != 0 || (n > 0 && sl.last != key) {
				mixed = true
			}
			key = sl.last
			n += int(sl.n &^ ksMixed)
			if sl.n&^ksMixed > big.n&^ksMixed {
				big = sl
			}
		}
		if mixed {
			b.mixed[k] = true
			m += n
			if big.n&^ksMixed >= ksPivotMin {
				b.pivots = append(b.pivots, ksPivot{key: big.last})
				b.pivot[k] = int32(len(b.pivots))
				m -= int(big.n &^ ksMixed) // about that many copies are only counted
			}
		}
	}
	if m == 0 {
		return keys, labels
	}
	keys, labels = slices.Grow(keys, m), slices.Grow(labels, m)
	// Most values lie in no mixed bucket. Each cell's key range is cut
	// into 64 parts and a bit per part says whether a mixed bucket
	// overlaps it (a word per cell, zero for cells without one; the
	// words of the cells the data fill stay in the first-level cache),
	// so that only values in such parts look their bucket up in the cell
	// table: where data crowd into a few cells, a whole cell is too coarse
	// a filter.
	fine := reuse(b.fine, 1<<ksCellBits)
	b.fine = fine
	for c, e := range b.cell {
		first, shift := e>>6, e&63
		for u := range uint32(1) << (ksCellShift - shift) {
			if !b.mixed[first+u] {
				continue
			}
			lo := uint64(u) << shift >> ksPartShift
			hi := ((uint64(u)+1)<<shift - 1) >> ksPartShift
			fine[c] |= (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1) // bits lo..hi
		}
	}
	mixed, pivot, pivots := b.mixed, b.pivot, b.pivots
	fineCells := (*[1 << ksCellBits]uint64)(fine)
	for i := nextMarked(v, fineCells, 0); i < len(v); i = nextMarked(v, fineCells, i+1) {
		x := v[i]
		if x != x {
			continue
		}
		k := Key(x + 0)
		bk := b.bucket(k)
		if !mixed[bk] {
			continue
		}
		if p := pivot[bk]; p != 0 && pivots[p-1].key == k {
			pivots[p-1].n[group[i]&7]++
			continue
		}
		keys = append(keys, k)
		labels = append(labels, int32(group[i]))
	}
	sk, sl := keysPayload(keys, labels, b.sortKeys, b.sortLabels)
	// Keep whichever pair the sort did not return as the next call's
	// scratch.
	if len(sk) > 0 && &sk[0] == &keys[0] {
		return sk, sl
	}
	if len(sk) >= radixMin {
		b.sortKeys, b.sortLabels = keys[:0], labels[:0]
	}
	return sk, sl
}

// nextMarked returns the first index from i up whose value's key falls in
// a part of a cell that fine marks (a NaN may too: the caller drops it),
// or len(v). It is gather's scan over the whole column, a loop of its own
// so that its few variables stay in registers.
func nextMarked(v []float64, fine *[1 << ksCellBits]uint64, i int) int {
	for ; i < len(v); i++ {
		k := Key(v[i] + 0)
		if fine[k>>ksCellShift]>>(k>>ksPartShift&63)&1 != 0 {
			return i
		}
	}
	return len(v)
}

// point returns the single value of a bucket that is not mixed.
func (b *ksBuckets) point(k int) uint64 {
	gs := 1 << b.gshift
	for _, sl := range b.slots[k*gs : (k+1)*gs] {
		if sl.n != 0 {
			return sl.last
		}
	}
	return 0
}

// walk follows F_x − F_y through pair t's candidate buckets: a point
// bucket's value from its counts, the others' sorted values.
func (b *ksBuckets) walk(t *ksPairTrack, keys []uint64, labels []int32) ksExt {
	tr := newKSTracker[uint64](int(t.n1), int(t.n2))
	a := 0 // next gathered key
	for _, c := range t.cands {
		i, j := c.x, c.y
		if !b.mixed[c.bucket] {
			cx, cy := int64(t.cx[c.bucket]), int64(t.cy[c.bucket])
			tr.visit(b.point(int(c.bucket)), int(i+cx), int(j+cy), cx > 0, cy > 0)
			continue
		}
		for a < len(keys) && b.bucket(keys[a]) < uint64(c.bucket) {
			a++
		}
		// The bucket's pivot, whose copies were counted, not gathered,
		// takes its place among the gathered keys.
		var pv *ksPivot
		if p := b.pivot[c.bucket]; p != 0 {
			pv = &b.pivots[p-1]
		}
		visitPivot := func() {
			key := pv.key
			var nx, ny int64
			for g, cnt := range pv.n {
				inX, inY := t.pair.members(uint8(g))
				if inX {
					nx += cnt
				}
				if inY {
					ny += cnt
				}
			}
			pv = nil
			if nx+ny == 0 {
				return
			}
			i += nx
			j += ny
			tr.visit(key, int(i), int(j), nx > 0, ny > 0)
		}
		for a < len(keys) && b.bucket(keys[a]) == uint64(c.bucket) {
			k := keys[a]
			if pv != nil && pv.key < k {
				visitPivot()
			}
			var nx, ny int64
			for ; a < len(keys) && keys[a] == k; a++ {
				inX, inY := t.pair.members(uint8(labels[a]))
				if inX {
					nx++
				}
				if inY {
					ny++
				}
			}
			if nx+ny == 0 {
				continue
			}
			i += nx
			j += ny
			tr.visit(k, int(i), int(j), nx > 0, ny > 0)
		}
		if pv != nil {
			visitPivot()
		}
	}
	return tr.extremes(KeyFloat)
}
