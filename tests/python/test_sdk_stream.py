"""The Python SDK's streaming and threading: event streams, cancelling by leaving the
loop, sessions shared by threads, and the GIL being released while the engine computes."""
import threading
import time

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

PROMPT = "Once upon a time, in a small village,"


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


def test_stream_gives_the_same_text_as_a_plain_call(model):
    with uaii.Session(model) as s:
        plain = s.generate(PROMPT, max_tokens=16)
        s.reset()
        events = list(s.generate(PROMPT, max_tokens=16, stream=True))
    kinds = [e.kind for e in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) <= {"text"} and kinds.count("done") == 1
    assert all(e.text for e in events[:-1]) and events[-1].text == ""
    streamed = "".join(e.text for e in events if e.kind == "text")
    assert streamed == plain
    result = events[-1].result
    assert result.text == plain and result.usage.completion_tokens == 16
    assert result.stop_reason == "max_tokens"
    assert all(e.result is None for e in events[:-1])
    assert s.last_result is not None and s.last_result.text == plain  # set by the stream too


def test_breaking_out_of_a_stream_cancels_it(model):
    with uaii.Session(model) as s:
        seen = 0
        t0 = time.monotonic()
        for ev in s.generate(PROMPT, max_tokens=400, stream=True):
            if ev.kind == "text":
                seen += 1
                if seen == 3:
                    break
        # Leaving the loop dropped the iterator: the generation stopped and its thread was joined.
        r = s.last_result
        assert r is not None and r.stop_reason == "cancelled", r
        # The worker may run ahead of this loop by a few tokens (more on a loaded machine).
        assert 3 <= r.usage.completion_tokens < 400
        assert time.monotonic() - t0 < 60
        # The session is usable right away and continues from its cache.
        s.generate(PROMPT, max_tokens=2)
        assert s.last_result.stop_reason == "max_tokens" and s.last_result.usage.cached_tokens > 0


def test_close_and_with_cancel_a_stream(model):
    with uaii.Session(model) as s:
        stream = s.generate(PROMPT, max_tokens=400, stream=True)
        first = next(stream)
        assert first.kind == "text"
        stream.close()
        stream.close()  # idempotent
        assert s.last_result.stop_reason == "cancelled"
        with pytest.raises(StopIteration):
            next(stream)
        with s.generate(PROMPT, max_tokens=400, stream=True) as st:
            next(st)
        assert s.last_result.stop_reason == "cancelled"


def test_a_new_call_supersedes_an_open_stream(model):
    with uaii.Session(model) as s:
        stream = s.generate(PROMPT, max_tokens=400, stream=True)
        next(stream)
        text = s.generate("The capital of France is", max_tokens=4)  # cancels and joins the stream
        assert s.last_result.text == text and s.last_result.stop_reason == "max_tokens"
        rest = list(stream)  # what it had queued before it stopped, then the end
        assert rest and rest[-1].kind == "done" and rest[-1].result.stop_reason == "cancelled"
        s.close()  # closing with a (finished) stream around is fine
        with pytest.raises(StopIteration):
            next(stream)


def test_closing_the_session_stops_its_stream(model):
    s = uaii.Session(model)
    stream = s.generate(PROMPT, max_tokens=400, stream=True)
    next(stream)
    s.close()
    assert all(e.kind in ("text", "done") for e in stream)


def test_stream_errors_are_raised_from_the_loop(model):
    with uaii.Session(model) as s:
        stream = s.generate(PROMPT, max_tokens=-3, stream=True)
        with pytest.raises(uaii.InvalidArgumentError, match="max_tokens -3 is negative"):
            next(stream)
        with pytest.raises(StopIteration):
            next(stream)
        assert s.generate("Hi", max_tokens=1) is not None  # the session was released


def test_two_threads_two_sessions_one_model_same_seed_same_text(model):
    kw = dict(max_tokens=24, temperature=0.8, top_k=40, top_p=0.95, seed=777)
    with uaii.Session(model) as s:
        expected = s.generate(PROMPT, **kw)
    results, errors = {}, []

    def work(i):
        try:
            with uaii.Session(model, threads=1) as s:
                if i == 0:
                    results[i] = s.generate(PROMPT, **kw)
                else:
                    results[i] = "".join(e.text for e in s.generate(PROMPT, stream=True, **kw))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results[0] == results[1] == expected


def _progress_during(call):
    """Runs `call` on a thread; counts how often this thread gets to run meanwhile."""
    done = threading.Event()
    out = {}

    def run():
        out["value"] = call()
        done.set()

    t = threading.Thread(target=run)
    t0 = time.monotonic()
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        sum(range(200))  # pure Python work: needs the GIL
    elapsed = time.monotonic() - t0
    t.join()
    return ticks, elapsed, out["value"]


def test_gil_is_released_during_generate(model):
    with uaii.Session(model) as s:
        ticks, elapsed, text = _progress_during(lambda: s.generate(PROMPT, max_tokens=48))
    assert text
    # Holding the GIL for the whole call would allow ~0 ticks. Released, this thread runs
    # freely: thousands of ticks per second even on a loaded machine.
    assert elapsed > 0.2, f"generation too fast to measure ({elapsed:.3f}s)"
    assert ticks / elapsed > 1000, f"{ticks} ticks in {elapsed:.2f}s"


def test_gil_is_released_while_a_stream_waits(model):
    with uaii.Session(model) as s:
        ticks, elapsed, events = _progress_during(
            lambda: list(s.generate(PROMPT, max_tokens=48, stream=True)))
    assert events[-1].kind == "done"
    assert elapsed > 0.2 and ticks / elapsed > 1000, f"{ticks} ticks in {elapsed:.2f}s"


def test_a_session_refuses_a_second_thread(model):
    with uaii.Session(model) as s:
        started = threading.Event()
        out = {}

        def long_call():
            started.set()
            while "text" not in out:  # the main thread may hold the session for a moment
                try:
                    out["text"] = s.generate(PROMPT, max_tokens=200)
                except uaii.InvalidStateError:
                    time.sleep(0.01)

        t = threading.Thread(target=long_call)
        t.start()
        started.wait()
        time.sleep(0.2)
        refused = 0
        while t.is_alive():
            try:
                s.generate("Hi", max_tokens=1)
            except uaii.InvalidStateError as e:
                assert "one thread at a time" in str(e)
                refused += 1
            time.sleep(0.05)
        t.join()
        assert "text" in out
        assert refused > 0, "the second thread was never refused while the first one generated"


def test_many_streams_on_the_tiny_model(tiny):
    # Open-and-abandon streams in a loop: nothing leaks, deadlocks or crashes.
    with uaii.Session(tiny) as s:
        for i in range(30):
            stream = s.generate("abc", max_tokens=64, stream=True, min_p=0.0)
            if i % 3 == 0:
                next(stream)
            elif i % 3 == 1:
                list(stream)
            del stream
        assert s.generate("abc", max_tokens=4) is not None


def test_two_threads_draining_one_stream_both_finish(tiny):
    with uaii.Session(tiny) as s:
        stream = s.generate("abc", max_tokens=64, min_p=0.0, stream=True)
        got = [[], []]

        def drain(i):
            for ev in stream:
                got[i].append(ev.kind)

        threads = [threading.Thread(target=drain, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads), "a consumer hung after the stream ended"
        kinds = got[0] + got[1]
        assert kinds.count("done") == 1
