"""Settings, read from the environment through config.env (see README)."""

import math
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from grading_engine.sandbox.job_clock import wall_limit

from config.database import database_config
from config.env import envbool, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", False)
SECRET_KEY = envstr("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off "
            "(export SECRET_KEY=..., or DEBUG=1 for local development)."
        )
    SECRET_KEY = "dev-only-insecure-key-never-use-in-production"  # noqa: S105

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "lti_tool",
    "quiz",
    "grader",
    "teaching",
    "lms",
]

MIDDLEWARE = [
    "config.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Outside every middleware that queries the database (config.database_errors).
    "config.database_errors.DatabaseUnavailableMiddleware",
    # Before anything reads a field into a query (quiz.core.nul_input).
    "quiz.core.nul_input.NulInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# SQLite is the embedded default; DATABASE_URL selects PostgreSQL (or another
# SQLite file). Every SQLite database gets WAL, IMMEDIATE writes and a wait,
# since the web server and the grading worker write it at once (config.database).
DATABASE_URL = envstr("DATABASE_URL")
# config.asgi turns the pool on for its process (config.database says why).
DATABASE_POOL = envint("DATABASE_POOL", 0, minimum=0)
DATABASES = {
    "default": database_config(DATABASE_URL, base_dir=BASE_DIR, pool=DATABASE_POOL)
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_VALIDATORS = "django.contrib.auth.password_validation."
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": _VALIDATORS + "UserAttributeSimilarityValidator"},
    {"NAME": _VALIDATORS + "MinimumLengthValidator"},
    {"NAME": _VALIDATORS + "CommonPasswordValidator"},
    {"NAME": _VALIDATORS + "NumericPasswordValidator"},
]
LOGIN_URL = "login"
# django-axes first: it refuses locked-out credentials before a password check.
AUTHENTICATION_BACKENDS = [
    "quiz.core.login_guard.AxesBackendForRequests",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed names and gzip copies after collectstatic (config/storage.py);
# WhiteNoise serves the .gz to clients that accept it.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "config.storage.CompressedManifestStorage"},
}

# Cookies are Secure unless explicitly served over plain http (local dev).
SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# HTTPS only when cookies are Secure (SECURE_COOKIES, on in production). TLS
# ends at a proxy, which must set X-Forwarded-Proto; /healthz stays plain http
# for the container health checks. The CSP is quiz.core.csp, sent by config.csp.
if SESSION_COOKIE_SECURE:
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz"]
    if envbool("SECURE_PROXY_HEADER", True):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "quiz.core.api.auth.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "quiz.core.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Transformer Q&A course API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's assets come from the installed sidecar package, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# API tokens (quiz.core.api.tokens, one per client): refused this long after
# they were issued.
API_TOKEN_TTL_HOURS = envint("API_TOKEN_TTL_HOURS", 720, minimum=1)

# Log-in brute-force protection (quiz.core.login_guard, django-axes): failures per
# username from any IP, and per IP over any usernames, within the cool-off.
LOGIN_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_IP_FAILURE_LIMIT = envint("LOGIN_IP_FAILURE_LIMIT", 50, minimum=1)
LOGIN_COOLOFF_MINUTES = envint("LOGIN_COOLOFF_MINUTES", 15, minimum=1)
AXES_HANDLER = "quiz.core.login_guard.TieredAxesHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = "quiz.core.login_guard.username_failure_limit"
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_COOLOFF_MINUTES)
AXES_RESET_ON_SUCCESS = True
# Attempts while locked out do not extend the lock, so Retry-After holds.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "quiz.core.login_guard.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # failures only; no row per successful log-in

