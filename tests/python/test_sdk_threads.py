"""Eight Python threads over one uaii.Model, each with a Session of its own, generating,
chatting, streaming (and cancelling the stream midway) and tokenizing at once. The SDK
releases the GIL inside every call into the engine, so the threads really run in
parallel; each thread's results must equal what the same work gives alone.
scripts/tsan.sh runs this file under ThreadSanitizer (the SDK over a TSan build of
libuaii), which reports a race even when it leaves the results intact."""
import threading

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

THREADS = 8
ROUNDS = 2


@pytest.fixture(scope="module")
def chat_model(fixtures_dir):
    p = fixtures_dir / "sdk" / "tiny-llama-chat.gguf"
    if not p.exists():
        pytest.fail(f"{p} missing: run python3 tests/fixtures/make_sdk_fixtures.py {fixtures_dir}")
    with uaii.Model(p) as m:
        yield m


def text_of(worker):
    return " ".join(f"tok{(worker * 11 + i * 7) % 40}" for i in range(4 + worker))


def work(model, tokenizer, worker):
    """One thread's program; returns everything it observed."""
    text = text_of(worker)
    out = {"ids": tokenizer.encode(text)}
    out["decoded"] = tokenizer.decode(out["ids"])
    with uaii.Session(model, threads=1 + worker % 2, max_context=256) as s:
        out["greedy"] = s.generate(text, max_tokens=10)
        s.reset()
        out["sampled"] = s.generate(text, max_tokens=10, temperature=0.8, seed=100 + worker)
        s.reset()
        streamed, events = [], 0
        for ev in s.generate(text, max_tokens=150, stream=True):  # ends long after the break
            events += 1
            if ev.kind == "text":
                streamed.append(ev.text)
            if events == 3:
                break  # leaving the loop cancels the generation
        out["streamed"] = "".join(streamed)
        out["cancelled"] = s.last_result.stop_reason
        s.reset()
        out["chat"] = s.chat([{"role": "user", "content": text}], max_tokens=8)
        out["chat_usage"] = s.last_result.usage.completion_tokens
    return out


def test_eight_threads_one_model_same_results_as_alone(chat_model):
    tokenizer = chat_model.tokenizer
    alone = [work(chat_model, tokenizer, i) for i in range(THREADS)]
    for a in alone:
        assert a["cancelled"] == "cancelled"
        assert a["greedy"].startswith(a["streamed"])
    for _ in range(ROUNDS):
        results = [None] * THREADS
        errors = []
        barrier = threading.Barrier(THREADS)

        def run(i):
            try:
                barrier.wait()
                results[i] = work(chat_model, tokenizer, i)
            except Exception as e:  # reported below with the worker's number
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a worker thread hung"
        assert not errors, errors
        for i in range(THREADS):
            assert results[i] == alone[i], f"worker {i}"
