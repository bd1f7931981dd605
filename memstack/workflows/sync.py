"""`memstack sync`: an agent's memory committed, merged with the remote's, and pushed (docs/sync.md).

Under the clone's git lock (memstack's own git operations never run two at a
time in one clone: concurrent git commands fail on index.lock):

1. commit the uncommitted memory (the layer folders and the boot files, nothing
   else), through the hooks, with a message that lists what it holds;
2. fetch; check the commits a merge would bring, as `memstack check --range`
   checks them (a remote may hold a commit no hook checked: then stop before
   anything is merged, naming the violations); merge the remote branch (merge,
   not rebase: the agent's commits keep the ids they were checked and reviewed
   under, the merge driver runs once per file rather than once per replayed
   commit, and a failed merge is undone with one `git merge --abort`). A remote branch an excise rewrote
   (its erasure receipt names it): this clone's own commits are moved onto it instead and the old history
   purged (resync.py); a rewrite without a receipt stops the sync;
3. close the facts forgotten with a record that the merge brought open (kb/tombstones.close_forgotten), then
   rebuild the derived files (the view shards whose sources changed, boot files: O(change)) from the sources HEAD now
   holds, this clone's writes and the merged ones, and commit what changed, through the hooks: what
   sync pushes is never stale (the rebuild follows the commit, so the hook has passed what it reads);
4. push, never a branch that still holds history an erasure receipt rewrote. A push refused because the
   remote moved meanwhile starts again at 1 (committing what was written meanwhile), after a randomised,
   growing pause, at most ATTEMPTS times. Each attempt holds the commit window (`files.committing`), which
   memstack's writers wait for.

Whatever cannot be done is a MemstackError (exit 2) naming the reason: no
remote, a commit or push refused by a guard, a remote whose commits break an
invariant (nothing merged), a conflict the merge driver cannot resolve (the
merge is aborted). Once an attempt has begun, the message also says what this
sync did and left (`_Stop`, `_left`): the commits it made here, what it merged,
that nothing was pushed, where HEAD is and whether memory is left uncommitted.
"""

import random
import time
from pathlib import Path
from typing import Any

from memstack.base import files, layout, locks
from memstack.base.errors import MemstackError
from memstack.base.output import plural
from memstack.integrity import check
from memstack.kb import tombstones
from memstack.repo import git
from memstack.repo.store import folder_of as store_folder
from memstack.workflows import derived, promote, resync, sync_commit

LOCK = ".memstack/locks/git.lock"  # memstack's own git operations, one at a time per clone
LOCK_WAIT = 600  # seconds: a sync waits for the one before it (retries and hooks included)
ATTEMPTS = 12  # four processes of three clones pushing at once needed up to 6 (tests/workflows/test_sync.py)
PAUSE = 0.2  # seconds before the second attempt; doubled each time, at most MAX_PAUSE, randomised
MAX_PAUSE = 5.0
SHOWN = 3  # violations a refused pull names (`memstack check --range` lists them all)
SOURCES = ("intake/", "kb/facts/", "kb/promotions/", "kb/binder.jsonl", "handoffs/")
_LOCKED = ("index.lock", "cannot lock ref", "Unable to create")
# A push refused because the branch moved: behind the remote, or another push updated it meanwhile.
_MOVED = ("fetch first", "non-fast-forward", "stale info", "cannot lock ref", "failed to update ref",
          "but expected", "incorrect old value")


