#!/usr/bin/env python3
"""config.json as transformers 5 saves it, for one tiny model of every Hugging Face
family, and transformers' logits with it.

transformers 5 rewrites the RoPE settings of a config into `rope_parameters` (flat for
most families, nested per layer type -- full_attention / sliding_attention -- for
Gemma 3, with `partial_rotary_factor` inside it for Phi-3) and writes `layer_types`.
For each base directory of tests/fixtures/make_hf_tiny_models.py:
AutoConfig.from_pretrained(base) (transformers reads the transformers-4 keys), the
tweaks below (non-default values, so that a reader that skips the new form computes
something else), save_pretrained; the config.json it writes is committed as
tests/golden/transformers/v5/<base>.config.json, and the fixture script writes the
directory v5_<base> (the base's weights and tokenizer with that config). The logits of
transformers on v5_<base> (CPU float32, eager attention, the token sequence of
transformers_tiny_models.py) go to tests/golden/transformers/v5_<base>.json.

usage: transformers_v5_configs.py FIXTURE_DIR
   (run tests/fixtures/make_hf_tiny_models.py FIXTURE_DIR first; it then needs a
    second run to write the v5_* directories from the new configs)
"""
import hashlib
import json
import pathlib
import shutil
import sys
import tempfile

import torch
import transformers

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "oracles"))
import transformers_tiny_models as tiny  # noqa: E402


def gemma3_local_base(cfg):
    # The sliding layers' RoPE base (transformers 4's rope_local_base_freq) away from
    # its default 10000, and the global base away from 10000.
    cfg.rope_parameters["sliding_attention"]["rope_theta"] = 1000.0
    cfg.rope_parameters["full_attention"]["rope_theta"] = 50000.0


def flat_theta(value):
    def tweak(cfg):
        cfg.rope_parameters["rope_theta"] = value
    return tweak


def yarn_untruncated(cfg):
    # transformers 5's yarn "truncate": false keeps the correction dims fractional.
    cfg.rope_parameters["truncate"] = False


BASES = {
    "llama_f32": flat_theta(20000.0),
    "llama3_rope_f32": None,
    "mistral_f32": flat_theta(30000.0),
    "mixtral_f32": flat_theta(40000.0),
    "qwen2_yarn_f32": yarn_untruncated,
    "qwen3_f32_sharded": flat_theta(25000.0),
    "qwen2_moe_f32": flat_theta(35000.0),
    "gemma_f32": flat_theta(15000.0),
    "gemma2_f32": flat_theta(45000.0),
    "gemma3_f32": gemma3_local_base,
    "phi3_f32": None,
    "gpt2_f32": None,
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1]) / "hf_tiny"
    cfg_dir = REPO / "tests" / "golden" / "transformers" / "v5"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    ids = tiny.token_ids()
    for base, tweak in BASES.items():
        cfg = transformers.AutoConfig.from_pretrained(str(root / base))
        if tweak:
            tweak(cfg)
        with tempfile.TemporaryDirectory() as tmp:
            cfg.save_pretrained(tmp)
            text = (pathlib.Path(tmp) / "config.json").read_text()
        (cfg_dir / f"{base}.config.json").write_text(text)
        d = pathlib.Path(tempfile.mkdtemp())
        for f in (root / base).iterdir():
            if f.name != "config.json":
                shutil.copy(f, d / f.name)
        (d / "config.json").write_text(text)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(d), dtype=torch.float32,
                                                                  attn_implementation="eager")
        model.eval()
        with torch.no_grad():
            logits = model(torch.tensor([ids]), use_cache=False).logits[0].float().numpy()
        name = f"v5_{base}"
        golden = {
            "reference": f"transformers {transformers.__version__}, torch {torch.__version__}, CPU float32, eager attention",
            "script": "tests/oracles/transformers_v5_configs.py",
            "model": name,
            "model_type": model.config.model_type,
            "config_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "weight_files": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.safetensors"))},
            "tokens": ids,
            "n_vocab": int(logits.shape[1]),
            "logits": [[float(f"{x:.6g}") for x in row] for row in logits],
        }
        out = REPO / "tests" / "golden" / "transformers" / f"{name}.json"
        out.write_text(json.dumps(golden, separators=(",", ":")) + "\n")
        shutil.rmtree(d)
        print(name, logits.shape, "argmax[0:8]", logits.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
