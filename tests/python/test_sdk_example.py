"""examples/python/stream.py streams from the default model through the installed SDK."""
import os
import subprocess
import sys

from conftest import REPO

EXAMPLE = REPO / "examples" / "python" / "stream.py"


def run(*args):
    env = {k: v for k, v in os.environ.items() if k != "UAII_MODEL"}
    return subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd="/")


def test_stream_example_streams_from_the_default_model(default_model):
    p = run("The capital of France is", "--max-tokens", "8")
    assert p.returncode == 0, p.stderr
    assert "capital" in p.stdout or "France" in p.stdout, p.stdout  # the greedy reply mentions them
    assert "8 generated" in p.stderr and "stop: max_tokens" in p.stderr, p.stderr


def test_stream_example_reports_a_missing_model(tmp_path):
    p = run("Hi", "--model", str(tmp_path / "missing.gguf"))
    assert p.returncode == 1
    assert "error (not_found):" in p.stderr and "missing.gguf" in p.stderr, p.stderr
