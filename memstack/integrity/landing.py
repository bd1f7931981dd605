"""`binder.require_signed` where Binder lines and policy changes land: a branch's policy holds for what joins it.

signed.py checks the lines a commit makes against its own parent's policy. Two things reach a branch
another way, and are checked here against the policy of the branch they land on:

- a change of the `binder` policy of memstack.yaml (`require_signed`, `signers`, `people`): where
  `require_signed` is on before it, the commit must be signed by a key `binder.signers` listed before it
  (the old list; the pre-commit hook checks this clone's signing set-up instead). Turning it off is such a
  change. A merge changes the policy of each parent whose policy differs from its result; it needs no
  signature of its own when it takes the result unchanged from another parent, and that parent's policy
  was the one in force where the two forked (the other side's changes were checked under that same
  policy, commit by commit);
- the lines a merge brings to a parent that lacks them (held by another parent): each was made in a
  commit of the side brought in, and under `require_signed` of the merge's result or its first parent,
  that commit must be signed by a key the merge's result lists (and a parent lists: a merge cannot add
  its own signer), under the line's `by`; a line a parent of the merge's own policy holds is not checked
  again (that branch took it under this policy: a decision made before a key's removal). A side branch
  that turned the policy off, forked before it was on, or still listed a removed key brings nothing
  unsigned, or signed with that key, into a branch that requires a listed signature.

Only a step against a first parent (or the index) runs these, once a commit; a merge's sides are read
from git (`rev-list` of the commits it brings in that touch the Binder's log, then their logs).
"""

from collections.abc import Callable, Iterable
from pathlib import Path

from memstack.base import layout
from memstack.integrity import policies, signed
from memstack.integrity.binderlog import Line
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.rules.text import parse
from memstack.integrity.violations import Violation
from memstack.repo import git, signatures
from memstack.repo.sources import Source

POLICY = "the binder policy of memstack.yaml (require_signed, signers, people)"
POLICY_FIX = ("a person binder.signers lists before the change commits it signed with their key (`git config"
              " commit.gpgsign true`, docs/binder.md); remove the change from this commit (`git checkout HEAD --"
              " memstack.yaml`, or rewrite the commit)")
BROUGHT_FIX = ("the person named decides again on the branch it lands on, in a commit signed with the key its"
               " memstack.yaml lists under their name (docs/binder.md); leave the side branch's line out of the"
               " merge (rewrite the side branch without it)")

Sources = Callable[[str | None], Source]


def violations(step: Step, lines: list[Line], repo: Path, blobs: Blobs, source: Sources,
               folder: str) -> list[Violation]:
    """signed.py's check of the step's own Binder lines, then what joins the branch here."""
    found = signed.violations(step, lines, repo, blobs, lambda rev: source(rev).read(layout.DECISIONS))
    if step.audit or not step.prefix:
        return found
    if not step.others and policies.config_change(step) is None:
        return found  # a commit that changes no memstack.yaml and joins no other branch: signed.py's alone
    parents = _parents(step, repo)
    if not parents:
        return found
    found += _policy_changes(step, repo, parents, source)
    if len(parents) > 1:
        found += _brought(step, repo, folder, parents, source)
    return found


def _parents(step: Step, repo: Path) -> list[str]:
    """The commits the step's state joins: a commit's parents, or HEAD (and MERGE_HEAD) for the index."""
    if step.commit is not None:
        first = git.rev_parse(repo, f"{step.commit}^1")
        return [first, *step.others] if first is not None else []
    head = git.rev_parse(repo, "HEAD")
    return [] if head is None else [head, *step.others]


def _policy(source: Source) -> policies.BinderPolicy:
    return policies.binder_policy(source.read(layout.CONFIG))


def _policy_changes(step: Step, repo: Path, parents: list[str], source: Sources) -> list[Violation]:
    """A change of the binder policy under require_signed: signed by a key listed before it."""
    state = step.source.blob_id(layout.CONFIG)
    changed = [p for p in parents if source(p).blob_id(layout.CONFIG) != state]
    if not changed:
        return []
    now = _policy(step.source)
    found = []
    for parent in changed:
        before = _policy(source(parent))
        if before == now or not before.required or _taken(repo, now, parent, parents, source):
            continue
        keys = before.keys()
        which = "memstack.yaml" if parent == parents[0] else f"memstack.yaml of parent {parent[:12]}"
        if step.commit is None:
            setup = signatures.signing_setup(repo)
            if setup.signs and setup.key in keys:
                continue
            what = (f"changes {POLICY} while require_signed is on, and this clone does not sign its commits with"
                    f" a key binder.signers of {which} lists before the change")
        else:
            signature = signatures.signed_by(repo, step.commit, keys)
            if signature.state == "good":
                continue
            what = (f"commit {step.commit[:12]} changes {POLICY} while require_signed is on, and is not signed by"
                    f" a key binder.signers of {which} lists before the change")
        found.append(Violation(layout.CONFIG, 0, "I5", what, POLICY_FIX))
    return found


