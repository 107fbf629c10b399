"""A look-ahead policy written against llmopt's public policy API: longest output first."""

from __future__ import annotations

from llmopt.policies import LookaheadPrefixPolicy


class LongestFirst(LookaheadPrefixPolicy):
    """Admit waiting requests by decreasing output length while the look-ahead check holds."""

    name = "longest-first"

    def key(self, request):  # type: ignore[no-untyped-def]
        return (-request.output, request.arrival)
