"""`memstack test [FILE]`: run a store's memory tests (docs/memory-tests.md); exit 1 when one fails."""

from typing import Any

from memstack.base.output import emit, note, plural, shown
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("test", parents=[common],
                       help="run the store's memory tests (memory-tests.yaml): exit 1 when a case fails",
                       **doc("Run the store's memory tests: each case a search or a recall, and the ids or text"
                             " its first k answers must hold (expect) and must not hold (expect_not). Prints a"
                             " line per case, PASS or FAIL and why; exits 1 when a case fails, 2 when the file is"
                             " malformed. Reads; writes nothing but the indexes' caches in .memstack/"
                             " (docs/memory-tests.md).",
                             "memstack test", "memstack test checks/deploys.yaml --json"))
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="the tests to run (default memory-tests.yaml at the store's root)")
    p.set_defaults(func=run)


def render(document: dict[str, Any]) -> str:
    lines = []
    for case in document["cases"]:
        lines.append(f"{'PASS' if case['passed'] else 'FAIL'}  {case['index']:>3}  {shown(case['name'])}")
        further = {found["entry"]: found for found in case["found_further"]}
        for entry in case["missing"]:
            lines.append(f"           missing {shown(repr(entry))}: " + _went(case, further.get(entry)))
        for found in case["present"]:
            lines.append(f"           present {shown(repr(found['entry']))} (expect_not): answer {found['rank']}"
                         + _place(found))
    total = len(document["cases"])
    if not total:
        return f"{document['file']}: no cases, nothing to check"
    lines.append(f"{plural(total, 'case')}: {document['passed']} passed, {document['failed']} failed"
                 f" ({document['file']})")
    return "\n".join(lines)


def _went(case: dict[str, Any], found: dict[str, Any] | None) -> str:
    """Where a missing entry went: further down, or nowhere the command looked."""
    first = "the first answer" if case["k"] == 1 else f"the first {case['k']}"
    if found is not None:
        return f"answer {found['rank']}, below {first}{_place(found)}"
    looked = case["looked_further"]
    if case["looked_at_all"]:
        return f"not found ({plural(looked, 'answer')} in all)"
    return f"not found in the first {looked} answers"


def _place(found: dict[str, Any]) -> str:
    what = " ".join(str(x) for x in (found["where"], found["id"]) if x)
    return f", {shown(what)}" if what else ""


def run(args: Any) -> int:
    from memstack.api.memtests import memory_tests_document  # lazy: --help stays quick

    document = memory_tests_document(open_store(args.store), args.file, lambda said: note(f"test: {said}"))
    emit(args, document, lambda: render(document))
    return 1 if document["failed"] else 0
