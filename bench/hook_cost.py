"""What a code-only commit pays for memstack's hook when the store is a folder of a code repository.

    python bench/hook_cost.py [--files 5000] [--repeat 15]

Makes a code repository of --files files with a store in `.memory/` (`memstack init
.memory`), stages a change to one code file, and prints medians of: the check
itself in-process (`check.staged`, what the hook does after Python has started),
`memstack check --staged` as a process, `memstack --version` (the start-up any
hook pays), and a whole `git commit` through the hooks against `--no-verify`.
Not a test: the numbers depend on the machine.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMSTACK = shutil.which("memstack") or "memstack"


def _median_ms(action, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "code"
        (repo / "src").mkdir(parents=True)
        for n in range(args.files):
            (repo / "src" / f"m{n}.py").write_text(f"x = {n}\n")

        def git(*a: str) -> None:
            subprocess.run(["git", *a], cwd=repo, env=env, check=True, capture_output=True)

        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "code")
        subprocess.run([MEMSTACK, "init", ".memory"], cwd=repo, env=env, check=True, capture_output=True)
        os.chdir(repo)
        from memstack.integrity import check

        counter = iter(range(10**9))

        def stage() -> None:
            (repo / "src" / "m0.py").write_text(f"x = {next(counter)}\n")
            git("add", "src/m0.py")

        stage()
        rows = [
            ("check.staged in-process (the check itself)",
             _median_ms(lambda: check.staged(repo, ".memory/"), args.repeat)),
            ("`memstack check --staged` process",
             _median_ms(lambda: subprocess.run([MEMSTACK, "check", "--staged"], env=env, check=True,
                                               capture_output=True), args.repeat)),
            ("`memstack --version` process (start-up only)",
             _median_ms(lambda: subprocess.run([MEMSTACK, "--version"], env=env, check=True, capture_output=True),
                        args.repeat)),
        ]

        def commit(*extra: str):  # type: ignore[no-untyped-def]
            def run() -> None:
                stage()
                git("commit", "-q", *extra, "-m", "code change")
            return run

        rows.append(("`git commit` through the hooks (code-only)", _median_ms(commit(), args.repeat)))
        rows.append(("`git commit --no-verify` (code-only)", _median_ms(commit("--no-verify"), args.repeat)))
    print(f"code-only commit, {args.files} code files, store in .memory/ (median of {args.repeat}, {sys.platform})")
    print("| what | ms |\n|---|---|")
    for name, ms in rows:
        print(f"| {name} | {ms:.1f} |")


if __name__ == "__main__":
    main()
