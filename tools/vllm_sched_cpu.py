#!/usr/bin/env python3
"""Microbenchmark: the host CPU that vLLM's own v1 scheduler spends per decode step, against
the number of running requests (docs/accuracy.md, "December 2026, latest").

    /usr/bin/python3 tools/vllm_sched_cpu.py VLLM_REF TREE [--steps N] [--prompt T]

VLLM_REF is the vllm_ref harness folder (its vllm_driver.py builds the Scheduler exactly as
the block-for-block comparison does: sync Scheduler, FCFS, prefix caching with the sha256
block hasher, watermark 0); TREE is a tree its setup.sh extracted from vLLM's git history
(vLLM's scheduling files verbatim, the rest stubbed).  For each N in 1 … 512 the script adds
N requests of T prompt tokens (distinct, so nothing is shared), runs the prefill step, then
STEPS decode steps in which every request samples one token, and times
Scheduler.schedule() + Scheduler.update_from_output() with time.perf_counter (the fake model
runner's own work between the two is not timed).  It prints the median step per N and a
least-squares line a + b·N; b is the scheduler's CPU per running request and step.

What it leaves out, and the engine does per step on the same thread in a sync engine: the
model runner's input preparation, the sampler, the hand-off of the outputs to the API
server.  So b is a lower bound of kvsim's `seq_overhead`, and the CPU it ran on (this
machine's) is not the benchmark servers'.  Needs Debian python3-cbor2, python3-numpy,
python3-typing-extensions (the vllm_ref setup).
"""
import argparse
import statistics
import sys
import time
import types

import numpy as np

SIZES = [1, 8, 32, 64, 128, 256, 512]


def one(vd, tree, n, steps, prompt, block_size=16):
    a = types.SimpleNamespace(
        max_seqs=1024, max_batched_tokens=1 << 20, no_chunked_prefill=False, policy="fcfs",
        no_reserve_full_isl=False, watermark=0.0, block_size=block_size,
        num_blocks=n * (prompt + steps + 64) // block_size + 64, no_prefix_caching=False)
    sched, hasher = vd.build_scheduler(a, tree)
    from vllm.sampling_params import SamplingParams
    from vllm.v1.outputs import ModelRunnerOutput
    from vllm.v1.request import Request
    for r in range(n):
        ids = [(r * 7919 + k) % 50000 + 1 for k in range(prompt)]
        sched.add_request(Request(
            request_id=f"r{r}", prompt_token_ids=ids,
            sampling_params=SamplingParams(max_tokens=steps + 10), pooling_params=None,
            arrival_time=0.0, lora_request=None, cache_salt=None, priority=0,
            block_hasher=hasher))
    times = []
    tok = 1
    for s in range(steps + 1):
        t0 = time.perf_counter()
        out = sched.schedule()
        t1 = time.perf_counter()
        req_ids = list(out.num_scheduled_tokens.keys())
        mro = ModelRunnerOutput(
            req_ids=req_ids, req_id_to_index={r: k for k, r in enumerate(req_ids)},
            sampled_token_ids=[[tok] for _ in req_ids], logprobs=None,
            prompt_logprobs_dict={}, pooler_output=[])
        tok = tok % 50000 + 1
        t2 = time.perf_counter()
        sched.update_from_output(out, mro)
        t3 = time.perf_counter()
        if s == 0:
            continue  # the prefill step
        if len(req_ids) != n:
            sys.exit(f"vllm_sched_cpu: step {s} scheduled {len(req_ids)} of {n} requests")
        times.append((t1 - t0) + (t3 - t2))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vllm_ref")
    p.add_argument("tree")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--prompt", type=int, default=256)
    a = p.parse_args()
    sys.path.insert(0, a.vllm_ref)
    import vllm_driver as vd
    med = {}
    for n in SIZES:
        med[n] = one(vd, a.tree, n, a.steps, a.prompt)
        print(f"N={n:4d}  schedule + update_from_output, median {med[n] * 1e6:8.1f} us"
              f"  ({med[n] / n * 1e6:6.2f} us per request)", flush=True)
    b, a0 = np.polyfit(np.array(SIZES, float), np.array([med[n] for n in SIZES]), 1)
    print(f"least squares: {a0 * 1e6:.1f} us + {b * 1e6:.2f} us per running request")


if __name__ == "__main__":
    main()
