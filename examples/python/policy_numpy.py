#!/usr/bin/env python3
"""Load a koopq policy.safetensors with NumPy alone and act.

    python3 policy_numpy.py POLICY                     # act on one zero observation
    python3 policy_numpy.py POLICY --obs S.npy --out A.npy

S.npy holds observations [N, obs_dim] in the env's units; A.npy receives the
deterministic actions [N, act_dim] in the env's units (float64). The file
format and the pipeline (normalize -> MLP -> tanh -> rescale) are described
in docs/policy-format.md; this script is that description in code and is
checked against koopq's own actions in CI (run/policy_python_test.go).
"""
import argparse
import hashlib
import json
import struct

import numpy as np

CHECKSUM_KEY = "koopq.sha256"


def read_safetensors(path):
    """Return ({name: float32 array}, metadata dict) of a safetensors file,
    verifying koopq's whole-file sha256 when the file records one."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: too short for a safetensors header" % path)
    (n,) = struct.unpack("<Q", data[:8])  # header length, little-endian uint64
    if 8 + n > len(data):
        raise ValueError("%s: header length %d exceeds the file" % (path, n))
    header_bytes = data[8:8 + n]
    header = json.loads(header_bytes)
    meta = header.pop("__metadata__", {})
    if CHECKSUM_KEY in meta:
        # sha256 of the whole file with the digest itself replaced by 64 '0's.
        key = ('"%s":"' % CHECKSUM_KEY).encode()
        at = 8 + header_bytes.index(key) + len(key)
        work = bytearray(data)
        work[at:at + 64] = b"0" * 64
        if hashlib.sha256(work).hexdigest() != meta[CHECKSUM_KEY]:
            raise ValueError("%s: checksum mismatch: the file is corrupt" % path)
    body = data[8 + n:]
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError("%s: tensor %s has dtype %s, want F32" % (path, name, t["dtype"]))
        lo, hi = t["data_offsets"]
        tensors[name] = np.frombuffer(body[lo:hi], dtype="<f4").reshape(t["shape"])
    return tensors, meta


class Policy:
    """A koopq tanh-Gaussian policy: act(obs [N, obs_dim]) -> [N, act_dim]."""

    def __init__(self, path):
        tensors, meta = read_safetensors(path)
        if meta.get("koopq.kind") != "policy":
            raise ValueError("%s is not a koopq policy (kind %r)" % (path, meta.get("koopq.kind")))
        self.env = meta.get("env", "")
        self.obs_dim, self.act_dim = int(meta["obs_dim"]), int(meta["act_dim"])
        norm = json.loads(meta["normalizer"])
        self.mean = np.asarray(norm["mean"], dtype=np.float32)
        self.std = np.asarray(norm["std"], dtype=np.float32)
        scale = json.loads(meta["scale"])
        self.low = np.asarray(scale["low"], dtype=np.float32)
        self.high = np.asarray(scale["high"], dtype=np.float32)
        hidden = json.loads(meta["net"])["hidden"]
        # actor.l0 ... actor.l{len(hidden)}: weight [in, out], bias [out].
        self.layers = [(tensors["actor.l%d.weight" % i], tensors["actor.l%d.bias" % i])
                       for i in range(len(hidden) + 1)]

    def mean_and_log_std(self, obs):
        """The Gaussian's mean and clipped log sigma, before the tanh."""
        x = (np.asarray(obs, dtype=np.float32).reshape(-1, self.obs_dim) - self.mean) / self.std
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, np.float32(0))  # ReLU on hidden layers only
        mu, log_std = x[:, :self.act_dim], x[:, self.act_dim:]
        return mu, np.clip(log_std, -20, 2)

    def act(self, obs):
        """Deterministic action low + (tanh(mu) + 1)/2 * (high - low)."""
        mu, _ = self.mean_and_log_std(obs)
        a = np.tanh(mu.astype(np.float64)).astype(np.float32)
        return self.low + (a.astype(np.float64) + 1) / 2 * (self.high - self.low).astype(np.float64)

    def sample(self, obs, rng):
        """A stochastic action: tanh(mu + sigma * eps), rescaled."""
        mu, log_std = self.mean_and_log_std(obs)
        a = np.tanh(mu + np.exp(log_std) * rng.standard_normal(mu.shape).astype(np.float32))
        return self.low + (a.astype(np.float64) + 1) / 2 * (self.high - self.low).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("policy")
    ap.add_argument("--obs", help=".npy file of observations [N, obs_dim]")
    ap.add_argument("--out", help=".npy file for the actions [N, act_dim]")
    args = ap.parse_args()
    p = Policy(args.policy)
    obs = np.load(args.obs) if args.obs else np.zeros((1, p.obs_dim), dtype=np.float32)
    actions = p.act(obs)
    if args.out:
        np.save(args.out, actions)
    else:
        print("env %s, %d -> %d; action of %s: %s" % (p.env or "(none)", p.obs_dim, p.act_dim, obs[0], actions[0]))


if __name__ == "__main__":
    main()
