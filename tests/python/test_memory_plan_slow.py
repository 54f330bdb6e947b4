"""slow: memory stays inside the plan. 100 budgeted generations, varied in prompt length,
max_tokens and budget (60 on the default Gemma 3 GGUF, dense; 40 on a generated
Mixtral-shaped MoE file with its experts on disk), each with its OS-measured peak RSS
(the CLI's VmHWM) under the plan's budget plus the fixed overhead docs/storage.md
defines (the peak RSS of a --dry-run process with the same flags: executable,
libraries, metadata, vocabulary) plus 16 MiB of slack."""
import json
import os
import random
import subprocess

import pytest

from test_moe_storage import SMALL, make_moe
from test_storage import MiB, generate_json, peak_rss_of

SLACK = 16 * MiB
WORDS = "the storage engine streams weights through staging buffers while the model decodes".split()


def plan_of(exe, model, flags, env):
    p = subprocess.run([str(exe), "generate", "--model", str(model), "--dry-run", "--json", *flags],
                       capture_output=True, text=True, env={**os.environ, **env}, check=True)
    return json.loads(p.stdout)


def run_cases(exe, model, budgets_gib, n, seed, env, max_words):
    rng = random.Random(seed)
    overhead = {}
    worst = 0.0
    for i in range(n):
        budget = rng.choice(budgets_gib)
        flags = ["--ram-gb", str(budget), "--max-context", "512"]
        if budget not in overhead:
            overhead[budget] = peak_rss_of(exe, "generate", "--model", model, "--dry-run", *flags, env=env)
        plan = plan_of(exe, model, flags, env)
        assert plan["streaming"] or plan["budget_bytes"] >= plan["weights_bytes"]
        prompt = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, max_words)))
        max_tokens = rng.randint(1, 24)
        doc = generate_json(exe, model, "-p", prompt, "--max-tokens", str(max_tokens), *flags,
                            "--temp", str(rng.choice([0, 0.8])), "--seed", str(i), env=env)
        peak = doc["memory"]["peak_rss_bytes"]
        limit = plan["budget_bytes"] + overhead[budget] + SLACK
        worst = max(worst, (peak - overhead[budget]) / plan["budget_bytes"])
        assert peak <= limit, (i, budget, len(prompt.split()), max_tokens, peak / MiB, limit / MiB)
    return worst


@pytest.mark.slow
def test_100_budgeted_generations_stay_inside_the_plan(uaii_bin, default_model, tmp_path):
    env = {"UAII_HOME": str(tmp_path / "home")}
    dense = run_cases(uaii_bin, default_model, [0.15, 0.2, 0.3], 60, 1, env, max_words=300)
    moe = make_moe(tmp_path / "moe-small-q4_0.gguf", *SMALL)
    sparse = run_cases(uaii_bin, moe, [0.1, 0.15, 0.25], 40, 2, env, max_words=40)  # up to ~10 tokens a word
    print(f"100 budgeted generations inside the plan: worst (peak - overhead) / budget dense {dense:.2f}, "
          f"MoE {sparse:.2f}")
