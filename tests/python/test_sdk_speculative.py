"""Speculative decoding through the Python SDK: Session(model, draft_model=..., n_draft=...)
gives the replies a session without a draft gives, and reports what the draft proposed;
and `uaii generate --draft-model` through the CLI."""
import json

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

from conftest import run_uaii


@pytest.fixture(scope="module")
def models(fixtures_dir):
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-f32.gguf") as m, \
         uaii.Model(fixtures_dir / "tiny" / "tiny-llama-q4_0.gguf") as d:
        yield m, d


@pytest.mark.parametrize("kw", [{}, {"temperature": 0.9, "seed": 4}, {"temperature": 1.2, "seed": 8, "top_k": 0}])
def test_a_draft_changes_nothing_but_the_passes(models, kw):
    model, draft = models
    with uaii.Session(model, threads=1) as plain, uaii.Session(model, threads=1, draft_model=draft, n_draft=3) as spec:
        a = plain.generate("tok5 tok6 tok7", max_tokens=30, **kw)
        b = spec.generate("tok5 tok6 tok7", max_tokens=30, **kw)
        assert a == b
        u = spec.last_result.usage
        assert u.draft_tokens > 0 and 0 <= u.draft_accepted_tokens <= u.draft_tokens
        assert plain.last_result.usage.draft_tokens == 0
        assert u.to_dict()["draft_tokens"] == u.draft_tokens


def test_bad_drafts_are_refused(models, default_model):
    model, _ = models
    with pytest.raises(TypeError, match="draft_model"):
        uaii.Session(model, draft_model="tiny.gguf")
    with pytest.raises(uaii.InvalidArgumentError, match="n_draft"):
        uaii.Session(model, draft_model=model, n_draft=0)
    with uaii.Model(default_model) as gemma:
        with pytest.raises(uaii.InvalidArgumentError, match="same vocabulary"):
            uaii.Session(model, draft_model=gemma)


def test_cli_generate_with_a_draft(uaii_bin, fixtures_dir):
    tiny = fixtures_dir / "tiny"
    args = ["generate", "--model", tiny / "tiny-llama-f32.gguf", "-p", "tok5 tok6", "--max-tokens", "20", "--json"]
    plain = json.loads(run_uaii(uaii_bin, *args).stdout)
    r = run_uaii(uaii_bin, *args, "--draft-model", tiny / "tiny-llama-f32.gguf", "--n-draft", "5")
    spec = json.loads(r.stdout)
    assert spec["tokens"] == plain["tokens"] and spec["text"] == plain["text"]
    assert spec["usage"]["draft_tokens"] > 0
    assert spec["usage"]["draft_accepted_tokens"] == spec["usage"]["draft_tokens"]  # the model as its own draft
    assert "draft proposed" in r.stderr
