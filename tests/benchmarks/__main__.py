"""Run the benchmarks: ``python -m tests.benchmarks [NAME ...] [--memories N]``.

Each ``bench_*.py`` module here has ``run(memories: int) -> None`` printing its table.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import time

from . import __path__ as HERE


def main() -> int:
    parser = argparse.ArgumentParser(prog="make bench")
    parser.add_argument("names", nargs="*", help="run only benchmarks whose module name contains these")
    parser.add_argument("--memories", type=int, default=int(os.environ.get("ORA_BENCH_MEMORIES", "1000000")))
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    modules = sorted(m.name for m in pkgutil.iter_modules(HERE) if m.name.startswith("bench_"))
    chosen = [m for m in modules if not args.names or any(n in m for n in args.names)]
    print(f"# Ora Desktop benchmarks on {args.memories:,} memories ({', '.join(chosen)})")
    failed = 0
    for name in chosen:
        started = time.perf_counter()
        module = importlib.import_module(f"tests.benchmarks.{name}")
        try:
            module.run(args.memories)
        except Exception as exc:  # keep going: one broken benchmark should not hide the others
            failed += 1
            print(f"\n## {name} FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"  ({name} took {time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
