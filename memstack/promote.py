"""`memstack promote`, the norn-pass: route pending intake into the KB, derive the views, commit.

One pass, with the store's state loaded once:

1. every intake record not yet in `kb/promotions.jsonl` is routed (routing.py)
   to knowledge, jeles_atoms, opus_atoms or the binder; records a human has
   ratified since the last pass go to knowledge at tier `ratified`;
2. a routed record becomes a fact with its provenance. The triple is the
   record's `subject`/`predicate`/`object` when it has them; otherwise subject =
   the title (or `note:<intake id>` without one), predicate `noted`, object =
   the content. Its id is derived from the intake id (`<id>-f`, `<id>-r` when
   ratified), valid_from and recorded_at are the record's `created_at` (the
   decision's `decided_at` when ratified): no clock, so the same logs give the
   same facts;
3. a new fact supersedes the open facts of its table, subject and predicate
   with another object: they are closed at its valid_from. A new fact older
   than an open one is added already closed, superseded by it. An open fact
   with the same object makes the record a duplicate: no new fact, the ledger
   points at the existing one;
4. facts are appended, closings written, ledger lines appended, views and boot
   files rebuilt, and everything under `kb/`, `intake/` and `handoffs/` and the
   boot files is committed, in one commit.

Interrupted anywhere, a second run finishes the same work: fact ids are
derived, so facts already written are not written twice, and whatever the
ledger holds is committed with the rebuilt views.
"""

import dataclasses
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memstack import binder, boot, config, factindex, facts, factstore, files, git, ids, jsonio, pending, schemas, views
from memstack.errors import MemstackError
from memstack.factfiles import Closing
from memstack.output import plural
from memstack.routing import BROKEN, FACT_TABLES, SUB_TIERS, Rules, route
from memstack.sources import WorktreeSource
from memstack.times import parse_ts

NOTED = "noted"
TRAILERS = {"knowledge": "Knowledge", "jeles_atoms": "Jeles-Atoms", "opus_atoms": "Opus-Atoms", "binder": "Binder"}


def fact_id_for(intake_id: str, recorded: int, ratified: bool = False, agent: str | None = None) -> str:
    """The fact an intake record becomes: deterministic, bound to its agent and recorded_at (memstack/ids.py)."""
    return ids.derived(intake_id, "r" if ratified else "f", recorded, agent)


def triple(record: dict[str, Any]) -> tuple[str, str, str]:
    if record.get("subject"):
        return record["subject"], record["predicate"], record["object"]
    return (record["title"].strip() or f"note:{record['id']}"), NOTED, record["content"]


def _pending_problem(record: dict[str, Any]) -> str | None:
    problems = schemas.errors("intake", record)
    if problems:
        return f"I5 invalid intake record: {problems[0]}"
    if parse_ts(record["created_at"], "created_at") < 0:
        return "I5 created_at is before 1970: a fact's transaction time cannot be"
    return None


class _Pending:
    """The records a promotion routes, gathered one file at a time: a record already promoted is
    dropped once its id is read; one that is not a valid intake record stops the promotion, named
    by path:line."""

    def __init__(self, done: set[str], wanted: set[str]) -> None:
        self.done, self.wanted = done, wanted
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.seen: set[str] = set()

    def take(self, relpath: str, number: int, record: dict[str, Any]) -> None:
        ident = record.get("id")
        if isinstance(ident, str) and ident in self.done:
            if ident in self.wanted:
                self.by_id[ident] = record
            return
        if ident in self.seen:  # the same id twice (the hook refuses it; an uncommitted copy): once
            print(f"memstack promote: {relpath}:{number}: intake id {ident} appears twice; the first"
                  " is promoted, this one is left out", file=sys.stderr)
            return
        problem = _pending_problem(record)
        if problem:
            raise MemstackError(f"{relpath}:{number}: {problem} — fix the record (`git checkout --"
                                f" {relpath}` if it was committed fine), then promote again")
        self.seen.add(ident)  # type: ignore[arg-type]
        if ident in self.wanted:
            self.by_id[ident] = record  # type: ignore[index]
        self.records.append((relpath, record))

    def sorted(self) -> list[tuple[str, dict[str, Any]]]:
        return sorted(self.records, key=lambda item: (item[1]["created_at"], item[1]["id"]))


