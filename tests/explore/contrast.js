// The texts of the rendered page whose contrast against what they are drawn on is under a threshold (WCAG's
// ratio of relative luminances), for tests/explore/test_browser.py. Run as a Selenium script: arguments[0] is
// the threshold; it returns [{text, colour, background, ratio}] of the failures and how many texts it checked.
//
// A text's colour is its computed `color` (HTML) or `fill` (SVG text). What it is drawn on is read from the
// rendered colours: for HTML text, the backgrounds of the element and its ancestors composited over the page;
// for SVG text, the shapes and boxes under the middle of the text (document.elementsFromPoint, the text
// scrolled into view), their fills and fill-opacities composited the same way. Texts under a gradient or an
// image, and hidden ones, are left out.
const threshold = arguments[0];
const parse = (value) => {
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(value || "");
  return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null;
};
const over = (top, bottom) => {  // top composited over an opaque bottom
  const a = top[3];
  return [0, 1, 2].map((k) => top[k] * a + bottom[k] * (1 - a)).concat([1]);
};
const luminance = (c) => {
  const [r, g, b] = c.slice(0, 3).map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};
const page = parse(getComputedStyle(document.body).backgroundColor) || [255, 255, 255, 1];
const base = page[3] ? page : parse(getComputedStyle(document.documentElement).backgroundColor) || [255, 255, 255, 1];
const layers = [];  // the backgrounds from the element to the root, then composited from the root down

function htmlBackground(element) {
  layers.length = 0;
  for (let e = element; e && e.nodeType === 1; e = e.parentElement) {
    const style = getComputedStyle(e);
    if (style.backgroundImage && style.backgroundImage !== "none") return null;
    const c = parse(style.backgroundColor);
    if (c && c[3] > 0) layers.push(c);
  }
  let colour = [...base.slice(0, 3), 1];
  for (const c of layers.reverse()) colour = over(c, colour);
  return colour;
}

function svgBackground(text) {
  const box = text.getBoundingClientRect();
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return undefined;
  const stack = document.elementsFromPoint(x, y);
  const under = [];
  for (const e of stack) {
    if (e === text || text.contains(e)) continue;
    const style = getComputedStyle(e);
    if (e instanceof SVGElement) {
      if (["rect", "circle", "ellipse", "path", "polygon"].includes(e.tagName)) {
        if (style.fill.startsWith("url(")) return null;
        const c = parse(style.fill);
        if (c && style.display !== "none" && style.visibility !== "hidden") {
          const alpha = c[3] * parseFloat(style.fillOpacity || "1") * parseFloat(style.opacity || "1");
          if (alpha > 0) under.push([c[0], c[1], c[2], alpha]);
        }
      }
      continue;
    }
    const bg = htmlBackground(e);  // the first HTML box under the drawing: its own background, composited
    if (bg === null) return null;
    under.push(bg);
    break;
  }
  let colour = [...base.slice(0, 3), 1];
  for (const c of under.reverse()) colour = over(c, colour);
  return colour;
}

const failures = [];
let checked = 0;
const visible = (e) => {
  const style = getComputedStyle(e);
  return style.visibility !== "hidden" && style.display !== "none" && parseFloat(style.opacity || "1") > 0 &&
    e.getClientRects().length > 0 && e.getBoundingClientRect().width > 0;
};
const texts = new Set();
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.nodeValue.trim()) continue;
  const e = node.parentElement;
  if (!e || ["SCRIPT", "STYLE", "TITLE", "title"].includes(e.tagName)) continue;
  if (e.closest("title")) continue;  // SVG tooltips are not drawn
  texts.add(e);
}
const scrolled = [scrollX, scrollY];
for (const e of texts) {
  if (!visible(e)) continue;
  const isSvg = e instanceof SVGElement;
  let colour = parse(getComputedStyle(e)[isSvg ? "fill" : "color"]);
  if (!colour) continue;
  let background;
  if (isSvg) {
    const text = e.closest("text") || e;
    text.scrollIntoView({ block: "center", inline: "center" });
    background = svgBackground(text);
  } else {
    background = htmlBackground(e);
  }
  if (!background) continue;
  colour = over(colour, background);
  checked += 1;
  const r = ratio(colour, background);
  if (r < threshold) {
    failures.push({ text: e.textContent.trim().slice(0, 60), tag: e.tagName, cls: String(e.getAttribute("class") || ""),
                    colour: colour.slice(0, 3).map(Math.round).join(","),
                    background: background.slice(0, 3).map(Math.round).join(","), ratio: Math.round(r * 100) / 100 });
  }
}
scrollTo(scrolled[0], scrolled[1]);
return { failures, checked };
