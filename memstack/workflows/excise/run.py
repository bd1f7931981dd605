"""`memstack excise`: remove every forgotten record's content from every commit of every local branch,
commit an erasure receipt, clean the clone (docs/forgetting.md, "Excise").

Killed anywhere, the clone is as before or as after: the branches move in one transaction, and
`.git/memstack-excise.json` (written before anything else, removed last) tells a rerun where it stopped:
before the move it starts again from the old heads; after it, it finishes the clean-up.
"""

import os
from pathlib import Path
from typing import Any

from memstack.base import files, ids, jsonio
from memstack.base.errors import MemstackError
from memstack.base.times import now_ms
from memstack.integrity import check
from memstack.integrity.excision import Marker
from memstack.repo import git
from memstack.repo.store import folder_of
from memstack.workflows.excise import rewrite
from memstack.workflows.excise.plan import Plan, plan

STATE = "memstack-excise.json"  # in the git directory: the old heads, while an excise is under way
SALTS = ".memstack/excise"  # <receipt id>.salt: the salt of an excise's markers, never committed
KEPT_LOCAL = ("locks", "excise")  # what of .memstack/ stays; the rest (indexes, caches) is rebuilt from the files
STASH = "refs/stash"


def _gitdir(top: Path) -> Path:
    return Path(git.out(top, "rev-parse", "--absolute-git-dir").strip())


def _refuse_unless_ready(top: Path, gitdir: Path) -> None:
    found = git.under_way(top)
    if found is not None:
        raise MemstackError(f"excise: a git operation is in progress ({found[0]} in {gitdir}); finish or abort it"
                            " first")
    dirty = git.run(top, "status", "--porcelain", "--ignore-submodules", env=git.no_git_env()).stdout
    if dirty.strip():
        raise MemstackError("excise: the work tree has uncommitted changes; commit or discard them first"
                            " (`git status`)")


def _refuse_stashes(top: Path, drop_stashes: bool) -> None:
    """A stash made before the excise holds the old content; the clean-up (reflogs expired) would lose it
    without a word, so it is dropped only when asked (--drop-stashes)."""
    if drop_stashes or git.rev_parse(top, STASH) is None:
        return
    count = len(git.run(top, "reflog", "show", "--format=%H", STASH, ok=(0, 128)).stdout.split()) or 1
    raise MemstackError(f"excise: the repository has {count} stash(es), which would keep the content to excise"
                        " and which the clean-up would drop; `git stash pop` or `git stash drop` each first, or"
                        " pass --drop-stashes to drop them")


def _drop_stashes(top: Path) -> None:
    if git.rev_parse(top, STASH) is not None:
        git.run(top, "update-ref", "-d", STASH, env=git.no_git_env())  # the ref and its reflog


