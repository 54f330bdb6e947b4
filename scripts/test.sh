#!/usr/bin/env bash
# The whole test suite except `slow`: generate fixtures, then ctest and pytest.
#   bash scripts/test.sh          (after scripts/setup.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${UAII_BUILD_DIR:-build}
export UAII_BUILD_DIR="$BUILD_DIR"
source scripts/common.sh
make_fixtures "$BUILD_DIR/fixtures" || exit 1
rc=0
ctest --test-dir "$BUILD_DIR" -LE slow --output-on-failure -j"$(nproc)" || rc=1
python3 -m pytest tests/python -m "not slow" -q -p no:cacheprovider || rc=1
exit $rc
