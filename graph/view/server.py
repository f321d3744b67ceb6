"""``autonesy-agent view DIR…``: the pages served by Starlette on uvicorn, reading the directories at
each request (so a running sweep shows its new attempts). Loopback and a free port by default."""

from __future__ import annotations

import logging
import socket
import webbrowser
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from autonesy.graph.view.files import OutsideRoots, Roots
from autonesy.graph.view.site import PLOTLY_JS, STATIC_DIR, ServerLinks, Site, plotly_js

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOG = logging.getLogger("autonesy.view")
SECURITY_HEADERS = {
    # scripts only from this server; plotly.js needs inline styles for its SVG
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _guarded(handler: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
    """Refused paths are 403, missing ones 404, both with one line; every answer carries the headers."""

    async def endpoint(request: Request) -> Response:
        try:  # in a worker thread: a long page (a big trace, a 10,000-row report) does not stall the others
            response = await run_in_threadpool(handler, request)
        except OutsideRoots as error:
            response = PlainTextResponse(f"refused: {error}", status_code=403)
        except (FileNotFoundError, NotADirectoryError, IndexError, ValueError) as error:
            response = PlainTextResponse(f"not found: {error}", status_code=404)
        except Exception as error:  # a file shaped like nothing the viewer knows: one line, no traceback
            message = f"cannot show {request.url.path}: {type(error).__name__}: {error}".splitlines()[0]
            LOG.warning(message)
            response = PlainTextResponse(message, status_code=500)
        response.headers.update(SECURITY_HEADERS)
        return response

    return endpoint


def create_app(dirs: Sequence[str | Path], *, compare_published: bool = False, host: str = "127.0.0.1") -> Starlette:
    """The viewer's Starlette app over the given directories: every page and file route guarded (paths outside the
    roots refused) and served from a worker thread."""
    site = Site(Roots(dirs), ServerLinks(), compare_published=compare_published)

    def where(request: Request) -> tuple[int, str]:
        return int(request.path_params["index"]), str(request.path_params.get("rel", ""))

    def home(request: Request) -> Response:
        return HTMLResponse(site.home())

    def page(request: Request) -> Response:
        return HTMLResponse(site.page(*where(request)))

    def errors(request: Request) -> Response:
        return HTMLResponse(site.errors(*where(request)))

    def compare(request: Request) -> Response:
        return HTMLResponse(site.compare(request.query_params.get("a", ""), request.query_params.get("b", "")))

    def rows(request: Request) -> Response:
        return Response(site.rows_json(*where(request)), media_type="application/json")

    def summary(request: Request) -> Response:
        return HTMLResponse(site.summary(*where(request)))

    def event(request: Request) -> Response:
        return HTMLResponse(site.event(*where(request), int(request.query_params.get("i", "-1"))))

    def plotly(request: Request) -> Response:
        return FileResponse(plotly_js(), media_type="text/javascript")

    middleware = []
    if host in LOOPBACK:  # a page elsewhere cannot reach the viewer by DNS rebinding
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK)))
    routes = [
        Route("/", _guarded(home)),
        Route("/r/{index:int}/{rel:path}", _guarded(page)),
        Route("/errors/{index:int}/{rel:path}", _guarded(errors)),
        Route("/compare", _guarded(compare)),
        Route("/api/rows/{index:int}/{rel:path}", _guarded(rows)),
        Route("/api/summary/{index:int}/{rel:path}", _guarded(summary)),
        Route("/api/event/{index:int}/{rel:path}", _guarded(event)),
        Route(f"/static/{PLOTLY_JS}", plotly),
        Mount("/static", StaticFiles(directory=STATIC_DIR)),
    ]
    return Starlette(routes=routes, middleware=middleware)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: a free one, chosen by the OS — no race between choosing and binding)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket, host: str) -> str:
    """The URL a bound socket serves at (IPv6 hosts bracketed), to print and open."""
    port = sock.getsockname()[1]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


def serve(
    dirs: Sequence[str | Path],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = False,
    compare_published: bool = False,
    notify: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted; prints the URL, opens a browser only when asked."""
    import uvicorn

    app = create_app(dirs, compare_published=compare_published, host=host)
    sock = bind(host, port)
    url = url_of(sock, host)
    (notify or (lambda message: print(message, flush=True)))(f"viewer: {url}  (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[sock])
