"""memstack.yaml: loaded round-trip with ruamel.yaml, so a comment survives any edit."""

import hashlib
import json
from copy import deepcopy
from functools import lru_cache
from io import StringIO
from pathlib import Path
from typing import Any

from memstack.base import schemas
from memstack.base.errors import MemstackError
from memstack.base.files import LOCAL, local_dir, write_atomic
from memstack.base.layout import FORMAT

CONFIG_NAME = "memstack.yaml"
DEFAULT_SKEW_SECONDS = 300  # clock.max_skew_seconds: how far past now a transaction time may lie (base/clock.py)

DEFAULTS: dict[str, Any] = {
    "memory": {"default_agent": None, "recall_limit": 50},
    "identity": {"forbidden_patterns": []},
    "clock": {"max_skew_seconds": DEFAULT_SKEW_SECONDS},
    "promotion": {
        "knowledge_min_confidence": 0.80,
        "jeles_min_relevance": 0.5,
        "opus_agents": [],
        "classifier": None,
    },
    "replica": {"postgres": None},
    "code": {"repo": None},  # the code repository code anchors point into (memstack/anchors/coderepo.py)
    "binder": {"people": None, "require_signed": False, "signers": []},
    "limits": {"text_bytes": 65_536, "value_bytes": 65_536, "query_bytes": 4_096, "json_depth": 64,
               "file_bytes": 10 * 2**20, "handoff_bytes": 65_536},  # base/limits.py
    "search": {"semantic": False},  # true: fused with the ranking by meaning where the semantic extra is installed
}


