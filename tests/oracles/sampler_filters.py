#!/usr/bin/env python3
"""Golden values for top-k, top-p, min-p, temperature, the whole chain and the
seeded draw.

A numpy TRANSCRIPTION of llama.cpp's samplers, not uaii code. It follows
src/llama-sampler.cpp and common/sampling.cpp of the llama.cpp vendored by
llama-cpp-python 0.3.36:
  chain (common_sampler_init, default order, typical/top-n-sigma/XTC/DRY disabled):
      penalties -> top_k -> top_p -> min_p -> temperature -> dist
  top_k   (llama_sampler_top_k_impl): k <= 0 no-op; keep the min(k, n) highest, sorted.
  softmax (llama_sampler_softmax_impl): p = expf(l - max) / sum, float32, summed in
          the current order.
  top_p   (llama_sampler_top_p_apply): p >= 1 no-op; softmax, sort, keep the first i+1
          entries where the float32 running sum first reaches p with i+1 >= min_keep.
  min_p   (llama_sampler_min_p_apply): p <= 0 no-op; keep logit >= max + logf(p);
          unsorted input keeps its order; if fewer than min_keep survive, sort and keep
          the leading entries until one fails and min_keep are kept.
  temp    (llama_sampler_temp_impl): t <= 0 keeps the first maximal logit, others -inf;
          else logit / t.
  dist    (llama_sampler_dist_apply): p = expf(l - max) (float32) summed in double; u =
          std::uniform_real_distribution<double>(0,1) on std::mt19937(seed), which in
          libstdc++ is (a + b * 2^32) / 2^64 for two consecutive 32-bit outputs a, b;
          pick the first entry whose double running sum reaches u * sum.
          std::mt19937(seed) = numpy's MT19937 with legacy (init_genrand) seeding.
Where llama.cpp leaves tie order unspecified (unstable sort) this script sorts by
(logit desc, id asc); the shared cases have no ties.

Run:  python3 tests/oracles/sampler_filters.py   (writes tests/golden/sampling/filters_numpy.json)
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sampler_cases  # noqa: E402
from sampler_penalties import apply_penalties, window_counts  # noqa: E402

F32 = np.float32


class Arr:
    """llama_token_data_array: ids, logits, p, sorted flag."""

    def __init__(self, logits):
        self.ids = np.arange(len(logits), dtype=np.int64)
        self.logits = np.array(logits, dtype=F32)
        self.p = np.zeros(len(logits), dtype=F32)
        self.sorted = False

    def take(self, idx):
        self.ids, self.logits, self.p = self.ids[idx], self.logits[idx], self.p[idx]

    def sort(self):
        if not self.sorted:
            self.take(np.lexsort((self.ids, -self.logits.astype(np.float64))))
        self.sorted = True

    def max_logit(self):
        return self.logits[0] if self.sorted else self.logits.max()


def top_k(a, k):
    if k <= 0:
        return
    k = min(k, len(a.ids))
    a.sort()
    a.take(np.arange(k))


def softmax(a):
    m = a.max_logit()
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp((a.logits - m).astype(F32)).astype(F32)
    s = np.cumsum(e, dtype=F32)[-1]  # sequential float32 sum, like the C loop
    a.p = (e / s).astype(F32)


def top_p(a, p, min_keep):
    if p >= 1.0:
        return
    softmax(a)
    a.sort()
    cum = np.cumsum(a.p, dtype=F32)
    keep = len(a.ids)
    for i in range(len(a.ids)):
        if cum[i] >= F32(p) and i + 1 >= min_keep:
            keep = i + 1
            break
    a.take(np.arange(keep))


def min_p(a, p, min_keep):
    if p <= 0.0:
        return
    min_logit = F32(a.max_logit() + F32(np.log(F32(p))))
    if not a.sorted:
        mask = a.logits >= min_logit
        if mask.sum() > 0 and mask.sum() >= min_keep:
            a.take(np.nonzero(mask)[0])
            return
        a.sort()
    i = 1
    while i < len(a.ids) and (a.logits[i] >= min_logit or i < min_keep):
        i += 1
    a.take(np.arange(i))


def temperature(a, t):
    if t <= 0:
        keep = int(np.argmax(a.logits))  # first maximal entry in array order
        out = np.full(len(a.ids), -np.inf, dtype=F32)
        out[keep] = a.logits[keep]
        a.logits = out
        return
    a.logits = (a.logits / F32(t)).astype(F32)


def chain(logits, counts, prm):
    a = Arr(logits)
    a.logits = apply_penalties(a.ids, a.logits, counts, prm)
    top_k(a, prm["top_k"])
    top_p(a, prm["top_p"], prm["min_keep"])
    min_p(a, prm["min_p"], prm["min_keep"])
    temperature(a, prm["temperature"])
    return a


class Mt:
    def __init__(self, seed):
        self.bg = np.random.MT19937(0)
        self.bg._legacy_seeding(seed)

    def uniform(self):
        a, b = (float(x) for x in self.bg.random_raw(2))
        u = (a + b * 4294967296.0) / 18446744073709551616.0
        return u if u < 1.0 else math.nextafter(1.0, 0.0)


def dist(a, u):
    if len(a.ids) == 1:
        return 0
    m = a.max_logit()
    with np.errstate(invalid="ignore"):
        e = np.exp((a.logits - m).astype(F32)).astype(F32)
    total = 0.0
    for x in e:
        total += float(x)
    target = total * u
    run = 0.0
    for i, x in enumerate(e):
        run += float(x)
        if x > 0 and run >= target:
            return i
    return int(np.nonzero(e > 0)[0][-1])


def expected_for(case):
    prm, stage = case["params"], case["stage"]
    if stage == "draw":
        rng, window, tokens = Mt(case["seed"]), [], []
        for row in case["rows"]:
            a = chain(row, window_counts(window, prm["penalty_last_n"]), prm)
            u = rng.uniform()  # one draw per token, greedy included
            tok = int(a.ids[dist(a, u)])
            tokens.append(tok)
            window.append(tok)
        return dict(tokens=tokens)
    if stage == "chain":
        a = chain(case["logits"], window_counts(case["window"], prm["penalty_last_n"]), prm)
    else:
        a = Arr(case["logits"])
        {"top_k": lambda: top_k(a, prm["top_k"]),
         "top_p": lambda: top_p(a, prm["top_p"], prm["min_keep"]),
         "min_p": lambda: min_p(a, prm["min_p"], prm["min_keep"]),
         "temperature": lambda: temperature(a, prm["temperature"])}[stage]()
    return dict(ids=[int(i) for i in a.ids], logits=sampler_cases.f32_list(a.logits))


def main():
    cases = [sampler_cases.case_json(c, expected_for(c))
             for c in sampler_cases.build_cases() if c["stage"] != "penalties"]
    golden = dict(
        reference="numpy transcription of llama.cpp's top_k/top_p/min_p/temp/dist samplers and default "
                  "chain (src/llama-sampler.cpp, common/sampling.cpp; llama.cpp vendored by "
                  "llama-cpp-python 0.3.36)",
        generator="tests/oracles/sampler_filters.py",
        numpy=np.__version__,
        cases=cases)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sampler_cases.write_golden(os.path.join(root, "golden", "sampling", "filters_numpy.json"), golden)


if __name__ == "__main__":
    main()
