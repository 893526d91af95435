// gitops portal: the Logs tab's tools beside the stream app.js runs. Search
// marks the text in every line (new lines too, as they follow), "Matching
// lines only" hides the others, "/" in the tab focuses the search, and
// Download saves the whole log of the chosen container (with timestamps
// when they are shown) as a file the server names.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  // mark shows line's text with each occurrence of q (lower case) marked,
  // and says whether there was one.
  function mark(line, q) {
    const text = line.textContent;
    if (!q) { line.classList.remove("match"); line.hidden = false; if (line.childElementCount) line.textContent = text; return false; }
    const low = text.toLowerCase();
    let at = low.indexOf(q);
    const parts = [];
    let from = 0;
    while (at >= 0) {
      parts.push(text.slice(from, at), Object.assign(document.createElement("mark"), {textContent: text.slice(at, at + q.length)}));
      from = at + q.length;
      at = low.indexOf(q, from);
    }
    if (!parts.length) { if (line.childElementCount) line.textContent = text; line.classList.remove("match"); return false; }
    parts.push(text.slice(from));
    line.replaceChildren(...parts);
    line.classList.add("match");
    return true;
  }

  function start() {
    const out = $("#log-lines"), search = $("#log-search");
    if (!out || !search) return; // no "logs, get": no tab
    const view = $("#view-logs"), only = $("#log-matching"), count = $("#log-search-count");
    const query = () => search.value.toLowerCase();
    const apply = (line, q) => { const hit = mark(line, q); line.hidden = !!q && only.checked && !hit; return hit; };
    function applyAll() {
      const q = query();
      let hits = 0;
      for (const line of out.querySelectorAll(".log-line")) if (apply(line, q)) hits++;
      count.textContent = q ? hits + " matching line" + (hits === 1 ? "" : "s") : "";
    }
    search.addEventListener("input", applyAll);
    only.addEventListener("change", applyAll);
    new MutationObserver((records) => {
      const q = query();
      if (!q) return;
      for (const r of records) for (const n of r.addedNodes) if (n.nodeType === Node.ELEMENT_NODE) apply(n, q);
      applyAll();
    }).observe(out, {childList: true});
    // "/" moves to the search when the key is released, so the key's
    // character never lands in it (however the keystroke was delivered).
    let slash = false;
    view.addEventListener("keydown", (e) => {
      if (e.key === "/" && !e.target.matches("input, select, textarea")) { e.preventDefault(); slash = true; }
      if (e.key === "Escape" && e.target === search) { search.value = ""; applyAll(); out.focus(); }
    });
    view.addEventListener("keyup", (e) => { if (e.key === "/" && slash) { slash = false; search.focus(); } });
    // The link's address is made when it is followed: the Pod and
    // container lists change without change events.
    $("#log-download").addEventListener("click", (e) => {
      const pod = $("#log-pod").value, container = $("#log-container").value;
      if (!pod || !container) { e.preventDefault(); return; }
      const q = new URLSearchParams({key: pod, container, previous: String($("#log-previous").checked),
        timestamps: String($("#log-timestamps").checked), download: "true"});
      e.currentTarget.href = "/api/v1/apps/" + encodeURIComponent($("#app").dataset.app) + "/logs?" + q;
    });
  }
  document.addEventListener("DOMContentLoaded", start);
})();
