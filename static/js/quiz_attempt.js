// A quiz attempt in progress (quiz/templates/quiz/quiz_attempt.html).
//
// Without JavaScript the page is a plain form: "Save answers", "Submit
// attempt" and, with immediate feedback, a "Check" button per question.
// Here, on top of it:
// - each answer is saved as it changes (800 ms after the last keystroke)
//   with PATCH /api/v1/attempts/<id>/, and "Saved hh:mm:ss" or the
//   server's reason for refusing an answer is said in #save-status and next
//   to the question. With immediate feedback nothing is saved on its own:
//   a save is final there, so only the question's Check button saves.
// - a countdown to the server's deadline, computed against the server's
//   clock (data-server-time), so a wrong clock in the browser does not
//   matter. A screen reader hears it at 5 minutes and at 1 minute left, not
//   every second. At 0 the form is submitted with "Submit attempt"; the
//   server decides what counts, by its own clock.
(function () {
  "use strict";
  const form = document.getElementById("attempt-form");
  if (!form) return;
  const DEBOUNCE_MS = 800;
  const ANNOUNCE_AT = [300, 60]; // seconds left
  const el = (id) => document.getElementById(id);
  const status = el("save-status");
  const timeLeft = el("time-left");
  const announcer = el("timer-announce");
  const submitButton = el("submit-attempt");
  const deadline = Date.parse(form.dataset.deadline);
  const offset = Date.parse(form.dataset.serverTime) - Date.now(); // server - client
  const autosave = form.dataset.autosave === "true";

  const lastSaved = new Map(); // question number -> the saved text
  for (const fieldset of form.querySelectorAll("fieldset[data-question]")) {
    lastSaved.set(fieldset.dataset.question, fieldset.dataset.saved || "");
  }
  const dirty = new Set();
  let debounce = null;
  let inFlight = null;
  let closed = false;
  let submitting = false;

  function csrfToken() {
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function valueOf(number) {
    const fields = form.querySelectorAll('[name="q-' + number + '"]');
    for (const field of fields) {
      if (field.type !== "radio") return field.value;
      if (field.checked) return field.value;
    }
    return "";
  }

  function say(region, text) {
    if (!region) return;
    region.textContent = "";
    // A fresh text node after a tick, so the same words are said again.
    window.setTimeout(() => {
      region.textContent = text;
    }, 50);
  }

  function markSaved(number, value) {
    lastSaved.set(number, value);
    const fieldset = form.querySelector('fieldset[data-question="' + number + '"]');
    if (fieldset) fieldset.dataset.saved = value; // tests wait on it
    showError(number, "");
  }

  function showError(number, message) {
    const target = el("err-" + number);
    if (target) target.textContent = message || "";
    const input = el("a-" + number);
    if (input) {
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
    const kept = el("kept-" + number);
    if (kept && !message) kept.remove();
  }

  function clock(iso) {
    const moment = iso ? new Date(iso) : new Date(Date.now() + offset);
    return moment.toLocaleTimeString([], {
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hour12: false,
    });
  }

  function savedAt(body, numbers) {
    const questions = (body && body.questions) || [];
    const times = questions
      .filter((q) => numbers.includes(String(q.number)) && q.saved_at)
      .map((q) => q.saved_at)
      .sort();
    return times.length ? times[times.length - 1] : null;
  }

  function closedNow(message) {
    closed = true;
    window.clearTimeout(debounce);
    status.textContent = "";
    const text = document.createElement("span");
    text.textContent = message + " ";
    const link = document.createElement("a");
    link.href = window.location.pathname;
    link.textContent = "See your submitted attempt";
    status.append(text, link);
  }

  async function save(options) {
    if (closed) return;
    if (inFlight) {
      // One request at a time: the later values go once this one is back.
      await inFlight.catch(() => {});
      if (closed) return;
    }
    const answers = {};
    const numbers = [];
    for (const number of dirty) {
      const value = valueOf(number);
      if (value !== lastSaved.get(number)) {
        answers[number] = value;
        numbers.push(number);
      }
    }
    dirty.clear();
    if (!numbers.length) return;
    const request = fetch(form.dataset.api, {
      method: "PATCH",
      credentials: "same-origin",
      keepalive: Boolean(options && options.keepalive),
      headers: {
        Accept: "application/json",
        "Content-Type": "application/json",
        "X-CSRFToken": csrfToken(),
      },
      body: JSON.stringify({ answers: answers }),
    });
    inFlight = request;
    let response;
    let body = {};
    try {
      response = await request;
      body = await response.json().catch(() => ({}));
    } catch (error) {
      for (const number of numbers) dirty.add(number);
      say(status, "Not saved: the server could not be reached. Trying again…");
      debounce = window.setTimeout(save, 5000);
      return;
    } finally {
      if (inFlight === request) inFlight = null;
    }
    if (response.ok) {
      for (const number of numbers) markSaved(number, answers[number]);
      say(status, "Saved " + clock(savedAt(body, numbers)));
      return;
    }
    if (response.status === 400 && body.answers) {
      const good = (body.saved || []).map(String);
      for (const number of numbers) {
        if (good.includes(number)) {
          markSaved(number, answers[number]);
        } else {
          showError(number, body.answers[number] || "Not saved.");
        }
      }
      const reasons = numbers
        .filter((n) => !good.includes(n))
        .map((n) => body.answers[n])
        .filter(Boolean);
      say(status, "Not saved: " + reasons.join(" "));
      return;
    }
    if (response.status === 409) {
      closedNow(body.detail || "This attempt is closed.");
      return;
    }
    if (response.status === 401 || response.status === 403) {
      for (const number of numbers) dirty.add(number);
      say(status, "Not saved: you are signed out. Sign in again in another tab, then change an answer.");
      return;
    }
    for (const number of numbers) dirty.add(number);
    say(status, "Not saved (" + response.status + "). Press “Save answers” to try again.");
  }

  function changed(event) {
    const match = /^q-(\d+)$/.exec(event.target.name || "");
    if (!match || !autosave || closed || submitting) return;
    dirty.add(match[1]);
    window.clearTimeout(debounce);
    debounce = window.setTimeout(save, event.type === "change" ? 0 : DEBOUNCE_MS);
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", () => {
    // The form carries every answer; the server saves what changed.
    submitting = true;
    window.clearTimeout(debounce);
  });
  if (!autosave) {
    // Enter in an answer checks that question, not the first one.
    form.addEventListener("keydown", (event) => {
      const match = /^q-(\d+)$/.exec(event.target.name || "");
      if (event.key !== "Enter" || !match) return;
      const button = form.querySelector('button[name=check][value="' + match[1] + '"]');
      if (!button) return;
      event.preventDefault();
      if (form.requestSubmit) form.requestSubmit(button);
      else button.click();
    });
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && autosave && dirty.size) {
      window.clearTimeout(debounce);
      save({ keepalive: true });
    }
  });

  // The countdown ------------------------------------------------------------

  function duration(seconds) {
    // The same words as quiz.teaching.quizzes.views.duration_text.
    const total = Math.max(0, Math.floor(seconds));
    const days = Math.floor(total / 86400);
    const hours = Math.floor((total % 86400) / 3600);
    const minutes = Math.floor((total % 3600) / 60);
    const secs = total % 60;
    const pad = (n) => String(n).padStart(2, "0");
    if (days) return days + " d " + hours + " h";
    if (hours) return hours + " h " + pad(minutes) + " min";
    return minutes + " min " + pad(secs) + " s";
  }

  let previous = Infinity;
  let ticker = null;

  function tick() {
    const left = (deadline - (Date.now() + offset)) / 1000;
    if (timeLeft) timeLeft.textContent = duration(Math.ceil(Math.max(left, 0)));
    for (const mark of ANNOUNCE_AT) {
      if (previous > mark && left <= mark && left > 0) {
        say(announcer, mark >= 60 ? mark / 60 + " minute" + (mark === 60 ? "" : "s") + " left." : mark + " seconds left.");
      }
    }
    if (left <= 3 && autosave && dirty.size && !inFlight) {
      window.clearTimeout(debounce);
      save(); // the last changes, before the deadline
    }
    previous = left;
    if (left > 0 || submitting) return;
    window.clearInterval(ticker);
    submitting = true;
    say(announcer, "Time is up: submitting your answers.");
    if (form.requestSubmit) form.requestSubmit(submitButton);
    else submitButton.click();
  }

  if (!Number.isNaN(deadline)) {
    ticker = window.setInterval(tick, 1000);
    tick();
  }
})();
