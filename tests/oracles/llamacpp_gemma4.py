#!/usr/bin/env python3
"""Goldens for the tiny Gemma 4 GGUFs (tests/fixtures/make_gemma4_models.py).

usage: llamacpp_gemma4.py FIXTURE_DIR [OUT_DIR] [NAME ...]
Writes OUT_DIR/gemma4-<name>.json for every row of make_gemma4_models.GEMMA4 with llama.cpp
(llama-cpp-python, CPU, F16 KV cache, no flash attention); the format is
llamacpp_common.write_table_goldens's.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import llamacpp_common as C  # noqa: E402
import make_gemma4_models as G  # noqa: E402

if __name__ == "__main__":
    C.write_table_goldens(sys.argv[1:], G.GEMMA4, "gemma4")
