"""`memstack sync` after an excise: this clone's own commits moved onto the rewritten history (docs/sync.md).

When the fetched branch no longer holds the commit this clone last fetched (its
history was rewritten), sync looks for the reason in the fetched tip's
`kb/erasures.jsonl`: a receipt added since, naming the branch (integrity/prerewrite.py).
Without one it refuses, and the remote-tracking branch is put back: nothing changes.
With one:

1. the clone's own commits (on HEAD, in neither the rewritten history nor the old
   one) are replayed, oldest first, onto the fetched tip, in a temporary index (the
   work tree and the branch do not move yet). Each file a commit changed is merged
   as the merge driver merges it (kb/merge.py), from the commit's parent to the
   commit, into the rewritten file, with the lines of excised records left out of
   both: store files change by appends and closings, so this applies, and nothing
   excised comes back. Derived files are left to sync's rebuild. A commit that
   changes an excised record, or a file the rewrite changed in a way that cannot be
   merged, stops the sync before anything moved;
2. the replayed commits are checked as pre-receive checks a push (`check.commits`);
3. the branch moves to the last one (`git reset --keep`: other uncommitted files stay);
4. purge: ORIG_HEAD dropped, reflogs expired (the stash's aside: it is the user's),
   `git gc --prune=now` (the old history's objects leave the clone), and what
   `.memstack/` holds dropped (indexes, caches; as excise leaves it): rebuilt on next use.
"""

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from memstack.base import files, forgotten, layout
from memstack.base.receipts import Receipt
from memstack.integrity import check, prerewrite
from memstack.kb import merge
from memstack.repo import diffs, git
from memstack.repo.store import folder_of
from memstack.workflows.excise import run as excise_run

MIN_SAID = 8  # characters: a shorter value of an excised record (a tier, a name) is not looked for when replaying
# What of `.memstack/` stays after an excise (as `memstack excise` leaves it): the rest is rebuilt on next use.
KEPT_LOCAL = (*excise_run.KEPT_LOCAL, "pending")  # pending: the fact store's record of a write under way


class Refused(Exception):
    """Why the move stopped (`reason`), what to do (`hint`), what git said (`said`): as sync's own stops."""

    def __init__(self, reason: str, hint: str, said: str = "") -> None:
        super().__init__(reason)
        self.reason, self.hint, self.said = reason, hint, said


def _git(top: Path, env: dict[str, str], *args: str, ok: Sequence[int] = (0,), data: bytes | None = None) -> str:
    return git.run(top, *args, env=env, ok=ok, input=data).stdout.decode().strip()


def receipts_for(top: Path, folder: str, env: dict[str, str], branch: str, before: str | None,
                 theirs: str) -> list[Receipt] | None:
    """The receipts that explain a rewrite of `branch` (fetched tip `theirs`, last fetched `before`): None when
    the branch was not rewritten; Refused when it was, without a receipt added since."""
    ref = f"refs/heads/{branch}"
    known = {r.id for r in prerewrite.at(top, before, folder, env)} if before else set()
    new = [r for r in prerewrite.at(top, theirs, folder, env) if r.id not in known and ref in r.heads]
    if before is not None:
        if git.run(top, "merge-base", "--is-ancestor", before, theirs, env=env, ok=(0, 1)).returncode == 0:
            return None
    elif not any(git.is_ancestor(top, old, "HEAD") for old in prerewrite.present(top, _olds(new, ref), env)):
        return None
    if not new:
        raise Refused(f"the remote's history was rewritten without an erasure receipt ({ref} no longer holds"
                      f" {before[:12] if before else 'this branch'}), so nothing was merged",
                      "ask whoever rewrote it; a rewrite made by `memstack excise` carries one (docs/forgetting.md)")
    return new


