#!/usr/bin/env python3
"""Streams a reply from a model through the uaii Python SDK.

    python3 examples/python/stream.py [PROMPT] [--model PATH] [--max-tokens N]

The model defaults to $UAII_MODEL, then the default model (scripts/setup.sh installs
it). Text goes to stdout as it is generated; the usage goes to stderr.
"""
import argparse
import sys

import uaii


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", default="The capital of France is")
    parser.add_argument("--model", default=None, help="a GGUF file (default: $UAII_MODEL, then the default model)")
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()

    try:
        with uaii.Model(args.model) as model, uaii.Session(model) as session:
            result = None
            for event in session.generate(args.prompt, max_tokens=args.max_tokens, stream=True):
                if event.kind == "text":
                    print(event.text, end="", flush=True)
                elif event.kind == "done":
                    result = event.result
            print(flush=True)
            u = result.usage
            print(f"[{u.prompt_tokens} prompt tokens, {u.completion_tokens} generated, "
                  f"{u.decode_tokens_per_s:.1f} tok/s decode, stop: {result.stop_reason}]", file=sys.stderr)
    except uaii.UaiiError as e:
        print(f"error ({e.status}): {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # leaving the loop cancelled the generation
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
