"""`uaii inspect` end to end, on the real default model and on the GGUF fixtures."""
import json

import jsonschema

from conftest import load_schema, run_uaii


def test_inspect_default_model_json(uaii_bin, default_model):
    out = run_uaii(uaii_bin, "inspect", "--model", default_model, "--json").stdout
    doc = json.loads(out)
    jsonschema.validate(doc, load_schema("inspect.schema.json"))
    assert doc["architecture"] == "gemma3"
    hp = doc["hyperparameters"]
    assert hp["block_count"] == 18 and hp["embedding_length"] == 640
    assert hp["attention.head_count"] == 4 and hp["attention.head_count_kv"] == 1
    assert doc["tensors"]["count"] == 236
    assert doc["tensors"]["by_type"] == {"F32": 109, "Q4_K": 27, "Q5_0": 81, "Q6_K": 9, "Q8_0": 10}
    assert doc["tensors"]["largest"]["name"] == "token_embd.weight"
    tok = doc["tokenizer"]
    assert tok["model"] == "llama" and tok["vocab_size"] == 262144
    eog = {t["piece"] for t in tok["end_of_generation"]}
    assert {"<eos>", "<end_of_turn>"} <= eog
    assert doc["chat_template"]["present"] is False


def test_inspect_uses_default_model_when_none_given(uaii_bin, default_model):
    out = run_uaii(uaii_bin, "inspect", "--json", env={"UAII_MODEL": ""}).stdout
    assert json.loads(out)["path"] == str(default_model)


def test_inspect_text(uaii_bin, default_model):
    out = run_uaii(uaii_bin, "inspect", default_model).stdout
    assert "architecture:  gemma3" in out
    assert "Q4_K" in out and "262144 tokens" in out


def test_missing_default_model_names_setup(uaii_bin, tmp_path):
    p = run_uaii(uaii_bin, "inspect", env={"UAII_HOME": str(tmp_path), "UAII_MODEL": ""}, check=False)
    assert p.returncode == 1
    assert "scripts/setup.sh" in p.stderr and str(tmp_path) in p.stderr


def test_uaii_model_env(uaii_bin, fixtures_dir):
    valid = fixtures_dir / "gguf" / "valid.gguf"
    doc = json.loads(run_uaii(uaii_bin, "inspect", "--json", env={"UAII_MODEL": str(valid)}).stdout)
    jsonschema.validate(doc, load_schema("inspect.schema.json"))
    assert doc["architecture"] == "llama"
    assert doc["tensors"]["count"] == 15


def test_corrupt_files_fail_cleanly(uaii_bin, fixtures_dir):
    corrupt = sorted((fixtures_dir / "gguf" / "corrupt").glob("*.gguf"))
    assert len(corrupt) >= 15
    for path in corrupt:
        p = run_uaii(uaii_bin, "inspect", path, check=False)
        assert p.returncode == 1, (path.name, p.returncode, p.stderr)  # an error, never a crash
        assert p.stderr.startswith("uaii inspect: "), (path.name, p.stderr)


def test_usage_errors(uaii_bin):
    p = run_uaii(uaii_bin, "inspect", "--bogus", check=False)
    assert p.returncode == 2 and "unknown option --bogus" in p.stderr
    p = run_uaii(uaii_bin, "frobnicate", check=False)
    assert p.returncode == 2
