// The quiz builder's question picker. The slot text (the textarea, one slot
// per line: "points x draw: kind:name, ...") stays the one thing the form
// sends; this script shows it as a list of slots in words, with points and
// draw to edit and a Remove button each, and adds slots from a search of the
// question bank (GET /api/v1/quiz-bank/). Without JavaScript the text form
// works alone, and the bank has a page of its own.
(function () {
  "use strict";
  var builder = document.getElementById("slot-builder");
  var text = document.getElementById("q-slots");
  if (!builder || !text || !window.fetch) return;
  var list = document.getElementById("slot-list");
  var empty = document.getElementById("slot-empty");
  var status = document.getElementById("slot-status");
  var words = document.getElementById("slots-words");
  var results = document.getElementById("pick-results");
  var count = document.getElementById("pick-count");
  var lessonPool = document.getElementById("pick-lesson-pool");
  var LINE = /^\s*(\d+(?:\.\d+)?)\s*(?:x\s*(\d+))?\s*:(.*)$/;
  // What each slot word names ("template:x" -> its title): the server's for
  // the slots the form opened with, the picker's for those added since.
  var source = document.getElementById("slot-titles");
  var titles = source ? JSON.parse(source.textContent) : {};

  function named(pool) {
    return pool
      .split(",")
      .map(function (word) {
        word = word.trim();
        return titles[word] ? "“" + titles[word] + "” (" + word + ")" : word;
      })
      .join(", ");
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function round(n) {
    return Math.round(n * 10000) / 10000;
  }

  // "2 x2: lesson:x" -> "2 points shared by 2 questions (1 point each)".
  function inWords(points, draw) {
    if (draw <= 1) return plural(points, "point") + " for one question";
    return (
      plural(points, "point") + " shared by " + draw + " questions (" +
      plural(round(points / draw), "point") + " each)"
    );
  }

  function parse() {
    return text.value
      .split("\n")
      .filter(function (line) { return line.trim(); })
      .map(function (line) {
        var match = LINE.exec(line);
        if (!match) return { raw: line, bad: true };
        return {
          points: Number(match[1]),
          draw: Number(match[2] || 1),
          pool: match[3].trim(),
        };
      });
  }

  // The slot text from the list; `quiet` keeps the list (and the focus in
  // it) as it is, for an edit of one slot's numbers.
  function write(slots, quiet) {
    text.value = slots
      .map(function (s) { return s.bad ? s.raw : s.points + " x" + s.draw + ": " + s.pool; })
      .join("\n");
    if (quiet) renderWords(slots);
    else render();
  }

  function renderWords(slots) {
    words.textContent = "";
    slots.forEach(function (slot, i) {
      var line = document.createElement("li");
      line.textContent = slot.bad
        ? "Line " + (i + 1) + " is not a slot: " + slot.raw
        : "Line " + (i + 1) + ": " + inWords(slot.points, slot.draw) + ".";
      words.appendChild(line);
    });
  }

  function say(message) {
    status.textContent = message;
  }

  function field(labelText, name, value, min, step, onChange) {
    var label = document.createElement("label");
    label.textContent = labelText + " ";
    var input = document.createElement("input");
    input.setAttribute("aria-label", name);
    input.type = "number";
    input.min = min;
    input.step = step;
    input.value = value;
    input.className = "slot-number";
    input.addEventListener("change", function () { onChange(Number(input.value)); });
    label.appendChild(input);
    return label;
  }

  function render() {
    var slots = parse();
    list.textContent = "";
    renderWords(slots);
    empty.hidden = slots.length > 0;
    slots.forEach(function (slot, i) {
      var item = document.createElement("li");
      item.className = "slot-item";
      if (slot.bad) {
        item.textContent = "Line " + (i + 1) + " is not a slot: " + slot.raw;
        list.appendChild(item);
        return;
      }
      var head = document.createElement("p");
      var strong = document.createElement("strong");
      strong.textContent = "Slot " + (i + 1) + ": " + inWords(slot.points, slot.draw);
      var pool = document.createElement("span");
      pool.textContent = named(slot.pool);
      head.appendChild(strong);
      head.appendChild(document.createTextNode(", drawn from "));
      head.appendChild(pool);
      item.appendChild(head);
      var controls = document.createElement("p");
      controls.className = "inline-form";
      function edited() {
        strong.textContent = "Slot " + (i + 1) + ": " + inWords(slot.points, slot.draw);
        write(slots, true);
        say(strong.textContent + ".");
      }
      controls.appendChild(field("Points", "Points of slot " + (i + 1), slot.points, "0.01", "any", function (v) {
        if (v > 0) { slot.points = v; edited(); }
      }));
      controls.appendChild(field("Questions drawn", "Questions drawn in slot " + (i + 1), slot.draw, "1", "1", function (v) {
        if (v >= 1) { slot.draw = Math.round(v); edited(); }
      }));
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove slot " + (i + 1));
      remove.addEventListener("click", function () {
        slots.splice(i, 1);
        write(slots);
        say("Slot " + (i + 1) + " removed.");
        var next = list.querySelector("button") || document.getElementById("pick-q");
        next.focus();
      });
      controls.appendChild(remove);
      item.appendChild(controls);
      list.appendChild(item);
    });
  }

  function add(points, word, title) {
    titles[word] = title;
    var slots = parse();
    slots.push({ points: points, draw: 1, pool: word });
    write(slots);
    say("Added slot " + slots.length + ": " + title + " (" + plural(points, "point") + ").");
  }

  function resultItem(row) {
    var item = document.createElement("li");
    item.className = "bank-result";
    var head = document.createElement("p");
    var strong = document.createElement("strong");
    strong.textContent = row.title;
    var meta = document.createElement("span");
    meta.className = "muted";
    meta.textContent = " " + row.source + ", " + row.kind;
    head.appendChild(strong);
    head.appendChild(meta);
    item.appendChild(head);
    var prompt = document.createElement("p");
    prompt.className = "sample";
    prompt.textContent = (row.sample.varies ? "Sample (numbers differ per learner): " : "") + row.sample.prompt;
    item.appendChild(prompt);
    if (row.sample.options && row.sample.options.length) {
      var options = document.createElement("ul");
      row.sample.options.forEach(function (o) {
        var li = document.createElement("li");
        li.textContent = o;
        options.appendChild(li);
      });
      item.appendChild(options);
    }
    var key = document.createElement("p");
    key.className = "muted";
    key.textContent = "Key: " + row.sample.answer + (row.sample.tolerance ? ", " + row.sample.tolerance : "");
    item.appendChild(key);
    if (row.practice) {
      var mark = document.createElement("p");
      mark.className = "practice-mark";
      mark.textContent = "Practice, not secure in a quiz that holds its keys back: " + row.practice + ".";
      item.appendChild(mark);
    }
    var controls = document.createElement("p");
    controls.className = "inline-form";
    var label = document.createElement("label");
    label.textContent = "Points ";
    var points = document.createElement("input");
    points.type = "number";
    points.min = "0.01";
    points.step = "any";
    points.value = "1";
    points.className = "slot-number";
    points.setAttribute("aria-label", "Points for “" + row.title + "”");
    label.appendChild(points);
    controls.appendChild(label);
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = "Add";
    button.setAttribute("aria-label", "Add “" + row.title + "” as a slot");
    button.addEventListener("click", function () {
      var value = Number(points.value);
      add(value > 0 ? value : 1, row.slot_word, row.title);
    });
    controls.appendChild(button);
    item.appendChild(controls);
    return item;
  }

  function search() {
    var params = new URLSearchParams();
    [["q", "pick-q"], ["lesson", "pick-lesson"], ["kind", "pick-kind"], ["source", "pick-source"]].forEach(
      function (pair) {
        var value = document.getElementById(pair[1]).value.trim();
        if (value) params.set(pair[0], value);
      }
    );
    lessonPool.hidden = !params.get("lesson");
    count.textContent = "Searching…";
    fetch(builder.dataset.bank + "?" + params.toString(), {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (reply) {
        results.textContent = "";
        if (!reply.ok) {
          count.textContent = "The search failed: " + JSON.stringify(reply.body);
          return;
        }
        var rows = reply.body.results;
        count.textContent = rows.length
          ? plural(rows.length, "question") + (rows.length === reply.body.limit ? " (the first ones: narrow the search)" : "") + "."
          : "No question matches.";
        rows.forEach(function (row) { results.appendChild(resultItem(row)); });
      })
      .catch(function () {
        count.textContent = "The search failed: the server could not be reached.";
      });
  }

  document.getElementById("pick-go").addEventListener("click", search);
  document.getElementById("pick-q").addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault(); // not the quiz form's submit
      search();
    }
  });
  document.getElementById("pick-add-lesson").addEventListener("click", function () {
    var lesson = document.getElementById("pick-lesson");
    if (lesson.value) add(1, "lesson:" + lesson.value, lesson.options[lesson.selectedIndex].text);
  });
  text.addEventListener("input", render);
  builder.hidden = false;
  // The list shows the slot text now; an error in it keeps it open to fix.
  var slotText = document.getElementById("slot-text");
  if (!slotText.hasAttribute("data-keep-open")) slotText.open = false;
  render();
})();
