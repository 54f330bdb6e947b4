#!/usr/bin/env python3
"""Throughput of uaii.serve_ray for a fixed small workload, per replica layout: the figures of
docs/serving.md ("Scale-out with Ray Serve"). Needs requirements/ray.txt and the Python SDK.

    python3 scripts/bench_serve_ray.py [--model PATH] [--layouts 1x1,2x1,1x2] [--requests 16]

A layout RxT is R replicas of T engine threads (each reserving T Ray CPUs). The workload: N
distinct greedy chat requests (max_tokens M) sent by C client threads through the official
openai client. One JSON line per layout: startup seconds (serve.run until every replica
answers), wall seconds, requests/s and generated tokens/s. --in-process adds the baseline
without Ray: the same requests one after another on a uaii.Model in this process.
"""
import argparse
import concurrent.futures
import json
import os
import socket
import time

import openai
import ray
from ray import serve

from uaii import serve_ray


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def messages(i: int) -> list:
    return [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": f"Write one sentence about the number {i}."}]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=os.path.expanduser("~/.cache/uaii/models/gemma-3-270m-q4_k_m.gguf"))
    p.add_argument("--layouts", default="1x1,2x1,1x2")
    p.add_argument("--requests", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--num-cpus", type=int, default=os.cpu_count())
    p.add_argument("--in-process", action="store_true",
                   help="first run the workload on a uaii.Model in this process (one request at a time)")
    args = p.parse_args()

    if args.in_process:
        # The same workload on one uaii.Model in this process, no Ray: the overhead baseline.
        import uaii
        with uaii.Model(args.model) as model:
            for i in range(-2, 0):
                model.create_chat_completion(messages(i), max_tokens=args.max_tokens, temperature=0)
            t = time.monotonic()
            tokens = sum(model.create_chat_completion(messages(i), max_tokens=args.max_tokens, temperature=0)
                         ["usage"]["completion_tokens"] for i in range(args.requests))
            wall = time.monotonic() - t
        print(json.dumps({"layout": "in-process", "requests": args.requests, "max_tokens": args.max_tokens,
                          "wall_s": round(wall, 2), "requests_per_s": round(args.requests / wall, 2),
                          "tokens_per_s": round(tokens / wall, 1)}), flush=True)

    t = time.monotonic()
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    print(json.dumps({"ray_init_s": round(time.monotonic() - t, 1), "num_cpus": args.num_cpus}), flush=True)
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", timeout=600)

    def ask(i: int):
        raw = client.chat.completions.with_raw_response.create(
            model="any", messages=messages(i), max_tokens=args.max_tokens, temperature=0)
        return raw.headers[serve_ray.REPLICA_HEADER], raw.parse().usage.completion_tokens

    try:
        for layout in args.layouts.split(","):
            replicas, threads = (int(x) for x in layout.split("x"))
            t = time.monotonic()
            serve.run(serve_ray.build_app(args.model, replicas, num_cpus_per_replica=threads, threads=threads),
                      name="bench", route_prefix="/")
            with concurrent.futures.ThreadPoolExecutor(replicas * 2) as pool:  # every replica answers once
                list(pool.map(ask, range(-replicas * 2, 0)))
            startup = time.monotonic() - t
            t = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
                answers = list(pool.map(ask, range(args.requests)))
            wall = time.monotonic() - t
            tokens = sum(n for _, n in answers)
            print(json.dumps({"layout": layout, "replicas": replicas, "threads_per_replica": threads,
                              "startup_s": round(startup, 1), "requests": args.requests,
                              "concurrency": args.concurrency, "max_tokens": args.max_tokens,
                              "wall_s": round(wall, 2), "requests_per_s": round(args.requests / wall, 2),
                              "tokens_per_s": round(tokens / wall, 1),
                              "replicas_answering": len({name for name, _ in answers})}), flush=True)
            serve.delete("bench")
    finally:
        serve.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    main()
