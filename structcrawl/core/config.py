"""One place that turns parameters into an :class:`~structcrawl.core.explorer.Explorer`.

The spider (settings and spider arguments), the crawl store (a job's stored
parameters) and ``structcrawl crawl`` (checking arguments before Scrapy
starts) all go through :class:`ExplorerConfig`, so a parameter is validated,
defaulted, stored and rebuilt the same way everywhere.

Adding an Explorer parameter that is a plain value (a number, a string): one
field line below, with its default.  It is validated by its type, passed to
``Explorer(**…)`` under its name and stored under its name.  Composite
parameters (costs, stability, scope, refine) are grouped by hand in
:meth:`ExplorerConfig.explorer_arguments`, :meth:`~ExplorerConfig.to_dict`
and :meth:`~ExplorerConfig.from_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from structcrawl.core.candidates import DT
from structcrawl.core.explorer import Explorer, Scope
from structcrawl.core.frontier import STRATEGIES
from structcrawl.core.model import Costs
from structcrawl.core.stability import StabilityRule

#: Fields that are not passed to ``Explorer`` under their own name.
_COMPOSED = frozenset({
    "start_url", "costs", "stability_window", "stability_epsilon", "stability_min_pages",
    "allow_subdomains", "extra_domains", "refine",
})


@dataclass(frozen=True)
class ExplorerConfig:
    """Every Explorer parameter with its default; ValueError with a one-line message when one is bad."""

    start_url: str
    #: link-collection priority: ``densest`` or ``sparsest``
    strategy: str = "densest"
    #: most URLs fetched per link collection per model update (Crescenzi et al.'s n)
    batch_size: int = 10
    #: candidate-selection distance threshold (Crescenzi et al. footnote 5)
    dt: float = DT
    #: :class:`~structcrawl.core.model.Costs` fields (given: overrides; after validation: all of them)
    costs: Mapping[str, float] = field(default_factory=dict)
    #: stop rule (:class:`~structcrawl.core.stability.StabilityRule`): checks in a row that held,
    #: share of pages allowed to go or move elsewhere, pages modelled at least
    stability_window: int = 3
    stability_epsilon: float = 0.05
    stability_min_pages: int = 0
    #: new pages modelled between two checks of the model's predictions
    check_pages: int = 25
    #: re-cluster every modelled page at each check (:mod:`structcrawl.core.recluster`)
    recluster: bool = False
    allow_subdomains: bool = False
    extra_domains: tuple[str, ...] = ()
    #: online refinement: None the default Refiner, False none, a mapping the
    #: :class:`~structcrawl.core.refine.Refiner` arguments plus ``every``
    refine: Mapping[str, Any] | bool | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        for name, minimum in (("batch_size", 1), ("stability_window", 1), ("stability_min_pages", 0),
                              ("check_pages", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}")  # noqa: TRY004 - reported as one line
            if value < minimum:
                raise ValueError(f"{name} must be >= {minimum}, got {value}")
        for name in ("dt", "stability_epsilon"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        unknown = set(self.costs) - {f.name for f in fields(Costs)}
        if unknown:
            raise ValueError(f"costs: unknown cost(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(f.name for f in fields(Costs))})")
        for name, value in self.costs.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"costs: {name} must be a number >= 0, got {value!r}")
        # every cost spelled out: two configs with the same costs compare equal
        object.__setattr__(self, "costs", asdict(Costs(**{k: float(v) for k, v in self.costs.items()})))
        object.__setattr__(self, "extra_domains", tuple(d.strip().lower() for d in self.extra_domains if d.strip()))
        if self.refine is True or not (self.refine in (None, False) or isinstance(self.refine, Mapping)):
            raise ValueError(f"refine must be None, False or a mapping of Refiner arguments, got {self.refine!r}")

    # -- building -----------------------------------------------------------------
    def scope(self) -> Scope:
        return Scope(self.start_url, allow_subdomains=self.allow_subdomains, extra_domains=self.extra_domains)

    def explorer_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``Explorer(start_url, **…)``."""
        kwargs: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _COMPOSED}
        kwargs["costs"] = Costs(**self.costs)
        kwargs["stability"] = StabilityRule(
            window=self.stability_window, epsilon=self.stability_epsilon, min_pages=self.stability_min_pages
        )
        kwargs["scope"] = self.scope()
        if self.refine is False:
            kwargs["refiner"] = False
        elif isinstance(self.refine, Mapping):
            from structcrawl.core.refine import Refiner

            args = dict(self.refine)
            if "every" in args:
                kwargs["refine_every"] = int(args.pop("every"))
            kwargs["refiner"] = Refiner(**args)
        return kwargs

    def build(self) -> Explorer:
        """A fresh explorer with these parameters."""
        return Explorer(self.start_url, **self.explorer_arguments())

    # -- the store's parameters record -----------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready parameters; ``from_dict(start_url, to_dict())`` gives this config back."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _COMPOSED}
        out["costs"] = dict(self.costs)
        out["stability"] = {
            "window": self.stability_window, "epsilon": self.stability_epsilon, "min_pages": self.stability_min_pages
        }
        out["scope"] = {
            "host": self.scope().host,
            "allow_subdomains": self.allow_subdomains,
            "extra_domains": sorted(self.extra_domains),
        }
        if self.refine is not None:
            out["refine"] = self.refine if self.refine is False else dict(self.refine)
        return out

    @classmethod
    def from_dict(cls, start_url: str, parameters: Mapping[str, Any]) -> ExplorerConfig:
        """The config of stored ``parameters`` (keys it does not know are ignored; missing ones default)."""
        plain = {f.name: parameters[f.name] for f in fields(cls) if f.name not in _COMPOSED and f.name in parameters}
        stability = parameters.get("stability") or {}
        scope = parameters.get("scope") or {}
        return cls(
            start_url,
            costs=dict(parameters.get("costs") or {}),
            **{f"stability_{k}": stability[k] for k in ("window", "epsilon", "min_pages") if k in stability},
            allow_subdomains=bool(scope.get("allow_subdomains", False)),
            extra_domains=tuple(scope.get("extra_domains") or ()),
            refine=parameters.get("refine"),
            **plain,
        )
