#!/usr/bin/env python3
"""Golden values for the repetition / frequency / presence penalties.

This is a numpy TRANSCRIPTION of llama.cpp's formula, not uaii code: it follows
`llama_sampler_penalties_apply` and `llama_sampler_penalties_accept` in
llama.cpp's src/llama-sampler.cpp, as vendored by llama-cpp-python 0.3.36
(the `penalties` sampler; common/common.h defaults penalty_last_n = 64,
penalty_repeat = 1, penalty_freq = 0, penalty_present = 0):

  window  = the last penalty_last_n accepted tokens (0 disables the sampler;
            so does repeat == 1 and freq == 0 and present == 0)
  for each candidate whose id occurs count > 0 times in the window:
      logit = logit * repeat   if logit <= 0
              logit / repeat   otherwise
      logit = logit - (count * freq + (count > 0) * present)
  every operation in float32.

Run:  python3 tests/oracles/sampler_penalties.py   (writes tests/golden/sampling/penalties_numpy.json)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sampler_cases  # noqa: E402

F32 = np.float32


def window_counts(window, last_n):
    """{id: count} over the last `last_n` tokens of `window` (llama.cpp's ring buffer)."""
    if last_n == 0:
        return {}
    tail = window[-last_n:] if last_n > 0 else window
    counts = {}
    for t in tail:
        counts[t] = counts.get(t, 0) + 1
    return counts


def penalties_disabled(p):
    return p["penalty_last_n"] == 0 or (
        p["repeat_penalty"] == 1.0 and p["frequency_penalty"] == 0.0 and p["presence_penalty"] == 0.0)


def apply_penalties(ids, logits, counts, p):
    """Returns new float32 logits; ids/order unchanged."""
    out = np.array(logits, dtype=F32)
    if penalties_disabled(p):
        return out
    rep, freq, pres = F32(p["repeat_penalty"]), F32(p["frequency_penalty"]), F32(p["presence_penalty"])
    for i, tok in enumerate(ids):
        c = counts.get(int(tok), 0)
        if c == 0:
            continue
        l = out[i]
        l = F32(l * rep) if l <= 0 else F32(l / rep)
        l = F32(l - F32(F32(F32(c) * freq) + F32(F32(c > 0) * pres)))
        out[i] = l
    return out


def main():
    cases = []
    for case in sampler_cases.build_cases():
        if case["stage"] != "penalties":
            continue
        ids = np.arange(len(case["logits"]), dtype=np.int32)
        counts = window_counts(case["window"], case["params"]["penalty_last_n"])
        logits = apply_penalties(ids, case["logits"], counts, case["params"])
        cases.append(sampler_cases.case_json(case, dict(ids=[int(i) for i in ids],
                                                        logits=sampler_cases.f32_list(logits))))
    golden = dict(
        reference="numpy transcription of llama.cpp llama_sampler_penalties (src/llama-sampler.cpp, "
                  "llama.cpp vendored by llama-cpp-python 0.3.36)",
        generator="tests/oracles/sampler_penalties.py",
        numpy=np.__version__,
        cases=cases)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sampler_cases.write_golden(os.path.join(root, "golden", "sampling", "penalties_numpy.json"), golden)


if __name__ == "__main__":
    main()
