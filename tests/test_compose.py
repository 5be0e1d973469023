"""docker-compose.yml validates and describes its services (not started here)."""

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


def words(command) -> str:
    return " ".join(command.split() if isinstance(command, str) else command)


def test_it_describes_its_services(config):
    assert set(config["services"]) == {
        "migrate", "web", "proxy", "worker", "beat", "redis", "postgres"
    }  # fmt: skip


def test_every_long_running_service_has_a_healthcheck(config):
    for name, service in config["services"].items():
        if name != "migrate":  # runs once and exits
            assert service.get("healthcheck", {}).get("test"), name


def test_web_runs_asgi_and_the_worker_runs_celery(config):
    web = words(config["services"]["web"]["command"])
    # The config file the tests start their web servers with (uvicorn
    # workers, metrics shared across them): the same one is deployed.
    assert "gunicorn --config deploy/gunicorn.conf.py config.asgi" in web
    assert words(config["services"]["worker"]["command"]).startswith(
        "celery -A config worker"
    )
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text()
    assert '"--config", "deploy/gunicorn.conf.py", "config.asgi"' in dockerfile
    gunicorn_conf = (PROJECT_ROOT / "deploy/gunicorn.conf.py").read_text()
    assert 'worker_class = "config.web_worker.StreamingUvicornWorker"' in gunicorn_conf


def test_web_and_worker_can_be_scaled_behind_the_proxy(config):
    for name in ("web", "worker"):
        service = config["services"][name]
        assert "container_name" not in service and "ports" not in service, name
    proxy = config["services"]["proxy"]
    assert proxy["image"].startswith("nginx") and proxy["ports"]
    # Migrations run once, not in each of N web containers at once.
    assert "migrate" not in words(config["services"]["web"]["command"])
    migrate = config["services"]["web"]["depends_on"]["migrate"]
    assert migrate["condition"] == "service_completed_successfully"


def test_the_proxy_does_not_buffer_event_streams():
    conf = (PROJECT_ROOT / "deploy" / "nginx.conf").read_text()
    events = conf.split("location ~ ^/api/v1/submissions/[^/]+/events/$", 1)[1]
    events = events.split("}", 1)[0]
    assert "proxy_buffering off;" in events and "proxy_pass $web;" in events
    assert "location = /metrics { return 404; }" in conf


def test_the_proxy_passes_the_host_with_its_port():
    """Django checks a form's Origin against the Host it is given: `$host`
    drops the port, so every sign-in through the proxy on a port other
    than 80 was refused (403, CSRF), as the deadline drill found."""
    conf = (PROJECT_ROOT / "deploy" / "nginx.conf").read_text()
    assert conf.count("proxy_set_header Host $http_host;") == 2
    assert "proxy_set_header Host $host;" not in conf


def test_app_services_wait_for_healthy_dependencies(config):
    for name in ("migrate", "web", "worker", "beat"):
        depends = config["services"][name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
