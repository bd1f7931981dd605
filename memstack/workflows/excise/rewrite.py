"""The rewrite of an excise: git-filter-repo writes the excised history into a scratch repository inside
`.git/` (the clone's own refs are not touched), the receipt is committed on top of each rewritten head,
and one `git update-ref --stdin` transaction moves every branch at once (docs/forgetting.md, "Excise")."""

import contextlib
import io
import os
import shutil
from pathlib import Path

import git_filter_repo as gfr

from memstack.base import jsonio, layout
from memstack.base.errors import MemstackError
from memstack.repo import git
from memstack.repo.objects import blob_id

NEW = "refs/memstack-excise/new/"  # the rewritten heads, fetched from the scratch repository (temporary)


def scratch(gitdir: Path) -> Path:
    return gitdir / "memstack-excise"


def filter_history(top: Path, gitdir: Path, heads: dict[str, str], blobs: dict[str, bytes]) -> dict[str, str]:
    """Rewrite `heads`' history with every blob of `blobs` (old id -> new bytes) replaced, everything else
    kept (no commit pruned, messages' commit ids mapped); the new heads, by ref.

    git-filter-repo runs in a scratch repository whose object store is this clone's (a symbolic link) and whose
    refs are only the heads: filtering in place, it streams no file's content (`fast-export --no-data`), only
    the commits, and swaps the blob ids of `blobs` in their file changes for those of the new bytes, written
    first; the new objects land in this clone's store, so nothing is fetched back. (Streaming every blob of
    every commit through a callback, then fetching the new history, took most of an excise's time.)"""
    target = scratch(gitdir) / "rewrite.git"
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    env = git.no_git_env()
    git.run(top, "init", "-q", "--bare", str(target), env=env)
    shutil.rmtree(target / "objects")  # this clone's own object store: nothing to fetch back afterwards
    (target / "objects").symlink_to((top / git.out(top, "rev-parse", "--git-path", "objects").strip()).resolve())
    for key in ("gc.auto", "gc.autoPackLimit"):  # a gc there would prune this clone's objects its refs miss
        git.run(target, "config", key, "0", env=env)
    git.run(target, "update-ref", "--stdin", input="".join(f"update {ref} {sha}\n" for ref, sha in heads.items())
            .encode(), env=env)
    git.run(target, "fast-import", "--quiet", input=b"".join(b"blob\ndata %d\n%s\n" % (len(data), data)
                                                             for data in blobs.values()), env=env)
    wanted = {sha.encode(): blob_id(data, sha).encode() for sha, data in blobs.items()}

    def replace(commit: "gfr.Commit", _metadata: object) -> None:
        for change in commit.file_changes:
            new = wanted.get(change.blob_id) if change.type == b"M" else None
            if new is not None:
                change.blob_id = new

    args = gfr.FilteringOptions.parse_args([
        "--source", str(target), "--target", str(target), "--force", "--quiet",
        "--prune-empty", "never", "--prune-degenerate", "never", "--preserve-commit-hashes",
        "--replace-refs", "delete-no-add", "--refs", *heads])
    said = io.StringIO()  # its progress lines ("New history written ..."), shown only when it stops
    try:
        with contextlib.redirect_stdout(said):
            gfr.RepoFilter(args, commit_callback=replace).run()
    except SystemExit as exc:
        detail = " ".join(f"{said.getvalue().strip()} {exc.code}".split())
        raise MemstackError(f"excise: git filter-repo stopped ({detail}); nothing of this clone was changed") \
            from None
    rewritten = {ref: git.out(target, "rev-parse", ref).strip() for ref in heads}
    git.run(top, "update-ref", "--stdin", input="".join(f"update {NEW}{ref} {sha}\n" for ref, sha in rewritten.items())
            .encode(), env=env)  # held by refs of this clone until the move (a gc keeps them)
    return rewritten


def commit_receipt(top: Path, gitdir: Path, folder: str, ref: str, head: str, line: bytes, message: str) -> str:
    """A commit on `head` whose tree is `head`'s with `line` appended to kb/erasures.jsonl."""
    path = folder + layout.ERASURES_LOG
    env = git.commit_env(top)
    env["GIT_INDEX_FILE"] = str(scratch(gitdir) / "index")
    old = git.run(top, "cat-file", "blob", f"{head}:{path}", env=env).stdout \
        if git.rev_parse(top, f"{head}:{path}") else b""
    blob = git.run(top, "hash-object", "-w", "--stdin", input=old + line, env=env).stdout.decode().strip()
    git.run(top, "read-tree", head, env=env)
    git.run(top, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git.run(top, "write-tree", env=env).stdout.decode().strip()
    return git.run(top, "commit-tree", tree, "-p", head, "-m", message, env=env).stdout.decode().strip()


def receipt_line(receipt: dict[str, object]) -> bytes:
    return jsonio.dumps_line(receipt)


def move_refs(top: Path, moves: dict[str, tuple[str, str]]) -> None:
    """Every ref of `moves` (ref -> (old, new)) moved at once, or none (one update-ref transaction)."""
    commands = "start\n" + "".join(f"update {ref} {new} {old}\n" for ref, (old, new) in moves.items()) + "commit\n"
    git.run(top, "update-ref", "--stdin", input=commands.encode(), env=git.no_git_env())


def drop_scratch(top: Path, gitdir: Path) -> None:
    refs = git.run(top, "for-each-ref", "--format=%(refname)", NEW).stdout.decode().split()
    if refs:
        git.run(top, "update-ref", "--stdin", input="".join(f"delete {r}\n" for r in refs).encode(),
                env=git.no_git_env())
    shutil.rmtree(scratch(gitdir), ignore_errors=True)


def clean_objects(top: Path) -> None:
    """The old history's objects gone from this clone: reflogs expired, unreachable objects pruned."""
    env = git.no_git_env()
    git.run(top, "reflog", "expire", "--expire=now", "--all", env=env)
    git.run(top, "gc", "--prune=now", "--quiet", env=env)


def kill_point(stage: str) -> None:
    """A test's hook: MEMSTACK_EXCISE_KILL_AT=<stage> kills this process there (tests/workflows/test_excise.py)."""
    if os.environ.get("MEMSTACK_EXCISE_KILL_AT") == stage:
        os.kill(os.getpid(), 9)
