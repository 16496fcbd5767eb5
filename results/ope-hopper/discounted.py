#!/usr/bin/env python3
"""FQE (γ = 0.99, one fit, seed 0: results/ope-hopper/*.json) against the
simulator's discounted return (γ = 0.99, 100 episodes, seed 7000:
results/ope-hopper/sim-g99/*.json, from `koopq eval --gamma 0.99`), for
docs/ope.md. Standard library only; run from the repository root."""
import glob, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import spearman  # noqa: E402 (the same rank code as the γ tables)

rows = []
for f in sorted(glob.glob("results/ope-hopper/sim-g99/*.json")):
    n = os.path.basename(f)[:-5]
    sim = json.load(open(f))["result"]
    fq = json.load(open(f"results/ope-hopper/{n}.json"))["result"]["value"]
    rows.append((n, sim["mean_return"], sim["discounted_mean_return"], fq))
rows.sort(key=lambda r: r[2])
print("| policy | simulator return (100 ep.) | simulator discounted return, γ 0.99 | FQE V̂ (seed 0) | FQE − truth |")
print("|---|---|---|---|---|")
for n, m, d, fq in rows:
    print(f"| {n} | {m:.1f} | {d:.2f} | {fq:.2f} | {fq - d:+.2f} |")
d = [r[2] for r in rows]; u = [r[1] for r in rows]; q = [r[3] for r in rows]
print(f"\nSpearman rho(discounted truth, undiscounted truth) = {spearman(d, u):.3f}")
print(f"Spearman rho(FQE V, discounted truth) = {spearman(q, d):.3f}")
print(f"FQE - truth: mean {sum(a - b for a, b in zip(q, d)) / len(q):+.2f}, "
      f"largest |error| {max(abs(a - b) for a, b in zip(q, d)):.2f}; truth spans {min(d):.2f}-{max(d):.2f}")
