"""docs/anchors.md's worked example works when pasted as written, in one shell (read from the page, not
copied here, so a change that breaks it fails this test)."""

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import FENCE, as_script

PAGE = Path(__file__).resolve().parents[2] / "docs" / "anchors.md"


def test_the_worked_example_runs_as_pasted(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = re.search(r"^## A worked example\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "docs/anchors.md has no '## A worked example'"
    example, shown, closing = FENCE.findall(section.group(1))
    env = {**os.environ, "TMPDIR": str(tmp_path),
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])}
    proc = subprocess.run(["bash", "-c", as_script((example + closing).strip().splitlines())], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"path": "deploy.py"' in proc.stdout and '"start": 5' in proc.stdout
    for line in shown.splitlines():  # what the page shows is what the commands print (ids shortened there)
        assert re.sub(r"01a2\.\.\.", "", line) in re.sub(r"\b[0-9a-f]{32}\b", "", proc.stdout), line
    assert proc.stdout.rstrip().endswith("no anchored memory of status drifted")
