"""`uaii tokenize --json` output validates against docs/json/tokenize.schema.json."""
import json
import os
import pathlib
import subprocess

import jsonschema
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = json.load(open(os.path.join(ROOT, "docs", "json", "tokenize.schema.json")))
SPM = os.path.join(ROOT, "tests", "golden", "tokenizers", "spm_tiny.model")


def uaii_binary():
    for cand in [os.environ.get("UAII_BIN", ""), os.path.join(ROOT, "build", "uaii"),
                 os.path.join(ROOT, "build-tok", "uaii")]:
        if cand and os.path.exists(cand):
            return cand
    pytest.skip("SKIP uaii binary not built (set UAII_BIN)")


def run(*args):
    r = subprocess.run([uaii_binary(), "tokenize", *args], capture_output=True, text=True)
    return r


def test_encode_json_matches_schema():
    r = run("encode", "Hello wörld 😀", "--model", SPM, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["mode"] == "encode" and doc["count"] == len(doc["ids"])


def test_decode_json_matches_schema_and_round_trips():
    enc = json.loads(run("encode", "round trip", "--model", SPM, "--json", "--no-bos").stdout)
    r = run("decode", *map(str, enc["ids"]), "--model", SPM, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["text"] == "round trip"


def test_bad_id_is_a_clear_error():
    r = run("decode", "99999999", "--model", SPM)
    assert r.returncode == 1
    assert "not in the vocabulary" in r.stderr


def test_hf_directory_flag_gives_the_tokenizers_library_ids():
    """`--hf DIR` (the product guide's spelling) reads a Hugging Face directory's tokenizer;
    the ids are the `tokenizers` library's (this repo's golden for the real Qwen 3 file)."""
    d = pathlib.Path(ROOT).parent / "shared" / "data" / "tokenizers" / "qwen3"
    if not d.is_dir():
        print(f"SKIP: {d} absent")
        return
    r = run("encode", "hello world", "--hf", str(d), "--json", "--no-bos")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["ids"] == [14990, 1879]  # tokenizers 0.23.3: Tokenizer.from_file(...).encode("hello world").ids
    assert run("encode", "x", "--hf", str(d), "--model", SPM).returncode == 2
    bad = run("encode", "x", "--hf", os.path.join(ROOT, "docs"))
    assert bad.returncode == 1 and "not a directory holding tokenizer.json or tokenizer.model" in bad.stderr
