package stats
import ("math";"testing";"time")
func TestZZSmirnovPeak(t *testing.T){
 worst:=0.0; var tf, ts time.Duration; cnt:=0; fb:=0
 for _, n := range []int{141, 200, 500, 1000, 5000, 20000, 28000, 50000, 141000, 250000, 999999} {
  for k:=0;k<40;k++ {
   nxsq := 2.2 + (370-2.2)*math.Pow(float64(k)/39, 3)
   d := math.Sqrt(nxsq/float64(n))
   if d >= 0.5 { continue }
   t0:=time.Now(); want:=KolmogorovSF(n,d); ts+=time.Since(t0)
   t0=time.Now(); got:=ksKolmogorovSF(n,d); tf+=time.Since(t0)
   if _, ok := smirnovPeakSF(n,d); !ok { fb++ }
   cnt++
   if want==0 && got==0 { continue }
   e:=math.Abs(got-want)/want
   if e>worst { worst=e; t.Logf("n=%d d=%g want %g got %g rel %g", n,d,want,got,e) }
  }
 }
 t.Logf("cases %d fallbacks %d worst %g slow %v fast %v", cnt, fb, worst, ts, tf)
}
