"""The Python SDK (bindings/python): import and ABI check, packaging, models, tokenizers,
sessions, non-streaming generation, errors and context managers.

Imports `uaii` from the installed package (scripts/setup.sh installs it with
UAII_PREBUILT_DIR=$BUILD_DIR python3 -m pip install ./bindings/python)."""
import json
import os
import pathlib
import struct
import subprocess
import sys

import pytest

from conftest import REPO, run_uaii

try:
    import uaii
except ImportError as e:  # a clear reason instead of a bare collection error
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

GOLDEN_GREEDY = REPO / "tests" / "golden" / "llamacpp" / "greedy.json"


@pytest.fixture(scope="module")
def model(default_model):
    with uaii.Model(default_model) as m:
        yield m


@pytest.fixture(scope="module")
def tiny_path(fixtures_dir):
    p = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    if not p.exists():
        pytest.fail(f"{p} missing: run python3 tests/fixtures/make_tiny_models.py {fixtures_dir}")
    return p


# ---- import, version, packaging ----

def test_abi_version_matches_and_is_checked():
    assert uaii.capi_version() == uaii.CAPI_VERSION == "0.5.0"
    uaii._uaii._check_abi(500)  # same major.minor
    uaii._uaii._check_abi(507)  # a newer patch level is compatible
    for other, name in [(600, "0.6.0"), (400, "0.4.0"), (10500, "1.5.0")]:
        with pytest.raises(ImportError, match=rf"C ABI {name} but this extension was built for 0\.5\.x"):
            uaii._uaii._check_abi(other)


def test_import_refuses_a_library_with_another_abi(tmp_path):
    # A stand-in preloaded in front of libuaii answers uaii_capi_version() with 0.6.0.
    src = tmp_path / "fake_abi.c"
    src.write_text("#include <stdint.h>\n"
                   "uint32_t uaii_capi_version(void) { return 600; }\n"
                   "const char* uaii_capi_version_string(void) { return \"0.6.0\"; }\n")
    so = tmp_path / "libfake_abi.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    p = subprocess.run([sys.executable, "-c", "import uaii"], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "LD_PRELOAD": str(so)}, timeout=60)
    assert p.returncode != 0
    assert ("ImportError: uaii: the loaded libuaii speaks C ABI 0.6.0 but this extension was built for 0.5.x"
            in p.stderr), p.stderr


def test_wheel_bundles_libuaii_and_finds_it_through_origin():
    pkg = pathlib.Path(uaii.__file__).parent
    assert not str(pkg).startswith(str(REPO / "bindings")), f"tests must use the installed package, got {pkg}"
    lib = pkg / "libuaii.so.0"
    assert lib.is_file(), f"{lib} is not bundled"
    ext = pathlib.Path(uaii._uaii.__file__)
    dyn = subprocess.run(["readelf", "-d", str(ext)], capture_output=True, text=True, check=True).stdout
    assert "[libuaii.so.0]" in dyn, dyn
    assert "[$ORIGIN]" in dyn, f"the extension's RPATH/RUNPATH is not $ORIGIN:\n{dyn}"
    for line in dyn.splitlines():  # no path of the build machine leaks into the wheel
        if "RPATH" in line or "RUNPATH" in line:
            assert "/" not in line.split("[", 1)[1], line
    # The extension links the C ABI only: every uaii symbol it imports is uaii_*.
    syms = subprocess.run(["nm", "-D", "--undefined-only", str(ext)], capture_output=True, text=True,
                          check=True).stdout
    names = [ln.split()[-1] for ln in syms.splitlines() if "uaii" in ln]
    assert names and all(n.startswith("uaii_") for n in names), names


def test_stubs_and_py_typed_ship_with_the_package():
    pkg = pathlib.Path(uaii.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "_uaii.pyi").read_text()
    for name in ["class Model", "class Session", "class Tokenizer", "class Event", "def generate", "def chat"]:
        assert name in stub, name


def test_classes_have_docstrings():
    for obj in [uaii.Model, uaii.Session, uaii.Tokenizer, uaii.Stream, uaii.Event, uaii.Session.generate,
                uaii.Session.chat, uaii.Tokenizer.encode, uaii.UaiiError, uaii.NotFoundError]:
        assert obj.__doc__ and len(obj.__doc__.strip()) > 20, obj


# ---- models and tokenizers ----

def test_default_model_opens_without_a_path(monkeypatch, default_model):
    monkeypatch.delenv("UAII_MODEL", raising=False)
    with uaii.Model() as m:
        info = m.info
    assert isinstance(info, dict)
    assert info["path"].endswith(default_model.name), info.get("path")


