#!/usr/bin/python3
"""PyTorch reference for koopq's CQL speed figure: torch_cql_train.Trainer's
CQL(H) update, the same as cql.Learner.Step, after the behaviour-cloning
warm-up, with the paper's
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
import sys
import time

import torch

from torch_cql_train import Trainer

S, A = 11, 3


def random_cql(hidden, rows=10000, seed=0):
    """A Trainer past its BC warm-up on Hopper-sized random data."""
    torch.manual_seed(seed)
    data = (torch.randn(rows, S), torch.rand(rows, A) * 2 - 1, torch.randn(rows), torch.randn(rows, S),
            (torch.rand(rows) < 0.01).float())
    return Trainer(data, seed, lagrange=True, weight=10.0, thresh=10.0, bc_steps=0, hidden=hidden)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--hidden", default="256,256", help="hidden sizes (paper 256,256; CORL 256,256,256)")
    ap.add_argument("--steps", type=int, default=40, help="timed steps when not serving")
    ap.add_argument("--serve", action="store_true", help="line protocol for interleaved timing")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cql = random_cql([int(h) for h in args.hidden.split(",")])
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
