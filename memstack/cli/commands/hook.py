"""`memstack hook session-start|session-end|settings|install`: an agent harness's session hooks (docs/agents.md).

A session hook never stands in the harness's way: an event it cannot read (empty, not JSON, not an object,
or an event the verb does not answer) and a store it cannot use are noted on stderr, and it exits 0 with
nothing on stdout (Claude Code reads exit code 2 from a Stop hook as "keep working")."""

import json
import sys
from pathlib import Path
from typing import Any

from memstack.base.errors import MemstackError, os_problem
from memstack.base.names import check_name
from memstack.base.output import emit
from memstack.base.times import now_ms
from memstack.cli.commands import doc
from memstack.repo.store import open_store, resolve_agent


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("hook", help="session hooks for an agent harness (Claude Code): boot context, handoff",
                         **doc("Session hooks for an agent harness: the boot context in at session start, a sealed"
                               " handoff out at the end (docs/agents.md). A session hook always exits 0."
                               " `memstack hook install` merges them into the project's .claude/settings.json.",
                               "memstack hook install --store ../my-memory --agent alice"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, event, text, func in (
        ("session-start", "SessionStart", "read the harness's event JSON on stdin; print the boot context as"
                          " SessionStart additionalContext", run_start),
        ("session-end", "SessionEnd", "read the event JSON on stdin; at Stop ask once for a handoff if none was"
                        " sealed this session, at SessionEnd write a carry-over handoff", run_end),
    ):
        p = verbs.add_parser(verb, parents=[common], help=text,
                             **doc(text, f"echo '{{\"hook_event_name\": \"{event}\"}}' | memstack hook {verb}"))
        p.add_argument("--agent", metavar="A", help="the agent (default: MEMSTACK_AGENT, then memory.default_agent)")
        p.set_defaults(func=func)
    p = verbs.add_parser("install", parents=[common],
                         help="merge memstack's hooks into the project's .claude/settings.json (kept, idempotent)",
                         **doc("Merge the hooks that run this memstack into .claude/settings.json of the project"
                               " (made if missing). Every other setting and hook is kept; a memstack hook already"
                               " there is replaced, never doubled, so running it again changes nothing. The hooks"
                               " name the store by its absolute path and run memstack by its Python's full path,"
                               " so no virtual environment is needed on PATH. A file that is not valid JSON is"
                               " refused and left as it is.",
                               "memstack hook install --store ../my-memory --agent alice",
                               "memstack --store ~/memory hook install --project ~/code/app"))
    p.add_argument("--agent", metavar="A", help="pass --agent A to the hooks (default: the hooks use MEMSTACK_AGENT,"
                                                " then memory.default_agent)")
    p.add_argument("--project", metavar="DIR", default=".", help="the project whose .claude/settings.json to"
                                                                  " change (default: the current folder; ~ for"
                                                                  " your user settings)")
    p.add_argument("--without", metavar="EVENT", action="append", default=[], choices=("Stop", "SessionEnd"),
                   help="leave memstack out of EVENT (Stop: never ask for a handoff; SessionEnd: never write a"
                        " carry-over), taking out a memstack hook already there; repeatable")
    p.set_defaults(func=run_install)
    p = verbs.add_parser("settings", parents=[common],
                         help="print the .claude/settings.json hooks that run this memstack (no venv on PATH needed)",
                         **doc("Print the .claude/settings.json hooks block that runs this memstack by its Python's"
                               " full path, so no virtual environment is needed on PATH; with --store, the hooks"
                               " name that store by its absolute path (else they find it from the session's"
                               " folder). `memstack hook install` merges it into the file for you.",
                               "memstack --store ../my-memory hook settings --agent alice"))
    p.add_argument("--agent", metavar="A", help="pass --agent A to the hooks")
    p.set_defaults(func=run_settings)


# The events each session hook answers; any other is noted and left alone.
ANSWERS = {"session-start": ("SessionStart",), "session-end": ("Stop", "SessionEnd")}


def _event(verb: str) -> tuple[dict[str, Any] | None, str]:
    """The harness's event on stdin, or None and why it cannot be read."""
    try:
        text = sys.stdin.read() if sys.stdin is not None else ""
    except (OSError, ValueError):  # ValueError: stdin closed, or not UTF-8 text
        return None, "cannot read the event on stdin"
    if not text.strip():
        return None, "no event on stdin"
    try:
        event = json.loads(text)
    except ValueError:
        return None, "the event on stdin is not JSON"
    if not isinstance(event, dict):
        return None, "the event on stdin is not a JSON object"
    name = event.get("hook_event_name")
    if name not in ANSWERS[verb]:
        return None, (f"unknown event {name!r}" if name is not None else "the event names no hook_event_name") \
            + f" (memstack hook {verb} answers {' and '.join(ANSWERS[verb])})"
    return event, ""


def _note(verb: str, problem: str) -> int:
    """A session hook's problem, said where a human looks; exit 0 so the session goes on."""
    print(f"memstack hook {verb}: {problem}; nothing done", file=sys.stderr)
    return 0


def _print(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")


def run_start(args: Any) -> int:
    from memstack.workflows import harness  # lazy: the session hooks; --help stays quick

    event, problem = _event("session-start")
    if event is None:
        return _note("session-start", problem)
    try:
        context = harness.session_start(event, args.store, args.agent)
    except OSError as exc:  # a store it cannot write its session note in: the session goes on without context
        return _note("session-start", os_problem(exc))
    _print({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}})
    return 0


def run_end(args: Any) -> int:
    from memstack.workflows import harness  # lazy: the session hooks; --help stays quick

    event, problem = _event("session-end")
    if event is None:  # never block on an event it cannot read
        return _note("session-end", problem)
    try:
        answer = harness.session_end(event, now_ms(), args.store, args.agent)
    except MemstackError as exc:  # never keep the agent from stopping: say it where a human looks
        return _note("session-end", exc.message)
    except OSError as exc:
        return _note("session-end", os_problem(exc))
    if answer is not None:
        _print(answer)
    return 0


def _named_store(args: Any) -> Path | None:
    return open_store(args.store).root if args.store else None


def run_settings(args: Any) -> int:
    from memstack.workflows import claude_settings

    agent = check_name(args.agent, "agent") if args.agent is not None else None
    _print({"hooks": claude_settings.hooks_block(_named_store(args), agent)})
    return 0


def run_install(args: Any) -> int:
    from memstack.workflows import claude_settings

    store = open_store(args.store)
    resolve_agent(store, args.agent)  # the hooks will need an agent: refuse now rather than at every session
    done = claude_settings.install(Path(args.project), store.root, args.agent, tuple(args.without))
    emit(args, done, lambda: _installed(done))
    return 0


def _installed(done: dict[str, Any]) -> str:
    who = f", agent {done['agent']}" if done["agent"] else ""
    if not done["written"]:
        return f"{done['settings']}: memstack's hooks already in place (store {done['store']}{who}); nothing written"
    events = ", ".join(f"{event} {'left out' if what == 'absent' else what}" for event, what in done["events"].items())
    verb = "created" if done["created"] else "updated"
    return f"{verb} {done['settings']}: {events} (store {done['store']}{who}); every other setting kept"
