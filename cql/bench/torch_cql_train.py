#!/usr/bin/python3
"""Independent PyTorch trainer for the paper's CQL protocol on a D4RL-style
HDF5 file, written to tell a fault in koopq from a property of the protocol:
if this trainer, sharing no code with koopq, shows the same critic behaviour
on the same data (alpha' falling, Q running away, the critic loss blowing up),
the behaviour belongs to the protocol, not to koopq.

The update is the KFC authors' CQL(H) (see cql.Learner.Step): twin 2x256 ReLU
critics with Polyak targets (tau 5e-3), a 2x256 tanh-Gaussian actor (log std
clamped to [-20, 2]), batch 256, fixed entropy weight 0.2 with the entropy term
in the target, logsumexp over 10 uniform + 10 pi(s) + 10 pi(s') actions with
importance weights, min-Q weight 10, and either the Lagrange multiplier
alpha'(w*gap - tau) with tau = 10 (Adam 3e-4 on log alpha') or a fixed weight
(--no-lagrange). The first --bc-steps actor updates are behaviour cloning,
alpha*log pi(a~|s) - log pi(a_data|s). Data as d4rl.qlearning_dataset with
terminate_on_end=False: rows with timeouts set and the last row are dropped,
s' is the next row's observation. No evaluation (no simulator here): the
critic's statistics tell the story.

  torch_cql_train.py --data walker2d-medium-v2.hdf5 --steps 20000 --out m.jsonl

Each line of --out holds the means over the last --log-every steps of the
same statistics koopq logs (alpha_prime, cql_gap, q_data, q_random, q_policy,
q_loss, log_pi, actor_loss).
"""
import argparse
import json
import math
import platform
import subprocess
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F