class _Git:
    """git in the store, with the environment memstack commits under; retries git's own lock errors."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.env = git.commit_env(store)

    def __call__(self, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str]:
        for attempt in range(5):
            proc = git.run(self.store, *args, env=self.env, ok=range(256))
            said = (proc.stdout + proc.stderr).decode(errors="replace").strip()
            if proc.returncode in ok or args[0] == "push" or not any(s in said for s in _LOCKED):
                break
            time.sleep(0.05 * 2 ** attempt)  # another git process (not memstack's) holds a lock
        if proc.returncode not in ok:
            raise _Failed(proc.returncode, said)
        return proc.returncode, said


class _Failed(Exception):
    def __init__(self, code: int, said: str) -> None:
        super().__init__(said)
        self.code, self.said = code, said


class _Stop(Exception):
    """Why an attempt stopped (`reason`), what to do (`hint`) and what git or a hook said (`said`);
    `sync` words it with what the sync did and left (`_left`)."""

    def __init__(self, reason: str, hint: str, said: str = "") -> None:
        super().__init__(reason)
        self.reason, self.hint, self.said = reason, hint, said


def _commit(run: _Git, paths: list[str], reason: str, rebuilt: bool = False) -> dict[str, Any] | None:
    """Stage `paths` and commit them through the hooks; None when they hold no change. `rebuilt`: the
    derived files rebuilt on HEAD, which the commit says (`Memstack-Parent`, workflows/derived.py) so that
    the next rebuild starts from it rather than from before the merge it follows."""
    if not paths:
        return None
    run("add", "-A", "--", *paths)
    _, numstat = run("diff", "--cached", "--relative", "--numstat", "--", *paths)
    if not numstat:
        return None
    what, body = sync_commit.describe(numstat)
    message = f"memstack sync: {what}\n\n" + "\n".join(body) + "\n"
    if rebuilt:
        message += "\n" + derived.parent_trailer(run("rev-parse", "HEAD")[1])
    try:
        run("commit", "-q", "-m", message, "--", *paths)  # through the pre-commit hook
    except _Failed as failed:
        run("reset", "-q", "--", *paths)  # nothing left half-staged: the files stay as they are
        raise _Stop(f"{reason} was refused by the pre-commit hook (nothing staged)",
                    "fix what the hook says, then sync again", failed.said) from None
    _, sha = run("rev-parse", "HEAD")
    return {"commit": sha, "message": message}


def _where(run: _Git) -> tuple[str, str, bool]:
    """(remote, branch, has upstream): the branch's upstream, else the one remote (or origin)."""
    try:
        _, branch = run("symbolic-ref", "--short", "HEAD")
    except _Failed:
        raise MemstackError("sync: HEAD is detached; check out a branch first") from None
    try:
        _, upstream = run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}")
        remote, _, merge = upstream.partition("/")
        return remote, merge, True
    except _Failed:
        pass
    _, remotes = run("remote")
    names = remotes.split()
    if not names:
        raise MemstackError("sync: no remote to sync with; add one (`git remote add origin URL`)")
    if len(names) > 1 and "origin" not in names:
        raise MemstackError(f"sync: branch {branch} has no upstream and there are several remotes"
                            f" ({', '.join(names)}); set one (`git branch -u REMOTE/{branch}`)")
    return ("origin" if "origin" in names else names[0]), branch, False


def _pull(run: _Git, remote: str, branch: str) -> dict[str, Any]:
    """Fetch and merge the remote branch through the drivers; a conflict aborts the merge. A branch an excise
    rewrote: this clone's commits moved onto it instead (resync.py)."""
    tracking = f"refs/remotes/{remote}/{branch}"
    known, fetched = run("rev-parse", "--verify", "-q", tracking, ok=(0, 1))
    try:
        run("fetch", "-q", remote)
    except _Failed as failed:
        raise _Stop(f"cannot fetch from {remote}", "check the remote's address and access, then sync again",
                    failed.said) from None
    _, before = run("rev-parse", "HEAD")
    code, theirs = run("rev-parse", "--verify", "-q", tracking, ok=(0, 1))
    if code != 0 or run("merge-base", "--is-ancestor", theirs, "HEAD", ok=(0, 1))[0] == 0:
        return {"from": before, "to": before, "merged": False, "fast_forward": False, "sources_changed": False}
    moved = _after_excise(run, remote, branch, fetched if known == 0 else None, theirs)
    if moved is not None:
        return {"from": before, "to": moved["to"], "merged": False, "fast_forward": False, "sources_changed": True,
                "after_excise": moved}
    _check_pulled(run.store, before, theirs, f"{remote}/{branch}")
    try:
        run("merge", "-q", "--no-edit", "-m", f"memstack sync: merge {remote}/{branch}", theirs)
    except _Failed as failed:
        _, unmerged = run("diff", "--name-only", "--relative", "--diff-filter=U")
        if unmerged and all(layout.classify(p).kind in layout.DERIVED for p in unmerged.split()):
            # derived files no driver was given (a boot file deleted on one side, rebuilt on the other): made
            # again from the merged sources, and the merge concluded through the hooks
            rebuilt = promote.rebuild(run.store)  # all it rewrote goes in the merge: the views are fresh there
            run("add", "-A", "--", *unmerged.split(), *rebuilt)
            run("commit", "-q", "--no-edit")
            return _merged(run, before, theirs)
        run("merge", "--abort", ok=(0, 128))
        where = f" in {', '.join(unmerged.split())}" if unmerged else ""
        raise _Stop(f"the merge with {remote}/{branch} has a conflict the merge driver cannot resolve{where},"
                    " so the merge was undone (`git merge --abort`)",
                    f"merge by hand (`git merge {remote}/{branch}`, docs/merge.md), commit, then sync again",
                    "" if unmerged else failed.said) from None
    return _merged(run, before, theirs)


