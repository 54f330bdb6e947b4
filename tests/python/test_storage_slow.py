"""slow: a random-weight 7B-shaped Q4_0 file (about 3.6 GiB, written to a temporary
directory by benchmarks/make_7b_q4_0.py) generates under --ram-gb 1 with peak RSS
under the budget plus the measured fixed overhead (docs/storage.md)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from test_storage import GiB, MiB, peak_rss_of

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_7b_shaped_q4_0_generates_under_1_gib(uaii_bin, tmp_path):
    model = tmp_path / "random-7b-q4_0.gguf"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_7b_q4_0.py"), str(model)], check=True)
    assert model.stat().st_size > 3 * GiB
    env = {"UAII_HOME": str(tmp_path / "home")}
    flags = ["--ram-gb", "1", "--max-context", "256"]
    p = subprocess.run([str(uaii_bin), "generate", "--model", str(model), "--dry-run", "--json", *flags],
                       capture_output=True, text=True, env={**os.environ, **env}, check=True)
    plan = json.loads(p.stdout)
    assert plan["streaming"] and plan["expected_peak_bytes"] <= GiB
    p = subprocess.run([str(uaii_bin), "generate", "--model", str(model), "-p", "hello world", "--max-tokens", "3",
                        "--json", *flags], capture_output=True, text=True, env={**os.environ, **env}, timeout=1800)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert len(doc["tokens"]) == 3
    assert doc["memory"]["bytes_read"] >= 3 * plan["streamed"]["bytes_per_token"]
    overhead = peak_rss_of(uaii_bin, "generate", "--model", model, "--dry-run", *flags, env=env)
    peak = doc["memory"]["peak_rss_bytes"]
    print(f"7B-shaped Q4_0 under 1 GiB: peak RSS {peak / MiB:.0f} MiB, fixed overhead {overhead / MiB:.0f} MiB")
    assert peak <= GiB + overhead + 16 * MiB