# Celery: Redis broker, JSON only, late acks so a killed worker's task is redelivered.
REDIS_URL = envstr("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
# One queue name per deployment (tests give each worker its own).
CELERY_TASK_DEFAULT_QUEUE = envstr("CELERY_QUEUE", "grading")
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# One grading process per host: its threads share one warm sandbox pool (the
# slots fork from one zygote), one thread per slot. Thread pools do not
# enforce Celery's time limits; the sandbox stops every job at its budget.
CELERY_WORKER_POOL = "threads"
CELERY_TASK_SOFT_TIME_LIMIT = envint("CELERY_TASK_SOFT_TIME_LIMIT", 120, minimum=1)
CELERY_TASK_TIME_LIMIT = envint("CELERY_TASK_TIME_LIMIT", 150, minimum=1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Without a reachable Redis, `make run` grades in the web process (see README).
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
SWEEP_INTERVAL_SECONDS = envint("SWEEP_INTERVAL_SECONDS", 30, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-submissions": {
        "task": "grader.sweep",
        "schedule": float(SWEEP_INTERVAL_SECONDS),
        "options": {"queue": CELERY_TASK_DEFAULT_QUEUE},
    },
    # Quiz attempts whose deadline passed with no page open (teaching.tasks).
    "close-expired-quiz-attempts": {
        "task": "quiz.close_expired",
        "schedule": 30.0,
        "options": {"queue": CELERY_TASK_DEFAULT_QUEUE},
    },
    # Grades for an LMS whose messages were lost or whose retries ran out.
    "sweep-lms-scores": {
        "task": "lms.sweep",
        "schedule": 300.0,
        "options": {"queue": CELERY_TASK_DEFAULT_QUEUE},
    },
}

# LTI 1.3 (lms/, docs/lti.md). Calls to an LMS give up after this many seconds
# (then Celery retries with backoff, LMS_RETRY_MAX_SECONDS apart at most).
LMS_HTTP_TIMEOUT_SECONDS = envint("LMS_HTTP_TIMEOUT_SECONDS", 10, minimum=1)
LMS_RETRY_MAX_SECONDS = envint("LMS_RETRY_MAX_SECONDS", 3600, minimum=1)
# A launch signed with a key the cached JWKS lacks refetches it, at most this
# often per platform (a platform rotated its key; docs/lti.md).
LMS_JWKS_REFETCH_SECONDS = envint("LMS_JWKS_REFETCH_SECONDS", 30, minimum=1)

# Per-process counters are wrong behind several web workers: throttles and
# the queue position use Redis unless grading runs in-process.
if CELERY_TASK_ALWAYS_EAGER:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A few connections per process, however many threads ask at once.
            "OPTIONS": {
                "pool_class": "redis.BlockingConnectionPool",
                "max_connections": 4,
                "timeout": 5,
            },
        }
    }

# Grader. The sandbox refuses to grade without its protections unless this
# loudly named switch allows an unprotected child process (local dev only).
GRADER_ALLOW_UNSAFE_SANDBOX = envbool("GRADER_ALLOW_UNSAFE_SANDBOX", False)
# "pool": warm sandboxed workers (Celery workers); "cold": one sandbox per grade.
GRADER_RUNNER = envstr("GRADER_RUNNER", "pool")
if GRADER_RUNNER not in ("pool", "cold"):
    raise ImproperlyConfigured(f"GRADER_RUNNER={GRADER_RUNNER!r}: use pool or cold")
