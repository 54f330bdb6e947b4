"""uaii.serve_ray: the OpenAI routes on two Ray Serve replicas of the default model, driven by
the official `openai` client over 127.0.0.1. Answers equal what uaii.Model gives in this
process for the same greedy request; both replicas answer; a conversation with an
x-session-id stays on one replica and reuses its KV cache; killing a replica while a batch is
in flight loses no request, and Serve replaces the replica.

Needs Ray Serve (requirements/ray.txt, the SDK's `ray` extra); skips without it."""
import concurrent.futures
import json
import socket
import time

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

ray = pytest.importorskip("ray", reason="Ray Serve is optional: pip install -r requirements/ray.txt")
serve = pytest.importorskip("ray.serve", reason="Ray Serve is optional: pip install -r requirements/ray.txt")
openai = pytest.importorskip("openai", reason="requirements/test.txt installs openai")
httpx = pytest.importorskip("httpx", reason="the openai client brings httpx")
from uaii import serve_ray  # noqa: E402

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Name a colour."}]
GREEDY = {"max_tokens": 12, "temperature": 0}
APP = "uaii-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _running_replicas() -> int:
    app = serve.status().applications.get(APP)
    if app is None or serve_ray.DEPLOYMENT_NAME not in app.deployments:
        return 0
    return app.deployments[serve_ray.DEPLOYMENT_NAME].replica_states.get("RUNNING", 0)


@pytest.fixture(scope="module")
def base_url(default_model):
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        port = _free_port()
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(serve_ray.build_app(default_model, num_replicas=2), name=APP, route_prefix="/")
        assert _running_replicas() == 2
        yield f"http://127.0.0.1:{port}"
    finally:
        serve.shutdown()
        ray.shutdown()


@pytest.fixture(scope="module")
def client(base_url):
    # Retries (on 5xx and dropped connections) are the client's own, as any OpenAI user has them.
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=4, timeout=120)


@pytest.fixture(scope="module")
def reference(default_model):
    with uaii.Model(default_model) as m:
        yield m


def _replica(raw) -> str:
    name = raw.headers.get(serve_ray.REPLICA_HEADER)
    assert name and name.startswith("SERVE_REPLICA::"), raw.headers
    return name