def last_fetched(top: Path, folder: str, env: dict[str, str], branch: str, fetched: str | None,
                 theirs: str) -> str | None:
    """The tip of `branch` this clone fetched before `theirs`: `fetched` (the remote-tracking branch before this
    sync fetched); or, when a `git fetch` run by hand already brought an excise's rewrite (`theirs` holds a
    receipt naming the branch that HEAD lacks), the newest commit of HEAD's old history that the rewrite
    replaced: one of HEAD's commits that `theirs` lacks with the author, committer, dates and message of one of
    `theirs`' (a rewrite keeps them, integrity/erasure.py). The rewrite is then recognised as if this sync had
    fetched it."""
    if fetched is not None and git.run(top, "merge-base", "--is-ancestor", fetched, theirs, env=env,
                                       ok=(0, 1, 128)).returncode != 0:
        return fetched
    ref = f"refs/heads/{branch}"
    here = {r.id for r in prerewrite.at(top, "HEAD", folder, env)}
    if not any(r.id not in here and ref in r.heads for r in prerewrite.at(top, theirs, folder, env)):
        return fetched
    rewritten = set(_metadata(top, env, theirs, "--not", "HEAD").values())
    return next((sha for sha, meta in _metadata(top, env, "HEAD", "--not", theirs).items() if meta in rewritten),
                fetched)


def _metadata(top: Path, env: dict[str, str], *revs: str) -> dict[str, str]:
    """Each commit of `revs`, newest first, and what a rewrite keeps of it (author, committer, dates, message)."""
    listed = _git(top, env, "log", "--topo-order", "--date=raw", "--format=%x01%H%x00%an%x00%ae%x00%ad%x00%cn"
                  "%x00%ce%x00%cd%x00%B", *revs, "--")
    entries = (entry.partition("\0") for entry in listed.split("\x01")[1:])
    return {sha: meta.rstrip() for sha, _, meta in entries}  # rstrip: git's output is stripped after the last


def excised_here(top: Path, folder: str, env: dict[str, str], branch: str, theirs: str) -> Receipt | None:
    """A receipt HEAD holds and `theirs` does not, whose old head of `branch` holds `theirs`: this clone ran the
    excise and the remote still has the old history (merging it would bring the content back)."""
    ref = f"refs/heads/{branch}"
    known = {r.id for r in prerewrite.at(top, theirs, folder, env)}
    for receipt in prerewrite.at(top, "HEAD", folder, env):
        if receipt.id in known or ref not in receipt.heads:
            continue
        old = receipt.heads[ref][0]
        if old == theirs or (prerewrite.present(top, [old], env) and git.is_ancestor(top, theirs, old)):
            return receipt
    return None


def still_old(top: Path, folder: str, env: dict[str, str], branch: str, tracking: str) -> Receipt | None:
    """The receipt (of those HEAD and the remote-tracking branch hold) whose pre-rewrite history HEAD holds
    beyond the remote-tracking branch (`prerewrite.stale_commit`, as pre-receive would find it): sync never
    pushes it."""
    ref = f"refs/heads/{branch}"
    tips = ["HEAD", tracking] if git.rev_parse(top, tracking) else ["HEAD"]
    receipts = list({r.id: r for tip in tips for r in prerewrite.at(top, tip, folder, env) if ref in r.heads}.values())
    if not receipts:
        return None
    found = prerewrite.stale_commit(top, "HEAD", tips[1:], receipts, tips[1:] or tips, folder, env)
    return found[1] if found else None


def _olds(receipts: Sequence[Receipt], ref: str) -> list[str]:
    return [r.heads[ref][0] for r in receipts if ref in r.heads]


