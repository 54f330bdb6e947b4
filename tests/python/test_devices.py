"""Device selection end to end: `uaii devices`, `--device` on the CLI, and the Python
SDK's device field, on whatever Vulkan device the machine has (CI: lavapipe)."""
import json

import pytest

from conftest import run_uaii


def _devices(uaii_bin):
    return json.loads(run_uaii(uaii_bin, "devices", "--json").stdout)


def _vulkan(uaii_bin):
    names = [d["name"] for d in _devices(uaii_bin)["devices"] if d["name"].startswith("vulkan")]
    if not names:
        pytest.skip("no Vulkan device (uaii devices lists none)")
    return names[0]


def test_devices_lists_the_cpu_first_and_what_auto_picks(uaii_bin):
    doc = _devices(uaii_bin)
    assert doc["devices"][0]["name"] == "cpu" and doc["devices"][0]["memory_bytes"] > 0
    auto = [d for d in doc["devices"] if d["counts_for_auto"]]
    assert doc["auto"] == (auto[0]["name"] if auto else "cpu")
    if doc["auto"] == "cpu":
        assert doc["note"].startswith("no GPU device")
    text = run_uaii(uaii_bin, "devices").stdout
    assert text.startswith("cpu") and f"auto: {doc['auto']}" in text


def test_generate_on_vulkan_matches_the_cpu_on_an_f32_model(uaii_bin, fixtures_dir):
    dev = _vulkan(uaii_bin)
    model = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    args = ["generate", "--model", model, "-p", "tok5 tok6 tok7", "--max-tokens", "8", "--json"]
    cpu = json.loads(run_uaii(uaii_bin, *args, "--device", "cpu").stdout)
    gpu = json.loads(run_uaii(uaii_bin, *args, "--device", dev).stdout)
    assert gpu["tokens"] == cpu["tokens"]


def test_device_auto_says_once_where_it_runs(uaii_bin, fixtures_dir):
    doc = _devices(uaii_bin)
    model = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    p = run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5", "--max-tokens", "2", "--device", "auto")
    notes = [line for line in p.stderr.splitlines() if "device:" in line]
    if doc["auto"] == "cpu":
        assert len(notes) == 1 and "running on the CPU" in notes[0]
    else:
        assert notes == []
    quiet = run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5", "--max-tokens", "2")
    assert "device:" not in quiet.stderr  # the default (auto) does not repeat it


def test_an_unknown_device_is_a_clear_error(uaii_bin, fixtures_dir):
    model = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    p = run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5", "--device", "vulkan:42", check=False)
    assert p.returncode == 1
    assert "unknown device 'vulkan:42'" in p.stderr and "available: auto, cpu" in p.stderr


def test_python_sdk_runs_a_session_on_vulkan(uaii_bin, fixtures_dir):
    dev = _vulkan(uaii_bin)
    import uaii
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-f32.gguf") as m:
        ids = m.tokenizer.encode("tok5 tok6 tok7")
        with uaii.Session(m, device="cpu", max_context=64) as s:
            cpu = s.eval(ids, all_logits=True)
        with uaii.Session(m, device=dev, max_context=64) as s:
            gpu = s.eval(ids, all_logits=True)
        assert len(cpu) == len(gpu)
        scale = max(abs(x) for x in cpu)
        assert max(abs(a - b) for a, b in zip(cpu, gpu)) <= 2e-3 * scale


def test_dry_run_reports_the_device_placement_the_run_uses(uaii_bin, fixtures_dir):
    dev = _vulkan(uaii_bin)
    model = fixtures_dir / "tiny" / "tiny-llama-q4_0.gguf"
    flags = ["--model", model, "--device", dev, "--vram-gb", "0.0004"]
    dry = json.loads(run_uaii(uaii_bin, "generate", *flags, "--dry-run", "--json").stdout)["device"]
    assert dry["name"] == dev and dry["host_bytes"] > 0
    # 400 kB of the tiny model's 1.2 MB: a staging buffer for the products' host weights fits.
    assert dry["staging_bytes"] > 0 and dry["resident_bytes"] + dry["staging_bytes"] <= dry["budget_bytes"]
    text = run_uaii(uaii_bin, "generate", *flags, "--dry-run").stdout
    assert f"device:         {dev}:" in text and "host memory" in text and "staging buffer" in text
    ran = json.loads(run_uaii(uaii_bin, "generate", *flags, "-p", "tok5", "--max-tokens", "2", "--json").stdout)
    keys = ("name", "budget_bytes", "resident_bytes", "host_bytes", "staging_bytes")
    assert {k: ran["device"][k] for k in keys} == {k: dry[k] for k in keys}


def test_python_sdk_device_budget_leaves_weights_in_host_memory_with_the_same_logits(uaii_bin, fixtures_dir):
    dev = _vulkan(uaii_bin)
    import uaii
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-q4_0.gguf") as m:
        ids = m.tokenizer.encode("tok5 tok6 tok7")
        with uaii.Session(m, device=dev, max_context=64) as s:
            whole, whole_logits = s.device_stats, s.eval(ids, all_logits=True)
        # 400 kB of the tiny model's 1.2 MB: the rest in host memory, through a staging buffer.
        with uaii.Session(m, device=dev, max_context=64, device_memory_bytes=400_000) as s:
            small, small_logits = s.device_stats, s.eval(ids, all_logits=True)
        assert s.device_stats == small  # fixed at creation, readable after close()
        planned = m.plan(device=dev, max_context=64, device_memory_bytes=400_000)["device"]
    assert whole["device"] == dev and whole["host_bytes"] == 0 and whole["resident_bytes"] > 0
    assert small["device"] == dev and small["budget_bytes"] == 400_000
    assert small["host_bytes"] > 0 and small["staging_bytes"] > 0
    assert small["resident_bytes"] + small["staging_bytes"] <= small["budget_bytes"]
    assert small["resident_bytes"] + small["host_bytes"] == whole["resident_bytes"]
    assert small_logits == whole_logits  # where the weights live changes no bit
    # The dry run places them as the session did.
    keys = ("budget_bytes", "resident_bytes", "host_bytes", "staging_bytes")
    assert planned["name"] == dev and {k: planned[k] for k in keys} == {k: small[k] for k in keys}


def test_python_sdk_device_stats_on_the_cpu_are_zero(fixtures_dir):
    import uaii
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-f32.gguf") as m:
        # A device budget changes nothing on the CPU.
        with uaii.Session(m, device="cpu", max_context=64, device_memory_bytes=4096) as s:
            stats = s.device_stats
        with pytest.raises(uaii.InvalidArgumentError, match="device_memory_bytes -1 is negative"):
            uaii.Session(m, device_memory_bytes=-1)
    assert stats == {"device": "cpu", "budget_bytes": 0, "resident_bytes": 0, "host_bytes": 0,
                     "staging_bytes": 0, "requantized_weights": 0}
