// Live Markdown preview for admin textareas marked data-markdown-preview.
// The server renders and sanitises (quiz.content.markdown.render_markdown), so the
// preview shows exactly what learners will see and never runs author HTML.
// Without JavaScript the admin still shows the "as saved" preview field.
(function () {
  "use strict";

  var DELAY_MS = 300;
  var timers = new WeakMap();
  var latest = new WeakMap();

  function csrfToken(textarea) {
    var form = textarea.form || document;
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  var boxes = new WeakMap();

  // The admin's aligned forms indent lists by the label width; undo that
  // inside previews so a list looks as it will on the lesson page.
  var style = document.createElement("style");
  style.textContent =
    ".live-markdown-preview ul, .live-markdown-preview ol" +
    " { margin: 0.5em 0 0.5em 1.5em !important; padding: 0 !important; }" +
    ".live-markdown-preview ul li { list-style: disc outside !important; }" +
    ".live-markdown-preview ol li { list-style: decimal outside !important; }";
  document.head.appendChild(style);

  function previewFor(textarea) {
    var box = boxes.get(textarea);
    if (box && box.isConnected) {
      return box;
    }
    box = document.createElement("div");
    box.className = "live-markdown-preview markdown-preview";
    box.setAttribute("aria-live", "polite");
    box.setAttribute("aria-label", "Live preview");
    box.style.border = "1px dashed #999";
    box.style.padding = "0.5em 1em";
    box.style.margin = "0.5em 0";
    box.style.maxWidth = "60em";
    box.style.overflow = "auto";
    // Below the field, aligned with it: the admin lays label and textarea
    // out side by side in a flex row, which would squeeze a sibling.
    var row = textarea.closest(".flex-container") || textarea;
    if (row !== textarea) {
      box.style.marginLeft =
        textarea.getBoundingClientRect().left - row.getBoundingClientRect().left + "px";
    }
    row.insertAdjacentElement("afterend", box);
    boxes.set(textarea, box);
    return box;
  }

  function render(textarea) {
    var box = previewFor(textarea);
    var body = new URLSearchParams();
    body.set("text", textarea.value);
    var request = {};
    latest.set(textarea, request);
    fetch(textarea.dataset.markdownPreview, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "X-CSRFToken": csrfToken(textarea),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: body.toString(),
    })
      .then(function (response) {
        return response.json().then(function (data) {
          return { ok: response.ok, data: data };
        });
      })
      .then(function (result) {
        if (latest.get(textarea) !== request) {
          return; // a newer keystroke's preview is on its way
        }
        if (result.ok) {
          box.innerHTML = result.data.html; // sanitised by the server
        } else {
          box.textContent = "Preview unavailable: " + (result.data.error || "error");
        }
      })
      .catch(function () {
        box.textContent = "Preview unavailable (are you still signed in?)";
      });
  }

  function schedule(textarea) {
    clearTimeout(timers.get(textarea));
    timers.set(
      textarea,
      setTimeout(function () {
        render(textarea);
      }, DELAY_MS)
    );
  }

  // Delegated, so textareas of inline rows added later get a preview too.
  document.addEventListener("input", function (event) {
    var target = event.target;
    if (target.matches && target.matches("[data-markdown-preview]")) {
      schedule(target);
    }
  });

  // First focus shows the current text rendered, before any typing.
  document.addEventListener("focusin", function (event) {
    var target = event.target;
    if (
      target.matches &&
      target.matches("[data-markdown-preview]") &&
      !latest.has(target)
    ) {
      render(target);
    }
  });
})();
