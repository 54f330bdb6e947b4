#!/usr/bin/env python3
"""uaii and llama.cpp side by side, in one run, on the same GGUF files and thread counts.

For each model and thread count: prefill (a 512-token prompt) and decode (128 tokens)
tokens/s of both engines and their ratio, plus the machine's memory read bandwidth
measured in the same run and the decode roofline (bandwidth / weight bytes read per
token). llama.cpp is llama-cpp-python (requirements/oracle.txt); each engine runs in
its own process, one after the other. Token ids are synthetic and identical for both.

Two rooflines: the machine's (the best probe of the row's repeats, as before), and
each decode's own: the engine's process probes the bandwidth before its decode and
after every --probe-every decoded tokens; each block of tokens gets the fraction of
the roofline of the mean of the probes on either side of it, and the run's fraction
is the median block's (one block slowed by another tenant does not stand for the
run; the mean over all the blocks' seconds is kept in the JSON too). Why: this VM's
two-thread read bandwidth moves between ~34 and ~60 GB/s within seconds (one
thread's stays at ~30-33), so only a probe of the same seconds says what the decode
could have had. Both engines get the same probes; the decode's tokens/s counts the
blocks' seconds only.

usage: bench_vs_llamacpp.py [--build build] [--models-dir DIR] [--threads 1 2]
                            [--prompt 512] [--gen 128] [--repeat 3] [--probe-every 16]
                            [--only NAME ...] [--json OUT]
Each engine runs --repeat times, interleaved with the other, and the best run of each
counts (the load average at each repeat is recorded).
Models: the default model (the cache) and TinyLlama-shaped Q4_0 / Q8_0 / Q4_K_M files
written by make_bench_models.py into --models-dir (kept there for later runs).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import textwrap

import gguf

ROOT = pathlib.Path(__file__).resolve().parents[1]

# llama.cpp through llama-cpp-python's low-level API: one llama_decode per prompt
# chunk / generated token with a batch that asks logits only for its last token
# (llama_batch_get_one), so nothing is copied per token beyond what llama.cpp does
# itself (the high-level Llama.eval copies n_vocab logits into numpy every step).
LLAMA_CPP_RUNNER = textwrap.dedent("""
    import ctypes, json, shlex, subprocess, sys, time
    import llama_cpp as L
    path, n_prompt, n_gen, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    probe = sys.argv[5] if len(sys.argv) > 5 else ""
    probe_every = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    def bandwidth():
        if not probe:
            return 0.0
        out = subprocess.run(shlex.split(probe), capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])["read_gb_per_s"]
    quiet = L.llama_log_callback(lambda *a: None)  # kept alive: llama.cpp calls it later
    L.llama_log_set(quiet, ctypes.c_void_p(0))
    L.llama_backend_init()
    mp = L.llama_model_default_params()
    model = L.llama_model_load_from_file(path.encode(), mp)
    cp = L.llama_context_default_params()
    cp.n_ctx = n_prompt + n_gen + 16
    cp.n_batch = cp.n_ubatch = 512
    cp.n_threads = cp.n_threads_batch = threads
    ctx = L.llama_init_from_model(model, cp)
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    prompt = [300 + (i * 7919) % (vocab - 300) for i in range(n_prompt)]
    def decode(ids):
        arr = (L.llama_token * len(ids))(*ids)
        if L.llama_decode(ctx, L.llama_batch_get_one(arr, len(ids))) != 0:
            raise SystemExit("llama_decode failed")
        L.llama_get_logits_ith(ctx, -1)
    t0 = time.perf_counter()
    for off in range(0, n_prompt, 512):
        decode(prompt[off:off + 512])
    t1 = time.perf_counter()
    bw_before = bw = bandwidth()
    block = probe_every if probe_every > 0 and probe else n_gen
    blocks, seconds = [], 0.0
    for i0 in range(0, n_gen, block):  # as uaii_bench_generate --probe-every
        b0 = time.perf_counter()
        for i in range(i0, min(n_gen, i0 + block)):
            decode([300 + i % 1000])
        secs = time.perf_counter() - b0
        seconds += secs
        bw_next = bandwidth()
        blocks.append([min(n_gen, i0 + block) - i0, secs, bw, bw_next])
        bw = bw_next
    print(json.dumps({"prefill_tokens_per_s": n_prompt / (t1 - t0), "decode_tokens_per_s": n_gen / seconds,
                      "bandwidth_before_gb_s": bw_before, "bandwidth_after_gb_s": bw, "blocks": blocks}))
