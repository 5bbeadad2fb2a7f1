"""Why a corpus's offline crawl ends as it does: the model's decisions, traced against the truth.

    python benchmarks/diagnose.py classes  --corpus crystal [--strategy densest] [--inflight 32] [--paths 6]
    python benchmarks/diagnose.py checks   --corpus crystal    # per check: mispredicted and moved pages, untried
    python benchmarks/diagnose.py pairs    --corpus crystal    # per check: refinement's verdict on each class pair
    python benchmarks/diagnose.py stops    --corpus crystal    # per check: errors, run that held, untried
    python benchmarks/diagnose.py decide   --corpus crystal --label enum   # the update's code lengths

The crawl is ``benchmarks/offline_real.py``'s (the corpus files as ``python -m http.server``
serves them, the spider's order replayed with ``--inflight`` = 2 × CONCURRENT_REQUESTS), traced by
wrapping the explorer's and the model's methods in this process only.  Pages are named by their
truth class (``benchmarks/corpora.py``; stubs apart where the corpus has them).  Output is for
reading, not for quoting: figures to quote come from ``real_sites.py`` and ``order_spread.py``.

* ``classes``: the final classes, each with its members' truth classes and its most frequent link
  paths (share of members; ``C`` the site's chrome, ``*`` a core section).
* ``checks``: at each check of the stop rule, the pages modelled since the last one that went
  elsewhere than predicted (truth, predicted class, placed class), the earlier pages that changed
  class, and the untried collections holding the stop.
* ``pairs``: at each check, for every pair of classes of two pages or more, what refinement's rules
  say (``refine.Refiner.pairs``): fingerprint similarity, told apart, shared content sections,
  nested cores, a split the next check would undo, and the pairs approved.
* ``stops``: one line per check of the stop rule — pages, new pages mispredicted of those checked,
  earlier pages moved, checks in a row that held, untried collections — then the check at which the
  window first held and whether untried collections or later mispredictions kept the crawl going: is
  a long crawl held by the model's errors or by the collections it has not tried?
* ``decide``: for each candidate holding a page of truth class ``--label``, the update's code length
  in every class with the dt and twin rules' inputs, what classification predicts, what it did.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
import offline_real  # noqa: E402
from structcrawl.core import explorer as explorer_module  # noqa: E402
from structcrawl.core import model as model_module  # noqa: E402
from structcrawl.core import stability as stability_module  # noqa: E402
from structcrawl.core.model import core_sections, site_chrome, told_apart, with_links_of_their_own  # noqa: E402
from structcrawl.core.refine import kind_wrappers, nested, one_kind  # noqa: E402
from structcrawl.core.stability import Check  # noqa: E402
from structcrawl.core.unionfind import jaccard  # noqa: E402


def truth_by_url(corpus: str) -> dict[str, str | None]:
    pages = corpora.html_pages(corpus)
    labels = {p: corpora.label(corpus, p) for p in pages}
    labels = corpora.stub_truth(corpus, labels) or labels
    return {offline_real.BASE + offline_real.quote(p): c for p, c in labels.items()}


def crawl(args: argparse.Namespace) -> explorer_module.Explorer:
    """The offline crawl (and its scores, printed), returning the explorer it ended with."""
    ended = {}
    run_offline = offline_real.run_offline

    def keep(*a, **k):
        ended["explorer"] = run_offline(*a, **k)
        return ended["explorer"]

    with mock.patch.object(offline_real, "run_offline", keep):
        out = offline_real.run(args.corpus, args.strategy, inflight=args.inflight, audit_seed=args.audit_seed)
    print(f"{args.corpus} {args.strategy} at {args.inflight} in flight: {out['fetched']} fetched, "
          f"F* {out['res']['fstar']:.3f}, {out['classes']} classes, stable {out['stable']}")
    return ended["explorer"]


def show_classes(args: argparse.Namespace) -> None:
    truth = truth_by_url(args.corpus)
    model = crawl(args).model
    chrome = site_chrome(model)
    for cid, cls in sorted(model.classes.items()):
        print(f"class {cid}: {cls.size} pages {dict(Counter(truth.get(u) for u in cls.members))}")
        core = core_sections(cls)
        for path, k in sorted(cls.path_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:args.paths]:
            print(f"    {k / cls.size:.2f} {'C' if path in chrome else ' '}{'*' if path in core else ' '} {path}")


def show_checks(args: argparse.Namespace) -> None:
    truth = truth_by_url(args.corpus)
    check = explorer_module.Explorer.check

    def traced(self):
        frontier, found_before = self.frontier, self._found_at_check
        holding = [c for c in frontier.collections.values()
                   if frontier._holds_stop(c, self._class_size, found_before) and frontier._pending(c)]
        before, checked = self._checked
        check(self)
        now = self.model.page_class
        missed = Counter((truth.get(u), self.predicted.get(u), now[u]) for u in self.order[checked:]
                         if self.predicted.get(u) != now[u])
        moved = Counter((truth.get(u), c, now[u]) for u, c in before.items() if now[u] != c)
        sizes = {c: k.size for c, k in sorted(self.model.classes.items())}
        print(f"check at {len(now)} pages: classes {sizes}")
        for (label, predicted, placed), n in sorted(missed.items(), key=str):
            print(f"    mispredicted {n} {label}: predicted {predicted}, placed {placed}")
        for (label, old, new), n in sorted(moved.items(), key=str):
            print(f"    moved {n} {label}: {old} -> {new}")
        for coll in holding:
            print(f"    untried: class {coll.source} ({self._class_size(coll.source)} pages), on {coll.pages}, "
                  f"{len(coll.urls)} URLs, {coll.path}")

    with mock.patch.object(explorer_module.Explorer, "check", traced):
        crawl(args)


def show_pairs(args: argparse.Namespace) -> None:
    refine_confirmed = explorer_module.Explorer._refine_confirmed

    def traced(self):
        model, refiner = self.model, self.refiner
        classes, chrome = model.classes, site_chrome(model)
        cores = {c: core_sections(k) for c, k in classes.items()}
        kinds = kind_wrappers(cores.values(), chrome)
        prints = {c: k.fingerprint(refiner.occurrence) for c, k in classes.items()}
        sized = {c: max(1, len(with_links_of_their_own(model, k.members, chrome)[0])) for c, k in classes.items()}
        approved = [(a, b, round(s, 2)) for a, b, s in refiner.pairs(model, self.frontier)]
        print(f"check at {len(model.pages)} pages: approved {approved}, approved at the last {sorted(self._approved)}")
        for a, b in combinations(sorted(classes), 2):
            if min(classes[a].size, classes[b].size) < 2:
                continue
            apart = told_apart(classes[a].path_counts, sized[a], classes[b].path_counts, sized[b], chrome=chrome)
            similarity = jaccard(prints[a], prints[b])
            print(f"    {a} ({classes[a].size}) {b} ({classes[b].size}): similarity {similarity:.2f}, "
                  f"told apart {apart}, content shared {len((cores[a] & cores[b]) - chrome)}, "
                  f"nested {nested(cores[a], cores[b], chrome, min(classes[a].size, classes[b].size))}, "
                  f"one kind {one_kind(cores[a], cores[b], chrome, kinds)}, "
                  f"splits again {refiner._splits_again(model, a, b, chrome)}, "
                  f"cores beyond the chrome {len(cores[a] - chrome)} / {len(cores[b] - chrome)}")
        refine_confirmed(self)

    with mock.patch.object(explorer_module.Explorer, "_refine_confirmed", traced):
        crawl(args)


def show_stops(args: argparse.Namespace) -> None:
    observe = stability_module.StabilityRule.observe
    checks: list[tuple[Check, int, bool]] = []

    def traced(self, check, revised=()):
        stable = observe(self, check, revised)
        checks.append((check, self.quiet_checks, stable))
        print(f"check at {check.pages} pages: mispredicted {check.new - check.predicted} of {check.new}, "
              f"moved {check.moved} of {check.earlier}, held {self.quiet_checks} in a row, "
              f"untried {check.untried}{' -> stable' if stable else ''}")
        return stable

    with mock.patch.object(stability_module.StabilityRule, "observe", traced):
        crawl(args)
    window = stability_module.StabilityRule().window
    first = next(((c, stable) for c, quiet, stable in checks if quiet >= window), None)
    if first is None:
        print(f"the window ({window} checks) never held: the model's mispredictions or moves kept the crawl going")
    elif first[1]:
        print(f"the window first held at {first[0].pages} pages and the crawl stopped there")
    else:
        print(f"the window first held at {first[0].pages} pages, held by {first[0].untried} untried "
              f"collection(s); the crawl ended at {checks[-1][0].pages} pages")


def show_decisions(args: argparse.Namespace) -> None:
    truth = truth_by_url(args.corpus)
    update = model_module.SiteModel.update

    def traced(self, cand, dt=0.0):
        labels = [truth.get(p.url) for p in cand.pages]
        if args.label not in labels or not self.classes:
            return update(self, cand, dt)
        path_bits = self._path_bits(cand)
        chrome = self.chrome()
        rows = []
        for cls in self.classes.values():
            twin = jaccard(cand.fingerprint, cls.fingerprint()) if cand.fingerprint else 0.0
            apart = min(cand.size, cls.size) >= 2 and told_apart(cand.path_counts, cand.size, cls.path_counts,
                                                                 cls.size, chrome=chrome)
            rows.append(f"    class {cls.id} ({cls.size}): {self.merge_bits(cand, cls, path_bits):.1f} bits, "
                        f"link distance {model_module._distance(cand.schema, cls.path_counts):.2f}, "
                        f"twin {twin:.2f}, told apart {apart}")
        predicted = [self.classify(p.schema, p.url_count, p.element_paths)[0] for p in cand.pages]
        new = self.new_bits(cand, path_bits)
        decision = update(self, cand, dt)
        print(f"at {len(self.pages)} pages, a candidate of {cand.size} {dict(Counter(labels))}: classification "
              f"{predicted}, a class of its own {new:.1f} bits -> {decision.action} {decision.class_id}")
        print("\n".join(rows))
        return decision

    with mock.patch.object(model_module.SiteModel, "update", traced):
        crawl(args)


VIEWS = {"classes": show_classes, "checks": show_checks, "pairs": show_pairs, "stops": show_stops,
         "decide": show_decisions}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("view", choices=sorted(VIEWS))
    parser.add_argument("--corpus", required=True, choices=sorted(corpora.CORPORA))
    parser.add_argument("--strategy", default="densest", choices=("densest", "sparsest"))
    parser.add_argument("--inflight", type=int, default=32, help="URLs in flight (2 × CONCURRENT_REQUESTS)")
    parser.add_argument("--paths", type=int, default=6, help="classes: link paths shown per class")
    parser.add_argument("--label", help="decide: the truth class whose candidates are traced")
    parser.add_argument("--audit-seed", type=int, default=0, help="where the audit's draw starts (offline_real.py's)")
    args = parser.parse_args(argv)
    if args.view == "decide" and not args.label:
        parser.error("decide needs --label")
    VIEWS[args.view](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
