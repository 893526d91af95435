// gitops portal: the resource list's filters on the app page, by name,
// kind, sync status and health, as Argo CD's app page filters its tree.
// A node shows when it matches every filter set, or when one of its
// descendants does (for context); the filters are applied again after
// each pushed page has patched the tree. The filters are the page URL's
// query parameters name, kind, sync and health (a filtered link opens
// filtered), and the graph view (graph.js) filters its nodes with them:
// after each change a "portal:filter" DOM event tells it.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  function facts(li) {
    const status = (cls) => { const b = li.querySelector(":scope > ." + cls + " .badge"); return b ? b.dataset.status : ""; };
    const kind = li.querySelector(":scope > button.open-node .kind");
    const key = li.dataset.key || "";
    return {kind: kind ? kind.textContent : "", name: key.slice(key.lastIndexOf("/") + 1), sync: status("node-sync"), health: status("node-health")};
  }

  const FIELDS = ["name", "kind", "sync", "health"];

  // values are the filters as set, the name lower case.
  function values() {
    return {name: $("#tree-filter-name").value.trim().toLowerCase(), kind: $("#tree-filter-kind").value,
      sync: $("#tree-filter-sync").value, health: $("#tree-filter-health").value};
  }

  // matches tells whether node n ({name, kind, sync, health}) matches
  // every filter of f set.
  function matches(f, n) {
    return (!f.name || String(n.name || "").toLowerCase().includes(f.name)) && (!f.kind || n.kind === f.kind) &&
      (!f.sync || n.sync === f.sync) && (!f.health || n.health === f.health);
  }

  // fromURL sets the filters from the page URL's query (a kind not yet
  // among the options is added, the tree may not have drawn it yet).
  function fromURL() {
    const q = new URLSearchParams(location.search);
    for (const k of FIELDS) {
      const v = q.get(k);
      if (!v) continue;
      const e = $("#tree-filter-" + k);
      if (e.tagName === "SELECT" && !Array.from(e.options).some((o) => o.value === v)) {
        e.append(Object.assign(document.createElement("option"), {value: v, textContent: v}));
      }
      e.value = v;
    }
  }

  // toURL writes the filters to the page URL's query, in place.
  function toURL() {
    const q = new URLSearchParams(location.search);
    for (const k of FIELDS) {
      const v = $("#tree-filter-" + k).value.trim();
      if (v) q.set(k, v); else q.delete(k);
    }
    const s = q.toString();
    const next = location.pathname + (s ? "?" + s : "") + location.hash;
    if (next !== location.pathname + location.search + location.hash) history.replaceState(history.state, "", next);
  }

  function apply() {
    const tree = $("#tree");
    if (!tree) return;
    const f = values();
    const kinds = new Set();
    const visit = (li) => {
      const n = facts(li);
      kinds.add(n.kind);
      const own = matches(f, n);
      let below = false;
      for (const c of li.querySelectorAll(":scope > ul > li.node")) below = visit(c) || below;
      li.hidden = !(own || below);
      return own || below;
    };
    let shown = 0;
    for (const li of tree.querySelectorAll(":scope > li.node")) if (visit(li)) shown++;
    const sel = $("#tree-filter-kind");
    const kindsNow = Array.from(kinds).filter(Boolean);
    if (sel.value && !kindsNow.includes(sel.value)) kindsNow.push(sel.value); // a filter set stays set
    const want = ["", ...kindsNow.sort()];
    if (Array.from(sel.options).map((o) => o.value).join("|") !== want.join("|")) {
      const cur = sel.value;
      sel.replaceChildren(...want.map((k) => Object.assign(document.createElement("option"), {value: k, textContent: k || "all"})));
      sel.value = want.includes(cur) ? cur : "";
    }
    $("#tree-filter-count").textContent = (f.name || f.kind || f.sync || f.health) ? shown + " of " + tree.querySelectorAll(":scope > li.node").length + " resources match" : "";
  }

  window.portalTreeFilter = {values, matches};

  document.addEventListener("DOMContentLoaded", () => {
    const bar = $("#tree-filters");
    if (!bar) return;
    const changed = () => {
      apply();
      toURL();
      document.dispatchEvent(new CustomEvent("portal:filter", {detail: values()}));
    };
    bar.addEventListener("input", changed);
    bar.addEventListener("change", changed);
    // app.js tells of a pushed page before it patches the tree.
    document.addEventListener("portal:page", () => setTimeout(apply, 0));
    fromURL();
    apply();
  });
})();