def move(store: Path, env: dict[str, str], branch: str, before: str | None, theirs: str,
         receipts: Sequence[Receipt]) -> dict[str, Any]:
    """Replay this clone's own commits onto `theirs`, move the branch there, purge the old history."""
    top, folder = folder_of(store)
    ref = f"refs/heads/{branch}"
    head = _git(top, env, "rev-parse", "HEAD")
    olds = prerewrite.present(top, [*_olds(receipts, ref), *([before] if before else [])], env)
    own = _git(top, env, "rev-list", "--reverse", "--topo-order", "--no-merges", "HEAD", "--not", theirs,
               *olds).split()
    excised = {record for r in receipts for record in r.records}
    said = _said(top, env, olds, excised) if own else {}
    replayed = _replay(top, folder, env, theirs, own, excised, said) if own else []
    tip = replayed[-1][1] if replayed else theirs
    if replayed:
        report = check.commits(top, [tip, "--not", theirs], "the replayed commits", folder=folder)
        bad = [f"commit {r.commit[:12] if r.commit else '?'}: {v}" for r in report.results for v in r.violations]
        if bad:
            raise Refused("the commits replayed onto the rewritten history break an invariant, so nothing moved",
                          "fix them on this branch (`memstack check --range`), then sync again", "; ".join(bad[:3]))
    moved = git.run(top, "reset", "-q", "--keep", tip, env=env, ok=range(256))
    if moved.returncode != 0:
        raise Refused("uncommitted changes in the work tree are in the way of the rewritten history, so nothing"
                      " moved", "commit or set aside those files, then sync again",
                      moved.stderr.decode(errors="replace").strip())
    _purge(top, store, env)
    return {"receipts": [r.id for r in receipts], "from": head, "to": tip, "replayed": len(replayed),
            "dropped": len(own) - len(replayed)}


def _said(top: Path, env: dict[str, str], olds: Sequence[str], excised: set[str]) -> dict[bytes, str]:
    """What the excised records said, as the old history here holds them: each text value of theirs (of
    MIN_SAID characters or more, outside the fields a forgotten record keeps), JSON-encoded, and its record."""
    said: dict[bytes, str] = {}
    for record in sorted(r for r in excised if "/" not in r):
        for rev in olds:
            found = git.run(top, "grep", "-h", "-F", "-e", record, rev, "--", "*.jsonl", env=env, ok=(0, 1)).stdout
            for line in found.splitlines():
                try:
                    fields = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(fields, dict) or fields.get("id") != record:
                    continue
                for key, value in fields.items():
                    texts = value if isinstance(value, list) else [value]
                    for text in texts:
                        if key not in forgotten.KEPT and isinstance(text, str) and len(text) >= MIN_SAID:
                            said[orjson.dumps(text)[1:-1]] = record
    return said


