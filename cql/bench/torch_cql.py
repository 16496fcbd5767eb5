#!/usr/bin/python3
"""PyTorch reference for koopq's CQL speed figure: the same CQL(H) update as
cql.Learner.Step after the behaviour-cloning warm-up, with the paper's
configuration (twin 2x256 ReLU critics and a 2x256 tanh-Gaussian actor,
batch 256, 10 uniform + 10 pi(s) + 10 pi(s') logsumexp samples per state,
Lagrange alpha', fixed entropy weight 0.2 with entropy backup, Adam,
Polyak targets) on Hopper-sized random data (obs 11, act 3), CPU float32.

Modes:
  torch_cql.py --steps 40            time 40 steps, print steps/s
  torch_cql.py --serve               after "ready", read an integer k per line,
                                     run k steps, print their wall seconds
                                     (koopq's BenchmarkCQLVersusTorch interleaves
                                     these with its own steps)
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

S, A = 11, 3


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class CQL:
    def __init__(self, hidden, batch=256, n=10, seed=0):
        torch.manual_seed(seed)
        self.B, self.N = batch, n
        self.actor = mlp([S] + hidden + [2 * A])
        self.q = [mlp([S + A] + hidden + [1]) for _ in range(2)]
        self.qt = [mlp([S + A] + hidden + [1]) for _ in range(2)]
        for t, q in zip(self.qt, self.q):
            t.load_state_dict(q.state_dict())
            t.requires_grad_(False)
        self.opt_actor = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.opt_q = torch.optim.Adam([p for q in self.q for p in q.parameters()], lr=3e-4)
        self.log_alpha_prime = torch.zeros(1, requires_grad=True)
        self.opt_ap = torch.optim.Adam([self.log_alpha_prime], lr=3e-4)
        self.alpha, self.gamma, self.tau = 0.2, 0.99, 5e-3
        self.min_q_weight, self.thresh = 10.0, 10.0
        rows = 10000
        self.obs = torch.randn(rows, S)
        self.act = torch.rand(rows, A) * 2 - 1
        self.rew = torch.randn(rows)
        self.nxt = torch.randn(rows, S)
        self.done = (torch.rand(rows) < 0.01).float()

    def dist(self, obs):
        mu, log_std = self.actor(obs).chunk(2, -1)
        return mu, log_std.clamp(-20, 2).exp()

    @staticmethod
    def sample(mu, std, n):
        # n tanh-Gaussian samples per row: [rows*n, A] and log-probs [rows*n]
        if n > 1:
            mu, std = mu.repeat_interleave(n, 0), std.repeat_interleave(n, 0)
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - torch.log(1 - a * a + 1e-6).sum(-1)
        return a, logp

    def step(self):
        B, N = self.B, self.N
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
        # actor loss with the pre-update critics
        q_pi = torch.min(*[q(torch.cat([s, a_pi], 1)).squeeze(1) for q in self.q])
        actor_loss = (self.alpha * logp_pi - q_pi).mean()
        alpha_prime = self.log_alpha_prime.exp().clamp(0, 1e6)
        log_density = A * math.log(0.5)
        q_loss, gaps = 0, []
        for q in self.q:
            out = q(x).squeeze(1)
            q_data = out[:B]
            q_rand = out[B:B + B * N].view(B, N)
            q_cur = out[B + B * N:B + 2 * B * N].view(B, N)
            q_nxt = out[B + 2 * B * N:].view(B, N)
            cat = torch.cat([q_rand - log_density, q_nxt - logp_nxt.view(B, N), q_cur - logp_cur.view(B, N)], 1)
            gap = torch.logsumexp(cat, 1).mean() - q_data.mean()
            gaps.append(gap.detach())
            q_loss = q_loss + F.mse_loss(q_data, y) + alpha_prime.detach() * self.min_q_weight * (gap - self.thresh)
        ap_loss = -0.5 * sum(alpha_prime * self.min_q_weight * (g - self.thresh) for g in gaps)
        # actor gradients only (no critic weight gradients from this loss, as in koopq)
        actor_params = list(self.actor.parameters())
        for p, g in zip(actor_params, torch.autograd.grad(actor_loss, actor_params)):
            p.grad = g
        self.opt_q.zero_grad()
        q_loss.backward()
        self.opt_ap.zero_grad()
        ap_loss.backward()
        self.opt_q.step()
        self.opt_actor.step()
        self.opt_ap.step()
        with torch.no_grad():
            for t, q in zip(self.qt, self.q):
                for pt, p in zip(t.parameters(), q.parameters()):
                    pt.lerp_(p, self.tau)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--hidden", default="256,256", help="hidden sizes (paper 256,256; CORL 256,256,256)")
    ap.add_argument("--steps", type=int, default=40, help="timed steps when not serving")
    ap.add_argument("--serve", action="store_true", help="line protocol for interleaved timing")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cql = CQL([int(h) for h in args.hidden.split(",")])
    for _ in range(3):
        cql.step()
    if not args.serve:
        t = time.perf_counter()
        for _ in range(args.steps):
            cql.step()
        dt = time.perf_counter() - t
        print(f"torch {torch.__version__} threads={args.threads}: {args.steps / dt:.2f} steps/s")
        return
    print(f"ready torch {torch.__version__} threads={args.threads}", flush=True)
    for line in sys.stdin:
        k = int(line)
        t = time.perf_counter()
        for _ in range(k):
            cql.step()
        print(f"{time.perf_counter() - t:.6f}", flush=True)


if __name__ == "__main__":
    main()
