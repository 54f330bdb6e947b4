"""`uaii pull` against a fake Hugging Face Hub on 127.0.0.1 (no other network).

The fake Hub (FakeHub below) serves the two endpoints uaii uses:
  GET /api/models/{org}/{name}/revision/{rev}?blobs=true   -> siblings with size / lfs.sha256
  GET /{org}/{name}/resolve/{rev}/{path}                   -> bytes, honouring Range
Knobs per repository: cut the connection mid-file once, serve corrupted bytes, list
hostile names, or lie about a file's size (a "huge" model for --dry-run).
"""
import hashlib
import http.server
import json
import os
import pathlib
import socketserver
import subprocess
import threading
import urllib.parse

import jsonschema
import pytest

from conftest import load_schema, run_uaii, run_uaii_with_tty_stderr


class FakeHub:
    def __init__(self):
        self.repos = {}        # "org/name" -> {path: bytes}
        self.cut_once = set()  # (repo, path): first full GET sends half the bytes, then closes
        self.corrupt = set()   # (repo, path): serve bytes that do not match the listed sha256
        self.always_cut = set()  # (repo, path): every GET sends half of what it announces, then closes
        self.oversize = set()  # (repo, path): serve the file with extra bytes appended (a lying server)
        self.fake_size = {}    # (repo, path): listed size (for headers-only dry runs)
        self.gated = set()     # repos that need "Authorization: Bearer secret"
        self.extra_names = {}  # repo -> [names listed but not served]
        self.log = []          # (method, path, range header, authorization header)
        self.redirect = {}     # (repo, path): resolve answers 302 to this URL (a CDN on another host)
        self.cdn_auth = []     # the Authorization header each redirected ("?cdn=1") request carried
        self.lock = threading.Lock()

    def add_dir(self, repo, directory: pathlib.Path):
        files = {}
        for p in sorted(directory.rglob("*")):
            if p.is_file():
                files[str(p.relative_to(directory))] = p.read_bytes()
        self.repos[repo] = files

    def listing(self, repo):
        sibs = []
        for path, data in sorted(self.repos[repo].items()):
            size = self.fake_size.get((repo, path), len(data))
            s = {"rfilename": path, "size": size}
            if path.endswith(".safetensors"):
                s["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": size, "pointerSize": 134}
            sibs.append(s)
        for name in self.extra_names.get(repo, []):
            sibs.append({"rfilename": name, "size": 4})
        return {"id": repo, "sha": "0123456789abcdef0123456789abcdef01234567", "siblings": sibs}


def make_handler(hub: FakeHub):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send_bytes(self, status, body, extra=()):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(url.path)
            rng = self.headers.get("Range")
            auth = self.headers.get("Authorization")
            with hub.lock:
                hub.log.append(("GET", path, rng, auth))
            parts = path.strip("/").split("/")
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "revision":
                repo = "/".join(parts[2:4])
                if repo not in hub.repos:
                    return self.send_bytes(404, b'{"error":"Repository not found"}')
                if repo in hub.gated and auth != "Bearer secret":
                    return self.send_bytes(401, b'{"error":"gated"}')
                return self.send_bytes(200, json.dumps(hub.listing(repo)).encode(),
                                       [("Content-Type", "application/json")])
            if len(parts) >= 5 and parts[2] == "resolve":
                repo, file = "/".join(parts[:2]), "/".join(parts[4:])
                if repo not in hub.repos or file not in hub.repos[repo]:
                    return self.send_bytes(404, b"not found")
                cdn = url.query == "cdn=1"  # a signed CDN URL: no token needed, none expected
                if cdn:
                    with hub.lock:
                        hub.cdn_auth.append(auth)
                elif repo in hub.gated and auth != "Bearer secret":
                    return self.send_bytes(401, b"gated")
                if not cdn and (repo, file) in hub.redirect:
                    return self.send_bytes(302, b"", [("Location", hub.redirect[(repo, file)])])
                data = hub.repos[repo][file]
                if (repo, file) in hub.corrupt:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                if (repo, file) in hub.oversize:
                    data = data + b"\0" * 4096
                start, end = 0, len(data) - 1
                if rng:
                    a, _, b = rng.replace("bytes=", "").partition("-")
                    start = int(a)
                    end = min(int(b), len(data) - 1) if b else len(data) - 1
                    if start >= len(data):
                        return self.send_bytes(416, b"", [("Content-Range", f"bytes */{len(data)}")])
                body = data[start:end + 1]
                key = (repo, file)
                if key in hub.always_cut or (key in hub.cut_once and not rng):
                    hub.cut_once.discard(key)
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if rng:
                    return self.send_bytes(206, body, [("Content-Range", f"bytes {start}-{end}/{len(data)}")])
                return self.send_bytes(200, body)
            return self.send_bytes(404, b"unknown endpoint")

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture
def hub():
    fake = FakeHub()
    server = Server(("127.0.0.1", 0), make_handler(fake))  # port 0: a free port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    yield fake
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def hf_fixture(fixtures_dir, name):
    path = fixtures_dir / "hf" / "models" / name
    if not path.is_dir():
        pytest.fail(f"{path} missing: run tests/fixtures/make_hf_fixtures.py {fixtures_dir}")
    return path


