#!/usr/bin/env python3
"""The cost of grammar-constrained decoding, uaii and llama.cpp side by side in one run.

For each grammar (a JSON Schema or GBNF file of tests/data/grammars/ by default), both
engines decode greedily from the same chat prompt on the default model under the same
grammar (a schema becomes GBNF through uaii's converter, whose text is llama.cpp's
converter's byte for byte: tests/sampling/json_schema_grammar_test.cpp), and each reports
the seconds its forward passes took and the seconds the grammar took on top of an
unconstrained sample. The overhead is grammar seconds / (decode + plain sampling
seconds): the decode slowdown the grammar costs.
  uaii: benchmarks/bench_grammar.cpp (uaii_bench_grammar).
  llama.cpp: llama-cpp-python's low-level API, the way common_sampler_sample samples
  under a grammar: argmax, llama_sampler_apply of the grammar on that one token, and
  only when it is refused the grammar on the whole row and argmax again; then
  llama_sampler_accept. Its grammar seconds are those llama_sampler_* calls.
usage: bench_grammar_vs_llamacpp.py [--build build] [--gen 128] [--threads 2] [GRAMMAR_FILE ...]
Run it with the Python that has llama-cpp-python (requirements/oracle.txt); it calls
`python3 -c "import uaii"` (the project's SDK) once per schema to convert it.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import textwrap

from bench_vs_llamacpp import run_json  # the last JSON line a command prints

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT = ["person.schema.json", "event.schema.json", "json.gbnf"]
PROMPTS = {"person.schema.json": "Invent a person and describe them as JSON.",
           "event.schema.json": "Describe a birthday party as JSON.",
           "json.gbnf": "Describe a cat as a JSON object with its name, age and colour."}

LLAMA_CPP_RUNNER = textwrap.dedent("""
    import ctypes, json, sys, time
    import numpy as np
    import llama_cpp as L
    path, gbnf_path, user, n_gen, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    quiet = L.llama_log_callback(lambda *a: None)
    L.llama_log_set(quiet, ctypes.c_void_p(0))
    L.llama_backend_init()
    model = L.llama_model_load_from_file(path.encode(), L.llama_model_default_params())
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)
    text = f"<start_of_turn>user\\n{user}<end_of_turn>\\n<start_of_turn>model\\n".encode()
    buf = (L.llama_token * 4096)()
    n = L.llama_tokenize(vocab, text, len(text), buf, 4096, True, True)
    prompt = list(buf[:n])
    cp = L.llama_context_default_params()
    cp.n_ctx = n + n_gen + 16
    cp.n_threads = cp.n_threads_batch = threads
    ctx = L.llama_init_from_model(model, cp)
    def decode(ids):
        arr = (L.llama_token * len(ids))(*ids)
        if L.llama_decode(ctx, L.llama_batch_get_one(arr, len(ids))) != 0:
            raise SystemExit("llama_decode failed")
        return np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
    t0 = time.perf_counter()
    grammar = L.llama_sampler_init_grammar(vocab, open(gbnf_path).read().encode(), b"root")
    build = time.perf_counter() - t0
    dtype = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
    one = np.zeros(1, dtype=dtype)
    full = np.zeros(n_vocab, dtype=dtype)
    full["id"] = np.arange(n_vocab)
    def apply(cand):
        arr = L.llama_token_data_array(data=ctypes.cast(cand.ctypes.data, ctypes.POINTER(L.llama_token_data)),
                                       size=len(cand), selected=-1, sorted=False)
        L.llama_sampler_apply(grammar, ctypes.byref(arr))
    logits = decode(prompt)
    dec = plain = gram = 0.0
    fast = 0
    out = []
    for _ in range(n_gen):
        a = time.perf_counter()
        t = int(np.argmax(logits))
        b = time.perf_counter()
        one["id"][0], one["logit"][0] = t, 1.0
        apply(one)
        if np.isinf(one["logit"][0]):
            full["logit"] = logits
            apply(full)
            t = int(np.argmax(full["logit"]))
        else:
            fast += 1
        L.llama_sampler_accept(grammar, t)
        c = time.perf_counter()
        plain += b - a
        gram += c - b
        if L.llama_vocab_is_eog(vocab, t):
            break
        out.append(t)
        d = time.perf_counter()
        logits = decode([t])
        dec += time.perf_counter() - d
    print(json.dumps({"tokens": len(out), "decode_s": dec, "sample_plain_s": plain, "sample_grammar_s": gram,
                      "overhead": gram / (dec + plain), "fast_path_steps": fast, "grammar_init_s": build}))
""")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("grammars", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    home = pathlib.Path(os.environ.get("UAII_HOME", os.path.expanduser("~/.cache/uaii")))
    model = str(home / "models" / "gemma-3-270m-q4_k_m.gguf")
    import llama_cpp
    print(f"llama-cpp-python {llama_cpp.__version__}, default model, greedy, {args.gen} tokens at most, "
          f"{args.threads} threads")
    print(f"{'grammar':22} {'engine':9} {'tokens':>6} {'decode s':>9} {'grammar s':>9} {'overhead':>8} "
          f"{'fast steps':>10} {'setup s':>7}")
    for name in args.grammars:
        path = ROOT / "tests" / "data" / "grammars" / name if "/" not in name else pathlib.Path(name)
        gbnf = pathlib.Path("/tmp") / f"bench_grammar_{path.name}.gbnf"
        if path.name.endswith(".json"):
            code = f"import uaii, sys; sys.stdout.write(uaii.json_schema_to_grammar(open({str(path)!r}).read()))"
            gbnf.write_text(subprocess.run(["python3", "-c", code], capture_output=True, text=True, check=True).stdout)
            flag = "--json-schema"
        else:
            gbnf.write_text(path.read_text())
            flag = "--grammar"
        user = PROMPTS.get(path.name, "Answer in the required format.")
        u = run_json([str(pathlib.Path(args.build) / "benchmarks" / "uaii_bench_grammar"), model, flag, str(path),
                      "--prompt", user, "--gen", str(args.gen), "--threads", str(args.threads)])
        u["overhead"] = (u["sample_grammar_s"] - u["sample_plain_s"]) / (u["decode_s"] + u["sample_plain_s"])
        l = run_json([sys.executable, "-c", LLAMA_CPP_RUNNER, model, str(gbnf), user, str(args.gen), str(args.threads)])
        for engine, r, setup in (("uaii", u, u["vocab_build_s"]), ("llama.cpp", l, l["grammar_init_s"])):
            g = r["sample_grammar_s"] - (r["sample_plain_s"] if engine == "uaii" else 0.0)
            print(f"{path.name:22} {engine:9} {r['tokens']:6d} {r['decode_s']:9.3f} {g:9.4f} "
                  f"{100 * r['overhead']:7.1f}% {r['fast_path_steps']:10d} {setup:7.3f}")


if __name__ == "__main__":
    main()
