#!/usr/bin/python3
"""Seed-level statistics of the study's 100-episode re-evaluations.

`koopq report` scores a run by its 10-episode evaluations (the final one, or
the mean of the last N); this script does the same comparisons on the
100-episode re-evaluations committed under <dir>/<dataset>__<method>__s<seed>.json
(written by `koopq eval --policy ... --episodes 100 --seed 7000 --json ...`).
Each policy's normalized mean over its 100 episodes is one observation; a cell
is a dataset x method over seeds. For every --compare A:B and dataset where
both have at least two seeds it prints Welch's mean difference with its 95%
interval and two-sided p, and the exact one-sided Mann-Whitney p-values
(the same tests `koopq report` writes for the 10-episode scores).

Needs Debian's python3-numpy and python3-scipy (/usr/bin/python3):
  /usr/bin/python3 results/study-locomotion/eval100_stats.py \
      results/study-locomotion/w10/eval100 --compare kfcpp:cql --compare kfc:cql
"""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np
from scipy import stats

NAME = re.compile(r"^(?P<dataset>[^_]+)__(?P<method>.+)__s(?P<seed>\d+)\.json$")


def load(dirs):
    """Return {(dataset, method): {seed: normalized score}} from eval JSONs."""
    cells = {}
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "*.json")))
        if not files:
            sys.exit(f"{d}: no <dataset>__<method>__s<seed>.json files")
        for f in files:
            m = NAME.match(os.path.basename(f))
            if not m:
                sys.exit(f"{f}: name is not <dataset>__<method>__s<seed>.json")
            with open(f) as fh:
                res = json.load(fh)["result"]
            score = res.get("normalized_score")
            if score is None or not np.isfinite(score):
                sys.exit(f"{f}: no finite normalized_score")
            key = (m["dataset"], m["method"])
            seed = int(m["seed"])
            if seed in cells.setdefault(key, {}):
                sys.exit(f"{f}: {key} seed {seed} given twice")
            cells[key][seed] = score
    return cells


def welch(a, b, level):
    """Welch difference mean(a)-mean(b), its CI, t, df and two-sided p."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    diff = a.mean() - b.mean()
    se = np.sqrt(va + vb)
    if se == 0:
        return diff, (diff, diff), float("nan"), float("nan"), float("nan")
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    t = diff / se
    q = stats.t.ppf(0.5 + level / 2, df)
    p = 2 * stats.t.sf(abs(t), df)
    return diff, (diff - q * se, diff + q * se), t, df, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="directories of 100-episode eval JSONs")
    ap.add_argument("--compare", action="append", default=[], metavar="A:B",
                    help="method slugs as in the file names, e.g. kfcpp:cql (repeatable)")
    ap.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    args = ap.parse_args()
    if not 0 < args.level < 1:
        sys.exit("--level must lie in (0, 1)")
    pairs = []
    for c in args.compare:
        parts = c.split(":")
        if len(parts) != 2 or not all(parts):
            sys.exit(f"--compare {c!r}: want A:B")
        pairs.append(tuple(parts))
    cells = load(args.dirs)

    print("| dataset | method | seeds | 100-episode scores | mean ± std |")
    print("|---|---|---:|---|---:|")
    for (ds, me), by_seed in sorted(cells.items()):
        v = [by_seed[s] for s in sorted(by_seed)]
        sd = f" ± {np.std(v, ddof=1):.1f}" if len(v) > 1 else ""
        print(f"| {ds} | {me} | {len(v)} | {', '.join(f'{x:.1f}' for x in v)} | {np.mean(v):.1f}{sd} |")
    if not pairs:
        return
    pct = round(100 * args.level)
    print()
    print(f"| comparison | dataset | seeds | mean difference | {pct}% CI | df | p, two-sided | rank p, A > B | rank p, A < B |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    datasets = sorted({ds for ds, _ in cells})
    shown = 0
    for a, b in pairs:
        for ds in datasets:
            xa = list(cells.get((ds, a), {}).values())
            xb = list(cells.get((ds, b), {}).values())
            if len(xa) < 2 or len(xb) < 2:
                continue
            diff, (lo, hi), _, df, p = welch(xa, xb, args.level)
            gt = stats.mannwhitneyu(xa, xb, alternative="greater", method="exact").pvalue
            lt = stats.mannwhitneyu(xa, xb, alternative="less", method="exact").pvalue
            print(f"| {a} − {b} | {ds} | {len(xa)} vs {len(xb)} | {diff:+.1f} | [{lo:+.1f}, {hi:+.1f}] | "
                  f"{df:.1f} | {p:.3g} | {gt:.3g} | {lt:.3g} |")
            shown += 1
    if shown == 0:
        sys.exit("no comparison has two or more seeds on both sides in any dataset")


if __name__ == "__main__":
    main()
