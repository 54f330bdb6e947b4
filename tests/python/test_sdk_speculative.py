"""Speculative decoding through the Python SDK and the CLI (docs/speculative.md):
Session(model, draft=..., draft_max=..., draft_min=..., draft_p_min=..., draft_rule=...)
and `uaii generate --draft ... --json`. Greedy and exact-match replies are the ones a
session without a draft gives; the rejection rule's are its own; the usage counts the
proposals; bad knobs are refused with the library's messages."""
import json

import jsonschema
import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

from conftest import load_schema, run_uaii

PROMPT = "tok5 tok6 tok7"


@pytest.fixture(scope="module")
def models(fixtures_dir):
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-f32.gguf") as m, \
         uaii.Model(fixtures_dir / "tiny" / "tiny-llama-q4_0.gguf") as d:
        yield m, d


@pytest.mark.parametrize("kw", [{}, {"temperature": 0.9, "seed": 4}, {"temperature": 1.2, "seed": 8, "top_k": 0}])
def test_the_exact_rule_changes_nothing_but_the_passes(models, kw):
    model, draft = models
    # The tiny models' logits are nearly flat: draft_p_min 0 lets the draft propose at all.
    with uaii.Session(model, threads=1) as plain, \
         uaii.Session(model, threads=1, draft=draft, draft_max=3, draft_p_min=0, draft_rule="exact") as spec:
        a = plain.generate(PROMPT, max_tokens=30, **kw)
        b = spec.generate(PROMPT, max_tokens=30, **kw)
        assert a == b
        u = spec.last_result.usage
        assert u.draft_tokens > 0 and 0 <= u.draft_accepted_tokens <= u.draft_tokens
        assert u.draft_acceptance_rate == pytest.approx(u.draft_accepted_tokens / u.draft_tokens)
        assert plain.last_result.usage.draft_tokens == 0
        assert plain.last_result.usage.draft_acceptance_rate == 0
        d = u.to_dict()
        assert d["draft_tokens"] == u.draft_tokens and d["draft_acceptance_rate"] == u.draft_acceptance_rate


def test_greedy_with_the_default_rule_and_the_aliases(models):
    model, draft = models
    with uaii.Session(model, threads=1) as plain, \
         uaii.Session(model, threads=1, draft_model=model, n_draft=5, draft_p_min=0) as spec:
        assert plain.generate(PROMPT, max_tokens=30) == spec.generate(PROMPT, max_tokens=30)
        u = spec.last_result.usage
        assert u.draft_tokens > 0 and u.draft_accepted_tokens == u.draft_tokens  # its own draft
        assert u.draft_acceptance_rate == 1.0


def test_the_rejection_rule_samples_and_counts(models):
    model, draft = models
    with uaii.Session(model, threads=1, draft=draft, draft_max=4, draft_p_min=0) as spec:
        a = spec.generate(PROMPT, max_tokens=30, temperature=1.0, seed=3)
        spec.reset()
        b = spec.generate(PROMPT, max_tokens=30, temperature=1.0, seed=3)
        assert a == b  # a seed reproduces a speculative run too
        assert spec.last_result.usage.completion_tokens == 30
        assert spec.last_result.usage.draft_tokens > 0
    # The model drafting for itself: the rejection rule draws proposals from q = p and
    # keeps every one; exact match proposes greedily and keeps only those the target's
    # sampler happens to pick too.
    kept = {}
    for rule in ("rejection", "exact"):
        with uaii.Session(model, threads=1, draft=model, draft_max=4, draft_p_min=0, draft_rule=rule) as spec:
            spec.generate(PROMPT, max_tokens=30, temperature=1.0, seed=3)
            u = spec.last_result.usage
            assert u.draft_tokens > 0
            kept[rule] = u.draft_acceptance_rate
    assert kept["rejection"] == 1.0
    assert kept["exact"] < 0.5


def test_p_min_and_draft_min_cut_proposals(models):
    model, draft = models
    with uaii.Session(model, threads=1, draft=model) as spec:  # llama.cpp's 0.75: far above the tiny model's
        spec.generate(PROMPT, max_tokens=20)
        assert spec.last_result.usage.draft_tokens == 0
    with uaii.Session(model, threads=1, draft=model, draft_max=4, draft_min=4, draft_p_min=0) as spec:
        spec.generate(PROMPT, max_tokens=20)
        assert spec.last_result.usage.draft_tokens > 0


