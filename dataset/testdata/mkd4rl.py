"""Writes small D4RL-layout fixture files with h5py, the way D4RL's own
scripts do, for koopq's dataset tests.

usage: mkd4rl.py OUT.hdf5 TERMINAL_DTYPE(bool|uint8|float32) COMPRESS(0|1) NEXT_OBS(0|1) [VARIANT]

The episode set (N = 10 rows, obs_dim 2, act_dim 1):
  rows 0-2  episode A, terminal at row 2
  rows 3-5  episode B, time limit at row 5
  rows 6-7  episode C, time limit at row 7
  rows 8-9  episode D, cut by the end of the data
observations[i] = (i, 10 i), actions[i] = 0.1 i, rewards[i] = i,
next_observations[i] = (i + 0.5, 10 i + 5).
VARIANT "nan" puts NaN into observations row 4.
"""
import sys
import h5py
import numpy as np

out, tdtype, compress, next_obs = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
variant = sys.argv[5] if len(sys.argv) > 5 else ""
N = 10
i = np.arange(N, dtype=np.float32)
obs = np.stack([i, 10 * i], axis=1).astype(np.float32)
if variant == "nan":
    obs[4, 1] = np.nan
nxt = np.stack([i + 0.5, 10 * i + 5], axis=1).astype(np.float32)
act = (0.1 * i).reshape(N, 1).astype(np.float32)
rew = i.copy()
term = np.zeros(N, dtype=bool)
term[2] = True
tout = np.zeros(N, dtype=bool)
tout[[5, 7]] = True
kw = dict(compression="gzip", shuffle=True, chunks=True) if compress else {}
with h5py.File(out, "w") as f:
    f.create_dataset("observations", data=obs, **kw)
    f.create_dataset("actions", data=act, **kw)
    f.create_dataset("rewards", data=rew, **kw)
    f.create_dataset("terminals", data=term.astype(tdtype), **kw)
    f.create_dataset("timeouts", data=tout, **kw)
    if next_obs:
        f.create_dataset("next_observations", data=nxt, **kw)
    f.create_dataset("infos/qpos", data=np.arange(N * 3, dtype=np.float64).reshape(N, 3), **kw)
    f.create_dataset("infos/qvel", data=np.ones((N, 2), dtype=np.float32), **kw)
    f.create_dataset("infos/action_log_probs", data=-i, **kw)
    f["metadata/algorithm"] = "SAC"
    f["metadata/iteration"] = 7
    f.create_dataset("metadata/policy/fc0/weight", data=np.zeros((4, 2), dtype=np.float32))
    f.attrs["env"] = np.bytes_("toy-v0")  # fixed-length: read
    f.attrs["note"] = "vlen str"  # variable-length attribute: skipped by koopq
