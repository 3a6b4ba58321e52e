"""The expert's review of a finished match (issue 28, Build 2): for every decision one seat
made, what the expert would have expected of each legal choice, judged from exactly what
that seat knew then (its view, never the hidden hands), and what its choice cost.

- :mod:`.replay` rebuilds the seat's view at each of its decisions from the record, through
  the engine's own ``view(match, seat)``;
- :mod:`.evaluate` values each decision's choices from that view alone (pure, CPU-bound:
  it runs in worker processes);
- :mod:`.report` is the typed result and its per-deal and per-match summary;
- :mod:`.runner` spreads the decisions over worker processes, with progress.
"""

from __future__ import annotations

from .evaluate import Settings, evaluate
from .replay import Decision, decisions
from .report import ChoiceValue, DealSummary, DecisionReview, Review, summarize
from .runner import review_record

__all__ = ["ChoiceValue", "DealSummary", "Decision", "DecisionReview", "Review", "Settings",
           "decisions", "evaluate", "review_record", "summarize"]
