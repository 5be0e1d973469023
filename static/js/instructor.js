// Charts for the analytics page. The tables beside them hold the same numbers
// and are what screen readers and no-JS browsers get; without Chart.js
// (static/vendor/chart.umd.js) this script does nothing.
(function () {
  "use strict";
  var source = document.getElementById("chart-data");
  if (!source || typeof window.Chart === "undefined") return;
  var data = JSON.parse(source.textContent);
  window.courseTheme.chartDefaults(window.Chart);

  function bar(canvasId, labels, datasets, yTitle, max) {
    var canvas = document.getElementById(canvasId);
    if (!canvas || labels.length === 0) return;
    new window.Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { y: { beginAtZero: true, max: max, title: { display: true, text: yTitle } } },
      },
    });
  }

  bar(
    "exercise-chart",
    data.exercises.labels,
    [{ label: "Pass rate (% of learners who tried)", data: data.exercises.pass_rate, backgroundColor: "#0b5cad" }],
    "%",
    100
  );
  bar(
    "diagnosis-chart",
    data.diagnoses.labels,
    [{ label: "Failed submissions with this diagnosis", data: data.diagnoses.counts, backgroundColor: "#b42318" }],
    "submissions"
  );
  bar(
    "question-chart",
    data.questions.labels,
    [{ label: "% of answers right", data: data.questions.percent_right, backgroundColor: "#1a7f37" }],
    "%",
    100
  );
})();
