// The workbench's keyboard and hub search. Served as a file: the pages' CSP allows no
// inline script. Without JavaScript every action still works through plain forms.
(function () {
  "use strict";
  var started = Date.now();
  var page = document.body.getAttribute("data-page");

  function typing(ev) {
    var t = ev.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
  }

  function submitWith(form, name, value, key) {
    form.elements.namedItem("duration_ms").value = String(Date.now() - started);
    form.elements.namedItem("keybind").value = key || "";
    var button = document.createElement("input");
    button.type = "hidden";
    button.name = name;
    button.value = value;
    form.appendChild(button);
    form.submit();
  }

  function follow(id) {
    var link = document.getElementById(id);
    if (link) { window.location.href = link.href; }
  }

  function undo() {
    var form = document.getElementById("undo-form");
    if (form) { form.submit(); }
  }

  function itemKeys(ev) {
    var form = document.getElementById("decide");
    var key = ev.key;
    if (/^[1-9]$/.test(key) && form) {
      var pick = form.querySelector('button[data-key="' + key + '"]');
      if (pick) { ev.preventDefault(); submitWith(form, "pick", pick.value, key); }
    } else if (key === "a" && document.getElementById("approve")) {
      ev.preventDefault(); submitWith(form, "action", "approve", "a");
    } else if (key === "r" && document.getElementById("reject")) {
      ev.preventDefault(); submitWith(form, "action", "reject", "r");
    } else if (key === "s") {
      follow("skip");
    } else if (key === "/") {
      var search = document.getElementById("search");
      if (search) { ev.preventDefault(); search.focus(); }
    } else if (key === "j") {
      follow("next");
    } else if (key === "k") {
      follow("previous");
    } else if (key === "u") {
      undo();
    }
  }

  function queueKeys(ev) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("#queue tbody tr[data-href]"));
    if (!rows.length) { if (ev.key === "u") { undo(); } return; }
    var at = rows.findIndex(function (r) { return r.classList.contains("current"); });
    if (ev.key === "j" || ev.key === "k") {
      ev.preventDefault();
      var next = ev.key === "j" ? Math.min(at + 1, rows.length - 1) : Math.max(at - 1, 0);
      if (at >= 0) { rows[at].classList.remove("current"); }
      rows[next].classList.add("current");
      rows[next].scrollIntoView({block: "nearest"});
    } else if (ev.key === "Enter" && at >= 0) {
      window.location.href = rows[at].getAttribute("data-href");
    } else if (ev.key === "x" && at >= 0) {
      var box = rows[at].querySelector("input[type=checkbox]");
      if (box) { box.checked = !box.checked; }
    } else if (ev.key === "u") {
      undo();
    }
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (typing(ev)) {
      if (ev.key === "Escape") { ev.target.blur(); }
      return;
    }
    if (page === "item") { itemKeys(ev); } else if (page === "queue") { queueKeys(ev); }
  });

  var form = document.getElementById("decide");
  if (form) {
    form.addEventListener("submit", function () {
      form.elements.namedItem("duration_ms").value = String(Date.now() - started);
    });
  }

  var search = document.getElementById("search");
  var results = document.getElementById("results");
  if (search && results) {
    var pending = null;
    search.addEventListener("input", function () {
      if (pending) { clearTimeout(pending); }
      pending = setTimeout(function () { find(search.value); }, 120);
    });
    search.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") {  // Enter ticks the first hit of what is typed, not yet ticked
        ev.preventDefault();
        if (pending) { clearTimeout(pending); pending = null; }
        // Typed faster than the search answers: search now, and tick when the hits are in.
        var shown = shownFor === search.value ? Promise.resolve() : find(search.value);
        shown.then(function () {
          var box = results.querySelector("input[type=checkbox]:not(:checked)");
          if (box) { box.checked = true; }
        });
      }
    });
  }

  var shownFor = null;  // the query the hits on the page answer

  function find(q) {
    if (!q.trim()) { results.textContent = ""; shownFor = q; return Promise.resolve(); }
    return fetch(search.getAttribute("data-endpoint") + "?q=" + encodeURIComponent(q), {credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(function (found) {
        if (search.value !== q) { return; }  // an answer to what was typed before
        shownFor = q;
        var ticked = {};
        results.querySelectorAll("input:checked").forEach(function (b) { ticked[b.value] = b.closest("li"); });
        results.textContent = "";
        Object.keys(ticked).forEach(function (id) { results.appendChild(ticked[id]); });
        found.forEach(function (hit) {
          if (ticked[hit.cre_id]) { return; }
          var li = document.createElement("li");
          var label = document.createElement("label");
          var box = document.createElement("input");
          box.type = "checkbox"; box.name = "cre_ids"; box.value = hit.cre_id;
          var id = document.createElement("span"); id.className = "id"; id.textContent = hit.cre_id;
          var name = document.createElement("b"); name.textContent = " " + hit.name;
          var path = document.createElement("span"); path.className = "small"; path.textContent = " " + hit.path;
          label.appendChild(box); label.appendChild(id); label.appendChild(name); label.appendChild(path);
          li.appendChild(label);
          results.appendChild(li);
        });
      });
  }
})();
