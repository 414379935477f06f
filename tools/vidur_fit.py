#!/usr/bin/env python3
"""Derive the A100 and H100 presets' mbu, layer_lat, mfu, smooth and act_bytes from Vidur's
per-operator profiles (src/presets.c [VIDURTP], [VIDURK]; docs/accuracy.md).

    tools/vidur_fit.py VIDUR_CHECKOUT        # e.g. a clone of microsoft/vidur @7d47513

Reads data/profiling/compute/{a100,h100}/*/*/mlp.csv (the median CUDA time of each operator
of one transformer layer but attention, per number of tokens and TP degree; phi-2 is left
out: its parallel block has one norm).  A row's layer time t is the sum of QKV, O, gate/up
and down projections, activation, RoPE, both RMSNorms and the residual add.  Per rank the
row's weights are W = 2 B · P / TP (P the layer's GEMM parameters) and its GEMM work
F = 2 · T · P / TP.  Two fits, by the mean relative error:
  1. decode (1-8 tokens): t = W / (hbm · mbu) + layer_lat         (linear least squares)
  2. every row of 1-4,096 tokens, mbu and layer_lat from 1:
     t = (C^p + M^p)^(1/p) + T · h · act_bytes / hbm,  C = F / (peak · mfu),
     M = W / (hbm · mbu) + layer_lat                                (pattern search)
and, for comparison, max(C, M) with the one-layer figures main used before (mfu 0.637 /
0.661, mbu 0.70, no layer_lat).  Needs numpy (Debian python3-numpy).
"""
import csv
import glob
import os
import sys

import numpy as np

OPS = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "mlp_act",
       "attn_rope", "input_layernorm", "post_attention_layernorm", "add"]
HBM = {"a100": 2.039e12, "h100": 3.35e12}      # A100 SXM4 80GB, H100 SXM datasheets
PEAK = {"a100": 312e12, "h100": 989.5e12}      # dense BF16
BEFORE = {"a100": (0.637, 0.70), "h100": (0.661, 0.70)}


def rows(root, gpu):
    out = []
    for path in sorted(glob.glob(os.path.join(root, "data/profiling/compute", gpu, "*/*/mlp.csv"))):
        if "phi-2" in path:
            continue
        for r in csv.DictReader(open(path)):
            h, nh, kv = int(r["n_embd"]), int(r["n_head"]), int(r["n_kv_head"])
            ff, gated = int(r["n_expanded_embd"]), r["use_gated_mlp"] == "True"
            d = h // nh
            p = h * (h + 2 * kv * d) + h * h + (3 if gated else 2) * h * ff
            tokens, tp = int(r["num_tokens"]), int(r["num_tensor_parallel_workers"])
            t = sum(float(r.get(f"time_stats.{o}.median") or 0) for o in OPS) * 1e-3
            out.append((tokens, 2 * p / tp, 2 * tokens * p / tp, tokens * h, t))
    return np.array(out, dtype=float)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for gpu in ("a100", "h100"):
        a = rows(sys.argv[1], gpu)
        if not len(a):
            sys.exit(f"vidur_fit: no {gpu} profiles under {sys.argv[1]}")
        tok, w, f, th, t = a.T
        dec = tok <= 8
        x = np.stack([w[dec] / HBM[gpu], np.ones(dec.sum())], 1) / t[dec, None]
        (inv, lat), *_ = np.linalg.lstsq(x, np.ones(dec.sum()), rcond=None)
        mbu = 1 / inv
        e = (w[dec] / (HBM[gpu] * mbu) + lat) / t[dec] - 1
        print(f"{gpu} decode, {dec.sum()} rows: mbu {mbu:.3f}, layer_lat {lat * 1e6:.1f} us "
              f"(mean |error| {np.mean(abs(e)) * 100:.1f} %, at most {np.max(abs(e)) * 100:.1f} %)")
        use = tok <= 4096
        tok, w, f, th, t = a[use].T

        def model(mfu, p, k, mb, la):
            c, m = f / (PEAK[gpu] * mfu), w / (HBM[gpu] * mb) + la
            s = np.maximum(c, m) if p == 0 else (c ** p + m ** p) ** (1 / p)
            return s + th * k / HBM[gpu]

        def err(v):
            return np.mean(abs(model(v[0], v[1], v[2], mbu, lat) / t - 1))

        v, step = np.array([0.66, 2.0, 0.0]), np.array([0.05, 1.0, 10.0])
        best = err(v)
        for _ in range(200):
            moved = False
            for j in range(3):
                for s in (1, -1):
                    u = v.copy()
                    u[j] += s * step[j]
                    if u[0] <= 0 or u[1] < 1 or u[2] < 0:
                        continue
                    e2 = err(u)
                    if e2 < best:
                        v, best, moved = u, e2, True
            if not moved:
                step /= 2
        e = model(v[0], v[1], v[2], mbu, lat) / t - 1
        print(f"{gpu} all, {len(t)} rows: mfu {v[0]:.3f}, smooth {v[1]:.2f}, act_bytes "
              f"{v[2]:.1f} B (mean |error| {np.mean(abs(e)) * 100:.1f} %, at most "
              f"{np.max(abs(e)) * 100:.1f} %)")
        e = model(BEFORE[gpu][0], 0, 0, BEFORE[gpu][1], 0) / t - 1
        print(f"{gpu} all, max(C, M), mfu {BEFORE[gpu][0]}, mbu {BEFORE[gpu][1]}: mean |error| "
              f"{np.mean(abs(e)) * 100:.1f} %, at most {np.max(abs(e)) * 100:.1f} %")


if __name__ == "__main__":
    main()
