#!/usr/bin/env bash
# Prepares the GPU run (benchmarks/device/run_gpu.sh) HERE, before a device session:
# the machine lent (an NVIDIA H200, x86-64, no internet) has CMake and Python but none
# of the build's libraries (Abseil, simdjson, ...) nor a Vulkan loader, so this packs
#   .gl/*.deb          the Vulkan loader and GL vendor libraries, as
#                      /work/.library/device/README.md says (unpacked there into /);
#   .gpu/bundle.tar.xz the prebuilt uaii, uaii_vulkan_tests and uaii_bench_vulkan_membw,
#                      every non-glibc shared library they load (ldd), a few tiny
#                      fixtures, and the gguf wheel make_shaped_q4_0.py needs.
# Both folders are ignored (.git/info/exclude) and named in the run's `carry`; the
# working tree that travels must stay under 64 MiB, which the last step checks.
#   bash benchmarks/device/pack.sh            (after a build: cmake --build build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
for p in /.gl/ /.gpu/; do grep -qxF "$p" .git/info/exclude || echo "$p" >> .git/info/exclude; done

bins=(build/uaii build/tests/backends/uaii_vulkan_tests build/benchmarks/uaii_bench_vulkan_membw)
for b in "${bins[@]}"; do [[ -x $b ]] || { echo "pack.sh: $b is missing: build first" >&2; exit 1; }; done

if ! ls .gl/libvulkan1_*.deb > /dev/null 2>&1; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update > /dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/fixtures/tiny" "$stage/whl"
cp "${bins[@]}" "$stage/bin/"
# Every library but glibc's and the compiler runtime's (the device's are newer).
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=>/ {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp build/fixtures/tiny/{tiny-llama-q4_0.gguf,tiny-llama-q8_0.gguf,tiny-llama-f16.gguf,tiny-gemma3-q4_0.gguf,prompt.txt} \
   "$stage/fixtures/tiny/" 2> /dev/null || true
python3 -m pip download -q --no-deps --only-binary=:all: -d "$stage/whl" "gguf==$(python3 -c 'import importlib.metadata as m; print(m.version("gguf"))')"
mkdir -p .gpu
tar -C "$stage" -cJf .gpu/bundle.tar.xz .
du -sh .gl .gpu/bundle.tar.xz

# What travels: tracked and untracked-not-ignored files, plus the carried folders.
tree_bytes=$(git ls-files -co --exclude-standard -z | xargs -0 du -cb 2> /dev/null | tail -1 | cut -f1)
carry_bytes=$(du -cb .gl .gpu | tail -1 | cut -f1)
total=$((tree_bytes + carry_bytes))
echo "pack.sh: the working tree ${tree_bytes} bytes + carried ${carry_bytes} = ${total} of 67108864"
(( total < 67108864 )) || { echo "pack.sh: over the 64 MiB the device tool carries" >&2; exit 1; }
