"""Methods generated from the snapshot, and the pure pieces both clients share: turning a call's
arguments into a request, a response into a result or an `ApiError`, a Retry-After into seconds,
and a job's status into a progress line."""

from __future__ import annotations

import email.utils
import inspect
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson

from bathtub.errors import ApiError

# What each upload purpose is imported with, once its bytes are sent.
IMPORTERS = {
    "dataset_import": "datasets_upload",
    "excel_import": "uploads_import_excel",
    "rbd_import": "uploads_import_rbd",
    "outage_log": "rbd_upload_outage_log",
}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, Any]
    json: Any = None
    content: bytes | None = None
    content_type: str | None = None
    auth: bool = True
    headers: dict[str, str] | None = None


def _wrapped(text: str, indent: str = "    ") -> list[str]:
    return textwrap.wrap(text, width=96, initial_indent=indent, subsequent_indent=indent) or [indent.rstrip()]


def _arguments(op: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(name with its type and default, meaning) for each argument, in the signature's order of kinds."""
    args = [(f"{p} : str", f"the `{p}` in the path ({op['path']})") for p in op["path_params"]]
    for q in op["query"]:
        head = f"{q['name']} : str" + ("" if q["required"] else ", optional")
        args.append((head, q["description"] or "a query parameter of the route"))
    for f in op["fields"]:
        head = f"{f['arg']} : {f['type']}" + ("" if f["required"] else f", default {f.get('default')!r}")
        meaning = f["description"]
        if f["arg"] != f["name"]:
            meaning += f" (sent as the body field `{f['name']}`)"
        args.append((head, meaning))
    raw = [ct for ct in op["content_types"] if ct != "application/json"]
    if raw:
        args += [("content : bytes | str", f"the body, sent as {' or '.join(raw)}"),
                 (f"content_type : str, default {raw[0]!r}", "the body's media type")]
    if op["tool"] is None:
        args.append(("query_params : dict | None, default None", "further query parameters the route reads"))
    if op["scope"] == "write":
        args.append(("idempotency_key : str | None, default None",
                     "sent as the Idempotency-Key header: a retry with the same key replays the first answer "
                     "where the route honours it"))
    return args


def _returns(op: dict[str, Any]) -> list[str]:
    ret = op.get("returns") or {"media": "application/json", "model": "", "description": ""}
    if ret["media"] != "application/json":
        return ["bytes", *_wrapped(f"the {ret['media']} document itself")]
    what = ": ".join(filter(None, [ret["model"], ret["description"]])) or "the answer's JSON object"
    keys = ret.get("keys") or []
    return ["dict", *_wrapped(what + (f" (keys: {', '.join(keys)})" if keys else ""))]


def _doc(op: dict[str, Any], refusals: dict[str, str]) -> str:
    """numpy-style help for a generated method: what each argument means (its type, default and, from
    the schema's description, its unit), what the call returns and which refusals it raises."""
    lines = [op["summary"]]
    if op["description"] and op["description"] != op["summary"]:
        lines += ["", *textwrap.wrap(op["description"], width=100)]
    args = _arguments(op)
    if args:
        lines += ["", "Parameters", "----------"]
        for head, meaning in args:
            lines += [head, *_wrapped(meaning)]
    lines += ["", "Returns", "-------", *_returns(op)]
    said = [f"{code} {refusals.get(code, '')}".rstrip() for code in op.get("refusals") or []]
    lines += ["", "Raises", "------", "ApiError",
              *_wrapped("any refusal, with `.status` and `.detail` (the field and the rule)"
                        + (": " + "; ".join(said) if said else "") + ". A 429 is retried after its Retry-After first.")]
    lines += ["", "Notes", "-----", f"{op['method']} {op['path']} (scope: {op['scope']})."]
    return "\n".join(lines)


def signature(op: dict[str, Any]) -> inspect.Signature:
    """Annotations are kept as text (`"str | None"`, `"Literal['age', 'block']"`): they document the
    JSON type for help() and editors; nothing evaluates them."""
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    params += [P(p, P.POSITIONAL_OR_KEYWORD, annotation="str") for p in op["path_params"]]
    kw = []
    for q in op["query"]:
        kw.append(P(q["name"], P.KEYWORD_ONLY, annotation="str" if q["required"] else "str | None",
                    **({} if q["required"] else {"default": None})))
    for f in op["fields"]:
        extra = {} if f["required"] else {"default": f.get("default")}
        kw.append(P(f["arg"], P.KEYWORD_ONLY, annotation=f["type"], **extra))
    raw = [ct for ct in op["content_types"] if ct != "application/json"]
    if raw:
        only_raw = "application/json" not in op["content_types"]
        kw.append(P("content", P.KEYWORD_ONLY, annotation="bytes | str" if only_raw else "bytes | str | None",
                    **({} if only_raw else {"default": None})))
        kw.append(P("content_type", P.KEYWORD_ONLY, annotation="str", default=raw[0]))
    if op["tool"] is None:  # an original route: further query parameters it reads (offset, limit, ...)
        kw.append(P("query_params", P.KEYWORD_ONLY, annotation="dict | None", default=None))
    if op["scope"] == "write":  # the Idempotency-Key header, for the writes that honour it
        kw.append(P("idempotency_key", P.KEYWORD_ONLY, annotation="str | None", default=None))
    # Required keyword-only parameters first: only a reading order, keyword-only has no rule.
    kw.sort(key=lambda p: p.default is not P.empty)
    return inspect.Signature(params + kw)


def build_request(op: dict[str, Any], sig: inspect.Signature, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Request:
    """The HTTP request of a call: only the arguments given are sent, so the service applies its
    own defaults exactly as for a REST or tool-protocol caller."""
    given = sig.bind(*args, **kwargs).arguments
    given.pop("self")
    path = op["path"]
    for p in op["path_params"]:
        path = path.replace("{" + p + "}", quote(str(given.pop(p)), safe=""))
    params = {q["name"]: given.pop(q["name"]) for q in op["query"] if q["name"] in given}
    params = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items() if v is not None}
    params.update(given.pop("query_params", None) or {})
    key = given.pop("idempotency_key", None)
    headers = {"Idempotency-Key": key} if key else None
    content = given.pop("content", None)
    content_type = given.pop("content_type", None)
    by_arg = {f["arg"]: f["name"] for f in op["fields"]}
    body = {by_arg[k]: v for k, v in given.items()}
    auth = not op["public"]
    if content is not None:
        data = content.encode() if isinstance(content, str) else bytes(content)
        ct = content_type or next(ct for ct in op["content_types"] if ct != "application/json")
        return Request(op["method"], path, params, content=data, content_type=ct, auth=auth, headers=headers)
    if op["fields"] or op["tool"] is not None:
        return Request(op["method"], path, params, json=body, auth=auth, headers=headers)
    return Request(op["method"], path, params, auth=auth, headers=headers)


def result_of(status: int, content_type: str, body: bytes) -> Any:
    """A response's result, or the one error type for a refusal."""
    is_json = content_type.split(";")[0].strip() == "application/json"
    if status >= 400:
        detail = body.decode("utf-8", "replace")
        if is_json:
            try:
                parsed = orjson.loads(body)
                if isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
                    detail = parsed["detail"]
            except orjson.JSONDecodeError:
                pass
        raise ApiError(status, detail)
    if is_json:
        return orjson.loads(body) if body else None
    return body


def warn_if_deprecated(method: str, url: str, headers: Any) -> None:
    """A route announced for removal (README, deprecation policy) answers with `Deprecation` and
    `Sunset` headers; the client turns them into a DeprecationWarning so the caller sees it."""
    if "deprecation" in headers:
        sunset = headers.get("sunset")
        link = headers.get("link")
        warnings.warn(f"{method} {url} is deprecated ({headers['deprecation']})"
                      + (f"; it may go after {sunset}" if sunset else "") + (f"; see {link}" if link else ""),
                      DeprecationWarning, stacklevel=4)


def retry_after(value: str | None, attempt: int) -> float:
    """Seconds to wait before retrying a 429: the service's Retry-After (seconds or an HTTP date),
    else an exponential backoff."""
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    return min(30.0, 0.5 * 2 ** attempt)


def progress_line(job: dict[str, Any], width: int = 30) -> str:
    frac = float(job.get("progress") or 0.0)
    done = round(frac * width)
    eta = job.get("eta_s")
    tail = f" eta {eta:.0f} s" if isinstance(eta, (int, float)) else ""
    if job.get("status") == "queued":
        tail = f" queued (position {job.get('queue_position')})"
    return f"\rjob {job.get('id')} [{'#' * done}{'-' * (width - done)}] {frac:6.1%}{tail}   "


def finished(job: dict[str, Any]) -> dict[str, Any] | None:
    """The job's final status when it is done; a failed or cancelled job is a refusal."""
    status = job.get("status")
    if status == "done":
        return job
    if status == "failed":
        raise ApiError(422, f"job {job.get('id')} failed: {job.get('message')}")
    if status == "cancelled":
        raise ApiError(409, f"job {job.get('id')} was cancelled: {job.get('message')}")
    return None


def generate(cls: type, spec: dict[str, Any], call: Callable[[Any, Request], Any], is_async: bool) -> None:
    """Give `cls` one method per operation of the snapshot, named by its operation id."""
    for op in spec["operations"]:
        sig = signature(op)

        def make(op: dict[str, Any] = op, sig: inspect.Signature = sig) -> Callable[..., Any]:
            if is_async:
                async def method(*args: Any, **kwargs: Any) -> Any:
                    return await call(args[0], build_request(op, sig, args, kwargs))
            else:
                def method(*args: Any, **kwargs: Any) -> Any:
                    return call(args[0], build_request(op, sig, args, kwargs))
            method.__name__ = op["name"]
            method.__module__ = cls.__module__
            method.__qualname__ = f"{cls.__name__}.{op['name']}"
            method.__doc__ = _doc(op, spec.get("refusals", {}))
            method.__signature__ = sig  # type: ignore[attr-defined]
            return method

        if hasattr(cls, op["name"]):
            raise RuntimeError(f"operation {op['name']} would hide the client's own method")
        setattr(cls, op["name"], make())
