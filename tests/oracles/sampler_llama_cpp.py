#!/usr/bin/env python3
"""Golden values from llama.cpp itself: its sampler API through llama-cpp-python's
low-level ctypes bindings (llama_sampler_init_top_k, ..._top_p, ..._min_p,
..._temp_ext, ..._penalties, ..._dist, applied with llama_sampler_apply to a
llama_token_data_array; no model is needed).

The chain is built like common_sampler_init's default (common/sampling.cpp):
  penalties -> top_n_sigma(-1) -> top_k -> typical(1.0) -> top_p -> min_p -> temp_ext(t, 0, 1) -> dist(seed)
(DRY and XTC are left out: disabled by default, and DRY needs a vocabulary.)
The inputs are tests/oracles/sampler_cases.py's, the same as the numpy oracles'.

Run (needs `pip install -r requirements/oracle.txt`):
  python3 tests/oracles/sampler_llama_cpp.py     (writes tests/golden/sampling/llama_cpp.json)
"""
import ctypes
import os
import sys

import numpy as np
import llama_cpp as L

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sampler_cases  # noqa: E402


def make_array(logits):
    n = len(logits)
    data = (L.llama_token_data * n)()
    for i, x in enumerate(np.asarray(logits, dtype=np.float32)):
        data[i].id = i
        data[i].logit = float(x)
        data[i].p = 0.0
    arr = L.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
    return arr, data  # keep `data` alive while `arr` is used


def read_array(arr):
    ids = [int(arr.data[i].id) for i in range(arr.size)]
    logits = np.array([arr.data[i].logit for i in range(arr.size)], dtype=np.float32)
    return ids, logits


def penalties(prm):
    # llama.cpp takes penalty_last_n >= 0 only; common maps -1 to the context size.
    return L.llama_sampler_init_penalties(0, prm["penalty_last_n"], prm["repeat_penalty"],
                                          prm["frequency_penalty"], prm["presence_penalty"])


def chain(prm, seed=None):
    ch = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
    mk = prm["min_keep"]
    for s in (penalties(prm),
              L.llama_sampler_init_top_n_sigma(-1.0),
              L.llama_sampler_init_top_k(prm["top_k"]),
              L.llama_sampler_init_typical(1.0, mk),
              L.llama_sampler_init_top_p(prm["top_p"], mk),
              L.llama_sampler_init_min_p(prm["min_p"], mk),
              L.llama_sampler_init_temp_ext(prm["temperature"], 0.0, 1.0)):
        L.llama_sampler_chain_add(ch, s)
    if seed is not None:
        L.llama_sampler_chain_add(ch, L.llama_sampler_init_dist(seed))
    return ch


def single(stage, prm):
    mk = prm["min_keep"]
    return {"penalties": lambda: penalties(prm),
            "top_k": lambda: L.llama_sampler_init_top_k(prm["top_k"]),
            "top_p": lambda: L.llama_sampler_init_top_p(prm["top_p"], mk),
            "min_p": lambda: L.llama_sampler_init_min_p(prm["min_p"], mk),
            "temperature": lambda: L.llama_sampler_init_temp(prm["temperature"])}[stage]()


def expected_for(case):
    prm, stage = case["params"], case["stage"]
    if stage == "draw":
        smpl = chain(prm, seed=case["seed"])
        tokens = []
        for row in case["rows"]:
            arr, keep = make_array(row)
            L.llama_sampler_apply(smpl, ctypes.byref(arr))
            assert 0 <= arr.selected < arr.size, case["name"]
            tok = int(arr.data[arr.selected].id)
            L.llama_sampler_accept(smpl, tok)
            tokens.append(tok)
        L.llama_sampler_free(smpl)
        return dict(tokens=tokens)
    smpl = chain(prm) if stage == "chain" else single(stage, prm)
    for t in case["window"]:
        L.llama_sampler_accept(smpl, t)
    arr, keep = make_array(case["logits"])
    L.llama_sampler_apply(smpl, ctypes.byref(arr))
    ids, logits = read_array(arr)
    L.llama_sampler_free(smpl)
    return dict(ids=ids, logits=sampler_cases.f32_list(logits))


def main():
    cases = []
    for c in sampler_cases.build_cases():
        if c["params"]["penalty_last_n"] < 0:
            continue  # not expressible in llama.cpp's API (see penalties())
        cases.append(sampler_cases.case_json(c, expected_for(c)))
    golden = dict(
        reference="llama.cpp sampler API (src/llama-sampler.cpp) via llama-cpp-python low-level bindings",
        generator="tests/oracles/sampler_llama_cpp.py",
        llama_cpp_python=L.__version__,
        numpy=np.__version__,
        cases=cases)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sampler_cases.write_golden(os.path.join(root, "golden", "sampling", "llama_cpp.json"), golden)


if __name__ == "__main__":
    main()
