#!/usr/bin/env bash
# The Vulkan backend on a lent NVIDIA GPU (docs/performance.md "Devices"), run THERE in
# the repository root after benchmarks/device/pack.sh ran here. The device tool's call:
#
#   run(command="bash benchmarks/device/run_gpu.sh", carry=[".gl", ".gpu"], timeout_s=540)
#
# Within about 8 minutes: unpacks the Vulkan loader (.gl/*.deb into /, as the device
# README says) and the prebuilt bundle (.gpu/bundle.tar.xz); lists the devices; runs
# the op-level and tiny-model Vulkan tests against the CPU; measures the device's
# memory read bandwidth (uaii_bench_vulkan_membw); writes random Llama-3.2-1B- and
# Llama-3-8B-shaped Q4_0 files (make_shaped_q4_0.py) and runs bench_device.py on them,
# CPU and GPU side by side; and prints decode tok/s as a fraction of the roofline
# (measured GB/s over the bytes a decoded token reads: every weight but the embedding
# table, of which one row). Everything lands in $OUT. The default model (253 MB) is
# over what the tool carries, so it is not part of this run.
# UAII_GPU_SMOKE=1: the same steps here on lavapipe with tiny sizes (no .gl unpacking).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/uaii_gpu_out}
mkdir -p "$OUT"
smoke=${UAII_GPU_SMOKE:-}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

if [[ -z $smoke ]]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
b=/tmp/uaii_gpu
rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xJf .gpu/bundle.tar.xz || { echo "no bundle: run pack.sh" >&2; exit 1; }
export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 -m pip install -q --no-index --no-deps --target /tmp/uaii_site "$b"/whl/*.whl && export PYTHONPATH=/tmp/uaii_site

if [[ -z $smoke ]]; then
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  if ! "$b/bin/uaii" devices 2>&1 | grep -q "vulkan:0"; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  fi
fi
log "devices"
"$b/bin/uaii" devices 2>&1 | tee -a "$OUT/summary.txt"
"$b/bin/uaii" devices --json > "$OUT/devices.json" 2>&1

log "Vulkan tests (op level, tiny models)"
export UAII_FIXTURE_DIR=$b/fixtures
timeout 240 "$b/bin/uaii_vulkan_tests" "[ops]" > "$OUT/vulkan_ops.txt" 2>&1; echo "ops rc $?" | tee -a "$OUT/summary.txt"
timeout 120 "$b/bin/uaii_vulkan_tests" "vulkan: the tiny llama and gemma3 rows*" > "$OUT/vulkan_tiny.txt" 2>&1
echo "tiny rc $?" | tee -a "$OUT/summary.txt"
grep -E "^vulkan parity" "$OUT/vulkan_tiny.txt" | tee -a "$OUT/summary.txt"

log "memory read bandwidth"
mib=4096 reps=20
[[ -n $smoke ]] && mib=64 reps=2
timeout 120 "$b/bin/uaii_bench_vulkan_membw" --mib $mib --reps $reps > "$OUT/membw.json" 2>> "$OUT/summary.txt"
cat "$OUT/membw.json" | tee -a "$OUT/summary.txt"

log "decode and prefill, CPU and GPU"
models=()
shapes="1b 8b" layers=0 prompt=128 gen=64 repeats=2
[[ -n $smoke ]] && shapes="1b" layers=1 prompt=8 gen=2 repeats=1
for s in $shapes; do
  python3 benchmarks/make_shaped_q4_0.py "$s" "/tmp/shaped-$s-q4_0.gguf" --layers $layers && models+=(--model "/tmp/shaped-$s-q4_0.gguf")
done
timeout 300 python3 benchmarks/bench_device.py --uaii "$b/bin/uaii" "${models[@]}" --devices cpu,vulkan:0 \
  --prompt-tokens $prompt --max-tokens $gen --repeats $repeats --json-out "$OUT/bench.json" 2>&1 | tee -a "$OUT/summary.txt"

log "decode against the roofline"
python3 - "$OUT/membw.json" "$OUT/bench.json" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sys
import gguf
gbps = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["read_gb_per_s"]
for r in json.load(open(sys.argv[2])):
    if r["device"] == "cpu":
        continue
    reader = gguf.GGUFReader(r["model"])
    per_token = sum(int(t.n_bytes) for t in reader.tensors if t.name != "token_embd.weight")
    roof = gbps * 1e9 / per_token
    print(f"{r['model']}: {per_token / 2**30:.2f} GiB read per token; roofline {roof:.1f} tok/s at {gbps:.1f} GB/s; "
          f"decode {r['decode_tokens_per_s']:.1f} tok/s = {100 * r['decode_tokens_per_s'] / roof:.0f}% of it")
PY
