"""The cost model learns from real runs (docs/storage.md, "Observed figures"): a
generate run folds what it got into $UAII_HOME/calibration.json, the next --dry-run
predicts from it and says so, and a corrupt or unwritable cache never fails a run."""
import json
import re
import shutil

import jsonschema
import pytest

from conftest import load_schema, run_uaii

GiB = 1 << 30
PROMPT = ["-p", "Once upon a time", "--max-tokens", "12", "--max-context", "128"]


@pytest.fixture()
def model(fixtures_dir, tmp_path):
    """A private copy of a tiny model: its observations are keyed by its path, and a
    file just written is in the page cache (a warm run)."""
    src = fixtures_dir / "tiny" / "tiny-llama-q4_0.gguf"
    if not src.exists():
        pytest.fail(f"{src} missing: run tests/fixtures/make_tiny_models.py")
    dst = tmp_path / "m.gguf"
    shutil.copyfile(src, dst)
    return dst


def dry_run(exe, model, *flags, env):
    p = run_uaii(exe, "generate", "--model", model, "--dry-run", "--json", "--max-context", "128", *flags, env=env)
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("dry_run.schema.json"))
    return doc, p.stderr


def generate(exe, model, *flags, env):
    p = run_uaii(exe, "generate", "--model", model, *PROMPT, "--json", *flags, env=env)
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("generate.schema.json"))
    return doc, p.stderr


def observed(home):
    return json.loads((home / "calibration.json").read_text()).get("observed", {})


def test_a_run_updates_the_cache_and_the_dry_run_uses_it(uaii_bin, model, tmp_path):
    home = tmp_path / "home"
    env = {"UAII_HOME": str(home)}
    flags = ["--preset", "none", "--threads", "1"]
    before, _ = dry_run(uaii_bin, model, *flags, env=env)
    figures = before["calibration"]["figures"]
    assert {f["source"] for f in figures.values()} == {"probe"}
    assert before["prediction"]["source_warm"] == "probe"
    assert before["prediction"]["probe"]["decode_tokens_per_s_warm"] == before["prediction"]["decode_tokens_per_s_warm"]

    run, _ = generate(uaii_bin, model, *flags, env=env)
    obs = observed(home)
    assert len(obs) == 1
    key, figs = next(iter(obs.items()))
    assert key.startswith(f"{model.resolve()}|{model.stat().st_size}|") and "|threads=1|" in key
    assert figs["resident"]["samples"] == 1 and figs["resident"]["bytes_per_s"] > 0

    after, _ = dry_run(uaii_bin, model, *flags, env=env)
    res = after["calibration"]["figures"]["resident"]
    assert res["source"] == "observed" and res["samples"] == 1
    assert after["calibration"]["observed_key"] == key
    assert after["prediction"]["source_warm"] == after["prediction"]["source_cold"] == "observed"
    # Fitted to the run's decode time: the same configuration predicts that run.
    measured = run["timings"]["decode_tokens_per_s"]
    assert after["prediction"]["decode_tokens_per_s_warm"] == pytest.approx(measured, rel=1e-3)

    generate(uaii_bin, model, *flags, env=env)
    res2 = observed(home)[key]["resident"]
    assert res2["samples"] == 2 and len(res2["recent"]) == 2
    assert res2["bytes_per_s"] == pytest.approx(sum(res2["recent"]) / 2)  # the median of two
    # The range: the prediction at the slowest and the fastest of the recent runs.
    ranged, _ = dry_run(uaii_bin, model, *flags, env=env)
    fig = ranged["calibration"]["figures"]["resident"]
    assert fig["low_bytes_per_s"] == min(res2["recent"]) and fig["high_bytes_per_s"] == max(res2["recent"])
    rng, central = ranged["prediction"]["range"], ranged["prediction"]["decode_tokens_per_s_warm"]
    assert rng["decode_tokens_per_s_warm_low"] <= central * (1 + 1e-9)
    assert central <= rng["decode_tokens_per_s_warm_high"] * (1 + 1e-9)
    text = run_uaii(uaii_bin, "generate", "--model", model, "--dry-run", "--max-context", "128", *flags, env=env)
    assert "range from the observed runs' spread" in text.stdout
    # Another thread count is another key: the probe again.
    other, _ = dry_run(uaii_bin, model, "--preset", "none", "--threads", "2", env=env)
    assert other["calibration"]["figures"]["resident"]["source"] == "probe"


