"""Prints d4rl.qlearning_dataset's output for an HDF5 file as JSON.

The function body is d4rl/__init__.py:qlearning_dataset (Farama-Foundation/D4RL),
with env.get_dataset replaced by reading the file (as get_dataset does,
flattening (N,1) rewards/terminals) and env._max_episode_steps by an argument.

usage: qlearning.py FILE TERMINATE_ON_END(0|1) [MAX_EPISODE_STEPS]
"""
import json
import sys
import h5py
import numpy as np


def get_dataset(path):
    data = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                data[name] = obj[()]
        f.visititems(visit)
    for k in ("rewards", "terminals", "timeouts"):
        if k in data and data[k].ndim == 2 and data[k].shape[1] == 1:
            data[k] = data[k][:, 0]
    return data


def qlearning_dataset(dataset, terminate_on_end=False, max_episode_steps=1000):
    N = dataset['rewards'].shape[0]
    obs_ = []
    next_obs_ = []
    action_ = []
    reward_ = []
    done_ = []

    # The newer version of the dataset adds an explicit
    # timeouts field. Keep old method for backwards compatability.
    use_timeouts = False
    if 'timeouts' in dataset:
        use_timeouts = True

    episode_step = 0
    for i in range(N-1):
        obs = dataset['observations'][i].astype(np.float32)
        new_obs = dataset['observations'][i+1].astype(np.float32)
        action = dataset['actions'][i].astype(np.float32)
        reward = dataset['rewards'][i].astype(np.float32)
        done_bool = bool(dataset['terminals'][i])

        if use_timeouts:
            final_timestep = dataset['timeouts'][i]
        else:
            final_timestep = (episode_step == max_episode_steps - 1)
        if (not terminate_on_end) and final_timestep:
            # Skip this transition and don't apply terminals on the last step of an episode
            episode_step = 0
            continue
        if done_bool or final_timestep:
            episode_step = 0

        obs_.append(obs)
        next_obs_.append(new_obs)
        action_.append(action)
        reward_.append(reward)
        done_.append(done_bool)
        episode_step += 1

    return {
        'observations': np.array(obs_),
        'actions': np.array(action_),
        'next_observations': np.array(next_obs_),
        'rewards': np.array(reward_),
        'terminals': np.array(done_),
    }


if __name__ == "__main__":
    d = get_dataset(sys.argv[1])
    mes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    q = qlearning_dataset(d, terminate_on_end=sys.argv[2] == "1", max_episode_steps=mes)
    print(json.dumps({k: np.asarray(v, dtype=np.float64).ravel().tolist() for k, v in q.items()}))
