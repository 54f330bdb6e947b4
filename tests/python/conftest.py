"""Shared pytest fixtures: where the build, the fixtures, the default model and ../shared are."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("UAII_BUILD_DIR", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
FIXTURES = BUILD / "fixtures"
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def uaii_bin() -> pathlib.Path:
    exe = BUILD / "uaii"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run scripts/setup.sh first")
    return exe


@pytest.fixture(scope="session")
def default_model() -> pathlib.Path:
    home = pathlib.Path(os.environ.get("UAII_HOME") or pathlib.Path.home() / ".cache" / "uaii")
    path = home / "models" / "gemma-3-270m-q4_k_m.gguf"
    if not path.exists():
        pytest.fail(f"default model missing at {path}: run scripts/setup.sh")
    return path


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    return FIXTURES


def load_schema(name: str) -> dict:
    return json.loads((REPO / "docs" / "json" / name).read_text())


def run_uaii(exe, *args, env=None, check=True, timeout=600):
    """Runs the CLI, returns CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                       env=full_env, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"uaii {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
    return p


def run_uaii_with_tty_stderr(exe, *args, env=None, timeout=300):
    """Runs the CLI with stderr on a pseudo-terminal (where progress bars draw); asserts it
    exits 0 and returns (stdout, what the terminal showed)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([str(exe), *map(str, args)], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = p.stdout.read().decode()
    assert p.wait(timeout=timeout) == 0
    return out, b"".join(chunks).decode(errors="replace")
