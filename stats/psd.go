package stats

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// DefaultWelchSegment is the segment length WelchPSD uses for nperseg = 0:
// scipy.signal.welch's default of 256.
const DefaultWelchSegment = 256

// WelchPSD estimates the one-sided power spectral density of x, sampled
// at fs, by Welch's method (Welch 1967) with scipy.signal.welch's
// defaults: a periodic Hann window of nperseg points, 50% overlap
// (noverlap = nperseg/2), nfft = nperseg, the mean of each segment
// removed (detrend="constant"), density scaling 1/(fs·Σw²), and the
// periodograms averaged by their mean. Like SciPy, nperseg = 0 means 256,
// a segment longer than x is shortened to len(x), and trailing samples
// that do not fill a segment are dropped. freqs[k] = k·fs/nperseg for
// k = 0..nperseg/2; psd has the same length, in units of x²/Hz.
//
// WelchPSD panics if nperseg < 0 or fs is not positive and finite. It
// returns a *CurveError wrapping ErrEmpty for fewer than 2
// samples and ErrNaN for NaN or Inf in x. It does not modify x.
func WelchPSD(x []float64, fs float64, nperseg int) (freqs, psd []float64, err error) {
	const fn = "WelchPSD"
	if nperseg < 0 {
		panic("stats: WelchPSD negative nperseg")
	}
	if !(fs > 0) || math.IsInf(fs, 1) {
		panic("stats: WelchPSD fs not positive and finite")
	}
	if len(x) < 2 {
		return nil, nil, curveErr(fn, -1, ErrEmpty)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, curveErr(fn, i, ErrNaN)
		}
	}
	if nperseg == 0 {
		nperseg = DefaultWelchSegment
	}
	nperseg = min(nperseg, len(x))
	noverlap := nperseg / 2
	step := nperseg - noverlap
	nseg := (len(x) - noverlap) / step

	// Periodic Hann window: w[k] = 0.5 − 0.5·cos(2πk/N), as
	// scipy.signal.get_window("hann", N) (fftbins=True).
	win := make([]float64, nperseg)
	var wss float64
	for k := range win {
		win[k] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(k)/float64(nperseg))
		wss += win[k] * win[k]
	}
	nf := nperseg/2 + 1
	psd = make([]float64, nf)
	seg := make([]float64, nperseg)
	coef := make([]complex128, nf)
	fft := fourier.NewFFT(nperseg)
	for s := range nseg {
		chunk := x[s*step : s*step+nperseg]
		var mean float64
		for _, v := range chunk {
			mean += v
		}
		mean /= float64(nperseg)
		for k, v := range chunk {
			seg[k] = (v - mean) * win[k]
		}
		coef = fft.Coefficients(coef, seg)
		for k, c := range coef {
			psd[k] += real(c)*real(c) + imag(c)*imag(c)
		}
	}
	scale := 1 / (fs * wss * float64(nseg))
	freqs = make([]float64, nf)
	for k := range psd {
		psd[k] *= scale
		// One-sided: double every bin except DC and, for even nperseg,
		// the Nyquist bin.
		if k > 0 && !(nperseg%2 == 0 && k == nf-1) {
			psd[k] *= 2
		}
		freqs[k] = float64(k) * fs / float64(nperseg)
	}
	return freqs, psd, nil
}

// RFFTTailPower returns the fraction of the raw spectral power of x that
// lies in its highest-frequency bins: with P_k = |X_k|² for the real FFT
// X of x (no window, no detrending, no scaling) and the DC bin P_0
// dropped so the mean level of a loss curve does not swamp the ratio, it
// is the sum of the last ⌈frac·m⌉ of the m = len(x)/2 remaining bins over
// the sum of all m. In NumPy:
//
//	P = np.abs(np.fft.rfft(x))[1:]**2; k = ceil(frac*len(P)); P[-k:].sum()/P.sum()
//
// A large value flags a noisy or oscillating curve. It returns 0 for a
// constant x and NaN for fewer than 2 samples or any NaN or Inf.
// RFFTTailPower panics if frac is not in (0, 1]. It does not modify x.
func RFFTTailPower(x []float64, frac float64) float64 {
	if !(frac > 0 && frac <= 1) {
		panic("stats: RFFTTailPower frac out of (0, 1]")
	}
	if len(x) < 2 {
		return math.NaN()
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	coef := fourier.NewFFT(len(x)).Coefficients(nil, x)
	p := coef[1:]
	m := len(p)
	k := min(int(math.Ceil(frac*float64(m))), m)
	var total, tail float64
	for i, c := range p {
		a2 := real(c)*real(c) + imag(c)*imag(c)
		total += a2
		if i >= m-k {
			tail += a2
		}
	}
	if total == 0 {
		return 0
	}
	return tail / total
}
