"""Web search through Tavily, offered only when `TAVILY_API_KEY` is set.

Why "offered or not" instead of an empty result: an orchestrator that sees a web_search tool which
silently returns nothing learns the wrong lesson, and a run without the key would look like a run
with a useless tool. So the toolkit loader asks `web_search_or_none(spec)` and, without a key, drops
the tool and prints the returned one-line reason once.

The key is read from the environment, handed to the client and nothing else: it never appears in
observations, error messages or reprs (client errors are scrubbed in case they echo it). Each call has
a hard timeout; a call that fails or times out becomes an error observation and costs nothing, since
Tavily bills completed requests. Prices come from `lab/data/pricing.json` (`tavily-search-basic`).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Literal

from tavily import AsyncTavilyClient

from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.toolspec import ToolSpec

KEY_ENV = "TAVILY_API_KEY"
NOT_OFFERED = f"web_search not offered: {KEY_ENV} is not set"
SearchDepth = Literal["basic", "advanced"]
#: The released HLE server's web fallback: results per search, chunks per source, least characters of a page.
RELEASED_RESULTS, RELEASED_CHUNKS, RELEASED_MIN_CHARS = 20, 5, 100


def web_search_available() -> bool:
    """True when a Tavily key is in the environment."""
    return bool(os.environ.get(KEY_ENV, "").strip())


def default_web_search_spec(search_depth: SearchDepth = "basic") -> ToolSpec:
    price = PriceTable.load().price(f"tavily-search-{search_depth}")
    return ToolSpec(
        name="web_search",
        description="Search the web; returns the top results with title, URL and a content snippet.",
        category="basic",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for."},
                "max_results": {"type": "integer", "description": "How many results to return (default 5)."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        per_call=price.per_call,
        backend={"kind": "web_search", "provider": "tavily", "search_depth": search_depth},
    )


def web_search_or_none(spec: ToolSpec | None = None, **options: Any) -> tuple[WebSearch | None, str | None]:
    """The tool and no message when a key is set; else no tool and the line the loader prints once."""
    if not web_search_available():
        return None, NOT_OFFERED
    return WebSearch(spec=spec, **options), None


class WebSearch:
    """The `web_search` tool: one Tavily search per call, priced per call, wall-clock timed."""

    max_max_results = 20
    max_snippet_chars = 600  # Tavily snippets can be long; keep one call's observation readable

    def __init__(
        self,
        spec: ToolSpec | None = None,
        timeout_s: float = 20.0,
        max_results: int = 5,
        search_depth: SearchDepth = "basic",
        include_answer: bool = False,
    ) -> None:
        key = os.environ.get(KEY_ENV, "").strip()
        if not key:
            raise LabInputError(NOT_OFFERED)  # loaders should ask web_search_or_none first
        self._key = key
        self.spec = spec or default_web_search_spec(search_depth)
        self.timeout_s, self.max_results = timeout_s, max_results
        self.search_depth, self.include_answer = search_depth, include_answer
        self._client: Any = None

    def __repr__(self) -> str:  # never show the key
        return f"WebSearch(name={self.spec.name!r}, depth={self.search_depth!r}, timeout_s={self.timeout_s})"

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        started = time.perf_counter()
        problem = validate_arguments(self.spec, arguments) or self._check_values(arguments)
        if problem:
            return Observation.failure(problem, latency_s=time.perf_counter() - started)
        query = arguments["query"].strip()
        count = int(arguments.get("max_results", self.max_results))
        try:
            response = await asyncio.wait_for(self._search(query, count), timeout=self.timeout_s)
        except TimeoutError:
            message = f"tool '{self.spec.name}': search timed out after {self.timeout_s:g}s"
            return Observation.failure(message, latency_s=time.perf_counter() - started)
        except Exception as exc:  # network, auth, quota: the orchestrator sees it and may try elsewhere
            message = f"tool '{self.spec.name}': search failed ({type(exc).__name__}: {self._scrub(str(exc))})"
            return Observation.failure(message, latency_s=time.perf_counter() - started)
        results = list(response.get("results") or [])[:count]
        return Observation(
            text=self._format(query, response.get("answer"), results),
            cost_usd=self.spec.per_call,
            latency_s=time.perf_counter() - started,
            meta={
                "urls": [r.get("url", "") for r in results],
                "scores": [float(r.get("score") or 0.0) for r in results],
            },
        )

    async def search_and_extract(self, query: str) -> Observation:
        """The released HLE retrieval server's web fallback (evaluation/retrieval_hle.py): an advanced search
        of 20 results with 5 chunks per source, each result's page extracted (advanced, as text), pages of
        more than 100 characters kept as documents, highest search score first. Priced as one advanced
        search plus one extraction per result (`tavily-extract`, the released code's per-document price)."""
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(self._search(query, RELEASED_RESULTS, depth="advanced",
                                                           chunks_per_source=RELEASED_CHUNKS), timeout=self.timeout_s)
        except Exception as exc:  # the released server returns its local hits alone when the search fails
            message = (f"tool '{self.spec.name}': web fallback search failed ({type(exc).__name__}: "
                       f"{self._scrub(str(exc))})")
            return Observation.failure(message, latency_s=time.perf_counter() - started)
        results = list(response.get("results") or [])
        pages = await asyncio.gather(*(self._extract(str(r.get("url", ""))) for r in results))
        kept = sorted(((page, float(r.get("score") or 0.0)) for page, r in zip(pages, results)
                       if len(page.strip()) > RELEASED_MIN_CHARS), key=lambda pair: -pair[1])
        table = PriceTable.load()
        cost = table.price("tavily-search-advanced").per_call + len(results) * table.price("tavily-extract").per_call
        return Observation(text=f'{len(kept)} web pages for "{query}"', cost_usd=cost,
                           latency_s=time.perf_counter() - started,
                           meta={"documents": [page for page, _ in kept], "urls": [r.get("url", "") for r in results]})

    async def _extract(self, url: str) -> str:
        """A page's text ('' when the extraction fails: the released server skips it)."""
        try:
            extraction = await asyncio.wait_for(
                self._client.extract(urls=[url], extract_depth="advanced", format="text", timeout=self.timeout_s),
                timeout=self.timeout_s)
        except Exception:  # noqa: BLE001 - one page that cannot be read is left out, as released
            return ""
        return "".join(str(item.get("raw_content") or "") + "\n\n" for item in extraction.get("results") or [])

    async def _search(self, query: str, count: int, depth: str | None = None, **options: Any) -> dict[str, Any]:
        if self._client is None:
            self._client = AsyncTavilyClient(api_key=self._key)
        return await self._client.search(
            query,
            search_depth=depth or self.search_depth,
            max_results=count,
            include_answer=self.include_answer,
            timeout=self.timeout_s,
            **options,
        )

    def _check_values(self, arguments: dict[str, Any]) -> str | None:
        if not arguments["query"].strip():
            return f"tool '{self.spec.name}': argument 'query' is empty"
        count = arguments.get("max_results", self.max_results)
        if not 1 <= int(count) <= self.max_max_results:
            return (
                f"tool '{self.spec.name}': argument 'max_results' must be between 1 and "
                f"{self.max_max_results}, got {count}"
            )
        return None

    def _format(self, query: str, answer: str | None, results: list[dict[str, Any]]) -> str:
        if not results and not answer:
            return f'No web results for "{query}".'
        lines = [f'Top {len(results)} web results for "{query}":']
        if answer:
            lines.insert(1, f"Answer: {answer}")
        for rank, r in enumerate(results, start=1):
            snippet = str(r.get("content") or "")
            if len(snippet) > self.max_snippet_chars:
                snippet = snippet[: self.max_snippet_chars] + " ..."
            lines.append(f"[{rank}] {r.get('title') or '(untitled)'} | {r.get('url', '')}\n{snippet}")
        return "\n\n".join(lines)

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text
