"""The README's "Set up" block works when pasted as written, in one shell, in a fresh clone with no
virtual environment active (the block makes and activates its own, as a system Python under PEP 668
needs).

The block is read from README.md (not copied here), so a change that breaks it fails this test.
The clone is of the repository at HEAD (committed work only); the block's venv installs from the
package index, so this test reaches the network: it runs only with MEMSTACK_TEST_NETWORK=1 (`.ci/run`
sets it; tests/conftest.py). The one liberty: the block's last `pytest`
collects the suite instead of running it (a shell function named `pytest`, which the shell prefers to
the venv's command, adds `--collect-only`), since the whole suite runs already and would run this test
again.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FENCE, as_script, git

ROOT = Path(__file__).resolve().parent.parent


def section(text: str, heading: str) -> str:
    """The body of the README's `## heading` section, up to the next `## `."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"README.md has no '## {heading}' section"
    return match.group(1)


def setup_commands(readme: str) -> list[str]:
    """The commands of the Set up section's code blocks, in order (comments and blank lines dropped)."""
    blocks = FENCE.findall(section(readme, "Set up"))
    assert blocks, "the Set up section has no ```sh block"
    return [line for block in blocks for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_setup_block_is_read_from_the_readme() -> None:
    readme = "## Set up\n\n```sh\n# 1. one\nfirst && cd x\n\n# 2. two\nsecond\n```\n\n## Next\n```sh\nnot me\n```\n"
    assert setup_commands(readme) == ["first && cd x", "second"]
    script = as_script(["true", "false", "echo never"])
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 1 and "FAILED: false" in proc.stderr and "never" not in proc.stdout


@pytest.mark.slow
@pytest.mark.network
def test_the_setup_block_works_pasted_in_a_fresh_clone_and_venv(tmp_path: Path) -> None:
    commands = setup_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(ROOT), str(checkout))
    outer = str(Path(sys.executable).parent)  # the venv running this test: not the user's
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != outer)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON", "MEMSTACK", "VIRTUAL_ENV"))}
    env.update(PATH=path)
    shim = 'pytest() { python -m pytest --collect-only -q -p no:cacheprovider "$@"; }\n'
    proc = subprocess.run(["bash", "-c", shim + as_script(commands)], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", proc.stdout, re.M), proc.stdout[-2000:]  # step 2 ran in the checkout
    assert git(checkout, "status", "--porcelain").stdout == ""  # no store inside the checkout (.venv is ignored)
    assert (checkout / ".venv" / "bin" / "memstack").is_file()  # installed in the block's own venv
    store = tmp_path / "my-memory"
    assert (store / "memstack.yaml").is_file()
    assert git(store, "log", "--format=%s").stdout.strip() == "memstack init"
    written = "".join(p.read_text() for p in (store / "intake" / "claude").glob("*.jsonl"))
    assert "The test suite runs with pytest -q" in written
