"""`memstack hook session-start|session-end|settings`: an agent harness's session hooks (docs/agents.md)."""

import json
import sys
from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.times import now_ms
from memstack.cli.commands import doc


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("hook", help="session hooks for an agent harness (Claude Code): boot context, handoff",
                         **doc("Session hooks for an agent harness: the boot context in at session start, a sealed"
                               " handoff out at the end (docs/agents.md). A hook always exits 0.",
                               "memstack hook settings --agent alice >> .claude/settings.json"))
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
    p = verbs.add_parser("settings", parents=[common],
                         help="print the .claude/settings.json hooks that run this memstack (no venv on PATH needed)",
                         **doc("Print the .claude/settings.json hooks block that runs this memstack by its Python's"
                               " full path, so no virtual environment is needed on PATH.",
                               "memstack hook settings --agent alice"))
    p.add_argument("--agent", metavar="A", help="pass --agent A to the hooks")
    p.set_defaults(func=run_settings)


def _event() -> dict[str, Any]:
    """The harness's JSON object on stdin; anything else reads as no event (a hook never fails the session)."""
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    return event if isinstance(event, dict) else {}


def _print(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")


def run_start(args: Any) -> int:
    from memstack.workflows import harness  # lazy: the session hooks; --help stays quick

    event = _event()
    context = harness.session_start(event, args.store, args.agent)
    _print({"hookSpecificOutput": {"hookEventName": event.get("hook_event_name") or "SessionStart",
                                   "additionalContext": context}})
    return 0


def run_end(args: Any) -> int:
    from memstack.workflows import harness  # lazy: the session hooks; --help stays quick

    try:
        answer = harness.session_end(_event(), now_ms(), args.store, args.agent)
    except MemstackError as exc:  # never keep the agent from stopping: say it where a human looks
        print(f"memstack hook: {exc.message}", file=sys.stderr)
        return 0
    if answer is not None:
        _print(answer)
    return 0


def run_settings(args: Any) -> int:
    agent = f" --agent {args.agent}" if args.agent else ""
    command = f"'{sys.executable}' -m memstack hook"
    hooks = {event: [{"hooks": [{"type": "command", "command": f"{command} {verb}{agent}", "timeout": 30}]}]
             for event, verb in (("SessionStart", "session-start"), ("Stop", "session-end"),
                                 ("SessionEnd", "session-end"))}
    _print({"hooks": hooks})
    return 0