def mlp(sizes):
    """A ReLU MLP with the given layer sizes (no activation after the last)."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def load(path):
    with h5py.File(path, "r") as f:
        obs = f["observations"][:].astype(np.float32)
        act = f["actions"][:].astype(np.float32)
        rew = f["rewards"][:].astype(np.float32)
        term = f["terminals"][:].astype(bool)
        tout = f["timeouts"][:].astype(bool)
    keep = ~tout[:-1]
    idx = np.nonzero(keep)[0]
    return (torch.from_numpy(obs[idx]), torch.from_numpy(act[idx]), torch.from_numpy(rew[idx]),
            torch.from_numpy(obs[idx + 1]), torch.from_numpy(term[idx].astype(np.float32)))


class Trainer:
    """The CQL(H) learner on data = (obs [N,S], act [N,A], rew [N], next obs
    [N,S], done [N]) tensors; hidden are the hidden layer widths of the actor
    and both critics (the paper: 256, 256)."""

    def __init__(self, data, seed, lagrange, weight, thresh, bc_steps, hidden=(256, 256)):
        torch.manual_seed(seed)
        self.obs, self.act, self.rew, self.nxt, self.done = data
        self.S, self.A = self.obs.shape[1], self.act.shape[1]
        S, A, H = self.S, self.A, list(hidden)
        self.actor = mlp([S] + H + [2 * A])
        self.q = [mlp([S + A] + H + [1]) for _ in range(2)]
        for net in [self.actor] + self.q:
            for m in net:
                if isinstance(m, torch.nn.Linear):
                    torch.nn.init.xavier_uniform_(m.weight)
                    torch.nn.init.zeros_(m.bias)
        self.qt = [mlp([S + A] + H + [1]) for _ in range(2)]
        for t, q in zip(self.qt, self.q):
            t.load_state_dict(q.state_dict())
            t.requires_grad_(False)
        self.opt_actor = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.opt_q = torch.optim.Adam([p for q in self.q for p in q.parameters()], lr=3e-4)
        self.log_alpha_prime = torch.zeros(1, requires_grad=True)
        self.opt_ap = torch.optim.Adam([self.log_alpha_prime], lr=3e-4)
        self.alpha, self.gamma, self.tau, self.N, self.B = 0.2, 0.99, 5e-3, 10, 256
        self.lagrange, self.weight, self.thresh, self.bc_steps = lagrange, weight, thresh, bc_steps
        self.t = 0

    def dist(self, obs):
        mu, log_std = self.actor(obs).chunk(2, -1)
        return mu, log_std.clamp(-20, 2).exp()

    @staticmethod
    def logp_u(u, mu, std, a):
        lp = (-0.5 * ((u - mu) / std) ** 2 - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
        return lp - torch.log(1 - a * a + 1e-6).sum(-1)

    def sample(self, mu, std, n):
        if n > 1:
            mu, std = mu.repeat_interleave(n, 0), std.repeat_interleave(n, 0)
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        return a, self.logp_u(u, mu, std, a)

    def step(self):
        B, N, A = self.B, self.N, self.A
        idx = torch.randint(0, self.obs.shape[0], (B,))
        s, a, r, s2, d = self.obs[idx], self.act[idx], self.rew[idx], self.nxt[idx], self.done[idx]
        mu, std = self.dist(s)
        a_pi, logp_pi = self.sample(mu, std, 1)
        with torch.no_grad():
            mu2, std2 = self.dist(s2)
            a_nx, logp_nx = self.sample(mu2, std2, 1)
            tq = torch.min(*[t(torch.cat([s2, a_nx], 1)).squeeze(1) for t in self.qt])
            y = r + self.gamma * (1 - d) * (tq - self.alpha * logp_nx)
            a_cur, logp_cur = self.sample(mu.detach(), std.detach(), N)
            a_nxt, logp_nxt = self.sample(mu2, std2, N)
            a_rand = torch.rand(B * N, A) * 2 - 1
            s_rep = s.repeat_interleave(N, 0)
            x = torch.cat([torch.cat([s, a], 1), torch.cat([s_rep, a_rand], 1),
                           torch.cat([s_rep, a_cur], 1), torch.cat([s_rep, a_nxt], 1)], 0)
        if self.t < self.bc_steps:
            ac = a.clamp(-1 + 1e-6, 1 - 1e-6)
            u = torch.atanh(ac)
            actor_loss = (self.alpha * logp_pi - self.logp_u(u, mu, std, ac)).mean()
        else:
            q_pi = torch.min(*[q(torch.cat([s, a_pi], 1)).squeeze(1) for q in self.q])
            actor_loss = (self.alpha * logp_pi - q_pi).mean()
        alpha_prime = self.log_alpha_prime.exp().clamp(0, 1e6) if self.lagrange else torch.ones(1)
        log_density = A * math.log(0.5)
        q_loss, gaps, stats = 0, [], []
        for q in self.q:
            out = q(x).squeeze(1)
            q_data = out[:B]
            q_rand = out[B:B + B * N].view(B, N)
            q_cur = out[B + B * N:B + 2 * B * N].view(B, N)
            q_nxt = out[B + 2 * B * N:].view(B, N)
            cat = torch.cat([q_rand - log_density, q_nxt - logp_nxt.view(B, N), q_cur - logp_cur.view(B, N)], 1)
            gap = torch.logsumexp(cat, 1).mean() - q_data.mean()
            gaps.append(gap)
            pen = self.weight * gap
            if self.lagrange:
                pen = alpha_prime.detach() * (pen - self.thresh)
            q_loss = q_loss + F.mse_loss(q_data, y) + pen
            stats.append((q_data.mean().item(), q_rand.mean().item(), q_cur.mean().item()))
        actor_params = list(self.actor.parameters())
        for p, g in zip(actor_params, torch.autograd.grad(actor_loss, actor_params)):
            p.grad = g
        self.opt_q.zero_grad()
        q_loss.backward()
        if self.lagrange:
            ap_loss = -0.5 * sum(alpha_prime * (self.weight * g.detach() - self.thresh) for g in gaps)
            self.opt_ap.zero_grad()
            ap_loss.backward()
            self.opt_ap.step()
        self.opt_q.step()
        self.opt_actor.step()
        with torch.no_grad():
            for t, q in zip(self.qt, self.q):
                for pt, p in zip(t.parameters(), q.parameters()):
                    pt.lerp_(p, self.tau)
        self.t += 1
        return {
            "alpha_prime": alpha_prime.item(), "cql_gap": 0.5 * sum(g.item() for g in gaps),
            "q_data": 0.5 * (stats[0][0] + stats[1][0]), "q_random": 0.5 * (stats[0][1] + stats[1][1]),
            "q_policy": 0.5 * (stats[0][2] + stats[1][2]), "q_loss": q_loss.item(),
            "log_pi": logp_pi.mean().item(), "actor_loss": actor_loss.item(),
        }


def git_commit():
    """The koopq commit this script ran from, or "unknown" outside a checkout."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=__file__.rsplit("/", 1)[0] or ".").stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="D4RL-style HDF5 file")
    ap.add_argument("--steps", type=int, default=20000, help="gradient steps, BC warm-up included")
    ap.add_argument("--bc-steps", type=int, default=4000, help="behaviour-cloning actor steps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-lagrange", action="store_true", help="fixed min-Q weight, no alpha'")
    ap.add_argument("--min-q-weight", type=float, default=10.0)
    ap.add_argument("--thresh", type=float, default=10.0, help="Lagrange threshold tau")
    ap.add_argument("--log-every", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", required=True, help="JSON lines, one per --log-every steps")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tr = Trainer(load(args.data), args.seed, not args.no_lagrange, args.min_q_weight, args.thresh, args.bc_steps)
    acc, t0 = {}, time.perf_counter()
    with open(args.out, "w") as out:
        out.write(json.dumps({"torch": torch.__version__, "args": vars(args), "rows": tr.obs.shape[0],
                              "version": git_commit(), "machine": platform.platform(),
                              "cpu": platform.processor() or platform.machine()}) + "\n")
        for i in range(1, args.steps + 1):
            for k, v in tr.step().items():
                acc[k] = acc.get(k, 0.0) + v
            if i % args.log_every == 0:
                row = {"step": i, "wall_seconds": round(time.perf_counter() - t0, 1)}
                row.update({k: v / args.log_every for k, v in acc.items()})
                out.write(json.dumps(row) + "\n")
                out.flush()
                acc = {}


if __name__ == "__main__":
    main()