def test_uaii_model_variable_is_used_when_no_path_is_given(monkeypatch, tiny_path):
    monkeypatch.setenv("UAII_MODEL", str(tiny_path))
    with uaii.Model() as m:
        assert m.info["path"].endswith("tiny-llama-f32.gguf")
        assert m.tokenizer.vocab_size == 320


def test_model_accepts_pathlike(tiny_path):
    with uaii.Model(pathlib.Path(tiny_path)) as m:
        assert m.tokenizer.vocab_size == 320


def test_info_is_the_inspect_document(model):
    info = model.info
    json.dumps(info)  # plain JSON types
    schema = json.loads((REPO / "docs" / "json" / "inspect.schema.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(info, schema)
    info["path"] = "edited"  # a copy: editing it leaves the model's alone
    assert model.info["path"] != "edited"


def test_tokenizer_encode_decode(model):
    tok = model.tokenizer
    assert tok.vocab_size == 262144
    ids = tok.encode("The capital of France is")
    assert ids == [2, 818, 5279, 529, 7001, 563]  # BOS 2; the same ids llama.cpp gives (golden greedy.json)
    assert tok.encode("The capital of France is", add_special=False) == ids[1:]
    assert tok.decode(ids) == "<bos>The capital of France is"
    assert tok.decode(ids, skip_special=True) == "The capital of France is"
    # Control tokens in text are plain text unless parse_special.
    assert tok.encode("<start_of_turn>", add_special=False, parse_special=True) == [105]
    assert len(tok.encode("<start_of_turn>", add_special=False)) > 1
    assert tok.decode([]) == "" and tok.encode("", add_special=False) == []
    text = "héllo wörld ✓ 日本語 " * 50  # longer than the first buffer guess in bytes
    assert tok.decode(tok.encode(text, add_special=False)) == text


def test_standalone_tokenizer_matches_the_models(model, default_model):
    with uaii.Tokenizer(default_model) as tok:
        assert tok.vocab_size == model.tokenizer.vocab_size
        for text in ["Hello world", "  spaces\tand\nlines  ", "emoji 🙂 and ünïcödé"]:
            assert tok.encode(text) == model.tokenizer.encode(text)


def test_tokenizer_errors(model):
    tok = model.tokenizer
    with pytest.raises(uaii.InvalidArgumentError, match="token id 999999 at index 1 is outside the vocabulary"):
        tok.decode([2, 999999])
    with pytest.raises(uaii.InvalidArgumentError, match="outside the vocabulary"):
        tok.decode([2 ** 40])
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
        tok.decode([-1])
    with pytest.raises(TypeError):
        tok.decode(["a"])
    with pytest.raises(TypeError):
        tok.encode(b"bytes")


# ---- errors ----

def test_missing_model_is_not_found(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(uaii.NotFoundError) as e:
        uaii.Model(missing)
    assert e.value.status == "not_found" and e.value.code == 200
    assert str(missing) in str(e.value) and e.value.message == str(e.value)
    assert isinstance(e.value, uaii.UaiiError)
    with pytest.raises(uaii.NotFoundError, match="nope.gguf"):
        uaii.Tokenizer(missing)


def test_garbage_model_is_invalid_model(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + struct.pack("<I", 3) + b"\xff" * 56)  # version 3, absurd counts
    with pytest.raises(uaii.InvalidModelError) as e:
        uaii.Model(bad)
    assert e.value.status == "invalid_model" and "bad.gguf" in str(e.value) and "metadata count" in str(e.value)
    bad.write_bytes(b"hello, not a model")
    with pytest.raises(uaii.InvalidModelError, match="not a GGUF file"):
        uaii.Model(bad)
    bad.write_bytes(b"GGUF" + struct.pack("<I", 99) + b"\0" * 56)
    with pytest.raises(uaii.UnsupportedError, match="unsupported GGUF version 99"):
        uaii.Model(bad)


def test_bad_session_options(model):
    with pytest.raises(uaii.InvalidArgumentError, match='unknown preset "bogus"'):
        uaii.Session(model, preset="bogus")
    with pytest.raises(uaii.UnsupportedError, match=r"unknown device 'quantum' \(available: auto, cpu"):
        uaii.Session(model, device="quantum")
    with pytest.raises(uaii.InvalidArgumentError, match="max_context -5 is negative"):
        uaii.Session(model, max_context=-5)
    with pytest.raises(uaii.InvalidArgumentError, match="context_length 100000 exceeds the model maximum 32768"):
        uaii.Session(model, max_context=100000)
    with pytest.raises(uaii.InvalidArgumentError, match="ram_gb"):
        uaii.Session(model, ram_gb=-1.0)
    # Presets, budgets and KV windows work through the ABI (docs/storage.md).
    with uaii.Session(model, preset="laptop", kv_window=64):
        pass
    with pytest.raises(TypeError):
        uaii.Session("not a model")


def test_bad_generate_options(model):
    with uaii.Session(model) as s:
        with pytest.raises(uaii.InvalidArgumentError, match="max_tokens -1 is negative"):
            s.generate("Hi", max_tokens=-1)
        with pytest.raises(uaii.InvalidArgumentError, match="max_tokens 4294967296 is out of range"):
            s.generate("Hi", max_tokens=2 ** 32)
        with pytest.raises(uaii.InvalidArgumentError, match="seed -1"):
            s.generate("Hi", seed=-1)
        with pytest.raises(uaii.InvalidArgumentError, match="temperature"):
            s.generate("Hi", temperature=float("nan"))
        with pytest.raises(uaii.InvalidArgumentError, match="NUL"):
            s.generate("a\0b")
        with pytest.raises(TypeError):
            s.generate("Hi", stop=[1])
        with pytest.raises(TypeError):
            s.generate(b"bytes")
        # The session still works after the failures.
        assert s.generate("Hi", max_tokens=2) is not None


# ---- generation ----

def test_generate_greedy_matches_llama_cpp(model):
    if not GOLDEN_GREEDY.exists():
        pytest.skip(f"SKIP {GOLDEN_GREEDY} absent")
    golden = json.loads(GOLDEN_GREEDY.read_text())
    case = next(c for c in golden["cases"] if c["prompt"] == "The capital of France is")
    n = 4  # the first tokens, whose top-2 logit gaps are wide (> 0.5)
    with uaii.Session(model) as s:
        text = s.generate(case["prompt"], max_tokens=n)
        r = s.last_result
    assert text == model.tokenizer.decode(case["tokens"][:n])
    assert r.text == text and r.stop_reason == "max_tokens"
    assert r.usage.prompt_tokens == len(case["prompt_tokens"]) and r.usage.completion_tokens == n


def test_generate_usage_prefix_reuse_and_reset(model):
    with uaii.Session(model) as s:
        assert s.last_result is None
        a = s.generate("The capital of France is", max_tokens=8)
        r1 = s.last_result
        assert r1.usage.cached_tokens == 0 and r1.usage.prompt_tokens == 6
        assert r1.usage.decode_tokens_per_s > 0 and r1.usage.prefill_tokens_per_s > 0
        assert r1.usage.peak_rss_bytes > 100 * 2 ** 20
        assert r1.usage.reasoning_tokens == 0
        assert set(r1.to_dict()) == {"text", "stop_reason", "usage"}
        b = s.generate("The capital of France is", max_tokens=8)
        assert b == a  # greedy
        assert s.last_result.usage.cached_tokens > 0  # the prompt came from the KV cache
        s.reset()
        assert s.generate("The capital of France is", max_tokens=8) == a
        assert s.last_result.usage.cached_tokens == 0


def test_stop_strings(model):
    with uaii.Session(model) as s:
        full = s.generate("The capital of France is", max_tokens=16)
        assert "France" in full, full
        cut = s.generate("The capital of France is", max_tokens=16, stop=["France"])
        assert cut == full[: full.index("France")]
        assert s.last_result.stop_reason == "stop_string"
        assert s.generate("The capital of France is", max_tokens=16, stop="France") == cut  # one str


def test_sampling_is_reproducible_by_seed(model):
    with uaii.Session(model) as s:
        kw = dict(max_tokens=12, temperature=0.9, top_k=50, top_p=0.9, min_p=0.0, seed=1234)
        a = s.generate("Once upon a time", **kw)
        s.reset()
        b = s.generate("Once upon a time", **kw)
        assert a == b
        texts = {s.generate("Once upon a time", **{**kw, "seed": seed}) for seed in range(4)}
        assert len(texts) > 1, "different seeds gave the same text four times"


def test_generate_on_tiny_model(tiny_path):
    with uaii.Model(tiny_path) as m, uaii.Session(m) as s:
        s.generate("hello", max_tokens=16, repeat_penalty=1.1, presence_penalty=0.1, frequency_penalty=0.1)
        r = s.last_result
        assert r.stop_reason in ("max_tokens", "end_of_generation")
        assert 0 < r.usage.completion_tokens <= 16 or r.stop_reason == "end_of_generation"


# ---- lifetimes ----

def test_context_managers_close_handles(tiny_path):
    with uaii.Model(tiny_path) as m:
        tok = m.tokenizer
        with uaii.Session(m) as s:
            s.generate("x", max_tokens=1)
        assert s.closed
        with pytest.raises(uaii.InvalidStateError, match="the session is closed"):
            s.generate("x", max_tokens=1)
        assert s.last_result is not None  # still readable after close
        s.close()  # idempotent
    assert m.closed
    with pytest.raises(uaii.InvalidStateError, match="the model is closed"):
        _ = m.info
    with pytest.raises(uaii.InvalidStateError, match="the model is closed"):
        uaii.Session(m)
    # The tokenizer holds its own handle: it outlives the model object.
    assert tok.encode("ab", add_special=False)
    tok.close()
    with pytest.raises(uaii.InvalidStateError, match="the tokenizer is closed"):
        tok.encode("ab")


def test_session_outlives_a_closed_model(tiny_path):
    m = uaii.Model(tiny_path)
    s = uaii.Session(m)
    m.close()
    assert len(s.generate("abc", max_tokens=3)) >= 0
    assert s.last_result.usage.completion_tokens > 0 or s.last_result.stop_reason == "end_of_generation"
    s.close()


def test_exceptions_in_a_with_block_still_close(tiny_path):
    with pytest.raises(RuntimeError):
        with uaii.Model(tiny_path) as m:
            raise RuntimeError("boom")
    assert m.closed


def test_stubs_match_the_runtime_classes():
    import ast
    pkg = pathlib.Path(uaii.__file__).parent
    tree = ast.parse((pkg / "_uaii.pyi").read_text())
    stub_classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert set(stub_classes) == {"Usage", "GenerateResult", "Event", "Stream", "Tokenizer", "Model", "Session",
                                 "Sampler"}
    # uaii.Model is the extension's Model plus the OpenAI-shaped calls of uaii/openai_api.py
    # (typed in that file): the stub covers the extension's part.
    from uaii import openai_api
    python_side = {m for m in vars(openai_api.Model) if not m.startswith("_")}
    assert python_side == {"create_chat_completion", "create_completion", "close"}
    for name, node in stub_classes.items():
        stub_members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        runtime = {m for m in dir(getattr(uaii, name)) if not m.startswith("_")}
        if name == "Model":
            runtime = (runtime - python_side) | {"close"}
        assert {m for m in stub_members if not m.startswith("_")} == runtime, name
    stub_funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert stub_funcs == {"capi_version", "_check_abi", "json_schema_to_grammar"}


def test_session_options_that_work_today(tiny_path):
    with uaii.Model(tiny_path) as m:
        for kw in [dict(device="auto"), dict(preset="none"), dict(preset="off", ram_gb=None, kv_window=0),
                   dict(threads=1, max_context=64)]:
            with uaii.Session(m, **kw) as s:
                s.generate("abc", max_tokens=2)
                assert s.last_result is not None, kw


def test_a_full_context(tiny_path):
    with uaii.Model(tiny_path) as m, uaii.Session(m, max_context=16) as s:
        with pytest.raises(uaii.InvalidStateError, match="the prompt has 30 tokens; the context holds 16"):
            s.generate("abcdefghijklmnopqrstuvwxyz", max_tokens=2)
        s.generate("abc", max_tokens=100, min_p=0.0)
        r = s.last_result
        assert r.stop_reason in ("context_full", "end_of_generation")
        if r.stop_reason == "context_full":
            # The last token is sampled from position 16's logits and needs no KV slot.
            assert r.usage.prompt_tokens + r.usage.completion_tokens <= 16 + 1


# ---- the storage calibration (docs/storage.md, "Observed figures") ----

def test_a_session_teaches_the_calibration_only_when_asked(model, tmp_path, monkeypatch):
    for learn in (False, True):
        home = tmp_path / f"home-{learn}"
        home.mkdir()
        monkeypatch.setenv("UAII_HOME", str(home))
        with uaii.Session(model, learn_calibration=learn) as s:
            s.generate("The capital of France is", max_tokens=4, temperature=0.0)
        cache = home / "calibration.json"
        if not learn:
            assert not cache.exists()
            continue
        observed = json.loads(cache.read_text()).get("observed", {})
        assert observed, "a learning session folded nothing into the calibration"


def test_plan_is_the_cli_dry_run_document(uaii_bin, tiny_path, tmp_path, monkeypatch):
    # One calibration cache for both: the first dry run measures it, the others read it.
    monkeypatch.setenv("UAII_HOME", str(tmp_path))
    args = ["generate", "--model", str(tiny_path), "--dry-run", "--json", "--preset", "phone", "--max-context", "256"]
    run_uaii(uaii_bin, *args)
    cli = json.loads(run_uaii(uaii_bin, *args).stdout)
    with uaii.Model(tiny_path) as m:
        plan = m.plan(preset="phone", max_context=256)
        assert plan == cli
        assert plan["preset"] == "phone" and plan["kv"]["max_context"] == 256
        assert m.plan()["preset"] == "none"  # the Session defaults
        with pytest.raises(uaii.UnsupportedError, match="tpu"):
            m.plan(device="tpu")
        with pytest.raises(uaii.InvalidArgumentError, match="unknown preset"):
            m.plan(preset="tablet")
