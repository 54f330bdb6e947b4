"""The Python SDK's token-level calls (the C ABI's 0.4 additions): Session.eval and its
logits, n_past / truncate, uaii.Sampler on any logits, and a generation driven with
Session.step, which must give Session.generate's text with the same keywords."""
import array
import math

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def model(default_model):
    with uaii.Model(default_model) as m:
        yield m


@pytest.fixture(scope="module")
def tiny(fixtures_dir):
    p = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    if not p.exists():
        pytest.fail(f"{p} missing: run python3 tests/fixtures/make_tiny_models.py {fixtures_dir}")
    with uaii.Model(p) as m:
        yield m


def test_eval_rows_truncate(tiny):
    ids = tiny.tokenizer.encode("tok5 tok6 tok7 tok8")
    n_vocab = tiny.info["n_vocab"] if "n_vocab" in tiny.info else None
    with uaii.Session(tiny, threads=1, max_context=256) as s:
        rows = s.eval(ids, all_logits=True)
        assert isinstance(rows, array.array) and rows.typecode == "f"
        v = len(rows) // len(ids)
        assert v * len(ids) == len(rows) and (n_vocab is None or v == n_vocab)
        assert s.n_past == len(ids) and s.max_context == 256
        s.truncate(2)
        assert s.n_past == 2
        last = s.eval(ids[2:])
        assert len(last) == v
        assert last.tobytes() == rows[(len(ids) - 1) * v:].tobytes()  # row-exact after truncation
        with pytest.raises(uaii.InvalidArgumentError, match="outside the vocabulary"):
            s.eval([v + 5])
        with pytest.raises(uaii.InvalidArgumentError):
            s.truncate(s.n_past + 1)
        with pytest.raises(TypeError):
            s.eval("tok5")


def test_sampler_on_any_logits():
    greedy = uaii.Sampler()
    assert greedy.sample([0.5, 3.0, -1.0, 3.0]) == 1
    assert greedy.sample(array.array("f", [0.0, 1.0, 5.0])) == 2
    penalized = uaii.Sampler(repeat_penalty=2.0)
    penalized.accept(1)
    assert penalized.sample([0.5, 3.0, -1.0, 2.0]) == 3
    penalized.reset()
    assert penalized.sample([0.5, 3.0, -1.0, 2.0]) == 1
    a, b = uaii.Sampler(temperature=1.0, seed=5), uaii.Sampler(temperature=1.0, seed=5)
    logits = [0.1 * i for i in range(50)]
    assert [a.sample(logits) for _ in range(30)] == [b.sample(logits) for _ in range(30)]
    with pytest.raises(uaii.InvalidArgumentError, match="top_p"):
        uaii.Sampler(top_p=1.5)
    with pytest.raises(uaii.InvalidArgumentError):
        greedy.sample([0.0, math.nan])
    with pytest.raises(TypeError):
        uaii.Sampler(temperature=0.5).sample(3)


@pytest.mark.parametrize("kw", [{}, {"temperature": 0.8, "seed": 11}])
def test_step_loop_equals_generate(model, kw):
    with uaii.Session(model, threads=2) as g:
        want = g.generate(PROMPT, max_tokens=12, **kw)
    tok = model.tokenizer
    with uaii.Session(model, threads=2) as s:
        sampler = uaii.Sampler(**kw)
        with pytest.raises(uaii.InvalidStateError, match="evaluate tokens first"):
            s.step(sampler)
        s.eval(tok.encode(PROMPT))
        out = []
        while len(out) < 12:
            t, stop = s.step(sampler)
            if stop == "end_of_generation":
                break
            out.append(t)
            if stop:
                break
        assert tok.decode(out) == want
        # generate afterwards reuses what the steps evaluated.
        s.generate(PROMPT, max_tokens=2)
        assert s.last_result.usage.cached_tokens == len(tok.encode(PROMPT)) - 1
