#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-perf.py LOGDIR [FIGURE...] - where the time went, ours beside upstream.

Reads the "# perf dso", "sym" and "incl" lines that guest/roles/bench.sh
prints when `make bench` runs with MS_BENCH_PERF=1 (one
FIGURE-KERNEL-REP.console.out per run in LOGDIR), averages each module's
and each symbol's share of the samples over the runs of a kernel, and
prints per figure the modules, the symbols and the symbols counted with
their callees that have the largest shares, ours next to upstream.  The
"# perf layer" lines add, per layer of the stack (the MAD layer, the rest
of ib_core, rxe, ib_srpt, ...), the CPU time per operation, which reads
the same whatever the two kernels' rates.
Shares are of all samples of the guest, idle included: read them with
the figures of the same runs, as a kernel that does fewer operations in
the same time spends a smaller share in the code of each operation.
"""

import glob
import os
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^# perf (dso|sym|incl)\s+([0-9.]+)%\s+(.*?)\s*$")
LAYER = re.compile(r"^# perf layer ([0-9.]+)% ([0-9.]+) us/(\S+) (\S+)\s*$")
NAME = re.compile(r"^(.+)-(ours|upstream)-([0-9]+)\.console\.out$")
TOP = {"dso": 12, "sym": 40, "incl": 40}


def load(logdir, wanted):
    # shares[figure][kind][kernel][name] = list of per-run shares
    shares = defaultdict(lambda: defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))))
    runs = defaultdict(lambda: defaultdict(int))
    for path in sorted(glob.glob(os.path.join(logdir, "*.console.out"))):
        m = NAME.match(os.path.basename(path))
        if not m or (wanted and m.group(1) not in wanted):
            continue
        figure, kernel = m.group(1), m.group(2)
        seen = False
        with open(path, errors="replace") as f:
            for raw in f:
                line = raw.replace("\r", "").rstrip("\n")
                lm = LAYER.match(line)
                if lm:
                    # Kept as "name|unit" so the report can say per what.
                    name = f"{lm.group(4)}|{lm.group(3)}"
                    shares[figure]["layer"][kernel][name].append(
                        (float(lm.group(1)), float(lm.group(2))))
                    continue
                lm = LINE.match(line)
                if not lm:
                    continue
                seen = True
                kind, pct, name = lm.group(1), float(lm.group(2)), lm.group(3)
                # "sym" rows are "[k] symbol  module": keep one space.
                name = re.sub(r"\s+", " ", name)
                shares[figure][kind][kernel][name].append(pct)
        if seen:
            runs[figure][kernel] += 1
    return shares, runs


def mean_share(values, n):
    # A name below the cut-off in some runs counts 0 there.
    return sum(values) / n if n else 0.0


def report(shares, runs):
    for figure in sorted(shares):
        n_ours = runs[figure]["ours"]
        n_up = runs[figure]["upstream"]
        print(f"== {figure}: {n_ours} profiled runs of ours, "
              f"{n_up} of upstream (percent of all samples)")
        for kind in ("dso", "sym", "incl"):
            table = shares[figure][kind]
            names = set(table["ours"]) | set(table["upstream"])
            rows = []
            for name in names:
                o = mean_share(table["ours"].get(name, []), n_ours)
                u = mean_share(table["upstream"].get(name, []), n_up)
                rows.append((max(o, u), o, u, name))
            rows.sort(reverse=True)
            what = {"dso": "module", "sym": "symbol",
                    "incl": "symbol with its callees"}[kind]
            print(f"   {'ours':>7} {'upstream':>8} {'diff':>7}  {what}")
            for _, o, u, name in rows[:TOP[kind]]:
                print(f"   {o:7.2f} {u:8.2f} {o - u:+7.2f}  {name}")
        report_layers(shares[figure]["layer"], n_ours, n_up)
        print()


def report_layers(table, n_ours, n_up):
    """Each layer's share of all samples and CPU per operation."""
    names = set(table["ours"]) | set(table["upstream"])
    if not names:
        return
    unit = next(iter(names)).split("|")[1]
    print(f"   {'ours':>7} {'upstream':>8} {'ours':>9} {'upstream':>9}"
          f" {'ratio':>6}  layer: % of all samples, then us of CPU per"
          f" {unit} (ratio upstream/ours)")
    rows = []
    for name in names:
        o = table["ours"].get(name, [])
        u = table["upstream"].get(name, [])
        o_pct = mean_share([v[0] for v in o], n_ours)
        u_pct = mean_share([v[0] for v in u], n_up)
        o_us = mean_share([v[1] for v in o], n_ours)
        u_us = mean_share([v[1] for v in u], n_up)
        rows.append((max(o_us, u_us), o_pct, u_pct, o_us, u_us,
                     name.split("|")[0]))
    rows.sort(reverse=True)
    for _, o_pct, u_pct, o_us, u_us, layer in rows:
        ratio = f"{u_us / o_us:6.2f}" if o_us > 0 else f"{'-':>6}"
        print(f"   {o_pct:7.2f} {u_pct:8.2f} {o_us:9.2f} {u_us:9.2f}"
              f" {ratio}  {layer}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    shares, runs = load(sys.argv[1], set(sys.argv[2:]))
    if not shares:
        sys.exit(f"bench-perf.py: no perf lines in {sys.argv[1]}")
    report(shares, runs)


if __name__ == "__main__":
    main()