def _taken(repo: Path, now: policies.BinderPolicy, parent: str, parents: list[str], source: Sources) -> bool:
    """A merge's policy taken unchanged from another parent whose side forked from `parent`'s policy."""
    before = _policy(source(parent))
    for other in parents:
        if other == parent or _policy(source(other)) != now:
            continue
        bases = git.out(repo, "merge-base", "--all", parent, other).split()
        if bases and all(_policy(source(base)) == before for base in bases):
            return True
    return False


def _brought(step: Step, repo: Path, folder: str, parents: list[str], source: Sources) -> list[Violation]:
    """The lines a merge brings to each parent that lacks them, against the merge's policy."""
    now = _policy(step.source)
    if not now.required and not _policy(source(parents[0])).required:
        return []
    logs = {rev: _lines(source(rev).read(layout.DECISIONS)) for rev in parents}
    state = step.source.read(layout.DECISIONS) or b""
    numbered = {raw: number for number, raw in enumerate(state.split(b"\n"), 1) if raw}
    listed = {key for p in parents for key, _ in _policy(source(p)).signers}
    keys = {key: name for key, name in now.signers if key in listed}
    made: dict[bytes, str | None] = {}
    verdicts: dict[str, signatures.Signature] = {}
    found = []
    # a line a parent of this very policy holds was taken on that branch under it (a decision on main before
    # a key's removal, a line from before require_signed): brought to another parent, it is not checked again
    accepted: set[bytes] = set().union(*(logs[p] for p in parents if _policy(source(p)) == now))
    for parent in parents:
        others = [p for p in parents if p != parent]
        held: set[bytes] = set().union(*(logs[p] for p in others))
        brought = [raw for raw in numbered if raw not in logs[parent] and raw in held and raw not in made
                   and raw not in accepted]
        if brought:
            made.update(_makers(repo, folder, others, parent, set(brought), source))
        for raw in brought:
            line, problem = parse(raw)
            by = line.get("by") if not problem and isinstance(line, dict) else None
            commit = made.get(raw)
            if not problem and isinstance(line, dict) and line.get("via") == "mcp":
                what = f"by {by!r} made over MCP (via: mcp), brought in by this merge"
            elif commit is None:
                what = f"by {by!r}: no commit this merge brings in makes the line"
            elif not keys:
                what = f"by {by!r}: binder.require_signed is on and memstack.yaml lists no binder.signers"
            else:
                if commit not in verdicts:
                    verdicts[commit] = signatures.signed_by(repo, commit, keys)
                what = signed.refusal(verdicts[commit], by, commit, "memstack.yaml at this merge") or ""
                what = what and f"{what}, and this merge brings its line in"
            if what:
                found.append(Violation(layout.DECISIONS, numbered[raw], "I5", what, BROUGHT_FIX))
    return found


def _lines(data: bytes | None) -> set[bytes]:
    return set((data or b"").split(b"\n")) - {b""}


def _makers(repo: Path, folder: str, tips: Iterable[str], parent: str, wanted: set[bytes],
            source: Sources) -> dict[bytes, str]:
    """The commit of `tips` not in `parent` that made each wanted line: it holds the line, none of its
    parents does (only the commits that touch the Binder's log are read)."""
    touching = git.out(repo, "rev-list", "--full-history", *tips, f"^{parent}", "--",
                       folder + layout.DECISIONS).split()
    if not touching:
        return {}
    found: dict[bytes, str] = {}
    listed = git.run(repo, "rev-list", "--no-walk=unsorted", "--parents", "--stdin",  # any number of them
                     input="".join(f"{commit}\n" for commit in touching).encode()).stdout.decode()
    for row in listed.splitlines():
        commit, *parents = row.split()
        new = (_lines(source(commit).read(layout.DECISIONS)) & wanted) - set(found)
        for parent_commit in parents:
            new -= _lines(source(parent_commit).read(layout.DECISIONS))
        found.update(dict.fromkeys(new, commit))
        if len(found) == len(wanted):
            break  # every wanted line's commit found: the older ones need not be read
    return found
