"""libuaii.so exports only the C ABI (uaii_* functions of capi/uaii.h)."""
import re
import subprocess

from conftest import BUILD, REPO as ROOT


def exported():
    lib = BUILD / "libuaii.so"
    assert lib.exists(), f"{lib} missing: build the uaii_shared target"
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in nm.stdout.splitlines() if line.strip()]


def test_only_the_c_abi_is_exported():
    names = exported()
    foreign = [n for n in names if not n.startswith("uaii_")]
    assert not foreign, f"symbols outside the C ABI are exported: {foreign[:20]}"


def test_every_declared_function_is_exported():
    header = (ROOT / "capi" / "uaii.h").read_text()
    declared = set(re.findall(r"UAII_API\s+[^;(]*?\b(uaii_\w+)\s*\(", header))
    assert {"uaii_capi_version", "uaii_model_open", "uaii_model_plan_json", "uaii_session_generate",
            "uaii_session_chat"} <= declared
    names = set(exported())
    assert declared <= names, f"declared but not exported: {sorted(declared - names)}"
    assert names <= declared, f"exported but not declared: {sorted(names - declared)}"
