"""Peak memory of the service while it cleans three 64-megapixel photos sent at once.

Starts `bathtub serve` (SQLite in a temporary folder) as a subprocess, makes a token and a
dataset, POSTs three different 8000 × 8000 photos to /api/v1/maintenance/photos at the same
moment, and reads the server's own figures from /proc/<pid>/status: VmHWM (its peak resident
set over its whole life) and VmRSS once the three answers are in (what it kept). A fresh server
per round, so each VmHWM is that round's peak alone.

With `--baseline DIR` the rounds alternate between this tree's service and the one whose
Python sources are in DIR (e.g. an unchanged checkout's `python/`), and the figure is the
ratio of their peaks (bench/harness.py).

    python bench/photo_memory.py [--format jpeg|png] [--rounds 3] [--baseline /work/main/python]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench

OURS = Path(__file__).resolve().parent.parent / "python"
EDGE = 8000  # 64,000,000 pixels: the largest photo the service takes by default


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def photos(fmt: str) -> list[bytes]:
    """Three different 8000 × 8000 photos. JPEG: smooth noise, a few MiB like a camera's; PNG: a
    gradient (PNG of real texture at this size passes the 20 MiB body limit)."""
    out = []
    for i in range(3):
        if fmt == "jpeg":
            bands = [Image.effect_noise((EDGE // 16, EDGE // 16), 40 + 10 * i).resize((EDGE, EDGE)) for _ in range(3)]
        else:
            grad = Image.linear_gradient("L").resize((EDGE, EDGE))
            bands = [grad, grad.rotate(90 * (i + 1)), Image.new("L", (EDGE, EDGE), 60 * i)]
        buf = io.BytesIO()
        Image.merge("RGB", bands).save(buf, fmt.upper(), **({"quality": 90} if fmt == "jpeg" else {}))
        out.append(buf.getvalue())
    return out


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def one_round(source: Path, images: list[bytes], fmt: str) -> dict[str, float]:
    """One fresh server from `source`: its peak and kept RSS (MB) around three photos at once."""
    with tempfile.TemporaryDirectory(prefix="bathtub-bench-") as tmp:
        url = f"sqlite:///{tmp}/bench.sqlite3"
        env = {**os.environ, "PYTHONPATH": str(source), "BATHTUB_RATE_LIMIT": str(10**9)}
        cli = [sys.executable, "-m", "bathtub_api.cli", "--database-url", url]
        token = subprocess.run([*cli, "token", "create", "--user", "bench", "--scopes", "read,write"], env=env,
                               check=True, capture_output=True, text=True).stdout.strip()
        port = free_port()
        log = Path(tmp) / "serve.log"
        with log.open("w") as out:
            server = subprocess.Popen([*cli, "serve", "--port", str(port)], env=env, stdout=out,
                                      stderr=subprocess.STDOUT, text=True)
        try:
            end = time.monotonic() + 120
            while "serving on" not in log.read_text():
                if server.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"the service did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            idle = status_kib(server.pid, "VmRSS")
            answers = asyncio.run(send(f"http://127.0.0.1:{port}", token, images, fmt))
            if any(status != 200 for status, _ in answers):
                raise RuntimeError(f"a photo was refused: {answers}")
            return {"peak_mb": status_kib(server.pid, "VmHWM") / 1024, "after_mb": status_kib(server.pid, "VmRSS")
                    / 1024, "idle_mb": idle / 1024}
        finally:
            server.terminate()
            server.wait(60)


async def send(base: str, token: str, images: list[bytes], fmt: str) -> list[tuple[int, Any]]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"},
                                     timeout=aiohttp.ClientTimeout(total=600)) as s:
        async with s.post(f"{base}/api/v1/datasets", json={"name": "pumps", "csv": "t\n1\n"}) as r:
            target = (await r.json())["id"]

        async def post(data: bytes) -> tuple[int, Any]:
            async with s.post(f"{base}/api/v1/maintenance/photos", params={"target_id": target}, data=data,
                              headers={"Content-Type": f"image/{fmt}"}) as r:
                return r.status, await r.json()

        return list(await asyncio.gather(*(post(d) for d in images)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=("jpeg", "png"), default="jpeg")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another tree's python/ folder to compare with")
    args = ap.parse_args()
    images = photos(args.format)
    print(f"three {EDGE} × {EDGE} {args.format.upper()} photos: {[len(d) // 1024 for d in images]} KiB")
    cases = {"this tree": lambda: one_round(OURS, images, args.format)}
    if args.baseline:
        cases["unchanged tree"] = lambda: one_round(args.baseline, images, args.format)
    bench = Bench(f"photo_memory_{args.format}", " ".join(["python bench/photo_memory.py", *sys.argv[1:]]))
    rounds = bench.interleave(cases, repeats=args.rounds, warmup=0)
    for name, rows in rounds.items():
        for r in rows:
            print(f"  {name:<10} idle {r['idle_mb']:6.0f} MB  peak {r['peak_mb']:6.0f} MB  "
                  f"after {r['after_mb']:6.0f} MB")
    if args.baseline:
        bench.figure(f"service peak RSS, three {EDGE}×{EDGE} {args.format.upper()} photos at once", rounds,
                     "this tree", "unchanged tree", key="peak_mb", unit="MB", higher_is_better=False)
        bench.figure(f"service RSS after three {EDGE}×{EDGE} {args.format.upper()} photos", rounds, "this tree",
                     "unchanged tree", key="after_mb", unit="MB", higher_is_better=False)
        bench.write()


if __name__ == "__main__":
    main()
