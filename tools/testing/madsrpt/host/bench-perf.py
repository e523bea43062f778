#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-perf.py LOGDIR [--objs KERNEL=BUILDDIR]... [FIGURE...] - where the time
went, ours beside upstream.

Reads the "# perf dso", "sym" and "incl" lines that guest/roles/bench.sh
prints when `make bench` runs with MS_BENCH_PERF=1 (one
FIGURE-KERNEL-REP.console.out per run in LOGDIR), averages each module's
and each symbol's share of the samples over the runs of a kernel, and
prints per figure the modules, the symbols and the symbols counted with
their callees that have the largest shares, ours next to upstream.

The "# perf samples N DSO SYMBOL" and "# perf window NS OPS UNIT" lines,
all samples of the window the figure's operations were counted in, give
the CPU time per operation of each layer of the stack, which reads the
same whatever the two kernels' rates.  A layer is a module, or for
ib_core a set of its source files: each symbol of ib_core is given to the
object file of KERNEL's build (--objs) that defines it, as `nm` lists
them, so the MAD layer is all that mad.c, agent.c, smi.c, mad_rmpp.c
(upstream) or mad_*.c (ours) define, whatever the functions are called.
Functions inlined into another are counted in the file of the one they
are inlined into.  A symbol no object defines (a module without --objs)
counts for its module.
Shares are of all samples of the guest, idle included: read them with
the figures of the same runs, as a kernel that does fewer operations in
the same time spends a smaller share in the code of each operation.
"""

import glob
import os
import re
import subprocess
import sys
from collections import defaultdict

LINE = re.compile(r"^# perf (dso|sym|incl)\s+([0-9.]+)%\s+(.*?)\s*$")
SAMPLES = re.compile(r"^# perf samples ([0-9]+) (\S+) (\S+)\s*$")
WINDOW = re.compile(r"^# perf window ([0-9]+) ([0-9]+) (\S+)\s*$")
IDLE = re.compile(r"^(default_idle|pv_native_safe_halt|native_safe_halt|"
                  r"cpu_idle_poll|acpi_idle_do_entry|default_idle_call)$")
# The object files of ib_core that make its MAD layer, in either kernel.
MAD_FILES = re.compile(r"^(mad|agent|smi|mad_rmpp|mad_[a-z_]+)\.o$")
NAME = re.compile(r"^(.+)-(ours|upstream)-([0-9]+)\.console\.out$")
TOP = {"dso": 12, "sym": 40, "incl": 40}


def load(logdir, wanted):
    # shares[figure][kind][kernel][name] = list of per-run shares
    shares = defaultdict(lambda: defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))))
    runs = defaultdict(lambda: defaultdict(int))
    # profiles[figure][kernel] = one {"ns", "ops", "unit", "syms"} a run
    profiles = defaultdict(lambda: defaultdict(list))
    for path in sorted(glob.glob(os.path.join(logdir, "*.console.out"))):
        m = NAME.match(os.path.basename(path))
        if not m or (wanted and m.group(1) not in wanted):
            continue
        figure, kernel = m.group(1), m.group(2)
        seen = False
        run = None
        with open(path, errors="replace") as f:
            for raw in f:
                line = raw.replace("\r", "").rstrip("\n")
                lm = WINDOW.match(line)
                if lm:
                    run = {"ns": int(lm.group(1)), "ops": int(lm.group(2)),
                           "unit": lm.group(3), "syms": []}
                    profiles[figure][kernel].append(run)
                    continue
                lm = SAMPLES.match(line)
                if lm and run is not None:
                    run["syms"].append((int(lm.group(1)), lm.group(2),
                                        lm.group(3)))
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
    return shares, runs, profiles


def mean_share(values, n):
    # A name below the cut-off in some runs counts 0 there.
    return sum(values) / n if n else 0.0


def report(shares, runs, profiles, files):
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
        report_layers(figure, profiles[figure], files)
        print()


def symbol_files(builddir):
    """Map each text symbol of ib_core to the object file defining it."""
    where = {}
    mod = os.path.join(builddir, "drivers/infiniband/core/ib_core.mod")
    try:
        with open(mod) as f:
            objs = f.read().split()
    except OSError:
        return where
    for obj in objs:
        path = obj if os.path.isabs(obj) else os.path.join(builddir, obj)
        try:
            out = subprocess.run(["nm", "--defined-only", path],
                                 capture_output=True, text=True,
                                 check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                # A static name in two files: neither can claim it.
                name = parts[2]
                base = os.path.basename(path)
                where[name] = base if where.get(name, base) == base else "?"
    return where


def layer_of(dso, sym, files):
    """The layer one symbol's samples count for, and its file if known."""
    if IDLE.match(sym):
        return "idle", None
    if dso == "[ib_core]":
        obj = files.get(sym) or files.get(re.sub(r"\..*$", "", sym))
        if obj and obj != "?":
            return ("mad-layer" if MAD_FILES.match(obj) else "ib_core",
                    obj[:-2] + ".c")
        return "ib_core", "(unknown file)"
    if dso.startswith("[") and dso.endswith("]"):
        return dso[1:-1], None
    return "other", None


