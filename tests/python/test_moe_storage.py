"""Mixture-of-experts under a memory budget (docs/moe.md): expert banks stay on disk and
routed experts go through an LRU sized by the storage plan. A generated Mixtral-shaped
Q4_0 model (benchmarks/make_moe_gguf.py, written to a temporary directory) whose experts
total several times the budget generates with the unbudgeted run's tokens and peak RSS
under budget + the measured fixed overhead; --dry-run / --json report the expert
cache; --moe-top-k is an explicit, reported approximation."""
import json
import os
import pathlib
import re
import subprocess
import sys

import jsonschema
import pytest

from conftest import load_schema
from test_storage import GiB, MiB, peak_rss_of

REPO = pathlib.Path(__file__).resolve().parents[2]
PROMPT = ["-p", "hello world, this is a test of the expert cache", "--max-tokens", "24", "--max-context", "256"]
SMALL = ["--layers", "6", "--embd", "1024", "--ff", "2048", "--vocab", "1024", "--heads", "8", "--kv-heads", "4"]
SLACK = 16 * MiB  # allocator fragmentation, thread stacks, sampler and logits copies (as test_storage.py)


def make_moe(path, *dims):
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_moe_gguf.py"), str(path), *dims], check=True)
    return path


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return {"UAII_HOME": str(tmp_path_factory.mktemp("uaii_home_moe"))}


@pytest.fixture(scope="module")
def moe_model(tmp_path_factory):
    # 6 layers x 8 experts x 3.4 MiB = 162 MiB of experts, top-2 (40.5 MiB per token).
    return make_moe(tmp_path_factory.mktemp("moe") / "moe-small-q4_0.gguf", *SMALL)


def uaii_json(exe, *args, env=None):
    p = subprocess.run([str(exe), *map(str, args), "--json"], capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=900)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_dry_run_reports_the_expert_cache(uaii_bin, moe_model, env):
    budget = 24 * MiB
    plan = uaii_json(uaii_bin, "generate", "--model", moe_model, "--dry-run", "--ram-gb", budget / GiB,
                     "--max-context", "256", env=env)
    jsonschema.validate(plan, load_schema("dry_run.schema.json"))
    ec = plan["expert_cache"]
    assert ec["expert_bytes"] == 6 * 3 * 8 * 1024 * 2048 * 18 // 32
    assert ec["expert_bytes"] > 6 * budget  # several times the budget
    assert ec["top_k"] == ec["top_k_file"] == 2 and ec["exact"]
    assert ec["step_bytes"] == 2 * 3 * 1024 * 2048 * 18 // 32
    assert ec["step_bytes"] <= ec["capacity_bytes"] <= budget
    assert ec["bytes_per_token_max"] == 6 * ec["step_bytes"]
    # Experts are neither pinned nor streamed through staging; the budget holds the rest.
    assert plan["weights_bytes"] == plan["pinned"]["bytes"] + plan["streamed"]["bytes"]
    assert not any("exps" in t for t in plan["pinned"]["tensors"])
    assert plan["expected_peak_bytes"] <= budget
    assert plan["minimum_bytes"] >= ec["step_bytes"]
    # Without a budget the banks are read through the mapping: no LRU.
    none = uaii_json(uaii_bin, "generate", "--model", moe_model, "--dry-run", "--preset", "none", env=env)
    assert none["expert_cache"]["capacity_bytes"] == 0
    # --moe-top-k 1: an explicit approximation, shown with its effect on bytes per token.
    k1 = uaii_json(uaii_bin, "generate", "--model", moe_model, "--dry-run", "--ram-gb", budget / GiB,
                   "--max-context", "256", "--moe-top-k", "1", env=env)
    assert k1["expert_cache"]["top_k"] == 1 and not k1["expert_cache"]["exact"]
    assert k1["expert_cache"]["bytes_per_token_max"] * 2 == ec["bytes_per_token_max"]
    assert k1["expert_cache"]["bytes_per_token_max_file_k"] == ec["bytes_per_token_max"]
    text = subprocess.run([str(uaii_bin), "generate", "--model", str(moe_model), "--dry-run", "--moe-top-k", "1",
                           "--ram-gb", str(budget / GiB), "--max-context", "256"], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True).stdout
    assert "APPROXIMATE" in text and "top-1 of the file's 2" in text


