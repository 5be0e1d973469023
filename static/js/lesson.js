/* Progressive enhancement for self-check and rating forms.
 *
 * Without JavaScript each form is a plain POST that redirects back to the
 * page. Here the same request is sent with fetch and `Accept:
 * application/json`, and the answer lands in the form's aria-live region, so
 * the learner keeps their place and screen readers hear the result.
 *
 * Focus stays where it was: while a request runs the buttons are marked
 * aria-disabled (a disabled button would drop focus to <body>) and a second
 * submit is ignored. The result is also said once in a page-wide status
 * region. On the review page a rated card leaves the list, the count
 * follows the server's, and focus moves to the next card.
 */
(function () {
  "use strict";

  function send(form, submitter) {
    var data = new FormData(form);
    if (submitter && submitter.name) data.set(submitter.name, submitter.value);
    return fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    }).then(function (response) {
      if (response.status === 401) {
        window.location.href = "/accounts/login/?next=" +
          encodeURIComponent(window.location.pathname);
        return null;
      }
      return response.json().then(function (body) {
        return { ok: response.ok, body: body };
      });
    });
  }

  function announcer() {
    var region = document.getElementById("announce");
    if (!region) {
      region = document.createElement("div");
      region.id = "announce";
      region.className = "visually-hidden";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    return region;
  }

  function announce(text) {
    var region = announcer();
    region.textContent = "";
    // A fresh text node after a tick, so the same words are said again.
    window.setTimeout(function () {
      region.textContent = text;
    }, 50);
  }

  function showError(region, message) {
    region.textContent = "";
    var p = document.createElement("p");
    p.className = "errorlist";
    p.setAttribute("role", "alert");
    p.textContent = message;
    region.appendChild(p);
  }

  function setBusy(form, busy) {
    form.querySelectorAll("button").forEach(function (button) {
      if (busy) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
    });
    form.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function updateDueCount(count) {
    var badge = document.getElementById("nav-due-count");
    if (badge && typeof count === "number") badge.textContent = String(count);
  }

  function onAnswer(form, result) {
    var region = form.parentElement.querySelector(".feedback");
    if (!result.ok) {
      showError(region, result.body.error);
      announce(result.body.error);
      return;
    }
    // Server-rendered and sanitised (explanations are Markdown run through nh3).
    region.innerHTML = result.body.html;
    region.dataset.correct = String(result.body.correct);
    updateDueCount(result.body.due_count);
    var verdict = region.querySelector(".verdict > p");
    if (verdict) announce(verdict.textContent.replace(/\s+/g, " ").trim());
  }

  function cardsLeft(count) {
    var summary = document.getElementById("due-summary");
    var text = document.getElementById("due-summary-count");
    if (text) text.textContent = count + " card" + (count === 1 ? "" : "s") + " due.";
    return summary;
  }

  // The review page: the rated card leaves; focus goes to the next one.
  function removeCard(card, body) {
    var list = card.parentElement;
    var next = card.nextElementSibling || card.previousElementSibling;
    card.remove();
    var left = list.querySelectorAll(".review-card").length;
    var summary = cardsLeft(body.due_count);
    if (!left) {
      list.remove();
      if (summary) summary.remove();
      var empty = document.getElementById("review-empty");
      if (empty) {
        var more = document.getElementById("review-more");
        if (more && body.due_count > 0) {
          more.textContent = "More cards fell due meanwhile: reload the page to see them.";
        }
        empty.hidden = false;
        empty.setAttribute("tabindex", "-1");
        empty.focus();
      }
      announce(body.message + " Nothing else is due on this page.");
      return;
    }
    var target = next && next.querySelector("summary, a, button");
    if (target) target.focus();
    else if (summary) summary.focus();
    announce(body.message + " " + body.due_count + " card" +
      (body.due_count === 1 ? "" : "s") + " due.");
  }

  function onRate(form, result) {
    var region = form.nextElementSibling;
    if (!result.ok) {
      showError(region, result.body.error);
      announce(result.body.error);
      return;
    }
    updateDueCount(result.body.due_count);
    var card = form.closest(".review-card");
    if (card) {
      removeCard(card, result.body);
      return;
    }
    region.textContent = result.body.message;
    form.classList.add("rated");
    announce(result.body.message);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var kind = form.dataset && form.dataset.enhance;
    if (kind !== "answer" && kind !== "rate") return;
    event.preventDefault();
    if (form.getAttribute("aria-busy") === "true") return; // one at a time
    setBusy(form, true);
    send(form, event.submitter)
      .then(function (result) {
        if (!result) return;
        (kind === "answer" ? onAnswer : onRate)(form, result);
      })
      .catch(function () {
        var region = kind === "answer"
          ? form.parentElement.querySelector(".feedback")
          : form.nextElementSibling;
        var message = "Could not reach the server. Check your connection and try again.";
        showError(region, message);
        announce(message);
      })
      .finally(function () {
        setBusy(form, false);
      });
  });
})();
