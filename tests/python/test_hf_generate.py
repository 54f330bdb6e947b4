"""Hugging Face directories end to end: `uaii generate --model DIR` (plain and --chat,
the template from tokenizer_config.json), the C ABI through the Python SDK, and the
error statuses for a directory the runtime refuses. Models: the tiny random HF
directories of tests/fixtures/make_hf_tiny_models.py (logits parity with transformers
is tests/runtime/hf_parity_test.cpp)."""
import json

import jsonschema
import pytest

from conftest import load_schema, run_uaii

FAMILIES = ["llama_f32", "qwen3_f32_sharded", "gemma3_bf16", "phi3_f32", "gpt2_f32"]


def hf_dir(fixtures_dir, name):
    d = fixtures_dir / "hf_tiny" / name
    if not (d / "config.json").exists():
        pytest.fail(f"{d} missing: run python3 tests/fixtures/make_hf_tiny_models.py {fixtures_dir}")
    return d


@pytest.mark.parametrize("name", FAMILIES)
def test_generate_from_directory(uaii_bin, fixtures_dir, name):
    d = hf_dir(fixtures_dir, name)
    p = run_uaii(uaii_bin, "generate", "--model", d, "-p", "hello world", "--max-tokens", "6",
                 "--threads", "2", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("generate.schema.json"))
    assert doc["usage"]["prompt_tokens"] == len("hello world")  # byte-level vocabulary, no merges
    assert 1 <= doc["usage"]["completion_tokens"] == len(doc["tokens"]) <= 6
    assert all(0 <= t < 272 for t in doc["tokens"])
    # Greedy is deterministic.
    again = json.loads(run_uaii(uaii_bin, "generate", "--model", d, "-p", "hello world", "--max-tokens", "6",
                                "--threads", "2", "--json").stdout)
    assert again["tokens"] == doc["tokens"]


def test_generate_chat_uses_the_directory_template(uaii_bin, fixtures_dir):
    d = hf_dir(fixtures_dir, "qwen3_f32_sharded")
    p = run_uaii(uaii_bin, "generate", "--model", d, "-p", "hi", "--chat", "--max-tokens", "3", "--json")
    doc = json.loads(p.stdout)
    # <|im_start|> "user\nhi" <|im_end|> "\n" <|im_start|> "assistant\n": specials 1 token, bytes 1 each
    assert doc["usage"]["prompt_tokens"] == 1 + 7 + 1 + 1 + 1 + 10


def test_generate_refuses_gpt_oss_directory(uaii_bin, fixtures_dir):
    d = fixtures_dir / "hf" / "models" / "gpt_oss"
    if not d.exists():
        pytest.skip("SKIP hf fixtures (make_hf_fixtures.py) not generated")
    p = run_uaii(uaii_bin, "generate", "--model", d, "-p", "x", check=False)
    assert p.returncode == 1 and "gpt-oss" in p.stderr


def test_sdk_opens_directory(fixtures_dir):
    uaii = pytest.importorskip("uaii")
    d = hf_dir(fixtures_dir, "gemma3_bf16")
    with uaii.Model(d) as m, uaii.Session(m) as s:
        assert m.info["format"] == "huggingface"
        assert m.tokenizer.encode("hi", add_special=False) == [104, 105]
        s.generate("hello", max_tokens=4)
        assert 1 <= s.last_result.usage.completion_tokens <= 4


def test_sdk_directory_errors(fixtures_dir, tmp_path):
    uaii = pytest.importorskip("uaii")
    d = fixtures_dir / "hf" / "models" / "gpt_oss"
    if d.exists():
        with pytest.raises(uaii.UnsupportedError, match="gpt-oss"):
            uaii.Model(d)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(uaii.InvalidModelError, match="config.json"):
        uaii.Model(tmp_path)


def test_real_tokenizer_and_template_from_directory(uaii_bin, fixtures_dir):
    """A tiny Qwen3 with the real Qwen3 tokenizer.json + tokenizer_config.json (chat
    template) from ../shared; the fixture script writes it only when ../shared exists."""
    d = fixtures_dir / "hf_tiny" / "qwen3_realtok_bf16"
    if not (d / "config.json").exists():
        print("SKIP ../shared/data/tokenizers/qwen3 absent")
        return
    plain = json.loads(run_uaii(uaii_bin, "generate", "--model", d, "-p", "hi", "--max-tokens", "2",
                                "--json").stdout)
    assert plain["usage"]["prompt_tokens"] == 1  # "hi" is one Qwen3 token, no BOS
    chat = json.loads(run_uaii(uaii_bin, "generate", "--model", d, "-p", "hi", "--chat", "--max-tokens", "2",
                               "--json").stdout)
    # <|im_start|> user \n hi <|im_end|> \n <|im_start|> assistant \n, then (thinking is off
    # unless the request enables it) <think> \n\n </think> \n\n, as HF tokenizers encodes
    # the template's rendering (13 ids).
    assert chat["usage"]["prompt_tokens"] == 13
    assert chat["syntax"]["reasoning"]["open"] == "<think>"
