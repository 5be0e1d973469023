// Live grading status: poll the submission's API URL until it is terminal,
// updating the page in place (no reload). Once graded, the server-rendered
// results (expected vs got, the diagnosis and the lessons to review) are
// fetched as HTML and swapped in, so they read exactly as after a reload.
// Without JS, a <noscript> refresh does the same job more slowly.
(function () {
  "use strict";
  const root = document.getElementById("submission");
  if (!root || root.dataset.terminal === "true") return;
  const TERMINAL = new Set(["passed", "failed", "error"]);
  const el = (id) => document.getElementById(id);

  function renderStatus(data) {
    const status = el("status");
    status.textContent = data.status;
    status.className = "status-" + data.status;
    el("queue").textContent =
      data.queue_position ? "· position " + data.queue_position + " among your queued submissions" : "";
    el("score").textContent =
      data.score === null ? "" : "· score " + Number(data.score).toFixed(2);
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
    root.dataset.terminal = "true";
  }

  let delay = 300;
  async function poll() {
    try {
      const response = await fetch(root.dataset.url, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const data = await response.json();
        if (TERMINAL.has(data.status)) {
          await swapResults(data);
          renderStatus(data); // last: tests and screen readers see a complete page
          return;
        }
        renderStatus(data);
      }
    } catch (error) {
      // A network blip: keep polling, a little more slowly.
    }
    delay = Math.min(delay * 1.3, 2000);
    setTimeout(poll, delay);
  }
  setTimeout(poll, delay);
})();
