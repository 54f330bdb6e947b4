#!/usr/bin/env python3
"""Load time with and without the plan cache, and the fused vs unfused forward pass.

  bench_load.py [--uaii BUILD/uaii] [--model PATH] [--reps N] [--tokens N]

Load: median wall time of `uaii generate --max-tokens 1` (process start, GGUF open,
graph build, planning or plan-cache read, weight binding, one token) with a cold plan
cache (a fresh $UAII_PLAN_CACHE directory per run) and a warm one (same directory);
and the planning step alone as `uaii compile --plan --json` reports it (plan_seconds:
the passes + memory plans, or reading the cached plan).

Fusion: prefill and decode tokens/s of `uaii generate --json` with $UAII_FUSE=0
(unfused graph) and 1 (norm_linear fusions), same prompt, greedy. Logits are
bit-identical either way (tests/planner), so only speed and memory differ.

Model: --model, else $UAII_MODEL, else the default model in ~/.cache/uaii/models.
Prints one JSON document.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def default_model():
    if os.environ.get("UAII_MODEL"):
        return os.environ["UAII_MODEL"]
    home = os.environ.get("UAII_HOME") or os.path.expanduser("~/.cache/uaii")
    return os.path.join(home, "models", "gemma-3-270m-q4_k_m.gguf")


def run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench_load: {' '.join(cmd)} failed: {p.stderr.strip()}")
    return dt, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uaii", default=os.path.join(HERE, "..", "build", "uaii"))
    ap.add_argument("--model", default=default_model())
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if not os.path.exists(a.uaii):
        sys.exit(f"bench_load: no uaii binary at {a.uaii} (pass --uaii)")
    if not os.path.exists(a.model):
        sys.exit(f"bench_load: no model at {a.model} (pass --model)")
    gen = [a.uaii, "generate", "--model", a.model, "-p", "The capital of France is", "--threads", str(a.threads)]
    out = {"model": os.path.abspath(a.model), "reps": a.reps}
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(os.environ)
        cold, warm, plan_cold, plan_warm = [], [], [], []
        warm_dir = os.path.join(tmp, "warm")
        for i in range(a.reps):
            env = dict(base, UAII_PLAN_CACHE=os.path.join(tmp, f"cold{i}"))
            cold.append(run(gen + ["--max-tokens", "1"], env)[0])
            env = dict(base, UAII_PLAN_CACHE=os.path.join(tmp, f"plancold{i}"))
            plan_cold.append(json.loads(run([a.uaii, "compile", a.model, "--plan", "--json"], env)[1])["plan_seconds"])
        env = dict(base, UAII_PLAN_CACHE=warm_dir)
        run(gen + ["--max-tokens", "1"], env)  # fills the cache
        for i in range(a.reps):
            warm.append(run(gen + ["--max-tokens", "1"], env)[0])
            doc = json.loads(run([a.uaii, "compile", a.model, "--plan", "--json"], env)[1])
            assert doc["from_cache"], "the warm cache missed"
            plan_warm.append(doc["plan_seconds"])
        out["load_seconds"] = {"cold_cache_median": statistics.median(cold), "warm_cache_median": statistics.median(warm)}
        out["plan_seconds"] = {"computed_median": statistics.median(plan_cold),
                               "from_cache_median": statistics.median(plan_warm)}
        plan_doc = json.loads(run([a.uaii, "compile", a.model, "--plan", "--json"], env)[1])
        out["memory_plan"] = {k: plan_doc[k] for k in ("decode", "prefill", "ops", "ops_unfused")}
        fusion = {}
        for fuse in ("0", "1"):
            env = dict(base, UAII_PLAN_CACHE=warm_dir, UAII_FUSE=fuse)
            pre, dec, toks = [], [], None
            for i in range(a.reps):
                doc = json.loads(run(gen + ["--max-tokens", str(a.tokens), "--json"], env)[1])
                pre.append(doc["timings"]["prefill_tokens_per_s"])
                dec.append(doc["timings"]["decode_tokens_per_s"])
                toks = doc["tokens"] if toks is None else toks
            fusion["fused" if fuse == "1" else "unfused"] = {
                "prefill_tokens_per_s_median": statistics.median(pre),
                "decode_tokens_per_s_median": statistics.median(dec), "tokens": toks}
        fusion["same_tokens"] = fusion["fused"]["tokens"] == fusion["unfused"]["tokens"]
        for k in ("fused", "unfused"):
            del fusion[k]["tokens"]
        out["fusion"] = fusion
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
