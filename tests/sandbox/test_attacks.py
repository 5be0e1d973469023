"""One test per attack a learner's submission can try from inside the sandbox.

Each test checks that the attack's concrete effect is absent, that the
grade ends as `error` or `failed` with a message saying why, and that the
right answer still passes on the next grades. Learner code reports what it
saw by raising: the exception's text reaches the verdict's message.
"""

from __future__ import annotations

import os
import re
import socket
import time

import pytest
from grading_engine.sandbox.slots import uid_pids

from tests.sandbox.conftest import (
    CANARY,
    RIGHT,
    assert_grader_still_works,
    messages,
    run_attack,
)

pytestmark = pytest.mark.sandbox

PROJECT = "/work/main"


def slot_processes(pool) -> dict[int, set[int]]:
    return {slot.uid: set(uid_pids(slot.uid)) for slot in pool.slots.slots}


# -- time -----------------------------------------------------------------


LOOP = """
def tie_weights(model):
    while True:
        pass
"""


def test_it_stops_an_infinite_loop_at_its_cpu_time_budget(pool):
    started = time.monotonic()
    verdict = run_attack(pool, LOOP, timeout=2)
    assert verdict.status == "error"
    assert verdict.checks[0].name == "time limit"
    assert "used more than 2 s of CPU time" in messages(verdict)
    assert verdict.cpu_ms >= 2000
    assert time.monotonic() - started < 20  # the 2 s limit, not the hour
    assert_grader_still_works(pool)


def test_on_a_busy_machine_a_loop_is_still_stopped_at_its_cpu_budget(pool):
    """With every core taken by another program, a loop gets a fraction of
    a core: it reaches its CPU budget later, but it is stopped by it (or at
    the latest by the wall-clock backstop), never left running."""
    from tests.cpu_load import cpu_hogs

    with cpu_hogs():
        started = time.monotonic()
        verdict = run_attack(pool, LOOP, timeout=1.5)
        waited = time.monotonic() - started
    assert verdict.checks[0].name == "time limit", messages(verdict)
    assert "of CPU time" in messages(verdict)
    assert waited < 20  # the budget plus its backstop (6.5 s), not the hour
    assert_grader_still_works(pool)


def test_it_stops_a_sleeping_submission(pool):
    started = time.monotonic()
    verdict = run_attack(
        pool,
        """
        import time
        def tie_weights(model):
            time.sleep(3600)
        """,
        timeout=2,
    )
    assert verdict.status == "error"
    assert_stopped_waiting(messages(verdict))
    assert time.monotonic() - started < 20  # the 2 s limit, not the hour
    assert_grader_still_works(pool)


def assert_stopped_waiting(text: str) -> None:
    """A job that used no CPU was stopped by the wall-clock backstop of its 2 s
    CPU budget (max(3 x 2 s, 2 s + 5 s) = 7 s), and is told so."""
    assert re.search(
        r"ran for [78] s of wall-clock time without finishing, having used "
        r"\d+\.\d s of the 2 s of CPU time it may use and was stopped at the "
        r"limit for code that waits",
        text,
    ), text


# -- processes ------------------------------------------------------------


def test_it_refuses_a_fork_bomb(pool):
    before = slot_processes(pool)
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            while True:
                os.fork()
        """,
    )
    assert verdict.status == "error"
    assert "PermissionError" in messages(verdict)
    assert slot_processes(pool) == before
    assert_grader_still_works(pool)


def test_it_caps_a_thread_bomb(pool):
    before = slot_processes(pool)
    verdict = run_attack(
        pool,
        """
        import threading, time
        def tie_weights(model):
            threads = []
            while True:
                t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
                t.start()
                threads.append(t)
        """,
    )
    assert verdict.status == "error"
    assert "can't start new thread" in messages(verdict)
    assert slot_processes(pool) == before
    assert_grader_still_works(pool)


def test_it_keeps_a_daemon_from_outliving_the_grade(pool):
    before = slot_processes(pool)
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    import time
                    time.sleep(3600)
                os._exit(0)
        """,
    )
    assert verdict.status == "error"
    assert "Operation not permitted" in messages(verdict)
    time.sleep(0.2)
    assert slot_processes(pool) == before  # only the slots' own workers remain
    assert_grader_still_works(pool)


