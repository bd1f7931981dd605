"""The repository checks itself with its own pre-commit configuration, and ships what it says."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import git

ROOT = Path(__file__).resolve().parent.parent


def test_own_pre_commit_hooks_pass_and_catch_a_broken_schema(tmp_path: Path) -> None:
    """The repository's own hooks pass on it: the schemas, the template's config and, where the dev extra
    is installed (`.ci/run` installs it), the gates (lint-imports, mypy, ruff); a hook whose tool is
    missing is skipped by name, as pre-commit's SKIP does."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".memstack", "__pycache__", ".hypothesis",
                                                                ".pytest_cache", "*.egg-info", ".benchmarks", ".venv",
                                                                ".mypy_cache", ".ruff_cache"))
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    missing = [tool for tool in ("lint-imports", "mypy", "ruff") if shutil.which(tool) is None]
    env = {**os.environ, "SKIP": ",".join(missing)}
    ok = subprocess.run(run, cwd=copy, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "schemas/ are valid JSON Schema" in ok.stdout and "Passed" in ok.stdout
    for hook in ("the layers", "mypy (types)", "ruff (lint)"):
        assert hook in ok.stdout  # run, or named as skipped
    (copy / "schemas/fact.schema.json").write_text('{"type": "objekt"}\n')
    git(copy, "add", "-A")
    # The hook that reads the schemas (the others passed on this tree above and it changed no Python).
    broken = subprocess.run([*run[:-1], "schemas-are-json-schema", "--all-files"], cwd=copy, capture_output=True,
                            text=True, env=env)
    assert broken.returncode == 1 and "schemas/fact.schema.json" in broken.stdout


def test_every_command_has_help_and_is_in_the_readme() -> None:
    from memstack.cli import main

    parser = main.parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    readme = (ROOT / "README.md").read_text()
    for name, command in sub.choices.items():
        assert f"memstack {name}" in readme, name
        assert command.format_help().strip(), name


MODULE_LINES = 360  # docs/architecture.md: a module holds one concept; past this, split it by concept


def test_no_module_is_over_the_line_limit() -> None:
    long = {str(path.relative_to(ROOT)): count for path in sorted((ROOT / "memstack").rglob("*.py"))
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split them by concept): {long}"
