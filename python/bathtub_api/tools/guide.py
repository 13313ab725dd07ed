"""guide: short how-tos. Each topic names the actions it concerns, and the service's registry
is refused at build time if a topic names an action it does not have (`check_pages`), so the
guide cannot describe what is not there."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field

from bathtub.regression import records as regression
from bathtub_api.config import Config
from bathtub_api.glossary import field_texts
from bathtub_api.openapi import definitions
from bathtub_api.plans import PlanLimits, all_limits
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Strict

PAGE_DIR = Path(__file__).resolve().parent.parent / "guide_pages"


@dataclass(frozen=True)
class Page:
    title: str
    summary: str
    text: str
    actions: tuple[str, ...]  # "tool/action" (tool protocol) or "METHOD /path" (REST-only routes)


def _unwrap(markdown: str) -> str:
    """The text as the guide answers it: a paragraph's wrapped lines joined by single spaces,
    paragraphs apart by a blank line (the files are wrapped for reading and diffs)."""
    return "\n\n".join(" ".join(para.split("\n")) for para in markdown.strip().split("\n\n"))


def read_page(path: Path) -> tuple[str, Page, dict[str, str]]:
    """One topic file: `NN-topic.md`, TOML front matter between `+++` lines (title, summary,
    actions, and the regression topic's `[models]`), then the text."""
    _, front, body = path.read_text(encoding="utf-8").split("+++\n", 2)
    meta = tomllib.loads(front)
    key = path.stem.partition("-")[2]
    return key, Page(meta["title"], meta["summary"], _unwrap(body), tuple(meta["actions"])), meta.get("models", {})


def _load() -> tuple[dict[str, Page], dict[str, str]]:
    pages: dict[str, Page] = {}
    models: dict[str, str] = {}
    for path in sorted(PAGE_DIR.glob("*.md")):
        key, page, found = read_page(path)
        pages[key] = page
        models.update(found)
    # The regression topic lists only the model ids the library declares, so it cannot describe a
    # model POST /api/v1/fit would refuse, and the ones `best` ranks.
    listed = "; ".join(f"`{k}` {v}" for k, v in models.items() if k in regression.MODELS)
    ranked = ", ".join(f"`{k}`" for k in regression.RANKED)
    reg = pages["regression"]
    pages["regression"] = dataclasses.replace(
        reg, text=reg.text.replace("{{models}}", listed).replace("{{ranked}}", ranked))
    return pages, models


PAGES, REGRESSION_MODELS = _load()
Topic = Literal[tuple(PAGES)]  # type: ignore[valid-type]  # the topics are the files


# The tools of the tool protocol, whose fields `guide {tool}` explains (check_pages keeps the list
# equal to the registry's: a schema-valid name is always answered).
Tool = Literal["alt", "datasets", "degradation", "fit", "fleets", "get", "guide", "jobs", "list", "rbd",
               "rbd_analysis", "rcm", "reports", "sharing", "strategy", "tracked_fleets", "uploads"]


class GuideRequest(Strict):
    topic: Topic | None = None
    tool: Tool | None = Field(None, description="A tool's name: the answer's `fields` give every field of its "
                                                "actions with its meaning, unit and default.")


class GuideAction(Strict):
    name: str
    available: bool


class GuideTopic(Strict):
    id: str
    title: str
    summary: str


class GuideAnswer(Strict):
    topics: list[GuideTopic] | None = None
    topic: str | None = None
    title: str | None = None
    text: str | None = None
    actions: list[GuideAction] | None = None
    tool: str | None = Field(None, description="The tool whose fields are given.")
    fields: dict[str, dict[str, str]] | None = Field(
        None, description="With `tool`: action (or the tool's name when it has no actions) -> field -> what it "
                          "means, its unit and default; nested fields by dotted path (nodes.model.mean).")


def tool_fields(reg: Registry, tool: str) -> dict[str, dict[str, str]]:
    """Every field of a tool's actions with its full description (the glossary's included)."""
    actions = [a for a in reg.tools()[tool] if not a.rest_only]
    defs = definitions([a.request for a in actions])
    return {a.action or tool: field_texts(defs, a.request.__name__) for a in actions}


def plans_text(config: Config, plan: str | None = None) -> str:
    """The plan figures this service is configured with (and the caller's plan, when known)."""

    def one(p: PlanLimits) -> str:
        return (f"{p.plan}: {p.stored_items:,} stored items, {p.replications_per_job:,} replications per job, "
                f"{p.job_cpu_seconds:g} CPU-seconds per job, {p.concurrent_jobs} queued or running jobs at once, "
                f"{'with' if p.pro_tools else 'no'} pro-only tools")

    text = " Here: " + "; ".join(one(p) for p in all_limits(config).values()) + "."
    return text + (f" Your plan: {plan}." if plan else "")


def topic_text(key: str, config: Config, plan: str | None = None) -> str:
    """A topic's text as the guide answers it; `plans` adds this service's configured figures."""
    text = PAGES[key].text
    return text + plans_text(config, plan) if key == "plans" else text


def available_names(reg: Registry) -> set[str]:
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in reg.actions.values()}
    names |= {f"{r.method} {r.path}" for r in reg.routes}
    return names


def check_pages(reg: Registry) -> None:
    """Refuse a registry whose guide names an action it lacks (a removed or renamed action must
    take its guide text with it)."""
    live = available_names(reg)
    for key, page in PAGES.items():
        missing = [a for a in page.actions if a not in live]
        if missing:
            raise RuntimeError(f"guide topic {key!r} names actions this service lacks: {', '.join(missing)}")
    differ = {a.tool for a in reg.actions.values() if not a.rest_only} ^ set(get_args(Tool))
    if differ:
        raise RuntimeError(f"guide's Tool list differs from the registry's tools: {sorted(differ)}")


def register(reg: Registry) -> None:
    async def guide(ctx: Ctx, req: GuideRequest) -> dict[str, Any]:
        if req.tool is not None:
            fields = {"tool": req.tool, "fields": tool_fields(reg, req.tool)}
            return fields if req.topic is None else {**await guide(ctx, GuideRequest(topic=req.topic)), **fields}
        if req.topic is None:
            return {"topics": [{"id": k, "title": p.title, "summary": p.summary} for k, p in PAGES.items()]}
        page = PAGES[req.topic]
        live = available_names(reg)
        return {
            "topic": req.topic,
            "title": page.title,
            "text": topic_text(req.topic, ctx.config, ctx.user.plan),
            "actions": [{"name": a, "available": a in live} for a in page.actions],
        }

    reg.action("guide", None, request=GuideRequest, response=GuideAnswer,
               summary="With no topic, the list of topics; with a topic, a short how-to; with a tool, "
                       "what every field of its actions means")(guide)