def test_models_and_health(client, base_url, reference):
    want = reference.create_completion("x", max_tokens=1)["model"]
    models = client.models.list()
    assert [m.id for m in models.data] == [want] and models.data[0].owned_by == "uaii"
    r = httpx.get(f"{base_url}/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    assert r.headers[serve_ray.REPLICA_HEADER] == r.json()["replica"]


def test_chat_completion_equals_the_sdk(client, reference):
    raw = client.chat.completions.with_raw_response.create(model="any", messages=MESSAGES, **GREEDY)
    _replica(raw)
    got = raw.parse()
    want = reference.create_chat_completion(MESSAGES, **GREEDY)
    assert got.object == "chat.completion" and got.id.startswith("chatcmpl-")
    assert got.choices[0].message.content == want["choices"][0]["message"]["content"]
    assert got.choices[0].message.content  # the model said something
    assert got.choices[0].finish_reason == want["choices"][0]["finish_reason"]
    assert got.usage.prompt_tokens == want["usage"]["prompt_tokens"]
    assert got.usage.completion_tokens == want["usage"]["completion_tokens"]


def test_chat_stream_adds_up_to_the_sdk_answer(client, base_url, reference):
    want = reference.create_chat_completion(MESSAGES, **GREEDY)
    chunks = list(client.chat.completions.create(model="any", messages=MESSAGES, stream=True, **GREEDY))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == want["choices"][0]["message"]["content"]
    assert chunks[-1].choices[0].finish_reason == want["choices"][0]["finish_reason"]
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    assert len({c.id for c in chunks}) == 1
    # On the wire: server-sent events, each `data: {json}`, ending with `data: [DONE]`.
    with httpx.stream("POST", f"{base_url}/v1/chat/completions", timeout=120,
                      json={"messages": MESSAGES, "stream": True, **GREEDY}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        body = r.read().decode()
    events = body.split("\n\n")
    assert events[-1] == "" and events[-2] == "data: [DONE]"
    assert all(e.startswith("data: {") for e in events[:-2])
    text = "".join(json.loads(e[6:])["choices"][0]["delta"].get("content") or "" for e in events[:-2])
    assert text == want["choices"][0]["message"]["content"]


def test_completion_equals_the_sdk(client, reference):
    prompt = "The capital of France is"
    want = reference.create_completion(prompt, max_tokens=6, temperature=0)
    got = client.completions.create(model="any", prompt=prompt, max_tokens=6, temperature=0)
    assert got.object == "text_completion" and got.choices[0].text == want["choices"][0]["text"]
    assert got.choices[0].finish_reason == "length" and got.usage.completion_tokens == 6
    chunks = list(client.completions.create(model="any", prompt=prompt, max_tokens=6, temperature=0,
                                            stream=True))
    assert "".join(c.choices[0].text for c in chunks) == want["choices"][0]["text"]


def test_errors_are_openai_shaped(client, base_url):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="any", messages=[])
    assert e.value.status_code == 400 and e.value.body["param"] == "messages"
    assert e.value.body["type"] == "invalid_request_error"
    # The SDK's own refusal (uaii.InvalidArgumentError) comes back as a 400 too.
    with pytest.raises(openai.BadRequestError, match="json_schema"):
        client.chat.completions.create(model="any", messages=MESSAGES,
                                       response_format={"type": "json_schema"}, max_tokens=2)
    with pytest.raises(openai.BadRequestError, match="logit_bias"):
        client.chat.completions.create(model="any", messages=MESSAGES, logit_bias={"1": 5})
    r = httpx.post(f"{base_url}/v1/completions", content=b"{not json", timeout=30)
    assert r.status_code == 400
    assert set(r.json()["error"]) == {"message", "type", "param", "code"}
    assert r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.post(f"{base_url}/v1/completions", json={"prompt": "x", "max_tokens": "many"}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["param"] == "max_tokens"
    r = httpx.get(f"{base_url}/v1/nothing-here", timeout=30)
    assert r.status_code == 404 and r.json()["error"]["type"] == "invalid_request_error"
    assert serve_ray.REPLICA_HEADER in r.headers


def _ask(client, messages=MESSAGES, **kw):
    raw = client.chat.completions.with_raw_response.create(model="any", messages=messages, **{**GREEDY, **kw})
    return _replica(raw), raw.parse()


def test_both_replicas_answer(client, reference):
    want = reference.create_chat_completion(MESSAGES, **GREEDY)["choices"][0]["message"]["content"]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: _ask(client), range(8)))
    assert len({name for name, _ in answers}) == 2, [name for name, _ in answers]
    assert all(c.choices[0].message.content == want for _, c in answers)


def test_a_session_stays_on_its_replica_and_reuses_its_cache(client):
    header = {"x-session-id": "conversation-1"}
    messages = list(MESSAGES)
    replicas = []
    for turn in range(3):
        name, c = _ask(client, messages, extra_headers=header)
        replicas.append(name)
        if turn > 0:  # the replica still holds the conversation so far: only the new turn is prefilled
            assert c.usage.prompt_tokens_details.cached_tokens > 0, c.usage
        messages += [{"role": "assistant", "content": c.choices[0].message.content},
                     {"role": "user", "content": "And another?"}]
    assert len(set(replicas)) == 1, replicas


def test_a_replica_killed_mid_batch_loses_no_request(client, reference):
    want = reference.create_chat_completion(MESSAGES, max_tokens=24, temperature=0)["choices"][0]["message"]["content"]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(_ask, client, max_tokens=24) for _ in range(12)]
        first = next(concurrent.futures.as_completed(futures))
        victim = first.result()[0]
        in_flight = sum(not f.done() for f in futures)
        ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
        answers = [f.result() for f in futures]
    assert in_flight > 0
    assert all(c.choices[0].message.content == want for _, c in answers)
    assert len({name for name, _ in answers}) >= 2  # the survivor took over
    # Serve replaces the dead replica; the next request answers without retrying.
    deadline = time.monotonic() + 90
    while _running_replicas() < 2 or _alive(victim):
        assert time.monotonic() < deadline, serve.status()
        time.sleep(1)
    name, c = _ask(client)
    assert name != victim
    assert c.choices[0].message.content == reference.create_chat_completion(MESSAGES, **GREEDY)["choices"][0]["message"]["content"]


def _alive(actor_name: str) -> bool:
    try:
        ray.get_actor(actor_name, namespace="serve")
        return True
    except ValueError:  # a dead actor's name is released
        return False
