"""Storage-first execution end to end (docs/storage.md): budgets change memory, never
tokens; RSS stays under budget plus the measured fixed overhead; the KV window keeps
memory flat; budgets below the minimum fail closed; --dry-run matches its schema."""
import json
import os
import re
import subprocess

import jsonschema
import pytest

from conftest import load_schema

GiB = 1 << 30
MiB = 1 << 20


def run_measured(exe, *args, env=None):
    """Runs the CLI; returns (returncode, stdout, stderr, peak RSS bytes of that child)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.Popen([str(exe), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=full_env)
    out, err = p.communicate(timeout=900)
    # communicate() reaped the child; its rusage is folded into RUSAGE_CHILDREN's max,
    # so read the peak from the CLI's own report when it printed one.
    return p.returncode, out, err


def generate_json(exe, model, *args, env=None):
    rc, out, err = run_measured(exe, "generate", "--model", model, *args, "--json", env=env)
    assert rc == 0, err
    return json.loads(out)


def peak_rss_of(exe, *args, env=None):
    """Peak RSS (bytes) of one run of `exe`, as the OS measures it.

    Measured through GNU time rather than wait4 on our own child: Linux carries the
    pre-exec high-water mark of a forked process into its rusage, so a child of this
    (large) pytest process would report pytest's RSS. time is a small process whose
    child starts from a small image."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run(["/usr/bin/time", "-f", "UAII_MAXRSS_KB=%M", str(exe), *map(str, args)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full_env, text=True)
    assert p.returncode == 0, p.stderr
    marker = [line for line in p.stderr.splitlines() if line.startswith("UAII_MAXRSS_KB=")]
    assert marker, p.stderr
    return int(marker[-1].split("=", 1)[1]) * 1024


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A private $UAII_HOME so the calibration is measured once and cached there."""
    return {"UAII_HOME": str(tmp_path_factory.mktemp("uaii_home"))}


def tiny(fixtures_dir, name):
    path = fixtures_dir / "tiny" / name
    if not path.exists():
        pytest.fail(f"{path} missing: run tests/fixtures/make_tiny_models.py")
    return path


def minimum_bytes(exe, model, *args, env=None):
    """The minimum the planner states when a budget is far too small."""
    p = subprocess.run([str(exe), "generate", "--model", str(model), "--dry-run", "--ram-gb", "0.000001", *args],
                       capture_output=True, text=True, env={**os.environ, **(env or {})})
    assert p.returncode == 1, p.stdout + p.stderr
    m = re.search(r"minimum of [^(]*\((\d+) bytes", p.stderr)
    assert m, p.stderr
    return int(m.group(1))


def test_dry_run_json_matches_schema_and_reads_no_weights(uaii_bin, default_model, home):
    budget = 0.3 * default_model.stat().st_size / GiB
    for flags in ([], ["--ram-gb", f"{budget:.6f}"], ["--preset", "phone"], ["--preset", "none"]):
        doc = generate_json(uaii_bin, default_model, "--dry-run", *flags, env=home)
        jsonschema.validate(doc, load_schema("dry_run.schema.json"))
        assert doc["pinned"]["bytes"] + doc["streamed"]["bytes"] == doc["weights_bytes"]
        assert doc["calibration"] is not None
        if doc["budget_bytes"]:
            assert doc["expected_peak_bytes"] <= doc["budget_bytes"]
    assert doc["preset"] == "none" and not doc["streaming"]
    # The calibration is cached in $UAII_HOME after the first run.
    assert os.path.exists(os.path.join(home["UAII_HOME"], "calibration.json"))
    again = generate_json(uaii_bin, default_model, "--dry-run", env=home)
    assert again["calibration"]["cached"] is True
    # Without weights read, a dry run stays near the process baseline.
    rss = peak_rss_of(uaii_bin, "generate", "--model", default_model, "--dry-run", env=home)
    assert rss < default_model.stat().st_size


def test_budget_30_percent_of_default_model_same_tokens_rss_bounded(uaii_bin, default_model, home):
    size = default_model.stat().st_size
    budget = int(0.3 * size)
    prompt = ["-p", "The history of the printing press", "--max-tokens", "16"]
    ref = generate_json(uaii_bin, default_model, *prompt, "--preset", "none", env=home)
    flags = ["--ram-gb", f"{budget / GiB:.9f}", "--kv-window", "256"]
    got = generate_json(uaii_bin, default_model, *prompt, *flags, env=home)
    assert got["tokens"] == ref["tokens"]
    mem = got["memory"]
    assert mem["streamed_bytes"] > 0 and mem["bytes_read"] > 0
    assert abs(mem["budget_bytes"] - budget) < 1024
    assert mem["staging_hits"] > 0
    # Fixed overhead, measured: the same process with the model and tokenizer loaded
    # and no weight read (a dry run): executable, libraries, GGUF metadata, vocabulary.
    overhead = peak_rss_of(uaii_bin, "generate", "--model", default_model, "--dry-run", *flags, env=home)
    peak = peak_rss_of(uaii_bin, "generate", "--model", default_model, *prompt, *flags, env=home)
    slack = 16 * MiB  # allocator fragmentation, thread stacks, sampler and logits copies
    print(f"budget {budget / MiB:.1f} MiB, fixed overhead {overhead / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB")
    assert peak <= budget + overhead + slack
    # An unbudgeted run holds every weight: the budget really bounds memory.
    full = peak_rss_of(uaii_bin, "generate", "--model", default_model, *prompt, "--preset", "none", env=home)
    assert peak < full - size // 2


@pytest.mark.parametrize("name", ["tiny-llama-q4_0.gguf", "tiny-llama-q8_0.gguf", "tiny-gemma3-q4_k.gguf"])
def test_tiny_model_every_layer_streamed_same_tokens(uaii_bin, fixtures_dir, home, name):
    model = tiny(fixtures_dir, name)
    ctx = ["--max-context", "128"]
    minimum = minimum_bytes(uaii_bin, model, *ctx, env=home)
    budget = ["--ram-gb", f"{(minimum + 2048) / GiB:.12f}"]  # + rounding room, less than any tensor
    plan = generate_json(uaii_bin, model, "--dry-run", *budget, *ctx, env=home)
    assert plan["streaming"] and plan["pinned"]["layers"] == 0
    assert not plan["pinned"]["embeddings"] and not plan["pinned"]["lm_head"]
    prompt = ["-p", "Once upon a time", "--max-tokens", "24"]
    ref = generate_json(uaii_bin, model, *prompt, *ctx, "--preset", "none", env=home)
    got = generate_json(uaii_bin, model, *prompt, *ctx, *budget, env=home)
    assert got["tokens"] == ref["tokens"]
    assert got["memory"]["bytes_read"] >= plan["streamed"]["bytes_per_token"] * 24
    # phone: one staging buffer, no prefetch, same tokens.
    phone = generate_json(uaii_bin, model, *prompt, *ctx, "--preset", "phone", *budget, env=home)
    assert phone["tokens"] == ref["tokens"]


def test_kv_window_keeps_rss_flat_over_4000_tokens(uaii_bin, fixtures_dir, home):
    model = tiny(fixtures_dir, "tiny-llama-q4_0-ctx8k.gguf")  # context_length 8192
    flags = ["--kv-window", "64", "--max-context", "8192", "--max-tokens", "64"]

    def prompt(n):
        return " ".join(["alpha beta gamma delta"] * n)

    short = generate_json(uaii_bin, model, "-p", prompt(10), *flags, env=home)
    long = generate_json(uaii_bin, model, "-p", prompt(130), *flags, env=home)
    assert long["usage"]["prompt_tokens"] + len(long["tokens"]) >= 4000
    assert long["memory"]["kv_window"] == 64
    assert long["memory"]["kv_bytes"] == short["memory"]["kv_bytes"]
    rss_short = peak_rss_of(uaii_bin, "generate", "--model", model, "-p", prompt(10), *flags, env=home)
    rss_long = peak_rss_of(uaii_bin, "generate", "--model", model, "-p", prompt(130), *flags, env=home)
    # 4,000 positions of unbounded f16 KV for this model would add ~2 MiB per 1,000; the
    # window keeps it flat (the longer prompt's own token list is a few KiB).
    assert rss_long - rss_short < 1 * MiB, (rss_short, rss_long)
    # Within the window the output is the unbounded run's.
    w = generate_json(uaii_bin, model, "-p", "Hello there", "--kv-window", "64", "--max-tokens", "40", env=home)
    u = generate_json(uaii_bin, model, "-p", "Hello there", "--kv-window", "0", "--max-tokens", "40", env=home)
    assert w["tokens"] == u["tokens"]


def test_budget_below_minimum_fails_closed_naming_it(uaii_bin, default_model, home):
    p = subprocess.run([str(uaii_bin), "generate", "--model", str(default_model), "-p", "hi", "--ram-gb", "0.01"],
                       capture_output=True, text=True, env={**os.environ, **home})
    assert p.returncode == 1
    assert "cannot hold this model's minimum of" in p.stderr
    assert "bigger preset" in p.stderr and "smaller quantization" in p.stderr
    minimum = int(re.search(r"\((\d+) bytes", p.stderr).group(1))
    assert minimum > 0.01 * GiB


def test_memory_flags_are_validated(uaii_bin, default_model, home):
    for flags, what in ((["--preset", "tablet"], "unknown preset"), (["--ram-gb", "-1"], "--ram-gb"),
                        (["--kv-window", "x"], "--kv-window")):
        p = subprocess.run([str(uaii_bin), "generate", "--model", str(default_model), "-p", "hi", *flags],
                           capture_output=True, text=True, env={**os.environ, **home})
        assert p.returncode == 2 and what in p.stderr, p.stderr
