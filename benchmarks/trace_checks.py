"""Trace a crawl of ``offline_real.py`` check by check: what the stop rule saw and who moved what.

    python benchmarks/trace_checks.py --corpus sqlite --strategy densest --inflight 32 [--from 9 --to 14]
        [--classes] [--steps]

At each check (every 25 modelled pages or so), printed by truth label: the new pages whose
predicted class missed (``predicted -> now``) and the earlier pages that changed class
(``before -> now``), chrome-only pages marked ``bare`` — the counts ``--checks`` of
``offline_real.py`` gives, broken down.  ``--classes``: each class's truth mix after the check.
``--steps``: which step of the regroup (``structcrawl.core.split``) moved which pages, and the
groups the splits found with the class ``home`` gave them (printed before their check's
summary: the regroup runs inside the check).  A diagnostic driver: it wraps the
explorer's and the regroup's functions for the run, as a debugger would; the crawl is
``offline_real.run``'s, unchanged.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import offline_real  # noqa: E402
from structcrawl.core import explorer, split  # noqa: E402
from structcrawl.core.model import site_chrome  # noqa: E402

REGROUP_STEPS = ("_gather_bare", "_return_rich", "_place_bare", "_join_lone_twins")
SPLITS = ("told_apart_members", "mixed_members")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--strategy", default="densest")
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--from", dest="first", type=int, default=1, help="first check traced")
    ap.add_argument("--to", dest="last", type=int, default=10**9, help="last check traced")
    ap.add_argument("--classes", action="store_true", help="each class's truth mix after the check")
    ap.add_argument("--steps", action="store_true", help="what each regroup step moved")
    args = ap.parse_args(argv)

    def label(url: str) -> str | None:
        return corpora.label(args.corpus, offline_real.offline_path(url))

    done = [0]  #: checks made so far

    def traced() -> bool:
        return args.first <= done[0] + 1 <= args.last

    check = explorer.Explorer.check

    def check_traced(self) -> None:
        before, seen = self._checked
        new = self.order[seen:]
        check(self)
        done[0] += 1
        if not args.first <= done[0] <= args.last:
            return
        model = self.model
        chrome = site_chrome(model)
        now = model.page_class

        def bare(url: str) -> str:
            return " bare" if model.pages[url].schema <= chrome else ""

        missed = Counter((label(u), self.predicted.get(u), now[u], bare(u))
                         for u in new if self.predicted.get(u) != now[u])
        moved = Counter((label(u), c, now[u], bare(u)) for u, c in before.items() if now[u] != c)
        print(f"check {done[0]}: {len(now)} pages, {len(model.classes)} classes, {len(new)} new")
        for kind, counts in (("missed", missed), ("moved", moved)):
            for (name, a, b, mark), n in sorted(counts.items(), key=str):
                print(f"    {kind:6} {n:4d} {name} {a} -> {b}{mark}")
        if args.classes:
            for cid, cls in sorted(model.classes.items()):
                print(f"    class {cid:4d} ({cls.size:4d}): {dict(Counter(label(u) for u in cls.members))}")

    explorer.Explorer.check = check_traced
    if args.steps:
        _trace_regroup(label, traced)
    res = offline_real.run(args.corpus, args.strategy, inflight=args.inflight)
    print(f"{res['fetched']} of {res['site']} fetched, {res['classes']} classes, stable {res['stable']}, "
          f"F* {res['res']['fstar']:.3f}, agreement {res['agree']:.3f}")
    return 0


def _trace_regroup(label, traced) -> None:
    """Wrap the regroup's steps (``split``'s module functions, looked up at call time) to print their moves."""
    def moves(name, step):
        def wrapped(model, assignment, *rest):
            before = dict(assignment)
            out = step(model, assignment, *rest)
            moved = Counter((label(u), before[u], assignment[u]) for u in assignment if before[u] != assignment[u])
            if moved and traced():
                print(f"    regroup {name}: {dict(moved)}")
            return out
        return wrapped

    def groups(name, find):
        def wrapped(model, class_id, *rest, **kw):
            group = find(model, class_id, *rest, **kw)
            if group and traced():
                print(f"    regroup {name} of class {class_id}: {dict(Counter(label(u) for u in group))}")
            return group
        return wrapped

    def homes(find):
        def wrapped(model, group, origin, *rest, **kw):
            target = find(model, group, origin, *rest, **kw)
            if traced():
                print(f"    regroup home of {dict(Counter(label(u) for u in group))} from {origin}: {target}")
            return target
        return wrapped

    for name in REGROUP_STEPS:
        setattr(split, name, moves(name, getattr(split, name)))
    for name in SPLITS:
        setattr(split, name, groups(name, getattr(split, name)))
    split.home = homes(split.home)


if __name__ == "__main__":
    sys.exit(main())
