"""The hooks as shipped: the published manifest, the store template's wiring, `pre-commit run`,
hooks/pre-receive in the package, and the cost of a check (what it reads, what it imports)."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from check_support import append, commit, committed, intake, jsonl, write
from helpers import git

ROOT = Path(__file__).resolve().parents[2]
LOG = "intake/alice/2026-01-01.jsonl"


def _yaml(path: Path):  # type: ignore[no-untyped-def]
    return YAML(typ="safe").load(path.read_text())


def test_the_published_manifest_is_valid_and_calls_the_console_script() -> None:
    manifest = ROOT / ".pre-commit-hooks.yaml"
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    hooks = {hook["id"]: hook for hook in _yaml(manifest)}
    assert set(hooks) == {"memstack-check", "memstack-check-push", "memstack-check-all"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] in scripts
        assert hook["pass_filenames"] is False and hook["always_run"] is True and hook["require_serial"] is True
    assert hooks["memstack-check"]["entry"] == "memstack check --staged"
    assert hooks["memstack-check"]["stages"] == ["pre-commit"]
    assert hooks["memstack-check-push"]["entry"] == "memstack check --pre-push"
    assert hooks["memstack-check-push"]["stages"] == ["pre-push"]


def test_the_store_template_wires_the_same_checks_offline() -> None:
    config_path = ROOT / "store-template" / ".pre-commit-config.yaml"
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(config_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = _yaml(config_path)
    assert config["default_install_hook_types"] == ["pre-commit", "pre-push"]
    [local] = config["repos"]
    assert local["repo"] == "local"
    published = {hook["id"]: hook for hook in _yaml(ROOT / ".pre-commit-hooks.yaml")}
    for hook in local["hooks"]:
        assert hook["language"] == "unsupported"
        # The launcher (the clone's memstack.python, else memstack on PATH) with the published hook's arguments.
        assert hook["entry"].startswith("sh -c ") and "git config --get memstack.python" in hook["entry"]
        assert "memstack " + " ".join(hook["args"]) == published[hook["id"]]["entry"]
        assert hook["stages"] == published[hook["id"]]["stages"]


def test_the_published_hooks_name_the_release_tag_to_pin() -> None:
    from memstack import __version__

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version == __version__
    assert f"rev: v{version}" in (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert f"rev: v{version}" in (ROOT / "README.md").read_text()


def test_init_installs_both_hook_types(repo: Path) -> None:
    for hook in ("pre-commit", "pre-push"):
        assert "pre-commit" in (repo / ".git" / "hooks" / hook).read_text()


def _pre_commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=root, capture_output=True, text=True)


def test_pre_commit_run_all_files_runs_the_check(repo: Path) -> None:
    proc = _pre_commit(repo, "--all-files")
    assert proc.returncode == 0, proc.stdout
    assert "memstack check (staged memory against HEAD)" in proc.stdout and "Passed" in proc.stdout
    write(repo, LOG, jsonl(intake(1, confidence=2)))
    git(repo, "add", "-A")
    proc = _pre_commit(repo, "--all-files")
    assert proc.returncode == 1
    assert f"{LOG}:1: I5 invalid intake record: confidence" in proc.stdout


def test_the_manual_stage_audits_every_file(repo: Path) -> None:
    write(repo, "store/c/k.json", '{"key": "k"}\n')
    assert commit(repo, "bad SOIL record", verify=False).returncode == 0
    proc = _pre_commit(repo, "--hook-stage", "manual", "memstack-check-all")
    assert proc.returncode == 1
    assert "store/c/k.json: I5 invalid soil record" in proc.stdout


def test_the_pre_receive_hook_ships_with_the_package() -> None:
    from memstack.base.resources import data_dir

    hook = data_dir("hooks") / "pre-receive"
    assert os.access(hook, os.X_OK)
    assert "memstack} check --pre-receive" in hook.read_text()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["hooks"] == "memstack/_data/hooks"


# ---- cost: O(size of the change) ----------------------------------------------------------------------

def test_a_no_op_check_imports_no_validator(repo: Path) -> None:
    """A hook pays its imports on every commit: jsonschema and ruamel only load when a file needs them."""
    code = ("import sys; from memstack.cli.main import main; rc = main(['check', '--staged']);"
            "print(rc, sorted(m for m in ('jsonschema', 'ruamel.yaml', 'git') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 []"


def test_a_staged_check_reads_only_the_changed_blobs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstack.integrity import check, derived
    from memstack.repo import objects

    write(repo, "intake/bob/2026-01-01.jsonl", jsonl(*(intake(n, agent="bob") for n in range(200))))
    write(repo, LOG, jsonl(intake(1)))
    committed(repo)
    append(repo, LOG, jsonl(intake(2), intake(3)))
    git(repo, "add", "-A")
    read: list[str] = []
    original = objects.CatFile.read_object

    def counting(self, spec):  # type: ignore[no-untyped-def]
        read.append(spec)
        return original(self, spec)

    def no_rebuild(self, source):  # type: ignore[no-untyped-def]
        raise AssertionError("a commit touching no derived file must not rebuild any")

    monkeypatch.setattr(objects.CatFile, "read_object", counting)
    monkeypatch.setattr(derived.Derived, "build", no_rebuild)
    report = check.staged(repo)
    assert report.violations == []
    old, new = (git(repo, "rev-parse", f"{rev}:{LOG}").stdout.strip() for rev in ("HEAD", ""))
    # the one changed log, old and new, and the store's config (its `secrets:` block says what I8 looks
    # for, once a step); bob's log and every other file untouched
    assert sorted(read) == sorted([old, new, ":memstack.yaml"])


def test_a_commit_touching_a_boot_file_rebuilds_from_that_commit(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstack.integrity import check, derived
    from memstack.repo.sources import GitSource

    seen = []
    original = derived.Derived.build

    def spying(self, source, paths):  # type: ignore[no-untyped-def]
        seen.append(source)
        return original(self, source, paths)

    monkeypatch.setattr(derived.Derived, "build", spying)
    (repo / "willow.md").write_text("# hand-written\n")
    git(repo, "add", "willow.md")
    report = check.staged(repo)
    assert [v.rule for v in report.violations] == ["I4"]
    assert len(seen) == 1 and isinstance(seen[0], GitSource) and seen[0].rev is None  # the index, once
