#!/usr/bin/env python3
"""Storage benchmark (docs/performance.md, "Storage"): decode tokens/s and weight bytes
read per token for a 7B-shaped Q4_0 file under budgets of 1, 2 and 4 GiB and
unbudgeted, cold and warm, next to

* the disk's sequential read bandwidth measured in the same run, before and after each
  cold streaming run (each time the better of a direct-I/O read of the file's last GiB
  through uaii's own read path, `uaii_bench_read --tail`, and a plain buffered read of
  its first GiB like `dd`, both cold), and the roofline: the better of those
  bandwidths / streamed bytes per token;
* the cost model's prediction as a user would see it just before each run
  (`uaii generate --dry-run --json` in this sweep's private $UAII_HOME: the probes
  measured at the first dry run, refined by what the sweep's earlier runs observed,
  never by the row's own run), which source it used (probe / observed), the prediction
  from the probes alone, and the prediction with the disk figure replaced by the mean
  of the bandwidths measured around the run (from the calibration as it was before
  the run);
* llama.cpp (llama-cpp-python, mmap) on the same file.

    python3 benchmarks/bench_storage.py --build BUILD [--model F.gguf] [--tokens 5] [--out r.json]
    python3 benchmarks/bench_storage.py --build BUILD --layers 4 --budgets 0.25,none --no-llamacpp  # a quick check

--calibrate-first GIB runs, before the sweep and outside its table, --calibrate-runs
(default 3) cold and as many warm runs under GIB (choose a budget that is not one of
the table's) and as many unbudgeted warm runs: an explicit one-time calibration, so that
even the table's first rows are predicted from observed figures (each figure is the
median of its recent runs, and their spread gives the prediction's range). The table
then says so.

Also per run: the device's busy fraction (io_ticks of /proc/diskstats over the process's
wall time, load included), the CPU time everything else on the machine used meanwhile
(/proc/stat busy time minus the run's own), and the % of a roofline from the mean of
the disk figures around the run (beside the usual one, from the better of them).

Cold = the file dropped from the page cache (POSIX_FADV_DONTNEED) before the run;
streamed reads then come from the device for the whole run (direct I/O does not fill
the page cache). Warm = the whole file read into the page cache first. Without
--model the file is written by benchmarks/make_7b_q4_0.py into a temporary directory
(about 3.6 GiB with 32 layers). Peak RSS is the OS's figure for each run (wait4)."""
import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_io import drop_cache, run_llamacpp_mmap, sequential_read_bandwidth  # noqa: E402

GiB = 1 << 30
HERE = pathlib.Path(__file__).resolve().parent


def warm_cache(path):
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def buffered_bandwidth(path, limit=1 * GiB):
    """Cold sequential buffered read (what `dd bs=8M` does): bytes/s."""
    return sequential_read_bandwidth(path, limit, cold=True)


def direct_bandwidth(bench_read, path, limit_mib=1024, tail=False):
    """Cold direct-I/O read through uaii's read path (io_uring, pieces in flight); with
    tail, the last limit_mib of the file (where a budgeted run's streamed layers are)."""
    if not bench_read.exists():
        return 0.0
    p = subprocess.run([str(bench_read), str(path), "--mode", "uring", "--limit-mib", str(limit_mib),
                        *(["--tail"] if tail else [])], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])["bytes_per_s"]


def disk_bandwidth(bench_read, path):
    """The better of a direct read of the file's last GiB (the streamed layers' blocks)
    and a buffered read of its first GiB, both cold."""
    d = direct_bandwidth(bench_read, path, tail=True)
    b = buffered_bandwidth(path)
    return {"direct_tail_bytes_per_s": d, "buffered_head_bytes_per_s": b, "bytes_per_s": max(d, b)}


