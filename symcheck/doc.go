// Package symcheck is the symmetry-accuracy study of the paper's appendix
// ("Local precision symmetry shifts Mujoco", `koopq symcheck`): it measures
// whether the states a Koopman model's symmetry shift (KFC++) produces are
// still states the real simulator would produce.
//
// For a sample of dataset transitions (s_t, a_t, s_{t+1}) it shifts both
// states and reports two distances: ΔS, how far the shift moved the states
// (‖s̃_t − s_t‖ + ‖s̃_{t+1} − s_{t+1}‖), and ΔE, how far the shifted
// successor is from the simulator's own step from the shifted state
// (‖s̃_{t+1} − M(s̃_t, a_t)‖, split into positions and velocities); the unshifted data and reconstruction rows
// are the baselines (the simulator's own error, the autoencoder's). The
// study compares KFC++ with random latent shifts of the same mean ΔS (Run),
// with bootstrap intervals on the ratios, and, calibrated to target
// state-space magnitudes, with the Gaussian S4RL-N augmentation
// (Magnitudes). Write, Plot and WriteMagnitudes record the results in a
// run.Dir (JSONFile, CSVFile, PNGFile, SummaryFile).
package symcheck
