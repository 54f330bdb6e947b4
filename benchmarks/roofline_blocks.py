#!/usr/bin/env python3
"""Own-seconds roofline per bandwidth mode, from bench_vs_llamacpp.py --json output.

This VM's read bandwidth sits in one of two modes (about 29-36 and 50-64 GB/s at 2
threads, docs/performance.md) and changes within seconds, so a decode block of 16
tokens is held to the probes taken just before and after it. This prints, per model
and engine, the median fraction of the roofline over the blocks whose two probes
were both in the usual mode (below --usual-below GB/s) and both in the high mode
(above --high-above), plus each repeat's decode tokens/s.

    python3 benchmarks/roofline_blocks.py out.json [--usual-below 40] [--high-above 45]
"""
import argparse
import ast
import json
import statistics


def block_fractions(blocks, weight_bytes):
    """(fraction, probe before, probe after) per block: tokens/s over bandwidth/bytes."""
    for tokens, secs, before, after in blocks:
        roofline = (before + after) / 2 * 1e9 / weight_bytes
        yield tokens / secs / roofline, before, after


def describe(values):
    if not values:
        return "-"
    return (f"median {statistics.median(values) * 100:.0f}% "
            f"(n={len(values)}, {min(values) * 100:.0f}-{max(values) * 100:.0f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="bench_vs_llamacpp.py --json output")
    ap.add_argument("--usual-below", type=float, default=40.0)
    ap.add_argument("--high-above", type=float, default=45.0)
    args = ap.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    for row in data["rows"]:
        runs = row["runs"] if isinstance(row["runs"], list) else ast.literal_eval(row["runs"])
        for engine in ("uaii", "llama_cpp"):
            usual, high, rates = [], [], []
            for run in runs:
                rates.append(round(run[engine]["decode_tokens_per_s"], 1))
                for frac, before, after in block_fractions(run[engine]["blocks"], row["weight_bytes_per_token"]):
                    if before < args.usual_below and after < args.usual_below:
                        usual.append(frac)
                    elif before > args.high_above and after > args.high_above:
                        high.append(frac)
            print(f"{row['model'][:28]:28s} t={row['threads']} {engine:9s} usual mode {describe(usual)}; "
                  f"high mode {describe(high)}; decode per repeat {rates}")


if __name__ == "__main__":
    main()
