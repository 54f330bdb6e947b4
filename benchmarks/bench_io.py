"""Shared by the storage and MoE benchmarks: drop a file from the page cache, time a
sequential buffered read of it (what `dd bs=8M` does), and run llama.cpp (mmap) greedily
on the same file."""
import os
import time


def drop_cache(path):
    """fsync, then POSIX_FADV_DONTNEED: the next reads come from the device."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def sequential_read_bandwidth(path, limit, cold):
    """Sequential pread of the first `limit` bytes in 8 MiB blocks (cold: after
    drop_cache): bytes/s."""
    if cold:
        drop_cache(path)
    fd = os.open(path, os.O_RDONLY)
    t0, done = time.perf_counter(), 0
    try:
        while done < limit:
            b = os.pread(fd, 8 << 20, done)
            if not b:
                break
            done += len(b)
    finally:
        os.close(fd)
    return done / (time.perf_counter() - t0)


def run_llamacpp_mmap(model, prompt, tokens, threads):
    """Greedy decode of `tokens` tokens after `prompt` with llama-cpp-python, weights
    mmap'ed: load, prefill and decode timings, the tokens, and this process's peak RSS."""
    try:
        import llama_cpp
    except ImportError:
        return {"skipped": "llama-cpp-python is not installed"}
    import resource
    t0 = time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(model), n_ctx=256, n_threads=threads, use_mmap=True, verbose=False)
    load = time.perf_counter() - t0
    ids = llm.tokenize(prompt.encode())
    t1 = time.perf_counter()
    llm.eval(ids)
    t2 = time.perf_counter()
    out = []
    for _ in range(tokens):
        tok = llm.sample(temp=0.0)
        out.append(int(tok))
        llm.eval([tok])
    t3 = time.perf_counter()
    return {"version": llama_cpp.__version__, "load_seconds": load, "prefill_seconds": t2 - t1,
            "decode_tokens_per_s": tokens / (t3 - t2), "tokens": out,
            "process_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
