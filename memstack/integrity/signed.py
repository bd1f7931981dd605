"""`binder.require_signed`: a Binder line is a person's word only in a commit that person signed (I5).

With `binder.require_signed: true` in memstack.yaml, every line a commit adds to kb/binder.jsonl (a decision,
a filed document, a confirmed edge) must come in a commit signed (git's `gpg.format ssh`) by a key that
`binder.signers` lists, and the line's `by` must be the name that key is listed under. The signers are the
base's (the commit's parent): a commit cannot add its own signer, as it cannot add its own person to
`binder.people`. A line made over MCP (`via: mcp`, an agent's) is never accepted.

Where the check runs decides what it can know:
- a commit (`check --range`, pre-push, pre-receive): its signature, verified with `git verify-commit`'s
  machinery against a temporary allowed-signers file built from the base's `binder.signers`;
- the index or the work tree (the pre-commit hook, `memstack check`): git signs a commit only after the
  hook has run, so the hook checks that this clone is set up to sign (`commit.gpgsign true`, `gpg.format ssh`,
  `user.signingkey` a listed key) under the line's `by`, and the range checks verify the signature itself;
- `check --all` reads no history and says nothing of signatures (run `check --range` for that).

A merge's lines that one of its other parents already holds are checked by landing.py: against the policy
of the branch they land on, in the commit that made them.
"""

from collections.abc import Callable
from pathlib import Path

from memstack.base import layout
from memstack.integrity import policies
from memstack.integrity.binderlog import Line
from memstack.integrity.blobs import Blobs
from memstack.integrity.report import Step
from memstack.integrity.violations import Violation
from memstack.repo import signatures

SETUP = ("sign with your listed key: `git config gpg.format ssh`, `git config user.signingkey ~/.ssh/id_ed25519.pub`,"
         " `git config commit.gpgsign true` (docs/binder.md)")
PERSON = ("a person decides with `memstack binder ratify|reject|file|edge` in their own clone and commits it"
          " signed with the key binder.signers lists under their name (docs/binder.md)")
MCP = ("remove the line (`git checkout HEAD -- kb/binder.jsonl`, or rewrite the commit); an agent's decision over"
       " MCP never counts as a person's: the person decides with `memstack binder ratify|reject ID` and commits"
       " it signed")
SIGNERS = ("add the signer's name and SSH public key under binder.signers in a commit of its own first"
           " (a commit cannot add its own signer)")


def violations(step: Step, lines: list[Line], repo: Path, blobs: Blobs,
               read_at: Callable[[str], bytes | None]) -> list[Violation]:
    """The new Binder lines `lines` of `step` against binder.require_signed; `read_at(rev)` reads
    kb/binder.jsonl at another revision (a merge's other parent)."""
    if not lines or step.audit:
        return []
    required, keys, which = policies.binder_signing(step, blobs)
    if not required:
        return []
    held: set[bytes] = set()
    for rev in step.others:  # a merge's other parents, or the one being concluded: their lines are landing.py's
        held.update((read_at(rev) or b"").split(b"\n"))
    lines = [line for line in lines if line.raw not in held]
    found = [Violation(layout.DECISIONS, line.number, "I5", f"by {line.by!r} made over MCP (via: mcp): with"
                       " binder.require_signed only a person's decision in a commit they sign lands", MCP)
             for line in lines if line.via == "mcp"]
    people = [line for line in lines if line.via != "mcp"]
    if not people:
        return found
    if not keys:
        return found + [Violation(layout.DECISIONS, line.number, "I5", f"by {line.by!r}: binder.require_signed is"
                                  f" on and {which} lists no binder.signers", SIGNERS) for line in people]
    if step.commit is None:
        return found + _setup(repo, people, keys)
    signature = signatures.signed_by(repo, step.commit, keys)
    for line in people:
        what = refusal(signature, line.by, step.commit, which)
        if what is not None:
            found.append(Violation(layout.DECISIONS, line.number, "I5", what, PERSON))
    return found


def refusal(signature: signatures.Signature, by: object, commit: str, which: str) -> str | None:
    """What is wrong with a line `by` someone in `commit`, signed as `signature` against the signers of
    `which` memstack.yaml (None: nothing, the key listed under `by` signed it)."""
    short = commit[:12]
    if signature.state == "none":
        return f"commit {short} is not signed (binder.require_signed)"
    if signature.state == "unlisted":
        return f"commit {short} is signed by a key that binder.signers of {which} does not list"
    if signature.state == "bad":
        return f"commit {short} has a signature that does not match it"
    if signature.state != "good":
        return (f"commit {short} has a signature that cannot be verified here (an SSH signature is checked"
                " with ssh-keygen, which must be on the PATH where the check runs)")
    if signature.name != by:
        return f"by {by!r}, but commit {short} is signed with the key of {signature.name!r}"
    return None


def _setup(repo: Path, lines: list[Line], keys: dict[str, str]) -> list[Violation]:
    """The index or the work tree: the commit is not made yet, so this clone's signing settings."""
    setup = signatures.signing_setup(repo)
    name = keys.get(setup.key) if setup.key else None
    found = []
    for line in lines:
        if not setup.signs or name is None:
            what = (f"by {line.by!r}: binder.require_signed is on and this clone does not sign its commits with a key"
                    " binder.signers lists (commit.gpgsign, gpg.format ssh, user.signingkey)")
            found.append(Violation(layout.DECISIONS, line.number, "I5", what, SETUP))
        elif name != line.by:
            found.append(Violation(layout.DECISIONS, line.number, "I5", f"by {line.by!r}, but this clone signs"
                                   f" with the key of {name!r}", PERSON))
    return found
