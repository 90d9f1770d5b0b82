"""An httpx transport backed by aiohttp.

httpx's default transport (httpcore + h11, pure Python) costs more CPU per SSE event than
aiohttp's C HTTP parser, and its connection pool serialises on a lock under high
concurrency; `bench/loadgen_capacity.py` measures both. The client keeps httpx's API and
swaps the wire underneath.
"""

from __future__ import annotations

import asyncio
import errno
import functools
from collections.abc import AsyncIterator
from time import perf_counter_ns
from typing import Any

import aiohttp
import httpx
from aiohttp.client_proto import ResponseHandler

ARRIVAL_EXTENSION = "inferboard.arrival"
# Headers aiohttp computes itself from the URL and body.
_SKIP = {"host", "content-length", "transfer-encoding"}
# A pooled connection the server closed while the request was going out on it.
_RACED = {errno.ECONNRESET, errno.EPIPE}


class _StampingHandler(ResponseHandler):
    """Notes when the oldest unread bytes of the current response reached the process.

    The client stamps SSE events with this instead of the time its coroutine got round to
    them: under load many streams are ready at once, and that wait is ours, not the server's.
    """

    first_unread_ns: int | None = None

    def set_response_params(self, **kwargs: Any) -> None:
        # Called as each request goes out on this connection: older bytes were not for it.
        self.first_unread_ns = None
        super().set_response_params(**kwargs)

    def data_received(self, data: bytes) -> None:
        if data and self.first_unread_ns is None:
            self.first_unread_ns = perf_counter_ns()
        super().data_received(data)


class _AiohttpStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request | None) -> None:
        self._response = response
        self._request = request
        # Arrival of the oldest bytes in the chunk last yielded; None: unknown.
        self.arrival_ns: int | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._response.connection
        protocol = connection.protocol if connection is not None else None
        if not isinstance(protocol, _StampingHandler):
            protocol = None
        elif not getattr(self._response.content, "_size", 0):
            # Nothing of the body is buffered yet: the stamp is the headers' arrival, and
            # an event must never be dated before it arrived.
            protocol.first_unread_ns = None
        try:
            async for chunk in self._response.content.iter_any():
                if protocol is not None:
                    self.arrival_ns = protocol.first_unread_ns
                    protocol.first_unread_ns = None
                yield chunk
        except aiohttp.ClientPayloadError as exc:
            raise httpx.RemoteProtocolError(str(exc) or repr(exc), request=self._request) from exc
        except (aiohttp.ClientConnectionError, ConnectionError) as exc:
            raise httpx.ReadError(str(exc) or repr(exc), request=self._request) from exc

    async def aclose(self) -> None:
        # release() returns a fully read connection to the pool; close() drops one that
        # still has unread bytes (a cancelled or failed stream).
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()


class DirectResponse:
    """The few parts of a response the load generator reads, straight from aiohttp."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.headers = response.headers  # case-insensitive, as httpx's
        self.stream = _AiohttpStream(response, None)
        self.extensions = {ARRIVAL_EXTENSION: self.stream}

    async def aread(self) -> bytes:
        return await self._response.read()

    async def aclose(self) -> None:
        await self.stream.aclose()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One aiohttp connection pool of `limit` connections (0: unlimited)."""

    def __init__(self, limit: int = 100) -> None:
        self._limit = limit
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._limit, limit_per_host=0, ttl_dns_cache=None
            )
            # aiohttp has no public hook for the protocol class; without this one the client
            # only loses arrival stamps and falls back to the time its coroutine reads.
            if hasattr(connector, "_factory"):
                loop = asyncio.get_running_loop()
                # A partial making the subclass, where aiohttp's stubs say the base class.
                connector._factory = functools.partial(_StampingHandler, loop=loop)  # type: ignore[assignment]
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None),
                # httpx decodes content-encoding itself from the headers we hand back.
                auto_decompress=False,
                read_bufsize=2**16,
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in _SKIP]
        body = request.content if request.method not in ("GET", "HEAD") else None
        response = await self._checked_send(
            request.method, str(request.url), headers, body, request
        )
        stream = _AiohttpStream(response, request)
        return httpx.Response(
            status_code=response.status,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers],
            stream=stream,
            request=request,
            # httpx wraps the stream; this keeps a way to its arrival stamps.
            extensions={ARRIVAL_EXTENSION: stream},
        )

    async def post_stream(self, url: str, headers: dict[str, str], body: bytes) -> DirectResponse:
        """POST without httpx's request and response objects around it: the load generator's
        own path, which costs a third of httpx's per request (bench/loadgen_capacity.py).
        Failures raise the same httpx exceptions as `handle_async_request`."""
        wanted = [(k, v) for k, v in headers.items() if k.lower() not in _SKIP]
        response = await self._checked_send("POST", url, wanted, body, None)
        return DirectResponse(response)

    async def _checked_send(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        request: httpx.Request | None,
    ) -> aiohttp.ClientResponse:
        try:
            return await self._send(method, url, headers, body)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timeout", request=request) from exc
        except (aiohttp.ClientConnectionError, ConnectionError) as exc:
            raise httpx.ConnectError(str(exc) or repr(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.RemoteProtocolError(str(exc) or repr(exc), request=request) from exc

    async def _send(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes | None
    ) -> aiohttp.ClientResponse:
        """Send on a pooled connection, never on one the server has already closed.

        Some servers (llama.cpp's) close the connection after every streamed response while
        announcing keep-alive. One loop iteration lets the pool notice a close that has
        already arrived; a close that races the send fails before any response byte (so the
        server did nothing) and is retried, until a live or fresh connection takes it.
        """
        await asyncio.sleep(0)
        # Each failed try drops one dead pooled connection, so this ends on a fresh one.
        attempts = 2 + min(self._limit or 16, 16)
        for attempt in range(1, attempts + 1):
            try:
                return await self._get_session().request(
                    method,
                    url,
                    headers=headers,
                    data=body,
                    allow_redirects=False,
                    skip_auto_headers=("Accept-Encoding", "User-Agent"),
                )
            except aiohttp.ServerDisconnectedError:
                if attempt == attempts:
                    raise
            except aiohttp.ClientOSError as exc:
                # The same race seen from the socket: the request hit a connection the server
                # had already reset, before any response byte. Anything else is a failure.
                if exc.errno not in _RACED or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            # Let aiohttp's connector finish closing sockets before the loop goes away.
            await asyncio.sleep(0)
            self._session = None
