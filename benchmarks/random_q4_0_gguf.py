"""Shared by the generated benchmark models (make_7b_q4_0.py, make_moe_gguf.py):
Q4_0 tensors tiled from a pool of random blocks, and a llama-style vocabulary."""
import numpy as np

BLOCK = 18  # Q4_0: f16 d | 16 bytes of nibbles


def tile_q4_0(pool, shape, salt):
    """Q4_0 bytes of a tensor of `shape` (numpy order, last dim = columns): the pool's
    blocks from a rotating offset per tensor (`salt`), so tensors differ without
    drawing gigabytes of random numbers."""
    *lead, cols = shape
    nb = int(np.prod(lead)) * cols // 32
    start = (salt * 7919) % len(pool)
    idx = (np.arange(nb, dtype=np.int64) + start) % len(pool)
    return pool[idx].reshape(*lead, cols // 32 * BLOCK)


def add_llama_vocab(w, n_vocab):
    """<unk> <s> </s>, the 256 byte tokens, then words up to n_vocab (SentencePiece-style)."""
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    scores += [0.0] * 256
    types += [6] * 256
    i = 0
    while len(tokens) < n_vocab:
        tokens.append(f"\u2581w{i}")
        scores.append(-float(i))
        types.append(1)
        i += 1
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
