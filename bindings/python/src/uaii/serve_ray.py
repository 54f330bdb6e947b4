"""uaii's OpenAI-compatible routes as a Ray Serve deployment: N replicas, each a process with
its own uaii.Model, behind Serve's HTTP proxy, on one machine or a Ray cluster.

    POST /v1/chat/completions   Model.create_chat_completion (stream: server-sent events)
    POST /v1/completions        Model.create_completion
    GET  /v1/models             the one model served
    GET  /health                200 while the replica's model is open

Every response carries `x-uaii-replica`, the Ray actor name of the replica that answered.
A client that sends `x-session-id` keeps a conversation on one replica, where its KV cache is
(serve_ray_router.SessionAffinityRouter).

    python -m uaii.serve_ray --model PATH --replicas 2 --port 8000

or, from Python, `serve.run(build_app(PATH, num_replicas=2))`. Needs the `ray` extra
(pip install 'uaii[ray]'); `import uaii` alone never imports Ray. See docs/serving.md.
"""
# No `from __future__ import annotations`: FastAPI reads the handlers' annotations (Request)
# at run time, and through Serve's ingress wrapper string annotations do not resolve.
import argparse
import os
import signal
import threading
import time
from typing import Any, Callable, Iterator, Optional

try:
    import ray
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, StreamingResponse
    from ray import serve
    from ray.serve.config import RequestRouterConfig
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(f"uaii.serve_ray needs Ray Serve ({e}): pip install 'uaii[ray]' "
                      "(or pip install -r requirements/ray.txt)") from e

from . import _openai_http as http
from .openai_api import Model, _completions
from ._uaii import Session
from .serve_ray_router import SessionAffinityRouter

REPLICA_HEADER = "x-uaii-replica"
DEPLOYMENT_NAME = "UaiiOpenAI"

api = FastAPI(title="uaii OpenAI-compatible API (Ray Serve)")


def _replica_name() -> str:
    """The Ray actor name of this replica (ray.get_actor(name, namespace="serve") finds it)."""
    try:
        return serve.get_replica_context().replica_id.to_full_id_str()
    except Exception:  # outside a replica (not expected while serving)
        return f"pid-{os.getpid()}"


class _ReplicaHeader:
    """ASGI middleware adding x-uaii-replica to every response, streamed ones and errors included."""

    def __init__(self, app) -> None:
        self.app = app
        self.value: Optional[bytes] = None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.value is None:
            self.value = _replica_name().encode()

        async def send_with_header(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (REPLICA_HEADER.encode(), self.value)]}
            await send(message)

        await self.app(scope, receive, send_with_header)


api.add_middleware(_ReplicaHeader)


def _error(exc: BaseException) -> JSONResponse:
    status, body = http.error_response(exc)
    return JSONResponse(body, status_code=status)


@api.exception_handler(StarletteHTTPException)
async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    # Unknown routes and methods answer in the OpenAI error shape too.
    message = f"{exc.detail} ({request.method} {request.url.path})"
    return JSONResponse(http.error_body(message), status_code=exc.status_code)


def _take(chunks: Iterator[dict], n: int) -> list:
    out = []
    for chunk in chunks:
        out.append(chunk)
        if len(out) == n:
            break
    return out


async def _events(head: list, chunks: Iterator[dict]):
    """The server-sent events of a stream whose first chunks are `head`; ends with [DONE]."""
    try:
        for chunk in head:
            yield http.sse_event(chunk)
        while True:
            chunk = await run_in_threadpool(next, chunks, None)
            if chunk is None:
                break
            yield http.sse_event(chunk)
        yield http.SSE_DONE
    except Exception as e:  # after the 200 went out: the error as the last event, as OpenAI does
        yield http.sse_event(http.error_response(e)[1])
    finally:
        # A client that went away: closing the iterator cancels the generation and releases
        # the model for the next request.
        chunks.close()


@serve.deployment(name=DEPLOYMENT_NAME)
@serve.ingress(api)
class UaiiOpenAI:
    """One replica: a uaii.Model and the OpenAI routes over it. The model's OpenAI calls run one
    at a time (openai_api's lock), so a replica computes one request at a time; Serve queues the
    rest in front of the replicas (max_ongoing_requests) and spreads them."""

    def __init__(self, model_path: Optional[str], threads: Optional[int] = None) -> None:
        started = time.monotonic()
        self.model = Model(model_path)
        if threads:
            # The OpenAI calls run on the session the model keeps for them; making it here sets
            # its thread count (by default a session takes every core, and replicas share them).
            _completions(self.model).session = Session(self.model, threads=threads)
        self.model_id = _completions(self.model).model_name()
        self.created = int(time.time())
        self.load_s = time.monotonic() - started

    def check_health(self) -> None:
        # Serve calls this periodically; raising makes it replace the replica.
        if self.model.closed:
            raise RuntimeError("the replica's model is closed")

    @api.get("/health")
    async def health(self) -> dict:
        return {"status": "ok", "model": self.model_id, "replica": _replica_name(),
                "load_seconds": round(self.load_s, 3)}

    @api.get("/v1/models")
    async def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.model_id, "object": "model",
                                            "created": self.created, "owned_by": "uaii"}]}

    @api.post("/v1/chat/completions")
    async def chat_completions(self, request: Request):
        return await self._answer(request, http.chat_arguments, self.model.create_chat_completion)

    @api.post("/v1/completions")
    async def completions(self, request: Request):
        return await self._answer(request, http.completion_arguments, self.model.create_completion)

    async def _answer(self, request: Request, parse: Callable, create: Callable):
        try:
            first, kw = parse(http.parse_body(await request.body()))
            # The engine calls block: they run on Starlette's thread pool, off the event loop.
            result = await run_in_threadpool(lambda: create(first, **kw))
            if not kw["stream"]:
                return JSONResponse(result)
            # The first two chunks (the role, then the first token or the end) are computed before
            # the 200 goes out, so a request the engine refuses still gets a 400.
            head = await run_in_threadpool(_take, result, 2)
        except Exception as e:
            return _error(e)
        return StreamingResponse(_events(head, result), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})