""")


def weight_bytes_per_token(path):
    """Bytes of weights one decode step reads: every tensor once, except the token
    embedding (one row), which is read whole only when it is also the output head."""
    r = gguf.GGUFReader(path)
    names = {t.name for t in r.tensors}
    total = 0
    for t in r.tensors:
        if t.name == "token_embd.weight" and "output.weight" in names:
            total += int(t.n_bytes) // int(t.shape[-1])
        else:
            total += int(t.n_bytes)
    return total


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--models-dir", default=os.path.join(os.environ.get("UAII_HOME", os.path.expanduser("~/.cache/uaii")), "bench-models"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs per engine; the best counts")
    ap.add_argument("--probe-every", type=int, default=16,
                    help="decoded tokens between bandwidth probes (each block's roofline is its own)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    import llama_cpp
    models = {"gemma3-270m-q4_k_m (default)": str(pathlib.Path(os.environ.get("UAII_HOME", os.path.expanduser("~/.cache/uaii"))) / "models" / "gemma-3-270m-q4_k_m.gguf")}
    wanted = ["q4_0", "q8_0", "q4_k_m"]
    made = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_bench_models.py"), args.models_dir, *wanted],
                          capture_output=True, text=True, check=True).stdout.split()
    for name, path in zip(wanted, made):
        models[f"tinyllama-{name}"] = path
    if args.only:
        models = {k: v for k, v in models.items() if any(o in k for o in args.only)}

    def best(a, b):
        return {k: max(a[k], b[k]) if k.endswith(("_per_s", "_fraction")) else a[k] for k in a} if a else b

    def with_adjacent_roofline(run, per_token):
        """The decode's fraction of the roofline of its own seconds. Each block of
        --probe-every tokens is held to the mean of the probes on either side of it
        (its roofline seconds over its measured seconds); the run's fraction is the
        median block's, so that one block slowed by another tenant does not stand for
        the run (as the best of the repeats does for runs); the mean over all the
        blocks' seconds is kept as adjacent_roofline_fraction_mean."""
        blocks = [(n * per_token / ((a + b) / 2 * 1e9), s) for n, s, a, b in run["blocks"] if a + b > 0]
        if not blocks:
            run["adjacent_roofline_fraction"] = run["adjacent_roofline_fraction_mean"] = 0.0
            return run
        run["adjacent_roofline_fraction"] = statistics.median(ideal / s for ideal, s in blocks)
        run["adjacent_roofline_fraction_mean"] = sum(i for i, _ in blocks) / sum(s for _, s in blocks)
        return run

    rows = []
    for threads in args.threads:
        for name, path in models.items():
            # Interleaved repeats, best of N per engine and figure: the machine may be
            # shared, and the best run is the least disturbed one. Bandwidth is measured
            # between the engines' runs, so it sees the same load.
            ours = ref = None
            bw = 0.0
            loads = []
            runs = []
            membw = str(build / "benchmarks" / "uaii_bench_membw")
            probe = f"{membw} --threads {threads} --mib 512 --passes 3"
            per_token = weight_bytes_per_token(path)
            for _ in range(args.repeat):
                loads.append(os.getloadavg()[0])
                bw = max(bw, run_json([membw, "--threads", str(threads)])["read_gb_per_s"])
                mine = with_adjacent_roofline(run_json([str(build / "benchmarks" / "uaii_bench_generate"), path, "--prompt", str(args.prompt),
                                                        "--gen", str(args.gen), "--threads", str(threads), "--probe", probe,
                                                        "--probe-every", str(args.probe_every)]), per_token)
                theirs = with_adjacent_roofline(run_json([sys.executable, "-c", LLAMA_CPP_RUNNER, path, str(args.prompt), str(args.gen),
                                                          str(threads), probe, str(args.probe_every)]), per_token)
                runs.append({"uaii": mine, "llama_cpp": theirs})
                ours, ref = best(ours, mine), best(ref, theirs)
            roofline = bw * 1e9 / per_token
            row = {
                "model": name, "threads": threads, "repeat": args.repeat, "load_avg_1min": loads,
                "bandwidth_gb_s": bw, "weight_bytes_per_token": per_token,
                "roofline_tokens_per_s": roofline,
                "uaii": ours, "llama_cpp": ref,
                "prefill_ratio": ours["prefill_tokens_per_s"] / ref["prefill_tokens_per_s"],
                "decode_ratio": ours["decode_tokens_per_s"] / ref["decode_tokens_per_s"],
                "decode_roofline_fraction": ours["decode_tokens_per_s"] / roofline,
                "runs": runs,
            }
            rows.append(row)
            print(f"{name:28s} t={threads}  prefill {ours['prefill_tokens_per_s']:7.1f} vs {ref['prefill_tokens_per_s']:7.1f} "
                  f"({row['prefill_ratio']:.2f}x)  decode {ours['decode_tokens_per_s']:6.1f} vs "
                  f"{ref['decode_tokens_per_s']:6.1f} ({row['decode_ratio']:.2f}x)  roofline {roofline:6.1f} "
                  f"({row['decode_roofline_fraction']:.0%})  bw {bw:.1f} GB/s  adjacent roofline: uaii "
                  f"{ours['adjacent_roofline_fraction']:.0%} llama.cpp {ref['adjacent_roofline_fraction']:.0%}  "
                  f"load {max(loads):.1f}", flush=True)
    result = {"llama_cpp_python": llama_cpp.__version__, "prompt": args.prompt, "gen": args.gen, "rows": rows}
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
