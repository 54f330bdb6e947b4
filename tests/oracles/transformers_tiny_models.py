#!/usr/bin/env python3
"""Goldens for HF-directory logits parity: Hugging Face transformers' CPU float32
logits on the tiny random directories of tests/fixtures/make_hf_tiny_models.py.

For each directory: AutoModelForCausalLM.from_pretrained(dir, dtype=float32,
attn_implementation="eager") (BF16 weights are widened exactly), one forward pass
over a fixed seeded sequence of N_TOK token ids at positions 0..N_TOK-1, and every
logit of every row is written (the vocabulary is tiny) to
tests/golden/transformers/<name>.json with the versions of transformers and torch,
and the SHA-256 of each weight file the logits came from.

usage: transformers_tiny_models.py FIXTURE_DIR [NAME ...]
   (run tests/fixtures/make_hf_tiny_models.py FIXTURE_DIR first)
"""
import hashlib
import json
import pathlib
import sys

import numpy as np
import torch
import transformers

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
import make_hf_tiny_models as fx  # noqa: E402

N_TOK = 40
SEED = 1234


def token_ids():
    rng = np.random.default_rng(SEED)
    return [int(x) for x in rng.integers(0, fx.N_TOK_BYTES + len(fx.SPECIALS), N_TOK)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1]) / "hf_tiny"
    names = sys.argv[2:] or list(fx.MODELS)
    out_dir = REPO / "tests" / "golden" / "transformers"
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    ids = token_ids()
    for name in names:
        d = root / name
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(d), dtype=torch.float32, attn_implementation="eager")
        model.eval()
        with torch.no_grad():
            logits = model(torch.tensor([ids]), use_cache=False).logits[0].float().numpy()
        files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.safetensors"))}
        golden = {
            "reference": f"transformers {transformers.__version__}, torch {torch.__version__}, CPU float32, eager attention",
            "script": "tests/oracles/transformers_tiny_models.py",
            "model": name,
            "model_type": model.config.model_type,
            "weight_files": files,
            "tokens": ids,
            "n_vocab": int(logits.shape[1]),
            "logits": [[float(f"{x:.6g}") for x in row] for row in logits],
        }
        (out_dir / f"{name}.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
        print(name, logits.shape, "std", float(logits.std()), "argmax[0:8]", logits.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
