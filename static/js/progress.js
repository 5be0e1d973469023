/* Draw the activity chart from the same numbers as the table (which stays
 * the accessible source of truth). Needs static/vendor/chart.umd.js. */
(function () {
  "use strict";
  var canvas = document.getElementById("activity-chart");
  var source = document.getElementById("activity-data");
  if (!canvas || !source || typeof window.Chart === "undefined") return;
  var data = JSON.parse(source.textContent);
  window.courseTheme.chartDefaults(window.Chart);
  // Colour-blind-safe palette (Okabe-Ito), dark enough on white.
  var colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7"];
  new window.Chart(canvas, {
    type: "bar",
    data: {
      labels: data.labels.map(function (day) { return day.slice(5); }),
      datasets: data.series.map(function (series, i) {
        return {
          label: series.label,
          data: series.data,
          backgroundColor: colours[i % colours.length],
        };
      }),
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: {
        x: { stacked: true },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
      },
    },
  });
  canvas.dataset.drawn = "true";
})();