def _merged(run: _Git, before: str, theirs: str) -> dict[str, Any]:
    _, after = run("rev-parse", "HEAD")
    _, names = run("diff", "--name-only", "--relative", before, after)
    changed = any(name.startswith(SOURCES) for name in names.splitlines())
    return {"from": before, "to": after, "merged": True, "fast_forward": after == theirs, "sources_changed": changed}


def _after_excise(run: _Git, remote: str, branch: str, fetched: str | None, theirs: str) -> dict[str, Any] | None:
    """None when the remote branch was not rewritten; else this clone's commits moved onto the rewritten
    history and the old one purged (resync.py). A rewrite without an erasure receipt stops the sync, with the
    remote-tracking branch put back: nothing changes."""
    top, folder = store_folder(run.store)
    tracking, ref = f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"
    fetched = resync.last_fetched(top, folder, run.env, branch, fetched, theirs)  # a `git fetch` by hand
    mine = resync.excised_here(top, folder, run.env, branch, theirs)
    if mine is not None:  # the old history fetched meanwhile leaves again, as excise left the clone
        run("update-ref", tracking, fetched) if fetched else run("update-ref", "-d", tracking)
        resync.drop_unreachable(top, run.env)
        raise _Stop(f"this branch was rewritten here by `memstack excise` ({mine.named()}) and {remote}/{branch}"
                    " still holds the old history, so nothing was merged",
                    f"push the rewrite as excise said (`git push --force-with-lease={ref}:{mine.heads[ref][0]}"
                    f" {remote} {ref}`), then sync again")
    try:
        receipts = resync.receipts_for(top, folder, run.env, branch, fetched, theirs)
        if receipts is None:
            return None
        return resync.move(run.store, run.env, branch, fetched, theirs, receipts)
    except resync.Refused as refused:
        if fetched is not None and run("merge-base", "--is-ancestor", fetched, "HEAD", ok=(0, 1))[0] == 0:
            run("update-ref", tracking, fetched)  # as it was: the next sync sees the rewrite again
        raise _Stop(refused.reason, refused.hint, refused.said) from None


def _check_pulled(root: Path, before: str, theirs: str, name: str) -> None:
    """The commits a merge of `theirs` would bring, checked as `memstack check --range HEAD..theirs`
    checks them: a remote that took a commit no hook checked (`git push --no-verify` to a host without
    pre-receive) is refused before anything is merged."""
    top, folder = store_folder(root)
    report = check.commits(top, [theirs, "--not", before], f"the commits of {name}", folder=folder)
    bad = [(result, violation) for result in report.results for violation in result.violations]
    if not bad:
        return
    shown = "; ".join(f"commit {result.commit[:12] if result.commit else '?'} {result.subject!r}: {violation}"
                      for result, violation in bad[:SHOWN])
    more = f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    raise _Stop(f"{name} holds {plural(len(bad), 'violation')} of the invariants, so nothing was merged",
                f"the remote's history needs repair before it can be merged (`memstack check --range HEAD..{name}`"
                " lists every violation)", f"{shown}{more}")


def sync(store: Path) -> dict[str, Any]:
    """Commit, pull, rebuild, push (the module text); returns what was done."""
    run = _Git(store)
    try:
        held = locks.acquire(files.lock_path(store, "git"), wait=LOCK_WAIT, poll=0.05)
    except locks.Busy:
        raise MemstackError(f"sync: another sync in this clone has held {LOCK} for over {LOCK_WAIT} s") from None
    with held:
        if (doing := git.under_way(store)) is not None:  # a sync would commit its half (a staged resolution)
            if doing[1] == "a rebase" and run("ls-files", "-u", "--", layout.V1_LEDGER)[1]:
                raise MemstackError("sync: a rebase is replaying a promotion of format 1 onto the migration to"
                                    " format 2, which cannot apply: `git rebase --abort`, then `memstack migrate`"
                                    " and `memstack sync` (nothing was done; docs/migrate.md)")
            raise MemstackError(f"sync: {doing[1]} is in progress in this clone; conclude it with {doing[2]}, then"
                                " sync again (nothing was done)")
        remote, branch, tracked = _where(run)  # after: a rebase under way detaches HEAD
        if run("config", "merge.memstack.driver", ok=(0, 1))[0] != 0:
            raise MemstackError.marked("sync: the memstack merge driver is not registered in this clone; run"
                                       " `{verb:memstack install}` first (without it, memory files merge as plain"
                                       " text)")
        done: dict[str, Any] = {"ok": True, "remote": remote, "branch": branch, "committed": None,
                                "also_committed": [], "pulls": [], "rebuilt": [], "pushed": None, "attempts": 0}
        try:
            for attempt in range(1, ATTEMPTS + 1):
                done["attempts"] = attempt
                # The whole attempt holds the commit window: the pre-commit framework stashes unstaged changes
                # in its pre-commit and pre-push hooks, and a merge refuses a dirty file; writers wait.
                with files.committing(store):
                    if _attempt(run, store, remote, branch, tracked, done):
                        return done
                time.sleep(min(MAX_PAUSE, PAUSE * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5))
            raise _Stop(f"the remote moved on every one of {ATTEMPTS} attempts", "sync again later")
        except _Stop as stop:
            said = f": {stop.said}" if stop.said else ""
            raise MemstackError(f"sync: {stop.reason}. {_left(run, store, done)}. To go on: {stop.hint}{said}"
                                ) from None
        except _Failed as failed:  # a git command that should not fail did
            raise MemstackError(f"sync: git failed. {_left(run, store, done)}: {failed.said}") from None
        except MemstackError as error:  # a rebuild that cannot read what it was given: said, with the state
            told = MemstackError.marked(error.template + ". {sync_left}", error.code, **error.values,
                                        sync_left=_left(run, store, done))
            told.field, told.reason = error.field, error.reason
            raise told from None


