package overlap

import "math"

// mergeSorted merges sorted a and b into dst[:len(a)+len(b)] and returns it;
// of equal values, a's come first. sortDomain sorts each domain's in-band
// and out-of-band values (stats.FloatSorter) and merges them, so that the
// all-rows and in-band KS tests share one sort.
//
// Which side the next value comes from follows the data, in no order a
// branch predictor could learn, so each step chooses without branches (a
// 0/1 flag advances the indices and a bit mask selects the value). A step
// still waits for the previous one's indices, so the merge runs from both
// ends at once, two independent chains: the front takes the smallest
// remaining value (a's on ties), the back the largest (b's on ties), which
// are the stable merge's first and last places, until half is done; the
// middle is merged from the front.
func mergeSorted(dst, a, b []float64) []float64 {
	n := len(a) + len(b)
	dst = dst[:n]
	i, j := 0, 0                 // front heads
	ia, jb := len(a)-1, len(b)-1 // back heads
	kf, kb := 0, 0               // values placed at the front and back
	for half := n / 2; kf < half && i < len(a) && j < len(b) && ia >= 0 && jb >= 0; {
		av, bv := a[i], b[j]
		t := 0
		if bv < av {
			t = 1
		}
		mask := -uint64(t)
		dst[kf] = math.Float64frombits(math.Float64bits(bv)&mask | math.Float64bits(av)&^mask)
		i += 1 - t
		j += t
		kf++

		av, bv = a[ia], b[jb]
		u := 0
		if av > bv {
			u = 1
		}
		mask = -uint64(u)
		dst[n-1-kb] = math.Float64frombits(math.Float64bits(av)&mask | math.Float64bits(bv)&^mask)
		ia -= u
		jb -= 1 - u
		kb++
	}
	a, b = a[i:ia+1], b[j:jb+1]
	out := dst[kf : n-kb]
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		av, bv := a[i], b[j]
		t := 0
		if bv < av {
			t = 1
		}
		mask := -uint64(t)
		out[k] = math.Float64frombits(math.Float64bits(bv)&mask | math.Float64bits(av)&^mask)
		i += 1 - t
		j += t
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
	return dst
}
