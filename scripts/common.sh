# Sourced by the scripts in this folder: shared paths and the fixture step.
UAII_CACHE="${UAII_HOME:-$HOME/.cache/uaii}"
# llama.cpp's source package (test data: its tokenizer vocabularies), see setup.sh.
LLAMA_CPP_SDIST="$UAII_CACHE/downloads/llama_cpp_python-0.3.36.tar.gz"

# make_fixtures DIR: runs every tests/fixtures/make_*.py generator into DIR.
make_fixtures() {
  local dir=$1
  mkdir -p "$dir"
  if [ -f "$LLAMA_CPP_SDIST" ]; then export UAII_LLAMA_CPP_SDIST="${UAII_LLAMA_CPP_SDIST:-$LLAMA_CPP_SDIST}"; fi
  local gen
  for gen in tests/fixtures/make_*.py; do
    python3 "$gen" "$dir" || { echo "fixture generator $gen failed" >&2; return 1; }
  done
}