def _load_intake(store: Path, gathered: _Pending, marks: dict[str, list[int]]) -> None:
    """Every intake file read once (`marks`: how far, for pending.save)."""
    from memstack import progress

    paths = pending.intake_files(store)
    for path in progress.each(paths, len(paths), "promote: reading intake", "files"):
        relpath = path.relative_to(store).as_posix()
        st = path.stat()
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            files.check_tail(path, relpath)
        for number, record in enumerate(jsonio.iter_jsonl(data, relpath), start=1):
            gathered.take(relpath, number, record)
        marks[relpath] = pending.mark(path, data, st)


def _ledger(store: Path) -> tuple[set[str], list[dict[str, Any]], dict[str, str | None], int]:
    """From one streamed read of the ledger: the intake ids it holds, the ratify decisions whose record
    is not yet a fact (binder.ratified_unpromoted), the intake file the ledger names for each, and the
    size of the decisions log as read."""
    path = store / binder.DECISIONS
    data = path.read_bytes() if path.exists() else b""  # a human's decisions: few
    decisions = list(jsonio.iter_jsonl(data, binder.DECISIONS))
    first: dict[str, dict[str, Any]] = {}
    for d in decisions:  # one decision per record counts: the first (a side of a disagreement: disputes.py)
        if isinstance(d.get("intake_id"), str):
            first.setdefault(d["intake_id"], d)
    ratify = {i: d for i, d in first.items() if d.get("decision") == "ratify"}
    done: set[str] = set()
    promoted: set[str] = set()
    files_of: dict[str, str | None] = {}
    path = store / binder.LEDGER
    if path.exists():
        for line in files.iter_jsonl(path, binder.LEDGER):
            ident = line.get("intake_id")
            done.add(ident)
            if ident in ratify:
                files_of[ident] = line.get("file")
                if line.get("sub_tier") != "binder":
                    promoted.add(ident)
    return done, [d for i, d in ratify.items() if i not in promoted], files_of, len(data)


def plan(store: Path) -> dict[str, Any]:
    """What a promotion would do, without writing: every routed record and how; `read` is how far
    the logs were read (pending.save)."""
    from memstack import progress

    rules = Rules.from_config(config.load(store))
    found = pending.since_last(store)
    if found is not None:  # only what was written since the last promotion
        gathered = _Pending(found.done, set())
        for relpath, number, record in found.records:
            gathered.take(relpath, number, record)
        ratified, by_id, marks, decisions = found.ratified, found.by_id, found.marks, found.decisions
        files_of: dict[str, str | None] = dict(found.files)
    else:
        done, ratified, files_of, decisions = _ledger(store)
        gathered, marks = _Pending(done, {d["intake_id"] for d in ratified}), {}
        _load_intake(store, gathered, marks)
        by_id = gathered.by_id
    routed = []
    pending_records = gathered.sorted()
    with progress.bar(len(pending_records), "promote: routing") as shown:
        for relpath, record in pending_records:
            sub_tier, via = route(record, rules, cwd=store)
            if via.endswith(BROKEN + ")"):
                print(f"memstack promote: {via[len('rules ('):-1]}; the rules route the rest", file=sys.stderr)
                rules = dataclasses.replace(rules, classifier=None)
            routed.append({"record": record, "file": relpath, "sub_tier": sub_tier, "via": via, "ratified": None})
            shown.update(1)
    for decision in ratified:
        record = by_id.get(decision["intake_id"])
        if record is not None:
            routed.append({"record": record, "file": files_of.get(record["id"]), "sub_tier": "knowledge",
                           "via": "binder", "ratified": decision})
    return {"routed": routed, "read": (marks, decisions)}


