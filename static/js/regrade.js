// A regrade's progress bar: poll its API every second and move the bar;
// when it is done, reload once so the report of changed verdicts is complete.
(function () {
  "use strict";
  const root = document.getElementById("regrade");
  if (!root || root.dataset.status === "done") return;
  const el = (id) => document.getElementById(id);
  async function poll() {
    try {
      const response = await fetch(root.dataset.url, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const data = await response.json();
        el("regrade-progress").max = Math.max(data.total, 1);
        el("regrade-progress").value = data.done;
        for (const key of ["done", "total", "changed", "errors", "status"]) {
          el("regrade-" + key).textContent = data[key];
        }
        if (data.status === "done") {
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      // a blip: try again
    }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 1000);
})();
