// kstp explore: the little the pages do in the browser. Pure functions first (tested with node --test),
// then the wiring to the page. No network access, no third-party code.
"use strict";

/** Whether a row's text matches every word of a search query (case and accents ignored). */
function matches(text, query) {
  const fold = (s) => String(s).normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  const haystack = fold(text);
  return fold(query).split(/\s+/).filter(Boolean).every((word) => haystack.includes(word));
}

/** The text shown for a hovered state of a Hasse diagram: the state and its two fringes. */
function describeState(data) {
  const list = (s) => (s && s.trim() ? s.trim().split(/\s+/).join(", ") : "-");
  return `state {${list(data.state).replace(/^-$/, "")}}\ninner fringe: ${list(data.inner)}\nouter fringe: ${list(data.outer)}`;
}

/** The states joined to a hovered state by a drawn edge: up (it covers them from below: the edge leaves it)
 *  and down (the edge arrives at it). On the whole Hasse diagram these are K + {q}, q in its outer fringe,
 *  and K - {q}, q in its inner fringe; on the occupied states only, a covering edge may add several
 *  questions. Edges come as {from, to}, node ids, from the smaller state to the larger. */
function neighbours(id, edges) {
  const up = [];
  const down = [];
  for (const edge of edges) {
    if (edge.from === id) up.push(edge.to);
    if (edge.to === id) down.push(edge.from);
  }
  return { up, down };
}

if (typeof module !== "undefined") {
  module.exports = { matches, describeState, neighbours };
}

if (typeof document !== "undefined") {
  document.addEventListener("DOMContentLoaded", () => {
    for (const input of document.querySelectorAll("input[data-filter]")) {
      const rows = [...document.querySelectorAll(input.dataset.filter)];
      const count = document.getElementById("search-count");
      input.addEventListener("input", () => {
        let shown = 0;
        for (const row of rows) {
          const keep = matches(row.textContent, input.value);
          row.hidden = !keep;
          shown += keep;
        }
        if (count) count.textContent = input.value ? `${shown} of ${rows.length} concepts` : "";
      });
    }
    const info = document.getElementById("state-info");
    const hasse = document.getElementById("hasse");
    if (info && hasse) {
      const nodes = [...hasse.querySelectorAll("g.node")];
      const byId = new Map(nodes.map((n) => [n.dataset.id, n]));
      const toggle = document.getElementById("occupied-toggle");
      // the drawn edges: the whole diagram's, or the cover among occupied states when the toggle is on
      const edges = () => [...hasse.querySelectorAll(hasse.classList.contains("occupied-only")
        ? "path.edge.occupied-cover" : "path.edge:not(.occupied-cover)")]
        .map((e) => ({ from: e.dataset.from, to: e.dataset.to }));
      if (toggle) {
        toggle.addEventListener("change", () => hasse.classList.toggle("occupied-only", toggle.checked));
      }
      const show = (node) => {
        info.textContent = describeState(node.dataset);
        const near = neighbours(node.dataset.id, edges());
        node.classList.add("hovered");
        for (const id of near.up) byId.get(id).classList.add("neighbour-outer");
        for (const id of near.down) byId.get(id).classList.add("neighbour-inner");
      };
      const hide = () => {
        for (const n of nodes) n.classList.remove("hovered", "neighbour-outer", "neighbour-inner");
      };
      // a click (or Enter, Space on a focused state) pins the state: its learners listed under the diagram
      const pick = (node) => {
        for (const n of nodes) n.classList.remove("picked");
        node.classList.add("picked");
        info.textContent = `${describeState(node.dataset)}\nlearners: ${node.dataset.learners || 0}` +
          (node.dataset.models ? `; also ${node.dataset.models}` : "");
        for (const list of document.querySelectorAll("#state-learners [data-node]")) {
          list.hidden = list.dataset.node !== node.dataset.id;
        }
      };
      for (const node of nodes) {
        node.addEventListener("mouseenter", () => show(node));
        node.addEventListener("mouseleave", hide);
        node.addEventListener("focus", () => show(node));
        node.addEventListener("blur", hide);
        node.addEventListener("click", () => pick(node));
        node.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            pick(node);
          }
        });
      }
    }
  });
}
