#!/usr/bin/env python3
"""Golden for the gemma4-assistant's centroid-masked head (the f32-centroids row of
tests/fixtures/make_gemma4_assistant_models.py), from Hugging Face transformers'
Gemma4AssistantMaskedEmbedder (use_ordered_embeddings=True).

llama.cpp 0.3.36 cannot load real-shaped centroid tables, and the rest of the
assistant is llama.cpp's reference (tests/oracles/llamacpp_gemma4_assistant.py): this
oracle takes llama.cpp's f32 draft steps from tests/golden/llamacpp/assistant-gemma4-
f32.json — f32-centroids has f32's weights bit for bit — and replaces only the head:

  1. per step, the assistant's post-final-norm hidden row x (what the head reads) is
     recovered from llama.cpp's exact f32 h_nextn = nextn.post_projection . x by least
     squares (post_projection is [256, 128]: overdetermined, well conditioned; the
     residual is recorded);
  2. transformers' Gemma4AssistantMaskedEmbedder, built from a Gemma4AssistantConfig
     with the file's n_embd, n_vocab, centroid count and centroid_intermediate_top_k,
     loaded with the file's masked_embd_centroids.weight, masked_embd_ordering and its
     token_embd.weight as lm_head, runs on x (one row per call, as a draft step is);
  3. the top_k chosen clusters' margin over the next cluster is asserted to be far
     above float noise, so the selection cannot flip between implementations.

Writes tests/golden/transformers/assistant-gemma4-f32-centroids.json: reference
(transformers / torch versions), model_file / model_sha256, target_file, the llama.cpp
golden it continues (and its model_sha256), prompt_tokens, pos0, n_vocab, n_embd_out,
n_centroids, top_k, target_h_last_f32_b64, steps: [{step, token, pos, h_in_f32_b64,
x_residual, clusters, cluster_margin, logits_f32_b64, argmax, top2_gap}].

usage: transformers_gemma4_masked_head.py FIXTURE_DIR [OUT_DIR]
"""
import base64
import json
import os
import sys

import numpy as np
import torch
import transformers
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import llamacpp_common as C  # noqa: E402
import make_gemma4_assistant_models as A  # noqa: E402
from transformers.models.gemma4_assistant.configuration_gemma4_assistant import Gemma4AssistantConfig  # noqa: E402
from transformers.models.gemma4_assistant.modeling_gemma4_assistant import (  # noqa: E402
    Gemma4AssistantMaskedEmbedder)

NAME = "f32-centroids"
BASE_GOLDEN = os.path.join(REPO, "tests", "golden", "llamacpp", "assistant-gemma4-f32.json")


def tensors(path):
    """name -> numpy array in the outermost-first shape (GGUF dims reversed), and the
    file's centroid_intermediate_top_k."""
    r = gguf.GGUFReader(path)
    out = {t.name: np.array(t.data).reshape([int(d) for d in reversed(t.shape)]) for t in r.tensors}
    top_k = r.fields[f"{A.ARCH}.centroid_intermediate_top_k"]
    return out, int(top_k.parts[top_k.data[0]][0])


def f32(b64):
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    fixtures = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) == 3 else os.path.join(REPO, "tests", "golden", "transformers")
    model_rel = f"{A.ARCH}/{NAME}.gguf"
    path = os.path.join(fixtures, model_rel)
    base = json.load(open(BASE_GOLDEN))
    w, top_k = tensors(path)
    # f32-centroids is f32 with the tables added: the llama.cpp steps apply unchanged.
    r_base = gguf.GGUFReader(os.path.join(fixtures, base["model_file"]))
    assert C.sha256(os.path.join(fixtures, base["model_file"])) == base["model_sha256"], "f32 fixture changed"
    for t in r_base.tensors:
        if t.name.startswith("masked_embd_"):  # f32's 1-element placeholders
            continue
        assert t.name in w and np.array_equal(np.array(t.data).reshape(w[t.name].shape), w[t.name]), t.name
    head = w["token_embd.weight"].astype(np.float32)            # [V, E]
    post = w["nextn.post_projection.weight"].astype(np.float32)  # [W, E]
    centroids = w["masked_embd_centroids.weight"].astype(np.float32)  # [C, E]
    ordering = w["masked_embd_ordering"].astype(np.int64)        # [V]
    n_vocab, n_embd = head.shape
    n_centroids = centroids.shape[0]
    assert n_vocab == base["n_vocab"]

    cfg = Gemma4AssistantConfig(use_ordered_embeddings=True, num_centroids=n_centroids,
                                centroid_intermediate_top_k=top_k,
                                text_config={"hidden_size": n_embd, "vocab_size": n_vocab,
                                             "hidden_size_per_layer_input": 0,
                                             "vocab_size_per_layer_input": 0})
    embedder = Gemma4AssistantMaskedEmbedder(cfg).eval()
    with torch.no_grad():
        embedder.centroids.weight.copy_(torch.from_numpy(centroids))
        embedder.token_ordering.copy_(torch.from_numpy(ordering))
    lm_head = torch.from_numpy(head)

    steps = []
    h_in = f32(base["target_h_last_f32_b64"])
    for st in base["steps"]:
        h_next = f32(st["h_nextn_f32_b64"]).astype(np.float64)
        x, *_ = np.linalg.lstsq(post.astype(np.float64), h_next, rcond=None)
        residual = float(np.max(np.abs(post.astype(np.float64) @ x - h_next)))
        assert residual < 1e-4 * float(np.max(np.abs(h_next))), residual
        x = x.astype(np.float32)
        scores = centroids.astype(np.float64) @ x.astype(np.float64)
        ranked = np.argsort(-scores, kind="stable")
        margin = float(scores[ranked[top_k - 1]] - scores[ranked[top_k]])
        assert margin > 1e-3 * float(np.max(np.abs(scores))), f"step {st['step']}: cluster margin {margin}"
        with torch.no_grad():
            logits = embedder(torch.from_numpy(x).view(1, 1, n_embd), lm_head).view(-1).numpy()
        steps.append({"step": st["step"], "token": st["token"], "pos": st["pos"],
                      "h_in_f32_b64": C.f32_b64(h_in), "x_residual": residual,
                      "clusters": sorted(int(c) for c in ranked[:top_k]), "cluster_margin": margin,
                      "logits_f32_b64": C.f32_b64(logits), "argmax": int(np.argmax(logits)),
                      "top2_gap": C.top2_gap(logits)})
        h_in = h_next.astype(np.float32)

    golden = {
        "reference": f"transformers {transformers.__version__} (Gemma4AssistantMaskedEmbedder), "
                     f"torch {torch.__version__}; hidden rows from {base['reference']}",
        "name": NAME, "arch": A.ARCH, "model_file": model_rel, "model_sha256": C.sha256(path),
        "target_file": base["target_file"], "continues": os.path.relpath(BASE_GOLDEN, REPO),
        "continues_model_sha256": base["model_sha256"], "prompt_tokens": base["prompt_tokens"],
        "pos0": base["pos0"], "n_vocab": n_vocab, "n_embd_out": base["n_embd_out"],
        "n_centroids": n_centroids, "top_k": top_k,
        "target_h_last_f32_b64": base["target_h_last_f32_b64"], "steps": steps,
    }
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, f"assistant-gemma4-{NAME}.json")
    with open(out, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: {len(steps)} steps, top_k {top_k} of {n_centroids}, "
          f"min margin {min(s['cluster_margin'] for s in steps):.4f}")


if __name__ == "__main__":
    main()