def _left(run: _Git, store: Path, done: dict[str, Any]) -> str:
    """What a sync that stopped did and left, in one sentence: its commits here, its merges, no push,
    HEAD, and whether memory stays uncommitted."""
    made = [c for c in (done["committed"], *done["also_committed"], *done["rebuilt"]) if c]
    said = ("committed here " + ", ".join(f"{c['commit'][:12]} ({c['message'].splitlines()[0]})" for c in made)
            if made else "nothing committed")
    merged = [p for p in done["pulls"] if p["merged"]]
    said += ("; merged " + ", ".join(f"{done['remote']}/{done['branch']} ({p['from'][:12]} -> {p['to'][:12]})"
                                     for p in merged) if merged else "; nothing merged")
    _, head = run("rev-parse", "--short=12", "HEAD")
    _, dirty = run("status", "--porcelain", "--", *sync_commit.memory_paths(store))
    return (f"{said[0].upper()}{said[1:]}; nothing pushed; HEAD is {head}"
            + ("; memory left uncommitted (`memstack status` lists it)" if dirty else "; no memory left uncommitted"))


def _attempt(run: _Git, store: Path, remote: str, branch: str, tracked: bool, done: dict[str, Any]) -> bool:
    """One commit, pull, rebuild, push; False when the push found the remote moved (try again)."""

    committed = _commit(run, sync_commit.memory_paths(store), "the commit of the memory")
    if committed and done["committed"] is None:
        done["committed"] = committed
    elif committed:  # memory written while an earlier attempt waited
        done["also_committed"].append(committed)
    pulled = _pull(run, remote, branch)
    done["pulls"].append(pulled)
    # A fact promoted in another clone from a record this one forgot (or the reverse) is forgotten with it; the
    # merge brought it open: closed as `forget` closes a fact, it leaves the views rebuilt below.
    tombstones.close_forgotten(store)
    # The derived files of every source HEAD now holds, this clone's and the merged: what is pushed is never
    # stale. After the commit, not before: the hook has passed the sources the rebuild reads.
    if promote.rebuild(store, changed_only=True):
        made = _commit(run, sync_commit.memory_paths(store), "the commit of the rebuilt derived files", rebuilt=True)
        if made:
            done["rebuilt"].append(made)
    code, ahead = run("rev-list", "--count", f"refs/remotes/{remote}/{branch}..HEAD", ok=(0, 128))
    if code == 0 and ahead == "0":
        return True
    top, folder = store_folder(store)
    stale = resync.still_old(top, folder, run.env, branch, f"refs/remotes/{remote}/{branch}")
    if stale is not None:
        raise _Stop(f"this branch still holds the history the {stale.named()} rewrote, so it was not pushed",
                    "sync again from a branch based on the rewritten history (docs/sync.md)")
    code, said = run("push", "-q", "--porcelain", *([] if tracked else ["-u"]), remote, f"HEAD:refs/heads/{branch}",
                     ok=tuple(range(256)))
    if code == 0:
        done["pushed"] = run("rev-parse", "HEAD")[1]
        return True
    if not any(reason in said for reason in _MOVED):
        raise _Stop(f"the push to {remote} was refused (by a hook or the remote)",
                    "fix what it says (`memstack check --range` names violations), then sync again", said)
    return False
