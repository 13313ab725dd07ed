"""Every refusal is `{"detail": "..."}` with the spec's status; one middleware does it all.

Handlers raise `ApiError(status, detail)` (or the library's `InputError`, a 422); aiohttp's
own HTTP exceptions (404 unknown route, 405 wrong method, 413 body too large) are reshaped.
A write the store or the file system refused (full, read-only: write_faults.py) is a 507 naming
the cause. Anything unexpected becomes a 500 with a generic detail: no traceback ever leaves.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable

import orjson
from aiohttp import web
from pydantic import ValidationError

from bathtub.errors import InputError
from bathtub_api.keys import CONFIG, WRITES
from bathtub_api.redact import redact
from bathtub_api.write_faults import WriteRefused, write_fault

log = logging.getLogger("bathtub_api")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiError(Exception):
    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def not_found(what: str, item_id: str) -> ApiError:
    return ApiError(404, f"no {what} with id {item_id!r}")


def json_response(body: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY),
        status=status,
        content_type="application/json",
        headers=headers,
    )


def refusal(status: int, detail: str, headers: dict[str, str] | None = None) -> web.Response:
    return json_response({"detail": detail}, status, headers)


# Where pydantic's locations name a union member or a wrapper (`list[ParamIn]`,
# `function-after[...]`) rather than a field: a caller knows the field, not our classes.
_MEMBER_TAG = re.compile(r"^[a-z][a-z-]*\[.*\]$")
_OBJECT_TYPES = {"model_type", "model_attributes_type", "dict_type", "dataclass_type"}
_BOUNDS = {"greater_than": (">", "gt"), "greater_than_equal": (">=", "ge"), "less_than": ("<", "lt"),
           "less_than_equal": ("<=", "le")}


def _number(x: object) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def validation_detail(err: ValidationError) -> str:
    """The first problem, as `field.path: rule` — names the field and the rule, never a class."""
    first = err.errors(include_url=False)[0]
    parts = [str(p) for p in first["loc"] if p != "__root__" and not (isinstance(p, str) and _MEMBER_TAG.match(p))]
    msg = first["msg"]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, InputError):  # a model-level rule names its own field
        parts += [cause.field] if cause.field else []
        msg = cause.rule
    elif first["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    elif first["type"] == "extra_forbidden":
        msg = "unknown field"
    elif first["type"] == "missing":
        msg = "required field is missing"
    elif first["type"] in _OBJECT_TYPES:
        msg = "must be an object"
    elif first["type"] in _BOUNDS:  # the library's voice: "must be > 0"
        op, key = _BOUNDS[first["type"]]
        msg = f"must be {op} {_number(first['ctx'][key])}"
    loc = ".".join(parts)
    more = len(err.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"{loc}: {msg}{suffix}" if loc else f"{msg}{suffix}"


def write_refusal(request: web.Request, exc: BaseException) -> WriteRefused | None:
    """The storage's refusal behind `exc` (full, read-only), noted for /healthz; None if it is
    not one. The store's own refusals are noted by the store already; files' are noted here."""
    fault = write_fault(exc)
    if fault is not None:
        request.app[WRITES].failed(fault)
        log.error("%s %s refused: %s", request.method, redact(request.path), fault.reason)
    return fault


_REASONS = {
    404: "no such route",
    405: "method not allowed on this route",
    413: "request body too large",
}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as e:
        return refusal(e.status, e.detail, e.headers)
    except InputError as e:
        return refusal(422, str(e))
    except ValidationError as e:
        return refusal(422, validation_detail(e))
    except ConnectionResetError:
        # The client closed the connection mid-request (a body cut short): nobody is left to
        # answer and nothing of ours failed. The status only names it in the request log.
        log.info("%s %s: the client closed the connection before its request arrived whole",
                 request.method, redact(request.path))
        return refusal(400, "the connection closed before the request arrived whole")
    except web.HTTPException as e:
        if e.status < 400:
            raise
        detail = _REASONS.get(e.status, e.reason)
        if e.status == 413:
            detail = f"request body too large (at most {request.app[CONFIG].max_body_bytes} bytes)"
        headers = {k: v for k, v in e.headers.items() if k.lower() == "allow"}
        return refusal(e.status, detail, headers)
    except Exception as e:
        fault = write_refusal(request, e)
        if fault is not None:
            return refusal(fault.status, fault.detail)
        log.exception("unhandled error on %s %s", request.method, redact(request.path))
        return refusal(500, "internal error; the request was not applied")
