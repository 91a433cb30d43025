// The browser logic of kstp explore (kstp/explore/static/explore.js), under Node's test runner.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { matches, describeState, neighbours } = require("../../kstp/explore/static/explore.js");

test("matches: every word, any order, case and accents ignored", () => {
  assert.equal(matches("3.OA.D.8 Solve two-step word problems", "word 3.oa"), true);
  assert.equal(matches("Fractions équivalentes", "EQUIV"), true);
  assert.equal(matches("3.OA.D.8 Solve two-step word problems", "word fractions"), false);
  assert.equal(matches("anything", "   "), true);
});

test("describeState: the state and both fringes, a dash for an empty fringe", () => {
  assert.equal(describeState({ state: "a b", inner: "b", outer: "" }), "state {a, b}\ninner fringe: b\nouter fringe: -");
  assert.equal(describeState({ state: "", inner: "", outer: "a" }), "state {}\ninner fringe: -\nouter fringe: a");
});

test("neighbours: along the drawn edges; on the diamond a < b, c < d, {a, b} reaches {a, b, c} up and {a} down", () => {
  // s0 {} - s1 {a} - s2 {a b}, s3 {a c} - s4 {a b c} - s5 {a b c d}: the Hasse diagram's covering edges
  const edges = [["s0", "s1"], ["s1", "s2"], ["s1", "s3"], ["s2", "s4"], ["s3", "s4"], ["s4", "s5"]]
    .map(([from, to]) => ({ from, to }));
  assert.deepEqual(neighbours("s2", edges), { up: ["s4"], down: ["s1"] });
  assert.deepEqual(neighbours("s4", edges), { up: ["s5"], down: ["s2", "s3"] });
  assert.deepEqual(neighbours("s0", edges), { up: ["s1"], down: [] });
});

test("neighbours: occupied states only, a covering edge that adds two questions is followed", () => {
  // learners only in {}, {a}, {a b c}: {a b c} covers {a} among them (kstp's occupied-only drawing)
  const edges = [{ from: "s0", to: "s1" }, { from: "s1", to: "s2" }];
  assert.deepEqual(neighbours("s1", edges), { up: ["s2"], down: ["s0"] });
  assert.deepEqual(neighbours("s2", edges), { up: [], down: ["s1"] });
});