def test_bad_drafts_and_knobs_are_refused(models, default_model):
    model, draft = models
    with pytest.raises(TypeError, match="draft_model"):
        uaii.Session(model, draft_model="tiny.gguf")
    with pytest.raises(TypeError, match="draft must be a uaii.Model, a drafter file's path or \"auto\""):
        uaii.Session(model, draft=3)
    with pytest.raises(uaii.UaiiError, match="no-such-drafter.gguf"):
        uaii.Session(model, draft="no-such-drafter.gguf")
    with pytest.raises(ValueError, match="empty path"):
        uaii.Session(model, draft="")
    with pytest.raises(uaii.InvalidArgumentError, match=r"draft_max 17 is outside 1\.\.16.*17 rows"):
        uaii.Session(model, draft=draft, draft_max=17)
    with pytest.raises(uaii.InvalidArgumentError, match=r"draft_max 0 is outside 1\.\.16"):
        uaii.Session(model, draft=draft, n_draft=0)
    with pytest.raises(uaii.InvalidArgumentError, match=r"draft_min 5 is outside 0\.\.draft_max \(4\)"):
        uaii.Session(model, draft=draft, draft_max=4, draft_min=5)
    with pytest.raises(uaii.InvalidArgumentError, match=r"p_min 2 is outside \[0, 1\]"):
        uaii.Session(model, draft=draft, draft_p_min=2)
    with pytest.raises(uaii.InvalidArgumentError, match="draft_rule \"fast\""):
        uaii.Session(model, draft=draft, draft_rule="fast")
    with pytest.raises(uaii.InvalidArgumentError, match="architecture 'llama' has no in-trunk multi-token-prediction"):
        uaii.Session(model, draft="auto")
    with uaii.Model(default_model) as gemma:
        with pytest.raises(uaii.InvalidArgumentError, match="same vocabulary"):
            uaii.Session(model, draft=gemma)


def test_cli_generate_with_a_draft(uaii_bin, fixtures_dir):
    tiny = fixtures_dir / "tiny"
    args = ["generate", "--model", tiny / "tiny-llama-f32.gguf", "-p", "tok5 tok6", "--max-tokens", "20", "--json"]
    plain = json.loads(run_uaii(uaii_bin, *args).stdout)
    assert plain["usage"]["draft_tokens"] == 0 and plain["usage"]["draft_acceptance_rate"] == 0
    for flags in (["--draft", tiny / "tiny-llama-f32.gguf", "--draft-max", "5", "--draft-p-min", "0"],
                  ["--draft-model", tiny / "tiny-llama-f32.gguf", "--n-draft", "5", "--draft-p-min", "0",
                   "--draft-min", "2", "--draft-rule", "exact"]):
        r = run_uaii(uaii_bin, *args, *flags)
        spec = json.loads(r.stdout)
        jsonschema.validate(spec, load_schema("generate.schema.json"))
        assert spec["tokens"] == plain["tokens"] and spec["text"] == plain["text"]
        u = spec["usage"]
        assert u["draft_tokens"] > 0
        assert u["draft_accepted_tokens"] == u["draft_tokens"]  # the model as its own draft
        assert u["draft_acceptance_rate"] == 1.0
        assert "draft proposed" in r.stderr


@pytest.mark.parametrize("flags,message", [
    (["--draft", "auto"], "architecture 'llama' has no in-trunk multi-token-prediction head"),
    (["--draft", "SELF", "--draft-max", "17"], "draft_max 17 is outside 1..16"),
    (["--draft", "SELF", "--draft-rule", "fast"], "--draft-rule takes auto, exact or rejection"),
    (["--draft-max", "4"], "--draft-max needs a drafter"),
    (["--draft", "SELF", "--draft-model", "SELF"], "--draft and --draft-model are the same flag"),
])
def test_cli_bad_draft_flags(uaii_bin, fixtures_dir, flags, message):
    model = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    flags = [model if f == "SELF" else f for f in flags]
    r = run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5", "--max-tokens", "4", *flags, check=False)
    assert r.returncode != 0
    assert message in r.stderr


def test_the_gemma4_assistant_drafts_by_path_and_keeps_greedy_replies(fixtures_dir):
    """The gemma4 assistant is no uaii.Model (it reads its target's cache and hidden
    state): Session(draft=path) opens it through uaii_session_options.draft_path. Greedy
    replies equal the plain session's, across turns; the assistant proposed."""
    for kind in ("f32", "q8_0", "q4_0"):  # each assistant with the target it was made for
        assistant = fixtures_dir / "gemma4-assistant" / f"{kind}.gguf"
        with uaii.Model(fixtures_dir / "gemma4" / f"{kind}.gguf") as model, \
             uaii.Session(model, threads=1) as plain, \
             uaii.Session(model, threads=1, draft=assistant, draft_p_min=0) as spec:
            drafted = 0
            for prompt in ("tok5 tok6 tok7", "tok9 tok10"):
                a = plain.generate(prompt, max_tokens=24)
                b = spec.generate(prompt, max_tokens=24)
                assert a == b, kind
                drafted += spec.last_result.usage.draft_tokens
            assert drafted > 0, kind
    with uaii.Model(fixtures_dir / "gemma4" / "f32.gguf") as model:
        with pytest.raises(uaii.UaiiError, match="bad-width.gguf"):
            uaii.Session(model, draft=fixtures_dir / "gemma4-assistant" / "bad-width.gguf")
