#!/usr/bin/env bash
# Only the tests labelled `slow` (multi-GiB files, minutes of compute). Not run by CI.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${UAII_BUILD_DIR:-build}
export UAII_BUILD_DIR="$BUILD_DIR"
source scripts/common.sh
make_fixtures "$BUILD_DIR/fixtures" || exit 1
rc=0
ctest --test-dir "$BUILD_DIR" -L slow --output-on-failure || rc=1
python3 -m pytest tests/python -m slow -q -p no:cacheprovider; r=$?; [ $r -ne 0 ] && [ $r -ne 5 ] && rc=1
exit $rc
