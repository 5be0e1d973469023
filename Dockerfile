# One image for web and worker. torch is the CPU build pinned in requirements.txt.
# The editor bundle, chart.js and htmx come from npm in a build stage.
FROM node:20-slim AS assets
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build_assets.sh scripts/
COPY static/js/editor.js static/js/
RUN bash scripts/build_assets.sh

FROM python:3.11-slim-bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
COPY engine engine
RUN pip install --no-cache-dir -r requirements.txt ./engine
COPY . .
COPY --from=assets /app/static/vendor static/vendor
RUN python -m grading_engine.reference.tokenizer \
    && DEBUG=1 python manage.py collectstatic --no-input \
    && python -m grading_engine.learner_edition var/client --client client
EXPOSE 8000
# ASGI: a submission page's event stream waits on the event loop, not a thread.
CMD ["gunicorn", "--config", "deploy/gunicorn.conf.py", "config.asgi", "--bind", "0.0.0.0:8000", "--workers", "2"]