def test_experts_several_times_the_budget_same_tokens_rss_bounded(uaii_bin, moe_model, env):
    budget = 24 * MiB
    flags = ["--ram-gb", f"{budget / GiB:.9f}"]
    ref = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, "--preset", "none", env=env)
    got = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, env=env)
    jsonschema.validate(got, load_schema("generate.schema.json"))
    assert got["tokens"] == ref["tokens"]
    assert len(set(ref["tokens"])) > 4  # the model's output depends on its input
    ec = got["memory"]["expert_cache"]
    assert 0 < ec["capacity_bytes"] <= budget
    assert ec["misses"] > 0 and ec["bytes_read"] > 0 and 0 <= ec["hit_rate"] <= 1
    assert 0 < ec["bytes_read_per_token"] <= 6 * 2 * 3 * 1024 * 2048 * 18 // 32
    # A roomier LRU reads less per token and hits more, with the same tokens.
    roomy = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, "--ram-gb", f"{96 * MiB / GiB:.9f}",
                      env=env)
    assert roomy["tokens"] == ref["tokens"]
    assert roomy["memory"]["expert_cache"]["hit_rate"] > ec["hit_rate"]
    assert roomy["memory"]["expert_cache"]["bytes_read"] < ec["bytes_read"]
    # Peak RSS: the budget plus the fixed overhead (the same process with the model
    # loaded and nothing read: a dry run) plus slack.
    overhead = peak_rss_of(uaii_bin, "generate", "--model", moe_model, "--dry-run", *flags, "--max-context", "256",
                           env=env)
    peak = peak_rss_of(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, env=env)
    print(f"budget {budget / MiB:.1f} MiB, experts {moe_model.stat().st_size / MiB:.0f} MiB file, "
          f"fixed overhead {overhead / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB")
    assert peak <= budget + overhead + SLACK
    full = peak_rss_of(uaii_bin, "generate", "--model", moe_model, *PROMPT, "--preset", "none", env=env)
    assert peak < full - 64 * MiB  # the unbudgeted run maps the experts it touches


def test_moe_top_k_is_explicit(uaii_bin, moe_model, env):
    flags = ["--ram-gb", f"{24 * MiB / GiB:.9f}"]
    exact = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, env=env)
    k2 = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, "--moe-top-k", "2", env=env)
    assert k2["tokens"] == exact["tokens"]  # the file's k: exact
    k1 = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, "--moe-top-k", "1", env=env)
    assert k1["memory"]["expert_cache"]["bytes_read_per_token"] < exact["memory"]["expert_cache"]["bytes_read_per_token"]
    p = subprocess.run([str(uaii_bin), "generate", "--model", str(moe_model), "-p", "hi", "--moe-top-k", "0"],
                       capture_output=True, text=True, env={**os.environ, **env})
    assert p.returncode == 2 and "--moe-top-k" in p.stderr


def test_budget_below_the_experts_minimum_fails_closed(uaii_bin, moe_model, env):
    p = subprocess.run([str(uaii_bin), "generate", "--model", str(moe_model), "-p", "hi", "--ram-gb", "0.005",
                        "--max-context", "256"], capture_output=True, text=True, env={**os.environ, **env})
    assert p.returncode == 1
    assert "cannot hold this model's minimum" in p.stderr and "top-2 experts" in p.stderr, p.stderr


@pytest.mark.slow
def test_several_gib_moe_under_1_gib(uaii_bin, tmp_path):
    """The benchmark's model (about 3.9 GiB, 3.66 GiB of experts, 8 experts top-2) under
    --ram-gb 1: same tokens as the unbudgeted run, peak RSS under budget + overhead."""
    model = make_moe(tmp_path / "moe-q4_0.gguf")
    assert model.stat().st_size > 3 * GiB
    env = {"UAII_HOME": str(tmp_path / "home")}
    prompt = ["-p", "hello world", "--max-tokens", "4", "--max-context", "256"]
    flags = ["--ram-gb", "1"]
    plan = uaii_json(uaii_bin, "generate", "--model", model, "--dry-run", *flags, "--max-context", "256", env=env)
    assert plan["expert_cache"]["expert_bytes"] > 3 * GiB
    assert plan["expected_peak_bytes"] <= GiB
    ref = uaii_json(uaii_bin, "generate", "--model", model, *prompt, "--preset", "none", env=env)
    got = uaii_json(uaii_bin, "generate", "--model", model, *prompt, *flags, env=env)
    assert got["tokens"] == ref["tokens"]
    assert got["memory"]["expert_cache"]["bytes_read"] > 0
    overhead = peak_rss_of(uaii_bin, "generate", "--model", model, "--dry-run", *flags, "--max-context", "256", env=env)
    peak = peak_rss_of(uaii_bin, "generate", "--model", model, *prompt, *flags, env=env)
    print(f"several-GiB MoE under 1 GiB: peak RSS {peak / MiB:.0f} MiB, fixed overhead {overhead / MiB:.0f} MiB")
    assert peak <= GiB + overhead + SLACK


def test_prefetch_on_and_off_same_tokens(uaii_bin, moe_model, env):
    flags = ["--ram-gb", f"{48 * MiB / GiB:.9f}"]
    off = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, "--moe-prefetch", "off", env=env)
    on = uaii_json(uaii_bin, "generate", "--model", moe_model, *PROMPT, *flags, "--moe-prefetch", "on", env=env)
    jsonschema.validate(on, load_schema("generate.schema.json"))
    assert on["tokens"] == off["tokens"]
    assert not off["memory"]["expert_cache"]["prefetch"]["enabled"]
    pf = on["memory"]["expert_cache"]["prefetch"]
    assert pf["enabled"] and pf["reads"] > 0 and pf["hits"] + pf["wasted"] <= pf["reads"]
    plan = uaii_json(uaii_bin, "generate", "--model", moe_model, "--dry-run", *flags, "--moe-prefetch", "on",
                     "--max-context", "256", env=env)
    jsonschema.validate(plan, load_schema("dry_run.schema.json"))
    assert plan["expert_cache"]["prefetch"]