# Concurrent grades per worker process (grader.lanes): GRADER_POOL_SIZE at
# once, of which at most GRADER_HEAVY_SLOTS heavy; up to GRADER_BURST_SLOTS
# more while slots hold grades that run long (likely loops, demoted to the
# lowest CPU priority). Each is a sandbox slot and a worker thread.
GRADER_POOL_SIZE = envint("GRADER_POOL_SIZE", 2, minimum=1)
GRADER_HEAVY_SLOTS = envint(
    "GRADER_HEAVY_SLOTS", max(1, GRADER_POOL_SIZE // 2), minimum=1
)
GRADER_BURST_SLOTS = envint("GRADER_BURST_SLOTS", 2 * GRADER_POOL_SIZE, minimum=0)
# A worker serves its Prometheus metrics on this port when set (0: off).
GRADER_METRICS_PORT = envint("GRADER_METRICS_PORT", 0, minimum=0)
CELERY_WORKER_CONCURRENCY = GRADER_POOL_SIZE + GRADER_BURST_SLOTS
# A starting worker measures every exercise that has no budget yet, so the
# first learners after a deploy meet measured budgets. Off, each is measured
# by its first grade instead (the test suite's workers, which grade one or
# two exercises of the course they load).
GRADER_MEASURE_ON_START = envbool("GRADER_MEASURE_ON_START", True)
# How often a worker looks for grades held by a dead worker of its own host
# (killed, crashed) and puts them back in the queue: a sibling takes them
# over without waiting for the dead one's restart (0: only at the restart,
# or when the lease runs out).
GRADER_PEER_CHECK_SECONDS = envint("GRADER_PEER_CHECK_SECONDS", 2, minimum=0)
# The cap of every exercise's time budget, in CPU seconds (grader.budgets).
GRADER_TIMEOUT_SECONDS = envint("GRADER_TIMEOUT_SECONDS", 60, minimum=1)
# A running row whose worker has held it this long is graded again: longer
# than any grade may run (the wall-clock limit of the largest budget: its
# backstop, moved by the time a busy machine kept the job from a core,
# grading_engine.sandbox.job_clock), plus a minute, so a live grade of code
# that waits is never taken from its worker and graded twice.
GRADING_LEASE_SECONDS = envint(
    "GRADING_LEASE_SECONDS",
    math.ceil(wall_limit(GRADER_TIMEOUT_SECONDS)) + 60,
    minimum=1,
)
SWEEP_QUEUED_AFTER_SECONDS = envint("SWEEP_QUEUED_AFTER_SECONDS", 120, minimum=1)
SUBMISSION_MAX_BYTES = envint("SUBMISSION_MAX_BYTES", 64 * 1024, minimum=1)
# Enforced in grader.services.submission_create for the API and the form alike.
SUBMISSION_RATE = envstr("SUBMISSION_RATE", "30/min")
try:
    from quiz.core.rates import rate_parse

    rate_parse(SUBMISSION_RATE)
except ValueError as exc:
    raise ImproperlyConfigured(f"SUBMISSION_RATE: {exc}") from None
# A learner's queued + running submissions; one more is refused (429) until one
# is graded. High enough for a learner who resubmits while waiting, low enough
# that one learner cannot fill the queue.
SUBMISSION_MAX_OUTSTANDING = envint("SUBMISSION_MAX_OUTSTANDING", 10, minimum=1)
# Live submission event streams (grader.stream_caps): past a cap a stream is
# refused with Retry-After and the page polls. Per learner across processes;
# per web process (an ASGI process holds thousands; a WSGI one a thread each).
STREAM_MAX_PER_LEARNER = envint("STREAM_MAX_PER_LEARNER", 5, minimum=1)
STREAM_MAX_PER_PROCESS = envint("STREAM_MAX_PER_PROCESS", 5000, minimum=1)
STREAM_RETRY_AFTER = envint("STREAM_RETRY_AFTER", 10, minimum=1)
# A web process renews a lease in Redis every third of this (seconds); its
# learners' streams stop counting once it lapses, so a process killed outright
# (kill -9, out of memory) holds no learner's slots for longer than this.
STREAM_LEASE_SECONDS = envint("STREAM_LEASE_SECONDS", 30, minimum=2)
# Streams one ASGI web process sets up at once; more wait their turn on the
# event loop, and past 30 s are refused 503 (grader.stream_admission, around
# the ASGI application in config/asgi.py): a reconnect storm must not hold
# pages up.
STREAM_OPENING_MAX = envint("STREAM_OPENING_MAX", 16, minimum=1)
# An ASGI stream's lifetime before EventSource reconnects (seconds): a wait
# there costs nothing, a reconnect a request (a WSGI stream's is 30 s).
STREAM_SECONDS_ASGI = envint("STREAM_SECONDS_ASGI", 300, minimum=5)
# /metrics (config.metrics): with a token, only `Authorization: Bearer <token>`
# may read it; without one, only requests from this host (127.0.0.1, ::1).
METRICS_TOKEN = envstr("METRICS_TOKEN", "")
SUBMISSION_OUTPUT_MAX_CHARS = 64_000
# The exercise page shows the reference solution after a pass or after this
# many graded (passed or failed) attempts, so a stuck learner is not left alone.
SOLUTION_AFTER_ATTEMPTS = envint("SOLUTION_AFTER_ATTEMPTS", 5, minimum=1)
# Where `make client` builds the learner client's wheels and local-check
# bundles (python -m grading_engine.learner_edition), served at /client/ and
# by the exercises API.
CLIENT_DIST_DIR = Path(envstr("CLIENT_DIST_DIR", str(BASE_DIR / "var" / "client")))
# What the server tells a learner how to install the client (and a client
# whose grading engine differs): {install} is the `pip install` of the wheels
# this server serves, {url} the site's root, {version} the engine's version.
COURSE_CLIENT_INSTALL = envstr(
    "COURSE_CLIENT_INSTALL", "{install} (grading-engine {version}; see {url}client/)"
)
API_MAX_BODY_BYTES = 1024 * 1024

# Answers a lower layer asks of a higher one, by dotted path (quiz.core.providers;
# docs/architecture.md, "Calling up without importing up"). Each names what
# provides the protocol its lower module owns; unset or empty, that layer goes
# without, as it would with no layer above it (no viewer but the owner, no
# panels or notes, nothing shut, no exercises in progress, no exercise store).
SUBMISSION_VIEWER_SCOPES = ["teaching.selectors.learners_taught_by"]
EXERCISE_NOTE_SOURCES = [
    "teaching.assignments.learner_assignments.exercise_due_notes",
]
HOME_PANELS = [  # in this order on the home page
    "teaching.assignments.learner_assignments.assignments_panel",
    "teaching.quizzes.learner_quizzes.quizzes_panel",
]
PROGRESS_PANELS = [  # My grades
    "teaching.assignments.learner_assignments.grades_panel",
]
EXAM_LOCK_PROVIDERS = ["teaching.quizzes.exam_mode.exam_lock_for"]
EXERCISE_PROGRESS = "grader.learner_progress.EXERCISE_PROGRESS"
EXERCISE_STORE = "grader.exercise_content.EXERCISE_STORE"
GPT2_WEIGHTS_PATH = envstr("GPT2_WEIGHTS_PATH") or None
TIKTOKEN_CACHE_DIR = envstr("TIKTOKEN_CACHE_DIR") or None

CONTENT_DIR = Path(envstr("CONTENT_DIR", str(BASE_DIR / "content")))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