def attribute(run, files):
    """Per layer and per ib_core file: samples of one profiled run."""
    layers = defaultdict(int)
    srcs = defaultdict(int)
    total = 0
    for n, dso, sym in run["syms"]:
        layer, src = layer_of(dso, sym, files)
        layers[layer] += n
        if src:
            srcs[src] += n
        total += n
    return layers, srcs, total


def report_layers(figure, runs, files):
    """Each layer's and each ib_core file's CPU per operation."""
    per = {}
    unit = None
    for kernel in ("ours", "upstream"):
        sums = defaultdict(list)
        for run in runs.get(kernel, []):
            layers, srcs, total = attribute(run, files.get(kernel, {}))
            if not total or run["ops"] <= 0:
                continue
            unit = run["unit"]
            # A sample stands for the window's CPU time over all samples.
            us = run["ns"] / total / 1000 / run["ops"]
            for name, n in layers.items():
                sums["layer " + name].append(n * us)
            for name, n in srcs.items():
                sums["file " + name].append(n * us)
            sums["count"].append(1)
        per[kernel] = sums
    if not unit:
        return
    n = {k: len(per[k]["count"]) for k in per}
    print(f"   CPU per {unit} (us), in the window the {unit}s were counted"
          f" in: {n['ours']} runs of ours, {n['upstream']} of upstream")
    print(f"   {'ours':>9} {'upstream':>9} {'ratio':>6}  layer or ib_core"
          f" source file (ratio upstream/ours)")
    for kind in ("layer", "file"):
        names = {k.split(" ", 1)[1] for s in per.values() for k in s
                 if k.startswith(kind + " ")}
        rows = []
        for name in names:
            o = mean_share(per["ours"].get(kind + " " + name, []),
                           n["ours"])
            u = mean_share(per["upstream"].get(kind + " " + name, []),
                           n["upstream"])
            rows.append((max(o, u), o, u, name))
        rows.sort(reverse=True)
        for _, o, u, name in rows[:20 if kind == "file" else 40]:
            if max(o, u) < 0.005:
                continue
            ratio = f"{u / o:6.2f}" if o > 0 else f"{'-':>6}"
            print(f"   {o:9.2f} {u:9.2f} {ratio}  {kind} {name}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    logdir, files, wanted = args[0], {}, set()
    rest = iter(args[1:])
    for a in rest:
        if a == "--objs":
            kernel, _, builddir = next(rest, "").partition("=")
            files[kernel] = symbol_files(builddir)
        else:
            wanted.add(a)
    shares, runs, profiles = load(logdir, wanted)
    if not shares:
        sys.exit(f"bench-perf.py: no perf lines in {logdir}")
    report(shares, runs, profiles, files)


if __name__ == "__main__":
    main()
