#!/usr/bin/env python3
"""Episode loop against `koopq serve`, standard library only.

Start a server, then run this client:

    koopq serve --policy runs/hopper-kfc/0 --addr 127.0.0.1:8080
    python3 examples/python/serve_client.py --url http://127.0.0.1:8080 --episodes 3

There is no simulator in Python here, so the "environment" is a tiny fake
linear dynamics of the policy's observation and action sizes
(s' = 0.9 s + 0.1 B a + noise, reward -|s|^2); swap in a real one (e.g. a
Gymnasium env) by replacing FakeEnv. Each step asks the server for the
action of the current observation; several parallel environments can share
one request by sending several rows. The last line printed is a JSON
summary.
"""

import argparse
import json
import math
import random
import sys
import urllib.error
import urllib.request


class PolicyClient:
    """Talks to a koopq policy server."""

    def __init__(self, url, timeout=10.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body, allow_nan=False).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            # Bad requests come back 4xx with {"error": "..."}.
            try:
                msg = json.load(e).get("error", "")
            except ValueError:
                msg = ""
            raise RuntimeError(f"{method} {path}: HTTP {e.code}: {msg}") from None

    def healthy(self):
        return self._call("GET", "/healthz").get("status") == "ok"

    def info(self):
        return self._call("GET", "/v1/policy")

    def act(self, observations, log_std=False):
        """Actions (env units) for a list of observation rows."""
        body = {"observations": observations}
        if log_std:
            body["log_std"] = True
            r = self._call("POST", "/v1/act", body)
            return r["actions"], r["log_std"]
        return self._call("POST", "/v1/act", body)["actions"]


class FakeEnv:
    """A stand-in simulator: stable linear dynamics with Gaussian noise."""

    def __init__(self, obs_dim, act_dim, low, high, seed, horizon):
        self.rng = random.Random(seed)
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.low, self.high = low, high
        self.horizon = horizon
        self.B = [[self.rng.uniform(-1, 1) for _ in range(act_dim)] for _ in range(obs_dim)]

    def reset(self):
        self.t = 0
        self.s = [self.rng.gauss(0, 1) for _ in range(self.obs_dim)]
        return list(self.s)

    def step(self, action):
        if len(action) != self.act_dim:
            raise ValueError(f"action has {len(action)} values, want {self.act_dim}")
        for a, lo, hi in zip(action, self.low, self.high):
            if not (math.isfinite(a) and lo <= a <= hi):
                raise ValueError(f"action {a} outside [{lo}, {hi}]")
        self.s = [0.9 * s + 0.1 * sum(b * a for b, a in zip(row, action)) + 0.01 * self.rng.gauss(0, 1)
                  for s, row in zip(self.s, self.B)]
        self.t += 1
        reward = -sum(s * s for s in self.s)
        return list(self.s), reward, self.t >= self.horizon


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080", help="server address")
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50, help="steps per episode")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    client = PolicyClient(args.url)
    if not client.healthy():
        sys.exit("server is not healthy")
    info = client.info()
    print(f"policy {info['path']} (env {info['env'] or '?'}, {info['obs_dim']} -> {info['act_dim']}, "
          f"sha256 {info['sha256'][:12]}..., koopq {info['koopq_version']})")

    env = FakeEnv(info["obs_dim"], info["act_dim"], info["action_low"], info["action_high"],
                  args.seed, args.steps)
    returns, steps = [], 0
    for ep in range(args.episodes):
        obs, done, ret = env.reset(), False, 0.0
        while not done:
            [action] = client.act([obs])
            obs, reward, done = env.step(action)
            ret += reward
            steps += 1
        returns.append(ret)
        print(f"episode {ep}: return {ret:.4f}")

    # Rows are answered independently: a batch of the same observation
    # gives the answer of one row, bit for bit (JSON round-trips floats).
    probe = env.reset()
    single = client.act([probe])[0]
    batch, log_std = client.act([probe, probe, probe], log_std=True)
    consistent = all(row == single for row in batch)

    # A bad request is a 4xx with a JSON error, not a crash.
    try:
        client.act([probe[:-1]])
        bad_request = "accepted"
    except RuntimeError as e:
        bad_request = str(e)

    print(json.dumps({"episodes": args.episodes, "steps": steps, "returns": returns,
                      "batch_consistent": consistent, "log_std": log_std[0],
                      "bad_request": bad_request}))
    if not consistent:
        sys.exit("batched answers differ from a single row's")


if __name__ == "__main__":
    main()