def pull(uaii_bin, hub, *args, token=None, check=True):
    env = {"HF_ENDPOINT": hub.endpoint, "HF_TOKEN": token or "", "http_proxy": "", "https_proxy": "",
           "HTTP_PROXY": "", "HTTPS_PROXY": "", "ALL_PROXY": "", "no_proxy": "127.0.0.1"}
    return run_uaii(uaii_bin, "pull", *args, env=env, check=check, timeout=120)


def tree(d: pathlib.Path):
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_pull_downloads_and_verifies(uaii_bin, hub, fixtures_dir, tmp_path):
    src = hf_fixture(fixtures_dir, "qwen3_sharded")
    hub.add_dir("org/qwen3", src)
    out = tmp_path / "out"
    p = pull(uaii_bin, hub, "org/qwen3", "--outdir", out, "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("pull.schema.json"))
    assert tree(out) == tree(src)
    shards = [f for f in doc["downloaded"] if f["path"].endswith(".safetensors")]
    assert len(shards) == 3 and all(len(f["sha256"]) == 64 for f in shards)
    # The pulled directory loads.
    info = json.loads(run_uaii(uaii_bin, "inspect", out, "--json").stdout)
    assert info["variant"] == "qwen3" and len(info["files"]) == 3
    # A second pull finds everything present and downloads nothing.
    before = len(hub.log)
    doc = json.loads(pull(uaii_bin, hub, "org/qwen3", "--outdir", out, "--json").stdout)
    assert all(f["already_present"] for f in doc["downloaded"] if f["path"].endswith(".safetensors"))
    assert not [r for r in hub.log[before:] if r[1].endswith(".safetensors")]


def test_pull_resumes_after_a_cut_connection(uaii_bin, hub, fixtures_dir, tmp_path):
    src = hf_fixture(fixtures_dir, "llama")
    hub.add_dir("org/llama", src)
    hub.cut_once.add(("org/llama", "model.safetensors"))
    out = tmp_path / "out"
    doc = json.loads(pull(uaii_bin, hub, "org/llama", "--outdir", out, "--include", "*.json",
                          "--include", "model.safetensors", "--json").stdout)
    data = (src / "model.safetensors").read_bytes()
    assert (out / "model.safetensors").read_bytes() == data
    assert not (out / "model.safetensors.partial").exists()
    entry = next(f for f in doc["downloaded"] if f["path"] == "model.safetensors")
    assert entry["attempts"] == 2
    ranges = [r[2] for r in hub.log if r[1].endswith("/model.safetensors") and r[2]]
    assert ranges == [f"bytes={len(data) // 2}-"]  # resumed where the cut left it
    # --include selected only those files.
    assert sorted(tree(out)) == sorted(["config.json", "generation_config.json", "model.safetensors",
                                        "tokenizer.json", "tokenizer_config.json"]
                                       if (src / "tokenizer.json").exists() else
                                       ["config.json", "generation_config.json", "model.safetensors"])


def test_pull_rejects_corrupted_file(uaii_bin, hub, fixtures_dir, tmp_path):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "llama"))
    hub.corrupt.add(("org/llama", "model.safetensors"))
    out = tmp_path / "out"
    p = pull(uaii_bin, hub, "org/llama", "--outdir", out, "--include", "model.safetensors", check=False)
    assert p.returncode == 1
    assert "SHA-256 mismatch" in p.stderr and "model.safetensors" in p.stderr
    assert not (out / "model.safetensors").exists() and not (out / "model.safetensors.partial").exists()


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])  # with and without a listed SHA-256
def test_pull_never_completes_a_truncated_download(uaii_bin, hub, fixtures_dir, tmp_path, name):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "llama"))
    hub.always_cut.add(("org/llama", name))
    out = tmp_path / "out"
    p = pull(uaii_bin, hub, "org/llama", "--outdir", out, "--include", name, check=False)
    assert p.returncode == 1 and name in p.stderr, p.stderr
    assert not (out / name).exists()  # only a verified file gets its final name


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])
def test_pull_refuses_a_download_larger_than_listed(uaii_bin, hub, fixtures_dir, tmp_path, name):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "llama"))
    hub.oversize.add(("org/llama", name))
    out = tmp_path / "out"
    p = pull(uaii_bin, hub, "org/llama", "--outdir", out, "--include", name, check=False)
    assert p.returncode == 1 and name in p.stderr, p.stderr
    assert not (out / name).exists() and not (out / (name + ".partial")).exists()


