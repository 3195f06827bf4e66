package main

import "math"

// The simulation is a double pendulum (unit masses and lengths, g = 9.81)
// integrated with classical RK4. It is chaotic: rounding differences of one
// ulp grow exponentially, which is what makes a bound on divergence (not
// equality) the right contract between machines.
const (
	gravity = 9.81
	dt      = 1e-3
)

type state [4]float64 // θ1, θ2, ω1, ω2

// deriv evaluates the equations of motion. The variants are algebraically
// identical but round differently, as code compiled for different machines
// does:
//
//	0: the textbook form;
//	1: sums accumulated in the opposite order and cos(2θ1−2θ2) written as
//	   2cos²(θ1−θ2)−1;
//	2: like 0 with fused multiply-adds (math.FMA), as an FMA-capable CPU
//	   and compiler produce.
func deriv(s state, variant int) state {
	t1, t2, w1, w2 := s[0], s[1], s[2], s[3]
	d := t1 - t2
	sd, cd := math.Sin(d), math.Cos(d)
	var den, n1, n2 float64
	switch variant {
	case 1:
		den = 3 - (2*cd*cd - 1)
		n1 = -2*sd*(w1*w1*cd+w2*w2) - gravity*math.Sin(t1-2*t2) - 3*gravity*math.Sin(t1)
		n2 = 2 * sd * (w2*w2*cd + 2*gravity*math.Cos(t1) + 2*w1*w1)
	case 2:
		den = 3 - math.Cos(2*t1-2*t2)
		n1 = math.FMA(-3*gravity, math.Sin(t1), math.FMA(-gravity, math.Sin(t1-2*t2), -2*sd*math.FMA(w1*w1, cd, w2*w2)))
		n2 = 2 * sd * math.FMA(w1*w1, 2, math.FMA(2*gravity, math.Cos(t1), w2*w2*cd))
	default:
		den = 3 - math.Cos(2*t1-2*t2)
		n1 = -3*gravity*math.Sin(t1) - gravity*math.Sin(t1-2*t2) - 2*sd*(w2*w2+w1*w1*cd)
		n2 = 2 * sd * (2*w1*w1 + 2*gravity*math.Cos(t1) + w2*w2*cd)
	}
	return state{w1, w2, n1 / den, n2 / den}
}

func axpy(a float64, x, y state) state {
	for i := range y {
		y[i] += a * x[i]
	}
	return y
}

// simulate integrates for steps steps, recording every record-th step:
// z_b is bob b's position (x, y) and omega_b its angular velocity.
func simulate(steps, record, variant int) (zb, omegab []float64) {
	s := state{2.0, 2.5, 0, 0} // released from high up: strongly chaotic
	for i := 0; i < steps; i++ {
		if i%record == 0 {
			zb = append(zb, math.Sin(s[0])+math.Sin(s[1]), -math.Cos(s[0])-math.Cos(s[1]))
			omegab = append(omegab, s[3])
		}
		k1 := deriv(s, variant)
		k2 := deriv(axpy(dt/2, k1, s), variant)
		k3 := deriv(axpy(dt/2, k2, s), variant)
		k4 := deriv(axpy(dt, k3, s), variant)
		for j := range s {
			if variant == 2 {
				s[j] = math.FMA(dt/6, k1[j]+2*k2[j]+2*k3[j]+k4[j], s[j])
			} else {
				s[j] += dt / 6 * (k1[j] + 2*k2[j] + 2*k3[j] + k4[j])
			}
		}
	}
	return zb, omegab
}

// writeBox runs one box's simulation and writes its archive, through a
// temporary name so a reader never sees a partial file.
func writeBox(path string, steps, record, variant int) error {
	zb, om := simulate(steps, record, variant)
	return writeNPZ(path, []string{"z_b", "omega_b"}, [][]int{{len(om), 2}, {len(om)}}, [][]float64{zb, om})
}