def test_it_refuses_subprocesses_and_shells(pool):
    marker = "/tmp/sandbox-shell-ran"
    verdict = run_attack(
        pool,
        f"""
        import os, subprocess
        def tie_weights(model):
            status = os.system("touch {marker}")
            try:
                subprocess.run(["/bin/sh", "-c", "touch {marker}"])
            except OSError as exc:
                raise RuntimeError(f"system={{status}} run={{exc!r}}")
        """,
    )
    assert verdict.status == "error"
    # glibc's system() reports a shell it could not spawn as exit 127.
    assert "system=32512" in messages(verdict) or "system=-1" in messages(verdict)
    assert "PermissionError" in messages(verdict)
    assert not os.path.exists(marker)
    assert_grader_still_works(pool)


def test_it_survives_kill_minus_one(pool):
    workers = pool.worker_pids()
    verdict = run_attack(
        pool,
        """
        import ctypes, os, signal
        def tie_weights(model):
            libc = ctypes.CDLL(None, use_errno=True)
            raw = libc.kill(-1, signal.SIGKILL)
            errno = ctypes.get_errno()
            for pid in (-1, os.getppid(), 1):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError as exc:
                    last = exc
            raise RuntimeError(f"raw kill={raw} errno={errno}; {last!r}")
        """,
    )
    assert verdict.status == "error"
    assert "raw kill=-1 errno=1" in messages(verdict)
    assert pool.worker_pids() == workers  # no worker had to be restarted
    assert all(os.path.exists(f"/proc/{pid}") for pid in workers.values())
    assert_grader_still_works(pool)


