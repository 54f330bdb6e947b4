#!/usr/bin/env python3
"""Mixture-of-experts benchmark (docs/moe.md, docs/performance.md "MoE"): decode
tokens/s, expert-cache hit rate and expert bytes read per token against the size of the
expert LRU, on a generated Mixtral-shaped Q4_0 model (benchmarks/make_moe_gguf.py:
8 experts, top-2; about 3.9 GiB with the default dimensions), next to the disk
roofline (disk read bandwidth measured in the same run / expert bytes per token) and
llama.cpp (llama-cpp-python, mmap, whole file) on the same file.

    python3 benchmarks/bench_moe.py --uaii build/uaii [--model F.gguf | --small]
                                    [--lru 0.1,0.25,0.5,1.0] [--tokens 16] [--threads N]
                                    [--prefetch off,on] [--no-llamacpp] [--out results.json]

Without --model the file is written into a temporary directory (--small: a 6-layer,
~180 MiB variant, for checking the script end to end). Each LRU size is a fraction of
all expert bytes (0 = the plan's minimum, one layer's top-k experts); the budget given
to uaii (--preset server --ram-gb B) is the trunk's needs from a dry run plus that
size. Every uaii run starts cold (POSIX_FADV_DONTNEED on the file); expert reads are
buffered preads, so an expert read again after eviction may come from the page cache:
both the disk and the page-cache rooflines are shown. Each size runs with expert
prefetch off and on (--moe-prefetch). Peak RSS is wait4's figure."""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_io import drop_cache, run_llamacpp_mmap, sequential_read_bandwidth  # noqa: E402

MiB, GiB = 1 << 20, 1 << 30
HERE = pathlib.Path(__file__).resolve().parent
PROMPT = "hello world, the expert cache benchmark"


