#!/usr/bin/env python3
"""Goldens for grammar-constrained greedy decoding on the default model, from llama.cpp.

usage: llamacpp_grammar.py MODEL.gguf [OUT]     (run with llama-cpp-python; OUT default
       tests/golden/llamacpp/grammar_greedy.json)
For each case (a GBNF file of tests/data/grammars/, or a JSON Schema there turned into
GBNF by llama.cpp's own converter, llama_cpp.llama_grammar.json_schema_to_gbnf), a chat
prompt in Gemma's turn format: llama.cpp's grammar sampler (llama_sampler_init_grammar)
masks each logit row, the argmax of what it allows is the next token, and
llama_sampler_accept follows it, until end-of-generation or N_GEN tokens. Recorded per
step: the token and the gap between the two best allowed logits (a near tie may go
either way under another implementation's rounding). uaii's test decodes the same way
with its own grammar engine (and its own converter for the schemas).
"""
import ctypes
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import llamacpp_common as C  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GRAMMARS = os.path.join(HERE, "..", "data", "grammars")
N_GEN = 48
CASES = [
    ("json.gbnf", "Describe a cat as a JSON object with its name, age and colour."),
    ("list.gbnf", "List some fruits."),
    ("answer.gbnf", "Is the sky blue?"),
    ("arithmetic.gbnf", "Write a sum of three numbers and its result."),
    ("cjk.gbnf", "用中文介绍一下北京。"),
    ("person.schema.json", "Invent a person and describe them as JSON."),
    ("event.schema.json", "Describe a birthday party as JSON."),
]


def gemma_prompt(user):
    return f"<start_of_turn>user\n{user}<end_of_turn>\n<start_of_turn>model\n"


def main():
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    model = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "golden", "llamacpp", "grammar_greedy.json")
    llm = C.load(model, n_ctx=1024)
    vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
    n_vocab = llm.n_vocab()
    dtype = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
    assert dtype.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)
    cases = []
    for name, user in CASES:
        path = os.path.join(GRAMMARS, name)
        text = open(path).read()
        gbnf = json_schema_to_gbnf(text) if name.endswith(".schema.json") else text
        smpl = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
        assert smpl, f"llama.cpp refused the grammar of {name}"
        prompt = llm.tokenize(gemma_prompt(user).encode(), add_bos=True, special=True)
        llm.reset()
        llm.eval(prompt)
        tokens, gaps = [], []
        for _ in range(N_GEN):
            row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            cand = np.zeros(n_vocab, dtype=dtype)
            cand["id"] = np.arange(n_vocab)
            cand["logit"] = row
            arr = llama_cpp.llama_token_data_array(
                data=ctypes.cast(cand.ctypes.data, ctypes.POINTER(llama_cpp.llama_token_data)),
                size=n_vocab, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(smpl, ctypes.byref(arr))
            allowed = cand["logit"]
            order = np.argsort(-allowed, kind="stable")
            t = int(order[0])
            second = allowed[order[1]]
            gaps.append(round(float(allowed[t] - second), 5) if np.isfinite(second) else 1e9)
            tokens.append(t)
            llama_cpp.llama_sampler_accept(smpl, t)
            if llama_cpp.llama_vocab_is_eog(vocab, t):
                break
            llm.eval([t])
        llama_cpp.llama_sampler_free(smpl)
        text_out = llm.detokenize([t for t in tokens if not llama_cpp.llama_vocab_is_eog(vocab, t)])
        print(name, "->", text_out.decode(errors="replace"))
        cases.append({"grammar": name, "prompt": user, "prompt_tokens": prompt, "tokens": tokens,
                      "top2_allowed_gaps": gaps, "text": text_out.decode(errors="replace")})
    with open(out, "w") as f:
        json.dump({"reference": C.version(), "model_sha256": C.sha256(model), "model_file": os.path.basename(model),
                   "n_gen": N_GEN, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
