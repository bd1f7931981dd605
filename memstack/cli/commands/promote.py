"""`memstack promote` and `memstack rebuild [--check]`."""

from typing import Any

from memstack.base.output import emit, plural
from memstack.cli.commands import doc
from memstack.repo.store import open_store

DRY_RUN_SHOWN = 50  # api.promote.DRY_RUN_SHOWN (not imported: --help stays quick)


def register(sub: Any, common: Any) -> None:
    p = sub.add_parser("promote", parents=[common],
                       help="route pending intake into the KB, rebuild the views, commit (the norn-pass)",
                       **doc("The norn-pass (Willow's name for promotion): route every intake record not yet"
                             " in the promotion ledger (kb/promotions/) by the rules of memstack.yaml to"
                             " knowledge (verified or ratified, confidence >= 0.80), jeles_atoms (cited external"
                             " facts: a URL source or tier fetched, relevance >= 0.5), opus_atoms (syntheses of"
                             " the opus agents) or the Binder (waits for a human); append the facts, rebuild the"
                             " views and boot files, and commit it all in one commit.",
                             "memstack promote", "memstack promote --dry-run"))
    p.add_argument("--now-ts", metavar="TS",
                   help="when the promotion runs (ms, ISO-8601 or now; default now): refused beyond the"
                        " clock skew, otherwise unused; each ledger line's promoted_at is its record's time")
    p.add_argument("--dry-run", action="store_true", help="show the routing, write nothing")
    p.add_argument("--no-commit", action="store_true", help="write the files, leave committing to you")
    p.add_argument("--limit", metavar="N",
                   help=f"with --dry-run, list the routing of at most N records (default {DRY_RUN_SHOWN}); the"
                        " summary counts them all")
    p.add_argument("--verbose", action="store_true",
                   help="also print the commit's Memstack-* trailers (the commit carries them either way)")
    p.set_defaults(func=run_promote)
    p = sub.add_parser("rebuild", parents=[common], help="rebuild every derived file (KB views, boot files)",
                       **doc("Rebuild every derived file (the kb/ view shards, session anchors, willow.md) from"
                             " the sources; --check writes nothing and exits 1 naming the stale ones (derived"
                             " files that differ from a rebuild: they lag their sources, which is no"
                             " violation), 0 when every one is fresh.",
                             "memstack rebuild", "memstack rebuild --check"))
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming the stale files (no violation), 0 when all are fresh")
    p.set_defaults(func=run_rebuild)


def _without_trailers(message: str) -> str:
    """The commit message without its closing block of `Memstack-*` trailers (what `--verbose` shows)."""
    head, _, last = message.rstrip().rpartition("\n\n")
    return head if head and all(line.startswith("Memstack-") for line in last.splitlines()) else message.rstrip()


def _human(result: dict[str, Any], verbose: bool) -> str:
    if result["dry_run"]:
        return _dry_run(result)
    message = result["message"].rstrip() if verbose else _without_trailers(result["message"])
    if result["commit"]:
        return f"{message}\n\ncommitted {result['commit'][:12]}"
    return message


def _dry_run(result: dict[str, Any]) -> str:
    """The summary first, then the first records' routing, then how many more there are."""
    total = len(result["records"]) + result["remaining"]
    where = ", ".join(f"{tier} {count:,}" for tier, count in sorted(result["routed"].items()))
    ratified = f", {result['ratified']:,} ratified" if result["ratified"] else ""
    lines = [f"{plural(total, 'record')} would be routed{': ' + where if where else ''}{ratified}"
             " (dry run: nothing written)"]
    lines += [f"{r['intake_id']}  {r['agent']}  -> {r['sub_tier']} ({r['via']})" for r in result["records"]]
    if result["remaining"]:
        lines.append(f"… {result['remaining']:,} more (--limit N lists more)")
    return "\n".join(lines)


def run_promote(args: Any) -> int:
    from memstack.api.promote import promote_document  # lazy: --help stays quick

    result = promote_document(open_store(args.store), args.now_ts, args.dry_run, args.no_commit, args.limit)
    emit(args, result, lambda: _human(result, args.verbose))
    return 0


def run_rebuild(args: Any) -> int:
    from memstack.integrity.report import stale_line  # lazy: --help stays quick
    from memstack.workflows import promote

    store = open_store(args.store)
    if args.check:  # exit 1 says "stale", as `git diff --exit-code` says "differs": no violation (docs/check.md)
        stale = promote.stale(store.root)
        emit(args, {"fresh": not stale, "stale": stale},
             "\n".join(stale_line(p) for p in stale) or "derived files are fresh")
        return 1 if stale else 0
    changed = promote.rebuild(store.root)
    emit(args, {"changed": changed}, "\n".join(f"rebuilt {p}" for p in changed) or "derived files already fresh")
    return 0


