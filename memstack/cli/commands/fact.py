"""`memstack fact add|get-valid-at|history|invalidate`: the bi-temporal fact store (L3)."""

from pathlib import Path
from typing import Any

from memstack.base.output import emit, emit_each, emit_page, shown
from memstack.base.times import iso
from memstack.cli.commands import AGENT, anchor_options, doc, page_options, pg_option
from memstack.kb.facts import TABLES, Fact
from memstack.repo.store import open_store

TS = "ms, ISO-8601 or now"


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("fact", help="L3 bi-temporal facts: add, query, close",
                         **doc("L3 facts: subject | predicate | object, each valid over a half-open window"
                               " [valid_from, valid_to) and recorded at a transaction time. A fact that stops"
                               " being true is closed (superseded), never deleted, so every past answer can"
                               " be asked again.",
                               "memstack fact add --subject deploys --predicate decided --object monday"
                               " --valid-from 2026-11-02T09:00:00Z",
                               "memstack fact get-valid-at --ts 2026-11-15T00:00:00Z --subject deploys"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)

    p = verbs.add_parser("add", parents=[common], help="append a fact, valid from --valid-from on",
                         **doc("Append an open fact (valid from --valid-from until closed) to the agent's"
                               " month file, kb/facts/<agent>/YYYY-MM.jsonl. It closes nothing: use"
                               " `capture --contradicts` or `fact invalidate` for that.",
                               "memstack fact add --subject api --predicate uses --object grpc --valid-from"
                               " 2026-11-02T09:00:00Z --source docs/adr/0007.md"))
    triple(p)
    p.add_argument("--valid-from", metavar="TS", help=f"when it became true ({TS}; default now)")
    writer(p)
    p.add_argument("--table", default="knowledge", metavar="T",
                   help=f"{', '.join(TABLES)} (default knowledge; jeles atoms are cited external facts,"
                        " opus atoms syntheses)")
    anchor_options(p)
    p.set_defaults(func=run_add)

    p = verbs.add_parser("get-valid-at", parents=[common], help="the facts valid at an instant",
                         **doc("The facts valid at an instant (valid_from <= TS < valid_to), optionally only a"
                               " subject's, optionally as the store believed at an earlier transaction time.",
                               "memstack fact get-valid-at --ts 2026-11-15T00:00:00Z --subject deploys",
                               "memstack fact get-valid-at --ts 2026-11-15T00:00:00Z --as-of 2026-11-10T00:00:00Z"))
    p.add_argument("--ts", required=True, metavar="TS", help=f"the instant ({TS}); valid_from <= TS < valid_to")
    p.add_argument("--subject", metavar="S", help="only this subject")
    p.add_argument("--as-of", metavar="TS", help=f"answer as the store believed at this transaction time ({TS})")
    page_options(p, "facts")
    pg_option(p)
    p.set_defaults(func=run_get_valid_at)

    p = verbs.add_parser("history", parents=[common], help="every version of a subject's facts, oldest first",
                         **doc("Every version of a subject's facts, closed ones included, oldest first.",
                               "memstack fact history --subject deploys --limit 20"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject (required)")
    page_options(p, "facts")
    pg_option(p)
    p.set_defaults(func=run_history)

    p = verbs.add_parser("invalidate", parents=[common], help="close the open fact of a subject and predicate",
                         **doc("Close the open fact(s) of a subject and predicate at --valid-to: the fact is"
                               " kept, its window ends there. Nothing open to close is an error.",
                               "memstack fact invalidate --subject deploys --predicate decided"
                               " --valid-to 2026-12-01T00:00:00Z"))
    p.add_argument("--subject", required=True, metavar="S", help="the subject whose fact to close")
    p.add_argument("--predicate", required=True, metavar="P", help="the predicate whose fact to close")
    p.add_argument("--object", metavar="O", help="close only the open fact with this object")
    p.add_argument("--valid-to", metavar="TS", help=f"when it stopped being true ({TS}; default now)")
    p.add_argument("--recorded-at", metavar="TS", help=f"when the closing is recorded ({TS}; default now)")
    p.set_defaults(func=run_invalidate)


def triple(p: Any) -> None:
    p.add_argument("--subject", required=True, metavar="S", help="what the fact is about, e.g. deploys")
    p.add_argument("--predicate", required=True, metavar="P", help="the relation, e.g. decided, prefers, uses")
    p.add_argument("--object", required=True, metavar="O", help="the value, e.g. monday")


def writer(p: Any) -> None:
    p.add_argument("--recorded-at", metavar="TS", help=f"when the store learns it ({TS}; default now)")
    p.add_argument("--confidence", default="1.0", metavar="F", help="in [0, 1] (default 1.0)")
    p.add_argument("--agent", metavar="A", help=AGENT)
    p.add_argument("--source", metavar="S", help="where it comes from (provenance)")


def render(found: list[Fact], empty: str = "no facts") -> str:
    """One line per fact, times in ISO-8601."""
    return "\n".join(render_line(f) for f in found) or empty


def render_line(f: Fact) -> str:
    """One fact as one line, times in ISO-8601."""
    until = "open" if f["valid_to"] is None else iso(f["valid_to"])
    line = (f"{f['id']}  [{iso(f['valid_from'])}, {until})  {f['subject']} | {f['predicate']} | {f['object']}"
            f"  (confidence {f['confidence']:.2f}, {f['table']}, {f['agent']}, recorded {iso(f['recorded_at'])}")
    if f["expired_at"] is not None:
        line += f", closed {iso(f['expired_at'])}"
    if f["superseded_by"] is not None:
        line += f", superseded by {f['superseded_by']}"
    if f.get("supersedes"):
        line += f", supersedes {', '.join(f['supersedes'])}"
    if f.get("anchors"):
        line += f", anchored to {', '.join(anchor_text(a) for a in f['anchors'])}"
    return shown(line + ")") + code_marker(f)  # a newline in a field would print a line of its own


def code_marker(record: dict[str, Any]) -> str:
    """`  [code: STATUS]` for a record whose code anchors' status a read told (`code_status`), else nothing."""
    found = record.get("code_status")
    return f"  [code: {found['status']}]" if found else ""


def anchor_text(anchor: dict[str, Any]) -> str:
    """A code anchor as `--anchor` spells it: `path`, `path:line` or `path:start-end`."""
    if anchor["start"] is None:
        return str(anchor["path"])
    if anchor["start"] == anchor["end"]:
        return f"{anchor['path']}:{anchor['start']}"
    return f"{anchor['path']}:{anchor['start']}-{anchor['end']}"


def run_add(args: Any) -> int:
    from memstack.api.fact import add_document  # lazy: --help stays quick

    found = add_document(open_store(args.store), subject=args.subject, predicate=args.predicate,
                         object=args.object, valid_from=args.valid_from, recorded_at=args.recorded_at,
                         confidence=args.confidence, agent=args.agent, source=args.source, table=args.table,
                         anchor=args.anchor, repo=args.repo, here=Path.cwd())
    emit(args, found, lambda: "added " + render(found))
    return 0


def run_get_valid_at(args: Any) -> int:
    from memstack.api.fact import each_valid_at, get_valid_at_document  # lazy: --help stays quick
    from memstack.api.readers import (  # lazy: --help stays quick
        fact_reader,
        pg_dsn,
    )

    if args.pg is None and args.subject is None and args.limit is None and args.cursor is None:
        # every subject, the whole answer: streamed, never held whole
        emit_each(args, each_valid_at(open_store(args.store), ts=args.ts, as_of=args.as_of), render_line,
                  "no facts valid then")
        return 0
    found = get_valid_at_document(fact_reader(args.store, pg_dsn(args.store, args.pg)), ts=args.ts,
                                  subject=args.subject, as_of=args.as_of, limit=args.limit, cursor=args.cursor)
    emit_page(args, found, lambda: render(found["items"], "no facts valid then"))
    return 0


def run_history(args: Any) -> int:
    from memstack.api.fact import history_document  # lazy: --help stays quick
    from memstack.api.readers import (  # lazy: --help stays quick
        fact_reader,
        pg_dsn,
    )

    found = history_document(fact_reader(args.store, pg_dsn(args.store, args.pg)), subject=args.subject,
                             limit=args.limit, cursor=args.cursor)
    emit_page(args, found, lambda: render(found["items"], f"no facts about {args.subject!r}"))
    return 0


def run_invalidate(args: Any) -> int:
    from memstack.api.fact import invalidate_document  # lazy: --help stays quick

    closed = invalidate_document(open_store(args.store), subject=args.subject, predicate=args.predicate,
                                 object=args.object, valid_to=args.valid_to, recorded_at=args.recorded_at)
    emit(args, closed, lambda: "closed " + render(closed).replace("\n", "\nclosed "))
    return 0
