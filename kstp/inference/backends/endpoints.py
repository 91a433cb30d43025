"""The requests in flight of an OpenAI-compatible stream and the servers they go to.

:class:`Window` bounds the requests in flight (halved by a 429, widened again by answers).

:class:`EndpointPool` spreads a run's window over its endpoints by outstanding requests:
a request goes to the endpoint whose queue would drain first, ``(in flight + 1) x its
typical latency`` (an exponential mean of the seconds its answers took, or the time since
its last reply if that is longer: a hung server), so a faster server takes more and a
server whose latency grows under load takes less. A server that
fails as an away server does (refused or reset connections, timeouts, HTTP 502, 503,
504) is set aside: its failed requests go to the others and it is tried again, by one
request at a time, after :data:`RETRY_S` seconds (doubling to :data:`RETRY_MAX_S` while
it stays away). Only when every endpoint is away does the backend's outage ride-out apply.

:func:`served_models` asks each endpoint's ``/v1/models`` at start, and
:func:`check_same_models` refuses endpoints that serve different models. Assumes one
event loop: the pool is not thread-safe and needs no lock.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from kstp.errors import ConfigError

__all__ = ["Window", "Endpoint", "EndpointPool", "served_models", "check_same_models", "RETRY_S", "RETRY_MAX_S"]

#: Seconds before an endpoint that looked away is tried again; doubled while it stays away.
RETRY_S = 2.0
#: The longest wait before an away endpoint is tried again, in seconds.
RETRY_MAX_S = 10.0
#: Weight of the newest latency in an endpoint's typical latency (an exponential mean).
_ALPHA = 0.2


class Window:
    """Requests allowed in flight: ``size``, halved by a 429 (at most once a second), widened by one per answer."""

    def __init__(self, size: int):
        self.size = self.limit = size
        self.active = 0
        self._changed = asyncio.Condition()
        self._last_cut = 0.0

    async def __aenter__(self) -> Window:
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1
        return self

    async def __aexit__(self, *exc) -> None:
        async with self._changed:
            self.active -= 1
            self._changed.notify_all()

    def refused(self) -> None:
        if time.monotonic() - self._last_cut >= 1.0:
            self.limit, self._last_cut = max(1, self.limit // 2), time.monotonic()

    async def served(self) -> None:
        if self.limit < self.size:
            async with self._changed:
                self.limit += 1
                self._changed.notify_all()


@dataclass
class Endpoint:
    """One server of the pool and what it did in this stream.

    Attributes
    ----------
    url : str
        Its base URL (``http://host:port/v1``).
    client : object
        The client that asks it (the backend's ``openai.AsyncOpenAI``), or None.
    in_flight : int
        Requests sent to it and not back yet.
    served : int
        Answers it gave (model failures included).
    failures : int
        Requests it failed (a transport failure after its retries, or an away failure).
    latency_s : float or None
        Typical seconds an answer takes (exponential mean), None before its first.
    away_until : float or None
        ``time.monotonic()`` before which it is not asked (it looked away); None while up.
    quiet_since : float or None
        ``time.monotonic()`` of its last reply (or of its first request since it held none): a
        server holding requests that has been quiet longer than its latency counts as that slow.
    """

    url: str
    client: object = None
    in_flight: int = 0
    served: int = 0
    failures: int = 0
    latency_s: float | None = None
    away_until: float | None = None
    retry_s: float = RETRY_S
    probing: bool = False
    quiet_since: float | None = None
    tokens_out: int = 0
    _start: float = field(default_factory=time.monotonic)

    def figures(self, now: float | None = None) -> dict:
        """``{"baseUrl", "completions", "completionsPerS", "tokensPerS", "failures", "away"}`` of this stream."""
        span = (now or time.monotonic()) - self._start
        per = (lambda n: round(n / span, 3)) if span > 0 else (lambda n: None)
        return {"baseUrl": self.url, "completions": self.served, "completionsPerS": per(self.served),
                "tokensPerS": per(self.tokens_out) if self.tokens_out else None, "failures": self.failures,
                "away": self.away_until is not None}


class EndpointPool:
    """The endpoints of one stream; :meth:`pick` one for a request, :meth:`done` when it is back.

    Parameters
    ----------
    urls : sequence of str
        Base URLs, at least one, none twice.
    clients : sequence, optional
        A client per URL (kept on :attr:`Endpoint.client`).

    Raises
    ------
    ConfigError
        When ``urls`` is empty or names an endpoint twice.

    Examples
    --------
    >>> pool = EndpointPool(["http://a/v1", "http://b/v1"])
    >>> first = pool.pick(); second = pool.pick()
    >>> (first.url, second.url)  # the least loaded first
    ('http://a/v1', 'http://b/v1')
    >>> pool.done(first, 0.5, ok=True); pool.done(second, None, ok=False, away=True)
    >>> pool.pick().url, pool.up()  # b is away: a takes the next ones
    ('http://a/v1', 1)
    """

    def __init__(self, urls, clients=None):
        urls = list(urls)
        if not urls:
            raise ConfigError("no endpoint: give --base-url at least once")
        twice = sorted({u for u in urls if urls.count(u) > 1})
        if twice:
            raise ConfigError(f"endpoint {twice[0]} is given twice; give each --base-url once")
        clients = list(clients) if clients is not None else [None] * len(urls)
        self.endpoints = [Endpoint(url, client) for url, client in zip(urls, clients, strict=True)]

    def up(self) -> int:
        """How many endpoints are not away."""
        return sum(e.away_until is None for e in self.endpoints)

    def others_up(self, endpoint: Endpoint) -> bool:
        """Whether an endpoint other than ``endpoint`` is up (a failure there can be asked elsewhere)."""
        return any(e is not endpoint and e.away_until is None for e in self.endpoints)

    def _load(self, endpoint: Endpoint, now: float) -> float:
        # unknown latency: the mean of the known ones (1 s when none is known), so a new server gets its share;
        # a server holding requests that has answered none for longer than that (hung) counts that long
        known = [e.latency_s for e in self.endpoints if e.latency_s is not None]
        latency = endpoint.latency_s if endpoint.latency_s is not None else (sum(known) / len(known) if known else 1.0)
        if endpoint.in_flight and endpoint.quiet_since is not None:
            latency = max(latency, now - endpoint.quiet_since)
        return (endpoint.in_flight + 1) * latency

    def pick(self, avoid: Endpoint | None = None) -> Endpoint:
        """The endpoint for the next request (its ``in_flight`` counted): the up endpoint whose queue drains
        first, or an away one whose wait is over (one request at a time probes it); with every endpoint away,
        the one to be tried first. ``avoid``: not that one while another is ready (a request it failed)."""
        now = time.monotonic()
        ready = [e for e in self.endpoints if e.away_until is None or (e.away_until <= now and not e.probing)]
        ready = [e for e in ready if e is not avoid] or ready
        if ready:
            chosen = min(ready, key=lambda e: self._load(e, now))
            chosen.probing = chosen.away_until is not None
        else:
            chosen = min(self.endpoints, key=lambda e: e.away_until or 0.0)
        if not chosen.in_flight:
            chosen.quiet_since = now
        chosen.in_flight += 1
        return chosen

    def done(self, endpoint: Endpoint, latency_s: float | None, ok: bool, away: bool = False,
             tokens_out: int = 0) -> None:
        """Count a request back from ``endpoint``: answered (``ok``, after ``latency_s`` seconds) or failed
        (``away``: as an away server fails, so it is set aside and tried again later)."""
        endpoint.in_flight -= 1
        endpoint.probing = False
        endpoint.quiet_since = time.monotonic()
        if ok:
            endpoint.served += 1
            endpoint.tokens_out += tokens_out
            endpoint.away_until, endpoint.retry_s = None, RETRY_S
            if latency_s is not None:
                endpoint.latency_s = latency_s if endpoint.latency_s is None else \
                    (1 - _ALPHA) * endpoint.latency_s + _ALPHA * latency_s
            return
        endpoint.failures += 1
        if away:
            if endpoint.away_until is not None:  # still away after a try: wait longer
                endpoint.retry_s = min(RETRY_MAX_S, endpoint.retry_s * 2)
            endpoint.away_until = time.monotonic() + endpoint.retry_s

    def figures(self) -> list[dict]:
        """:meth:`Endpoint.figures` of each endpoint, in the order given."""
        now = time.monotonic()
        return [e.figures(now) for e in self.endpoints]

    def note(self) -> str:
        """The progress line's words: each endpoint's completions per second, failures and state.

        >>> EndpointPool(["http://127.0.0.1:8001/v1"]).note()[:30]
        '127.0.0.1:8001 0.0/s'
        """
        now = time.monotonic()
        parts = []
        for e in self.endpoints:
            f = e.figures(now)
            host = e.url.split("://", 1)[-1].split("/", 1)[0]
            parts.append(f"{host} {f['completionsPerS'] or 0:.1f}/s" + (f", {e.failures} failed" if e.failures else "")
                         + (" (away)" if e.away_until is not None else ""))
        return "; ".join(parts)


def served_models(url: str, api_key: str | None = None, timeout: float = 10.0) -> list[str] | None:
    """The model ids ``url``'s ``/models`` lists (``url`` ends in ``/v1``), or None when it does not answer
    one (a refused connection, an HTTP error, a body without ``data``).

    >>> served_models("http://127.0.0.1:9/v1", timeout=0.5) is None  # nothing listens on port 9
    True
    """
    request = urllib.request.Request(url.rstrip("/") + "/models",
                                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = json.loads(reply.read())
    except (OSError, ValueError, urllib.error.HTTPError):
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return sorted(str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id") is not None)


def check_same_models(urls, api_key: str | None = None, timeout: float = 10.0) -> dict[str, list[str] | None]:
    """Refuse endpoints that serve different models (their ``/v1/models`` lists differ).

    An endpoint that does not answer ``/v1/models`` is not compared (as one endpoint is
    never asked it: its requests say whether it serves the model).

    Returns
    -------
    dict
        Each URL -> the model ids it lists (None where it did not answer).

    Raises
    ------
    ConfigError
        In one line naming two endpoints that differ and what each serves.
    """
    served = {url: served_models(url, api_key, timeout) for url in urls}
    answered = [(url, models) for url, models in served.items() if models is not None]
    for url, models in answered[1:]:
        first, theirs = answered[0]
        if models != theirs:
            raise ConfigError(f"endpoints serve different models: {first} serves {', '.join(theirs) or 'none'}, "
                              f"{url} serves {', '.join(models) or 'none'}; give --base-url only for servers of "
                              "the same model")
    return served
