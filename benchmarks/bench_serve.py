#!/usr/bin/env python3
"""`uaii serve` against llama.cpp's llama-server, side by side in one run: requests/s,
tokens/s and time to first token at 1, 2, 4 and 8 concurrent clients.

Both servers load the same model with the same context per slot and the same threads, one
at a time on a free 127.0.0.1 port. For each concurrency C a server is started afresh
(its prompt caches empty), warmed with one request, and then C clients, each sending its
next request when its last one finished, drain a fixed workload of max(8, 4*C) chat
requests: distinct prompts, temperature 0, `max_tokens` (32) tokens, streamed. Per request
it times the first content token (TTFT) and the whole answer; the run's wall time gives
requests/s and completion tokens/s (the servers' own `usage` counts). Both engines get the
same requests in the same order, and the engines alternate within each C so that load
from elsewhere on the machine falls on both.

  llama-server: -np C (slots = clients) -c ctx*C (it divides -c among its slots) -t T -tb T
    (--llama-threads runs more T settings).
  uaii serve: one or more variants PARALLEL:THREADS, PARALLEL a number or C (slots =
    clients), THREADS the compute threads the slots share (uaii serve --threads): a number,
    T (= --threads) or auto (uaii's default: the physical cores), and an optional third
    field `nobatch` (uaii serve --no-batch: each slot's forward pass alone instead of the
    slots' pending steps batched into one). The default variants are C:auto (the
    like-for-like setting), 1:T (one slot with every thread, the rest queue), C:T and
    C:auto:nobatch (what batching gains).
Ratios are uaii / llama-server, for the first of each (default) and the best of each by
requests/s (best): above 1 is better for requests/s and tokens/s, below 1 is
better for TTFT.

llama-server comes from benchmarks/build_llama_server.sh (built from the llama.cpp tree of
the llama-cpp-python sdist in ~/.cache/uaii/downloads; cached after the first build).
usage: bench_serve.py [--build build] [--model PATH] [--concurrency 1 2 4 8] [--max-tokens 32]
                      [--ctx 512] [--threads 2] [--uaii C:auto 1:T C:T C:auto:nobatch] [--json out.json]
                      [--llama-threads 2 1] [--llama-server PATH]
Standard library only.
"""
import argparse
import http.client
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
HOME = pathlib.Path(os.environ.get("UAII_HOME", os.path.expanduser("~/.cache/uaii")))

# Open-ended asks, so that greedy decoding runs to max_tokens rather than stopping early;
# the subject comes first so that no two prompts share more than the chat template's prefix.
SUBJECTS = ["a lighthouse keeper", "the moon", "a lost umbrella", "volcanoes", "a chess club", "bread",
            "a river in winter", "old maps", "a robot gardener", "thunderstorms", "the first library",
            "a town of cats", "glaciers", "a paper boat", "night trains", "honeybees", "a clockmaker",
            "deserts at dawn", "a violin", "coral reefs", "a snowed-in cabin", "comets", "a street market",
            "owls", "a forgotten island", "wind turbines", "a bakery at 4 am", "tides", "a kite festival",
            "penguins", "a broken telescope", "autumn forests", "a jazz club", "salt", "a mountain pass",
            "fireflies", "a shipwreck", "the printing press", "a city rooftop", "wolves"]
ASKS = ["Write a short story about it.", "Describe it in vivid detail.", "Tell me everything you know about it.",
        "Write a poem about it."]


