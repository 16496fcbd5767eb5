package learntest

import "testing"

// The noiseless controller balances for the full 500 steps; the medium
// behaviour drops the pole in every episode, and each episode's return is
// its length (reward 1 per step) with the row flags marking its end.
func TestCollect(t *testing.T) {
	_, rets, err := Collect(Behaviour{}, 1500, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rets) != 3 || rets[0] != 500 || rets[2] != 500 {
		t.Fatalf("noiseless controller returns %v, want three 500-step episodes", rets)
	}
	d, rets, err := Collect(Behaviour{Noise: 0.5, Eps: 0.4}, 5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, r := range rets {
		sum += r
	}
	ends := 0
	for i := range d.Terminals {
		if d.Terminals[i] == 1 || d.Timeouts[i] == 1 {
			ends++
		}
	}
	if Terminals(d) < len(rets)-1 || ends != len(rets)+1 || sum > float64(d.Len()) {
		t.Fatalf("%d episodes, %d terminal rows, %d ends, returns sum %v over %d rows", len(rets), Terminals(d), ends, sum, d.Len())
	}
	m, se := MeanSE([]float64{1, 2, 3, 4})
	if m != 2.5 || se != 0.6454972243679028 {
		t.Fatalf("MeanSE = %v, %v", m, se)
	}
}
