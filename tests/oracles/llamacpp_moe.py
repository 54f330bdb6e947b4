#!/usr/bin/env python3
"""Goldens for the tiny mixture-of-experts GGUFs (tests/fixtures/make_moe_models.py).

usage: llamacpp_moe.py FIXTURE_DIR [OUT_DIR] [NAME ...]
Writes OUT_DIR/moe-<name>.json for every row of make_moe_models.MOE_FAMILIES with llama.cpp
(llama-cpp-python, CPU, F16 KV cache, no flash attention); the format is
llamacpp_common.write_table_goldens's.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import llamacpp_common as C  # noqa: E402
import make_moe_models as F  # noqa: E402

if __name__ == "__main__":
    C.write_table_goldens(sys.argv[1:], F.MOE_FAMILIES, "moe")
