"""Figures: charts drawn by code from the reference model, never by hand.

A figure is a script `content/figures/<name>.py` defining

    CAPTION = "One line saying what the chart shows."
    def draw(fig):        # a matplotlib.figure.Figure, already sized
        ...               # plot numbers computed from grading_engine.reference

A lesson shows it with `![alt text](figure:<name>)`. load_content renders
each referenced script to SVG and stores it (a Figure row); the SVG is
cached on disk by a hash of the script, so reloading unchanged content is
cheap. Run `python -m quiz.content.figures NAME [-o out.png|out.svg]` to preview one.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import re
import runpy
from pathlib import Path

FIGURE_DIR = "figures"
FIGURE_REF = re.compile(
    r"!\[(?P<alt>[^\]\n]*)\]\(figure:(?P<name>[a-z0-9][a-z0-9-]*)\)"
)
# Bump when the rendering settings below change, so cached SVGs are redrawn.
_RENDER_VERSION = "2"  # 2: scripts run on one torch thread
_SIZE_INCHES = (8.0, 4.5)


class FigureError(Exception):
    """A figure script is missing, broken, or does not follow the contract."""


def figure_names(markdown_text: str) -> list[str]:
    """Names of the figures a Markdown text references, in order, once each."""
    return list(dict.fromkeys(m["name"] for m in FIGURE_REF.finditer(markdown_text)))


def figure_path(root: Path, name: str) -> Path:
    return Path(root) / FIGURE_DIR / f"{name}.py"


def source_hash(path: Path) -> str:
    """Hash of the script and the render settings; the SVG cache key."""
    digest = hashlib.sha256(_RENDER_VERSION.encode())
    digest.update(path.read_bytes())
    return digest.hexdigest()


def _cache_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / "var" / "figures"
    return Path(os.environ.get("FIGURE_CACHE_DIR", default))


@contextlib.contextmanager
def _torch_state_kept():
    """Run a script on one torch thread, then put back the process's state.

    Figures render inside load_content, the admin and the test suite: a
    script that trains with one thread or reseeds must not change what runs
    after it in the same process. One thread because a figure's tensors are
    small: on a busy 2-core machine, OpenMP threads spinning against other
    work made rendering several times slower, and the figures' numbers no
    longer depend on the core count.
    """
    import torch

    threads, rng = torch.get_num_threads(), torch.random.get_rng_state()
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    try:
        torch.set_num_threads(1)
        yield
    finally:
        torch.set_num_threads(threads)
        torch.random.set_rng_state(rng)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


def _draw(path: Path, fmt: str) -> tuple[bytes, str]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    with _torch_state_kept():
        namespace = runpy.run_path(str(path), run_name=f"figure_{path.stem}")
    draw = namespace.get("draw")
    caption = namespace.get("CAPTION", "")
    if not callable(draw):
        raise FigureError(f"{path}: defines no draw(fig) function")
    if not isinstance(caption, str):
        raise FigureError(f"{path}: CAPTION must be a string")
    with (
        matplotlib.rc_context(
            {"svg.hashsalt": "course", "svg.fonttype": "none", "font.size": 10}
        ),
        _torch_state_kept(),
    ):
        fig = Figure(figsize=_SIZE_INCHES, layout="constrained")
        draw(fig)
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {}
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=110)
    return buffer.getvalue(), caption.strip()


def figure_render(path: Path) -> tuple[str, str, str]:
    """Render a figure script to SVG: (svg, caption, source_hash).

    Re-uses the on-disk cache when the script has not changed. A script that
    raises is reported as a FigureError naming the file, so load_content can
    refuse the whole load with a clear message. Processes that load at once
    (two workers, the test suite's) render each figure once: the first takes
    a lock on its hash and the others wait for its SVG.
    """
    path = Path(path)
    if not path.is_file():
        raise FigureError(f"{path}: no such figure script")
    digest = source_hash(path)
    cached = _cache_dir() / f"{digest}.svg"
    hit = _cached(cached)
    if hit is not None:
        return (*hit, digest)
    with _render_lock(cached):
        hit = _cached(cached)  # drawn by another process while we waited
        if hit is not None:
            return (*hit, digest)
        try:
            data, caption = _draw(path, "svg")
        except FigureError:
            raise
        except Exception as exc:  # an author's script: report, never crash the load
            raise FigureError(
                f"{path}: draw() failed: {type(exc).__name__}: {exc}"
            ) from exc
        svg = data.decode("utf-8")
        try:
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(svg, encoding="utf-8")
            cached.with_suffix(".caption").write_text(caption, encoding="utf-8")
            tmp.replace(cached)  # last: the SVG's presence means both are whole
        except OSError:
            pass  # a read-only checkout still renders, just without the cache
    return svg, caption, digest


def _cached(svg_file: Path) -> tuple[str, str] | None:
    caption_file = svg_file.with_suffix(".caption")
    try:
        return (
            svg_file.read_text(encoding="utf-8"),
            caption_file.read_text(encoding="utf-8"),
        )
    except OSError:
        return None


@contextlib.contextmanager
def _render_lock(svg_file: Path):
    """An exclusive lock on this figure's hash, held while it is drawn; none
    where the cache cannot be written (then each process draws its own)."""
    import fcntl

    try:
        svg_file.parent.mkdir(parents=True, exist_ok=True)
        lock = open(svg_file.with_suffix(".lock"), "a")  # noqa: SIM115
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render one content figure.")
    parser.add_argument("name", help="figure name, e.g. param-breakdown")
    parser.add_argument("-o", "--output", help="out.svg or out.png (default NAME.svg)")
    parser.add_argument("--content", default="content", help="content folder")
    args = parser.parse_args(argv)
    path = figure_path(Path(args.content), args.name)
    output = Path(args.output or f"{args.name}.svg")
    fmt = output.suffix.lstrip(".") or "svg"
    try:
        data, caption = _draw(path, fmt)
    except (FigureError, FileNotFoundError) as exc:
        print(f"error: {exc}")
        return 1
    output.write_bytes(data)
    print(f"wrote {output} ({len(data):,} bytes); caption: {caption}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
