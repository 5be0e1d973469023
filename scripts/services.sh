#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis the tests use are up (start them if not).
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  echo "PostgreSQL is down on 127.0.0.1:5432; starting it"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
fi
if ! redis_up; then
  echo "Redis is down on 127.0.0.1:6379; starting it"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
for _ in $(seq 1 30); do
  if pg_up && redis_up; then
    echo "services: PostgreSQL and Redis are up"
    exit 0
  fi
  sleep 1
done
echo "services: PostgreSQL or Redis did not come up" >&2
exit 1
