// Times are stored and rendered in UTC; this shows each `time[data-local]`
// in the viewer's own time zone. In forms it moves each datetime-local input
// that carries its UTC value (`data-utc`) into that zone and fills the
// form's `tz` field with it, so what is shown and typed is read back in the
// same zone (without JavaScript both stay UTC).
(function () {
  "use strict";
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const format = new Intl.DateTimeFormat(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  });
  for (const node of document.querySelectorAll("time[data-local]")) {
    const moment = new Date(node.getAttribute("datetime"));
    if (!Number.isNaN(moment.getTime())) {
      node.title = node.textContent; // the UTC form stays on hover
      node.textContent = format.format(moment);
    }
  }
  const pad = (n) => String(n).padStart(2, "0");
  for (const input of document.querySelectorAll("input[type=datetime-local][data-utc]")) {
    const moment = new Date(input.dataset.utc);
    if (Number.isNaN(moment.getTime())) continue;
    input.value =
      moment.getFullYear() + "-" + pad(moment.getMonth() + 1) + "-" + pad(moment.getDate()) +
      "T" + pad(moment.getHours()) + ":" + pad(moment.getMinutes());
  }
  for (const input of document.querySelectorAll("input[name=tz]")) input.value = zone;
  for (const label of document.querySelectorAll("[data-zone-name]")) label.textContent = zone;
})();
