"""`memstack init` and `memstack install`: a real store, real git, the real hook."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from helpers import MEMSTACK, git, memstack, tree_snapshot
from memstack.base import resources
from memstack.workflows import install


def test_init_makes_a_committed_store_with_the_hook_installed(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    result = memstack("init", str(root), "--agent", "alice", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["created"] is True and report["agents"] == ["alice"]
    for rel in ("memstack.yaml", ".pre-commit-config.yaml", ".gitattributes", ".gitignore", "README.md",
                "willow.md", "kb/binder.jsonl", "identity/alice.md"):
        assert (root / rel).is_file(), rel
    assert (root / ".git" / "hooks" / "pre-commit").is_file()
    log = git(root, "log", "--format=%s").stdout.splitlines()
    assert log == ["memstack init"]
    assert git(root, "status", "--porcelain").stdout == ""
    assert "default_agent: alice" in (root / "memstack.yaml").read_text()


def test_a_plain_git_commit_in_the_store_runs_memstacks_hook(store: Path) -> None:
    assert memstack("intake", "write", "--content", "hello", cwd=store).returncode == 0
    git(store, "add", "-A")
    commit = git(store, "commit", "-m", "first memory")
    assert "memstack check" in commit.stdout + commit.stderr  # pre-commit named the hook it ran
    assert git(store, "log", "-1", "--format=%s").stdout.strip() == "first memory"


def test_init_again_changes_nothing_and_says_so(store: Path) -> None:
    before = tree_snapshot(store)
    head = git(store, "rev-parse", "HEAD").stdout
    result = memstack("init", str(store), "--agent", "carol")
    assert result.returncode == 0
    assert "already a memstack store" in result.stdout and "nothing changed" in result.stdout
    assert tree_snapshot(store) == before
    assert git(store, "rev-parse", "HEAD").stdout == head


def test_init_refuses_to_overwrite_a_file_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    root.mkdir()
    (root / "README.md").write_text("my own readme\n")
    result = memstack("init", str(root))
    assert result.returncode == 2
    assert "README.md" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["README.md"]
    assert (root / "README.md").read_text() == "my own readme\n"


def test_init_with_a_bad_agent_name_writes_nothing(tmp_path: Path) -> None:
    result = memstack("init", str(tmp_path / "x"), "--agent", "../evil")
    assert result.returncode == 2 and "agent" in result.stderr
    assert not (tmp_path / "x").exists()


def test_config_comments_survive_an_edit(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert memstack("init", str(root), "--agent", "alice", "--agent", "bob").returncode == 0
    text = (root / "memstack.yaml").read_text()
    assert "# Agents that write to this store" in text
    assert "# At most this many facts from `memstack recall`." in text
    assert "- alice" in text and "- bob" in text


def test_install_in_a_fresh_clone_installs_the_hooks(store: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    assert not (clone / ".git" / "hooks" / "pre-commit").exists()
    result = memstack("install", cwd=clone)
    assert result.returncode == 0, result.stderr
    assert (clone / ".git" / "hooks" / "pre-commit").is_file()
    again = memstack("install", cwd=clone)
    assert again.returncode == 0


def test_install_outside_a_store_is_bad_usage(tmp_path: Path) -> None:
    result = memstack("install", cwd=tmp_path)
    assert result.returncode == 2 and "no memstack store" in result.stderr


def test_init_without_a_git_identity_commits_and_says_how_to_set_one(tmp_path: Path) -> None:
    """A fresh HOME with no user.name/email: init still makes its first commit (as memstack), and says how
    to set an identity, since the user's own next `git commit` would fail with "Author identity unknown"."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_")) and k != "EMAIL"}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    made = subprocess.run([MEMSTACK, "init", "mem", "--agent", "claude"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("new memstack store at"), made.stdout
    assert 'git config --global user.name "Your Name"' in made.stderr, made.stderr
    assert "git config --global user.email you@example.com" in made.stderr, made.stderr
    root = tmp_path / "mem"
    assert git(root, "log", "--format=%an <%ae>").stdout.strip() == "memstack <memstack@localhost>"
    # the user's own commit fails until they do as told, then works
    (root / "note.txt").write_text("x\n")
    refused = subprocess.run(["git", "commit", "-qam", "x", "--allow-empty"], cwd=root, env=env,
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "Author identity unknown" in refused.stderr
    for key, value in (("user.name", "Your Name"), ("user.email", "you@example.com")):
        subprocess.run(["git", "config", "--global", key, value], cwd=root, env=env, check=True)
    again = subprocess.run([MEMSTACK, "init", "other"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "user.name" not in again.stderr, again.stderr  # an identity: no note
    assert git(tmp_path / "other", "log", "--format=%an").stdout.strip() == "Your Name"


def test_install_in_a_bare_repository_installs_the_pre_receive_hook(tmp_path: Path, store: Path) -> None:
    """`memstack install` in a bare remote: memstack's server hook, executable, idempotent, guarding pushes;
    a pre-receive hook of the administrator's own is refused and left; a HEAD naming a missing branch is named."""
    from memstack.workflows import serverhook

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=master", str(remote)], check=True)
    made = memstack("--store", str(remote), "install")
    hook = remote / "hooks" / "pre-receive"
    assert made.returncode == 0 and made.stdout.strip() == f"installed {hook}", made.stdout + made.stderr
    assert hook.read_bytes() == serverhook.hook_text() and os.access(hook, os.X_OK)  # the shipped one, pinned
    assert "HEAD names master, a branch this remote lacks" in made.stderr, made.stderr
    again = memstack("install", cwd=remote)  # run inside it: the same
    assert again.returncode == 0 and again.stdout.strip() == f"already in place: {hook}", again.stdout
    git(tmp_path, "--git-dir", str(remote), "symbolic-ref", "HEAD", "refs/heads/main")
    assert "HEAD names" not in memstack("install", cwd=remote).stderr  # fixed as told: no warning
    # the hook guards: a commit that rewrites a record, pushed past the clone's own hook, is declined
    git(store, "remote", "add", "origin", str(remote))
    git(store, "push", "-q", "origin", "main")
    assert memstack("intake", "write", "--content", "kept", cwd=store).returncode == 0
    git(store, "add", "-A")
    git(store, "commit", "-qm", "one record")
    day = next((store / "intake" / "alice").glob("*.jsonl"))
    day.write_text(day.read_text().replace("kept", "changed"))
    git(store, "commit", "-qam", "rewrite", "--no-verify")
    pushed = git(store, "push", "-q", "--no-verify", "origin", "main", check=False)
    assert pushed.returncode != 0 and "pre-receive hook declined" in pushed.stderr, pushed.stderr
    hook.write_text("#!/bin/sh\nexit 0\n")  # the administrator's own hook
    refused = memstack("install", cwd=remote)
    assert refused.returncode == 2 and "is not memstack's: left as it is" in refused.stderr, refused.stderr
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"


def test_init_leaves_out_the_caches_a_run_left_in_the_template(tmp_path: Path, monkeypatch: Any) -> None:
    """A memstack command run in memstack's own checkout takes store-template/ for the repository's one store and
    leaves its git-ignored caches there: a new store starts without them."""
    template = tmp_path / "store-template"
    shutil.copytree(resources.data_dir("store-template"), template)
    (template / ".memstack").mkdir(exist_ok=True)
    (template / ".memstack" / "left-by-a-run.json").write_text('{"index": "of another store"}')
    monkeypatch.setattr(install, "data_dir", lambda name: template if name == "store-template"
                        else resources.data_dir(name))
    root = tmp_path / "mem"
    install.init(root, ["alice"])
    assert (root / "memstack.yaml").is_file()  # the template's files were copied
    assert not (root / ".memstack" / "left-by-a-run.json").exists()
    assert git(root, "status", "--porcelain").stdout == ""
