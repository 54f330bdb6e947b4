"""Running `uaii serve` for the tests: a server process on a free 127.0.0.1 port, waited
for until /health answers 200, its /metrics parsed, stopped with SIGTERM (it must exit 0)."""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServeProcess:
    def __init__(self, uaii_bin, model, *args, env=None, log_path=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.log_path = log_path
        self.log = open(log_path, "w+") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen([str(uaii_bin), "serve", "--model", str(model), "--port", str(self.port),
                                      *map(str, args)], stdout=subprocess.DEVNULL, stderr=self.log, env=full_env)

    def wait_listening(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            assert self.proc.poll() is None, f"uaii serve exited {self.proc.returncode}: {self.stderr()}"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.02)
        raise AssertionError("uaii serve did not listen")

    def wait_ready(self, timeout=120):
        self.wait_listening()
        deadline = time.time() + timeout
        while time.time() < deadline:
            status, _ = self.request("GET", "/health")
            if status == 200:
                return self
            time.sleep(0.05)
        raise AssertionError(f"/health never answered 200: {self.stderr()}")

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, body bytes) of one request; body may be bytes or a JSON-able object."""
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def metrics(self, headers=None) -> dict:
        """{name or name{labels}: value} of /metrics."""
        status, text = self.request("GET", "/metrics", headers=headers)
        assert status == 200
        out = {}
        for line in text.decode().splitlines():
            if line and not line.startswith("#"):
                m = re.match(r"^(\S+?(\{.*\})?) (\S+)$", line)
                out[m.group(1)] = float(m.group(3))
        return out

    def stderr(self) -> str:
        if not self.log_path:
            return ""
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        if self.log_path:
            self.log.close()
        return rc