def _replay(top: Path, folder: str, env: dict[str, str], theirs: str, own: Sequence[str],
            excised: set[str], said: dict[bytes, str]) -> list[tuple[str, str]]:
    """Each of `own` replayed onto `theirs` in a temporary index: [(old commit, new commit)]; Refused on
    what cannot be replayed (nothing has moved then)."""
    scratch = Path(tempfile.mkdtemp(prefix="memstack-resync-"))
    index_env = {**env, "GIT_INDEX_FILE": str(scratch / "index")}
    try:
        _git(top, index_env, "read-tree", theirs)
        tip, done = theirs, []
        for sha in own:
            trees = _git(top, env, "rev-parse", f"{sha}^^{{tree}}", f"{sha}^{{tree}}").split()
            for change in diffs.tree_diffs(top, [(trees[0], trees[1])])[0]:
                _apply(top, folder, index_env, sha, change, excised, said)
            tree = _git(top, index_env, "write-tree")
            if tree == _git(top, env, "rev-parse", f"{tip}^{{tree}}"):
                continue  # nothing of it is left (derived files only): sync's rebuild makes them again
            fields = _git(top, env, "log", "-1", "--format=%an%x00%ae%x00%ad", "--date=raw", sha).split("\0")
            message = git.run(top, "log", "-1", "--format=%B", sha, env=env).stdout
            author = {"GIT_AUTHOR_NAME": fields[0], "GIT_AUTHOR_EMAIL": fields[1], "GIT_AUTHOR_DATE": fields[2]}
            tip = _git(top, {**env, **author}, "commit-tree", tree, "-p", tip, "-F", "-", data=message)
            done.append((sha, tip))
        return done
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _apply(top: Path, folder: str, env: dict[str, str], sha: str, change: diffs.Change, excised: set[str],
           said: dict[bytes, str]) -> None:
    """One file of commit `sha` merged into the temporary index (`env`)."""
    inside = change.path.startswith(folder)
    place = layout.classify(change.path[len(folder):]) if inside else layout.Place(layout.OTHER)
    if place.kind in layout.DERIVED:
        return
    staged = _git(top, env, "ls-files", "-s", "--", change.path).split()
    ours = git.run(top, "cat-file", "blob", staged[1], env=env).stdout if staged else None
    base = _blob(top, env, change.old_sha)
    theirs = _blob(top, env, change.new_sha)
    title = _git(top, env, "log", "-1", "--format=%h %s", sha)
    if place.kind in (*layout.LOGS, layout.FACTS):
        base_kept, touched = _without(base or b"", excised)
        theirs_kept, touched_too = _without(theirs or b"", excised)
        if touched != touched_too:
            which = sorted(orjson.loads(line)["id"] for line in touched ^ touched_too)[0]
            raise Refused(f"commit {title} changes the record {which} of {change.path}, which was excised, so"
                          " nothing moved", _KEEP)
        try:
            merged = merge.merge(change.path[len(folder):], base_kept, ours or b"", theirs_kept)
        except merge.Unmergeable as why:
            raise Refused(f"commit {title} cannot be replayed onto the rewritten {change.path} ({why}), so nothing"
                          " moved", _KEEP) from None
        if merged.conflicts:
            raise Refused(f"commit {title} cannot be replayed onto the rewritten {change.path}"
                          f" ({'; '.join(merged.conflicts)}), so nothing moved", _KEEP)
        result: bytes | None = merged.data
    elif ours == base or ours == theirs:
        result = theirs
    else:
        raise Refused(f"commit {title} changes {change.path}, which the rewritten history changed too, so nothing"
                      " moved", _KEEP)
    added = (result or b"")[len(ours or b""):] if result and ours and result.startswith(ours) else (result or b"")
    copied = next((record for text, record in said.items() if text in added), None)
    if copied is not None:
        raise Refused(f"commit {title} writes what the excised record {copied} said into {change.path} (promoted"
                      " or copied from it before it was forgotten), so nothing moved", _KEEP)
    if result is None:
        _git(top, env, "update-index", "--force-remove", "--", change.path)
        return
    blob = _git(top, env, "hash-object", "-w", "--stdin", data=result)
    mode = change.new_mode if change.new_mode != "000000" else "100644"
    _git(top, env, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{change.path}")


_KEEP = ("your commits stay on this branch, unpushed; copy what you still need from them (`git show`) into a clone"
         " of the rewritten history, and never push this one")


def _blob(top: Path, env: dict[str, str], sha: str) -> bytes | None:
    return None if git.is_zero(sha) else git.run(top, "cat-file", "blob", sha, env=env).stdout


def _without(data: bytes, excised: set[str]) -> tuple[bytes, set[bytes]]:
    """`data` without the lines of excised records, and those lines."""
    kept, dropped = [], set()
    for line in data.splitlines(keepends=True):
        if any(record in line.decode(errors="replace") for record in excised):
            try:
                record_id = orjson.loads(line).get("id")
            except (orjson.JSONDecodeError, AttributeError):
                record_id = None
            if record_id in excised:
                dropped.add(line)
                continue
        kept.append(line)
    return b"".join(kept), dropped


def drop_unreachable(top: Path, env: dict[str, str]) -> None:
    """Objects no ref reaches out of this clone: ORIG_HEAD dropped, reflogs expired (the stash's kept: it is the
    user's), `git gc --prune=now`."""
    _git(top, env, "update-ref", "-d", "ORIG_HEAD", ok=(0, 1))
    refs = [ref for ref in _git(top, env, "for-each-ref", "--format=%(refname)").split() if ref != "refs/stash"]
    _git(top, env, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "HEAD", *refs)
    _git(top, env, "gc", "-q", "--prune=now")


def _purge(top: Path, store: Path, env: dict[str, str]) -> None:
    """The old history's objects out of this clone, and the local indexes that hold content dropped."""
    drop_unreachable(top, env)
    files.clear_local(store, KEPT_LOCAL)
