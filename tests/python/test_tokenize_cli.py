"""`uaii tokenize --json` output validates against docs/json/tokenize.schema.json."""
import json
import os
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
