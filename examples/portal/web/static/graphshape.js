// gitops portal: what the graph view draws of an app's tree (graph.js):
// the resource filters of the app page (treefilter.js: a node stays when
// it matches every filter set, or when one of its descendants does), then
// Argo CD's group nodes: more than GROUP_OVER children of one kind under
// one parent become one node "N Pods", unless that group was expanded.
"use strict";

(() => {
  const GROUP_OVER = 2;
  // The worst status first: a group shows the worst of its members.
  const HEALTH = ["Degraded", "Missing", "Progressing", "Suspended", "Unknown", "Healthy"];
  const SYNC = ["OutOfSync", "Unknown", "Synced"];

  const worst = (order, vals) => order.find((s) => vals.includes(s)) || vals.find(Boolean) || "";

  // plural names n objects of kind as a person would: 3 Pods, 4 Ingresses,
  // 2 NetworkPolicies, 5 Endpoints.
  function plural(kind) {
    if (/ss$/.test(kind)) return kind + "es";
    if (/s$/.test(kind)) return kind;
    if (/[^aeiou]y$/.test(kind)) return kind.slice(0, -1) + "ies";
    return kind + "s";
  }

  // filtered is the forest roots kept by the filter f (a node kept for a
  // descendant keeps only the children kept).
  function filtered(roots, f, matches) {
    const keep = (n) => {
      const kids = (n.children || []).map(keep).filter(Boolean);
      if (!matches(f, n) && !kids.length) return null;
      return Object.assign({}, n, {children: kids});
    };
    return (roots || []).map(keep).filter(Boolean);
  }

  // grouped replaces, under each parent, the children of a kind that has
  // more than GROUP_OVER of them by one group node (its children: the
  // members' children), unless expanded holds the group's key.
  function grouped(nodes, parentKey, expanded) {
    const byKind = new Map();
    for (const n of nodes) {
      if (!byKind.has(n.kind)) byKind.set(n.kind, []);
      byKind.get(n.kind).push(n);
    }
    const out = [];
    for (const n of nodes) {
      const same = byKind.get(n.kind);
      const key = "group:" + parentKey + ":" + n.kind;
      if (same.length <= GROUP_OVER || expanded.has(key)) {
        out.push(Object.assign({}, n, {children: grouped(n.children || [], n.key, expanded)}));
        continue;
      }
      if (same[0] !== n) continue; // the group is placed where its first member was
      const kids = same.flatMap((m) => m.children || []);
      out.push({group: n.kind, count: same.length, key, kind: n.kind, name: same.length + " " + plural(n.kind),
        health: worst(HEALTH, same.map((m) => m.health || "")), sync: worst(SYNC, same.map((m) => m.sync || "")),
        members: same.map((m) => m.name), firstKey: n.key, children: grouped(kids, key, expanded)});
    }
    return out;
  }

  window.portalGraphShape = {filtered, grouped, plural};
})();
