"""`uaii inspect` on Hugging Face directories (fixtures from tests/fixtures/make_hf_fixtures.py)."""
import json

import jsonschema
import pytest

from conftest import SHARED, load_schema, run_uaii


def hf(fixtures_dir, name):
    path = fixtures_dir / "hf" / "models" / name
    if not path.is_dir():
        pytest.fail(f"{path} missing: run tests/fixtures/make_hf_fixtures.py {fixtures_dir}")
    return path


@pytest.mark.parametrize("name,family,variant", [
    ("llama", "llama", "llama"), ("llama_sharded", "llama", "llama"), ("qwen3", "llama", "qwen3"),
    ("qwen3_sharded", "llama", "qwen3"), ("gemma3", "llama", "gemma3_text"), ("phi3", "llama", "phi3"),
    ("gpt2", "gpt2", "gpt2"), ("gpt_oss", "gpt_oss", "gpt_oss"),
])
def test_inspect_hf_json_matches_schema(uaii_bin, fixtures_dir, name, family, variant):
    doc = json.loads(run_uaii(uaii_bin, "inspect", "--model", hf(fixtures_dir, name), "--json").stdout)
    jsonschema.validate(doc, load_schema("inspect.schema.json"))
    assert doc["format"] == "huggingface"
    assert doc["architecture"] == family and doc["family"] == family and doc["variant"] == variant
    assert doc["runnable"] == (family != "gpt_oss")
    assert doc["tensors"]["count"] == sum(f["tensors"] for f in doc["files"])


def test_inspect_hf_values(uaii_bin, fixtures_dir):
    doc = json.loads(run_uaii(uaii_bin, "inspect", hf(fixtures_dir, "phi3"), "--json").stdout)
    hp = doc["hyperparameters"]
    assert hp["hidden_size"] == 64 and hp["num_hidden_layers"] == 2 and hp["rotary_dims"] == 12
    assert hp["rope_scaling"] == "longrope"
    assert doc["features"]["qkv"] == "fused_concat" and doc["features"]["ffn"] == "gated_fused"
    assert doc["tensors"]["by_type"] == {"F16": 15}
    gpt2 = json.loads(run_uaii(uaii_bin, "inspect", hf(fixtures_dir, "gpt2"), "--json").stdout)
    assert gpt2["hyperparameters"]["intermediate_size"] == 256  # 4 * n_embd
    assert "rope_theta" not in gpt2["hyperparameters"]
    sharded = json.loads(run_uaii(uaii_bin, "inspect", hf(fixtures_dir, "qwen3_sharded"), "--json").stdout)
    assert len(sharded["files"]) == 3


def test_inspect_hf_tokenizer(uaii_bin, fixtures_dir):
    if not (SHARED / "data" / "tokenizers").is_dir():
        print("SKIP: ../shared is absent")
        return
    doc = json.loads(run_uaii(uaii_bin, "inspect", hf(fixtures_dir, "qwen3"), "--json").stdout)
    tok = doc["tokenizer"]
    assert tok["model"] == "bpe" and "tokenizer.json" in tok["files"]
    eog = {t["piece"] for t in tok["end_of_generation"]}
    assert {"<|im_end|>", "<|endoftext|>"} <= eog
    assert doc["chat_template"] == {"present": True, "source": "tokenizer_config.json", "named": []}
    text = run_uaii(uaii_bin, "inspect", hf(fixtures_dir, "llama")).stdout
    assert "architecture:  llama" in text and "<|eot_id|>" in text


@pytest.mark.parametrize("name,needle", [
    ("gptq", "convert to dense BF16/F16 or to GGUF"),
    ("fp8", "convert to dense BF16/F16 or to GGUF"),
    ("llava", "vision"),
    ("mla", "use GGUF"),
])
def test_inspect_hf_refused(uaii_bin, fixtures_dir, name, needle):
    p = run_uaii(uaii_bin, "inspect", hf(fixtures_dir, name), check=False)
    assert p.returncode == 1
    assert p.stderr.startswith("uaii inspect: ") and needle in p.stderr


def test_inspect_hf_bad_safetensors(uaii_bin, fixtures_dir, tmp_path):
    (tmp_path / "config.json").write_text((hf(fixtures_dir, "llama") / "config.json").read_text())
    for bad in sorted((fixtures_dir / "hf" / "safetensors").glob("bad_*.safetensors")):
        (tmp_path / "model.safetensors").write_bytes(bad.read_bytes())
        p = run_uaii(uaii_bin, "inspect", tmp_path, check=False)
        assert p.returncode == 1, (bad.name, p.stderr)
        assert p.stderr.startswith("uaii inspect: safetensors "), (bad.name, p.stderr)