def test_it_cannot_throttle_or_starve_the_warm_worker(pool):
    verdict = run_attack(
        pool,
        """
        import os, resource
        def tie_weights(model):
            worker = os.getppid()
            found = []
            for name, attack in (
                ("nofile", lambda: resource.prlimit(
                    worker, resource.RLIMIT_NOFILE, (0, 0))),
                ("nice", lambda: os.setpriority(os.PRIO_PROCESS, worker, 19)),
                ("nice-user", lambda: os.setpriority(os.PRIO_USER, 0, 19)),
                ("affinity", lambda: os.sched_setaffinity(worker, {0})),
            ):
                try:
                    attack()
                    found.append(f"{name}=done")
                except OSError as exc:
                    found.append(f"{name}={type(exc).__name__}")
            raise RuntimeError(" ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    for name in ("nofile", "nice", "nice-user", "affinity"):
        assert f"{name}=PermissionError" in text
    assert_grader_still_works(pool)


def test_it_restarts_a_slot_whose_worker_died_mid_grade(pool):
    import threading

    verdicts = []
    job = threading.Thread(
        target=lambda: verdicts.append(
            run_attack(
                pool,
                """
                import time
                def tie_weights(model):
                    time.sleep(30)
                """,
                timeout=20,
            )
        )
    )
    job.start()
    time.sleep(1.0)
    for pid in pool.worker_pids().values():  # as if the worker had been killed
        os.killpg(pid, 9)
    job.join(timeout=30)
    assert verdicts and verdicts[0].status == "error"
    assert "sandbox worker died" in messages(verdicts[0])
    assert_grader_still_works(pool)


# -- memory, output, disk -------------------------------------------------


def test_it_survives_a_memory_bomb(pool):
    workers = pool.worker_pids()
    verdict = run_attack(
        pool,
        """
        def tie_weights(model):
            hoard = []
            while True:
                hoard.append(b"x" * (256 * 1024 * 1024))
        """,
        timeout=30,
    )
    assert verdict.status == "error"
    text = messages(verdict)
    assert "MemoryError" in text or "memory limit" in text
    assert pool.worker_pids() == workers  # the job died, not the warm worker
    assert_grader_still_works(pool)


def test_it_refuses_one_huge_allocation(pool):
    verdict = run_attack(
        pool,
        """
        import torch
        def tie_weights(model):
            torch.empty(64 * 1024**3, dtype=torch.uint8).fill_(1)
        """,
    )
    assert verdict.status == "error"
    assert "memory" in messages(verdict).lower()
    assert_grader_still_works(pool)


def test_it_caps_an_output_flood(pool):
    limits = pool.limits
    verdict = run_attack(
        pool,
        """
        import sys
        def tie_weights(model):
            while True:
                sys.stdout.write("flood " * 10000)
        """,
    )
    assert verdict.status == "error"
    assert "output limit" in messages(verdict)
    assert len(verdict.stdout) < limits.output_bytes + 200
    assert "output truncated" in verdict.stdout
    assert_grader_still_works(pool)


def test_it_caps_a_disk_fill_and_a_huge_sparse_file(pool):
    verdict = run_attack(
        pool,
        """
        def tie_weights(model):
            found = []
            try:
                with open("/tmp/fill", "wb") as f:
                    while True:
                        f.write(b"\\0" * (1024 * 1024))
            except OSError as exc:
                found.append(f"fill: {exc.strerror}")
            try:
                with open("/tmp/sparse", "wb") as f:
                    f.seek(10**12)
                    f.write(b"x")
            except OSError as exc:
                found.append(f"sparse: {exc.strerror}")
            for path in ("/fill", "/sandbox/lib/fill", "/venv/fill"):
                try:
                    open(path, "wb").close()
                except OSError as exc:
                    found.append(f"{path}: {exc.strerror}")
            raise RuntimeError("; ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    assert "fill: File too large" in text
    assert "sparse: File too large" in text
    for path in ("/fill", "/sandbox/lib/fill", "/venv/fill"):
        assert f"{path}: Read-only file system" in text
    assert_grader_still_works(pool)


def test_a_job_leaves_no_files_for_the_next_one(pool):
    leave = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            os.makedirs("/tmp/left/deep", exist_ok=True)
            open("/tmp/left/deep/note", "w").write("from the last learner")
            os.chmod("/tmp/left", 0o500)
            os.symlink("/etc", "/tmp/link")
            raise RuntimeError("left files")
        """,
    )
    assert leave.status == "error"
    for _ in range(2):  # both slots
        look = run_attack(
            pool,
            """
            import os
            def tie_weights(model):
                raise RuntimeError(f"tmp={sorted(os.listdir('/tmp'))}")
            """,
        )
        assert "tmp=[]" in messages(look)
    assert_grader_still_works(pool)


# -- what the job can see -------------------------------------------------


def test_it_hides_shadow_settings_and_database(pool):
    verdict = run_attack(
        pool,
        f"""
        def tie_weights(model):
            found = []
            for path in ("/etc/shadow", "/etc/passwd", "{PROJECT}/config/settings.py",
                         "{PROJECT}/db.sqlite3", "{PROJECT}/manage.py"):
                try:
                    found.append(path + "=" + open(path, "rb").read(200).hex())
                except OSError as exc:
                    found.append(path + ": " + type(exc).__name__)
            raise RuntimeError("; ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    for path in ("/etc/shadow", "/etc/passwd", "config/settings.py", "db.sqlite3"):
        assert f"{path}: FileNotFoundError" in text
    for secret in ("/etc/shadow", f"{PROJECT}/config/settings.py"):
        if os.path.exists(secret):
            with open(secret, "rb") as f:
                assert f.read(200).hex() not in text
    assert_grader_still_works(pool)


def test_it_scrubs_the_environment(pool):
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            raise RuntimeError(repr(dict(os.environ)))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    assert "OMP_NUM_THREADS" in text  # the job did report its environment
    assert CANARY not in text
    assert "GRADER_TEST_SECRET" not in text
    assert_grader_still_works(pool)


def test_it_keeps_the_parent_and_worker_out_of_proc(pool):
    verdict = run_attack(
        pool,
        f"""
        import os
        def tie_weights(model):
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            leaked = False
            for pid in pids:
                for name in ("environ", "cmdline"):
                    try:
                        data = open(f"/proc/{{pid}}/{{name}}", "rb").read()
                    except OSError:
                        continue
                    leaked = leaked or b"{CANARY}" in data
            try:
                open(f"/proc/{{os.getppid()}}/mem", "rb").read(1)
                mem = "read"
            except OSError as exc:
                mem = type(exc).__name__
            raise RuntimeError(f"pids={{pids}} leaked={{leaked}} mem={{mem}}")
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    assert "mem=PermissionError" in text  # the worker is non-dumpable
    assert "leaked=False" in text
    # Only bwrap's init, the worker and the job itself exist in its pid space.
    pids = text.split("pids=[")[1].split("]")[0].split(", ")
    assert len(pids) <= 3
    assert str(os.getpid()) not in pids  # the pytest process is not there
    assert_grader_still_works(pool)


def test_it_passes_no_inherited_descriptors(pool):
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            open_fds = []
            for fd in range(1024):
                try:
                    os.fstat(fd)
                    open_fds.append(fd)
                except OSError:
                    pass
            raise RuntimeError(f"fds={open_fds}")
        """,
    )
    assert verdict.status == "error"
    assert "fds=[0, 1, 2, 3]" in messages(verdict)
    assert_grader_still_works(pool)


# -- network --------------------------------------------------------------


def _host_can_reach(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_it_cannot_reach_redis_or_postgres(pool):
    verdict = run_attack(
        pool,
        """
        import socket
        def tie_weights(model):
            found = []
            for port in (6379, 5432):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=2)
                    found.append(f"{port}: connected")
                except OSError as exc:
                    found.append(f"{port}: {type(exc).__name__}")
            for path in ("/var/run/postgresql/.s.PGSQL.5432",
                         "/var/run/redis/redis-server.sock"):
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(path)
                    found.append(f"{path}: connected")
                except OSError as exc:
                    found.append(f"{path}: {type(exc).__name__}")
            raise RuntimeError("; ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    assert "connected" not in text
    assert "6379: PermissionError" in text and "5432: PermissionError" in text
    assert "PGSQL.5432: FileNotFoundError" in text
    # Meaningful only because the services do listen out here.
    assert _host_can_reach(6379) or _host_can_reach(5432)
    assert_grader_still_works(pool)


def test_it_blocks_raw_syscalls_through_ctypes(pool):
    verdict = run_attack(
        pool,
        """
        import ctypes, os
        def tie_weights(model):
            libc = ctypes.CDLL(None, use_errno=True)
            found = []
            for name, nr, args in (
                ("ptrace", 101, (16, os.getppid(), 0, 0)),  # PTRACE_ATTACH
                ("socket", 41, (2, 1, 0)),                   # AF_INET, STREAM
                ("unshare", 272, (0x10000000,)),             # CLONE_NEWUSER
                ("mount", 165, (0, 0, 0, 0, 0)),
                ("bpf", 321, (0, 0, 0)),
                ("io_uring_setup", 425, (8, 0)),
            ):
                result = libc.syscall(nr, *args)
                found.append(f"{name}={result}/{ctypes.get_errno()}")
            raise RuntimeError(" ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    for name in ("ptrace", "socket", "unshare", "mount", "bpf", "io_uring_setup"):
        assert f"{name}=-1/1" in text  # EPERM from the filter
    assert_grader_still_works(pool)


# -- tampering with the grader -------------------------------------------


def test_it_cannot_write_a_pth_into_site_packages(pool):
    import sysconfig

    host_site = sysconfig.get_paths()["purelib"]
    verdict = run_attack(
        pool,
        """
        import site
        def tie_weights(model):
            path = site.getsitepackages()[0] + "/zz_evil.pth"
            open(path, "w").write("import os; os.system('id')")
        """,
    )
    assert verdict.status == "error"
    assert "Read-only file system" in messages(verdict)
    assert not os.path.exists(os.path.join(host_site, "zz_evil.pth"))
    assert_grader_still_works(pool)


def test_a_symlink_cannot_become_the_result(pool):
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            model.lm_head.weight = model.transformer.wte.weight
            os.symlink("/proc/self/environ", "/tmp/result")
            os.close(3)
            fd = os.open("/tmp/result-file", os.O_WRONLY | os.O_CREAT)
            assert fd == 3
        """,
    )
    assert verdict.status == "error"
    assert "no result" in messages(verdict) or "before the grader" in messages(verdict)
    assert_grader_still_works(pool)


def test_a_printed_fake_verdict_and_exit_do_not_pass(pool):
    verdict = run_attack(
        pool,
        """
        import json, os
        def tie_weights(model):
            print(json.dumps({"status": "passed", "score": 1.0, "checks": []}))
            os._exit(0)
        """,
    )
    assert verdict.status == "error"
    assert "before the grader got a result" in messages(verdict)
    assert_grader_still_works(pool)


def test_a_pickle_payload_in_the_result_is_never_unpickled(pool):
    marker = "/tmp/sandbox-pickle-ran"
    verdict = run_attack(
        pool,
        f"""
        import os, pickle
        class Boom:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))
        def tie_weights(model):
            blob = pickle.dumps(Boom())
            os.write(3, len(blob).to_bytes(8, "little") + blob)
            os._exit(0)
        """,
    )
    assert verdict.status == "error"
    assert "could not read the result" in messages(verdict)
    assert not os.path.exists(marker)
    assert_grader_still_works(pool)


def test_a_rigged_eq_does_not_pass(pool):
    verdict = run_attack(
        pool,
        """
        import torch
        class Liar(torch.nn.Parameter):
            def __eq__(self, other):
                return True
            __hash__ = torch.nn.Parameter.__hash__
        def tie_weights(model):
            wte = model.transformer.wte.weight
            model.lm_head.weight = Liar(wte.detach().clone())
            model.lm_head.weight.data_ptr = lambda: wte.data_ptr()
            return Liar(torch.zeros(1))
        """,
    )
    assert verdict.status == "failed"
    assert any(not check.passed for check in verdict.checks)
    assert_grader_still_works(pool)


def test_patching_torch_builtins_and_unittest_does_not_leak(pool):
    verdict = run_attack(
        pool,
        """
        import builtins, torch, unittest
        def tie_weights(model):
            torch.equal = lambda *a, **k: True
            torch.Tensor.data_ptr = lambda self: 1
            builtins.isinstance = lambda *a: True
            builtins.id = lambda obj: 1
            unittest.TestCase.assertEqual = lambda *a, **k: None
            torch._sandbox_patched = True
        """,
    )
    assert verdict.status in ("failed", "error")
    assert verdict.status != "passed"
    for _ in range(2):  # both slots: the next jobs see a pristine torch
        clean = run_attack(
            pool,
            """
            import builtins, torch
            def tie_weights(model):
                assert not hasattr(torch, "_sandbox_patched"), "patch leaked"
                assert builtins.id(model) != 1, "builtins leaked"
                model.lm_head.weight = model.transformer.wte.weight
            """,
        )
        assert clean.status == "passed", messages(clean)


# -- who the job is ---------------------------------------------------------


def test_each_slot_runs_as_its_own_unprivileged_uid(pool):
    seen = set()
    for _ in range(2):
        verdict = run_attack(
            pool,
            """
            import os
            def tie_weights(model):
                raise RuntimeError(f"uid={os.getuid()} gid={os.getgid()}")
            """,
        )
        text = messages(verdict)
        seen.add(int(text.split("uid=")[1].split()[0]))
    assert seen == {slot.uid for slot in pool.slots.slots}
    assert all(uid >= 1000 for uid in seen)
    assert_grader_still_works(pool)


def test_two_grades_run_at_once_on_separate_slots(pool):
    """Each job reports when its sleep began and ended: the spans overlap.

    Comparing spans, not a total against a budget, keeps this true on a
    loaded machine: queued jobs could never overlap, however fast.
    """
    from concurrent.futures import ThreadPoolExecutor

    code = """
    import os, time
    BEGAN = time.time()
    time.sleep(3)  # once per job, while the other job sleeps too
    ENDED = time.time()
    def tie_weights(model):
        raise RuntimeError(f"uid={os.getuid()} span={BEGAN!r},{ENDED!r} ")
    """
    with ThreadPoolExecutor(2) as threads:
        verdicts = list(threads.map(lambda _: run_attack(pool, code), range(2)))
    texts = [messages(v) for v in verdicts]
    uids = {text.split("uid=")[1].split()[0] for text in texts}
    assert len(uids) == 2, texts  # one slot each, never the same uid at once
    spans = [
        tuple(float(x) for x in text.split("span=")[1].split()[0].split(","))
        for text in texts
    ]
    (a_began, a_ended), (b_began, b_ended) = spans
    assert a_began < b_ended and b_began < a_ended, spans  # they overlapped
    assert_grader_still_works(pool)


# -- nothing of one job reaches the next (security issue 13) ----------------


def _split(marker: str) -> tuple[str, str]:
    """Two reversed halves: a job rebuilds each, never the marker itself."""
    half = len(marker) // 2
    return marker[:half][::-1], marker[half:][::-1]


# Job B reads all anonymous memory of its own process (heap, stacks, the
# mmap'd arenas where malloc and pymalloc keep freed blocks) with
# ctypes.string_at, and counts where FIRST is directly followed by SECOND.
# It never holds a marker it looks for in one piece, so only a copy that
# was already in memory can match; OWN is built whole on purpose, to show
# that the scan does find what is really there.
MEMORY_SCAN = """
import ctypes, os
A1, A2 = "{a1}"[::-1].encode(), "{a2}"[::-1].encode()
O1, O2 = "{o1}"[::-1], "{o2}"[::-1]
OWN = [(O1 + O2).encode() for _ in range(3)]
def count(pairs):
    found = [0 for _ in pairs]
    regions = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            name = fields[5] if len(fields) > 5 else ""
            if fields[1].startswith("r") and name in ("", "[heap]", "[stack]"):
                regions.append([int(x, 16) for x in fields[0].split("-")])
    step, scanned = 8 << 20, 0
    for low, high in regions:
        for at in range(low, high, step):
            chunk = ctypes.string_at(at, min(step + 256, high - at))
            scanned += len(chunk)
            for n, (first, second) in enumerate(pairs):
                i = chunk.find(first)
                while i >= 0:
                    j = i + len(first)
                    if chunk[j:j + len(second)] == second:
                        found[n] += 1
                    i = chunk.find(first, i + 1)
    return found, scanned
def tie_weights(model):
    (a, own), scanned = count([(A1, A2), (O1.encode(), O2.encode())])
    raise RuntimeError(f"uid={{os.getuid()}} a={{a}} own={{own}} mb={{scanned >> 20}}")
"""


def test_a_later_job_finds_no_earlier_job_in_its_memory(pool):
    import secrets

    learner_a = f"learner-a-{secrets.token_hex(12)}"
    own = f"learner-b-{secrets.token_hex(12)}"
    # A right answer that carries the marker all through its source.
    padding = "".join(f"# {learner_a} line {n} {'x' * 80}\n" for n in range(200))
    code_a = f"{padding}{RIGHT}# {learner_a}\n"
    workers = pool.worker_pids()
    for _ in range(2):  # one job of learner A on each slot
        verdict = run_attack(pool, code_a)
        assert verdict.status == "passed", messages(verdict)
    (a1, a2), (o1, o2) = _split(learner_a), _split(own)
    scan = MEMORY_SCAN.format(a1=a1, a2=a2, o1=o1, o2=o2)
    assert learner_a not in scan and own not in scan
    uids = set()
    for _ in range(2):  # then learner B, on each slot after A
        text = messages(run_attack(pool, scan, timeout=60))
        assert "a=" in text, text
        uids.add(int(text.split("uid=")[1].split()[0]))
        assert int(text.split("own=")[1].split()[0]) >= 3, text  # the scan works
        assert int(text.split("mb=")[1].split()[0]) > 500, text  # the whole heap
        assert int(text.split("a=")[1].split()[0]) == 0, text
    assert uids == {slot.uid for slot in pool.slots.slots}
    assert pool.worker_pids() == workers


# Which of /tmp, /dev/shm and /dev a job can write, and how much.
SCRATCH_PROBE = """
import os
def tie_weights(model):
    found = []
    for path in ("/dev/note", "/dev/shm/note", "/dev/pts/note", "/note"):
        try:
            open(path, "wb").close()
            found.append(f"{path}=written")
        except OSError as exc:
            found.append(f"{path}: {exc.strerror}")
    for top in ("/tmp", "/dev/shm"):
        total, why = 0, "took it all"
        try:
            for n in range(13):  # 13 files of 8 MB: 104 MB, under FSIZE each
                with open(f"{top}/fill{n}", "wb", buffering=0) as f:
                    for _ in range(8):
                        total += f.write(b"1" * (1 << 20))
        except OSError as exc:
            why = exc.strerror
        found.append(f"{top} {total >> 20} MB: {why}")
    raise RuntimeError("; ".join(found))
"""


def _scratch_report(text: str, top: str) -> tuple[int, str]:
    part = text.split(f"{top} ")[1].split(";")[0]
    written, why = part.split(" MB: ")
    return int(written), why.strip()


@pytest.mark.parametrize("kind", ["pool", "cold"])
def test_dev_is_read_only_and_scratch_holds_64_mb(kind, pool, cold_runner):
    runner = pool if kind == "pool" else cold_runner
    verdict = run_attack(runner, SCRATCH_PROBE, timeout=30)
    text = messages(verdict)
    assert verdict.status == "error"
    assert "=written" not in text, text
    for path in ("/dev/note", "/dev/shm/note", "/note"):
        assert f"{path}: Read-only file system" in text, text
    written, why = _scratch_report(text, "/tmp")
    assert why == "No space left on device", text
    assert 48 <= written <= 64, text  # the 64 MB tmpfs, not the 16 MB FSIZE
    written, why = _scratch_report(text, "/dev/shm")
    assert written <= 64 and why != "took it all", text
    follow_ups = 2 if kind == "pool" else 1
    assert_grader_still_works(runner, grades=follow_ups)


LEAVE_NOTES = """
import ctypes, os
def tie_weights(model):
    for path in ("/tmp/note", "/dev/shm/note", "/dev/note", "/tmp/.hidden"):
        try:
            with open(path, "w") as f:
                f.write("from the last learner")
        except OSError:
            pass
    try:
        os.setxattr("/tmp", "user.note", b"from the last learner")
    except OSError:
        pass
    os.utime("/tmp", (12345, 12345))
    os.chmod("/tmp", 0o700)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget(0x5107E, 4096, 0o1600)  # System V IPC lives as long as the slot
    libc.semget(0x5107E, 1, 0o1600)
    libc.msgget(0x5107E, 0o1600)
    raise RuntimeError("left notes")
"""
READ_NOTES = """
import os
def tie_weights(model):
    found = []
    for top in ("/tmp", "/dev/shm", "/dev"):
        try:
            found.append(f"{top}={sorted(os.listdir(top))}")
        except OSError as exc:
            found.append(f"{top}: {exc.strerror}")
    try:
        found.append(f"xattrs={os.listxattr('/tmp')}")
    except OSError as exc:
        found.append(f"xattrs: {exc.strerror}")
    st = os.stat("/tmp")
    found.append(f"mode={oct(st.st_mode)} mtime={int(st.st_mtime)}")
    ipc = 0
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as f:
            ipc += len(f.readlines()) - 1  # a header line, then one per object
    found.append(f"ipc={ipc}")
    raise RuntimeError("; ".join(found))
"""


def test_a_note_left_by_one_job_is_gone_for_the_next(pool):
    before = [messages(run_attack(pool, READ_NOTES)) for _ in range(2)]
    for text in before:  # nothing the worker's own start-up left either
        assert "/tmp=[]" in text and "mtime=12345" not in text, text
    for _ in range(2):  # notes on both slots
        assert "left notes" in messages(run_attack(pool, LEAVE_NOTES))
    after = [messages(run_attack(pool, READ_NOTES)) for _ in range(2)]
    for text in after:
        assert "/tmp=[]" in text, text
        assert "xattrs=[]" in text, text
        assert "note" not in text, text
        assert "mtime=12345" not in text, text
        assert "ipc=0" in text, text
    mode = [text.split("mode=")[1].split()[0] for text in before + after]
    assert len(set(mode)) == 1, mode  # /tmp's own mode is restored too
    dev = [text.split("/dev=")[1].split(";")[0] for text in before + after]
    assert len(set(dev)) == 1, dev
    assert_grader_still_works(pool)


def test_a_job_cannot_lower_its_own_oom_score(pool):
    verdict = run_attack(
        pool,
        """
        import ctypes, os
        def tie_weights(model):
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, as an attacker
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("0")
                wrote = "done"
            except OSError as exc:
                wrote = type(exc).__name__
            with open("/proc/self/oom_score_adj") as f:
                now = f.read().strip()
            raise RuntimeError(f"write={wrote} adj={now}")
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    assert "write=done" not in text, text
    assert "adj=1000" in text, text
    assert_grader_still_works(pool)


def test_a_deep_directory_tree_is_cleaned_up_without_a_restart(pool):
    workers = pool.worker_pids()
    verdict = run_attack(
        pool,
        """
        import os
        def tie_weights(model):
            os.symlink("/tmp", "/tmp/loop")
            os.symlink("/sandbox/lib", "/tmp/lib")
            os.chdir("/tmp")
            for depth in range(1500):  # deeper than the recursion limit
                name = "d" * 200 if depth % 2 else "e"  # and than PATH_MAX
                os.mkdir(name)
                open(os.path.join(name, "f"), "w").close()
                os.chdir(name)
                os.chmod("..", 0o500)  # not writable: it must be undone
            os.mkfifo("fifo")
            os.chmod(".", 0)
            raise RuntimeError("built the tree")
        """,
        timeout=30,
    )
    assert "built" in messages(verdict), messages(verdict)
    for _ in range(2):
        look = run_attack(
            pool,
            """
            import os
            def tie_weights(model):
                raise RuntimeError(f"tmp={sorted(os.listdir('/tmp'))}")
            """,
        )
        assert "tmp=[]" in messages(look), messages(look)
    assert pool.worker_pids() == workers  # no slot was restarted
    assert_grader_still_works(pool)


def test_it_cannot_signal_the_worker_through_fd_ownership(pool):
    workers = pool.worker_pids()
    verdict = run_attack(
        pool,
        """
        import fcntl, os, signal, socket, struct
        def tie_weights(model):
            worker = os.getppid()
            r, w = os.pipe()
            a, b = socket.socketpair()
            found = []
            for name, call in (
                ("setown", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, worker)),
                ("setown_ex", lambda: fcntl.fcntl(
                    r, 15, struct.pack("ii", 1, worker))),  # F_OWNER_PID
                ("setsig", lambda: fcntl.fcntl(r, 10, signal.SIGSTOP)),
                ("fiosetown", lambda: fcntl.ioctl(
                    a.fileno(), 0x8901, struct.pack("i", worker))),
                ("siocspgrp", lambda: fcntl.ioctl(
                    a.fileno(), 0x8902, struct.pack("i", worker))),
            ):
                try:
                    call()
                    found.append(f"{name}=done")
                except OSError as exc:
                    found.append(f"{name}={type(exc).__name__}")
            for fd in (r, a.fileno()):  # SIGIO (or SIGSTOP) to the owner
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL)
                            | os.O_ASYNC)
            os.write(w, b"x")
            b.send(b"x")
            raise RuntimeError(" ".join(found))
        """,
    )
    text = messages(verdict)
    assert verdict.status == "error"
    for name in ("setown", "setown_ex", "setsig", "fiosetown", "siocspgrp"):
        assert f"{name}=PermissionError" in text, text
    assert pool.worker_pids() == workers  # no slot was restarted
    assert_grader_still_works(pool)
    assert pool.worker_pids() == workers


@pytest.mark.parametrize("kind", ["pool", "cold"])
def test_closing_its_descriptors_and_sleeping_ends_at_the_time_limit(
    kind, pool, cold_runner
):
    runner = pool if kind == "pool" else cold_runner
    workers = pool.worker_pids()
    started = time.monotonic()
    verdict = run_attack(
        runner,
        """
        import os, time
        def tie_weights(model):
            for fd in (0, 1, 2, 3):
                os.close(fd)
            time.sleep(3600)
        """,
        timeout=2,
    )
    assert verdict.status == "error"
    assert_stopped_waiting(messages(verdict))
    assert time.monotonic() - started < (20 if kind == "pool" else 60)
    assert pool.worker_pids() == workers  # no slot was restarted
    assert_grader_still_works(runner, grades=2 if kind == "pool" else 1)
    assert pool.worker_pids() == workers