def device_counters(path):
    """(sectors read, ms the device had I/O in flight) of the block device holding
    `path`, from /proc/diskstats (None when it is not listed there)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    try:
        with open("/proc/diskstats") as f:
            for line in f:
                c = line.split()
                if int(c[0]) == major and int(c[1]) == minor:
                    return int(c[5]), int(c[12])
    except OSError:
        pass
    return None


def cpu_busy_seconds():
    """CPU time all processes spent busy so far (user + nice + system + irq + softirq +
    steal, from /proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            c = [int(x) for x in f.readline().split()[1:]]
        return (c[0] + c[1] + c[2] + c[5] + c[6] + (c[7] if len(c) > 7 else 0)) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_uaii(exe, model, flags, tokens, env):
    args = [str(exe), "generate", "--model", str(model), "-p", "hello world", "--max-tokens", str(tokens),
            "--max-context", "256", "--json", *flags]
    dev0, cpu0, t0 = device_counters(model), cpu_busy_seconds(), time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dev1, cpu1, wall = device_counters(model), cpu_busy_seconds(), time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(err.decode())
    doc = json.loads(out)
    # One weight pass per generated token: the prefill (which yields the first token)
    # and one decode step for each further token.
    passes = max(1, len(doc["tokens"]))
    mem = doc["memory"]
    return {
        "decode_tokens_per_s": doc["timings"]["decode_tokens_per_s"],
        "prefill_tokens_per_s": doc["timings"]["prefill_tokens_per_s"],
        "bytes_read_per_token": mem.get("bytes_read", 0) / passes,
        "io_wait_seconds": mem.get("io_wait_seconds", 0),
        "decode_io_wait_seconds": mem.get("decode_io_wait_seconds", 0),
        "decode_steps": max(0, len(doc["tokens"]) - 1),
        "compute_seconds": mem.get("compute_seconds", 0),
        "staging_hits": mem.get("staging_hits", 0),
        "staging_misses": mem.get("staging_misses", 0),
        "peak_rss_bytes": ru.ru_maxrss * 1024,
        "tokens": doc["tokens"],
        "process_seconds": wall,
        # The whole process (load and prefill included), from the device's own counters
        # (other processes' I/O on it included): how busy the engine kept the device.
        "device_read_bytes": (dev1[0] - dev0[0]) * 512 if dev0 and dev1 else None,
        "device_busy_fraction": (dev1[1] - dev0[1]) / 1000 / wall if dev0 and dev1 and wall > 0 else None,
        # CPU time of everything else on the machine during the run (busy time of all
        # CPUs minus the run's own user + system time): a resident 2-thread decode on
        # 2 cores slows down by about that share.
        "other_cpu_seconds": (cpu1 - cpu0 - ru.ru_utime - ru.ru_stime) if cpu0 is not None and cpu1 is not None
        else None,
    }


def dry_run(exe, model, flags, env):
    p = subprocess.run([str(exe), "generate", "--model", str(model), "--dry-run", "--json", "--max-context", "256",
                        *flags], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)


def predict_with_disk(exe, model, flags, env, disk_bytes_per_s, scratch, cal_text):
    """The cost model with the disk figure (the probe's and any observed one) set to
    `disk_bytes_per_s`, from `cal_text`: the calibration as it was before the run."""
    alt = scratch / "home_same_run_disk"
    alt.mkdir(exist_ok=True)
    cal = json.loads(cal_text)
    cal["disk_read_bytes_per_s"] = disk_bytes_per_s
    for figures in cal.get("observed", {}).values():
        if "disk" in figures:
            figures["disk"]["bytes_per_s"] = disk_bytes_per_s
    (alt / "calibration.json").write_text(json.dumps(cal))
    return dry_run(exe, model, flags, dict(env, UAII_HOME=str(alt)))["prediction"]


def budget_flags(gib, threads):
    return (["--ram-gb", str(gib)] if gib else ["--preset", "none"]) + ["--threads", str(threads)]


def calibration_runs(exe, model, gib, tokens, threads, env, runs=3):
    """The explicit one-time calibration (--calibrate-first): `runs` cold and `runs` warm
    runs under `gib`, then `runs` unbudgeted warm ones; each run folds what it got into
    $UAII_HOME's calibration (several of each: a figure is the median of its recent
    runs, their spread the prediction's range; one run per figure let a single fast
    resident pass, 11.6 tok/s against 8.3-8.8, carry the 4 GiB prediction 37% high)."""
    out = []
    for g, temp in [(gib, "cold")] * runs + [(gib, "warm")] * runs + [(None, "warm")] * runs:
        flags = budget_flags(g, threads)
        dry_run(exe, model, flags, env)  # measures the probes first, as a user's first dry run would
        if temp == "cold":
            drop_cache(model)
        else:
            warm_cache(model)
        r = run_uaii(exe, model, flags, tokens, env)
        out.append({"budget_gib": g, "cache": temp, "decode_tokens_per_s": r["decode_tokens_per_s"]})
        print(json.dumps({"calibration_run": out[-1]}), flush=True)
    return out


def pct(a, b):
    return 100.0 * a / b if b else None


def disk_cell(r):
    d = r.get("disk")
    if not d:
        return "—"
    cell = f"{d['before']['bytes_per_s'] / 1e9:.2f}"
    if "after" in d:
        cell += f" / {d['after']['bytes_per_s'] / 1e9:.2f}"
    return cell


def table(res):
    rows = ["| budget | cache | decode tok/s | read GiB/token (planned) | disk GB/s before / after | roofline tok/s "
            "| % of roofline | % of mean-disk roofline | predicted tok/s (range) | error % | prediction source "
            "| probes alone tok/s (error %) | predicted, same-run disk | error % | I/O wait s "
            "| decode I/O wait s/token (predicted) | device busy % | other CPU s | peak RSS MiB |", "|" + "---|" * 19]
    for r in res["runs"]:
        b = f"{r['budget_gib']} GiB" if r["budget_gib"] else "none"
        f = lambda v, d=2: "—" if v is None else f"{v:.{d}f}"
        rows.append(f"| {b} | {r['cache']} | {f(r['decode_tokens_per_s'])} | {f(r['bytes_read_per_token'] / GiB)} "
                    f"({f(r['planned_bytes_per_token'] / GiB)}) | {disk_cell(r)} | "
                    f"{f(r.get('roofline_tokens_per_s'))} | {f(r.get('percent_of_roofline'), 0)} | "
                    f"{f(r.get('percent_of_mean_roofline'), 0)} | "
                    f"{f(r['predicted_decode_tokens_per_s'])} ({f(r.get('predicted_low_tokens_per_s'))}-"
                    f"{f(r.get('predicted_high_tokens_per_s'))}) | {f(r['prediction_error_percent'], 0)} | "
                    f"{r.get('prediction_source', '—')} | {f(r.get('predicted_probe_tokens_per_s'))} "
                    f"({f(r.get('prediction_probe_error_percent'), 0)}) | "
                    f"{f(r.get('predicted_same_run_disk_tokens_per_s'))} | "
                    f"{f(r.get('prediction_same_run_disk_error_percent'), 0)} | {f(r['io_wait_seconds'], 1)} | "
                    f"{f(r.get('decode_io_wait_seconds_per_token'))} "
                    f"({f(r.get('predicted_io_wait_seconds_per_token'))}) | "
                    f"{f(None if r.get('device_busy_fraction') is None else 100 * r['device_busy_fraction'], 0)} | "
                    f"{f(r.get('other_cpu_seconds'), 1)} | "
                    f"{r['peak_rss_bytes'] / (1 << 20):.0f} |")
    for r in res.get("llamacpp", []):
        if "skipped" in r:
            continue
        rows.append(f"| llama.cpp mmap | {r['cache']} | {r['decode_tokens_per_s']:.2f} (load {r['load_seconds']:.1f} s) "
                    f"| — | — | — | — | — | — | — | — | — | — | — | — | — | — | — | {r['process_peak_rss_bytes'] / (1 << 20):.0f} (process) |")
    cal = res.get("calibration_runs")
    if cal:
        runs = ", ".join(f"{c['budget_gib'] or 'none'}{' GiB' if c['budget_gib'] else ''} {c['cache']} "
                         f"({c['decode_tokens_per_s']:.2f} tok/s)" for c in cal)
        rows.append(f"\nBefore the sweep, an explicit one-time calibration: {runs}; each row's prediction "
                    "comes from those and the sweep's earlier rows, never from its own run.")
    else:
        rows.append("\nNo calibration run: the first rows are predicted from the probes alone, later ones from "
                    "what the sweep's earlier rows observed, never from their own run.")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=pathlib.Path, default=HERE.parent / "build",
                    help="build directory (uaii and benchmarks/uaii_bench_read)")
    ap.add_argument("--uaii", type=pathlib.Path, help="the uaii binary (default BUILD/uaii)")
    ap.add_argument("--model", type=pathlib.Path)
    ap.add_argument("--layers", type=int, default=32, help="layers of the generated file (without --model)")
    ap.add_argument("--budgets", default="1,2,4,none", help="GiB, comma-separated; none = unbudgeted")
    ap.add_argument("--tokens", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--no-llamacpp", action="store_true")
    ap.add_argument("--calibrate-first", type=float, metavar="GIB",
                    help="before the sweep: cold and warm runs under GIB and an unbudgeted warm run (calibration)")
    ap.add_argument("--calibrate-runs", type=int, default=3,
                    help="runs of each kind in --calibrate-first (a figure is the median of its recent runs)")
    a = ap.parse_args()
    exe = a.uaii or a.build / "uaii"
    bench_read = a.build / "benchmarks" / "uaii_bench_read"
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="uaii_bench_storage_"))
    model = a.model
    try:
        if model is None:
            model = scratch / "random-7b-q4_0.gguf"
            subprocess.run([sys.executable, str(HERE / "make_7b_q4_0.py"), str(model), "--layers", str(a.layers)],
                           check=True)
        env = dict(os.environ)
        env["UAII_HOME"] = str(scratch / "home")  # calibration measured in this run
        t_start = time.perf_counter()
        res = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "load_average_start": os.getloadavg(),
               "model": str(model), "model_bytes": model.stat().st_size, "tokens": a.tokens, "threads": a.threads,
               "disk_start": disk_bandwidth(bench_read, model), "runs": []}
        print(json.dumps({"disk_start": res["disk_start"]}), flush=True)
        if a.calibrate_first:
            res["calibration_runs"] = calibration_runs(exe, model, a.calibrate_first, a.tokens, a.threads, env,
                                                       a.calibrate_runs)
        for g in a.budgets.split(","):
            gib = None if g.strip() in ("none", "0", "") else float(g)
            if gib is not None and gib == int(gib):
                gib = int(gib)
            flags = budget_flags(gib, a.threads)
            for temp in ("cold", "warm"):
                # The prediction a user would see now: the calibration as the earlier
                # runs left it (this row's run folds its own figures in only afterwards).
                plan = dry_run(exe, model, flags, env)
                per_token = plan["streamed"]["bytes_per_token"]
                cal_before = (pathlib.Path(env["UAII_HOME"]) / "calibration.json").read_text()
                disk = None
                if temp == "cold":
                    disk = {"before": disk_bandwidth(bench_read, model)}
                    drop_cache(model)
                else:
                    warm_cache(model)
                r = run_uaii(exe, model, flags, a.tokens, env)
                if disk and per_token:
                    # The disk's throughput drifts (a shared virtual disk: 2-3x within
                    # seconds), so it is measured on both sides of a streaming run: the
                    # roofline takes the better figure, the same-run prediction the mean.
                    disk["after"] = disk_bandwidth(bench_read, model)
                    both = [disk["before"]["bytes_per_s"], disk["after"]["bytes_per_s"]]
                    disk["bytes_per_s"] = max(both)
                    disk["mean_bytes_per_s"] = sum(both) / 2
                elif disk:
                    disk["bytes_per_s"] = disk["mean_bytes_per_s"] = disk["before"]["bytes_per_s"]
                pred = plan["prediction"][f"decode_tokens_per_s_{temp}"]
                rng = plan["prediction"].get("range", {})
                probe = plan["prediction"]["probe"][f"decode_tokens_per_s_{temp}"]
                passes = max(1, len(r["tokens"]))
                r.update(budget_gib=gib, cache=temp, planned_bytes_per_token=per_token,
                         predicted_decode_tokens_per_s=pred,
                         predicted_low_tokens_per_s=rng.get(f"decode_tokens_per_s_{temp}_low"),
                         predicted_high_tokens_per_s=rng.get(f"decode_tokens_per_s_{temp}_high"),
                         prediction_error_percent=pct(pred - r["decode_tokens_per_s"], r["decode_tokens_per_s"]),
                         prediction_source=plan["prediction"].get(f"source_{temp}"),
                         predicted_probe_tokens_per_s=probe,
                         prediction_probe_error_percent=pct(probe - r["decode_tokens_per_s"], r["decode_tokens_per_s"]),
                         predicted_io_wait_seconds_per_token=plan["prediction"].get(f"io_wait_seconds_{temp}"),
                         io_wait_seconds_per_pass=r["io_wait_seconds"] / passes,
                         decode_io_wait_seconds_per_token=r["decode_io_wait_seconds"] / max(1, r["decode_steps"]),
                         calibration_figures=(plan["calibration"] or {}).get("figures"),
                         load_average=os.getloadavg())
                if disk:
                    r["disk"] = disk
                    r["disk_bytes_per_s"] = disk["bytes_per_s"]
                    if per_token:
                        roof = disk["bytes_per_s"] / per_token
                        r["roofline_tokens_per_s"] = roof
                        r["percent_of_roofline"] = pct(r["decode_tokens_per_s"], roof)
                        # Against the mean of the figures around the run (what the disk
                        # gave on average in that minute, not its best moment).
                        r["mean_roofline_tokens_per_s"] = disk["mean_bytes_per_s"] / per_token
                        r["percent_of_mean_roofline"] = pct(r["decode_tokens_per_s"], r["mean_roofline_tokens_per_s"])
                    same = predict_with_disk(exe, model, flags, env, disk["mean_bytes_per_s"], scratch, cal_before)
                    r["predicted_same_run_disk_tokens_per_s"] = same["decode_tokens_per_s_cold"]
                    r["prediction_same_run_disk_error_percent"] = pct(
                        same["decode_tokens_per_s_cold"] - r["decode_tokens_per_s"], r["decode_tokens_per_s"])
                res["runs"].append(r)
                print(json.dumps({k: v for k, v in r.items() if k != "tokens"}), flush=True)
        res["calibration"] = dry_run(exe, model, flags, env)["calibration"]  # as the sweep left it
        res["same_tokens"] = len({tuple(r["tokens"]) for r in res["runs"]}) == 1
        if not a.no_llamacpp:
            for temp in ("cold", "warm"):
                if temp == "cold":
                    drop_cache(model)
                else:
                    warm_cache(model)
                r = run_llamacpp_mmap(model, "hello world", a.tokens, a.threads)
                r["cache"] = temp
                res.setdefault("llamacpp", []).append(r)
                print(json.dumps({k: v for k, v in r.items() if k != "tokens"}), flush=True)
            lt = [r["tokens"] for r in res.get("llamacpp", []) if "tokens" in r]
            if lt and res["runs"]:
                res["llamacpp_same_tokens"] = all(t == res["runs"][0]["tokens"][:len(t)] or
                                                  res["runs"][0]["tokens"] == t[:len(res["runs"][0]["tokens"])]
                                                  for t in lt)
        res["wall_seconds"] = time.perf_counter() - t_start
        res["table"] = table(res)
        text = json.dumps(res, indent=2)
        if a.out:
            a.out.write_text(text + "\n")
        print(res["table"])
        print(f"same tokens in every uaii run: {res['same_tokens']}; wall {res['wall_seconds']:.0f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
