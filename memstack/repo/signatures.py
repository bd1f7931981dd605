"""Who signed a commit, by git's SSH signatures (`gpg.format ssh`), against a list of named keys; and which
key a clone is set up to sign its commits with. Git is asked through `git.run`, as everywhere.

A commit's signature is checked with `git log --format=%G?%GS` and `gpg.ssh.allowedSignersFile` pointing at
a temporary file made from the keys given (one principal per key, `signer-N`: a person's name may hold
spaces, which that file's format does not allow), so no clone's or server's own trust settings decide.
"""

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memstack.base.config import bare_key
from memstack.repo import git

KEY_TYPES = ("ssh-", "ecdsa-", "sk-")


@dataclass(frozen=True)
class Signature:
    """A commit's signature against the keys given: `state` is "none" (not signed), "good" (by the key of
    `name`), "unlisted" (a good signature by a key not given), "bad" (does not match the commit) or
    "unverifiable" (git could not check it: not an SSH signature, or no ssh-keygen where the check runs)."""

    state: str
    name: str | None = None


def signed_by(repo: Path, commit: str, keys: Mapping[str, str]) -> Signature:
    """The signature of `commit` against `keys` ({"type base64": name}); the GIT_* variables of a running hook
    are kept (a pre-receive hook's new objects are only visible through them)."""
    principals = {f"signer-{n}": name for n, name in enumerate(keys.values())}
    handle, allowed = tempfile.mkstemp(prefix="memstack-signers-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.writelines(f"{p} {key}\n" for p, key in zip(principals, keys, strict=True))
        proc = git.run(repo, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "-1", "--no-walk",
                       "--format=%G?%n%GS", commit, "--", ok=(0, 1, 128))
    finally:
        os.unlink(allowed)
    state, _, principal = (part.strip() for part in proc.stdout.decode("utf-8", "replace").partition("\n"))
    if state in ("N", ""):
        return Signature("none")
    if state == "G" and principal in principals:
        return Signature("good", principals[principal])
    return Signature({"G": "unlisted", "U": "unlisted", "B": "bad"}.get(state, "unverifiable"))


@dataclass(frozen=True)
class Setup:
    """How a clone signs its commits: `signs` (commit.gpgsign true and gpg.format ssh) and the public key of
    user.signingkey ("type base64"; None when it is not set or cannot be read)."""

    signs: bool
    key: str | None


def signing_setup(repo: Path) -> Setup:
    """The clone's signing settings (git config as git reads it for a commit here)."""
    def get(name: str, *flags: str) -> str:
        return git.run(repo, "config", *flags, "--get", name, ok=(0, 1)).stdout.decode("utf-8", "replace").strip()

    signs = get("commit.gpgsign", "--type=bool") == "true" and get("gpg.format") == "ssh"
    return Setup(signs, public_key(get("user.signingkey", "--type=path"), repo))


def public_key(value: str, repo: Path) -> str | None:
    """user.signingkey as "type base64": a literal key (`key::` or a key type first), or a key file (a
    private key's `.pub` beside it)."""
    value = value.removeprefix("key::").strip()
    if not value:
        return None
    if value.startswith(KEY_TYPES):
        return bare_key(value)
    path = Path(value).expanduser()
    path = path if path.is_absolute() else repo / path
    for candidate in (path, path.with_name(path.name + ".pub")):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text.startswith(KEY_TYPES):
            return bare_key(text)
    return None


