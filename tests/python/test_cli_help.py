"""`uaii COMMAND --help` (or -h) prints that command's usage on stdout and exits 0."""
import subprocess

import pytest

COMMANDS = ["inspect", "template", "generate", "tokenize", "chat", "pull", "compile", "serve"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_exits_0(uaii_bin, command, flag):
    p = subprocess.run([str(uaii_bin), command, flag], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"usage: uaii {command}") and p.stderr == ""


def test_help_after_other_arguments_and_not_after_double_dash(uaii_bin):
    p = subprocess.run([str(uaii_bin), "pull", "org/model", "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("usage: uaii pull")
    # After "--" it is an argument like any other (here: text to tokenize).
    p = subprocess.run([str(uaii_bin), "tokenize", "encode", "--model", "/nonexistent.gguf", "--", "--help"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "usage" not in p.stdout
