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

test("neighbours: on the diamond a < b, c < d, {a, b} reaches {a, b, c} up and {a} down", () => {
  const states = [
    { id: "s0", state: "" }, { id: "s1", state: "a" }, { id: "s2", state: "a b" },
    { id: "s3", state: "a c" }, { id: "s4", state: "a b c" }, { id: "s5", state: "a b c d" },
  ];
  assert.deepEqual(neighbours({ state: "a b", inner: "b", outer: "c" }, states), { up: ["s4"], down: ["s1"] });
  assert.deepEqual(neighbours({ state: "a b c", inner: "b c", outer: "d" }, states),
    { up: ["s5"], down: ["s2", "s3"] });
  assert.deepEqual(neighbours({ state: "", inner: "", outer: "a" }, states), { up: ["s1"], down: [] });
});
