#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py RESULTS.CSV OUTDIR - the table of `make bench`.

Reads what host/bench.sh collected (figure,kernel,rep,metric,value,unit)
and prints, per metric: the median of our kernel and of pristine 6.12 with
the range of their runs, the ratio ours/upstream of the medians, the range
of the ratios of the runs paired by repetition (each pair booted back to
back), and the transport ceiling where there is one.  The rxe figures run
the same code on both kernels (rdma_rxe and perftest, no MAD layer): the
spread of their ratios is how far two identical kernels read apart in
this run (taken either way from 1), the noise band.  A figure is called
"ours" or "upstream" only when the ratio of its medians and every one of
its pair ratios lie beyond that band, on the same side; otherwise it is
"inside the noise", not a result.  Ratios are turned
so that above 1 always means ours is better (for a cost such as CPU time
per I/O, the ratio is upstream/ours).  A ratio is never NaN: 0 against 0
reads 1, and a 0 on one side only reads inf (ours better) or 0 (upstream
better); the table then prints the medians, "0 vs 12", instead of a
ratio.  Writes OUTDIR/summary.json (inf there as the string "inf") and,
when matplotlib is there, OUTDIR/<metric>.png with every run of both
kernels.
"""

import csv
import json
import math
import os
import statistics
import sys

# Metrics where less is better.
COSTS = ("us/IO", "ns/exchange", "retries/s", "timeouts/s", "queued",
         "ms", "SMPs", "us/SMP", "KiB/port", "us", "timeouts", "retries",
         "hosts")
# Counts per exchange or per I/O (the srp figures' ctxsw/IO and the
# "-cost" figures): less is better.
COST_COUNTS = ("allocs/", "pages/", "wakeups/", "ctxsw/", "works/",
               "lockwaits/")
# The rxe figure that bounds each family of figures, the first prefix that
# matches: MADs and RMPP segments go over UD; an SRP read is moved by the
# target's RDMA WRITEs, a write by its RDMA READs.
CEILINGS = {"mad-rr": "rxe-ud-256", "kmad-": "rxe-ud-256",
            "rmpp-": "rxe-ud-256", "srp-write": "rxe-rc-read-64k",
            "srp-randwrite": "rxe-rc-read-64k", "srp-": "rxe-rc-write-64k"}


def load(path):
    runs = {}
    units = {}
    owner = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = row["metric"]
            # Two figures reporting one metric would mix their runs.
            if owner.setdefault(key, row["figure"]) != row["figure"]:
                sys.exit(f"bench-report: {key} comes from both "
                         f"{owner[key]} and {row['figure']}")
            units[key] = row["unit"]
            runs.setdefault(key, {}).setdefault(row["kernel"], {})[
                int(row["rep"])] = float(row["value"])
    return runs, units


def is_cost(unit):
    return unit in COSTS or unit.startswith(COST_COUNTS)


def better_ratio(ours, upstream, unit):
    """ours against upstream, above 1 when ours is better; never NaN.

    0 against 0 is 1 (equal); a 0 on one side only is inf when that makes
    ours better (a cost of 0 for ours, a rate of 0 for upstream), else 0.
    """
    if is_cost(unit):
        better, worse = upstream, ours
    else:
        better, worse = ours, upstream
    if worse == 0:
        return 1.0 if better == 0 else math.inf
    return better / worse


# Figures whose code is the same in both kernels: their ratios are noise.
CONTROLS = ("rxe-",)


def control_band(rows):
    """How far from 1 the same-code figures' ratios strayed, either way.

    Identical code reads 1 but for noise, which may fall on either side:
    a control at 0.87 says 1.15 is as likely, so the band is symmetric in
    the ratio (from the smallest r or 1/r to the largest).
    """
    seen = []
    for r in rows:
        if r["metric"].startswith(CONTROLS) and "ratio" in r:
            seen.append(r["ratio"])
            seen.extend(r.get("pair_ratios", []))
    # A control that read 0 on one side measured nothing: no band from it.
    seen = [v for v in seen if 0 < v < math.inf]
    if not seen:
        return None
    far = max(max(v, 1 / v) for v in seen)
    return (1 / far, far)


def ceiling_of(metric, medians):
    for prefix, ceil in CEILINGS.items():
        if metric.startswith(prefix) and ceil in medians:
            return ceil
    return None


def verdict(row, band):
    """The column "better": "ours" or "upstream" only when the ratio of
    the medians and every pair ratio lie beyond the noise band on that
    side, "inside the noise" otherwise."""
    if row["metric"].startswith(CONTROLS):
        return "control"
    pairs = row["pairs"]
    if pairs and all(o == u for o, u in pairs) and (
            row["ours_median"] == row["upstream_median"]):
        return "equal"
    if not pairs:
        return "no pairs"
    if not band:
        return "no control"
    ratios = [row["ratio"]] + row["pair_ratios"]
    if all(r > band[1] for r in ratios):
        return "ours"
    if all(r < band[0] for r in ratios):
        return "upstream"
    return "inside the noise"


def summarise(runs, units):
    rows = []
    medians = {}
    for metric, kernels in runs.items():
        ours = kernels.get("ours", {})
        up = kernels.get("upstream", {})
        row = {"metric": metric, "unit": units[metric],
               "ours": sorted(ours.values()), "upstream": sorted(up.values())}
        if ours:
            row["ours_median"] = statistics.median(ours.values())
        if up:
            row["upstream_median"] = statistics.median(up.values())
        if ours and up:
            row["ratio"] = better_ratio(row["ours_median"],
                                        row["upstream_median"], units[metric])
            # The runs of the two kernels booted back to back.
            row["pairs"] = [(ours[r], up[r]) for r in sorted(ours) if r in up]
            row["pair_ratios"] = [better_ratio(o, u, units[metric])
                                  for o, u in row["pairs"]]
        medians[metric] = row.get("upstream_median", row.get("ours_median"))
        rows.append(row)
    for row in rows:
        ceil = ceiling_of(row["metric"], medians)
        if ceil and ceil != row["metric"] and not is_cost(row["unit"]):
            row["ceiling"] = {"metric": ceil, "value": medians[ceil],
                              "unit": units[ceil]}
    band = control_band(rows)
    for row in rows:
        if "ratio" in row:
            row["verdict"] = verdict(row, band)
    return rows, band


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    return "%.3g" % v


def span(values):
    if not values:
        return "-"
    return "%s-%s" % (fmt(min(values)), fmt(max(values)))


def ratio_text(r):
    """The ratio of the medians, or "A vs B" (ours, upstream) with a 0."""
    if "ratio" not in r:
        return "-"
    if r["ours_median"] == 0 or r["upstream_median"] == 0:
        return "%s vs %s" % (fmt(r["ours_median"]), fmt(r["upstream_median"]))
    return "%.2f" % r["ratio"]


def jsonable(v):
    """v with inf as the string "inf" (JSON has no infinity)."""
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def print_table(rows, band):
    head = ("metric", "unit", "ours median", "ours range", "upstream median",
            "upstream range", "ratio", "pair ratios", "better", "ceiling")
    table = [head]
    for r in rows:
        ceil = r.get("ceiling")
        table.append((
            r["metric"], r["unit"], fmt(r.get("ours_median")),
            span(r["ours"]), fmt(r.get("upstream_median")),
            span(r["upstream"]),
            ratio_text(r),
            ("%.2f-%.2f" % (min(r["pair_ratios"]), max(r["pair_ratios"]))
             if r.get("pair_ratios") else "-"),
            r.get("verdict", "-"),
            "%s %s (%s)" % (fmt(ceil["value"]), ceil["unit"], ceil["metric"])
            if ceil else "-"))
    widths = [max(len(str(row[i])) for row in table) for i in range(len(head))]
    for n, row in enumerate(table):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print("ratio: ours/upstream of the medians, turned so that above 1 "
          "means ours is better; \"A vs B\": the medians, ours and "
          "upstream, where one is 0; pair ratios: the range over runs "
          "booted back to back (inf: ours read 0 on a cost, or upstream "
          "0 on a rate)")
    if band:
        print("better: 'ours' or 'upstream' only where the ratio and every "
              "pair ratio lie beyond %.2f-%.2f on the same side (the "
              "ratios of the same-code rxe figures, the controls, in this "
              "run); 'inside the noise' otherwise; 'equal' where each pair "
              "read the same on both kernels" % band)
    else:
        print("better: no same-code control figure ran (rxe-*), so no "
              "ratio can be told from noise ('no control')")
    if any(r.get("verdict") == "no pairs" for r in rows):
        print("'no pairs': no run of one kernel has a run of the other "
              "with its number, so no pair to judge")


def plot(rows, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib, no plots")
        return
    for r in rows:
        fig, ax = plt.subplots(figsize=(4, 3))
        for i, k in enumerate(("ours", "upstream")):
            ax.scatter([i] * len(r[k]), r[k], label=k)
            if r[k]:
                ax.hlines(statistics.median(r[k]), i - 0.2, i + 0.2)
        ax.set_xticks([0, 1], ["ours", "upstream 6.12"])
        ax.set_xlim(-0.5, 1.5)
        ax.set_ylabel(r["unit"])
        ax.set_title(r["metric"])
        ax.set_ylim(bottom=0)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, r["metric"] + ".png"))
        plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-report.py RESULTS.CSV OUTDIR")
    runs, units = load(sys.argv[1])
    if not runs:
        sys.exit("bench: no results in " + sys.argv[1])
    rows, band = summarise(runs, units)
    print_table(rows, band)
    with open(os.path.join(sys.argv[2], "summary.json"), "w") as f:
        json.dump(jsonable(rows), f, indent=1, allow_nan=False)
    plot(rows, sys.argv[2])


if __name__ == "__main__":
    main()
