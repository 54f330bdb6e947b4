"""Inputs shared by the sampler oracles (sampler_penalties.py, sampler_filters.py,
sampler_llama_cpp.py): seeded float32 logits, penalty windows and parameters.

Every oracle writes the SAME cases with its own expected outputs, so the C++
golden test (tests/sampling/golden_test.cpp) runs one loop over any golden file.

Logits are drawn without ties (llama.cpp sorts with an unstable sort, so tied
logits come out in an unspecified order there) and are written as the exact
float32 values (repr of the float64 that equals them).
"""
import json
import os

import numpy as np

SEED = 20240611


def _distinct_logits(rng, n, scale=3.0):
    while True:
        x = (rng.standard_normal(n) * scale).astype(np.float32)
        if len(np.unique(x)) == n:
            return x


def params(**kw):
    base = dict(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0,
                presence_penalty=0.0, frequency_penalty=0.0, penalty_last_n=64, min_keep=0)
    base.update(kw)
    return base


def build_cases():
    """Returns a list of dicts: name, stage, logits (np.float32), window (ids), params.

    stage: penalties | top_k | top_p | min_p | temperature (one filter applied to a
    fresh, unsorted id-ordered array), chain (the whole chain without the draw),
    or draw (the whole chain with the seeded draw, `steps` tokens, each accepted).
    """
    rng = np.random.default_rng(SEED)
    cases = []
    v = 32
    base = _distinct_logits(rng, v)
    base[5] = np.float32(0.0)  # a logit of exactly 0: multiplied by the repeat penalty
    window = [3, 5, 5, 7, 1, 3, 5, 30, 12, 7, 9, 9, 9, 9, 0]
    for i, (rp, fp, pp, n) in enumerate([(1.3, 0.0, 0.0, 64), (1.0, 0.5, 0.0, 64), (1.0, 0.0, 0.7, 64),
                                         (1.1, 0.2, 0.3, 64), (1.1, 0.2, 0.3, 4), (0.8, -0.5, -0.2, 64),
                                         (1.5, 1.0, 1.0, 1), (1.3, 0.4, 0.4, 0)]):
        cases.append(dict(name=f"penalties_{i}", stage="penalties", logits=base, window=window,
                          params=params(repeat_penalty=rp, frequency_penalty=fp, presence_penalty=pp,
                                        penalty_last_n=n)))
    for k in (1, 5, 31, 32, 40):
        cases.append(dict(name=f"top_k_{k}", stage="top_k", logits=base, window=[], params=params(top_k=k)))
    peaked = _distinct_logits(rng, v, scale=1.5)
    for p in (0.05, 0.3, 0.6, 0.9, 0.95, 0.999):
        for mk in (0, 3):
            cases.append(dict(name=f"top_p_{p}_{mk}", stage="top_p", logits=peaked, window=[],
                              params=params(top_p=p, min_keep=mk)))
    for p in (0.01, 0.05, 0.2, 0.5, 0.9):
        for mk in (0, 5):
            cases.append(dict(name=f"min_p_{p}_{mk}", stage="min_p", logits=peaked, window=[],
                              params=params(min_p=p, min_keep=mk)))
    for t in (0.5, 1.0, 1.7, 0.0, -1.0):
        cases.append(dict(name=f"temperature_{t}", stage="temperature", logits=base, window=[],
                          params=params(temperature=t)))
    big = _distinct_logits(rng, 1100, scale=2.0)  # past the 256 / 1024-entry partial-sort paths
    chain_params = [
        ("default", params()),
        ("penalized", params(repeat_penalty=1.2, frequency_penalty=0.1, presence_penalty=0.2)),
        ("no_top_k", params(top_k=0, top_p=0.9, min_p=0.02, temperature=1.1)),
        ("min_p_only", params(top_k=0, top_p=1.0, min_p=0.1, temperature=0.7)),
        ("greedy", params(temperature=0.0)),
    ]
    for name, p in chain_params:
        cases.append(dict(name=f"chain_{name}", stage="chain", logits=base, window=window, params=p))
        if name in ("default", "no_top_k", "min_p_only"):
            cases.append(dict(name=f"chain_big_{name}", stage="chain", logits=big, window=window, params=p))
    # draws: a fixed row of logits per step (rows of a seeded matrix), each
    # sampled token accepted into the penalty window.
    rows = (rng.standard_normal((24, 64)) * 2.0).astype(np.float32)
    draw_params = [
        ("default", params(), 42),
        ("wide_unsorted", params(top_k=0, top_p=1.0, min_p=0.0, temperature=1.0), 7),
        ("penalized", params(repeat_penalty=1.3, presence_penalty=0.5, frequency_penalty=0.2, penalty_last_n=8,
                             temperature=1.2, top_k=20, top_p=0.9, min_p=0.01), 123456),
        ("top_p_only", params(top_k=0, top_p=0.8, min_p=0.0, temperature=0.9), 4294967294),  # 0xFFFFFFFF means "random" in llama.cpp
        ("greedy", params(temperature=0.0, repeat_penalty=1.5), 1),
    ]
    for name, p, seed in draw_params:
        cases.append(dict(name=f"draw_{name}", stage="draw", rows=rows, window=[], params=p, seed=seed))
    return cases


def f32_list(a):
    """float32 values as the shortest decimals that round-trip; -inf as None (JSON null)."""
    return [None if np.isneginf(x) else float(str(x)) for x in np.asarray(a, dtype=np.float32)]


def write_golden(path, golden):
    """One line per case, so diffs stay readable and the file small."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cases = golden.pop("cases")
    head = json.dumps(golden, indent=1, allow_nan=False)[:-2]
    with open(path, "w") as f:
        f.write(head + ',\n "cases": [\n')
        f.write(",\n".join(json.dumps(c, allow_nan=False, separators=(",", ":")) for c in cases))
        f.write("\n ]\n}\n")
    print(f"wrote {len(cases)} cases to {path}")


def case_json(case, expected):
    """The golden entry: inputs as written above plus the oracle's `expected`."""
    out = dict(name=case["name"], stage=case["stage"], params=case["params"], window=case["window"])
    if case["stage"] == "draw":
        out["rows"] = [f32_list(r) for r in case["rows"]]
        out["seed"] = case["seed"]
    else:
        out["logits"] = f32_list(case["logits"])
    if "logits" in expected:  # the input is "logits"; the output "logits_out"
        expected = dict(expected)
        expected["logits_out"] = expected.pop("logits")
    out.update(expected)
    return out
