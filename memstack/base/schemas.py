"""The one schema loader: validates records with the JSON Schemas in `schemas/`.

The schemas are draft-07, which both validators here implement fully. A record
is first checked by fastjsonschema (the schema compiled to Python: ~25x faster,
what keeps a 100,000-record commit's check in seconds); only a record it
refuses goes to jsonschema, the reference, which names every bad field.
"""

import hashlib
import marshal
import os
import sys
import tempfile
from functools import cache
from typing import Any

from memstack.base import jsonio
from memstack.base.errors import MemstackError
from memstack.base.resources import data_dir

KINDS = ("intake", "fact", "promotion", "binder", "soil", "anchor", "handoff", "config", "view", "memory-tests",
         "tombstone", "erasure")


@cache
def schema(kind: str) -> dict[str, Any]:
    path = data_dir("schemas") / f"{kind}.schema.json"
    result: dict[str, Any] = jsonio.loads(path.read_bytes(), str(path))
    return result


@cache
def digest(kind: str) -> str:
    """The schema file's SHA-256 (hex): what a verdict kept between processes was reached against."""
    return hashlib.sha256((data_dir("schemas") / f"{kind}.schema.json").read_bytes()).hexdigest()


@cache
def _validator(kind: str) -> Any:
    from jsonschema import Draft7Validator  # deferred: ~90 ms to import

    return Draft7Validator(schema(kind), format_checker=Draft7Validator.FORMAT_CHECKER)


@cache
def _fast(kind: str) -> Any:
    """The schema's fastjsonschema validator: made once (~10-40 ms a schema), then kept compiled beside the
    schemas as Python keeps a module's bytecode (`__pycache__/`, named by the schema's hash, fastjsonschema's
    version and the interpreter's tag), so a process loads it in under a millisecond."""
    import fastjsonschema  # deferred: ~13 ms, only when a record is validated

    folder = data_dir("schemas") / "__pycache__"
    digest = hashlib.sha256(jsonio.dumps_line(schema(kind)) + fastjsonschema.VERSION.encode()).hexdigest()[:16]
    kept = folder / f"{kind}.{digest}.{sys.implementation.cache_tag}.marshal"
    try:
        name, code = marshal.loads(kept.read_bytes())
        namespace: dict[str, Any] = {}
        exec(code, namespace)  # our own compiled schema, as a .pyc is a module's
        return namespace[name]
    except Exception:  # not kept yet, or torn: made again
        pass
    made = fastjsonschema.compile(schema(kind))
    try:
        code = compile(fastjsonschema.compile_to_code(schema(kind)), f"<{kind} schema>", "exec")
        folder.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:  # a cache: no fsync, no undo
            tmp.write(marshal.dumps((made.__name__, code)))
        os.replace(tmp.name, kept)
    except OSError:  # a read-only installation: made again by each process
        pass
    return made


def problems(kind: str, record: Any) -> list[Any]:
    """Every way `record` breaks the schema, as jsonschema's errors (`absolute_path`, `validator`, `message`,
    ...), sorted by where they are: for a reader that words them itself."""
    from fastjsonschema import JsonSchemaException  # deferred with fastjsonschema

    try:
        _fast(kind)(record)
        return []
    except JsonSchemaException:
        pass  # the reference says exactly what is wrong (or, where the two differ, that nothing is)
    return sorted(_validator(kind).iter_errors(record), key=lambda e: list(map(str, e.absolute_path)))


def errors(kind: str, record: Any) -> list[str]:
    """Every way `record` breaks the schema, each as '<dotted.path>: <message>'."""
    return [f"{'.'.join(str(part) for part in error.absolute_path) or '(record)'}: {error.message}"
            for error in problems(kind, record)]


def validate(kind: str, record: Any, where: str = "") -> None:
    """Raise a MemstackError (exit 2) naming the first bad field."""
    problems = errors(kind, record)
    if problems:
        prefix = f"{where}: " if where else ""
        raise MemstackError(f"{prefix}invalid {kind} record: {problems[0]}")


def check_files(paths: list[str]) -> list[str]:
    """Problems with schema files themselves (each must be a valid draft-07 JSON Schema)."""
    from jsonschema import Draft7Validator  # deferred: ~90 ms to import
    from jsonschema.exceptions import SchemaError  # deferred with jsonschema

    problems = []
    for path in paths:
        try:
            Draft7Validator.check_schema(jsonio.loads(open(path, "rb").read(), path))
        except (MemstackError, SchemaError) as exc:
            problems.append(f"{path}: {getattr(exc, 'message', exc)}")
    return problems


if __name__ == "__main__":  # the repository's own pre-commit hook: python -m memstack.base.schemas FILE...
    found = check_files(sys.argv[1:])
    print("\n".join(found) or f"{len(sys.argv) - 1} schemas are valid JSON Schema (draft-07)")
    raise SystemExit(1 if found else 0)
