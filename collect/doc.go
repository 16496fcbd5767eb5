// Package collect makes the offline datasets koopq trains on (`koopq
// collect`), following D4RL's recipe so that a dataset made here can stand
// in for the D4RL v2 file of the same name.
//
// Locomotion (hopper, halfcheetah, walker2d, ant): WriteD4RLDatasets rolls
// out the committed SAC behaviour policies (package policies), or those of a
// SAC run of one's own, into random, medium, expert, medium-expert,
// medium-replay and full-replay datasets. The policies come from a SAC run
// with D4RL's settings (SACRunConfig) whose medium policy is the first
// snapshot near D4RL's medium score (D4RLMediumScore, D4RLMediumBand,
// RunMedium) and whose expert is its final actor (or the best snapshot:
// ExportPolicies, BestSnapshot). Files have D4RL's HDF5 layout
// (observations, actions, rewards, terminals, timeouts, infos/qpos,
// infos/qvel, infos/action_log_probs, metadata), medium-expert is D4RL's
// stitch of the medium and expert files, and RecordD4RLFiles keeps a
// summary (D4RLSummaryFile) of what was written, with normalized returns.
//
// AntMaze (antmaze-umaze-v2, antmaze-*-diverse-v2, antmaze-*-play-v2):
// AntMazeDataset follows d4rl/locomotion/generate_dataset.py: a
// goal-reaching ant policy steered through the maze by a waypoint planner
// (SteerTarget, GoalObservation), Gaussian action noise, D4RL's start and
// goal choice per dataset kind (AntMazeKindOf) and the sparse
// evaluation-goal reward; AntMazeCoverage and PlotAntMazeCoverage show where
// the ant went.
//
// The small in-memory pipeline of the demo (SAC trained online on a classic
// control task) is run.Collect; it stays in package run, whose Demo runs it.
package collect
