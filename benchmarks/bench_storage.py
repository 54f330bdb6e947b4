#!/usr/bin/env python3
"""Storage benchmark (docs/performance.md, "Storage"): decode tokens/s and weight bytes
read per token for a 7B-shaped Q4_0 file under budgets of 1, 2 and 4 GiB and
unbudgeted, cold (POSIX_FADV_DONTNEED on the file first) and warm, next to the disk's
sequential read bandwidth measured in the same run, the cost model's prediction
(`uaii generate --dry-run --json`), and llama.cpp (llama-cpp-python, mmap) on the same file.

    python3 benchmarks/bench_storage.py --uaii build/uaii [--model F.gguf] [--tokens 4] [--out results.json]

Without --model the file is written by benchmarks/make_7b_q4_0.py into a temporary
directory (about 3.6 GiB). Peak RSS is the OS's figure for each run (wait4)."""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

GiB = 1 << 30
HERE = pathlib.Path(__file__).resolve().parent


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def disk_bandwidth(path, limit=1 * GiB):
    """Cold sequential read of the first `limit` bytes: bytes/s."""
    drop_cache(path)
    fd = os.open(path, os.O_RDONLY)
    t0, done = time.perf_counter(), 0
    try:
        while done < limit:
            b = os.pread(fd, 8 << 20, done)
            if not b:
                break
            done += len(b)
    finally:
        os.close(fd)
    return done / (time.perf_counter() - t0)


def run_uaii(exe, model, flags, tokens, env):
    args = [str(exe), "generate", "--model", str(model), "-p", "hello world", "--max-tokens", str(tokens),
            "--max-context", "256", "--json", *flags]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(err.decode())
    doc = json.loads(out)
    n = max(1, len(doc["tokens"]))
    return {
        "decode_tokens_per_s": doc["timings"]["decode_tokens_per_s"],
        "prefill_tokens_per_s": doc["timings"]["prefill_tokens_per_s"],
        # one prefill pass (the prompt fits one chunk) + n - 1 decode steps
        "bytes_read_per_token": doc["memory"].get("bytes_read", 0) / n,
        "io_wait_seconds": doc["memory"].get("io_wait_seconds", 0),
        "compute_seconds": doc["memory"].get("compute_seconds", 0),
        "peak_rss_bytes": ru.ru_maxrss * 1024,
        "tokens": doc["tokens"],
    }


def dry_run(exe, model, flags, env):
    p = subprocess.run([str(exe), "generate", "--model", str(model), "--dry-run", "--json", "--max-context", "256",
                        *flags], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)


def run_llamacpp(model, tokens, threads):
    try:
        import llama_cpp
    except ImportError:
        return {"skipped": "llama-cpp-python is not installed"}
    t0 = time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(model), n_ctx=256, n_threads=threads, use_mmap=True, verbose=False)
    load = time.perf_counter() - t0
    ids = llm.tokenize(b"hello world")
    t1 = time.perf_counter()
    llm.eval(ids)
    t2 = time.perf_counter()
    out = []
    for _ in range(tokens):
        tok = llm.sample(temp=0.0)
        out.append(int(tok))
        llm.eval([tok])
    t3 = time.perf_counter()
    import resource
    return {"version": llama_cpp.__version__, "load_seconds": load, "prefill_seconds": t2 - t1,
            "decode_tokens_per_s": tokens / (t3 - t2), "tokens": out,
            "process_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uaii", type=pathlib.Path, default=HERE.parent / "build" / "uaii")
    ap.add_argument("--model", type=pathlib.Path)
    ap.add_argument("--tokens", type=int, default=4)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--no-llamacpp", action="store_true")
    a = ap.parse_args()
    tmp = None
    model = a.model
    if model is None:
        tmp = tempfile.TemporaryDirectory()
        model = pathlib.Path(tmp.name) / "random-7b-q4_0.gguf"
        subprocess.run([sys.executable, str(HERE / "make_7b_q4_0.py"), str(model)], check=True)
    env = dict(os.environ)
    env.setdefault("UAII_HOME", tempfile.mkdtemp(prefix="uaii_bench_home_"))
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work)",
           "model": str(model), "model_bytes": model.stat().st_size, "tokens": a.tokens,
           "disk_read_bytes_per_s": disk_bandwidth(model), "runs": []}
    for gib in (1, 2, 4, None):
        flags = ["--ram-gb", str(gib)] if gib else ["--preset", "none"]
        flags += ["--threads", str(a.threads)]
        plan = dry_run(a.uaii, model, flags, env)
        for temp in ("cold", "warm"):
            if temp == "cold":
                drop_cache(model)
            r = run_uaii(a.uaii, model, flags, a.tokens, env)
            r.update(budget_gib=gib, cache=temp,
                     predicted_decode_tokens_per_s=plan["prediction"][f"decode_tokens_per_s_{temp}"],
                     planned_bytes_per_token=plan["streamed"]["bytes_per_token"])
            res["runs"].append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "tokens"}), flush=True)
    res["calibration"] = plan["calibration"]
    if not a.no_llamacpp:
        for temp in ("cold", "warm"):
            if temp == "cold":
                drop_cache(model)
            r = run_llamacpp(model, a.tokens, a.threads)
            r["cache"] = temp
            res.setdefault("llamacpp", []).append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "tokens"}), flush=True)
    text = json.dumps(res, indent=2)
    if a.out:
        a.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
