"""`uaii generate` end to end on the default model and a tiny fixture."""
import json

import jsonschema

from conftest import load_schema, run_uaii


def test_generate_json_matches_schema(uaii_bin, default_model):
    p = run_uaii(uaii_bin, "generate", "--model", default_model, "-p", "The capital of France is",
                 "--max-tokens", "8", "--threads", "2", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("generate.schema.json"))
    assert doc["usage"]["prompt_tokens"] == 6  # <bos> The capital of France is
    assert doc["usage"]["completion_tokens"] == len(doc["tokens"]) <= 8
    assert doc["stop_reason"] in ("eos", "max_tokens")
    assert doc["memory"]["peak_rss_bytes"] > 0
    assert doc["text"].strip()


def test_generate_streams_text_and_summarises(uaii_bin, default_model):
    p = run_uaii(uaii_bin, "generate", "--model", default_model, "-p", "The capital of France is",
                 "--max-tokens", "12")
    assert "Paris" in p.stdout or "capital" in p.stdout
    assert "prompt 6 tokens" in p.stderr and "generated" in p.stderr and "peak RSS" in p.stderr


def test_generate_tiny_model_max_tokens(uaii_bin, fixtures_dir):
    model = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    p = run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5 tok6", "--max-tokens", "5", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("generate.schema.json"))
    assert doc["usage"]["completion_tokens"] <= 5


def test_generate_usage_errors(uaii_bin, default_model):
    assert run_uaii(uaii_bin, "generate", "--model", default_model, check=False).returncode == 2
    assert run_uaii(uaii_bin, "generate", "-p", "x", "--max-tokens", "many", check=False).returncode == 2
    p = run_uaii(uaii_bin, "generate", "--model", "/nonexistent.gguf", "-p", "x", check=False)
    assert p.returncode == 1 and "nonexistent.gguf" in p.stderr