@pytest.mark.parametrize("hostile", ["../evil", "/tmp/uaii_abs_evil", "a/../../evil", "sub\\..\\evil", "./x"])
def test_pull_rejects_hostile_names(uaii_bin, hub, fixtures_dir, tmp_path, hostile):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "gpt2"))
    hub.extra_names["org/llama"] = [hostile]
    out = tmp_path / "a" / "out"
    p = pull(uaii_bin, hub, "org/llama", "--outdir", out, check=False)
    assert p.returncode == 1 and "hostile file name" in p.stderr
    assert not (tmp_path / "a" / "evil").exists() and not pathlib.Path("/tmp/uaii_abs_evil").exists()
    assert not out.exists() or not any(out.iterdir())  # refused before any download
    assert not [r for r in hub.log if "/resolve/" in r[1]]


def test_pull_refuses_to_write_through_symlinks(uaii_bin, hub, fixtures_dir, tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "config.json").write_text("{}")
    (src / "sub" / "file.txt").write_text("hello")
    hub.add_dir("org/link", src)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "sub").symlink_to(elsewhere)
    p = pull(uaii_bin, hub, "org/link", "--outdir", out, check=False)
    assert p.returncode == 1 and "symlink" in p.stderr
    assert not any(elsewhere.iterdir())


def test_pull_token_endpoint_and_errors(uaii_bin, hub, fixtures_dir, tmp_path):
    hub.add_dir("org/gated", hf_fixture(fixtures_dir, "gpt2"))
    hub.gated.add("org/gated")
    p = pull(uaii_bin, hub, "org/gated", "--outdir", tmp_path / "o1", check=False)
    assert p.returncode == 1 and "HF_TOKEN" in p.stderr
    pull(uaii_bin, hub, "org/gated", "--outdir", tmp_path / "o2", token="secret")
    assert all(r[3] == "Bearer secret" for r in hub.log if r[3])
    assert any(r[3] == "Bearer secret" for r in hub.log if "/resolve/" in r[1])
    p = pull(uaii_bin, hub, "org/missing", "--outdir", tmp_path / "o3", check=False)
    assert p.returncode == 1 and "404" in p.stderr
    p = pull(uaii_bin, hub, "../etc", "--outdir", tmp_path / "o4", check=False)
    assert p.returncode == 1 and "repository id" in p.stderr
    p = pull(uaii_bin, hub, "org/gated", check=False)
    assert p.returncode == 2 and "--outdir" in p.stderr


def test_pull_dry_run_reads_only_headers(uaii_bin, hub, fixtures_dir, tmp_path):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "llama_sharded"))
    out = tmp_path / "never"
    p = pull(uaii_bin, hub, "org/llama", "--dry-run", "--json", "--outdir", out)
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("pull.schema.json"))
    assert doc["supported"] and doc["family"] == "llama" and doc["estimate"]["fits"]
    assert doc["weight_files"] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert doc["estimate"]["kv_window"] == 512  # the model's context is below laptop's 2048
    # KV: 2 (K,V) * 2 layers * 2 kv heads * 16 head_dim * 2 bytes * 512 tokens
    assert doc["estimate"]["kv_bytes"] == 2 * 2 * 2 * 16 * 2 * 512
    assert not out.exists()
    st = [r for r in hub.log if r[1].endswith(".safetensors")]
    assert st and all(r[2] and r[2].startswith("bytes=") for r in st)  # range requests only
    assert doc["header_bytes_read"] < 20000


