"""One test per attack a learner's submission can try from inside the sandbox.

Each test checks that the attack's concrete effect is absent, that the
grade ends as `error` or `failed` with a message saying why, and that the
right answer still passes on the next grades. Learner code reports what it
saw by raising: the exception's text reaches the verdict's message.
"""

from __future__ import annotations

import os
import socket
import time

import pytest

from grader.sandbox.slots import uid_pids
from tests.sandbox.conftest import (
    CANARY,
    assert_grader_still_works,
    messages,
    run_attack,
)

pytestmark = pytest.mark.sandbox

PROJECT = "/work/main"


def slot_processes(pool) -> dict[int, set[int]]:
    return {slot.uid: set(uid_pids(slot.uid)) for slot in pool.slots.slots}


# -- time -----------------------------------------------------------------


def test_it_stops_an_infinite_loop_at_the_wall_clock_limit(pool):
    started = time.monotonic()
    verdict = run_attack(
        pool,
        """
        def tie_weights(model):
            while True:
                pass
        """,
        timeout=2,
    )
    assert verdict.status == "error"
    assert verdict.checks[0].name == "time limit"
    assert time.monotonic() - started < 8
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
    assert "took longer than 2 s" in messages(verdict)
    assert time.monotonic() - started < 8
    assert_grader_still_works(pool)


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
    from concurrent.futures import ThreadPoolExecutor

    code = """
    import os, time
    time.sleep(1.5)  # once per job, while the other job sleeps too
    def tie_weights(model):
        raise RuntimeError(f"uid={os.getuid()}")
    """
    started = time.monotonic()
    with ThreadPoolExecutor(2) as threads:
        verdicts = list(threads.map(lambda _: run_attack(pool, code), range(2)))
    elapsed = time.monotonic() - started
    uids = {messages(v).split("uid=")[1].split()[0] for v in verdicts}
    assert len(uids) == 2  # one slot each, never the same uid at once
    assert elapsed < 2 * 1.5  # they overlapped instead of queueing
    assert_grader_still_works(pool)
