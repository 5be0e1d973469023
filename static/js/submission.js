// Live grading status. The server pushes the submission's state as
// server-sent events (one stream per page, ended by the server at the
// verdict); where EventSource is missing the page polls the API every half
// second instead, and where its stream keeps failing it polls, with a
// growing wait, until the server answers again. The elapsed time ticks
// locally against the server's clock. Once graded, the server-rendered
// results (expected vs got, the diagnosis and the lessons to review) are
// fetched as HTML and swapped in, so they read exactly as after a reload.
// Without JS, a <noscript> refresh and the plain Cancel form do the same job.
(function () {
  "use strict";
  const root = document.getElementById("submission");
  if (!root || root.dataset.terminal === "true") return;
  const TERMINAL = new Set(["passed", "failed", "error", "cancelled"]);
  const POLL_MS = 500;
  const el = (id) => document.getElementById(id);
  const state = {
    status: root.dataset.status,
    created: Date.parse(root.dataset.created),
    started: root.dataset.started ? Date.parse(root.dataset.started) : null,
    budget: Number(root.dataset.budget),
    // One grading slot per learner: "your earlier submission" or "a free grader".
    waitingFor: el("timing") ? el("timing").dataset.waitingFor : "a free grader",
    offset: Date.parse(root.dataset.serverTime) - Date.now(), // server - client
    done: false,
  };

  function seconds(ms) {
    return (Math.max(ms, 0) / 1000).toFixed(1) + " s";
  }

  function tick() {
    const elapsed = el("elapsed");
    if (state.done || !elapsed) return;
    const now = Date.now() + state.offset;
    elapsed.textContent =
      state.status === "running" && state.started
        ? "grading for " + seconds(now - state.started)
        : "waiting for " + state.waitingFor + " (" + seconds(now - state.created) + ")";
    if (el("budget")) el("budget").textContent = state.budget + " s of CPU time";
  }

  function renderStatus(data) {
    const status = el("status");
    status.textContent = data.status;
    status.className = "status-" + data.status;
    el("queue").textContent = data.queue_position
      ? "· position " + data.queue_position + " among your queued submissions"
      : "";
    el("score").textContent =
      data.score === null || data.score === undefined
        ? ""
        : "· score " + Number(data.score).toFixed(2);
  }

  // Fallback when the HTML fetch fails: the same facts from the JSON.
  function renderChecks(data) {
    const list = el("checks");
    list.replaceChildren();
    for (const check of data.checks) {
      const item = document.createElement("li");
      item.className = check.passed ? "pass" : "fail";
      const mark = document.createElement("strong");
      mark.textContent = check.passed ? "PASS" : "FAIL";
      item.append(mark, " " + check.name + (check.hidden ? " (hidden case)" : ""));
      if (!check.passed) {
        const pre = document.createElement("pre");
        pre.textContent = check.message;
        item.append(pre);
        if (check.diagnosis) {
          const tag = document.createElement("span");
          tag.className = "diagnosis-tag";
          tag.textContent = check.diagnosis;
          item.append(tag);
        }
      }
      list.append(item);
    }
    const output = el("output");
    output.replaceChildren();
    if (data.stdout) {
      const title = document.createElement("h2");
      title.textContent = "Your code printed";
      const pre = document.createElement("pre");
      pre.textContent = data.stdout;
      output.append(title, pre);
    }
  }

  async function swapResults(data) {
    try {
      const response = await fetch(window.location.href, {
        headers: { Accept: "text/html" },
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(String(response.status));
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const id of ["results", "output"]) {
        const fresh = page.getElementById(id);
        if (fresh) el(id).replaceWith(document.adoptNode(fresh));
      }
    } catch (error) {
      renderChecks(data);
    }
  }

  async function finish(data) {
    state.done = true;
    const form = el("cancel-form");
    const hadFocus = form && form.contains(document.activeElement);
    if (form) form.remove();
    if (el("timing")) el("timing").textContent = "";
    await swapResults(data);
    renderStatus(data); // last: tests and screen readers see a complete page
    root.dataset.terminal = "true";
    root.dataset.verdictShownAt = String(Date.now());
    if (hadFocus) el("status-line").focus({ preventScroll: true });
  }

  function handle(data) {
    if (state.done) return;
    if (data.server_time) state.offset = Date.parse(data.server_time) - Date.now();
    if (data.started_at) state.started = Date.parse(data.started_at);
    if (data.time_budget_seconds) state.budget = data.time_budget_seconds;
    if (data.waiting_for) state.waitingFor = data.waiting_for;
    state.status = data.status;
    if (TERMINAL.has(data.status)) {
      finish(data);
      return;
    }
    renderStatus(data);
    tick();
  }

  // Reconnects are the page's own, not EventSource's: a web process that
  // stops cuts all its streams at once, and a thousand pages coming back in
  // the same half second stalled the process that took them (its pages took
  // 25 s; stream_bench.py's web restart). Each failure (the stream cut, a
  // refusal, a poll that got no answer) doubles the wait, from RETRY_MS up to
  // RETRY_MAX_MS, and each wait is drawn between its half and its whole.
  const RETRY_MS = 500;
  const RETRY_MAX_MS = 8000;
  let failures = 0; // since the last status event

  function backoff() {
    const wait = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** failures);
    return wait / 2 + (Math.random() * wait) / 2;
  }

  // One poll of the submission; true when the server answered it.
  async function pollOnce() {
    try {
      const response = await fetch(root.dataset.url, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) return false;
      handle(await response.json());
      return true;
    } catch (error) {
      return false; // a network blip, or the server away
    }
  }

  // Without EventSource: a poll every POLL_MS until the verdict.
  async function poll() {
    if (state.done) return;
    await pollOnce();
    if (!state.done) setTimeout(poll, POLL_MS);
  }

  // After a few failed streams: a poll (the verdict may have come meanwhile);
  // once the server answers, the stream again.
  async function recover() {
    if (state.done) return;
    if (await pollOnce()) {
      if (!state.done) listen();
      return;
    }
    failures += 1;
    if (!state.done) setTimeout(recover, backoff());
  }

  function retryLater() {
    if (state.done) return;
    failures += 1;
    setTimeout(failures > 2 ? recover : listen, backoff());
  }

  function listen() {
    if (!window.EventSource) {
      poll();
      return;
    }
    const stream = new EventSource(root.dataset.events);
    stream.addEventListener("status", (event) => {
      failures = 0;
      const data = JSON.parse(event.data);
      handle(data);
      if (TERMINAL.has(data.status)) stream.close();
    });
    stream.addEventListener("refused", () => {
      // The server's stream slots are taken: try again later, polling first.
      stream.close();
      failures = Math.max(failures, 2);
      retryLater();
    });
    stream.addEventListener("error", () => {
      // The server ends each stream after a while, or its process stopped.
      stream.close();
      retryLater();
    });
  }

  function csrfToken(form) {
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  const cancelForm = el("cancel-form");
  if (cancelForm) {
    cancelForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = el("cancel");
      const message = el("cancel-message");
      button.setAttribute("aria-busy", "true");
      message.textContent = "Cancelling…";
      try {
        const response = await fetch(root.dataset.cancel, {
          method: "POST",
          headers: { Accept: "application/json", "X-CSRFToken": csrfToken(cancelForm) },
          credentials: "same-origin",
        });
        const body = await response.json().catch(() => ({}));
        if (response.ok) {
          message.textContent = ""; // the status line and the note say it
          handle(body);
        } else {
          message.textContent = body.detail || "Could not cancel (" + response.status + ").";
        }
      } catch (error) {
        message.textContent = "Could not reach the server; try again.";
      } finally {
        button.removeAttribute("aria-busy");
      }
    });
  }

  setInterval(tick, 100);
  tick();
  listen();
})();
