#!/usr/bin/env bash
# Builds the Kotlin SDK with kotlinc and runs its JUnit 4 suite and example against a built
# libuaii + libuaii_jni (run by CTest; also by hand):
#   bindings/kotlin/scripts/test.sh <build-dir> [path/to/libuaii_jni.so]
# Jars are cached in <build-dir>/kotlin and rebuilt when a source is newer.
set -euo pipefail
BUILD_DIR=$(cd "${1:?usage: test.sh <build-dir> [libuaii_jni.so]}" && pwd)
JNI_LIB=${2:-$BUILD_DIR/libuaii_jni.so}
PKG_DIR=$(cd "$(dirname "$0")/.." && pwd)
KOTLINC=${KOTLINC:-kotlinc}
JAVA=${JAVA:-java}
JARS=${UAII_JAVA_JARS:-/usr/share/java}
OUT=$BUILD_DIR/kotlin
mkdir -p "$OUT"
[ -f "$JNI_LIB" ] || { echo "kotlin SDK: $JNI_LIB is missing (build the uaii_jni target first)" >&2; exit 1; }

RUNTIME="$JARS/kotlin-stdlib.jar:$JARS/kotlin-stdlib-jdk7.jar"
# The tests parse JSON replies with Gson (Debian: libgoogle-gson-java).
JUNIT="$JARS/junit4.jar:$JARS/hamcrest-core.jar:$JARS/gson.jar"

# stale JAR DIR...: true when JAR is missing or a file under a DIR is newer.
stale() {
  local jar=$1; shift
  [ -f "$jar" ] || return 0
  [ -n "$(find "$@" -newer "$jar" -type f -print -quit)" ]
}
compile() { # compile JAR CLASSPATH SOURCES...
  local jar=$1 cp=$2; shift 2
  echo "kotlinc -> $jar"
  "$KOTLINC" -nowarn -jvm-target 1.8 -cp "$cp" -d "$jar.tmp.jar" "$@" 2>&1 \
    | grep -v -e 'Options -Xverify:none and -noverify were deprecated' || true
  [ -f "$jar.tmp.jar" ] || { echo "kotlin SDK: kotlinc failed" >&2; exit 1; }
  mv "$jar.tmp.jar" "$jar"
}

if stale "$OUT/uaii.jar" "$PKG_DIR/src/main"; then
  rm -f "$OUT/uaii-tests.jar"
  compile "$OUT/uaii.jar" "$RUNTIME" "$PKG_DIR/src/main/kotlin"
fi
if stale "$OUT/uaii-tests.jar" "$PKG_DIR/src/test" "$PKG_DIR/examples"; then
  compile "$OUT/uaii-tests.jar" "$RUNTIME:$JUNIT:$OUT/uaii.jar" "$PKG_DIR/src/test/kotlin" "$PKG_DIR/examples"
fi

CP="$RUNTIME:$JUNIT:$OUT/uaii.jar:$OUT/uaii-tests.jar"
# SpeculativeTest takes a draft of another vocabulary from the build's tiny fixtures.
FIXTURES=${UAII_FIXTURE_DIR:-$BUILD_DIR/fixtures}
"$JAVA" -Duaii.jni.library="$JNI_LIB" -Duaii.fixtures.dir="$FIXTURES" -cp "$CP" org.junit.runner.JUnitCore \
  dev.uaii.UaiiTest dev.uaii.StructuredOutputTest dev.uaii.SpeculativeTest dev.uaii.DeviceTest
# learnCalibration writes to $UAII_HOME: its test runs with an empty temporary home, the
# default model named by UAII_MODEL (resolved the library's way: $UAII_MODEL, then the cache).
CAL_HOME=$(mktemp -d)
trap 'rm -rf "$CAL_HOME"' EXIT
CAL_MODEL=${UAII_MODEL:-${UAII_HOME:-$HOME/.cache/uaii}/models/gemma-3-270m-q4_k_m.gguf}
UAII_HOME=$CAL_HOME UAII_MODEL=$CAL_MODEL "$JAVA" -Duaii.jni.library="$JNI_LIB" -cp "$CP" \
  org.junit.runner.JUnitCore dev.uaii.CalibrationTest
# The example program streams from the default model.
"$JAVA" -Duaii.jni.library="$JNI_LIB" -cp "$CP" MainKt "The capital of France is"
# A libuaii reporting another C ABI version (UAII_FAKE_ABI_LIB, preloaded) is refused at load.
if [ -n "${UAII_FAKE_ABI_LIB:-}" ]; then
  if out=$(LD_PRELOAD="$UAII_FAKE_ABI_LIB" "$JAVA" -Duaii.jni.library="$JNI_LIB" -cp "$CP" MainKt 2>&1); then
    echo "kotlin SDK: a mismatched C ABI was not refused: $out" >&2; exit 1
  fi
  grep -q "UaiiException (version_mismatch): libuaii's C ABI is 0.6.0 but the Kotlin SDK was built against 0.5" <<<"$out" \
    || { echo "kotlin SDK: unclear version-mismatch message: $out" >&2; exit 1; }
  echo "kotlin SDK: a mismatched C ABI is refused: $(head -n 1 <<<"$out")"
fi
