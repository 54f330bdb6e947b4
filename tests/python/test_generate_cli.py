"""`uaii generate` end to end on the default model and a tiny fixture."""
import json
import subprocess

import jsonschema

from conftest import SHARED, load_schema, run_uaii, run_uaii_with_tty_stderr


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


def test_generate_step_profile_on_request(uaii_bin, fixtures_dir):
    """UAII_PROFILE_STEPS=1 prints where the forward passes' time went, per operator kind."""
    model = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    args = ["generate", "--model", model, "-p", "tok5 tok6", "--max-tokens", "4", "--json"]
    plain = run_uaii(uaii_bin, *args)
    assert "step profile" not in plain.stderr
    p = run_uaii(uaii_bin, *args, env={"UAII_PROFILE_STEPS": "1"})
    assert json.loads(p.stdout)["tokens"] == json.loads(plain.stdout)["tokens"]
    decode = p.stderr[p.stderr.index("uaii step profile, decode"):]
    assert "attention" in decode and "ms/token" in decode
    assert "uaii step profile, prefill: 1 runs" in p.stderr


def test_generate_usage_errors(uaii_bin, default_model):
    assert run_uaii(uaii_bin, "generate", "--model", default_model, check=False).returncode == 2
    assert run_uaii(uaii_bin, "generate", "-p", "x", "--max-tokens", "many", check=False).returncode == 2
    p = run_uaii(uaii_bin, "generate", "--model", "/nonexistent.gguf", "-p", "x", check=False)
    assert p.returncode == 1 and "nonexistent.gguf" in p.stderr


def test_generate_stop_string_and_reason(uaii_bin, default_model):
    full = json.loads(run_uaii(uaii_bin, "generate", "--model", default_model, "-p", "The capital of France is",
                               "--max-tokens", "16", "--json").stdout)
    words = full["text"].split()
    assert len(words) >= 4
    stop = words[2]
    cut = json.loads(run_uaii(uaii_bin, "generate", "--model", default_model, "-p", "The capital of France is",
                              "--max-tokens", "16", "--stop", stop, "--json").stdout)
    jsonschema.validate(cut, load_schema("generate.schema.json"))
    assert cut["stop_reason"] == "stop"
    assert cut["text"] == full["text"][:full["text"].index(stop)]


def test_generate_sampling_seed_reproduces(uaii_bin, fixtures_dir):
    model = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    args = ["generate", "--model", model, "-p", "tok5 tok6", "--max-tokens", "12", "--temp", "1.2", "--json"]
    a = json.loads(run_uaii(uaii_bin, *args, "--seed", "3").stdout)
    b = json.loads(run_uaii(uaii_bin, *args, "--seed", "3").stdout)
    c = json.loads(run_uaii(uaii_bin, *args, "--seed", "4").stdout)
    assert a["tokens"] == b["tokens"]
    assert a["tokens"] != c["tokens"]
    greedy = json.loads(run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5 tok6", "--max-tokens", "12",
                                 "--json").stdout)
    again = json.loads(run_uaii(uaii_bin, "generate", "--model", model, "-p", "tok5 tok6", "--max-tokens", "12",
                                "--temp", "0", "--seed", "9", "--json").stdout)
    assert greedy["tokens"] == again["tokens"]


def test_generate_bad_sampling_flags(uaii_bin, fixtures_dir):
    model = fixtures_dir / "tiny" / "tiny-llama-f32.gguf"
    p = run_uaii(uaii_bin, "generate", "--model", model, "-p", "x", "--top-p", "1.5", check=False)
    assert p.returncode == 2 and "top_p" in p.stderr
    p = run_uaii(uaii_bin, "generate", "--model", model, "-p", "x", "--temp", "hot", check=False)
    assert p.returncode == 2 and "--temp takes a number" in p.stderr


def test_generate_chat_wraps_one_user_turn(uaii_bin, default_model):
    template = SHARED / "data" / "tokenizers" / "gemma3" / "tokenizer_config.json"
    if not template.exists():
        print("SKIP: ../shared/data/tokenizers/gemma3 is absent")
        return
    via_generate = json.loads(run_uaii(uaii_bin, "generate", "--chat", "--model", default_model, "-p", "Hi",
                                       "--chat-template", template, "--max-tokens", "6", "--json").stdout)
    via_chat = json.loads(run_uaii(uaii_bin, "chat", "--model", default_model, "-p", "Hi",
                                   "--chat-template", template, "--max-tokens", "6", "--json").stdout)
    assert via_generate == via_chat or via_generate["usage"]["prompt_tokens"] == via_chat["usage"]["prompt_tokens"]


def test_generate_context_past_the_model_maximum_is_an_error(uaii_bin, fixtures_dir):
    tiny = str(fixtures_dir / "tiny" / "tiny-llama-f32.gguf")
    p = run_uaii(uaii_bin, "generate", "--model", tiny, "-p", "abc", "--max-tokens", "2", "--max-context", "1000",
                 check=False)
    assert p.returncode != 0
    assert "context_length 1000 exceeds the model maximum 256" in p.stderr
    # Without --max-context a long request is sized to the model's maximum and stops there.
    p = run_uaii(uaii_bin, "generate", "--model", tiny, "-p", "abc", "--max-tokens", "5000", "--json",
                 "--min-p", "0", "--temp", "0")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["stop_reason"] in ("context_full", "eos")
    assert doc["usage"]["prompt_tokens"] + doc["usage"]["completion_tokens"] <= 257


def _generate_with_tty_stderr(uaii_bin, *args):
    """`uaii generate ARGS` with stderr on a pseudo-terminal: (stdout, what the terminal showed)."""
    return run_uaii_with_tty_stderr(uaii_bin, "generate", *args)


def test_load_progress_bar_on_a_terminal_only(uaii_bin, default_model):
    # The default model's quantized weights get the CPU kernels' interleaved copies at
    # load: a bar with the bytes done of the total while they are made.
    _, err = _generate_with_tty_stderr(uaii_bin, "--model", default_model, "-p", "Hi", "--max-tokens", "1")
    assert "loading gemma-3-270m-q4_k_m.gguf" in err and "MiB /" in err and "%" in err, err
    out, err = _generate_with_tty_stderr(uaii_bin, "--model", default_model, "-p", "Hi", "--max-tokens", "1",
                                         "--json")
    json.loads(out)
    assert "loading " not in err
    # Not a terminal: no bar either.
    r = subprocess.run([str(uaii_bin), "generate", "--model", str(default_model), "-p", "Hi", "--max-tokens", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "loading " not in r.stderr
