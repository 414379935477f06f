#!/usr/bin/env python3
"""Regenerate the sweep and plan fixtures for tests/test_plot.c from real kvsim runs.

`kvsim sweep` and `kvsim plan` were written in parallel with the figures, so these files
stand in for their output, in the formats agreed for plotting:
  sweep/sweep.csv  one row per configuration: a block size x watermark grid on the bundled
                   ShareGPT length trace at 2 requests/s, every prompt starting with the
                   same 1000 tokens, in 5 GiB of KV (near the pool's edge: preemptions
                   without a watermark, deferrals with one, hit rate falling with block
                   size as the shared prefix's partial last block grows)
  plan/plan.csv    one row per load multiplier on the bundled Azure trace, and plan.json
                   with the SLO thresholds under "slo"
Both name the setup (model, GPU, TP, PP, KV dtype; plan.json under "config", as kvsim plan
writes it) from the runs' own config echo, for the figures' titles.
Every number comes from `kvsim run ... --json`; nothing is invented.

usage: tests/data/plot/make_fixtures.py [BUILD_DIR]   (default: build)
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
KVSIM = os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else "build", "src", "kvsim")


def run(trace, *opts):
    out = subprocess.run([KVSIM, "run", os.path.join(ROOT, trace), "--json", *opts],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def arrival_rate(out_dir):
    """Requests per second over the arrival span of a run's requests.csv."""
    with open(os.path.join(out_dir, "requests.csv")) as f:
        t = [float(r["arrival_s"]) for r in csv.DictReader(f)]
    return (len(t) - 1) / (max(t) - min(t))


def sweep():
    cols = ["config", "dir", "block_size", "num_blocks", "kv_budget_bytes", "watermark",
            "free_order", "max_seqs", "preempt", "finished", "rejected", "peak_physical",
            "mean_physical", "peak_logical", "mean_logical", "sharing_ratio", "hit_rate",
            "evictions", "preemptions", "watermark_deferrals", "ttft_p50_s", "ttft_p99_s",
            "tpot_p50_s", "tpot_p99_s", "output_tok_per_s", "requests_per_s", "model", "gpu",
            "tp", "pp", "kv_dtype"]
    rows = []
    for bs in (8, 16, 32, 64, 128):
        for wm in ("0", "0.01", "0.02", "0.05"):
            s = run("traces/sharegpt_lengths_1000.csv", "--rate", "2", "--shared-prefix",
                    "1000", "--kv-budget", "5GiB", "--block-size", str(bs), "--watermark", wm)
            c, b, lat = s["config"], s["blocks"], s["latency_s"]
            name = f"bs{bs}-wm{wm}"
            rows.append([name, name, bs, c["num_blocks"], c["kv_budget_bytes"], wm,
                         c["free_order"], c["max_seqs"], c["preempt"],
                         s["requests"]["finished"], s["requests"]["rejected"],
                         b["peak_physical"], "%.3f" % b["mean_physical"], b["peak_logical"],
                         "%.3f" % b["mean_logical"], "%.6f" % b["sharing_ratio"],
                         "%.6f" % s["prefix"]["hit_rate"], s["evictions"], s["preemptions"],
                         s["watermark"]["deferrals"], "%.6f" % lat["ttft"]["p50"],
                         "%.6f" % lat["ttft"]["p99"], "%.6f" % lat["tpot"]["p50"],
                         "%.6f" % lat["tpot"]["p99"],
                         "%.3f" % s["throughput"]["output_tok_per_s"],
                         "%.4f" % s["throughput"]["requests_per_s"], c["model"], c["gpu"],
                         c["tp"], c["pp"], c["kv_dtype"]])
    os.makedirs(os.path.join(HERE, "sweep"), exist_ok=True)
    with open(os.path.join(HERE, "sweep", "sweep.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)


def plan():
    slo = {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05, "preemption_rate": 0.02}
    rows = []
    config = None
    tmp = tempfile.mkdtemp(prefix="kvsim-fixtures-")
    for load in (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0):
        s = run("traces/azure_conv_1000.csv", "--num-blocks", "2000", "--time-scale",
                "%.6g" % (1 / load), "--out", tmp)
        n = s["requests"]["total"]
        config = config or {k: s["config"][k] for k in
                            ("model", "gpu", "tp", "pp", "kv_dtype", "block_size")}
        lat = s["latency_s"]
        rate = s["preemptions"] / n
        meets = (lat["ttft"]["p99"] <= slo["ttft_p99_s"] and
                 lat["tpot"]["p99"] <= slo["tpot_p99_s"] and rate <= slo["preemption_rate"])
        rows.append([load, "%.4f" % arrival_rate(tmp), "%.6f" % lat["ttft"]["p99"],
                     "%.6f" % lat["tpot"]["p99"], "%.6f" % rate, "true" if meets else "false"])
    os.makedirs(os.path.join(HERE, "plan"), exist_ok=True)
    with open(os.path.join(HERE, "plan", "plan.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["load", "arrival_rate_req_s", "ttft_p99_s", "tpot_p99_s",
                    "preemption_rate", "meets_slo"])
        w.writerows(rows)
    subprocess.run(["rm", "-rf", tmp], check=True)
    ok = [r[0] for r in rows if r[5] == "true"]
    with open(os.path.join(HERE, "plan", "plan.json"), "w") as f:
        json.dump({"trace": "traces/azure_conv_1000.csv", "slo": slo,
                   "max_load": max(ok) if ok else None, "config": config}, f, indent=2)
        f.write("\n")


sweep()
plan()