def test_pull_dry_run_says_when_it_does_not_fit(uaii_bin, hub, tmp_path):
    # A 6-layer "7B-like" model: the header declares ~3 GiB of BF16 weights; only the header is served.
    src = tmp_path / "big"
    src.mkdir()
    cfg = {"model_type": "llama", "vocab_size": 32768, "hidden_size": 4096, "num_hidden_layers": 1,
           "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
           "max_position_embeddings": 32768}
    (src / "config.json").write_text(json.dumps(cfg))
    E, F, V, KV, L = 4096, 14336, 32768, 1024, 6
    cfg["num_hidden_layers"] = L
    (src / "config.json").write_text(json.dumps(cfg))
    shapes = {"model.embed_tokens.weight": [V, E], "model.norm.weight": [E], "lm_head.weight": [V, E]}
    for l in range(L):
        p = f"model.layers.{l}."
        shapes.update({p + "input_layernorm.weight": [E], p + "post_attention_layernorm.weight": [E],
                       p + "self_attn.q_proj.weight": [E, E], p + "self_attn.k_proj.weight": [KV, E],
                       p + "self_attn.v_proj.weight": [KV, E], p + "self_attn.o_proj.weight": [E, E],
                       p + "mlp.gate_proj.weight": [F, E], p + "mlp.up_proj.weight": [F, E],
                       p + "mlp.down_proj.weight": [E, F]})
    header, off = {}, 0
    for name, shape in shapes.items():
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    (src / "model.safetensors").write_bytes(len(h).to_bytes(8, "little") + h)
    hub.add_dir("org/big", src)
    hub.fake_size[("org/big", "model.safetensors")] = 8 + len(h) + off
    p = pull(uaii_bin, hub, "org/big", "--dry-run", "--preset", "phone", check=False)
    assert p.returncode == 1 and "does NOT fit" in p.stdout and "phone" in p.stdout
    doc = json.loads(pull(uaii_bin, hub, "org/big", "--dry-run", "--preset", "laptop", "--json").stdout)
    assert doc["estimate"]["fits"] and doc["estimate"]["weight_bytes"] == off
    p = pull(uaii_bin, hub, "org/big", "--dry-run", "--preset", "tablet", check=False)
    assert p.returncode == 1 and "unknown preset" in p.stderr


def test_pull_dry_run_reports_unsupported(uaii_bin, hub, fixtures_dir):
    hub.add_dir("org/gptq", hf_fixture(fixtures_dir, "gptq"))
    p = pull(uaii_bin, hub, "org/gptq", "--dry-run", check=False)
    assert p.returncode == 1 and "convert to dense BF16/F16 or to GGUF" in p.stdout


def test_pull_does_not_send_the_token_to_a_redirect_target_on_another_host(uaii_bin, hub, fixtures_dir, tmp_path):
    # The Hub redirects large files to a CDN; the bearer token must stay with the Hub.
    hub.add_dir("org/gated", hf_fixture(fixtures_dir, "gpt2"))
    hub.gated.add("org/gated")
    port = hub.endpoint.rsplit(":", 1)[1]
    hub.redirect[("org/gated", "model.safetensors")] = (
        f"http://localhost:{port}/org/gated/resolve/main/model.safetensors?cdn=1")
    out = tmp_path / "out"
    p = pull(uaii_bin, hub, "org/gated", "--outdir", out, "--include", "model.safetensors", token="secret")
    assert p.returncode == 0, p.stderr
    assert hub.cdn_auth and all(a is None for a in hub.cdn_auth), hub.cdn_auth
    assert (out / "model.safetensors").read_bytes() == hub.repos["org/gated"]["model.safetensors"]


def _pull_with_tty_stderr(uaii_bin, hub, *args):
    """Runs `uaii pull` with stderr on a pseudo-terminal (where the progress bar draws)."""
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_TOKEN": "", "http_proxy": "", "https_proxy": "",
           "HTTP_PROXY": "", "HTTPS_PROXY": "", "ALL_PROXY": "", "no_proxy": "127.0.0.1"}
    return run_uaii_with_tty_stderr(uaii_bin, "pull", *args, env=env, timeout=120)


def test_pull_progress_bar_on_a_terminal_only(uaii_bin, hub, fixtures_dir, tmp_path):
    hub.add_dir("org/llama", hf_fixture(fixtures_dir, "llama"))
    _, err = _pull_with_tty_stderr(uaii_bin, hub, "org/llama", "--outdir", tmp_path / "a", "--include",
                                   "model.safetensors")
    # Per file: its name, a bar, bytes of the total, the rate and the time left.
    assert "model.safetensors" in err and "[" in err and "%" in err and "MiB /" in err
    assert "MiB/s ETA " in err, err
    # --json (and --quiet) draw none, even on a terminal.
    out, err = _pull_with_tty_stderr(uaii_bin, hub, "org/llama", "--outdir", tmp_path / "b", "--include",
                                     "model.safetensors", "--json")
    json.loads(out)
    assert "MiB/s" not in err and "[#" not in err
