"""`memstack agent add NAME` and `memstack agent list`: the agents memstack.yaml lists."""

from typing import Any

from memstack.base.output import emit
from memstack.cli.commands import doc
from memstack.repo.store import open_store


def register(sub: Any, common: Any) -> None:
    top = sub.add_parser("agent", help="the agents of the store (memstack.yaml's agents:)",
                         **doc("The agents that write to this store, listed under `agents:` in memstack.yaml."
                               " A write for an agent the list does not name is refused, so a misspelled"
                               " --agent never starts new files; `agent add` lists a new agent on purpose.",
                               "memstack agent add codex", "memstack agent list"))
    verbs = top.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = verbs.add_parser("add", parents=[common], help="list a new agent and write its identity file",
                         **doc("List NAME under `agents:` in memstack.yaml (checked by the config schema; the"
                               " first agent also becomes memory.default_agent) and write identity/NAME.md for a"
                               " human to fill in. It commits nothing: commit the two files so every clone knows the"
                               " agent (`memstack sync` leaves a change of memstack.yaml to a person). An agent"
                               " already listed changes nothing.",
                               "memstack agent add codex && git add -A && git commit -m 'agent codex'"))
    p.add_argument("name", metavar="NAME", help="the agent's name: lower case letters, digits, '.', '_', '-'")
    p.set_defaults(func=run_add)
    p = verbs.add_parser("list", parents=[common], help="the agents memstack.yaml lists",
                         **doc("The agents memstack.yaml lists, one a line, the default agent marked.",
                               "memstack agent list --json"))
    p.set_defaults(func=run_list)


def run_add(args: Any) -> int:
    from memstack.workflows import agents  # lazy: --help stays quick

    done = agents.add(open_store(args.store), args.name)
    emit(args, done, done["message"])
    return 0


def run_list(args: Any) -> int:
    store = open_store(args.store)
    default = store.config.get("memory", "default_agent")
    listed = store.config.agents
    emit(args, {"agents": listed, "default_agent": default},
         lambda: "\n".join(f"{a}{'  (default)' if a == default else ''}" for a in listed)
         or "no agents listed: any agent may write (`memstack agent add NAME` lists one)")
    return 0
