#!/usr/bin/env bash
# The Kotlin SDK as an application without Gradle gets it: `cmake --install` of the C ABI
# and the Kotlin component into a scratch prefix (share/java/uaii.jar, lib/libuaii_jni.so
# beside lib/libuaii.so), then examples/Main.kt compiled with kotlinc against the installed
# jar only and run with java.library.path at the installed lib directory.
#   install_test.sh BUILD_DIR KOTLIN_PKG_DIR
set -euo pipefail
BUILD=$1 PKG=$2
KOTLINC=${KOTLINC:-kotlinc} JAVA=${JAVA:-java}
STDLIB=/usr/share/java/kotlin-stdlib.jar:/usr/share/java/kotlin-stdlib-jdk7.jar
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/prefix" --component uaii_capi >/dev/null
cmake --install "$BUILD" --prefix "$TMP/prefix" --component uaii_kotlin >/dev/null
JAR=$(find "$TMP/prefix" -name uaii.jar | head -1)
JNI=$(find "$TMP/prefix" -name libuaii_jni.so | head -1)
[ -n "$JAR" ] && [ -n "$JNI" ] || { echo "kotlin install: uaii.jar or libuaii_jni.so not installed" >&2; exit 1; }
[ -e "$(dirname "$JNI")/libuaii.so.0" ] || { echo "kotlin install: libuaii.so.0 is not beside the shim" >&2; exit 1; }
"$KOTLINC" -nowarn -jvm-target 1.8 -cp "$JAR:$STDLIB" -d "$TMP/app.jar" "$PKG/examples/Main.kt" 2>&1 \
  | grep -v -e 'Options -Xverify:none and -noverify were deprecated' || true
out=$("$JAVA" -Djava.library.path="$(dirname "$JNI")" -cp "$TMP/app.jar:$JAR:$STDLIB" MainKt "The capital of France is")
[ -n "$out" ] || { echo "kotlin install: the program printed nothing" >&2; exit 1; }
echo "kotlin install: a program built against $JAR ran: ${out:0:80}"