def skew_seconds(document: Any) -> int:
    """The configured clock skew of a parsed memstack.yaml (the default when it says nothing or is broken)."""
    section = document.get("clock") if isinstance(document, dict) else None
    value = section.get("max_skew_seconds") if isinstance(section, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 86_400:
        return DEFAULT_SKEW_SECONDS  # the schema check reports a bad value
    return value


def semantic_search(document: Any) -> bool:
    """`search.semantic` of a parsed memstack.yaml (false, the default, when it says nothing or is broken)."""
    section = document.get("search") if isinstance(document, dict) else None
    value = section.get("semantic") if isinstance(section, dict) else None
    return value is True


def binder_people(document: Any) -> frozenset[str] | None:
    """The names `binder.people` of a parsed memstack.yaml lists (None: it lists none, any name decides)."""
    section = document.get("binder") if isinstance(document, dict) else None
    value = section.get("people") if isinstance(section, dict) else None
    if not isinstance(value, list):
        return None
    return frozenset(name for name in value if isinstance(name, str))


def binder_signing(document: Any) -> tuple[bool, dict[str, str]]:
    """`binder.require_signed` of a parsed memstack.yaml, and `binder.signers` as {key: name}, each key its
    type and base64 (the comment dropped; what `git verify-commit` compares)."""
    section = document.get("binder") if isinstance(document, dict) else None
    section = section if isinstance(section, dict) else {}
    signers: dict[str, str] = {}
    for signer in section.get("signers") or []:
        if isinstance(signer, dict) and isinstance(signer.get("name"), str) and isinstance(signer.get("key"), str):
            signers.setdefault(bare_key(signer["key"]), signer["name"])
    return section.get("require_signed") is True, signers


def bare_key(key: str) -> str:
    """An SSH public key's type and base64, without its comment."""
    return " ".join(key.split()[:2])


def _yaml() -> Any:
    from ruamel.yaml import YAML  # deferred: ~20-30 ms to import, needed only to read or edit YAML

    yaml = YAML()  # round-trip: keeps comments, order and quoting
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


class Config:
    """The parsed file (round-trip document) plus defaults for what it leaves out."""

    def __init__(self, path: Path, document: Any) -> None:
        self.path = path
        self.document = document

    def get(self, section: str, key: str) -> Any:
        value = (self.document.get(section) or {}).get(key)
        return DEFAULTS[section][key] if value is None else value

    @property
    def agents(self) -> list[str]:
        return list(self.document.get("agents") or [])

    def save(self) -> None:
        """Write the document back (comments kept) after validating it."""
        validate(self.document, self.path)
        buffer = StringIO()
        _yaml().dump(self.document, buffer)
        write_atomic(self.path, buffer.getvalue().encode())


def validate(document: Any, path: Path) -> None:
    problems = schemas.errors("config", document)
    if problems:
        raise MemstackError(f"{path}: invalid {CONFIG_NAME}: {problems[0]}")


def parse(text: str, where: str, store: Path | None = None) -> Any:
    """The YAML document in `text` (an empty file is an empty mapping), not yet validated. The same text is
    parsed once a process (the store's format, its policies, its settings: each reader only reads it; a
    caller that changes it takes a copy: `load`). With `store`, the parse is also kept in its
    `.memstack/config.json` (per clone, never committed) by the text's hash, as plain JSON data, so the
    next process that reads the same text neither imports the YAML library nor parses (~30 ms)."""
    found = _KEPT.get(text)
    if found is None and store is not None:
        found = _kept(store, text)
    if found is not None:
        return found
    document = _round_trip(text, where)
    if store is not None:
        _keep(store, text, document)
    return document


def _round_trip(text: str, where: str) -> Any:
    from ruamel.yaml.error import YAMLError  # deferred with YAML above

    try:
        return _parsed(text)
    except YAMLError as exc:
        raise MemstackError(f"{where}: not valid YAML ({exc})".replace("\n", " ")) from None
    except RecursionError:  # thousands of nested brackets: the parser is recursive
        raise MemstackError(f"{where}: not valid YAML ({YAML_TOO_DEEP})") from None


YAML_TOO_DEEP = "nested deeper than memstack reads"


@lru_cache(maxsize=16)
def _parsed(text: str) -> Any:
    document = _yaml().load(text)
    return {} if document is None else document


_KEPT: dict[str, Any] = {}  # parses taken from a store's .memstack/config.json, by text
_VALID: set[str] = set()  # texts whose parse passed the schema (`_checked`)
_KEPT_FILE = "config.json"  # {"sha256": of the text, "document": its parse, "valid": the schema's digest, if it passed}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _kept(store: Path, text: str) -> Any:
    """The parse of `text` kept in the store's cache, or None (none kept, another text's, unreadable)."""
    try:
        kept = json.loads((store / LOCAL / _KEPT_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("sha256") != _digest(text) or "document" not in kept:
        return None
    _KEPT[text] = kept["document"]
    if kept.get("valid") == schemas.digest("config"):
        _VALID.add(text)
    return kept["document"]


def _keep(store: Path, text: str, document: Any) -> None:
    """Keep the parse when JSON holds it unchanged (string keys, no timestamp, no infinity), with whether it
    passes the schema (one write: the reader validates next); a store we may not write to keeps none."""
    try:
        plain = json.loads(json.dumps(document, allow_nan=False))
    except (TypeError, ValueError):
        return
    if plain != document:  # a key that is no string, say: it would come back otherwise
        return
    valid = not schemas.errors("config", plain)  # its verdict kept with it, in the same write (`_checked`)
    if _write_kept(store, text, plain, valid):
        _KEPT[text] = plain
        if valid:
            _VALID.add(text)


def _write_kept(store: Path, text: str, document: Any, valid: bool = False) -> bool:
    kept = {"sha256": _digest(text), "document": document, **({"valid": schemas.digest("config")} if valid else {})}
    try:
        write_atomic(local_dir(store, "") / _KEPT_FILE, json.dumps(kept, sort_keys=True).encode(), sync=False)
    except (OSError, MemstackError):
        return False
    return True


def _checked(store: Path, text: str, document: Any, path: Path) -> None:
    """Validate a parse kept between processes once: its verdict is kept beside it (for the schema it was
    checked against: another memstack's schema checks again), so the next process that reads the same
    text neither imports the validator nor validates (~5% of a read command's start)."""
    if text in _VALID:
        return
    validate(document, path)
    _VALID.add(text)
    if text in _KEPT:  # the parse is kept on disk: keep the verdict with it
        _write_kept(store, text, _KEPT[text], valid=True)


def load(store: Path, changing: bool = True) -> Config:
    """The store's memstack.yaml, validated: a document of its own (Config.save changes it, comments kept:
    the round-trip parse, copied, ~2 ms where a parse is ~20). Not `changing` (`read`): the document parsed
    once a process, shared by every reader, which must not change it (plain data kept between processes:
    `parse`)."""
    path = store / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemstackError(f"{store} is not a memstack store (no {CONFIG_NAME})") from None
    except UnicodeDecodeError as exc:
        raise MemstackError(f"{path}: not valid YAML ({exc})") from None
    if changing:
        document = deepcopy(_round_trip(text, str(path)))
        validate(document, path)
    else:
        document = parse(text, str(path), store)
        _checked(store, text, document, path)
    return Config(path, document)


def read(store: Path) -> Config:
    """The store's memstack.yaml to read, not to change (see `load`)."""
    return load(store, changing=False)


def store_format(document: Any) -> Any:
    """The `format:` of a parsed memstack.yaml: absent (a store made before format 2) is 1."""
    value = document.get("format") if isinstance(document, dict) else None
    return 1 if value is None else value


def require_format(store: Path, old_ok: bool = False) -> None:
    """Refuse a store this memstack cannot read: a newer format (one line naming both), or format 1
    unless `old_ok` (`memstack migrate` converts it; `check` verifies either). Read before the schema
    check, which a newer format's keys would fail first with a less useful message."""
    path = store / CONFIG_NAME
    try:
        found = store_format(parse(path.read_text(encoding="utf-8"), str(path), store))
    except (OSError, UnicodeDecodeError):
        return  # load() says what is wrong with the file
    if found == FORMAT or (old_ok and found == 1):
        return
    if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT:
        raise MemstackError(f"{store} is a store of format {found}; this memstack reads format {FORMAT}:"
                            f" upgrade memstack to read it")
    if found == 1:
        raise MemstackError.marked("{store} is a store of format 1; this memstack reads format {format}: run"
                                   " `{verb:memstack migrate}` in it (one commit) first", store=store,
                                   format=FORMAT)
    raise MemstackError(f"{path}: invalid {CONFIG_NAME}: format {found!r} is not 1 or 2")