def uaii(exe, model, flags, env, tokens=None):
    """One `uaii generate --json` (or --dry-run when tokens is None); (doc, peak RSS)."""
    args = [str(exe), "generate", "--model", str(model), "--max-context", "256", "--json", *flags]
    args += ["--dry-run"] if tokens is None else ["-p", PROMPT, "--max-tokens", str(tokens)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)}: {err.decode()}")
    return json.loads(out), ru.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uaii", type=pathlib.Path, default=HERE.parent / "build" / "uaii")
    ap.add_argument("--model", type=pathlib.Path)
    ap.add_argument("--small", action="store_true", help="generate the small variant (script check)")
    ap.add_argument("--lru", default="0,0.125,0.25,0.5,1.0", help="LRU sizes as fractions of all expert bytes")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--prefetch", default="off,on", help="--moe-prefetch settings to run")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-llamacpp", action="store_true")
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    tmp = None
    model = a.model
    if model is None:
        tmp = tempfile.TemporaryDirectory()
        model = pathlib.Path(tmp.name) / ("moe-small-q4_0.gguf" if a.small else "moe-q4_0.gguf")
        dims = ["--layers", "6", "--embd", "1024", "--ff", "2048", "--vocab", "1024", "--heads", "8"] if a.small else []
        subprocess.run([sys.executable, str(HERE / "make_moe_gguf.py"), str(model), *dims], check=True)
    env = dict(os.environ)
    env.setdefault("UAII_HOME", tempfile.mkdtemp(prefix="uaii_bench_home_"))
    threads = ["--threads", str(a.threads)]
    size = model.stat().st_size
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "model": str(model), "model_bytes": size,
           "tokens": a.tokens, "threads": a.threads,
           "disk_read_bytes_per_s": sequential_read_bandwidth(model, min(size, 1 * GiB), cold=True),
           "page_cache_read_bytes_per_s": sequential_read_bandwidth(model, min(size, 256 * MiB), cold=False), "runs": []}
    # The trunk's needs (pinned weights, staging, KV, activations) under a budget that
    # holds everything: expected peak minus the LRU, which then holds every expert.
    big, _ = uaii(a.uaii, model, ["--preset", "server", "--ram-gb", "1000", *threads], env)
    ec = big["expert_cache"]
    if not ec:
        sys.exit(f"{model} has no expert banks")
    trunk = big["expected_peak_bytes"] - ec["capacity_bytes"]
    res.update(expert_bytes=ec["expert_bytes"], step_bytes=ec["step_bytes"], trunk_bytes=trunk,
               expert_bytes_per_token_max=ec["bytes_per_token_max"])
    # Unbudgeted: the whole file through the mapping (the reference tokens).
    drop_cache(model)
    ref, rss = uaii(a.uaii, model, ["--preset", "none", *threads], env, a.tokens)
    res["unbudgeted"] = {"decode_tokens_per_s": ref["timings"]["decode_tokens_per_s"], "peak_rss_bytes": rss}
    print(json.dumps(res["unbudgeted"]), flush=True)
    for frac, pf in [(float(x), p) for x in a.lru.split(",") for p in a.prefetch.split(",")]:
        lru = max(ec["step_bytes"], int(frac * ec["expert_bytes"]))
        budget = trunk + lru + MiB
        flags = ["--preset", "server", "--ram-gb", f"{budget / GiB:.9f}", "--moe-prefetch", pf, *threads]
        plan, _ = uaii(a.uaii, model, flags, env)
        drop_cache(model)
        doc, rss = uaii(a.uaii, model, flags, env, a.tokens)
        m = doc["memory"]["expert_cache"]
        bpt = m["bytes_read_per_token"]
        r = {"lru_fraction": frac, "prefetch": pf, "prefetch_stats": m["prefetch"], "budget_bytes": budget, "capacity_bytes": m["capacity_bytes"],
             "decode_tokens_per_s": doc["timings"]["decode_tokens_per_s"], "hit_rate": m["hit_rate"],
             "expert_bytes_read_per_token": bpt, "expert_io_wait_s": m["io_wait_s"],
             "trunk_streamed_bytes_per_token": plan["streamed"]["bytes_per_token"],
             "disk_roofline_tokens_per_s": res["disk_read_bytes_per_s"] / bpt if bpt else None,
             "page_cache_roofline_tokens_per_s": res["page_cache_read_bytes_per_s"] / bpt if bpt else None,
             "peak_rss_bytes": rss, "same_tokens_as_unbudgeted": doc["tokens"] == ref["tokens"]}
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
    if not a.no_llamacpp:
        drop_cache(model)
        r = run_llamacpp_mmap(model, PROMPT, a.tokens, a.threads)
        if "tokens" in r:
            r["same_tokens_as_uaii"] = r["tokens"] == ref["tokens"]
        res["llamacpp"] = r
        print(json.dumps({k: v for k, v in r.items() if k != "tokens"}), flush=True)
    print(f"\nexperts {res['expert_bytes'] / GiB:.2f} GiB of {size / GiB:.2f} GiB; disk "
          f"{res['disk_read_bytes_per_s'] / 1e6:.0f} MB/s, page cache {res['page_cache_read_bytes_per_s'] / 1e6:.0f} MB/s")
    print("| LRU (fraction of experts) | prefetch | capacity | decode tok/s | hit rate | expert MiB read/token "
          "| disk roofline tok/s |")
    print("|---|---|---|---|---|---|---|")
    for r in res["runs"]:
        roof = f"{r['disk_roofline_tokens_per_s']:.2f}" if r["disk_roofline_tokens_per_s"] else "-"
        print(f"| {r['lru_fraction']:g} | {r['prefetch']} | {r['capacity_bytes'] / MiB:.0f} MiB | {r['decode_tokens_per_s']:.2f} | "
              f"{r['hit_rate']:.3f} | {r['expert_bytes_read_per_token'] / MiB:.1f} | {roof} |")
    print(f"| unbudgeted (mmap) | - | - | {res['unbudgeted']['decode_tokens_per_s']:.2f} | - | - | - |")
    if "llamacpp" in res and "decode_tokens_per_s" in res["llamacpp"]:
        print(f"| llama.cpp {res['llamacpp']['version']} (mmap) | - | - | {res['llamacpp']['decode_tokens_per_s']:.2f} "
              "| - | - | - |")
    if a.out:
        a.out.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