def _refuse_other_checkouts(top: Path, changed: set[str]) -> None:
    """A detached HEAD on the history to rewrite, or another work tree of this repository, would keep the
    old history checked out."""
    if not git.run(top, "symbolic-ref", "-q", "HEAD", ok=(0, 1)).stdout.strip() \
            and git.rev_parse(top, "HEAD") in changed:
        raise MemstackError("excise: HEAD is detached on a commit the rewrite changes; check out a branch first")
    listed = git.run(top, "worktree", "list", "--porcelain", env=git.no_git_env()).stdout.decode()
    others = [line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")][1:]
    if others:
        raise MemstackError(f"excise: the repository has another work tree ({others[0]}); remove it first"
                            " (`git worktree remove`), excise, then add it again")


_TRACKING = "%00".join(f"%({side}{field})" for side in ("push", "upstream") for field in (":short", ":remotename",
                                                                                         ":track,nobracket"))


def _refuse_unpushed(top: Path, heads: dict[str, str], changed: set[str]) -> None:
    """The receipt names each branch's head before the rewrite, and a guarded remote takes the rewrite only
    over that very head: a branch the rewrite changes must be where the remote branch it is pushed to (else
    its upstream) is, as last fetched, or the rewrite could never be pushed (the old commits are pruned by
    then). A branch that tracks another local branch, or nothing, pushes nowhere: it is not asked."""
    data = git.run(top, "for-each-ref", f"--format=%(refname)%00{_TRACKING}", "refs/heads/",
                   env=git.no_git_env()).stdout.decode("utf-8", "surrogateescape")
    for line in data.split("\n"):
        fields = line.split("\0")
        if len(fields) != 7 or fields[0] not in heads or heads[fields[0]] not in changed:
            continue
        target, remote, track = fields[1:4] if fields[1] else fields[4:7]
        if remote in ("", ".") or not track:
            continue
        branch = fields[0].removeprefix("refs/heads/")
        if track == "gone":
            raise MemstackError(f"excise: {target}, where {branch} goes, is not in this clone, so whether the remote"
                                f" holds {branch}'s head is not known: `git fetch` (or `git branch --unset-upstream`"
                                f" if the remote has no such branch), then excise (nothing was changed)")
        raise MemstackError(f"excise: {branch} is {track} of {target}; the erasure receipt names the head it replaces,"
                            " and the remote takes the rewrite only over that head: push (`git push`) or pull"
                            " (`git pull`) until the two agree, then excise (nothing was changed)")


def _other_refs(top: Path, changed: set[str]) -> list[str]:
    """Refs outside refs/heads/ and the remote-tracking refs that would keep the old history alive."""
    data = git.run(top, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname)").stdout.decode()
    held = []
    for line in data.splitlines():
        ref, sha, *peeled = line.split(" ")
        target = peeled[0] if peeled and peeled[0] else sha
        if not ref.startswith(("refs/heads/", "refs/remotes/", rewrite.NEW)) and ref != STASH and target in changed:
            held.append(ref)
    return held


def excise(root: Path, *, by: str, reason: str, dry_run: bool = False, drop_stashes: bool = False
           ) -> dict[str, Any]:
    top, folder = folder_of(root)
    gitdir = _gitdir(top)
    state_path = gitdir / STATE
    if state_path.exists():
        state = jsonio.loads(state_path.read_bytes(), str(state_path))
        if dry_run:
            raise MemstackError(f"excise: an excise was interrupted ({state_path}); run `memstack excise` to"
                                " finish it first")
        _refuse_stashes(top, drop_stashes or bool(state.get("drop_stashes")))
        return _resume(root, top, folder, gitdir, state)
    _refuse_unless_ready(top, gitdir)
    salt = os.urandom(32)
    found = plan(top, folder, Marker(salt), reason=reason)
    document = _document(found, dry_run)
    if found.records:
        _refuse_unpushed(top, found.heads, found.commits)
    if not found.records or dry_run:
        return document
    _refuse_stashes(top, drop_stashes)
    held = _other_refs(top, found.commits)
    if held:
        raise MemstackError(f"excise: {held[0]} holds commits the rewrite changes (a tag, a stash, a note):"
                            " delete it first, excise, then make it again on the new history")
    _refuse_other_checkouts(top, found.commits)
    receipt_id = ids.new_id(now_ms(), "excise")
    state = {"id": receipt_id, "stage": "rewriting", "old": found.heads, "records": found.records,
             "by": by, "reason": reason, "drop_stashes": drop_stashes}
    files.write_atomic(state_path, jsonio.dumps_line(state))
    salt_file = root / SALTS / f"{receipt_id}.salt"
    salt_file.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(salt_file, salt.hex().encode() + b"\n")
    rewrite.kill_point("planned")
    return _rewrite(root, top, folder, gitdir, state, found, document, salt)


def _rewrite(root: Path, top: Path, folder: str, gitdir: Path, state: dict[str, Any], found: Plan,
             document: dict[str, Any], salt: bytes) -> dict[str, Any]:
    rewritten = rewrite.filter_history(top, gitdir, found.heads, found.blobs)
    rewrite.kill_point("rewritten")
    changed = {ref: sha for ref, sha in rewritten.items() if sha != found.heads[ref]}
    if not changed:  # nothing of the history held the content (it was never committed)
        rewrite.drop_scratch(top, gitdir)
        (gitdir / STATE).unlink()
        return document
    receipt = {"id": state["id"], "by": state["by"], "reason": state["reason"], "excised_at": now_ms(),
               "records": found.records,
               "heads": {ref: {"old": found.heads[ref], "new": sha} for ref, sha in sorted(changed.items())}}
    line = rewrite.receipt_line(receipt)
    message = (f"memstack excise: {len(found.records)} forgotten record(s) removed from history\n\n"
               f"Memstack-Erasure: {state['id']}\n")
    tips = {ref: rewrite.commit_receipt(top, gitdir, folder, ref, sha, line, message) for ref, sha in changed.items()}
    for ref, tip in tips.items():
        report = check.commits(top, [tip], f"the rewritten history of {ref}", folder=folder)
        if report.violations:
            rewrite.drop_scratch(top, gitdir)
            (gitdir / STATE).unlink()
            first = report.violations[0]
            raise MemstackError(f"excise: the rewritten history of {ref} fails the store's checks ({first.path}:"
                                f"{first.line}: {first.rule} {first.what}); nothing was changed", code=1)
    state.update(stage="moving", new=tips, receipt=receipt)
    files.write_atomic(gitdir / STATE, jsonio.dumps_line(state))
    rewrite.kill_point("receipts")
    rewrite.move_refs(top, {ref: (found.heads[ref], tip) for ref, tip in tips.items()})
    rewrite.kill_point("moved")
    document.update(_finish(root, top, gitdir, state))
    document["salt"] = salt.hex()
    return document


def _resume(root: Path, top: Path, folder: str, gitdir: Path, state: dict[str, Any]) -> dict[str, Any]:
    """Finish an interrupted excise: after the move, the clean-up; before it, start again from the old heads."""
    heads = {ref: git.rev_parse(top, ref) for ref in state["old"]}
    if state.get("stage") == "moving" and all(heads[ref] == tip for ref, tip in state["new"].items()):
        document = {"records": state["records"], "resumed": True}
        document.update(_finish(root, top, gitdir, state))
        return document
    if state.get("stage") == "moving" and any(heads[ref] != state["old"][ref] for ref in state["new"]):
        raise MemstackError(f"excise: the branches moved since the excise was interrupted; remove {gitdir / STATE}"
                            " to start again")
    rewrite.drop_scratch(top, gitdir)
    (gitdir / STATE).unlink()
    (root / SALTS / f"{state['id']}.salt").unlink(missing_ok=True)
    document = excise(root, by=state["by"], reason=state["reason"], drop_stashes=bool(state.get("drop_stashes")))
    document["resumed"] = True
    return document


def _finish(root: Path, top: Path, gitdir: Path, state: dict[str, Any]) -> dict[str, Any]:
    """After the move: the work tree on the new head, the scratch, old remote-tracking refs, reflogs, old
    objects and the local indexes gone; what to push."""
    head = git.run(top, "symbolic-ref", "-q", "HEAD", ok=(0, 1)).stdout.decode().strip()
    if head in state["new"]:
        git.run(top, "reset", "-q", "--hard", "HEAD", env=git.no_git_env())
    rewrite.drop_scratch(top, gitdir)
    rewrite.kill_point("scratch")
    # The branches some remote is known to hold (a remote-tracking ref of that name, read before the stale ones go).
    held = {"refs/heads/" + ref.split("/", 3)[3] for ref in git.out(top, "for-each-ref", "--format=%(refname)",
                                                                    "refs/remotes/").split() if ref.count("/") >= 3}
    remotes = _stale_remotes(top, list(state["new"].values()))
    if remotes:
        git.run(top, "update-ref", "--stdin", input="".join(f"delete {r}\n" for r in remotes).encode(),
                env=git.no_git_env())
    if state.get("drop_stashes"):
        _drop_stashes(top)
    rewrite.clean_objects(top)
    files.clear_local(root, KEPT_LOCAL)
    (gitdir / STATE).unlink()
    receipt = state["receipt"]
    # A branch a remote holds goes over the head it held; one no remote is known to hold goes where the remote
    # has no such branch (an empty lease): its old head, which the remote never had, would be refused as stale.
    return {"receipt": receipt, "dropped_remote_refs": remotes,
            "push": [f"git push --force-with-lease={ref}:{heads['old'] if ref in held else ''} <remote> {ref}"
                     for ref, heads in receipt["heads"].items()]}


def _stale_remotes(top: Path, tips: list[str]) -> list[str]:
    """Remote-tracking refs on the old history (they would keep its objects; the next fetch brings them back
    rewritten)."""
    data = git.run(top, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes/").stdout.decode()
    stale = []
    for line in data.splitlines():
        ref, sha = line.split(" ")
        if ref.endswith("/HEAD"):
            continue
        if not any(git.is_ancestor(top, sha, tip) for tip in tips):
            stale.append(ref)
    return stale


def _document(found: Plan, dry_run: bool) -> dict[str, Any]:
    return {"records": found.records, "dry_run": dry_run, "commits": len(found.commits), "blobs": len(found.blobs),
            "paths": dict(sorted(found.paths.items())), "heads_before": found.heads}
