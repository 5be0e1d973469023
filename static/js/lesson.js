/* Progressive enhancement for self-check and rating forms.
 *
 * Without JavaScript each form is a plain POST that redirects back to the
 * page. Here the same request is sent with fetch and `Accept:
 * application/json`, and the answer lands in the form's aria-live region, so
 * the learner keeps their place and screen readers hear the result.
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
      button.disabled = busy;
    });
    form.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function updateDueCount(count) {
    var badge = document.getElementById("nav-due-count");
    if (badge && typeof count === "number") badge.textContent = String(count);
  }

  function onAnswer(form, result) {
    var region = form.parentElement.querySelector(".feedback");
    if (!result.ok) return showError(region, result.body.error);
    // Server-rendered and sanitised (explanations are Markdown run through nh3).
    region.innerHTML = result.body.html;
    region.dataset.correct = String(result.body.correct);
    updateDueCount(result.body.due_count);
  }

  function onRate(form, result) {
    var region = form.nextElementSibling;
    if (!result.ok) return showError(region, result.body.error);
    region.textContent = result.body.message;
    updateDueCount(result.body.due_count);
    form.classList.add("rated");
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var kind = form.dataset && form.dataset.enhance;
    if (kind !== "answer" && kind !== "rate") return;
    event.preventDefault();
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
        showError(region, "Could not reach the server. Check your connection and try again.");
      })
      .finally(function () {
        setBusy(form, false);
      });
  });
})();
