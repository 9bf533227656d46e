"""The baseline for bench/receiver.py: a bare Starlette endpoint that reads the body and answers 202."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def webhook(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"job": "none"}, status_code=202)


app = Starlette(routes=[Route("/webhooks/github", webhook, methods=["POST"])])
