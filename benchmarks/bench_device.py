#!/usr/bin/env python3
"""Prefill and decode tok/s per device, side by side with the CPU in one run, through
the CLI (`uaii generate --device D --json`, greedy): docs/performance.md "Devices".

    python3 benchmarks/bench_device.py [--model GGUF ...] [--devices cpu,vulkan]
        [--prompt-tokens 128] [--max-tokens 64] [--repeats 3] [--json-out FILE]

Each (model, device) pair runs --repeats times, alternating the devices so that a
drift of the machine falls on both; the median of each figure is reported, with the
ratio to the first device (cpu). --vram-gb is passed through (a budget below the
model's size streams weights through staging). On Mesa's lavapipe (this project's CI
machines) the Vulkan figures are a smoke run, not a measurement: it is a CPU
implementation far slower than the CPU backend. Without --model: the default model."""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def default_model():
    home = pathlib.Path(os.environ.get("UAII_HOME", os.path.expanduser("~/.cache/uaii")))
    return str(home / "models" / "gemma-3-270m-q4_k_m.gguf")


def find_uaii(explicit):
    for cand in ([explicit] if explicit else []) + [ROOT / "build" / "uaii", ROOT / "build" / "cli" / "uaii"]:
        if cand and pathlib.Path(cand).is_file():
            return str(cand)
    sys.exit("bench_device: no uaii binary (build first, or pass --uaii)")


def prompt_of(n_tokens):
    # Plain words: about one token each with the families' tokenizers.
    words = "the quick brown fox jumps over a lazy dog while seven small birds sing".split()
    return " ".join(words[i % len(words)] for i in range(n_tokens))


def run_once(uaii, model, device, prompt, max_tokens, threads, vram_gb):
    cmd = [uaii, "generate", "--model", model, "--device", device, "-p", prompt, "--max-tokens", str(max_tokens),
           "--temp", "0", "--json"]
    if threads:
        cmd += ["--threads", str(threads)]
    if vram_gb is not None and device != "cpu":
        cmd += ["--vram-gb", str(vram_gb)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}...: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    d = json.loads(p.stdout)
    return {"prefill_tokens_per_s": d["timings"]["prefill_tokens_per_s"],
            "decode_tokens_per_s": d["timings"]["decode_tokens_per_s"],
            "prompt_tokens": d["usage"]["prompt_tokens"], "completion_tokens": d["usage"]["completion_tokens"],
            "device": d.get("device", {}), "tokens": d.get("tokens")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", help="GGUF file (repeatable; default: the default model)")
    ap.add_argument("--devices", default="cpu,vulkan", help="comma-separated, the first is the baseline")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--vram-gb", type=float, default=None)
    ap.add_argument("--uaii", default=None)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    uaii = find_uaii(a.uaii)
    models = a.model or [default_model()]
    devices = a.devices.split(",")
    prompt = prompt_of(a.prompt_tokens)
    results = []
    for model in models:
        runs = {d: [] for d in devices}
        for _ in range(a.repeats):
            for d in devices:
                try:
                    runs[d].append(run_once(uaii, model, d, prompt, a.max_tokens, a.threads, a.vram_gb))
                except RuntimeError as e:
                    print(f"bench_device: {pathlib.Path(model).name} on {d}: {e}", file=sys.stderr)
        base = None
        for d in devices:
            if not runs[d]:
                continue
            row = {"model": model, "device": d, "repeats": len(runs[d]),
                   "prefill_tokens_per_s": statistics.median(r["prefill_tokens_per_s"] for r in runs[d]),
                   "decode_tokens_per_s": statistics.median(r["decode_tokens_per_s"] for r in runs[d]),
                   "prompt_tokens": runs[d][0]["prompt_tokens"],
                   "completion_tokens": runs[d][0]["completion_tokens"], "placement": runs[d][0]["device"],
                   "same_tokens_as_baseline": None}
            if base is None:
                base = row
                base_tokens = runs[d][0]["tokens"]
            else:
                row["same_tokens_as_baseline"] = runs[d][0]["tokens"] == base_tokens
            row["prefill_ratio"] = row["prefill_tokens_per_s"] / base["prefill_tokens_per_s"]
            row["decode_ratio"] = row["decode_tokens_per_s"] / base["decode_tokens_per_s"]
            results.append(row)
    print(f"{'model':32} {'device':10} {'prompt':>6} {'gen':>4} {'prefill tok/s':>14} {'x':>6} "
          f"{'decode tok/s':>13} {'x':>6}  same tokens")
    for r in results:
        same = "-" if r["same_tokens_as_baseline"] is None else ("yes" if r["same_tokens_as_baseline"] else "no")
        print(f"{pathlib.Path(r['model']).name[:32]:32} {r['device']:10} {r['prompt_tokens']:6d} "
              f"{r['completion_tokens']:4d} {r['prefill_tokens_per_s']:14.1f} {r['prefill_ratio']:6.2f} "
              f"{r['decode_tokens_per_s']:13.2f} {r['decode_ratio']:6.2f}  {same}")
    if a.json_out:
        pathlib.Path(a.json_out).write_text(json.dumps(results, indent=1))
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
