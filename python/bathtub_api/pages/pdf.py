"""PDF by headless Chromium's print (the page's own print stylesheet, A4): the HTML is written to a
private temporary folder with its stylesheet inlined, so the browser fetches nothing."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from bathtub_api.errors import ApiError
from bathtub_api.private import write_private

_ONE_AT_A_TIME = asyncio.Semaphore(2)  # a browser is heavy: at most two prints at once per process


def chromium(configured: str) -> str | None:
    if configured:
        return configured if Path(configured).exists() or shutil.which(configured) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


async def print_pdf(html: str, configured: str = "", timeout_s: float = 60.0) -> bytes:
    """The page printed to PDF bytes. 503 when no browser is installed, 500-free otherwise: a
    browser that fails or hangs is a 502 naming it."""
    exe = chromium(configured)
    if exe is None:
        raise ApiError(503, "pdf: headless Chromium is not installed on this service (set BATHTUB_CHROMIUM)")
    async with _ONE_AT_A_TIME:
        with tempfile.TemporaryDirectory(prefix="bathtub-pdf-") as tmp:
            page = Path(tmp) / "page.html"
            out = Path(tmp) / "page.pdf"
            write_private(page, html.encode("utf-8"))
            # --no-sandbox: the service may run as root in a container, where Chromium's sandbox
            # cannot start; the page is our own rendered HTML with no script (CSP forbids any).
            proc = await asyncio.create_subprocess_exec(
                exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                f"--user-data-dir={tmp}/profile", "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw",
                f"--print-to-pdf={out}", page.as_uri(),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            try:
                _, err = await asyncio.wait_for(proc.communicate(), timeout_s)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                raise ApiError(502, f"pdf: the browser did not finish printing within {timeout_s:g} s") from None
            if proc.returncode != 0 or not out.exists() or out.stat().st_size == 0:
                tail = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
                raise ApiError(502, "pdf: the browser could not print the page" + (f" ({tail[0][:200]})" if tail
                                                                                   else ""))
            return out.read_bytes()