def _facts_of(routed: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(routed item, new fact) for every item that becomes a fact."""
    out = []
    for item in routed:
        if item["sub_tier"] not in FACT_TABLES:
            continue
        record, decision = item["record"], item["ratified"]
        subject, predicate, obj = triple(record)
        when = parse_ts(record["created_at"], "created_at")
        recorded = max(when, decision["decided_at"]) if decision else when
        fact = facts.make(subject=subject, predicate=predicate, object=obj, valid_from=when, recorded_at=recorded,
                          agent=record["agent"], confidence=record["confidence"], table=item["sub_tier"],
                          source=record["source"] or None, intake_id=record["id"],
                          id=fact_id_for(record["id"], recorded, decision is not None, record["agent"]),
                          tier="ratified" if decision else record["tier"])
        out.append((item, fact))
    # In time order, ratified records among the rest, so no window overlaps another.
    return sorted(out, key=lambda pair: (pair[1]["valid_from"], pair[1]["id"]))


def _supersede(store: Path, made: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[list[dict[str, Any]],
                                                                                      list[Closing], int]:
    """Decide each new fact's fate against the open facts; returns (facts to append, closings, superseded)."""
    batch_ids = {fact["id"] for _, fact in made}
    existing = factindex.open_by_key(store, sorted({(f["subject"], f["predicate"]) for _, f in made}))
    open_now: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for (subject, predicate), found in existing.items():
        for fact in found:
            if fact["id"] not in batch_ids:  # a fact an interrupted run wrote is decided again, the same way
                open_now.setdefault((fact["table"], subject, predicate), []).append(fact)
    to_append, closings, superseded = [], [], 0
    for item, new in made:
        current = open_now.setdefault((new["table"], new["subject"], new["predicate"]), [])
        if new["predicate"] == NOTED:  # notes accumulate: two notes under one title are two notes
            item["fact_id"] = new["id"]
            to_append.append(new)
            continue
        same = [f for f in current if f["object"] == new["object"]]
        if same:
            item["fact_id"] = same[0]["id"]  # a duplicate: the ledger points at the fact that holds it
            continue
        item["fact_id"] = new["id"]
        later = [f for f in current if f["valid_from"] > new["valid_from"]]
        for old in [f for f in current if f["valid_from"] < new["valid_from"]]:
            closing = {"valid_to": new["valid_from"], "expired_at": max(new["recorded_at"], old["recorded_at"]),
                       "superseded_by": new["id"]}
            if old["id"] in batch_ids:
                old.update(closing)  # not written yet: appended already closed
            else:
                closings.append(Closing(old["id"], **closing))
            current.remove(old)
            superseded += 1
        if later:
            successor = min(later, key=lambda f: (f["valid_from"], f["id"]))
            new.update(valid_to=successor["valid_from"], expired_at=max(new["recorded_at"], successor["recorded_at"]),
                       superseded_by=successor["id"])
        else:
            current.append(new)
        to_append.append(new)
    return to_append, closings, superseded


def _message(counts: Counter[str], ratified: int, superseded: int) -> str:
    total = sum(counts.values())
    moved = ([plural(total, "record") + " routed"] if total or not ratified else []) \
        + ([plural(ratified, "ratified record") + " made knowledge"] if ratified else []) \
        + ([plural(superseded, "fact") + " superseded"] if superseded else [])
    head = "memstack promote: " + ", ".join(moved)
    body = [f"{tier}: {counts[tier]}" for tier in SUB_TIERS if counts[tier]]
    if ratified:
        body.append(f"ratified by a human, now knowledge: {ratified}")
    trailers = [f"Memstack-Routed: {total}"] + [f"Memstack-{TRAILERS[t]}: {counts[t]}" for t in SUB_TIERS]
    trailers += [f"Memstack-Ratified: {ratified}", f"Memstack-Superseded: {superseded}"]
    return "\n\n".join([head, "\n".join(body) or "no new records: the views and boot files are refreshed",
                        "\n".join(trailers)]) + "\n"


def rebuild(store: Path, patched: bool = False) -> list[str]:
    """Rewrite the KB views, then the boot files that read them; returns the paths that changed.
    `patched`: the views of the last commit that changed them, patched with what changed since
    (viewpatch.py), where they can be; else (and by default) built from every fact file."""
    source = WorktreeSource(store)
    return files.write_changed(store, _views(store, source) if patched else views.build(source)) + boot.rebuild(store)


def _views(store: Path, source: WorktreeSource) -> dict[str, bytes]:
    """The views of the work tree: patched from the last committed ones where they can be."""
    if not (git.is_worktree(store) and git.has_commits(store)):
        return views.build(source)
    from memstack import viewpatch
    from memstack.store import folder_of

    top, folder = folder_of(store)
    with git.CatFile(top, git.no_git_env()) as blobs:
        return viewpatch.views_of(top, folder, blobs, git.WORKTREE, source)


def stale(store: Path, patched: bool = False) -> list[str]:
    """The derived files that differ from a rebuild (nothing written). `patched`: the views compared
    with the last committed ones patched (viewpatch.py), where they can be, not with a build from
    every fact file."""
    source = WorktreeSource(store)
    built = _views(store, source) if patched else views.build(source)

    class Overlay(WorktreeSource):
        def read(self, relpath: str) -> bytes | None:
            return built[relpath] if relpath in built else super().read(relpath)

    built.update(boot.build(Overlay(store)))
    return sorted(p for p, data in built.items() if source.read(p) != data)


def _committed_prefix(store: Path) -> int:
    """How many leading bytes of the ledger file are the ledger at HEAD: its size there (the hook
    refuses a commit whose ledger does not begin with HEAD's, so only the size is asked of git)."""
    env = git.no_git_env()
    found = git.run(store, "rev-parse", "--verify", "-q", f"HEAD:./{binder.LEDGER}", env=env,
                    ok=(0, 1, 128)).stdout.decode().strip()
    return int(git.out(store, "cat-file", "-s", found, env=env)) if found else 0


def _uncommitted_ledger(store: Path) -> tuple[Counter[str], int]:
    """Ledger lines not in HEAD, counted by sub-tier (ratified records apart)."""
    counts: Counter[str] = Counter()
    ratified = 0
    if not (store / binder.LEDGER).exists():
        return counts, ratified
    with (store / binder.LEDGER).open("rb") as handle:
        handle.seek(_committed_prefix(store))
        for line in handle:
            entry = jsonio.loads(line, binder.LEDGER)
            if entry.get("via") == "binder":
                ratified += 1
            else:
                counts[str(entry.get("sub_tier"))] += 1
    return counts, ratified


def _commit(store: Path, message: str) -> str | None:
    """Commit kb/, intake/, the boot files and the handoffs they read (nothing else); None when
    they hold no change. Intake and those handoffs go along so the commit holds every source of
    what it derives, also when a second run finishes an interrupted one. A store in a folder of a
    code repository commits only that folder's memory (git runs at the work tree's top)."""
    from memstack.store import folder_of

    top, folder = folder_of(store)
    anchors = sorted(store.glob("session_anchor_*.json"))
    read_by_boot = [jsonio.loads(p.read_bytes(), p.name).get("handoff") for p in anchors]
    wanted = ["kb", "intake", "willow.md", *(p.name for p in anchors), *(h for h in read_by_boot if h)]
    changed = git.out(top, "status", "--porcelain", "-z", "--untracked-files=all", "--",
                      *(folder + w for w in wanted))
    paths = sorted({entry[3:] for entry in changed.split("\0") if len(entry) > 3})  # relative to the top
    if not paths:
        return None
    git.run(top, "add", "-A", "--", *paths)
    if not git.out(top, "diff", "--cached", "--name-only", "--", *paths).strip():
        return None
    env = git.commit_env(top)
    staged = set(git.out(top, "diff", "--cached", "--name-only", "-z", "--", folder or ".").split("\0"))
    verify: list[str] = []
    only = ["--", *paths]
    if not staged - {""} - set(paths):  # the index holds this commit's memory and nothing else of the store
        _check_here(top, folder)
        env["SKIP"] = ",".join(filter(None, [os.environ.get("SKIP"), HOOK]))
        verify = [] if _other_hooks(top) else ["--no-verify"]  # nothing else to run: not even pre-commit
        if not folder or not git.out(top, "diff", "--cached", "--name-only", "--", f":(exclude){folder}").strip():
            only = []  # the index is the commit: git need not stage the paths again in an index of its own
    files.crash_point()
    try:
        git.run(top, "commit", "-q", *verify, "-m", message, *only, env=env)  # through the other hooks
    except MemstackError as exc:
        if exc.message.startswith("git is locked"):
            raise
        detail = exc.message.partition(f"failed in {top}: ")[2] or exc.message
        raise MemstackError(f"the promotion commit was refused (the files are written; fix what the hook"
                            f" says, then run `memstack promote` again): {detail}") from None
    return git.out(top, "rev-parse", "HEAD").strip()


HOOK = "memstack-check"  # the pre-commit hook that runs `memstack check --staged` (store-template/)


def _check_here(top: Path, folder: str) -> None:
    """The promotion commit's check, as its pre-commit hook runs it (`memstack check --staged`), in this
    process: its modules are loaded and its fact index open, so the commit does not pay for a second
    interpreter; the commit then tells pre-commit to skip that hook (SKIP), and any other hook runs."""
    from memstack import check

    found = check.staged(top, folder).violations
    if found:
        raise MemstackError("the promotion commit was refused (the files are written; fix what the check says,"
                            " then run `memstack promote` again):\n" + "\n".join(map(str, found)))


def _other_hooks(top: Path) -> bool:
    """Whether a commit in `top` would run a hook besides memstack's own (pre-commit configured with
    another hook, or a pre-commit or commit-msg hook pre-commit did not install)."""
    hooks = top / git.out(top, "rev-parse", "--git-path", "hooks").strip()
    for name in ("pre-commit", "commit-msg"):
        script = hooks / name
        if script.exists() and b"# File generated by pre-commit:" not in script.read_bytes()[:200]:
            return True
    path = top / ".pre-commit-config.yaml"
    if not path.exists():
        return False
    ids = _HOOK_ID.findall(path.read_text(encoding="utf-8", errors="replace"))  # read as text: no YAML loader
    return not ids or not all(i.startswith("memstack-") for i in ids)


_HOOK_ID = re.compile(r"""(?<![\w-])id:[ \t]*["']?([^\s"'#,}]+)""")  # block or flow style; a comment's
# mention counts too: a hook read wrongly only costs a pre-commit run, a hook missed would go unrun


def _can_commit(store: Path) -> None:
    """Refuse, before anything is written, a promotion whose commit could not be made."""
    if not git.is_worktree(store):
        raise MemstackError(f"{store} is not inside a git repository (no .git): promote commits its work — run it"
                            " in the store's clone, or pass --no-commit")
    git.refuse_locked(store)


def promote(store: Path, now_ms: int, *, dry_run: bool = False, commit: bool = True) -> dict[str, Any]:
    if commit and not dry_run:
        _can_commit(store)
    with files.locked(store, "promote"):
        if not dry_run:
            factstore.finish_pending(store)  # a capture a killed process left half done
        planning = plan(store)
        planned = planning["routed"]
        counts = Counter(item["sub_tier"] for item in planned if item["ratified"] is None)
        ratified = sum(1 for item in planned if item["ratified"] is not None)
        made = _facts_of(planned)
        if dry_run:
            return {"dry_run": True, "routed": dict(counts), "ratified": ratified,
                    "records": [{"intake_id": i["record"]["id"], "agent": i["record"]["agent"],
                                 "sub_tier": i["sub_tier"], "via": i["via"]} for i in planned]}
        to_append, closings, superseded = _supersede(store, made)
        # Facts an interrupted run already wrote are not written again; where that run left one
        # open and this run closes it (a record that arrived since), the closing is written.
        on_disk = factindex.locate(store, [f["id"] for f in to_append])
        for fact in to_append:
            written = on_disk.get(fact["id"], (None, None))[1]
            if written is not None and written["valid_to"] is None and fact["valid_to"] is not None:
                closings.append(Closing(fact["id"], fact["valid_to"], fact["expired_at"], fact["superseded_by"]))
        factstore.append_many(store, [f for f in to_append if f["id"] not in on_disk], check_ids=False)
        if closings:
            factstore.close_many(store, closings)
        lines = b"".join(jsonio.dumps_line({
            "intake_id": item["record"]["id"], "agent": item["record"]["agent"], "sub_tier": item["sub_tier"],
            "fact_id": item.get("fact_id"), "promoted_at": now_ms, "via": item["via"],
            **({"file": item["file"]} if item["file"] else {})}) for item in planned)
        if lines:
            with files.locked(store, binder.LEDGER):
                files.append_held(store / binder.LEDGER, binder.LEDGER, lines)
        pending.save(store, *planning["read"])  # the next promotion reads only what is written after
        changed = rebuild(store, patched=True)
        if commit:  # what the commit moves: this run's lines and any an interrupted run left
            counts, ratified = _uncommitted_ledger(store)
        message = _message(counts, ratified, superseded)
        sha = _commit(store, message) if commit else None
    return {"dry_run": False, "routed": dict(counts), "ratified": ratified, "superseded": superseded,
            "facts_added": len(to_append), "changed": changed, "commit": sha,
            "message": message if sha or planned or changed else "nothing to promote"}
