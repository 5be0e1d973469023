#!/usr/bin/env bash
# Set up the database and content, then serve on HOST:PORT with a Celery worker.
set -euo pipefail
HOST=${1:-127.0.0.1}
PORT=${2:-8000}
BIN=.venv/bin
export DEBUG=${DEBUG:-1}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
# Local development grades in an unhardened child when the sandbox's
# protections are missing; production never sets this.
export GRADER_ALLOW_UNSAFE_SANDBOX=${GRADER_ALLOW_UNSAFE_SANDBOX:-1}

redis_reachable() {
  $BIN/python -c "import redis,sys; redis.Redis.from_url(sys.argv[1], socket_timeout=1).ping()" \
    "$REDIS_URL" 2>/dev/null
}

if redis_reachable; then
  echo "run: Redis is reachable at $REDIS_URL; grading goes through a Celery worker"
elif command -v redis-server >/dev/null && [[ $REDIS_URL == redis://127.0.0.1:6379* ]]; then
  echo "run: Redis is not reachable at $REDIS_URL; starting a local redis-server"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir "${TMPDIR:-/tmp}" --logfile "${TMPDIR:-/tmp}/course-redis.log"
  sleep 1
fi
if ! redis_reachable; then
  echo "run: WARNING: no Redis at $REDIS_URL and none could be started;" \
       "grading runs in the web process (CELERY_TASK_ALWAYS_EAGER=1), no worker" >&2
  export CELERY_TASK_ALWAYS_EAGER=1
fi

$BIN/python manage.py migrate --no-input
$BIN/python manage.py load_content
$BIN/python manage.py create_demo_accounts

worker_pid=""
if [[ ${CELERY_TASK_ALWAYS_EAGER:-0} != 1 ]]; then
  # -B runs the sweeper schedule in this one worker (exactly one beat per site).
  # One grading process: GRADER_POOL_SIZE (default 2) slots forked from one warm
  # sandbox, one thread each (see config/settings.py).
  $BIN/celery -A config worker -B --loglevel=INFO &
  worker_pid=$!
  trap '[[ -n $worker_pid ]] && kill $worker_pid 2>/dev/null' EXIT INT TERM
fi
echo "run: serving http://$HOST:$PORT/ (Ctrl-C stops the server and the worker)"
# The production stack's server (ASGI: event streams wait on the event loop),
# one process; static files come from WhiteNoise (from the app dirs in DEBUG).
$BIN/python -m uvicorn config.asgi:application --host "$HOST" --port "$PORT" \
  --no-access-log