def prompts(n, offset=0):
    out = []
    for i in range(offset, offset + n):
        s, a = SUBJECTS[i % len(SUBJECTS)], ASKS[(i // len(SUBJECTS)) % len(ASKS)]
        out.append(f"{s[0].upper()}{s[1:]}. {a}")
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server process on 127.0.0.1:port, its output in a log file."""

    def __init__(self, name, argv, port):
        self.name, self.argv, self.port = name, argv, port
        self.log = tempfile.NamedTemporaryFile(prefix="bench_serve_", suffix=".log", delete=False)
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"{self.name} not healthy after {timeout} s:\n{self.log_tail()}")

    def log_tail(self, n=30):
        return "\n".join(pathlib.Path(self.log.name).read_text(errors="replace").splitlines()[-n:])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.log.name)


def stream_chat(port, prompt, max_tokens):
    """One streamed chat completion: seconds to the first content token and to the end,
    completion tokens (the server's usage, else the content chunks), and the text."""
    body = json.dumps({"model": "default", "messages": [{"role": "user", "content": prompt}],
                       "temperature": 0, "max_tokens": max_tokens, "stream": True,
                       "stream_options": {"include_usage": True}})
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:300]!r}")
    ttft, chunks, usage, text = None, 0, None, []
    while True:
        line = r.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        ev = json.loads(data)
        if "error" in ev:
            raise RuntimeError(f"stream error: {ev['error']}")
        if ev.get("usage"):
            usage = ev["usage"]
        for ch in ev.get("choices") or []:
            piece = (ch.get("delta") or {}).get("content")
            if piece:
                if ttft is None:
                    ttft = time.perf_counter() - t0
                chunks += 1
                text.append(piece)
    total = time.perf_counter() - t0
    c.close()
    tokens = usage["completion_tokens"] if usage and "completion_tokens" in usage else chunks
    return {"ttft_s": ttft if ttft is not None else total, "total_s": total, "tokens": tokens,
            "prompt_tokens": (usage or {}).get("prompt_tokens"), "text": "".join(text)}


def run_workload(port, requests, clients, max_tokens):
    """`clients` threads drain `requests` in order, each sending its next request when its
    last one finished (closed loop): the wall time and each request's figures."""
    results = [None] * len(requests)
    nxt = iter(range(len(requests)))
    lock = threading.Lock()
    errors = []

    def client():
        while True:
            with lock:
                i = next(nxt, None)
            if i is None or errors:
                return
            try:
                results[i] = stream_chat(port, requests[i], max_tokens)
            except Exception as e:  # reported after the join, the run is void
                errors.append(f"request {i}: {e}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise SystemExit("; ".join(errors[:3]))
    return wall, results


def quantile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summarize(wall, results):
    ttft = [r["ttft_s"] for r in results]
    tokens = sum(r["tokens"] for r in results)
    # Each request's decode rate after its first token: what one client sees streaming.
    per_req = [(r["tokens"] - 1) / (r["total_s"] - r["ttft_s"]) for r in results
               if r["tokens"] > 1 and r["total_s"] > r["ttft_s"]]
    return {"requests": len(results), "wall_s": wall, "requests_per_s": len(results) / wall,
            "completion_tokens": tokens, "tokens_per_s": tokens / wall,
            "ttft_median_s": statistics.median(ttft), "ttft_p90_s": quantile(ttft, 0.9),
            "latency_median_s": statistics.median(r["total_s"] for r in results),
            "stream_tokens_per_s_median": statistics.median(per_req) if per_req else None}


def llama_server_argv(binary, model, slots, ctx, threads, port, chat_template):
    argv = [binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-np", str(slots),
            "-c", str(ctx * slots), "-t", str(threads), "-tb", str(threads), "--no-webui"]
    # The default model's GGUF carries no chat template: uaii falls back to its built-in
    # Gemma template, llama-server to ChatML unless told. Its legacy (non-Jinja) "gemma"
    # template is the same text; the prompt token counts are compared below to prove it.
    return argv + (["--no-jinja", "--chat-template", chat_template] if chat_template else [])


def uaii_argv(binary, model, slots, ctx, threads, port, batch=True):
    argv = [binary, "serve", "--model", model, "--host", "127.0.0.1", "--port", str(port),
            "--parallel", str(slots), "--max-context", str(ctx)]
    return argv + (["--threads", str(threads)] if threads != "auto" else []) + ([] if batch else ["--no-batch"])


def parse_variant(spec, c, default_threads):
    """PARALLEL:THREADS[:nobatch] -> (slots, threads, batch) at concurrency c."""
    par, _, rest = spec.partition(":")
    thr, _, flag = rest.partition(":")
    if flag not in ("", "nobatch"):
        raise SystemExit(f"bench_serve.py: variant {spec!r}: the third field can only be 'nobatch'")
    slots = c if par == "C" else int(par)
    threads = thr or "auto"
    if threads != "auto":
        threads = default_threads if threads == "T" else int(threads)
    return slots, threads, flag != "nobatch"


def effective_threads(slots, threads):
    """The threads uaii's slots share (ComputeThreads) when it is left to choose: the cores."""
    return (os.cpu_count() or 1) if threads == "auto" else threads


def version_of(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    return (p.stdout + p.stderr).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--model", default=str(HOME / "models" / "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--ctx", type=int, default=512, help="context positions per slot, both engines")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="llama-server's -t/-tb; T in a uaii variant")
    ap.add_argument("--uaii", nargs="+", default=["C:auto", "1:T", "C:T", "C:auto:nobatch"],
                    help="uaii serve variants PARALLEL:THREADS[:nobatch] (PARALLEL a number or C = clients; "
                         "THREADS shared by the slots: a number, T = --threads, or auto; nobatch: --no-batch, "
                         "each slot's forward pass alone); the first is the one "
                         "the ratios use, the best of all is reported too")
    ap.add_argument("--requests", type=int, default=0, help="requests per concurrency (0: max(8, 4*C))")
    ap.add_argument("--llama-chat-template", default="gemma",
                    help="llama-server's built-in template for a model without one ('' = the model's own)")
    ap.add_argument("--llama-threads", type=int, nargs="*", default=[],
                    help="llama-server -t/-tb settings to run (default: --threads); the first is the reference "
                         "of the default ratios, the best of them that of the best ratios")
    ap.add_argument("--llama-server", default="",
                    help="binary (default: build_llama_server.sh's, built if missing); none: uaii's variants only")
    ap.add_argument("--json", default="", help="write the figures here")
    args = ap.parse_args()

    uaii_bin = str(pathlib.Path(args.build) / "uaii")
    # "none": uaii's variants only (what one uaii change does, e.g. C:auto against
    # C:auto:nobatch), with no reference; never a figure against llama-server.
    reference = args.llama_server != "none"
    llama_bin = (args.llama_server or subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "build_llama_server.sh")], capture_output=False,
        stdout=subprocess.PIPE, text=True, check=True).stdout.strip().splitlines()[-1]) if reference else "none"
    sdist = pathlib.Path(os.environ.get("UAII_LLAMA_CPP_SDIST", HOME / "downloads" / "llama_cpp_python-0.3.36.tar.gz"))
    llama_version = version_of([llama_bin, "--version"]) if reference else "not run"
    uaii_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip()
    meta = {"model": args.model, "ctx_per_slot": args.ctx, "threads": args.threads, "max_tokens": args.max_tokens,
            "cpus": os.cpu_count(), "load_average_start": os.getloadavg(),
            "llama_cpp": {"sdist": sdist.name, "version": llama_version, "binary": llama_bin},
            "uaii_commit": uaii_commit, "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    print(f"model {pathlib.Path(args.model).name}, {args.ctx} positions per slot, {args.max_tokens} tokens per "
          f"request (greedy, streamed), llama-server -t {args.threads}; load average {os.getloadavg()[0]:.2f}")
    print(f"llama.cpp: {sdist.name}, {' '.join(l for l in llama_version.splitlines() if 'version' in l)}; "
          f"uaii {uaii_commit}", flush=True)

    rows = []
    t_start = time.perf_counter()
    for c in args.concurrency:
        n = args.requests or max(8, 4 * c)
        reqs = prompts(n)
        engines = [(f"llama-server t{t}", lambda port, c=c, t=t: llama_server_argv(
            llama_bin, args.model, c, args.ctx, t, port, args.llama_chat_template), c, t, None)
            for t in (args.llama_threads or [args.threads]) if reference]
        for spec in args.uaii:
            slots, threads, batch = parse_variant(spec, c, args.threads)
            engines.append((f"uaii {spec}", lambda port, s=slots, t=threads, b=batch: uaii_argv(
                uaii_bin, args.model, s, args.ctx, t, port, b), slots, effective_threads(slots, threads), batch))
        done = {}  # (slots, threads, batch) -> its row: variants that coincide at this C run once
        for name, argv_of, slots, threads, batch in engines:
            key = (slots, threads, batch)
            if name.startswith("uaii") and key in done:
                rows.append({**done[key], "engine": name, "same_run_as": done[key]["engine"]})
                print(f"  C={c} {name:16} slots {slots} x {threads} threads: the run of {rows[-1]['same_run_as']}")
                continue
            port = free_port()
            srv = Server(name, argv_of(port), port).wait_ready()
            try:
                stream_chat(port, "Say hello.", args.max_tokens)  # warm-up: first-touch pages, thread pools
                wall, results = run_workload(port, reqs, c, args.max_tokens)
            finally:
                srv.stop()
            s = summarize(wall, results)
            s.update({"engine": name, "concurrency": c, "slots": slots, "threads_per_slot": threads,
                      "argv": argv_of(port)[1:], "texts": [r["text"] for r in results],
                      "prompt_tokens": [r["prompt_tokens"] for r in results]})
            rows.append(s)
            if name.startswith("uaii"):
                done[key] = s
            print(f"  C={c} {name:16} slots {slots} x {threads} threads: {s['requests_per_s']:.2f} req/s, "
                  f"{s['tokens_per_s']:.1f} tok/s, TTFT median {1000 * s['ttft_median_s']:.0f} ms", flush=True)
    meta["seconds"] = time.perf_counter() - t_start
    meta["load_average_end"] = os.getloadavg()

    ratios = []
    for c in args.concurrency if reference else []:
        theirs = [r for r in rows if r["concurrency"] == c and r["engine"].startswith("llama-server")]
        ours = [r for r in rows if r["concurrency"] == c and r["engine"].startswith("uaii")]
        best = max(ours, key=lambda r: r["requests_per_s"])
        best_ref = max(theirs, key=lambda r: r["requests_per_s"])
        for label, u, ref in (("default", ours[0], theirs[0]), ("best", best, best_ref)):
            ratios.append({"concurrency": c, "which": label, "uaii_engine": u["engine"], "llama_engine": ref["engine"],
                           "requests_per_s": u["requests_per_s"] / ref["requests_per_s"],
                           "tokens_per_s": u["tokens_per_s"] / ref["tokens_per_s"],
                           "ttft_median": u["ttft_median_s"] / ref["ttft_median_s"],
                           "ttft_p90": u["ttft_p90_s"] / ref["ttft_p90_s"]})
        for u in ours:
            ref = theirs[0]
            same = sum(a == b for a, b in zip(u["texts"], ref["texts"]))
            u["same_text_as_llama_server"] = same
            if u["prompt_tokens"] != ref["prompt_tokens"]:
                print(f"warning: C={c} {u['engine']} prompt tokens {u['prompt_tokens']} differ from llama-server's "
                      f"{ref['prompt_tokens']}: not the same chat template", file=sys.stderr)

    print()
    print(f"{'C':>2} {'engine':16} {'slots x thr':>11} {'req/s':>6} {'tok/s':>6} {'TTFT med ms':>11} "
          f"{'TTFT p90 ms':>11} {'latency med s':>13} {'stream tok/s':>12} {'tokens':>6}")
    for r in rows:
        st = r["stream_tokens_per_s_median"]
        print(f"{r['concurrency']:2d} {r['engine']:16} {r['slots']:>5} x {r['threads_per_slot']:<3} "
              f"{r['requests_per_s']:6.2f} {r['tokens_per_s']:6.1f} {1000 * r['ttft_median_s']:11.0f} "
              f"{1000 * r['ttft_p90_s']:11.0f} {r['latency_median_s']:13.2f} {st if st else 0:12.1f} "
              f"{r['completion_tokens']:6d}")
    print()
    if reference:
        print("ratios uaii / llama-server (req/s, tok/s: >1 uaii faster; TTFT: <1 uaii sooner)")
    for q in ratios:
        print(f"{q['concurrency']:2d} {q['which']:7} {q['uaii_engine']:14} / {q['llama_engine']:15} req/s {q['requests_per_s']:.2f}x  "
              f"tok/s {q['tokens_per_s']:.2f}x  TTFT median {q['ttft_median']:.2f}x  p90 {q['ttft_p90']:.2f}x")
    same = [(r["concurrency"], r["engine"], r["same_text_as_llama_server"], r["requests"]) for r in rows
            if "same_text_as_llama_server" in r]
    if reference:
        print("greedy answers equal to llama-server's: " + ", ".join(f"C={c} {e} {s}/{n}" for c, e, s, n in same))
    for c in args.concurrency:  # uaii's variants against its first: the same greedy answers
        ours = [r for r in rows if r["concurrency"] == c and r["engine"].startswith("uaii")]
        print(f"C={c} greedy answers equal to {ours[0]['engine']}'s: " + ", ".join(
            f"{u['engine']} {sum(a == b for a, b in zip(u['texts'], ours[0]['texts']))}/{u['requests']}"
            for u in ours[1:]))
    print(f"({meta['seconds']:.0f} s; load average at the end {os.getloadavg()[0]:.2f})")
    if args.json:
        for r in rows:
            r.pop("texts")
        pathlib.Path(args.json).write_text(json.dumps({"meta": meta, "results": rows, "ratios": ratios}, indent=1))


if __name__ == "__main__":
    main()