def build_app(model_path: Optional[str] = None, num_replicas: int = 2, *, num_cpus_per_replica: float = 1,
              threads: Optional[int] = None, max_ongoing_requests: int = 2, session_affinity: bool = True,
              autoscaling_config: Optional[dict] = None, ray_actor_options: Optional[dict] = None) -> Any:
    """The Serve application (pass it to serve.run): `num_replicas` replicas of `model_path`
    (None: $UAII_MODEL, then the default model, resolved on each replica's node; a path must exist
    on every node). Each replica reserves `num_cpus_per_replica` Ray CPUs and runs its engine on
    `threads` threads (default: that reservation, at least 1). `max_ongoing_requests` bounds what a
    replica holds (one computes, the rest wait there); more waits in front, where the router can
    still send it to the first replica free. `autoscaling_config` (Serve's) replaces num_replicas.
    With `session_affinity`, requests carrying `x-session-id` stay on their session's replica."""
    if model_path is not None:
        model_path = os.path.abspath(os.path.expanduser(str(model_path)))  # replicas have their own cwd
    if threads is None:
        threads = max(1, int(num_cpus_per_replica))
    options: dict[str, Any] = {"max_ongoing_requests": max_ongoing_requests,
                               "ray_actor_options": {"num_cpus": num_cpus_per_replica, **(ray_actor_options or {})}}
    if autoscaling_config is not None:
        options["autoscaling_config"] = autoscaling_config
    else:
        options["num_replicas"] = num_replicas
    if session_affinity:
        options["request_router_config"] = RequestRouterConfig(request_router_class=SessionAffinityRouter)
    return UaiiOpenAI.options(**options).bind(model_path, threads)


def app_builder(args: dict) -> Any:
    """build_app from string arguments, for Serve's config files and CLI, where a KubeRay
    RayService's serveConfigV2 also points: import_path `uaii.serve_ray:app_builder`, args
    model, replicas, cpus_per_replica, threads, max_ongoing_requests, session_affinity; e.g.
    `serve run uaii.serve_ray:app_builder model=/models/x.gguf replicas=4`."""
    known = {"model", "replicas", "cpus_per_replica", "threads", "max_ongoing_requests", "session_affinity"}
    unknown = set(args) - known
    if unknown:
        raise ValueError(f"uaii.serve_ray:app_builder: unknown arguments {sorted(unknown)} (known: {sorted(known)})")
    threads = args.get("threads")
    return build_app(args.get("model"), int(args.get("replicas", 2)),
                     num_cpus_per_replica=float(args.get("cpus_per_replica", 1)),
                     threads=int(threads) if threads else None,
                     max_ongoing_requests=int(args.get("max_ongoing_requests", 2)),
                     session_affinity=str(args.get("session_affinity", True)).lower() not in ("0", "false", "no"))


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uaii.serve_ray",
                                description="Serve uaii's OpenAI-compatible API on Ray Serve replicas.")
    p.add_argument("--model", help="GGUF file (default: $UAII_MODEL, then the default model)")
    p.add_argument("--replicas", type=int, default=2, help="number of replicas (default 2)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--cpus-per-replica", type=float, default=1, help="Ray CPUs each replica reserves (default 1)")
    p.add_argument("--threads", type=int, help="engine threads per replica (default: --cpus-per-replica)")
    p.add_argument("--max-ongoing-requests", type=int, default=2, help="requests a replica holds (default 2)")
    p.add_argument("--no-session-affinity", action="store_true", help="ignore x-session-id when routing")
    p.add_argument("--address", help="an existing Ray cluster (e.g. auto, ray://head:10001); "
                                     "default: start a local one")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all)")
    args = p.parse_args(argv)

    started = time.monotonic()
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(build_app(args.model, args.replicas, num_cpus_per_replica=args.cpus_per_replica,
                        threads=args.threads, max_ongoing_requests=args.max_ongoing_requests,
                        session_affinity=not args.no_session_affinity),
              name="uaii", route_prefix="/")
    print(f"uaii: serving http://{args.host}:{args.port}/v1 on {args.replicas} Ray Serve replicas "
          f"(ready in {time.monotonic() - started:.1f} s); Ctrl-C stops", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    serve.shutdown()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
