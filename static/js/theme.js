/* Theme: light, dark or the system's, remembered in localStorage.
 * Loaded in <head> without defer, so data-theme is on <html> before the first
 * paint (no flash of the wrong theme); a static file, so the CSP allows it.
 * site.css reads data-theme through `color-scheme` and `light-dark()`. */
(function () {
  "use strict";
  var KEY = "course-theme";
  var root = document.documentElement;

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return value === "light" || value === "dark" ? value : "system";
    } catch (e) {
      return "system"; // storage refused (privacy mode): follow the system
    }
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") {
      root.setAttribute("data-theme", choice);
    } else {
      root.removeAttribute("data-theme");
    }
  }

  apply(stored());

  window.courseTheme = {
    // A site.css colour variable as plain rgb(): the variables hold
    // light-dark(...), which a canvas cannot parse, so a probe element
    // resolves them in the page's current theme.
    colour: function (name) {
      var probe = document.createElement("span");
      probe.style.color = "var(" + name + ")";
      document.body.appendChild(probe);
      var value = getComputedStyle(probe).color;
      probe.remove();
      return value;
    },
    // Chart.js text and grid lines in the theme (the page's charts).
    chartDefaults: function (Chart) {
      Chart.defaults.color = this.colour("--muted");
      Chart.defaults.borderColor = this.colour("--line");
    },
  };

  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("theme-choice");
    if (!select) return;
    select.value = stored();
    select.closest(".theme-switch").hidden = false; // useless without JS
    select.addEventListener("change", function () {
      try {
        if (select.value === "system") window.localStorage.removeItem(KEY);
        else window.localStorage.setItem(KEY, select.value);
      } catch (e) {
        /* not remembered, but still applied to this page */
      }
      apply(select.value);
    });
  });
})();
