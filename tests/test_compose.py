"""docker-compose.yml validates and describes the four services (not started here)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.conftest import PROJECT_ROOT


def compose_config() -> dict:
    if shutil.which("docker-compose"):
        command = ["docker-compose", "config"]
    else:
        command = ["docker", "compose", "config"]
    result = subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        env={"SECRET_KEY": "compose-check", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


@pytest.fixture(scope="module")
def config() -> dict:
    return compose_config()


def test_it_describes_web_worker_beat_redis_and_postgres(config):
    assert set(config["services"]) == {"web", "worker", "beat", "redis", "postgres"}


def test_every_service_has_a_healthcheck(config):
    for name, service in config["services"].items():
        assert service.get("healthcheck", {}).get("test"), name


def test_web_runs_gunicorn_and_the_worker_runs_celery(config):
    def words(command) -> str:
        return " ".join(command.split() if isinstance(command, str) else command)

    assert "gunicorn config.wsgi" in words(config["services"]["web"]["command"])
    assert words(config["services"]["worker"]["command"]).startswith(
        "celery -A config worker"
    )


def test_the_worker_can_be_scaled(config):
    worker = config["services"]["worker"]
    assert "container_name" not in worker and "ports" not in worker


def test_app_services_wait_for_healthy_dependencies(config):
    for name in ("web", "worker", "beat"):
        depends = config["services"][name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
