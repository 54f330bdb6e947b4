"""The tiny GGUFs that make_tiny_models.py writes are byte-identical to the files
llama.cpp computed the committed goldens on (tests/golden/llamacpp/tiny/*.json)."""
import hashlib
import json
import pathlib

import pytest

from conftest import REPO


def _goldens():
    return sorted((REPO / "tests" / "golden" / "llamacpp" / "tiny").glob("*.json"))


@pytest.mark.parametrize("golden", _goldens(), ids=lambda p: p.stem)
def test_fixture_matches_golden_hash(golden, fixtures_dir):
    doc = json.loads(golden.read_text())
    path = pathlib.Path(fixtures_dir) / "tiny" / doc["model_file"]
    if not path.exists():
        pytest.fail(f"{path} missing: run tests/fixtures/make_tiny_models.py {fixtures_dir}")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == doc["model_sha256"], (
        f"{path.name} changed: regenerate the goldens with tests/oracles/llamacpp_tiny_models.py")
    assert doc["reference"].startswith("llama-cpp-python ")
