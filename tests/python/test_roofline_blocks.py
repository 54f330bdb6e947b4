"""benchmarks/roofline_blocks.py: blocks split by bandwidth mode, fractions of the roofline."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_blocks_split_by_mode(tmp_path):
    # 1 GB of weights per token: at 32 GB/s the roofline is 32 tokens/s.
    run = {
        "uaii": {"decode_tokens_per_s": 30.0,
                 "blocks": [[16, 1.0, 32.0, 32.0],    # 16 tok/s of 32: 50%, usual mode
                            [16, 0.625, 32.0, 32.0],  # 25.6 of 32: 80%, usual
                            [16, 0.5, 64.0, 64.0],    # 32 of 64: 50%, high
                            [16, 0.5, 32.0, 64.0]]},  # mixed probes: in neither
        "llama_cpp": {"decode_tokens_per_s": 10.0, "blocks": [[16, 2.0, 32.0, 32.0]]},
    }
    out = tmp_path / "out.json"
    out.write_text(json.dumps({"rows": [{"model": "m", "threads": 2, "weight_bytes_per_token": 1e9,
                                         "runs": [run]}]}))
    text = subprocess.run([sys.executable, str(REPO / "benchmarks" / "roofline_blocks.py"), str(out)],
                          check=True, capture_output=True, text=True).stdout
    uaii, llama = text.splitlines()
    assert "usual mode median 65% (n=2, 50-80)" in uaii
    assert "high mode median 50% (n=1, 50-50)" in uaii
    assert "decode per repeat [30.0]" in uaii
    assert "usual mode median 25% (n=1, 25-25)" in llama and "high mode -" in llama