def test_a_chat_session_teaches_the_calibration_too(uaii_bin, model, tmp_path):
    """`uaii chat` folds its session's decode steps in after it, as generate does."""
    home = tmp_path / "home"
    env = {"UAII_HOME": str(home)}
    template = tmp_path / "t.jinja"
    template.write_text("{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}</s>\n"
                        "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
    flags = ["--preset", "none", "--threads", "1", "--max-context", "128"]
    p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "-p", "tok5 tok6 hello",
                 "--max-tokens", "12", "--json", *flags, env=env)
    doc = json.loads(p.stdout)
    assert doc["usage"]["completion_tokens"] >= 2, doc  # at least one decode step to learn from
    key, figs = next(iter(observed(home).items()))
    assert key.startswith(f"{model.resolve()}|") and "|threads=1|" in key
    assert figs["resident"]["samples"] == 1
    after, _ = dry_run(uaii_bin, model, "--preset", "none", "--threads", "1", env=env)
    assert after["calibration"]["figures"]["resident"]["source"] == "observed"


def test_a_warm_streaming_run_teaches_the_warm_figure(uaii_bin, model, tmp_path):
    home = tmp_path / "home"
    env = {"UAII_HOME": str(home)}
    # Every layer streamed: the smallest budget the planner accepts.
    p = run_uaii(uaii_bin, "generate", "--model", model, "--dry-run", "--max-context", "128",
                 "--ram-gb", "0.000001", env=env, check=False)
    m = re.search(r"minimum of [^(]*\((\d+) bytes", p.stderr)
    assert p.returncode == 1 and m, p.stderr
    minimum = int(m.group(1))
    flags = ["--ram-gb", f"{(minimum + 2048) / GiB:.12f}", "--threads", "1"]
    plan, _ = dry_run(uaii_bin, model, *flags, env=env)
    assert plan["streaming"]
    run, _ = generate(uaii_bin, model, *flags, env=env)
    mem = run["memory"]
    assert mem["cached_bytes"] > mem["direct_bytes"]  # the copy just written is in the page cache
    assert mem["read_seconds"] > 0
    warm = next(iter(observed(home).values()))["warm_stream"]
    assert warm["samples"] == 1
    after, _ = dry_run(uaii_bin, model, *flags, env=env)
    assert after["calibration"]["figures"]["warm_stream"]["source"] == "observed"
    assert after["prediction"]["source_warm"] in ("observed", "observed+probe")


def test_a_corrupt_cache_falls_back_to_the_probe_with_a_note(uaii_bin, model, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "calibration.json").write_text('{"disk_read_bytes_per_s": 1e9, "observed": {')
    env = {"UAII_HOME": str(home)}
    doc, err = dry_run(uaii_bin, model, "--preset", "none", env=env)
    assert "calibration.json" in err and "measured again" in err
    assert "measured again" in doc["calibration"]["note"]
    assert doc["calibration"]["figures"]["resident"]["source"] == "probe"
    generate(uaii_bin, model, "--preset", "none", env=env)  # and a run still works, and learns
    again, _ = dry_run(uaii_bin, model, "--preset", "none", env=env)
    assert "note" not in again["calibration"]
    assert again["calibration"]["figures"]["resident"]["source"] == "observed"


def test_an_unwritable_cache_never_fails_a_run(uaii_bin, model, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "calibration.json").mkdir()  # cannot be replaced by a file
    env = {"UAII_HOME": str(home)}
    doc, err = generate(uaii_bin, model, "--preset", "none", env=env)
    assert doc["tokens"]
    assert "calibration not updated" in err and "calibration.json" in err
