// A quiz attempt: the attempt page in progress, its summary before submitting
// (quiz/templates/quiz/quiz_attempt.html, quiz_attempt_summary.html) and a
// result whose code is still being graded.
//
// Without JavaScript the pages are plain forms: "Save answers", "Review and
// submit" (the summary, whose "Submit attempt" submits), a "Flag for review"
// checkbox per question and, with immediate feedback, a "Check" button per
// question. Here, on top of them:
// - each answer is saved as it changes (800 ms after the last keystroke; a
//   code question's editor, static/js/editor.js, fires `input` on its
//   textarea) with PATCH /api/v1/attempts/<id>/, and a flag as soon as it is
//   ticked ({"flags": [numbers]}). "Saved hh:mm:ss", or why not, is said in
//   the sticky bar (#save-status, a live region) and beside the question
//   (#status-<n>); the question buttons of the bar follow what is saved.
//   An answer typed before this script ran is saved as soon as it runs.
//   With immediate feedback no answer is saved on its own: a save is final
//   there, so only the question's Check button saves (flags still save).
// - the bar's height is kept in --quiz-bar, which the page's
//   scroll-padding-top reads: a focused field or a #question-<n> jump lands
//   below the bar, never under it.
// - a countdown to the server's deadline, computed against the server's
//   clock (data-server-time), so a wrong clock in the browser does not
//   matter. A screen reader hears it at 5 minutes and at 1 minute left, not
//   every second. At 0 the attempt (or the summary's form) is submitted; the
//   server decides what counts, by its own clock.
// - a result with code still being graded asks GET /api/v1/attempts/<id>/
//   every few seconds (backing off, for 10 minutes at most) and reloads the
//   page once the verdict is in.
(function () {
  "use strict";
  const el = (id) => document.getElementById(id);

  function say(region, text) {
    if (!region) return;
    region.textContent = "";
    // A fresh text node after a tick, so the same words are said again.
    window.setTimeout(() => {
      region.textContent = text;
    }, 50);
  }

  // The sticky bar's height, for scroll-padding-top (static/css/learner.css).
  const bar = el("quiz-timer");
  if (bar) {
    const measure = () => {
      document.documentElement.style.setProperty("--quiz-bar", bar.offsetHeight + "px");
    };
    measure();
    if (window.ResizeObserver) new ResizeObserver(measure).observe(bar);
    else window.addEventListener("resize", measure);
  }

  // The countdown -------------------------------------------------------------

  function duration(seconds) {
    // The same words as teaching.quizzes.views.duration_text.
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

  // Runs `lastCall` 3 s before the deadline and `timeUp` at it.
  function countdown({ lastCall, timeUp }) {
    if (!bar) return null;
    const ANNOUNCE_AT = [300, 60]; // seconds left
    const deadline = Date.parse(bar.dataset.deadline);
    const offset = Date.parse(bar.dataset.serverTime) - Date.now(); // server - client
    const timeLeft = el("time-left");
    const announcer = el("timer-announce");
    let previous = Infinity;
    let ticker = null;
    let done = false;
    function tick() {
      const left = (deadline - (Date.now() + offset)) / 1000;
      if (timeLeft) timeLeft.textContent = duration(Math.ceil(Math.max(left, 0)));
      for (const mark of ANNOUNCE_AT) {
        if (previous > mark && left <= mark && left > 0) {
          say(announcer, mark / 60 + " minute" + (mark === 60 ? "" : "s") + " left.");
        }
      }
      if (left <= 3 && lastCall) lastCall();
      previous = left;
      if (left > 0 || done) return;
      done = true;
      window.clearInterval(ticker);
      say(announcer, "Time is up: submitting your answers.");
      timeUp();
    }
    if (Number.isNaN(deadline)) return null;
    ticker = window.setInterval(tick, 1000);
    tick();
    return { offset, stop: () => (done = true) };
  }

  // The attempt in progress ---------------------------------------------------

  function attemptPage(form) {
    const DEBOUNCE_MS = 800;
    const RETRY_MS = 5000;
    const status = el("save-status");
    const autosave = form.dataset.autosave === "true";

    const lastSaved = new Map(); // question number -> the saved text
    for (const fieldset of form.querySelectorAll("fieldset[data-question]")) {
      lastSaved.set(fieldset.dataset.question, fieldset.dataset.saved || "");
    }
    const dirty = new Set();
    let flagsDirty = false;
    const flagsTouched = new Set(); // questions whose flag changed since a save
    let debounce = null;
    let inFlight = null;
    let closed = false;
    let submitting = false;
    let unreachable = false; // the last save found no server
    let offset = 0;

    // A code question's editor, once editor.js has replaced its textarea.
    for (const textarea of form.querySelectorAll("textarea[data-code-editor]")) {
      const next = textarea.nextElementSibling;
      if (next && next.classList.contains("cm-editor")) {
        const help = textarea.parentElement.querySelector("[data-editor-help]");
        if (help) help.hidden = false;
      }
    }

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

    function flagged() {
      return Array.from(form.querySelectorAll("input[name=flag]:checked"), (box) =>
        Number(box.value),
      ).sort((a, b) => a - b);
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

    // Beside the question: what happened to its last change.
    function note(number, text, kind) {
      const target = el("status-" + number);
      if (!target) return;
      target.textContent = text;
      target.classList.toggle("is-bad", kind === "bad");
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
      const editor =
        input && input.nextElementSibling && input.nextElementSibling.classList.contains("cm-editor")
          ? input.nextElementSibling.querySelector(".cm-content")
          : null;
      for (const field of [input, editor]) {
        if (!field) continue;
        if (message) field.setAttribute("aria-invalid", "true");
        else field.removeAttribute("aria-invalid");
      }
      const kept = el("kept-" + number);
      if (kept && !message) kept.remove();
    }

    // The bar's question buttons: answered and flagged as the server has them.
    function showNav(number, answered, isFlagged) {
      const link = el("nav-" + number);
      if (!link) return;
      if (answered !== null) link.classList.toggle("is-answered", answered);
      link.classList.toggle("is-flagged", isFlagged);
      const words = link.querySelector(".nav-words");
      const mark = link.querySelector(".nav-flag");
      const isAnswered = link.classList.contains("is-answered");
      if (words) {
        words.textContent = (isAnswered ? ", answered" : ", not answered") + (isFlagged ? ", flagged" : "");
      }
      if (mark) mark.textContent = isFlagged ? "⚑" : "";
    }

    function showState(body) {
      for (const q of (body && body.questions) || []) {
        showNav(String(q.number), q.answer !== null && q.answer !== "", Boolean(q.flagged));
      }
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
      status.classList.add("is-bad");
    }

    function later(ms) {
      window.clearTimeout(debounce);
      debounce = window.setTimeout(save, ms);
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
        } else {
          note(number, ""); // changed back to what is saved
        }
      }
      dirty.clear();
      const flags = flagsDirty ? flagged() : null;
      const touched = Array.from(flagsTouched);
      flagsDirty = false;
      flagsTouched.clear();
      if (!numbers.length && flags === null) {
        if (unreachable) {
          // Nothing left to send: what the server has is what the page shows.
          unreachable = false;
          window.clearTimeout(debounce);
          status.classList.remove("is-bad");
          say(status, "All your answers are saved.");
        }
        return;
      }
      const payload = {};
      if (numbers.length) payload.answers = answers;
      if (flags !== null) payload.flags = flags;
      const retry = () => {
        for (const number of numbers) dirty.add(number);
        if (flags !== null) {
          flagsDirty = true;
          for (const number of touched) flagsTouched.add(number);
        }
      };
      // Sent again by itself after `ms`: the server away or busy, not a refusal.
      const tryAgain = (words, ms) => {
        retry();
        unreachable = true;
        say(status, words);
        status.classList.add("is-bad");
        for (const number of [...numbers, ...touched]) note(number, words, "bad");
        later(ms);
      };
      for (const number of [...numbers, ...touched]) note(number, "Saving…");
      const request = fetch(form.dataset.api, {
        method: "PATCH",
        credentials: "same-origin",
        keepalive: Boolean(options && options.keepalive),
        headers: {
          Accept: "application/json",
          "Content-Type": "application/json",
          "X-CSRFToken": csrfToken(),
        },
        body: JSON.stringify(payload),
      });
      inFlight = request;
      let response;
      let body = {};
      try {
        response = await request;
        body = await response.json().catch(() => ({}));
      } catch (error) {
        tryAgain("Not saved: the server could not be reached. Trying again every few seconds…", RETRY_MS);
        return;
      } finally {
        if (inFlight === request) inFlight = null;
      }
      unreachable = false;
      if (response.ok) {
        const when = clock(savedAt(body, numbers));
        for (const number of numbers) {
          markSaved(number, answers[number]);
          note(number, "Saved " + when);
        }
        for (const number of touched) {
          if (!numbers.includes(number)) note(number, flags.includes(Number(number)) ? "Flagged for review" : "Flag removed");
        }
        showState(body);
        status.classList.remove("is-bad");
        say(status, (numbers.length ? "Saved " + when : flags.length ? "Flags saved" : "Flag removed") + ".");
        return;
      }
      if (response.status === 400 && body.answers) {
        const good = (body.saved || []).map(String);
        for (const number of numbers) {
          if (good.includes(number)) {
            markSaved(number, answers[number]);
            note(number, "Saved");
          } else {
            showError(number, body.answers[number] || "Not saved.");
            note(number, "Not saved: see why below.", "bad");
          }
        }
        const reasons = numbers
          .filter((n) => !good.includes(n))
          .map((n) => body.answers[n])
          .filter(Boolean);
        status.classList.add("is-bad");
        say(status, "Not saved: " + reasons.join(" "));
        return;
      }
      if (response.status === 409) {
        closedNow(body.detail || "This attempt is closed.");
        return;
      }
      if ([502, 503, 504].includes(response.status)) {
        // The database restarting, or a web process: try again by itself,
        // when the server says (Retry-After), as when it cannot be reached.
        const after = Number(response.headers.get("Retry-After"));
        tryAgain(
          "Not saved yet: the server is busy. Trying again in a few seconds…",
          after > 0 ? Math.min(after, 30) * 1000 : RETRY_MS,
        );
        return;
      }
      retry();
      status.classList.add("is-bad");
      const words =
        response.status === 401 || response.status === 403
          ? "Not saved: you are signed out. Sign in again in another tab, then change an answer."
          : "Not saved (" + response.status + "). Press “Save answers” to try again.";
      say(status, words);
      for (const number of [...numbers, ...touched]) note(number, words, "bad");
    }

    function changed(event) {
      if (closed || submitting) return;
      const target = event.target;
      if (target.name === "flag") {
        if (event.type !== "change") return;
        flagsDirty = true;
        flagsTouched.add(target.value);
        showNav(target.value, null, target.checked); // at once; the save confirms
        later(0);
        return;
      }
      const match = /^q-(\d+)$/.exec(target.name || "");
      if (!match || !autosave) return;
      dirty.add(match[1]);
      later(event.type === "change" ? 0 : DEBOUNCE_MS);
    }

    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", () => {
      // The form carries every answer and flag; the server saves what changed.
      submitting = true;
      window.clearTimeout(debounce);
    });
    form.addEventListener("keydown", (event) => {
      const match = /^q-(\d+)$/.exec(event.target.name || "");
      if (event.key !== "Enter" || !match || event.target.tagName === "TEXTAREA") return;
      if (autosave) {
        // Enter in an answer saves it now, without leaving the page.
        event.preventDefault();
        dirty.add(match[1]);
        later(0);
        return;
      }
      // Immediate feedback: Enter in an answer checks that question.
      const button = form.querySelector('button[name=check][value="' + match[1] + '"]');
      if (!button) return;
      event.preventDefault();
      if (form.requestSubmit) form.requestSubmit(button);
      else button.click();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden" && !submitting && (dirty.size || flagsDirty)) {
        window.clearTimeout(debounce);
        save({ keepalive: true });
      }
    });

    // Answers typed before this script ran (a slow connection, a busy
    // machine): a field that differs from the page as served was changed by
    // the learner, so it is saved now rather than at its next keystroke.
    function changedEarly(number) {
      for (const field of form.querySelectorAll('[name="q-' + number + '"]')) {
        const moved = field.type === "radio" ? field.checked !== field.defaultChecked : field.value !== field.defaultValue;
        if (moved) return true;
      }
      return false;
    }
    if (autosave) {
      for (const number of lastSaved.keys()) if (changedEarly(number)) dirty.add(number);
      if (dirty.size) later(0);
    }

    const timer = countdown({
      lastCall: () => {
        if ((dirty.size || flagsDirty) && !inFlight && !closed) {
          window.clearTimeout(debounce);
          save(); // the last changes, before the deadline
        }
      },
      timeUp: () => {
        if (submitting) return;
        submitting = true;
        const action = document.createElement("input");
        action.type = "hidden";
        action.name = "action";
        action.value = "submit";
        form.append(action);
        form.submit();
      },
    });
    if (timer) offset = timer.offset;
  }

  // The summary before submitting ---------------------------------------------

  function reviewPage(form) {
    let submitting = false;
    form.addEventListener("submit", () => {
      submitting = true;
    });
    countdown({
      timeUp: () => {
        if (submitting) return;
        submitting = true;
        const button = el("submit-attempt");
        if (form.requestSubmit && button) form.requestSubmit(button);
        else if (button) button.click();
      },
    });
  }

  // A result waiting for a code verdict ---------------------------------------

  function pollForVerdict(result) {
    const FIRST_MS = 2000;
    const MAX_MS = 30000;
    const GIVE_UP_MS = 10 * 60 * 1000;
    const status = el("grading-status");
    const started = Date.now();
    let delay = FIRST_MS;
    if (status) status.textContent = "This page updates itself when the verdict arrives.";

    async function poll() {
      try {
        const response = await fetch(result.dataset.poll, {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        });
        if (response.ok) {
          const body = await response.json();
          if (!body.grading) {
            if (status) status.textContent = "The verdict is in: updating the page…";
            window.location.reload();
            return;
          }
        }
      } catch (error) {
        // Offline for a moment: ask again later.
      }
      delay = Math.min(delay * 1.5, MAX_MS);
      if (Date.now() - started + delay > GIVE_UP_MS) {
        if (status) status.textContent = "Still being graded: reload the page later to see the verdict.";
        return;
      }
      window.setTimeout(poll, delay);
    }
    window.setTimeout(poll, delay);
  }

  const form = el("attempt-form");
  if (form) attemptPage(form);
  const review = el("review-form");
  if (review) reviewPage(review);
  const result = el("result");
  if (result && result.dataset.poll) pollForVerdict(result);
})();
