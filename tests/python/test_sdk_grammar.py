"""Structured output in the Python SDK: grammar= (GBNF) and json_schema= on
Session.generate / Session.chat, uaii.Sampler constrained to a vocabulary, and
uaii.json_schema_to_grammar. Every constrained reply must parse, whatever the seed."""
import json
import re

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

SCHEMA = {"type": "object",
          "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 999},
                         "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
                         "ok": {"type": "boolean"}},
          "required": ["id", "ok"], "additionalProperties": False}


@pytest.fixture(scope="module")
def tiny(fixtures_dir):
    with uaii.Model(fixtures_dir / "tiny" / "tiny-llama-f32.gguf") as m:
        yield m


@pytest.mark.parametrize("seed", range(1, 7))
def test_json_schema_replies_parse_and_validate(tiny, seed):
    with uaii.Session(tiny, threads=1) as s:
        text = s.generate("tok5 tok6", json_schema=SCHEMA, temperature=1.0, seed=seed, max_tokens=250)
        assert s.last_result.stop_reason == "end_of_generation"
    doc = json.loads(text)
    assert set(doc) <= {"id", "tags", "ok"} and {"id", "ok"} <= set(doc)
    assert isinstance(doc["id"], int) and 0 <= doc["id"] <= 999 and isinstance(doc["ok"], bool)
    assert all(t in ("a", "b", "c") for t in doc.get("tags", []))


def test_grammar_and_schema_as_json_text(tiny):
    with uaii.Session(tiny, threads=1) as s:
        out = s.generate("tok5", grammar='root ::= "v" [0-9]{1,3} "." [0-9]\n', temperature=0.9, seed=2)
        assert re.fullmatch(r"v[0-9]{1,3}\.[0-9]", out)
        out = s.generate("tok5", json_schema=json.dumps({"enum": ["red", "green"]}), temperature=0.9, seed=5)
        assert json.loads(out) in ("red", "green")
        events = list(s.generate("tok5", json_schema={"type": "boolean"}, stream=True))
        assert json.loads("".join(e.text for e in events if e.kind == "text")) in (True, False)


def test_sampler_with_a_grammar_drives_session_step(tiny):
    sampler = uaii.Sampler(temperature=0.7, seed=11, json_schema={"type": "array", "items": {"type": "integer"},
                                                                  "maxItems": 4}, vocabulary=tiny)
    with uaii.Session(tiny, threads=1) as s:
        s.eval(tiny.tokenizer.encode("tok5 tok6"))
        ids = []
        while len(ids) < 200:
            t, stop = s.step(sampler)
            if stop == "end_of_generation":
                break
            ids.append(t)
    assert sampler.grammar_complete
    doc = json.loads(tiny.tokenizer.decode(ids))
    assert isinstance(doc, list) and len(doc) <= 4 and all(isinstance(x, int) for x in doc)
    sampler.reset()
    assert not sampler.grammar_complete


def test_errors_name_the_cause(tiny):
    with uaii.Session(tiny, threads=1) as s:
        with pytest.raises(uaii.InvalidArgumentError, match="undefined rule 'nope'"):
            s.generate("tok5", grammar="root ::= nope\n")
        with pytest.raises(uaii.InvalidArgumentError, match="exclude each other"):
            s.generate("tok5", grammar="root ::= \"a\"\n", json_schema={})
        with pytest.raises(uaii.InvalidArgumentError):
            s.generate("tok5", json_schema="{not json")
        with pytest.raises(TypeError, match="grammar must be a str"):
            s.generate("tok5", grammar=3)
    with pytest.raises(TypeError, match="vocabulary"):
        uaii.Sampler(grammar="root ::= \"a\"\n")
    s = uaii.Sampler(grammar='root ::= "a"\n', vocabulary=tiny.tokenizer)
    with pytest.raises(uaii.InvalidArgumentError, match="not allowed"):
        s.accept(tiny.tokenizer.encode("z", add_special=False)[-1])


def test_json_schema_to_grammar():
    gbnf = uaii.json_schema_to_grammar({"type": "object", "properties": {"x": {"type": "number"}}})
    assert "root ::=" in gbnf
    assert uaii.json_schema_to_grammar('{"type": "string"}').count("::=") >= 1
    with pytest.raises(uaii.InvalidArgumentError):
        uaii.json_schema_to_grammar("[1, 2")
