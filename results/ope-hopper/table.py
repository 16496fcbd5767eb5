#!/usr/bin/env python3
"""FQE vs simulator table for docs/ope.md: reads fqe JSONs (one per policy,
named <study name>.json) from the directory given, the 100-episode simulator
returns from results/study-locomotion/eval100/hopper-medium__<name>.json, and
prints a markdown table, Spearman's rho and the regret of the FQE-best pick."""
import json, math, sys, glob, os

HOP_RANDOM, HOP_EXPERT = -20.272305, 3234.3
norm = lambda r: 100 * (r - HOP_RANDOM) / (HOP_EXPERT - HOP_RANDOM)

def ranks(x):
    idx = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and x[idx[j + 1]] == x[idx[i]]:
            j += 1
        for k in range(i, j + 1):
            r[idx[k]] = (i + j) / 2 + 1
        i = j + 1
    return r

def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy)

def main(directory):
    rows = []
    for f in sorted(glob.glob(os.path.join(directory, "*.json"))):
        name = os.path.basename(f)[:-5]
        if name.startswith("seed1-"):
            continue
        fq = json.load(open(f))
        sim = json.load(open(f"results/study-locomotion/eval100/hopper-medium__{name}.json"))["result"]
        rows.append((name, fq["result"]["value"], fq["undiscounted"], fq["normalized"], sim["mean_return"], sim["std_return"]))
    rows.sort(key=lambda r: r[4])
    print("| policy | simulator return (100 ep.) | simulator normalized | FQE V̂ (discounted) | FQE rescaled return | FQE normalized |")
    print("|---|---|---|---|---|---|")
    for n, v, u, z, m, s in rows:
        print(f"| {n} | {m:.1f} ± {s:.1f} | {norm(m):.1f} | {v:.2f} | {u:.1f} | {z:.1f} |")
    fqe = [r[1] for r in rows]
    sim = [r[4] for r in rows]
    rho = spearman(fqe, sim)
    best = max(rows, key=lambda r: r[4])
    pick = max(rows, key=lambda r: r[1])
    print(f"\npolicies: {len(rows)}; Spearman rho(FQE V, simulator return) = {rho:.3f}")
    print(f"true best: {best[0]} ({best[4]:.1f}, normalized {norm(best[4]):.1f}); FQE-best: {pick[0]} ({pick[4]:.1f}, normalized {norm(pick[4]):.1f})")
    print(f"regret of the FQE-best pick: {best[4]-pick[4]:.1f} return = {norm(best[4])-norm(pick[4]):.1f} normalized points")
    mean_sim = sum(sim) / len(sim)
    print(f"(a uniformly random pick among these: expected regret {best[4]-mean_sim:.1f} return = {norm(best[4])-norm(mean_sim):.1f} points)")


if __name__ == "__main__":
    main(sys.argv[1])
