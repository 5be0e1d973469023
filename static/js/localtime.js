// Times are stored and rendered in UTC; this shows each `time[data-local]`
// in the viewer's own time zone.
//
// Forms (teaching/templatetags/zoned_time.py renders their fields): each
// datetime-local input with a UTC value in `data-utc` is moved into the
// browser's zone, the form's `tz` input marked `data-browser-zone` gets that
// zone's name, and so does each `[data-zone-name]` label, so what is shown
// and typed is read back in the same zone. A form re-rendered after an error
// shows what was typed, in the zone it was posted in: its inputs carry no
// `data-utc` and its `tz` no mark, and are left alone. Without JavaScript,
// or a zone name, everything stays UTC.
(function () {
  "use strict";
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
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
  // The server reads the values in the zone named by `tz`: without a name
  // to send, leave them in UTC.
  if (!zone) return;
  const pad = (n) => String(n).padStart(2, "0");
  for (const input of document.querySelectorAll("input[type=datetime-local][data-utc]")) {
    const moment = new Date(input.dataset.utc);
    if (!input.dataset.utc || Number.isNaN(moment.getTime())) continue;
    input.value =
      String(moment.getFullYear()).padStart(4, "0") + "-" + pad(moment.getMonth() + 1) + "-" + pad(moment.getDate()) +
      "T" + pad(moment.getHours()) + ":" + pad(moment.getMinutes());
  }
  for (const input of document.querySelectorAll("input[name=tz][data-browser-zone]")) {
    input.value = zone;
  }
  for (const label of document.querySelectorAll("[data-zone-name]")) label.textContent = zone;
})();
