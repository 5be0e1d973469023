// Live progress of an exercise version's background verification on the
// admin change page. The server renders the same text (grader.admin
// version_status_html) into the page, so without JavaScript a reload shows it.
(function () {
  "use strict";
  function poll(box) {
    fetch(box.dataset.url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        // A busy server's refusal (a 502 at a restart, a 503, a 429) is
        // passing: ask again, as after a network error, rather than freeze
        // the page. Any other refusal (logged out, deleted) ends the polling.
        if (response.status >= 500 || response.status === 429) {
          throw new Error("HTTP " + response.status);
        }
        return response.ok ? response.json() : null;
      })
      .then(function (state) {
        if (!state) { return; }
        box.innerHTML = state.html;
        if (state.draft && !state.draft.terminal) {
          window.setTimeout(function () { poll(box); }, 1000);
        }
      })
      .catch(function () { window.setTimeout(function () { poll(box); }, 3000); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".exercise-versions[data-url]").forEach(function (box) {
      var draft = box.querySelector(".version-draft");
      if (draft && (draft.dataset.status === "queued" || draft.dataset.status === "running")) {
        window.setTimeout(function () { poll(box); }, 1000);
      }
    });
  });
})();
