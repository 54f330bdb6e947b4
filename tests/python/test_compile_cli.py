"""`uaii compile`: graph files from a GGUF (relative and absolute weight paths) or a
Hugging Face directory (weights as declared views, tokenizer from the directory), JSON
<-> binary conversion, --plan output, and `uaii generate --model graph` giving the
source's tokens; the hand-authored example graph runs."""
import json
import os
import shutil

import pytest

from conftest import REPO, run_uaii

TINY = "tiny/tiny-llama-q4_k.gguf"


def tokens(exe, model, env, n=12):
    out = run_uaii(exe, "generate", "--model", model, "-p", "hello world", "--max-tokens", n, "--json", env=env)
    return json.loads(out.stdout)["tokens"]


@pytest.fixture
def env(tmp_path):
    return {"UAII_PLAN_CACHE": str(tmp_path / "plans")}


def test_compile_and_generate_same_tokens(uaii_bin, fixtures_dir, tmp_path, env):
    src = fixtures_dir / TINY
    want = tokens(uaii_bin, src, env)
    rel = tmp_path / "rel" / "m.uaii.json"
    rel.parent.mkdir()
    run_uaii(uaii_bin, "compile", src, "-o", rel, env=env)
    doc = json.loads(rel.read_text())
    files = {t["weight"]["file"] for t in doc["graph"]["tensors"] if "weight" in t}
    assert len(files) == 1 and not os.path.isabs(files.pop())  # relative to the graph file
    meta = {kv["key"]: kv.get("value", "") for kv in doc["graph"]["metadata"]}
    assert meta["tokenizer.gguf"].endswith("tiny-llama-q4_k.gguf")
    assert meta["context_length"] == "256"
    assert tokens(uaii_bin, rel, env) == want
    # binary form, absolute paths, and the fused graph all run the same tokens
    for name, extra in (("abs.uaii", ["--absolute"]), ("fused.uaii", ["--fused"])):
        out = tmp_path / name
        run_uaii(uaii_bin, "compile", "--model", src, "-o", out, *extra, env=env)
        assert out.read_bytes()[4:8] == b"UAIR"
        assert tokens(uaii_bin, out, env) == want
    # JSON -> binary -> JSON is lossless
    run_uaii(uaii_bin, "compile", rel, "-o", tmp_path / "rel" / "back.uaii", env=env)
    run_uaii(uaii_bin, "compile", tmp_path / "rel" / "back.uaii", "-o", tmp_path / "rel" / "again.uaii.json", env=env)
    assert (tmp_path / "rel" / "again.uaii.json").read_text() == rel.read_text()


@pytest.mark.parametrize("name", ["gemma3_f32", "qwen2_moe_f32", "gpt2_bf16_sharded"])
def test_compile_hf_directory_generates_same_tokens(uaii_bin, fixtures_dir, tmp_path, env, name):
    src = fixtures_dir / "hf_tiny" / name
    want = tokens(uaii_bin, src, env)  # also plans the directory's graph into the cache
    # compile shares Model::Load's plan identity for the directory: the plan is cached
    plan = json.loads(run_uaii(uaii_bin, "compile", src, "--plan", "--json", env=env).stdout)
    assert plan["from_cache"]
    for out in (tmp_path / "g" / "m.uaii.json", tmp_path / "m.uaii"):
        out.parent.mkdir(exist_ok=True)
        run_uaii(uaii_bin, "compile", src, "-o", out, env=env)
        assert tokens(uaii_bin, out, env) == want
    doc = json.loads((tmp_path / "g" / "m.uaii.json").read_text())
    meta = {kv["key"]: kv.get("value", "") for kv in doc["graph"]["metadata"]}
    assert (tmp_path / "g" / meta["tokenizer.dir"]).resolve() == src.resolve()
    views = [t["weight"]["view"] for t in doc["graph"]["tensors"] if "weight" in t]
    assert views and all("source_dtype" in v or "parts" in v or "values" in v for v in views)


def test_compile_plan_json_and_cache(uaii_bin, fixtures_dir, env):
    src = fixtures_dir / TINY
    first = json.loads(run_uaii(uaii_bin, "compile", src, "--plan", "--json", env=env).stdout)
    assert first["passes"] == ["fuse_norm_linear: 7 rewrites", "fuse_gated_activation: 3 rewrites"]
    assert first["ops"] < first["ops_unfused"]
    assert not first["from_cache"]
    pre = first["prefill"]
    assert 0 < pre["peak_activation_bytes"] <= pre["arena_bytes"] < pre["no_reuse_bytes"]
    assert pre["peak_activation_bytes"] <= pre["unfused_peak_activation_bytes"]
    # the model load (generate) plans the same graph: it finds the cached plan
    second = json.loads(run_uaii(uaii_bin, "compile", src, "--plan", "--json", env=env).stdout)
    assert second["from_cache"]
    assert second["prefill"] == first["prefill"]
    off = json.loads(run_uaii(uaii_bin, "compile", src, "--plan", "--json", "--no-fuse", env=env).stdout)
    assert not off["from_cache"] and off["ops"] == off["ops_unfused"]


def test_compile_errors(uaii_bin, fixtures_dir, tmp_path, env):
    p = run_uaii(uaii_bin, "compile", fixtures_dir / TINY, "-o", tmp_path / "m.onnx", env=env, check=False)
    assert p.returncode == 2 and ".uaii" in p.stderr
    p = run_uaii(uaii_bin, "compile", fixtures_dir / TINY, env=env, check=False)
    assert p.returncode == 2
    bad = tmp_path / "bad.uaii"
    bad.write_bytes(b"\x10\x00\x00\x00UAIR" + b"\xff" * 64)
    p = run_uaii(uaii_bin, "generate", "--model", bad, "-p", "x", env=env, check=False)
    assert p.returncode == 1 and "bad.uaii" in p.stderr


def test_example_graph_runs(uaii_bin, fixtures_dir, tmp_path, env):
    shutil.copy(REPO / "examples" / "graphs" / "tiny-llama-1layer.uaii.json", tmp_path)
    os.symlink(fixtures_dir / "tiny" / "tiny-llama-f32.gguf", tmp_path / "tiny-llama-f32.gguf")
    toks = tokens(uaii_bin, tmp_path / "tiny-llama-1layer.uaii.json", env, n=6)
    assert len(toks) > 0
    plan = json.loads(run_uaii(uaii_bin, "compile", tmp_path / "tiny-llama-1layer.uaii.json", "--plan", "--json",
                               env=env).stdout)
    assert plan["passes"] == ["fuse_norm_linear: 3 rewrites", "fuse_gated_activation: 1 rewrites"]
