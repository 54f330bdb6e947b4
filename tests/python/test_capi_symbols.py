"""libuaii.so exports only the C ABI (uaii_*) and the public C++ API (namespace uaii)."""
import subprocess

from conftest import BUILD


def test_only_uaii_symbols_are_exported():
    lib = BUILD / "libuaii.so"
    assert lib.exists(), f"{lib} missing: build the uaii_shared target"
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    names = [line.split()[-1] for line in nm.stdout.splitlines() if line.strip()]
    demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                               check=True).stdout.splitlines()
    c_abi = [n for n in demangled if n.startswith("uaii_")]
    foreign = [n for n in demangled if not (n.startswith("uaii_") or n.startswith("uaii::"))]
    assert not foreign, f"symbols outside the uaii API are exported: {foreign[:20]}"
    for required in ["uaii_capi_version", "uaii_model_open", "uaii_session_generate", "uaii_session_chat",
                     "uaii_tokenize", "uaii_detokenize", "uaii_last_error", "uaii_status_string"]:
        assert required in c_abi, required
